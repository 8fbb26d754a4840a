// Plain-JS matrices for the linear-algebra tests: nested arrays from weft's batches, products,
// transposes, the largest difference, and seeded well-conditioned and positive definite batches.
import { weft } from '../helpers.js';

type NdArray = weft.NdArray;
export type Matrix = number[][];

/** Plain nested matrices of a [..., n, m] array (batch flattened). */
export function matrices(a: NdArray): Matrix[] {
  const [n, m] = a.shape.slice(-2) as [number, number];
  const count = n * m === 0 ? 0 : a.data.length / (n * m);
  return Array.from({ length: count }, (_, b) => Array.from({ length: n }, (_, i) => Array.from({ length: m }, (_, j) => Number(a.data[b * n * m + i * m + j]))));
}
export const mm = (a: Matrix, b: Matrix): Matrix => a.map((row) => b[0]!.map((_, j) => row.reduce((s, v, k) => s + v * b[k]![j]!, 0)));
export const T = (a: Matrix): Matrix => a[0]!.map((_, j) => a.map((row) => row[j]!));
export const worst = (a: Matrix, b: Matrix): number => Math.max(0, ...a.flatMap((row, i) => row.map((v, j) => Math.abs(v - b[i]![j]!))));
export const eye = (n: number): Matrix => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));

/** A well-conditioned batch: random plus n on the diagonal. */
export function wellConditioned(r: weft.Rng, shape: number[], dtype: 'float32' | 'float64' = 'float64'): NdArray {
  const a = r.normal(shape, { dtype });
  const n = shape[shape.length - 1]!;
  for (let k = 0; k < a.data.length; k++) if (Math.floor(k / n) % n === k % n) a.data[k] = Number(a.data[k]) + n;
  return a;
}

/** A symmetric positive definite batch: x x^T + n I. */
export function spd(r: weft.Rng, shape: number[]): NdArray {
  const x = matrices(r.normal(shape));
  const n = shape[shape.length - 1]!;
  const out = weft.ndarray(new Float64Array(x.length * n * n), shape);
  x.forEach((m, b) => mm(m, T(m)).forEach((row, i) => row.forEach((v, j) => (out.data[b * n * n + i * n + j] = v + (i === j ? n : 0)))));
  return out;
}
