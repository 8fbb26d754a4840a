// Seeded random sparse matrices for the sparse tests: a dense matrix with a given density of
// entries, and its csr and csc parts written out here by plain loops (not by weft's code).
import { uniformStream } from '../helpers.js';

export interface RandomSparse {
  readonly dense: number[][];
  readonly csr: { data: number[]; indices: number[]; indptr: number[]; shape: [number, number] };
  readonly csc: { data: number[]; indices: number[]; indptr: number[]; shape: [number, number] };
}

/** An m x n matrix whose entries are stored with probability `density`, values in [-2, 2) (never 0). */
export function randomSparse(seed: number, m: number, n: number, density = 0.3): RandomSparse {
  const u = uniformStream(seed);
  const dense = Array.from({ length: m }, () => Array.from({ length: n }, () => (u() < density ? 0.25 + u() * 1.75 * (u() < 0.5 ? -1 : 1) : 0)));
  const parts = (outer: number, inner: number, at: (o: number, i: number) => number) => {
    const data: number[] = [];
    const indices: number[] = [];
    const indptr = [0];
    for (let o = 0; o < outer; o++) {
      for (let i = 0; i < inner; i++) {
        if (at(o, i) !== 0) {
          data.push(at(o, i));
          indices.push(i);
        }
      }
      indptr.push(data.length);
    }
    return { data, indices, indptr, shape: [m, n] as [number, number] };
  };
  return { dense, csr: parts(m, n, (r, c) => dense[r]![c]!), csc: parts(n, m, (c, r) => dense[r]![c]!) };
}

/** A dense m x n matrix of values in [-1, 1). */
export function randomDense(seed: number, m: number, n: number): number[][] {
  const u = uniformStream(seed);
  return Array.from({ length: m }, () => Array.from({ length: n }, () => u() * 2 - 1));
}

export function matmul(a: readonly number[][], b: readonly number[][]): number[][] {
  return a.map((row) => b[0]!.map((_, j) => row.reduce((acc, x, k) => acc + x * b[k]![j]!, 0)));
}

export function transposed(a: readonly number[][]): number[][] {
  return a[0]!.map((_, j) => a.map((row) => row[j]!));
}

/** The dense matrix of a sparse value, by its own layout (independent of weft's toDense). */
export function denseOf(v: { format: string; shape: readonly number[]; data: ArrayLike<number>; indices: ArrayLike<number>; indptr: ArrayLike<number> }): number[][] {
  const out = Array.from({ length: v.shape[0]! }, () => new Array<number>(v.shape[1]!).fill(0));
  for (let o = 0; o + 1 < v.indptr.length; o++) {
    for (let k = v.indptr[o]!; k < v.indptr[o + 1]!; k++) {
      if (v.format === 'csr') out[o]![v.indices[k]!]! += v.data[k]!;
      else out[v.indices[k]!]![o]! += v.data[k]!;
    }
  }
  return out;
}
