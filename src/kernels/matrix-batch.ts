// Walking a batch of matrices for the linear-algebra kernels: where matrix b of a view starts,
// how many matrices a view holds, which of them a task's range of rows covers, and copying one
// matrix into (and out of) a row-major float64 work array, so factorizations read any layout.
import { positionOf, sizeOf, type Range, type TensorView } from './view.js';

/** A row-major float64 work array, grown on demand and kept per thread (kernels run one at a time). */
export class WorkArray {
  #data = new Float64Array(0);

  /** At least `n` elements (contents unspecified). */
  get(n: number): Float64Array {
    if (this.#data.length < n) this.#data = new Float64Array(Math.max(n, 2 * this.#data.length));
    return this.#data;
  }
}

/** Matrix b (of the batch in the leading axes) of `v`: the offset of its element [0, 0]. */
export function matrixAt(v: TensorView, b: number): number {
  return positionOf(v.shape, v.stride, v.offset, b, v.shape.length - 2);
}

/** The number of matrices in `v`'s leading axes. */
export function batchOf(v: TensorView): number {
  return sizeOf(v.shape.slice(0, -2));
}

/**
 * The matrices [start, end) of a batch of `batch` whose first output has `rows` entries on
 * axis 0 (its first batch axis), for a task given `range` of those rows (all without one).
 */
export function matricesOf(batch: number, rows: number, range?: Range): Range {
  if (range === undefined || rows === 0) return { start: 0, end: batch };
  const per = batch / rows;
  return { start: range.start * per, end: range.end * per };
}

/** Copies matrix b of `v` (rows x cols) into `dst`, row-major. */
export function loadMatrix(v: TensorView, b: number, dst: Float64Array, rows: number, cols: number): void {
  const o = matrixAt(v, b);
  const nd = v.shape.length;
  const [rs, cs] = [v.stride[nd - 2]!, v.stride[nd - 1]!];
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) dst[i * cols + j] = Number(v.data[o + i * rs + j * cs]);
}

/** Writes `count` values of `src` (from `from`) as item b of the contiguous output `out` (items of `count` elements). */
export function storeItem(out: TensorView, b: number, src: Float64Array, count: number, from = 0): void {
  const o = out.offset + b * count;
  for (let k = 0; k < count; k++) out.data[o + k] = src[from + k]!;
}
