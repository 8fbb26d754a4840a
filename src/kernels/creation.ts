// Filling new arrays with ranges and identity-like diagonals (ARange and Eye). Lengths follow
// NumPy: arange has ceil((stop - start) / step) elements, or none. Both take a range for
// chunking: arange by elements, eye by rows (it writes its zeros too: memory comes uninitialised).
import type { Range, TensorView } from './view.js';

/** The number of elements of arange(start, stop, step): NaN or Infinity when there is no finite answer. */
export function arangeLength(start: number, stop: number, step: number): number {
  const n = Math.ceil((stop - start) / step);
  return Number.isNaN(n) ? NaN : Math.max(0, n);
}

/** dst[i] = start + i * step along a 1-d view, for i in the range (all of dst by default). */
export function fillArange(dst: TensorView, start: number, step: number, range?: Range): void {
  const data = dst.data;
  const first = range?.start ?? 0;
  const end = Math.min(range?.end ?? dst.shape[0]!, dst.shape[0]!);
  const s = dst.stride[0]!;
  let p = dst.offset + first * s;
  for (let i = first; i < end; i++) {
    data[p] = start + i * step;
    p += s;
  }
}

/**
 * Writes the rows of a 2-d view in the range (all by default) as rows of an identity-like
 * matrix: 1 at (i, i + k), the k-th diagonal (k > 0 above the main one), 0 elsewhere.
 */
export function fillEye(dst: TensorView, k: number, range?: Range): void {
  const [n, m] = dst.shape as [number, number];
  const [sr, sc] = dst.stride as [number, number];
  const data = dst.data;
  const lo = range?.start ?? 0;
  const hi = Math.min(range?.end ?? n, n);
  for (let i = lo; i < hi; i++) {
    const row = dst.offset + i * sr;
    for (let j = 0, p = row; j < m; j++, p += sc) data[p] = 0;
    const col = i + k;
    if (col >= 0 && col < m) data[row + col * sc] = 1;
  }
}
