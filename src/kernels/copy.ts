// Strided copy with conversion: reads any view and writes any view of the same shape, in C
// order. It backs DeepCopyOp, Alloc (a broadcast source), Reshape of a non-contiguous value,
// making values contiguous, and dtype conversion (the destination's storage does the rounding or
// wrapping, as a typed-array store does). A range selects flat C-order elements.
import { contiguousStrides, sizeOf, type Range, type TensorView } from './view.js';

/**
 * `v` seen with `shape` by NumPy broadcasting: missing leading axes and axes of length 1 get
 * stride 0. The caller has checked that the shapes broadcast.
 */
export function broadcastView(v: TensorView, shape: readonly number[]): TensorView {
  const lead = shape.length - v.shape.length;
  const stride = shape.map((d, a) => (a < lead || (v.shape[a - lead] === 1 && d !== 1) ? 0 : v.stride[a - lead]!));
  return { data: v.data, offset: v.offset, shape, stride };
}

/**
 * Copies the elements of `src` in C order into the C-contiguous `dst`, whose shape may differ
 * but whose size is the same (a reshape); a range selects flat element positions.
 */
export function copyFlat(src: TensorView, dst: TensorView, range?: Range): void {
  copyView(src, { data: dst.data, offset: dst.offset, shape: src.shape, stride: contiguousStrides(src.shape) }, range);
}

export function copyView(src: TensorView, dst: TensorView, range?: Range): void {
  const shape = dst.shape;
  const nd = shape.length;
  const start = range?.start ?? 0;
  const end = range?.end ?? sizeOf(shape);
  if (start >= end) return;
  const sd = src.data;
  const dd = dst.data;
  if (nd === 0) {
    dd[dst.offset] = sd[src.offset]!;
    return;
  }
  const idx = new Array<number>(nd);
  let rem = start;
  let ps = src.offset;
  let pd = dst.offset;
  for (let k = nd - 1; k >= 0; k--) {
    const i = rem % shape[k]!;
    rem = (rem - i) / shape[k]!;
    idx[k] = i;
    ps += i * src.stride[k]!;
    pd += i * dst.stride[k]!;
  }
  const last = nd - 1;
  const n = shape[last]!;
  const ss = src.stride[last]!;
  const ds = dst.stride[last]!;
  let i = start;
  while (i < end) {
    const run = Math.min(n - idx[last]!, end - i);
    for (let j = 0; j < run; j++) {
      dd[pd] = sd[ps]!;
      ps += ss;
      pd += ds;
    }
    i += run;
    idx[last] = idx[last]! + run;
    if (i >= end) break;
    // carry into the outer axes
    ps -= n * ss;
    pd -= n * ds;
    idx[last] = 0;
    for (let k = last - 1; k >= 0; k--) {
      idx[k] = idx[k]! + 1;
      ps += src.stride[k]!;
      pd += dst.stride[k]!;
      if (idx[k]! < shape[k]!) break;
      idx[k] = 0;
      ps -= shape[k]! * src.stride[k]!;
      pd -= shape[k]! * dst.stride[k]!;
    }
  }
}
