// pt.linalg (issue 15, the decompositions and matrix functions): qr, eigh, svd, lu, expm, pinv,
// lstsq, norm, matrixPower and kron. Values against NumPy and SciPy (fixtures/linalg-values.py
// makes fixtures/linalg-values.json) and by their defining identities on seeded batches, tall,
// wide and square, float32 too; gradients (verifyGrad); inferShape; the same bits on 2 workers
// with a batch cut into tasks; exact errors for bad input.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { pt, rng, throwsExactly, weft } from '../helpers.js';
import { eye, matrices, mm, spd, T, wellConditioned, worst, type Matrix } from './matrices.js';

type TV = weft.pt.TensorVariable;
type NdArray = weft.NdArray;
const la = pt.linalg;
const r = rng(1516);
const ref = JSON.parse(readFileSync(new URL('../fixtures/linalg-values.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const refMatrix = (name: string): Matrix => ref[name] as Matrix;

const one = (a: NdArray): Matrix => matrices(a)[0]!;
const vec = (a: NdArray): number[] => Array.from(a.data, Number);
const close = (a: readonly number[], b: readonly number[], tol: number): boolean => a.length === b.length && a.every((v, i) => Math.abs(v - b[i]!) <= tol * Math.max(1, Math.abs(b[i]!)));
const isUpper = (m: Matrix): boolean => m.every((row, i) => row.every((e, j) => j >= i || e === 0));
const isLower = (m: Matrix): boolean => m.every((row, i) => row.every((e, j) => j <= i || e === 0));
const scaleColumns = (m: Matrix, s: readonly number[]): Matrix => m.map((row) => row.map((e, j) => e * s[j]!));

async function evaluate(inputs: TV[], outputs: TV[], ...values: unknown[]): Promise<NdArray[]> {
  const fn = await weft.compile(inputs, outputs);
  return (await fn(...(values as weft.TensorValue[]))) as NdArray[];
}

t.test('values against NumPy and SciPy: qr, eigh, svd, lu, expm, pinv, lstsq, norm, matrixPower, kron', async (t) => {
  const a = pt.matrix('a');
  const [Mv, Tv, Sv] = [refMatrix('M'), refMatrix('T'), refMatrix('S')];
  const [qT, rT] = await evaluate([a], la.qr(a), Tv);
  const [qRef, rRef] = ref['qrT'] as [Matrix, Matrix];
  t.ok(worst(one(qT!), qRef) < 1e-14 && worst(one(rT!), rRef) < 1e-14, "qr of a tall matrix: NumPy's Q and R (LAPACK's signs)");
  const [qM, rM] = await evaluate([a], la.qr(a), Mv);
  t.ok(worst(one(qM!), (ref['qrM'] as Matrix[])[0]!) < 1e-14 && worst(one(rM!), (ref['qrM'] as Matrix[])[1]!) < 1e-14, 'qr of a square matrix');
  const [qC, rC] = await evaluate([a], la.qr(a, { mode: 'complete' }), Tv);
  t.same([qC!.shape, rC!.shape], [[3, 3], [3, 2]], "mode 'complete': Q 3 x 3, R 3 x 2");
  t.ok(worst(one(rC!), (ref['qrTcomplete'] as Matrix[])[1]!) < 1e-14 && worst(one(qC!), (ref['qrTcomplete'] as Matrix[])[0]!) < 1e-14, "mode 'complete' as NumPy's");
  const [rOnly] = await evaluate([a], [la.qr(a, { mode: 'r' })], Tv);
  t.ok(worst(one(rOnly!), rRef) < 1e-14, "mode 'r': R alone");
  const [w] = await evaluate([a], la.eigh(a), Sv);
  t.ok(close(vec(w!), ref['eighS'] as number[], 1e-14), `eigh's eigenvalues ${vec(w!)} (ascending)`);
  const [sM] = await evaluate([a], [la.svd(a, { computeUv: false })], Mv);
  const [sT] = await evaluate([a], [la.svd(a, { computeUv: false })], Tv);
  t.ok(close(vec(sM!), ref['svdM'] as number[], 1e-14) && close(vec(sT!), ref['svdT'] as number[], 1e-14), 'singular values (descending)');
  for (const [name, value] of [['luM', Mv], ['luT', Tv], ['luTwide', T(Tv)]] as const) {
    const got = await evaluate([a], la.lu(a), value);
    (ref[name] as Matrix[]).forEach((m, k) => t.ok(worst(one(got[k]!), m) < 1e-14, `lu ${name}: ${['P', 'L', 'U'][k]} as SciPy's`));
  }
  const [e1, e10] = await evaluate([a], [la.expm(a), la.expm(a.mul(10))], Mv);
  const rel = (x: Matrix, y: Matrix): number => worst(x, y) / Math.max(...y.flat().map(Math.abs));
  // SciPy picks a Pade degree by the norm (weft always 13 with scaling): both are within a few ulp of e^M times its condition.
  t.ok(rel(one(e1!), refMatrix('expmM')) < 1e-13, `expm as SciPy's (relative ${rel(one(e1!), refMatrix('expmM'))})`);
  const [rot, nil, dg] = await evaluate([a], [la.expm(a), la.expm(a.mul(0).add([[0, 1], [0, 0]])), la.expm(a.mul(0).add([[1, 0], [0, 2]]))], [[0, -1.25], [1.25, 0]]);
  t.ok(worst(one(rot!), [[Math.cos(1.25), -Math.sin(1.25)], [Math.sin(1.25), Math.cos(1.25)]]) < 4e-16, 'expm of a rotation generator: the rotation');
  t.same(one(nil!), [[1, 1], [0, 1]], 'expm of a nilpotent matrix: I + N exactly');
  t.ok(worst(one(dg!), [[Math.E, 0], [0, Math.exp(2)]]) < 2e-15, 'expm of a diagonal matrix');
  t.ok(rel(one(e10!), refMatrix('expm10M')) < 1e-13, `expm of 10 M, with squarings (relative ${rel(one(e10!), refMatrix('expm10M'))})`);
  const [p1, p2] = await evaluate([a], [la.pinv(a)], Tv).then(async (x) => [...x, ...(await evaluate([a], [la.pinv(a)], [[1, 2], [2, 4]]))]);
  t.ok(worst(one(p1!), refMatrix('pinvT')) < 1e-14, 'pinv of a tall matrix');
  t.ok(worst(one(p2!), refMatrix('pinvSingular')) < 1e-15, 'pinv of a singular matrix (the cutoff drops its zero singular value)');
  const bv = pt.vector('b');
  const [x, residuals, rank, s] = await evaluate([a, bv], la.lstsq(a, bv), Tv, ref['b']);
  const [xr, resr, rankr, sr] = ref['lstsq'] as [number[], number[], number, number[]];
  t.ok(close(vec(x!), xr, 1e-13) && close(vec(residuals!), resr, 1e-12) && close(vec(s!), sr, 1e-14), 'lstsq: x, residuals and s as NumPy');
  t.same([rank!.data[0], rank!.dtype], [rankr, 'int32'], 'lstsq: the rank');
  const matrixNorms = ref['matrixNorms'] as Record<string, number>;
  const ords: [string, number | 'fro' | 'nuc' | undefined][] = [['None', undefined], ['fro', 'fro'], ['nuc', 'nuc'], ['inf', Infinity], ['-inf', -Infinity], ['1', 1], ['-1', -1], ['2', 2], ['-2', -2]];
  const norms = await evaluate([a], ords.map(([, ord]) => la.norm(a, ord === undefined ? {} : { ord })), Mv);
  ords.forEach(([name], k) => t.ok(Math.abs(norms[k]!.data[0]! - matrixNorms[name]!) < 1e-14 * matrixNorms[name]!, `matrix norm ord ${name}: ${norms[k]!.data[0]} = ${matrixNorms[name]}`));
  const vectorNorms = ref['vectorNorms'] as Record<string, number>;
  const vords: [string, number | undefined][] = [['None', undefined], ['inf', Infinity], ['-inf', -Infinity], ['0', 0], ['1', 1], ['2', 2], ['3', 3], ['0.5', 0.5]];
  const vnorms = await evaluate([bv], vords.map(([, ord]) => la.norm(bv, ord === undefined ? {} : { ord })), ref['v']);
  vords.forEach(([name], k) => t.ok(Math.abs(vnorms[k]!.data[0]! - vectorNorms[name]!) < 1e-14 * Math.max(1, vectorNorms[name]!), `vector norm ord ${name}: ${vnorms[k]!.data[0]} = ${vectorNorms[name]}`));
  const powers = ref['matrixPower'] as Record<string, Matrix>;
  const pw = await evaluate([a], [0, 1, 2, 5, -3].map((n) => la.matrixPower(a, n)), Mv);
  [0, 1, 2, 5, -3].forEach((n, k) => t.ok(rel(one(pw[k]!), powers[String(n)]!) < 1e-14, `matrixPower ${n}`));
  const [k1, k2] = await evaluate([a, bv], [la.kron(a, pt.constant([[0, 5], [6, 7], [1, 1]])), la.kron(bv, a)], [[1, 2], [3, 4]], [1, 2]);
  t.same(one(k1!), ref['kron'], 'kron of two matrices');
  t.same(one(k2!), ref['kron13'], 'kron of a vector and a matrix (the vector gets a leading axis)');
});

t.test('identities on batches, tall, wide and square: Q R = A, Q^T Q = I; A V = V diag(w); U diag(s) Vh = A; P L U = A; float32', async (t) => {
  const x = pt.tensor3('x');
  for (const shape of [[3, 6, 4], [3, 4, 6], [2, 5, 5]]) {
    const av = r.normal(shape);
    const A = matrices(av);
    const [q, rr, u, s, vh, uf, vhf, p, l, uu] = await evaluate([x], [...la.qr(x), ...la.svd(x, { fullMatrices: false }), ...la.svd(x).filter((_, i) => i !== 1), ...la.lu(x)], av);
    const [m, n] = shape.slice(1) as [number, number];
    const k = Math.min(m, n);
    t.same([q!.shape, rr!.shape, u!.shape, s!.shape, vh!.shape, uf!.shape, vhf!.shape, p!.shape, l!.shape, uu!.shape], [[3, m, k], [3, k, n], [3, m, k], [3, k], [3, k, n], [3, m, m], [3, n, n], [3, m, m], [3, m, k], [3, k, n]].map((d) => [shape[0], ...d.slice(1)]), `${shape}: shapes`);
    const S = matrices(weft.ndarray(s!.data, [shape[0]!, 1, k])).map((row) => row[0]!);
    A.forEach((Ab, b) => {
      const [Q, R, U, Vh, Uf, Vhf, P, L, UU] = [q, rr, u, vh, uf, vhf, p, l, uu].map((v) => matrices(v!)[b]!);
      t.ok(worst(mm(Q!, R!), Ab) < 1e-13 && worst(mm(T(Q!), Q!), eye(k)) < 1e-14 && isUpper(R!), `${shape} batch ${b}: QR`);
      t.ok(worst(mm(scaleColumns(U!, S[b]!), Vh!), Ab) < 1e-13, `${shape} batch ${b}: U diag(s) Vh = A`);
      t.ok(worst(mm(T(U!), U!), eye(k)) < 1e-14 && worst(mm(Vh!, T(Vh!)), eye(k)) < 1e-14, `${shape} batch ${b}: U and V orthonormal`);
      t.ok(worst(mm(T(Uf!), Uf!), eye(m)) < 1e-14 && worst(mm(Vhf!, T(Vhf!)), eye(n)) < 1e-14, `${shape} batch ${b}: full U and V orthogonal`);
      t.ok(S[b]!.every((v, i) => i === 0 || v <= S[b]![i - 1]!), `${shape} batch ${b}: s descending`);
      t.ok(worst(mm(mm(P!, L!), UU!), Ab) < 1e-13 && isLower(L!) && L!.every((row, i) => i >= k || row[i] === 1) && isUpper(UU!), `${shape} batch ${b}: P L U = A`);
    });
  }
  const spdv = spd(r, [3, 5, 5]);
  const [w, v] = await evaluate([x], la.eigh(x), spdv);
  matrices(spdv).forEach((A, b) => {
    const V = matrices(v!)[b]!;
    const W = Array.from(w!.data.slice(b * 5, b * 5 + 5));
    t.ok(worst(mm(A, V), scaleColumns(V, W)) < 1e-12 && worst(mm(T(V), V), eye(5)) < 1e-14, `eigh batch ${b}: A V = V diag(w), V orthogonal`);
    t.ok(W.every((e, i) => i === 0 || e >= W[i - 1]!), `eigh batch ${b}: ascending`);
  });
  // Rank-deficient: a zero singular value still gives orthonormal U and V.
  const low = weft.ndarray(Float64Array.from([1, 2, 3, 2, 4, 6, 1, 1, 1, 0, 0, 0]), [1, 4, 3]);
  const [ul, sl, vhl] = await evaluate([x], la.svd(x), low);
  t.ok(Math.abs(sl!.data[2]!) < 1e-14, `the third singular value of a rank-2 matrix is 0 (${sl!.data[2]})`);
  t.ok(worst(mm(T(one(ul!)), one(ul!)), eye(4)) < 1e-14 && worst(mm(one(vhl!), T(one(vhl!))), eye(3)) < 1e-14, 'rank-deficient: U and V still orthogonal');
  // float32 in, float32 out.
  const x32 = pt.tensor3('x32', 'float32');
  const a32 = wellConditioned(r, [2, 4, 4], 'float32');
  const outs32 = await evaluate([x32], [...la.qr(x32), la.svd(x32, { computeUv: false }), la.expm(x32), la.pinv(x32), la.eigh(x32)[0]], a32);
  t.same(outs32.map((o) => o.dtype), Array(6).fill('float32'), 'float32 results');
  const [q32, r32] = outs32;
  matrices(a32).forEach((A, b) => t.ok(worst(mm(matrices(q32!)[b]!, matrices(r32!)[b]!), A) < 1e-5 * 8, `float32 batch ${b}: QR = A`));
});

t.test('gradients (verifyGrad): qr, eigh, svd, lu, expm, pinv, lstsq, norm, matrixPower, kron', async (t) => {
  const o = { rng: rng(4) };
  const [tall, wide, sq] = [r.normal([5, 3]), r.normal([3, 5]), wellConditioned(r, [4, 4])];
  const batch = r.normal([2, 4, 3]);
  for (const x of [tall, wide, sq, batch]) {
    await weft.verifyGrad((a: TV) => la.qr(a)[0], [x], o);
    await weft.verifyGrad((a: TV) => la.qr(a)[1], [x], o);
    await weft.verifyGrad((a: TV) => la.qr(a, { mode: 'r' }), [x], o);
  }
  await weft.verifyGrad((a: TV) => la.qr(a, { mode: 'complete' })[0], [wellConditioned(r, [3, 3])], o);
  // eigh: a function of the lower (or upper) triangle; both outputs. Eigenvectors through v^2 (sign-free) and directly.
  const sym = spd(r, [4, 4]);
  for (const UPLO of ['L', 'U'] as const) {
    await weft.verifyGrad((a: TV) => la.eigh(a, { UPLO })[0], [sym], o);
    await weft.verifyGrad((a: TV) => pt.sqr(la.eigh(a, { UPLO })[1]), [sym], o);
  }
  await weft.verifyGrad((a: TV) => la.eigh(a)[1], [spd(r, [2, 3, 3])], o);
  for (const x of [tall, wide, sq, batch]) {
    await weft.verifyGrad((a: TV) => la.svd(a, { computeUv: false }), [x], o);
    await weft.verifyGrad((a: TV) => la.svd(a, { fullMatrices: false })[0], [x], o);
    await weft.verifyGrad((a: TV) => la.svd(a, { fullMatrices: false })[2], [x], o);
  }
  await weft.verifyGrad((a: TV) => la.lu(a)[1], [sq], o);
  await weft.verifyGrad((a: TV) => la.lu(a)[2], [sq], o);
  await weft.verifyGrad((a: TV) => la.lu(a)[2], [wellConditioned(r, [2, 3, 3])], o);
  await weft.verifyGrad((a: TV) => la.expm(a), [r.normal([4, 4])], o);
  // Norms above theta_13, so that the gradient goes through squarings.
  await weft.verifyGrad((a: TV) => la.expm(a), [weft.ndarray(Float64Array.from(r.normal([2, 3, 3]).data, (v) => 3 * v), [2, 3, 3])], o);
  for (const x of [tall, wide, sq]) await weft.verifyGrad((a: TV) => la.pinv(a), [x], o);
  await weft.verifyGrad((a: TV, b: TV) => la.lstsq(a, b)[0], [tall, r.normal([5, 2])], o);
  for (const ord of [undefined, 'fro', 'nuc', Infinity, -Infinity, 1, -1, 2, -2] as const) await weft.verifyGrad((a: TV) => la.norm(a, ord === undefined ? {} : { ord }), [sq], o);
  for (const ord of [undefined, Infinity, 1, 3, 0.5] as const) await weft.verifyGrad((a: TV) => la.norm(a, { ...(ord === undefined ? {} : { ord }), axis: -1 }), [tall], o);
  for (const n of [1, 2, 3, -2]) await weft.verifyGrad((a: TV) => la.matrixPower(a, n), [sq], o);
  await weft.verifyGrad((a: TV, b: TV) => la.kron(a, b), [r.normal([2, 3]), r.normal([3, 2])], o);
  t.pass('checked');
});

t.test('inferShape; a batch cut into tasks on 2 workers: the same bits as on the calling thread', async (t) => {
  const x = pt.tensor3('x');
  const outs = [...la.qr(x), la.qr(x, { mode: 'r' }), ...la.qr(x, { mode: 'complete' }), ...la.svd(x), la.svd(x, { computeUv: false }), ...la.lu(x), la.pinv(x), la.norm(x, { ord: 2, axis: [1, 2] })];
  await weft.checkInferShape([x], outs, [r.normal([2, 5, 3])]);
  await weft.checkInferShape([x], outs, [r.normal([2, 3, 5])]);
  const square = [...la.eigh(x), la.expm(x), la.matrixPower(x, 3), la.matrixPower(x, 0), la.kron(x, x)];
  await weft.checkInferShape([x], square, [r.normal([2, 3, 3])]);
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const many = [...outs, ...square.slice(0, 3)];
  const av = r.normal([600, 12, 12]);
  const base = (await (await weft.compile([x], many, { workers: 0 }))(av)) as NdArray[];
  const fn = await weft.compile([x], many, { pool, profile: true });
  const got = (await fn(av)) as NdArray[];
  base.forEach((v, k) => t.ok(v.data.every((e, i) => Object.is(e, got[k]!.data[i])), `output ${k}: equal bits`));
  const tasksOf = (name: string): number => fn.profile!.events.filter((e) => e.node.op.constructor.name === name).length;
  for (const name of ['QR', 'SVD', 'LU', 'Pinv', 'Eigh', 'Expm']) t.ok(tasksOf(name) > 2, `${name}: ${tasksOf(name)} tasks`);
});

t.test('bad input: the exact errors', async (t) => {
  await throwsExactly(t, () => la.qr(pt.vector('v')), TypeError, 'qr: expected a matrix or a batch of matrices (at least 2 axes), got v (TensorType(float64, (?,)))');
  await throwsExactly(t, () => la.qr(pt.matrix('m'), { mode: 'raw' as 'r' }), TypeError, `qr: mode must be 'reduced', 'complete' or 'r', got "raw"`);
  await throwsExactly(t, () => la.eigh(pt.tensor({ name: 'w', shape: [3, 4] })), RangeError, 'eigh: the matrix w (TensorType(float64, (3, 4))) is not square');
  await throwsExactly(t, () => la.eigh(pt.matrix('m'), { UPLO: 'X' as 'L' }), TypeError, `eigh: UPLO must be 'L' or 'U', got "X"`);
  await throwsExactly(t, () => la.expm(pt.tensor({ name: 'w', shape: [3, 4] })), RangeError, 'expm: the matrix w (TensorType(float64, (3, 4))) is not square');
  await throwsExactly(t, () => la.matrixPower(pt.matrix('m'), 1.5), TypeError, 'matrixPower: n must be an integer, got 1.5');
  await throwsExactly(t, () => la.kron(pt.vector('a'), pt.vector('b')), TypeError, "kron: the inputs' axes must number 3 or more together (as PyTensor's), got a (TensorType(float64, (?,))) and b (TensorType(float64, (?,)))");
  await throwsExactly(t, () => la.norm(pt.vector('v'), { ord: 'fro' }), RangeError, 'norm: the order "fro" is for matrices; a vector norm takes a number');
  await throwsExactly(t, () => la.norm(pt.matrix('m'), { ord: 3 }), RangeError, "norm: invalid order 3 for matrices (expected 'fro', 'nuc', Infinity, -Infinity, 1, -1, 2 or -2)");
  await throwsExactly(t, () => la.norm(pt.tensor3('x'), { ord: 2 }), TypeError, 'norm: with an ord, x must be a vector or a matrix unless axis is given, got x (TensorType(float64, (?, ?, ?)))');
  await throwsExactly(t, () => la.pinv(pt.matrix('m'), { rcond: -1 }), RangeError, 'pinv: rcond must be a non-negative number, got -1');
  await throwsExactly(t, () => la.lstsq(pt.tensor3('a'), pt.vector('b')), TypeError, 'lstsq: a must be a matrix, got a (TensorType(float64, (?, ?, ?)))');
  const m = pt.matrix('m');
  await throwsExactly(t, () => weft.grad(la.svd(m)[0].sum(), m), TypeError, 'svd: the gradient with fullMatrices is not defined (as PyTensor\'s); use svd(x, { fullMatrices: false })');
  const w = pt.tensor({ name: 'w', shape: [3, 4] });
  await throwsExactly(t, () => weft.grad(la.lu(w)[2].sum(), w), TypeError, 'lu: the gradient is defined for square matrices only; w (TensorType(float64, (3, 4))) is not square');
  const tall = pt.tensor({ name: 't', shape: [4, 3] });
  await throwsExactly(t, () => weft.grad(la.qr(tall, { mode: 'complete' })[0].sum(), tall), TypeError, "qr: the gradient of mode 'complete' is defined for matrices with no more rows than columns only (as PyTensor's); t (TensorType(float64, (4, 3))) has more");
  const x = pt.matrix('x');
  const fn = await weft.compile([x], la.eigh(x)[0]);
  await t.rejects(fn([[1, 2, 3], [4, 5, 6]]), { message: /^eigh: the matrix of shape \[2, 3\] is not square/ });
  t.same(Array.from(((await fn([[2, 0], [0, 1]])) as NdArray).data), [1, 2], 'still computes');
});


t.test('Rop (checkRop: finite differences and the Lop identity): inv, det, slogdet, solve, solveTriangular, cholesky, eigh, expm', async (t) => {
  const o = { rng: rng(5) };
  const sq = wellConditioned(r, [4, 4]);
  const batch = wellConditioned(r, [2, 3, 3]);
  await weft.checkRop((a) => la.inv(a), [sq], o);
  await weft.checkRop((a) => la.inv(a), [batch], o);
  await weft.checkRop((a) => la.det(a), [batch], o);
  await weft.checkRop((a) => la.slogdet(a)[1], [sq], o);
  await weft.checkRop((a, b) => la.solve(a, b), [sq, r.normal([4, 2])], o);
  await weft.checkRop((a, b) => la.solve(a, b), [batch, r.normal([2, 3])], o);
  await weft.checkRop((a, b) => la.solve(a, b, { assumeA: 'pos', lower: true }), [spd(r, [4, 4]), r.normal([4])], o);
  for (const opts of [{ lower: true }, { lower: false, trans: 'T' as const, unitDiagonal: true }]) await weft.checkRop((a, b) => la.solveTriangular(a, b, opts), [sq, r.normal([4, 2])], o);
  for (const lower of [true, false]) await weft.checkRop((a) => la.cholesky(a, { lower }), [spd(r, [2, 3, 3])], o);
  await weft.checkRop((a) => la.eigh(a)[0], [spd(r, [4, 4])], o);
  await weft.checkRop((a) => la.eigh(a, { UPLO: 'U' })[1], [spd(r, [2, 3, 3])], o);
  await weft.checkRop((a) => la.expm(a), [weft.ndarray(Float64Array.from(r.normal([3, 3]).data, (v) => 3 * v), [3, 3])], o);
  t.pass('checked');
});

t.teardown(() => weft.shutdown());
