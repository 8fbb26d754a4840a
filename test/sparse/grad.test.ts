// Gradients of the sparse ops against finite differences (weft.verifyGrad), which works on
// tensors: with respect to the dense operands directly, and with respect to a sparse operand's
// data vector through csrFromData / cscFromData over a fixed seeded pattern (as PyTensor tests
// them with CSM). Also weft.grad with respect to a sparse variable, and the structured patterns.
import t from 'tap';
import { pt, weft } from '../helpers.js';
import { denseOf, randomDense, randomSparse } from './random.js';

const { sparse } = weft;
type TV = weft.TensorVariable;

/** A sparse matrix of `format` whose data is `data` (a tensor) on the fixed pattern of `r`. */
function onPattern(r: ReturnType<typeof randomSparse>, format: 'csr' | 'csc') {
  const p = r[format];
  return {
    data: Float64Array.from(p.data),
    of: (data: TV) => (format === 'csr' ? sparse.csrFromData : sparse.cscFromData)(data, Int32Array.from(p.indices), Int32Array.from(p.indptr), Int32Array.from(p.shape)),
  };
}

for (const format of ['csr', 'csc'] as const) {
  t.test(`${format}: gradients through dense, asSparse, toFormat, transpose, neg`, async (t) => {
    const A = onPattern(randomSparse(21, 4, 5, 0.5), format);
    await weft.verifyGrad((data) => sparse.dense(A.of(data)), [A.data]);
    await weft.verifyGrad((data) => sparse.dense(A.of(data), { sparseGrad: false }), [A.data]);
    await weft.verifyGrad((data) => sparse.dense(sparse.neg(sparse.transpose(A.of(data)))), [A.data]);
    await weft.verifyGrad((data) => sparse.dense(sparse.toFormat(A.of(data), format === 'csr' ? 'csc' : 'csr')), [A.data]);
    // A dense point without zeros: asSparse stores every entry, so its gradient is the whole gz.
    await weft.verifyGrad((x) => sparse.dense(sparse.asSparse(x, format)), [randomDense(22, 3, 4)]);
    await weft.verifyGrad((x) => sparse.dense(sparse.asSparse(x, format), { sparseGrad: false }), [randomDense(22, 3, 4)]);
    t.pass('verifyGrad agreed');
  });

  t.test(`${format}: gradients of structuredDot and dot (structured and true)`, async (t) => {
    const S = onPattern(randomSparse(23, 4, 5, 0.5), format);
    const T = onPattern(randomSparse(24, 5, 3, 0.5), format);
    const sValue = sparse[format](randomSparse(23, 4, 5, 0.5)[format]);
    const D = randomDense(25, 5, 3);
    const E = randomDense(26, 2, 4);
    await weft.verifyGrad((d) => sparse.structuredDot(sValue, d), [D]);
    await weft.verifyGrad((data, d) => sparse.structuredDot(S.of(data), d), [S.data, D]);
    await weft.verifyGrad((data, d) => sparse.dot(S.of(data), d) as TV, [S.data, D]);
    await weft.verifyGrad((e, data) => sparse.dot(e, S.of(data)) as TV, [E, S.data]);
    await weft.verifyGrad((a, b) => sparse.dense(sparse.dot(S.of(a), T.of(b))), [S.data, T.data]);
    t.pass('verifyGrad agreed');
  });

  t.test(`${format}: gradients of add, sub, mul and sum`, async (t) => {
    const A = onPattern(randomSparse(27, 4, 5, 0.5), format);
    const B = onPattern(randomSparse(28, 4, 5, 0.5), format);
    const E = randomDense(29, 4, 5);
    await weft.verifyGrad((a, b) => sparse.dense(sparse.add(A.of(a), B.of(b))), [A.data, B.data]);
    await weft.verifyGrad((a, e) => sparse.add(A.of(a), e) as TV, [A.data, E]);
    await weft.verifyGrad((a, e) => sparse.sub(e, A.of(a)) as TV, [A.data, E]);
    await weft.verifyGrad((a, b) => sparse.dense(sparse.sub(A.of(a), B.of(b))), [A.data, B.data]);
    await weft.verifyGrad((a, b) => sparse.dense(sparse.mul(A.of(a), B.of(b))), [A.data, B.data]);
    await weft.verifyGrad((a, e) => sparse.dense(sparse.mul(A.of(a), e)), [A.data, E]);
    for (const axis of [undefined, 0, 1] as const) {
      for (const sparseGrad of [false, true]) {
        await weft.verifyGrad((a) => sparse.sum(A.of(a), { axis, sparseGrad }), [A.data]);
      }
    }
    t.pass('verifyGrad agreed');
  });
}

t.test('gradients with respect to a sparse variable: structured where PyTensor is, true elsewhere', async (t) => {
  const r = randomSparse(31, 3, 4, 0.5);
  const s = sparse.csrMatrix('s');
  const w = pt.matrix('w');
  const W = randomDense(32, 3, 4);
  const value = sparse.csr(r.csr);
  const stored = (i: number, j: number) => r.dense[i]![j] !== 0;
  const grads = [
    // dense(s) and structuredDot: the output gradient at s's stored positions only.
    weft.grad(pt.sum(pt.mul(sparse.dense(s), w)), s),
    weft.grad(pt.sum(sparse.structuredDot(s, pt.transpose(w))), s),
    // dense(s, { sparseGrad: false }) and sum: the true gradient, at every position.
    weft.grad(pt.sum(pt.mul(sparse.dense(s, { sparseGrad: false }), w)), s),
    weft.grad(sparse.sum(s), s),
  ];
  for (const g of grads) t.ok(sparse.isSparseVariable(g), 'a sparse gradient');
  const fn = await weft.compile([s, w], grads);
  const [g0, g1, g2, g3] = (await fn(value, W)) as weft.sparse.SparseValue[];
  t.equal(g0!.format, 'csr');
  t.same(denseOf(g0!), W.map((row, i) => row.map((x, j) => (stored(i, j) ? x : 0))), 'dense: W at the stored positions');
  // sum(structuredDot(s, W^T)) = sum over i, j, k of s[i, j] W[k, j]: d/ds[i, j] = the sum of W's column j, at stored (i, j) only.
  const colSums = W[0]!.map((_, j) => W.reduce((a, row) => a + row[j]!, 0));
  const want1 = r.dense.map((row, i) => row.map((_, j) => (stored(i, j) ? colSums[j]! : 0)));
  const got1 = denseOf(g1!);
  t.ok(got1.every((row, i) => row.every((x, j) => Math.abs(x - want1[i]![j]!) < 1e-12)), 'structuredDot: column sums of W at the stored positions');
  t.same(denseOf(g2!), W, 'sparseGrad false: all of W');
  t.same(denseOf(g3!), r.dense.map((row) => row.map(() => 1)), 'sum: ones everywhere');
});

t.test('a structured gradient is not the true one off the pattern, and verifyGrad says so', async (t) => {
  // dense(asSparse(x)) is x itself, but asSparse stores no zeros of x and dense's gradient
  // reaches only stored positions: at x's zeros the structured gradient is 0, the true one is not.
  const x = [[1, 0], [0, 2]];
  await t.rejects(weft.verifyGrad((v) => sparse.dense(sparse.asSparse(v)), [x]), weft.GradientMismatchError);
  await weft.verifyGrad((v) => sparse.dense(sparse.asSparse(v), { sparseGrad: false }), [x]);
});

t.test('samplingDot: true gradients for x and y, structured for p', async (t) => {
  const P = onPattern(randomSparse(65, 4, 5, 0.5), 'csr');
  await weft.verifyGrad((x, y, data) => sparse.dense(sparse.samplingDot(x, y, P.of(data))), [randomDense(66, 4, 3), randomDense(67, 5, 3), P.data]);
  t.pass('verifyGrad agreed');
});

t.test('float32: gradients of structuredDot and dense stay float32 and agree', async (t) => {
  const r = randomSparse(68, 4, 5, 0.5).csr;
  const pattern = [Int32Array.from(r.indices), Int32Array.from(r.indptr), Int32Array.from(r.shape)] as const;
  const D = weft.ndarray(Float32Array.from(randomDense(69, 5, 3).flat()), [5, 3]);
  await weft.verifyGrad((data, d) => sparse.structuredDot(sparse.csrFromData(data, ...pattern), d), [Float32Array.from(r.data), D]);
  const s = sparse.csrMatrix('s', 'float32');
  const g = weft.grad(pt.sum(sparse.structuredDot(s, pt.matrix('d', 'float32'))), s);
  t.equal(String(g.type), 'SparseTensorType(csr, float32)', 'the gradient has the variable\'s type');
});
