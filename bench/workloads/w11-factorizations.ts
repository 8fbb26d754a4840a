// W11: one large float64 system, `solve(a, b)` of a 1024 x 1024 matrix and a vector (2/3 n^3
// operations counted), and `cholesky` of a 1024 x 1024 symmetric positive definite matrix (n^3 / 3),
// in GFLOP/s, end to end (weft copies the matrix in and the result out at each call). weft factors
// one large matrix blocked (kernels/blocked-linalg.ts), its trailing updates cut into tasks for
// every worker. tfjs has neither op; the reference row is a plain JS loop on one thread (the
// textbook right-looking LU with partial pivoting, and the Cholesky-Banachiewicz loop).
import { compare } from '../lib/check.js';
import { uniform } from '../lib/data.js';
import type { Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { pt, weft, workersLabel } from '../peers/weft.js';

const N = 1024;

/** The textbook LU solve with partial pivoting, in place on a copy (the plain JS reference). */
function jsSolve(a: Float64Array, b: Float64Array, n: number): Float64Array {
  const m = Float64Array.from(a);
  const x = Float64Array.from(b);
  for (let k = 0; k < n; k++) {
    let p = k;
    for (let i = k + 1; i < n; i++) if (Math.abs(m[i * n + k]!) > Math.abs(m[p * n + k]!)) p = i;
    if (p !== k) {
      for (let j = 0; j < n; j++) [m[k * n + j], m[p * n + j]] = [m[p * n + j]!, m[k * n + j]!];
      [x[k], x[p]] = [x[p]!, x[k]!];
    }
    const d = m[k * n + k]!;
    for (let i = k + 1; i < n; i++) {
      const f = (m[i * n + k]! /= d);
      for (let j = k + 1; j < n; j++) m[i * n + j]! -= f * m[k * n + j]!;
      x[i]! -= f * x[k]!;
    }
  }
  for (let i = n - 1; i >= 0; i--) {
    let s = x[i]!;
    for (let j = i + 1; j < n; j++) s -= m[i * n + j]! * x[j]!;
    x[i] = s / m[i * n + i]!;
  }
  return x;
}

/** The Cholesky-Banachiewicz loop (row by row), the plain JS reference. */
function jsCholesky(a: Float64Array, n: number): Float64Array {
  const l = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a[i * n + j]!;
      for (let k = 0; k < j; k++) s -= l[i * n + k]! * l[j * n + k]!;
      l[i * n + j] = i === j ? Math.sqrt(s) : s / l[j * n + j]!;
    }
  }
  return l;
}

async function run(suite: Suite): Promise<void> {
  const a = Float64Array.from(uniform(N * N, 111), (v, k) => v + (k % (N + 1) === 0 ? N : 0));
  const b = Float64Array.from(uniform(N, 112));
  // An SPD matrix: symmetric with a dominant diagonal.
  const s = new Float64Array(N * N);
  for (let i = 0; i < N; i++) for (let j = 0; j <= i; j++) s[i * N + j] = s[j * N + i] = i === j ? N : a[i * N + j]! - 0.5;
  const wantX = jsSolve(a, b, N);
  const wantL = jsCholesky(s, N);
  const av = pt.matrix('a');
  const bv = pt.vector('b');
  const cases = [
    { group: 'W11 solve 1024 float64', flops: (2 / 3) * N ** 3, want: wantX, out: pt.linalg.solve(av, bv), inputs: [av, bv], values: [weft.ndarray(a, [N, N]), weft.ndarray(b, [N])], js: () => jsSolve(a, b, N) },
    { group: 'W11 cholesky 1024 float64', flops: N ** 3 / 3, want: wantL, out: pt.linalg.cholesky(av), inputs: [av], values: [weft.ndarray(s, [N, N])], js: () => jsCholesky(s, N) },
  ];
  const pool = weft.createPool({ workers: 2 });
  try {
    for (const c of cases) {
      const figure = (ms: number): number => c.flops / (ms * 1e6);
      const check = (got: Float64Array) => compare(c.group, got, c.want, { rtol: 1e-9, floor: 1e-12 });
      const JS = { group: c.group, system: 'plain JS', config: '1 thread' };
      await suite.measure({ ...JS, unit: 'GFLOP/s', figure, reference: true, check, setup: async () => ({ run: () => c.js() }) });
      for (const workers of [1, 2]) {
        await suite.measure({
          group: c.group,
          system: 'weft',
          config: workersLabel(workers),
          unit: 'GFLOP/s',
          figure,
          check,
          goals: workers === 2 ? [{ kind: 'speedup', label: '1.6x 1 worker', vs: { group: c.group, system: 'weft', config: workersLabel(1) }, atLeast: 1.6 }] : undefined,
          setup: async () => {
            const fn = await weft.compile(c.inputs, c.out, { pool, workers });
            return { run: async () => ((await fn(...c.values)) as weft.NdArray).data as Float64Array, dispose: () => fn.dispose() };
          },
        });
      }
    }
  } finally {
    await pool.close();
  }
}

export const w11: Workload = { id: 'W11', title: 'solve and cholesky of one 1024 x 1024 float64 matrix, blocked on the workers (GFLOP/s)', run };
