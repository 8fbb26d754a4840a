// Concatenation and slabs along one axis (Join and Split). A slab is a view of part of an
// axis, so Split is pure offset arithmetic and Join is one strided copy per input into the slab
// of the output where that input belongs; the copy converts dtypes as typed-array stores do.
import { copyView } from './copy.js';
import type { TensorView } from './view.js';

/** The part of `v` that starts at index `start` of `axis` and is `length` long: same data, new offset. */
export function slabOf(v: TensorView, axis: number, start: number, length: number): TensorView {
  const shape = [...v.shape];
  shape[axis] = length;
  return { data: v.data, offset: v.offset + start * v.stride[axis]!, shape, stride: v.stride };
}

/** Copies `srcs` one after another along `axis` of `dst`, whose other lengths they share. */
export function concatInto(srcs: readonly TensorView[], dst: TensorView, axis: number): void {
  let start = 0;
  for (const src of srcs) {
    const length = src.shape[axis]!;
    if (length > 0) copyView(src, slabOf(dst, axis, start, length));
    start += length;
  }
}
