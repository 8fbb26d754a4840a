// Filling new arrays with ranges and identity-like diagonals (ARange and Eye). The arrays come
// in zero-filled; lengths follow NumPy: arange has ceil((stop - start) / step) elements, or none.
import type { TensorView } from './view.js';

/** The number of elements of arange(start, stop, step): NaN or Infinity when there is no finite answer. */
export function arangeLength(start: number, stop: number, step: number): number {
  const n = Math.ceil((stop - start) / step);
  return Number.isNaN(n) ? NaN : Math.max(0, n);
}

/** dst[i] = start + i * step along a 1-d view. */
export function fillArange(dst: TensorView, start: number, step: number): void {
  const data = dst.data;
  const n = dst.shape[0]!;
  const s = dst.stride[0]!;
  let p = dst.offset;
  for (let i = 0; i < n; i++) {
    data[p] = start + i * step;
    p += s;
  }
}

/** Writes 1 at (i, i + k) of a zero-filled 2-d view: the k-th diagonal (k > 0 above the main one). */
export function fillEyeDiagonal(dst: TensorView, k: number): void {
  const [n, m] = dst.shape as [number, number];
  const [sr, sc] = dst.stride as [number, number];
  const first = Math.max(0, -k);
  const end = Math.min(n, m - k);
  const data = dst.data;
  for (let i = first; i < end; i++) data[dst.offset + i * sr + (i + k) * sc] = 1;
}
