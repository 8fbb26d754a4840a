// Concatenation and slabs along one axis (Join and Split). A slab is a view of part of an
// axis, so Split is pure offset arithmetic and Join is one strided copy per input into the slab
// of the output where that input belongs; the copy converts dtypes as typed-array stores do.
// Chunks are row ranges of the output, so each writes its own rows of every slab.
import { copyView } from './copy.js';
import type { Range, TensorView } from './view.js';

/** The part of `v` that starts at index `start` of `axis` and is `length` long: same data, new offset. */
export function slabOf(v: TensorView, axis: number, start: number, length: number): TensorView {
  const shape = [...v.shape];
  shape[axis] = length;
  return { data: v.data, offset: v.offset + start * v.stride[axis]!, shape, stride: v.stride };
}

/**
 * Copies `srcs` one after another along `axis` of `dst`, whose other lengths they share. A range
 * selects rows (indices of axis 0) of `dst`: only those are written.
 */
export function concatInto(srcs: readonly TensorView[], dst: TensorView, axis: number, range?: Range): void {
  const rows = dst.shape[0]!;
  const lo = range?.start ?? 0;
  const hi = Math.min(range?.end ?? rows, rows);
  if (lo >= hi) return;
  let start = 0;
  for (const src of srcs) {
    const length = src.shape[axis]!;
    if (axis === 0) {
      // This input fills rows [start, start + length) of dst: copy their overlap with the range.
      const from = Math.max(start, lo);
      const to = Math.min(start + length, hi);
      if (from < to) copyView(slabOf(src, 0, from - start, to - from), slabOf(dst, 0, from, to - from));
    } else if (length > 0) {
      copyView(slabOf(src, 0, lo, hi - lo), slabOf(slabOf(dst, 0, lo, hi - lo), axis, start, length));
    }
    start += length;
  }
}
