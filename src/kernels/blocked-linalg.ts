// Blocked (right-looking) LU with partial pivoting and Cholesky for one large matrix, as steps
// of an expansion (expansion.ts): per block of BLOCK columns, a panel factored on one thread,
// then the trailing columns (row swaps and a triangular solve, cut by columns) and the trailing
// update (the float64 gemm, cut by rows) on every worker that is free. The work matrix is a
// float64 scratch copy. Every element is computed in the same order however the steps are cut,
// so a plan's result has the bits of runSteps on one thread.
import { LinalgError, luSolve } from './lu.js';
import { scratchPart, type Expansion, type ExpansionStep, type StepView } from './expansion.js';
import { gemm } from './gemm.js';
import { loadMatrix } from './matrix-batch.js';
import { registerKernel } from './registry.js';
import type { Range, TensorView } from './view.js';

/** Columns per block. */
export const BLOCK = 64;
/** The smallest matrix factored blocked (smaller ones run as one call). */
export const BLOCKED_MIN = 256;

const W = 0;
const PIVOTS = 1;

/** Element (i, j) of a 2-d view. */
const at = (v: TensorView, i: number, j: number): number => v.offset + i * v.stride[0]! + j * v.stride[1]!;

const rowsOf = (range: Range | undefined, count: number): [number, number] => (range ? [range.start, range.end] : [0, count]);

/** W's rows [r0, r1) and columns [c0, c1) (W is n x n, row-major); transposed: its columns as rows. */
function part(n: number, r0: number, r1: number, c0: number, c1: number, transposed = false): StepView {
  return transposed ? scratchPart(W, r0 * n + c0, [c1 - c0, r1 - r0], [1, n]) : scratchPart(W, r0 * n + c0, [r1 - r0, c1 - c0], [n, 1]);
}

/** W from a (rows of the step's range), made symmetric from one triangle unless 'all'. */
registerKernel('blockLoad', ([a], [w], params, range) => {
  const triangle = params['triangle'] as 'all' | 'lower' | 'upper';
  const n = w!.shape[0]!;
  const [r0, r1] = rowsOf(range, n);
  for (let i = r0; i < r1; i++) {
    for (let j = 0; j < n; j++) {
      const mirrored = (triangle === 'lower' && j > i) || (triangle === 'upper' && j < i);
      w!.data[at(w!, i, j)] = Number(a!.data[mirrored ? at(a!, j, i) : at(a!, i, j)]);
    }
  }
});

/**
 * The LU panel of columns [c0, c0 + width): the view is W's rows from c0 and columns from 0, so
 * that a row swap moves the factored columns to the left too (as LAPACK's getrf does).
 */
registerKernel('luPanel', ([], [p, piv], params) => {
  const { op, c0, width } = params as { readonly op: string; readonly c0: number; readonly width: number };
  const [rows, cols] = [p!.shape[0]!, p!.shape[1]!];
  const [d, o, rs, cs] = [p!.data, p!.offset, p!.stride[0]!, p!.stride[1]!];
  const end = c0 + width;
  for (let j = c0; j < end; j++) {
    const lj = j - c0;
    let best = Math.abs(d[o + lj * rs + j * cs]!);
    let q = lj;
    for (let r = lj + 1; r < rows; r++) {
      const v = Math.abs(d[o + r * rs + j * cs]!);
      if (v > best) [best, q] = [v, r];
    }
    if (best === 0 || best !== best) throw new LinalgError(`${op}: the matrix is singular`);
    piv!.data[piv!.offset + lj] = c0 + q;
    if (q !== lj) {
      for (let c = 0; c < cols; c++) {
        const [x, y] = [o + lj * rs + c * cs, o + q * rs + c * cs];
        const t = d[x]!;
        d[x] = d[y]!;
        d[y] = t;
      }
    }
    const top = o + lj * rs;
    const pivot = d[top + j * cs]!;
    for (let r = lj + 1; r < rows; r++) {
      const row = o + r * rs;
      const f = (d[row + j * cs]! /= pivot);
      if (f !== 0) for (let c = j + 1; c < end; c++) d[row + c * cs]! -= f * d[top + c * cs]!;
    }
  }
});

/**
 * Columns of the trailing block (the view holds them as its rows, W's rows from c0 as its
 * columns): the panel's row swaps, then L11^-1 on the block's first rows, a row at a time
 * across the task's columns (contiguous in W).
 */
registerKernel('luSwapSolve', ([l11, piv], [t], params, range) => {
  const c0 = params['c0'] as number;
  const nb = l11!.shape[0]!;
  const [q0, q1] = rowsOf(range, t!.shape[0]!);
  const [d, o, qs, rs] = [t!.data, t!.offset, t!.stride[0]!, t!.stride[1]!];
  const [l, lo, lrs, lcs] = [l11!.data, l11!.offset, l11!.stride[0]!, l11!.stride[1]!];
  for (let p = 0; p < nb; p++) {
    const g = piv!.data[piv!.offset + p]! - c0;
    if (g === p) continue;
    for (let q = q0; q < q1; q++) {
      const [x, y] = [o + q * qs + p * rs, o + q * qs + g * rs];
      const v = d[x]!;
      d[x] = d[y]!;
      d[y] = v;
    }
  }
  for (let r = 1; r < nb; r++) {
    for (let k = 0; k < r; k++) {
      const f = l[lo + r * lrs + k * lcs]!;
      if (f === 0) continue;
      for (let q = q0; q < q1; q++) d[o + q * qs + r * rs]! -= f * d[o + q * qs + k * rs]!;
    }
  }
});

/** C -= A B for the rows of C in the range (with lowerOnly, only the columns up to the range's last row: a symmetric update's lower triangle). */
registerKernel('blockUpdate', ([a, b], [c], params, range) => {
  const [r0, r1] = rowsOf(range, c!.shape[0]!);
  if (!params['lowerOnly']) return gemm(a!, b!, c!, -1, 1, { start: r0, end: r1 });
  const cols = Math.min(c!.shape[1]!, r1);
  gemm(a!, { ...b!, shape: [b!.shape[0]!, cols] }, { ...c!, shape: [c!.shape[0]!, cols] }, -1, 1, { start: r0, end: r1 });
});

/** x = U^-1 L^-1 P b from the factored W and its pivots (one task: n^2 per right-hand side). */
registerKernel('luFinalSolve', ([w, piv, b], [x], params) => {
  const vector = params['vector'] as boolean;
  const n = w!.shape[0]!;
  const m = vector ? 1 : b!.shape[1]!;
  const rhs = new Float64Array(n * m);
  if (vector) for (let i = 0; i < n; i++) rhs[i] = Number(b!.data[b!.offset + i * b!.stride[0]!]);
  else loadMatrix(b!, 0, rhs, n, m);
  luSolve(w!.data.subarray(w!.offset, w!.offset + n * n) as Float64Array, n, piv!.data.subarray(piv!.offset, piv!.offset + n) as Int32Array, rhs, m);
  for (let k = 0; k < n * m; k++) x!.data[x!.offset + k] = rhs[k]!;
});

/** The Cholesky factor of a diagonal block (its lower triangle, in place). */
registerKernel('cholPanel', ([], [dg], params) => {
  const { op, c0 } = params as { readonly op: string; readonly c0: number };
  const nb = dg!.shape[0]!;
  const [d, o, rs, cs] = [dg!.data, dg!.offset, dg!.stride[0]!, dg!.stride[1]!];
  for (let j = 0; j < nb; j++) {
    const rj = o + j * rs;
    let s = d[rj + j * cs]!;
    for (let k = 0; k < j; k++) s -= d[rj + k * cs]! * d[rj + k * cs]!;
    if (!(s > 0)) throw new LinalgError(`${op}: the matrix is not positive definite (the pivot of column ${c0 + j} is not positive)`);
    const l = Math.sqrt(s);
    d[rj + j * cs] = l;
    for (let i = j + 1; i < nb; i++) {
      const ri = o + i * rs;
      let v = d[ri + j * cs]!;
      for (let k = 0; k < j; k++) v -= d[ri + k * cs]! * d[rj + k * cs]!;
      d[ri + j * cs] = v / l;
    }
  }
});

/** The rows below a diagonal block: R = A21 L11^-T, row by row. */
registerKernel('cholTrsm', ([l11], [r], _params, range) => {
  const nb = l11!.shape[0]!;
  const [i0, i1] = rowsOf(range, r!.shape[0]!);
  const [d, o, rs, cs] = [r!.data, r!.offset, r!.stride[0]!, r!.stride[1]!];
  const [l, lo, lrs, lcs] = [l11!.data, l11!.offset, l11!.stride[0]!, l11!.stride[1]!];
  for (let i = i0; i < i1; i++) {
    const row = o + i * rs;
    for (let j = 0; j < nb; j++) {
      let s = d[row + j * cs]!;
      const lrow = lo + j * lrs;
      for (let k = 0; k < j; k++) s -= d[row + k * cs]! * l[lrow + k * lcs]!;
      d[row + j * cs] = s / l[lrow + j * lcs]!;
    }
  }
});

/** The factor from W's lower triangle: L (zeros above), or U = L^T. */
registerKernel('cholStore', ([w], [out], params, range) => {
  const lower = params['lower'] as boolean;
  const n = w!.shape[0]!;
  const [i0, i1] = rowsOf(range, n);
  for (let i = i0; i < i1; i++) {
    for (let j = 0; j < n; j++) {
      const keep = lower ? j <= i : j >= i;
      out!.data[at(out!, i, j)] = keep ? w!.data[lower ? at(w!, i, j) : at(w!, j, i)]! : 0;
    }
  }
});

const step = (name: string, params: ExpansionStep['params'], inputs: StepView[], outputs: StepView[], chunking: 'rows' | 'none', work: number, label: string, product = false): ExpansionStep => ({
  name,
  params,
  inputs,
  outputs,
  chunking,
  work: Math.max(1, work),
  label,
  ...(product ? { product } : {}),
});

const input = (index: number): StepView => ({ kind: 'input', index });
const output = (index: number): StepView => ({ kind: 'output', index });

/** solve(a, b) for one n x n matrix (read from a triangle, for 'sym' and 'pos') and b [n] or [n, m]. */
export function luSolveSteps(n: number, m: number, vector: boolean, triangle: 'all' | 'lower' | 'upper', op: string): Expansion {
  const steps: ExpansionStep[] = [step('blockLoad', { triangle }, [input(0)], [part(n, 0, n, 0, n)], 'rows', n * n, 'load')];
  for (let c0 = 0; c0 < n; c0 += BLOCK) {
    const c1 = Math.min(n, c0 + BLOCK);
    const nb = c1 - c0;
    const pivots = scratchPart(PIVOTS, c0, [nb], [1]);
    steps.push(step('luPanel', { op, c0, width: nb }, [], [part(n, c0, n, 0, c1), pivots], 'none', ((n - c0) * nb * nb) / 2, `panel ${c0 / BLOCK}`));
    if (c1 === n) break;
    steps.push(step('luSwapSolve', { c0 }, [part(n, c0, c1, c0, c1), pivots], [part(n, c0, n, c1, n, true)], 'rows', ((n - c1) * nb * nb) / 2, `row swaps and L11^-1, block ${c0 / BLOCK}`));
    steps.push(step('blockUpdate', { lowerOnly: false }, [part(n, c1, n, c0, c1), part(n, c0, c1, c1, n)], [part(n, c1, n, c1, n)], 'rows', (n - c1) * (n - c1) * nb, `trailing update, block ${c0 / BLOCK}`, true));
  }
  steps.push(step('luFinalSolve', { vector }, [part(n, 0, n, 0, n), scratchPart(PIVOTS, 0, [n], [1]), input(1)], [output(0)], 'none', n * n * m, 'triangular solves'));
  return { scratch: [{ dtype: 'float64', shape: [n, n] }, { dtype: 'int32', shape: [n] }], steps };
}

/** cholesky(a) for one n x n matrix, reading its lower (or upper) triangle. */
export function choleskySteps(n: number, lower: boolean, op: string): Expansion {
  const steps: ExpansionStep[] = [step('blockLoad', { triangle: lower ? 'lower' : 'upper' }, [input(0)], [part(n, 0, n, 0, n)], 'rows', n * n, 'load')];
  for (let c0 = 0; c0 < n; c0 += BLOCK) {
    const c1 = Math.min(n, c0 + BLOCK);
    const nb = c1 - c0;
    steps.push(step('cholPanel', { op, c0 }, [], [part(n, c0, c1, c0, c1)], 'none', (nb * nb * nb) / 6, `panel ${c0 / BLOCK}`));
    if (c1 === n) break;
    steps.push(step('cholTrsm', {}, [part(n, c0, c1, c0, c1)], [part(n, c1, n, c0, c1)], 'rows', ((n - c1) * nb * nb) / 2, `L21 = A21 L11^-T, block ${c0 / BLOCK}`));
    steps.push(step('blockUpdate', { lowerOnly: true }, [part(n, c1, n, c0, c1), part(n, c1, n, c0, c1, true)], [part(n, c1, n, c1, n)], 'rows', ((n - c1) * (n - c1) * nb) / 2, `trailing update, block ${c0 / BLOCK}`, true));
  }
  steps.push(step('cholStore', { lower }, [part(n, 0, n, 0, n)], [output(0)], 'rows', n * n, 'store'));
  return { scratch: [{ dtype: 'float64', shape: [n, n] }], steps };
}
