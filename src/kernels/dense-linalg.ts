// Dense linear algebra on square matrices, batched over leading axes: LU with partial pivoting
// (solve, inv, det, slogdet), Cholesky, triangular solves. Each matrix is copied into a float64
// work array (any layout, float32 included, so results round once), factored there, and its
// results written out. Factorizations fail on exact zero pivots with the message the op gives
// ('singular'); a Cholesky of a matrix that is not positive definite says so.
import { BLOCKED_MIN, choleskySteps, luSolveSteps } from './blocked-linalg.js';
import { runSteps } from './expansion.js';
import { LinalgError, luFactor, luSolve } from './lu.js';
import { registerKernel } from './registry.js';
import { batchOf, loadMatrix, matricesOf, storeItem, WorkArray } from './matrix-batch.js';
import { positionOf, sizeOf, type Range, type TensorView } from './view.js';


/** The work arrays of this thread. */
const workArray = new WorkArray();
const rhsArray = new WorkArray();
let pivots = new Int32Array(0);

function grow(n: number, m: number): [Float64Array, Float64Array, Int32Array] {
  if (pivots.length < n) pivots = new Int32Array(n);
  return [workArray.get(n * n), rhsArray.get(n * m), pivots];
}

/** Solves T X = B (T lower or upper triangular n x n, or its transpose), B n x m, in place. */
function triangularSolve(t: Float64Array, n: number, b: Float64Array, m: number, lower: boolean, transposed: boolean, unitDiagonal: boolean): void {
  // T^T of a lower T is upper: solve as the other triangle, reading t[k][i] for t[i][k].
  const at = transposed ? (i: number, k: number) => t[k * n + i]! : (i: number, k: number) => t[i * n + k]!;
  const forward = lower !== transposed;
  for (let s = 0; s < n; s++) {
    const i = forward ? s : n - 1 - s;
    for (let q = 0; q < s; q++) {
      const k = forward ? q : n - 1 - q;
      const f = at(i, k);
      if (f !== 0) for (let j = 0; j < m; j++) b[i * m + j]! -= f * b[k * m + j]!;
    }
    if (!unitDiagonal) {
      const d = at(i, i);
      for (let j = 0; j < m; j++) b[i * m + j]! /= d;
    }
  }
}

/**
 * The Cholesky factor of the symmetric positive definite n x n `a` (its lower triangle is read),
 * in place: lower, zeros above. Returns the first column whose pivot is not positive, or -1.
 */
export function choleskyFactor(a: Float64Array, n: number): number {
  for (let j = 0; j < n; j++) {
    let d = a[j * n + j]!;
    for (let k = 0; k < j; k++) d -= a[j * n + k]! * a[j * n + k]!;
    if (!(d > 0)) return j;
    const l = Math.sqrt(d);
    a[j * n + j] = l;
    for (let i = j + 1; i < n; i++) {
      let s = a[i * n + j]!;
      for (let k = 0; k < j; k++) s -= a[i * n + k]! * a[j * n + k]!;
      a[i * n + j] = s / l;
    }
    for (let k = j + 1; k < n; k++) a[j * n + k] = 0;
  }
  return -1;
}

export interface LinalgParams {
  /** The op's name, for errors. */
  readonly op: string;
}

export interface TriangularParams extends LinalgParams {
  readonly lower: boolean;
  readonly transposed: boolean;
  readonly unitDiagonal: boolean;
}

export interface CholeskyParams extends LinalgParams {
  readonly lower: boolean;
}

const singular = (op: string, b: number, batch: number): LinalgError =>
  new LinalgError(`${op}: the matrix${batch > 1 ? ` at batch index ${b}` : ''} is singular`);

/** Rows of the right-hand side: b is [..., n, m], or [..., n] (a vector per matrix) when `vector`. */
function rhsShape(b: TensorView, vector: boolean): [number, number] {
  const nd = b.shape.length;
  return vector ? [b.shape[nd - 1]!, 1] : [b.shape[nd - 2]!, b.shape[nd - 1]!];
}

/** Makes the n x n row-major `a` symmetric from one triangle (solve's assumeA 'sym' and 'pos'). */
function symmetrize(a: Float64Array, n: number, triangle: 'all' | 'lower' | 'upper'): void {
  if (triangle === 'all') return;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < i; j++) {
      if (triangle === 'lower') a[j * n + i] = a[i * n + j]!;
      else a[i * n + j] = a[j * n + i]!;
    }
  }
}

/**
 * For each matrix k of a solve's batch (those `range` covers): `solveOne(k)` after a's matrix
 * is in `work` and b's right-hand side in `rhs` (n x m), then the solution stored from `rhs`.
 */
function eachSystem(
  [a, b]: readonly TensorView[],
  out: TensorView,
  vector: boolean,
  range: Range | undefined,
  solveOne: (k: number, batch: number, n: number, m: number, work: Float64Array, rhs: Float64Array) => void,
): void {
  const n = a!.shape[a!.shape.length - 1]!;
  const [, m] = rhsShape(b!, vector);
  const batch = vector ? sizeOf(out.shape.slice(0, -1)) : batchOf(out);
  const [work, rhs] = grow(n, m);
  const { start, end } = matricesOf(batch, out.shape.length > (vector ? 1 : 2) ? out.shape[0]! : 1, range);
  for (let k = start; k < end; k++) {
    loadMatrix(a!, k % batchOf(a!), work, n, n);
    loadRhs(b!, k, rhs, n, m, vector);
    solveOne(k, batch, n, m, work, rhs);
    storeItem(out, k, rhs, n * m);
  }
}

registerKernel('luSolve', (ins, [out], params, range) => {
  const { op, vector, triangle } = params as unknown as LinalgParams & { readonly vector: boolean; readonly triangle: 'all' | 'lower' | 'upper' };
  const n = ins[0]!.shape[ins[0]!.shape.length - 1]!;
  // Large matrices are factored blocked, as planners run them (the same steps, so the same bits).
  if (n >= BLOCKED_MIN) return eachBlocked(ins[0]!, ins[1]!, out!, vector, range, (k, a, b, x) => runSteps(luSolveSteps(n, vector ? 1 : b.shape[1]!, vector, triangle, op), [a, b], [x]));
  eachSystem(ins, out!, vector, range, (k, batch, n, m, work, rhs) => {
    symmetrize(work, n, triangle);
    if (luFactor(work, n, n, pivots) === 0) throw singular(op, k, batch);
    luSolve(work, n, pivots, rhs, m);
  });
});

/** Matrix k of a view, and its last two axes (a vector's last one), as a view of its own. */
function itemView(v: TensorView, k: number, axes: 1 | 2): TensorView {
  const nd = v.shape.length;
  const lanes = sizeOf(v.shape.slice(0, nd - axes));
  return { data: v.data, offset: positionOf(v.shape, v.stride, v.offset, k % lanes, nd - axes), shape: v.shape.slice(nd - axes), stride: v.stride.slice(nd - axes) };
}

/**
 * For each system of the batch that `range` covers, `each(k, a, b, x)` with matrix k of a (or the
 * one matrix), its right-hand side in b (none for cholesky) and its result's part of out; a
 * factorization error names the batch index when there is a batch.
 */
function eachBlocked(a: TensorView, b: TensorView | undefined, out: TensorView, vector: boolean, range: Range | undefined, each: (k: number, a: TensorView, b: TensorView, x: TensorView) => void): void {
  const outAxes = vector ? 1 : 2;
  const batch = sizeOf(out.shape.slice(0, out.shape.length - outAxes));
  const { start, end } = matricesOf(batch, out.shape.length > outAxes ? out.shape[0]! : 1, range);
  for (let k = start; k < end; k++) {
    try {
      each(k, itemView(a, k, 2), b ? itemView(b, k, outAxes) : a, itemView(out, k, outAxes));
    } catch (e) {
      if (e instanceof LinalgError && batch > 1) throw new LinalgError(e.message.replace('the matrix', `the matrix at batch index ${k}`));
      throw e;
    }
  }
}

/** Right-hand side k: a matrix of b, or (vector) the vector k of b's leading axes. */
function loadRhs(b: TensorView, k: number, dst: Float64Array, n: number, m: number, vector: boolean): void {
  if (!vector) return loadMatrix(b, k % batchOf(b), dst, n, m);
  const nd = b.shape.length;
  const lanes = sizeOf(b.shape.slice(0, -1));
  const o = positionOf(b.shape, b.stride, b.offset, k % lanes, nd - 1);
  for (let i = 0; i < n; i++) dst[i] = Number(b.data[o + i * b.stride[nd - 1]!]);
}

registerKernel('triangularSolve', (ins, [out], params, range) => {
  const { lower, transposed, unitDiagonal, vector } = params as unknown as TriangularParams & { readonly vector: boolean };
  eachSystem(ins, out!, vector, range, (_k, _batch, n, m, work, rhs) => triangularSolve(work, n, rhs, m, lower, transposed, unitDiagonal));
});

/**
 * For each square matrix k of `a`'s batch that `range` covers (in rows of the first output,
 * whose batch axes are `outBatchAxes` long): `each(k, batch, n, work)` with the matrix in `work`.
 */
export function eachMatrix(a: TensorView, firstOut: TensorView, outBatchAxes: number, range: Range | undefined, each: (k: number, batch: number, n: number, work: Float64Array) => void): void {
  const n = a.shape[a.shape.length - 1]!;
  const batch = batchOf(a);
  const [work] = grow(n, n);
  const { start, end } = matricesOf(batch, outBatchAxes > 0 ? firstOut.shape[0]! : 1, range);
  for (let k = start; k < end; k++) {
    loadMatrix(a, k, work, n, n);
    each(k, batch, n, work);
  }
}

registerKernel('matrixInverse', ([a], [out], params, range) => {
  const { op } = params as unknown as LinalgParams;
  eachMatrix(a!, out!, a!.shape.length - 2, range, (k, batch, n, work) => {
    if (luFactor(work, n, n, pivots) === 0) throw singular(op, k, batch);
    const [, rhs] = grow(n, n);
    rhs.fill(0, 0, n * n);
    for (let i = 0; i < n; i++) rhs[i * n + i] = 1;
    luSolve(work, n, pivots, rhs, n);
    storeItem(out!, k, rhs, n * n);
  });
});

/** det: outputs [det]; slogdet: [sign, log|det|] (a singular matrix: sign 0, log|det| -inf, as NumPy). */
registerKernel('determinant', ([a], outs, params, range) => {
  const { logarithm } = params as unknown as LinalgParams & { readonly logarithm: boolean };
  eachMatrix(a!, outs[0]!, a!.shape.length - 2, range, (k, _batch, n, work) => {
    const sign = n === 0 ? 1 : luFactor(work, n, n, pivots);
    if (!logarithm) {
      let d = sign;
      if (sign !== 0) for (let i = 0; i < n; i++) d *= work[i * n + i]!;
      outs[0]!.data[outs[0]!.offset + k] = d;
      return;
    }
    let s = sign;
    let log = sign === 0 ? -Infinity : 0;
    if (sign !== 0) {
      for (let i = 0; i < n; i++) {
        const u = work[i * n + i]!;
        if (u < 0) s = -s;
        log += Math.log(Math.abs(u));
      }
    }
    outs[0]!.data[outs[0]!.offset + k] = s;
    outs[1]!.data[outs[1]!.offset + k] = log;
  });
});

registerKernel('cholesky', ([a], [out], params, range) => {
  const { op, lower } = params as unknown as CholeskyParams;
  const n = a!.shape[a!.shape.length - 1]!;
  if (n >= BLOCKED_MIN) return eachBlocked(a!, undefined, out!, false, range, (_k, m, _b, x) => runSteps(choleskySteps(n, lower, op), [m], [x]));
  eachMatrix(a!, out!, a!.shape.length - 2, range, (k, batch, n, work) => {
    // The upper factor U = L^T of A: read A's upper triangle as L's lower one.
    if (!lower) for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) work[i * n + j] = work[j * n + i]!;
    const bad = choleskyFactor(work, n);
    if (bad >= 0) throw new LinalgError(`${op}: the matrix${batch > 1 ? ` at batch index ${k}` : ''} is not positive definite (the pivot of column ${bad} is not positive)`);
    if (!lower) for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) [work[i * n + j], work[j * n + i]] = [0, work[i * n + j]!];
    storeItem(out!, k, work, n * n);
  });
});
