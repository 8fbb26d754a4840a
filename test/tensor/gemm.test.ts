// Gemm as an op: b*z + a*(x . y) against a plain triple loop (float64, float32, strided and
// empty operands, symbolic and constant scalars), z never overwritten, inferShape, gradient,
// Rop, and bad input at build time and at run time with exact messages.
import ndarray from 'ndarray';
import t, { type Test } from 'tap';
import { Gemm, gemm } from '../../src/tensor/linalg/gemm.js';
import { pt, rng, run, throwsExactly, weft } from '../helpers.js';

type Nested = number | Nested[];
const flat = (x: Nested): number[] => (Array.isArray(x) ? x.flatMap(flat) : [x]);
const values = (a: weft.NdArray): number[] => flat(weft.tolist(a) as Nested);

/** b*z + a*(x . y) from row-major values of x [m, k], y [k, n], z [m, n]. */
function reference(z: number[], a: number, x: number[], y: number[], b: number, m: number, k: number, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += x[i * k + p]! * y[p * n + j]!;
      out.push(b * z[i * n + j]! + a * s);
    }
  }
  return out;
}

function close(t: Test, got: weft.NdArray, want: number[], tol: number, msg: string): void {
  const g = values(got);
  t.equal(g.length, want.length, `${msg}: size`);
  const bad = want.map((v, i) => (Math.abs(g[i]! - v) <= tol * Math.max(1, Math.abs(v)) ? '' : `[${i}] ${g[i]} vs ${v}`)).filter((s) => s);
  t.same(bad.slice(0, 5), [], `${msg} within ${tol}`);
}

t.test('Gemm: values', async (t) => {
  const r = rng(31);
  for (const dtype of ['float64', 'float32'] as const) {
    const z = pt.matrix('z', dtype);
    const x = pt.matrix('x', dtype);
    const y = pt.matrix('y', dtype);
    const a = pt.scalar('a', dtype);
    const b = pt.scalar('b', dtype);
    const out = gemm(z, a, x, y, b);
    t.equal(String(out.owner!.op), 'Gemm');
    t.equal(out.dtype, dtype);
    const zv = r.normal([3, 5], { dtype });
    const xv = r.normal([3, 4], { dtype });
    const yv = r.normal([4, 5], { dtype });
    const zBefore = values(zv);
    const got = await run([z, a, x, y, b], out, [zv, 0.5, xv, yv, -2]);
    t.same(got.shape, [3, 5]);
    const tol = dtype === 'float32' ? 1e-6 : 1e-14;
    close(t, got, reference(zBefore, 0.5, values(xv), values(yv), -2, 3, 4, 5), tol, dtype);
    t.same(values(zv), zBefore, 'z unchanged');
  }
});

t.test('Gemm: strided operands, constants, b = 0 and empty products', async (t) => {
  const r = rng(32);
  const z = pt.matrix('z');
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const zv = r.normal([5, 3]);
  const xv = r.normal([4, 3]);
  const yv = r.normal([5, 4]);
  const zcopy = values(zv);
  // z.T, x.T and y.T are all views with swapped strides.
  const got = await run([z, x, y], gemm(z.T, 3, x.T, y.T, 0.25), [zv, xv, yv]);
  const tr = (v: number[], rows: number, cols: number) => [...Array(rows * cols).keys()].map((q) => v[(q % rows) * cols + Math.floor(q / rows)]!);
  close(t, got, reference(tr(zcopy, 5, 3), 3, tr(values(xv), 4, 3), tr(values(yv), 5, 4), 0.25, 3, 4, 5), 1e-14, 'transposed');
  t.same(values(zv), zcopy, 'the input z is not overwritten');

  // b = 0: BLAS semantics, z is not read (NaN in z does not propagate).
  const zn = [[NaN, 1], [2, NaN]];
  const g0 = await run([z, x, y], gemm(z, 1, x, y, 0), [zn, [[1, 2], [3, 4]], [[1, 0], [0, 1]]]);
  t.same(weft.tolist(g0), [[1, 2], [3, 4]], 'b = 0 ignores z');

  // k = 0: x . y is zeros, the result is b*z.
  const ge = await run([z, x, y], gemm(z, 1, x, y, 2), [[[1, 2], [3, 4]], [[], []], ndarray(new Float64Array(0), [0, 2])]);
  t.same(weft.tolist(ge), [[2, 4], [6, 8]], 'empty inner dimension');
  const gm = await run([z, x, y], gemm(z, 1, x, y, 2), [ndarray(new Float64Array(0), [0, 2]), ndarray(new Float64Array(0), [0, 1]), [[1, 2]]]);
  t.same(gm.shape, [0, 2], 'no rows');
});

t.test('Gemm: inferShape, grad and Rop', async (t) => {
  const r = rng(33);
  const pts = [r.normal([3, 2]), r.normal([]), r.normal([3, 4]), r.normal([4, 2]), r.normal([])];
  const [z, x, y] = ['z', 'x', 'y'].map((n) => pt.matrix(n));
  const [a, b] = ['a', 'b'].map((n) => pt.scalar(n));
  t.equal(await weft.checkInferShape([z!, a!, x!, y!, b!], [gemm(z!, a!, x!, y!, b!)], pts, Gemm), 1);
  await weft.verifyGrad((zz, aa, xx, yy, bb) => gemm(zz, aa, xx, yy, bb), pts);
  await weft.checkRop((zz, aa, xx, yy, bb) => gemm(zz, aa, xx, yy, bb), pts);
  const p32 = pts.map((p) => weft.pt.constant(p, { dtype: 'float32' }).data);
  await weft.verifyGrad((zz, aa, xx, yy, bb) => gemm(zz, aa, xx, yy, bb), p32);
});

t.test('Gemm: bad input', async (t) => {
  const z = pt.matrix('z');
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const a = pt.scalar('a');
  const op = new Gemm();
  await throwsExactly(t, () => op.call(z, a, x, y), TypeError, 'Gemm: expected 5 inputs (z, a, x, y, b), got 4');
  await throwsExactly(t, () => gemm(z, a, x, pt.matrix('yi', 'int32'), 1), TypeError,
    "Gemm: y (yi) has dtype int32; every input must have z's dtype (float64)");
  await throwsExactly(t, () => gemm(pt.matrix('zi', 'int32'), 1, x, y, 1), TypeError,
    'Gemm: z (zi) has dtype int32; Gemm computes in float32 or float64');
  await throwsExactly(t, () => gemm(z, a, pt.matrix('x32', 'float32'), y, 1), TypeError,
    "Gemm: x (x32) has dtype float32; every input must have z's dtype (float64)");
  await throwsExactly(t, () => gemm(z, pt.scalar('a32', 'float32'), x, y, 1), TypeError,
    "Gemm: a (a32) has dtype float32; every input must have z's dtype (float64)");
  await throwsExactly(t, () => gemm(z, pt.vector('av'), x, y, 1), TypeError, 'Gemm: a (av) must be 0-d, got TensorType(float64, (?,))');
  await throwsExactly(t, () => gemm(pt.vector('zv'), a, x, y, 1), TypeError, 'Gemm: z (zv) must be 2-d, got TensorType(float64, (?,))');
  await throwsExactly(t, () => gemm(z, a, pt.tensor({ shape: [2, 3], name: 'xs' }), pt.tensor({ shape: [4, 2], name: 'ys' }), 1), TypeError,
    'Gemm: x has 3 columns but y has 4 rows');
  await throwsExactly(t, () => gemm(pt.tensor({ shape: [5, null], name: 'zs' }), a, pt.tensor({ shape: [2, 3], name: 'xs' }), y, 1), TypeError,
    'Gemm: z (TensorType(float64, (5, ?))) does not have the shape of x . y (2 x ?)');
  // At run time.
  await throwsExactly(t, () => run([z, a, x, y], gemm(z, a, x, y, 1), [[[1, 2]], 1, [[1, 2, 3]], [[1], [2]]]), weft.NodeError,
    'Gemm: shapes [1, 2] + [1, 3] . [2, 1] do not fit\n  in node 0: Gemm(z, a, x, y, TensorConstant{1})\n  input values: float64 [1, 2], float64 [], float64 [1, 3], float64 [2, 1], float64 []');
  await throwsExactly(t, () => run([z, a, x, y], gemm(z, a, x, y, 1), [[[1, 2]], 1, [[1, 2]], [[1], [2]]]), weft.NodeError,
    'Gemm: shapes [1, 2] + [1, 2] . [2, 1] do not fit\n  in node 0: Gemm(z, a, x, y, TensorConstant{1})\n  input values: float64 [1, 2], float64 [], float64 [1, 2], float64 [2, 1], float64 []');
});
