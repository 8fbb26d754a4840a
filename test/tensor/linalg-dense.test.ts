// pt.linalg (issue 15, the dense square ops): inv, det, slogdet, solve (general, symmetric and
// positive definite from one triangle, matrix and vector right-hand sides), solveTriangular
// (lower, upper, transposed, unit diagonal), cholesky (lower, upper) and choSolve: values by
// their defining identities, batched and float32; gradients (verifyGrad) in every argument;
// inferShape; the same bits on 2 workers; and exact errors for non-square, mismatched, singular
// and not positive definite inputs (the pool usable after them).
import t from 'tap';
import { pt, rng, throwsExactly, weft } from '../helpers.js';
import { eye, matrices, mm, spd as spdOf, T, wellConditioned as wellConditionedOf, worst } from './matrices.js';

type TV = weft.pt.TensorVariable;
type NdArray = weft.NdArray;
const la = pt.linalg;
const r = rng(1515);

const wellConditioned = (shape: number[], dtype: 'float32' | 'float64' = 'float64'): NdArray => wellConditionedOf(r, shape, dtype);
const spd = (shape: number[]): NdArray => spdOf(r, shape);

t.test('values by their identities: a inv(a) = I, a solve(a, b) = b, L L^T = a, T x = b; det and slogdet', async (t) => {
  const a = pt.tensor3('a');
  const b = pt.tensor3('b');
  const v = pt.matrix('v');
  const av = wellConditioned([3, 5, 5]);
  const bv = r.normal([3, 5, 2]);
  const vv = r.normal([3, 5]);
  const fn = await weft.compile([a, b, v], [la.inv(a), la.solve(a, b), la.solve(a, v), la.cholesky(a.matmul(pt.swapaxes(a, 1, 2))), la.solveTriangular(a, b, { lower: true }), la.solveTriangular(a, b, { trans: 'T', unitDiagonal: true })]);
  const [inv, x, xv, L, lowX, upX] = (await fn(av, bv, vv)) as NdArray[];
  const A = matrices(av);
  const B = matrices(bv);
  matrices(inv!).forEach((m, k) => t.ok(worst(mm(A[k]!, m), eye(5)) < 1e-12, `batch ${k}: a inv(a) = I`));
  matrices(x!).forEach((m, k) => t.ok(worst(mm(A[k]!, m), B[k]!) < 1e-12, `batch ${k}: a x = b`));
  const X = matrices(weft.ndarray(xv!.data, [3, 5, 1]));
  X.forEach((m, k) => t.ok(worst(mm(A[k]!, m), T([Array.from(vv.data.slice(k * 5, k * 5 + 5))])) < 1e-12, `batch ${k}: vector right-hand side`));
  matrices(L!).forEach((m, k) => {
    t.ok(m.every((row, i) => row.every((e, j) => j <= i || e === 0)), `batch ${k}: L is lower`);
    t.ok(worst(mm(m, T(m)), mm(A[k]!, T(A[k]!))) < 1e-10, `batch ${k}: L L^T = a a^T`);
  });
  const low = A.map((m) => m.map((row, i) => row.map((e, j) => (j <= i ? e : 0))));
  matrices(lowX!).forEach((m, k) => t.ok(worst(mm(low[k]!, m), B[k]!) < 1e-12, `batch ${k}: tril(a) x = b`));
  const unitUpper = A.map((m) => m.map((row, i) => row.map((e, j) => (j > i ? e : j === i ? 1 : 0))));
  matrices(upX!).forEach((m, k) => t.ok(worst(mm(T(unitUpper[k]!), m), B[k]!) < 1e-10, `batch ${k}: (unit triu(a))^T x = b`));
  // det by cofactors for 3 x 3, and slogdet's sign and log.
  const m3 = pt.matrix('m3');
  const dfn = await weft.compile([m3], [la.det(m3), ...la.slogdet(m3)]);
  const M = [[2, -1, 0.5], [1, 3, -2], [0.25, 4, 1]];
  const cof = M[0]![0]! * (M[1]![1]! * M[2]![2]! - M[1]![2]! * M[2]![1]!) - M[0]![1]! * (M[1]![0]! * M[2]![2]! - M[1]![2]! * M[2]![0]!) + M[0]![2]! * (M[1]![0]! * M[2]![1]! - M[1]![1]! * M[2]![0]!);
  const [d, s, l] = (await dfn(M)) as NdArray[];
  t.ok(Math.abs(d!.data[0]! - cof) < 1e-12, `det ${d!.data[0]} = ${cof}`);
  t.same([s!.data[0], Math.abs(l!.data[0]! - Math.log(Math.abs(cof))) < 1e-14], [Math.sign(cof), true], 'slogdet');
  const [ds, ss, ls] = (await dfn([[1, 2, 3], [2, 4, 6], [0, 1, 1]])) as NdArray[];
  t.same([ds!.data[0], ss!.data[0], ls!.data[0]], [0, 0, -Infinity], 'a singular matrix: det 0, slogdet (0, -inf) as NumPy');
  // solve with assumeA 'sym' / 'pos' reads one triangle only.
  const sym = pt.matrix('sym');
  const rhs = pt.vector('rhs');
  const sv = spd([4, 4]);
  const garbage = weft.ndarray(Float64Array.from(sv.data, (e, k) => (k % 4 > Math.floor(k / 4) ? 99 : e)), [4, 4]);
  const sfn = await weft.compile([sym, rhs], [la.solve(sym, rhs), la.solve(sym, rhs, { assumeA: 'pos', lower: true }), la.solve(sym, rhs, { assumeA: 'sym' })]);
  const bvec = [1, -2, 0.5, 3];
  const [full, fromLower] = (await sfn(sv, bvec)) as NdArray[];
  const [, fromLower2, fromUpper] = (await sfn(garbage, bvec)) as NdArray[];
  t.ok(Array.from(fromLower2!.data).every((e, i) => Math.abs(e - full!.data[i]!) < 1e-12), 'lower: the upper triangle is not read');
  t.ok(Array.from(fromLower!.data).every((e, i) => Math.abs(e - full!.data[i]!) < 1e-12), 'pos, lower on the full matrix');
  t.notOk(Array.from(fromUpper!.data).every((e, i) => Math.abs(e - full!.data[i]!) < 1e-6), 'sym (upper, the default) reads the changed triangle');
});

t.test('float32 in, float32 out (computed in float64); choSolve', async (t) => {
  const a = pt.matrix('a', 'float32');
  const b = pt.vector('b', 'float32');
  const av = spd([6, 6]);
  const a32 = weft.ndarray(Float32Array.from(av.data), [6, 6]);
  const b32 = weft.ndarray(Float32Array.from([1, 2, 3, 4, 5, 6]), [6]);
  const c = la.cholesky(a);
  const fn = await weft.compile([a, b], [la.solve(a, b), la.choSolve([c, true], b), la.choSolve([la.cholesky(a, { lower: false }), false], b), la.det(a)]);
  const [x, y, z, d] = (await fn(a32, b32)) as NdArray[];
  t.equal(x!.dtype, 'float32');
  t.equal(d!.dtype, 'float32');
  t.ok(Array.from(y!.data).every((e, i) => Math.abs(e - x!.data[i]!) < 1e-5 * Math.max(1, Math.abs(x!.data[i]!))), 'choSolve (lower) = solve');
  t.ok(Array.from(z!.data).every((e, i) => Math.abs(e - x!.data[i]!) < 1e-5 * Math.max(1, Math.abs(x!.data[i]!))), 'choSolve (upper) = solve');
  t.equal(pt.linalg.inv(pt.matrix('i', 'int32')).dtype, 'float64', 'integers give float64');
});

t.test('gradients (verifyGrad) in every argument', async (t) => {
  const o = { rng: rng(3) };
  const sq = wellConditioned([4, 4]);
  const batch = wellConditioned([2, 3, 3]);
  await weft.verifyGrad((a: TV) => la.inv(a), [sq], o);
  await weft.verifyGrad((a: TV) => la.inv(a), [batch], o);
  await weft.verifyGrad((a: TV) => la.det(a), [sq], o);
  await weft.verifyGrad((a: TV) => la.det(a), [batch], o);
  await weft.verifyGrad((a: TV) => la.slogdet(a)[1], [sq], o);
  await weft.verifyGrad((a: TV, b: TV) => la.solve(a, b), [sq, r.normal([4, 2])], o);
  await weft.verifyGrad((a: TV, b: TV) => la.solve(a, b), [sq, r.normal([4])], o);
  await weft.verifyGrad((a: TV, b: TV) => la.solve(a, b), [batch, r.normal([2, 3])], o);
  // One matrix for a batch of right-hand sides: a's gradient sums over the batch.
  await weft.verifyGrad((a: TV, b: TV) => la.solve(a, b), [sq, r.normal([3, 4, 2])], o);
  await weft.verifyGrad((a: TV, b: TV) => la.solve(a, b, { assumeA: 'sym', lower: true }), [spd([4, 4]), r.normal([4])], o);
  await weft.verifyGrad((a: TV, b: TV) => la.solve(a, b, { assumeA: 'pos' }), [spd([4, 4]), r.normal([4, 2])], o);
  for (const opts of [{ lower: true }, { lower: false }, { lower: true, trans: 'T' as const }, { lower: false, trans: 1 as const, unitDiagonal: true }]) {
    await weft.verifyGrad((a: TV, b: TV) => la.solveTriangular(a, b, opts), [sq, r.normal([4, 2])], o);
    await weft.verifyGrad((a: TV, b: TV) => la.solveTriangular(a, b, opts), [batch, r.normal([2, 3])], o);
  }
  for (const lower of [true, false]) {
    // Through x x^T + 4 I, so that every perturbation stays positive definite.
    await weft.verifyGrad((x: TV) => la.cholesky(x.matmul(x.T).add(pt.eye(4).mul(4)), { lower }), [r.normal([4, 4])], o);
    // Directly: the gradient lives on the triangle cholesky reads.
    await weft.verifyGrad((a: TV) => la.cholesky(a, { lower }), [spd([3, 3])], o);
  }
  await weft.verifyGrad((x: TV, b: TV) => la.choSolve([la.cholesky(x.matmul(x.T).add(pt.eye(3).mul(3))), true], b), [r.normal([3, 3]), r.normal([3])], o);
  t.pass('checked');
});

t.test('inferShape; the same bits on 2 workers', async (t) => {
  const a = pt.tensor3('a');
  const b = pt.matrix('b');
  const av = wellConditioned([2, 4, 4]);
  const bv = r.normal([2, 4]);
  const outs = [la.inv(a), la.det(a), ...la.slogdet(a), la.solve(a, b), la.solveTriangular(a, b), la.cholesky(a.matmul(pt.swapaxes(a, 1, 2)))];
  await weft.checkInferShape([a, b], outs, [av, bv]);
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = (await (await weft.compile([a, b], outs, { workers: 0 }))(av, bv)) as NdArray[];
  const y = (await (await weft.compile([a, b], outs, { pool }))(av, bv)) as NdArray[];
  x.forEach((v, k) => t.ok(v.data.every((e, i) => Object.is(e, y[k]!.data[i])), `output ${k}: equal bits`));
});

t.test('a batch is cut into tasks of whole matrices: the same bits as on the calling thread, several tasks per op, errors name the batch index', async (t) => {
  const a = pt.tensor3('a');
  const b = pt.tensor3('b');
  const av = wellConditioned([400, 16, 16]);
  const bv = r.normal([400, 16, 4]);
  const outs = [la.inv(a), la.det(a), ...la.slogdet(a), la.solve(a, b), la.solveTriangular(a, b, { lower: true }), la.cholesky(a.matmul(pt.swapaxes(a, 1, 2)))];
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = (await (await weft.compile([a, b], outs, { workers: 0 }))(av, bv)) as NdArray[];
  const fn = await weft.compile([a, b], outs, { pool, profile: true });
  const y = (await fn(av, bv)) as NdArray[];
  x.forEach((v, k) => t.ok(v.data.every((e, i) => Object.is(e, y[k]!.data[i])), `output ${k}: equal bits`));
  const tasksOf = (name: string): number => fn.profile!.events.filter((e) => e.node.op.constructor.name === name).length;
  for (const name of ['MatrixInverse', 'Det', 'Solve', 'SolveTriangular', 'Cholesky']) t.ok(tasksOf(name) > (name === 'Det' ? 2 : 1), `${name}: ${tasksOf(name)} tasks`);
  const bad = weft.ndarray(Float64Array.from(av.data), av.shape);
  for (let k = 0; k < 16 * 16; k++) bad.data[37 * 256 + k] = k % 16 === 0 ? 1 : 0;
  const invs = await weft.compile([a], la.inv(a), { pool });
  await t.rejects(invs(bad), { message: /^inv: the matrix at batch index 37 is singular/ });
  t.ok(((await invs(av)) as NdArray).data.every((e, i) => Object.is(e, x[0]!.data[i])), 'the pool computes after the error');
});

t.test('one large matrix is factored blocked: panels, then the trailing columns and update cut into tasks on every worker; the same bits on the calling thread', async (t) => {
  // 300 = 4 blocks of 64 and one of 44: blocked (at least 256), with a partial last block.
  const n = 300;
  const a = pt.matrix('a');
  const b = pt.vector('b');
  const c = pt.matrix('c');
  const av = wellConditioned([n, n]);
  const bv = r.normal([n]);
  const cv = r.normal([n, 3]);
  const sv = spd([n, n]);
  const outs = [la.solve(a, b), la.solve(a, c), la.solve(a, b, { assumeA: 'pos', lower: true }), la.cholesky(a), la.cholesky(a, { lower: false })];
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const fn = await weft.compile([a, b, c], outs, { pool, profile: true });
  const onPool = (await fn(av, bv, cv)) as NdArray[];
  const inline = (await (await weft.compile([a, b, c], outs, { workers: 0 }))(av, bv, cv)) as NdArray[];
  const debug = (await (await weft.compile([a, b, c], outs, { mode: 'DebugMode' }))(av, bv, cv)) as NdArray[];
  onPool.slice(0, 2).forEach((x, k) => t.ok(x.data.every((e, i) => Object.is(e, inline[k]!.data[i]) && Object.is(e, debug[k]!.data[i])), `solve ${k}: equal bits on 2 workers, on the calling thread and in DebugMode`));
  const A = matrices(av)[0]!;
  t.ok(worst(mm(A, T([Array.from(onPool[0]!.data)])), T([Array.from(bv.data)])) < 1e-11, 'a x = b');
  t.ok(worst(mm(A, matrices(onPool[1]!)[0]!), matrices(cv)[0]!) < 1e-11, 'a X = C');
  const spdFn = await weft.compile([a, b], [la.cholesky(a), la.cholesky(a, { lower: false }), la.solve(a, b, { assumeA: 'pos', lower: true })], { pool, profile: true });
  const [L, U, xs] = (await spdFn(sv, bv)) as NdArray[];
  const S = matrices(sv)[0]!;
  t.ok(worst(mm(matrices(L!)[0]!, T(matrices(L!)[0]!)), S) < 1e-10 && matrices(L!)[0]!.every((row, i) => row.every((e, j) => j <= i || e === 0)), 'L L^T = a, L lower');
  t.ok(worst(matrices(U!)[0]!, T(matrices(L!)[0]!)) === 0, 'U = L^T exactly');
  t.ok(worst(mm(S, T([Array.from(xs!.data)])), T([Array.from(bv.data)])) < 1e-10, "solve with assumeA 'pos'");
  const inlineSpd = (await (await weft.compile([a, b], [la.cholesky(a), la.cholesky(a, { lower: false }), la.solve(a, b, { assumeA: 'pos', lower: true })], { workers: 0 }))(sv, bv)) as NdArray[];
  [L, U, xs].forEach((x, k) => t.ok(x!.data.every((e, i) => Object.is(e, inlineSpd[k]!.data[i])), `spd output ${k}: equal bits on the calling thread`));
  const choleskyTasks = (call: number) => spdFn.profile!.events.filter((e) => e.call === call && e.node.op.constructor.name === 'Cholesky');
  const tasks = choleskyTasks(0);
  t.ok(tasks.length > 20, `cholesky: ${tasks.length} tasks (panels, row solves, updates)`);
  // Which thread takes a task depends on when each wakes (on a loaded machine one worker may take
  // all of a call's tasks), so a few more calls may be made until one spreads over both.
  let threads = new Set(tasks.map((e) => e.thread)).size;
  for (let call = 1; call < 6 && threads < 2; call++) {
    await spdFn(sv, bv);
    threads = new Set(choleskyTasks(call).map((e) => e.thread)).size;
  }
  t.ok(threads >= 2, `cholesky's tasks ran on ${threads} threads`);
  const singular = weft.ndarray(Float64Array.from(av.data), [n, n]);
  // A zero column stays exactly zero through the elimination: a zero pivot in block 3.
  for (let i = 0; i < n; i++) singular.data[i * n + 200] = 0;
  const sfn = await weft.compile([a, b], la.solve(a, b), { pool });
  await t.rejects(sfn(singular, bv), { message: /^solve: the matrix is singular/ });
  const notPd = weft.ndarray(Float64Array.from(sv.data), [n, n]);
  notPd.data[150 * n + 150] = -1;
  const cfn = await weft.compile([a], la.cholesky(a), { pool });
  await t.rejects(cfn(notPd), { message: /^cholesky: the matrix is not positive definite \(the pivot of column 150 is not positive\)/ });
  t.ok(((await sfn(av, bv)) as NdArray).data.every((e, i) => Object.is(e, onPool[0]!.data[i])), 'the pool computes after the errors');
});

t.test('bad input: the exact errors, and the pool usable after them', async (t) => {
  await throwsExactly(t, () => la.inv(pt.tensor({ name: 'w', shape: [3, 4] })), RangeError, 'inv: the matrix w (TensorType(float64, (3, 4))) is not square');
  await throwsExactly(t, () => la.det(pt.vector('v')), TypeError, 'det: expected a matrix or a batch of matrices (at least 2 axes), got v (TensorType(float64, (?,)))');
  await throwsExactly(t, () => la.solve(pt.tensor({ name: 'a', shape: [3, 3] }), pt.tensor({ name: 'b', shape: [4] })), RangeError, 'solve: a a (TensorType(float64, (3, 3))) has 3 columns but b b (TensorType(float64, (4,))) has 4 rows');
  await throwsExactly(t, () => la.solve(pt.matrix('a'), pt.matrix('b'), { assumeA: 'her' as 'sym' }), TypeError, `solve: assumeA must be 'gen', 'sym' or 'pos', got "her"`);
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const a = pt.matrix('a');
  const b = pt.vector('b');
  const fn = await weft.compile([a, b], [la.solve(a, b), la.inv(a)], { pool });
  await t.rejects(fn([[1, 2], [2, 4]], [1, 1]), { message: /^solve: the matrix is singular/ });
  await t.rejects(fn([[1, 2, 3], [4, 5, 6]], [1, 1]), { message: /^solve: the matrix of shape \[2, 3\] is not square/ });
  const c = pt.tensor3('c');
  const invs = await weft.compile([c], la.inv(c), { pool });
  await t.rejects(invs([[[1, 0], [0, 1]], [[1, 1], [1, 1]]]), { message: /^inv: the matrix at batch index 1 is singular/ });
  const ch = await weft.compile([a], la.cholesky(a), { pool });
  await t.rejects(ch([[1, 2], [2, 1]]), { message: /^cholesky: the matrix is not positive definite \(the pivot of column 1 is not positive\)/ });
  const ok = (await fn([[2, 0], [0, 4]], [1, 1])) as NdArray[];
  t.same(Array.from(ok[0]!.data), [0.5, 0.25], 'the pool still computes');
});

t.test('rewrites (PyTensor\'s): inv_as_solve, and log(det) through slogdet (finite where det overflows)', async (t) => {
  const a = pt.matrix('a');
  const b = pt.matrix('b');
  const av = wellConditioned([4, 4]);
  const bv = r.normal([4, 3]);
  const bt = r.normal([3, 4]);
  const names = (fn: weft.CompiledFunction): string[] => fn.fgraph.toposort().map((n) => n.op.constructor.name);
  const left = await weft.compile([a, b], la.inv(a).dot(b));
  const right = await weft.compile([a, b], b.dot(la.inv(a)));
  t.notOk(names(left).includes('MatrixInverse'), 'inv(a) @ b: no inverse left');
  t.ok(names(left).includes('Solve'), 'a solve instead');
  t.notOk(names(right).includes('MatrixInverse'), 'b @ inv(a): no inverse left');
  const off = new weft.Mode({ excluding: ['inv_as_solve'] });
  for (const [fn, plain, args] of [[left, await weft.compile([a, b], la.inv(a).dot(b), { mode: off }), [av, bv]], [right, await weft.compile([a, b], b.dot(la.inv(a)), { mode: off }), [av, bt]]] as const) {
    const [x, y] = [(await fn(...args)) as NdArray, (await plain(...args)) as NdArray];
    t.ok(x.data.every((e, i) => Math.abs(e - y.data[i]!) < 1e-12), 'the same values as the inverse');
  }
  const logdet = await weft.compile([a], la.det(a).log());
  const ops = logdet.fgraph.toposort().map((n) => String(n.op));
  t.ok(!ops.includes('Det') && ops.includes('SLogDet'), `log(det(a)): slogdet instead of det (${ops.join(', ')})`);
  const big = weft.ndarray(Float64Array.from({ length: 200 * 200 }, (_, k) => (k % 201 === 0 ? 100 : 0)), [200, 200]);
  t.ok(Math.abs(((await logdet(big)) as NdArray).data[0]! - 200 * Math.log(100)) < 1e-9, 'log det of 100 I (200 x 200) = 921.03, where det overflows');
  t.ok(Number.isNaN(((await logdet([[0, 1], [1, 0]])) as NdArray).data[0]!), 'a negative determinant: NaN, as log(det)');
  t.equal(((await logdet([[1, 2], [2, 4]])) as NdArray).data[0], -Infinity, 'a singular matrix: -inf, as log(0)');
  // local_det_chol: det(a) from the Cholesky factor the graph computes anyway.
  const s3 = pt.tensor3('s3');
  const both = await weft.compile([s3], [la.det(s3), la.cholesky(s3)]);
  t.notOk(names(both).includes('Det'), `det(a) beside cholesky(a): no Det left (${names(both).join(', ')})`);
  const sv = spd([2, 4, 4]);
  const plain = await weft.compile([s3], la.det(s3));
  t.ok(names(plain).includes('Det'), 'det(a) alone stays a Det');
  const [d] = (await both(sv)) as NdArray[];
  const e = (await plain(sv)) as NdArray;
  t.ok(Array.from(d!.data).every((v, i) => Math.abs(v - e.data[i]!) < 1e-12 * Math.abs(e.data[i]!)), 'the same determinants');
});

t.teardown(() => weft.shutdown());
