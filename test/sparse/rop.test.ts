// Rop (Jacobian-vector products) of the sparse ops against finite differences (weft.checkRop),
// which works on tensors: a sparse operand is built from a data vector on a fixed seeded pattern
// with csrFromData / cscFromData (whose own Rop is the tangent's data on that pattern), and a
// sparse result is read through dense. Both formats, every op with a derivative.
import t from 'tap';
import { pt, weft } from '../helpers.js';
import { randomDense, randomSparse } from './random.js';

const { sparse } = weft;
type TV = weft.TensorVariable;
const nd = (rows: number[][]): weft.NdArray => weft.ndarray(Float64Array.from(rows.flat()), [rows.length, rows[0]!.length]);

/** A sparse matrix of `format` whose data is `data` (a tensor) on the fixed pattern of `r`. */
function onPattern(r: ReturnType<typeof randomSparse>, format: 'csr' | 'csc') {
  const p = r[format];
  return {
    data: weft.ndarray(Float64Array.from(p.data)),
    of: (data: TV) => (format === 'csr' ? sparse.csrFromData : sparse.cscFromData)(data, Int32Array.from(p.indices), Int32Array.from(p.indptr), Int32Array.from(p.shape)),
  };
}

for (const format of ['csr', 'csc'] as const) {
  const other = format === 'csr' ? 'csc' : 'csr';
  t.test(`${format}: Rop through csrFromData, dense, asSparse, toFormat, transpose, neg, blocks and diagonals`, async (t) => {
    const A = onPattern(randomSparse(401, 4, 5, 0.5), format);
    const Q = onPattern(randomSparse(402, 4, 4, 0.6), format);
    await weft.checkRop((data) => sparse.dense(A.of(data)), [A.data]);
    await weft.checkRop((data) => sparse.dense(sparse.neg(sparse.transpose(A.of(data)))), [A.data]);
    await weft.checkRop((data) => sparse.dense(sparse.toFormat(A.of(data), other)), [A.data]);
    await weft.checkRop((x) => sparse.dense(sparse.asSparse(x, format)), [nd(randomDense(403, 3, 4))]);
    await weft.checkRop((data) => sparse.dense(sparse.getBlock(A.of(data), 1, 3, 0, 4)), [A.data]);
    await weft.checkRop((data) => sparse.dense(sparse.padBlock(A.of(data), 1, 2, 6, 8)), [A.data]);
    await weft.checkRop((a, q) => sparse.dense(sparse.hstack([A.of(a), sparse.transpose(Q.of(q))])), [A.data, Q.data]);
    await weft.checkRop((q) => sparse.diag(Q.of(q)), [Q.data]);
    await weft.checkRop((v) => sparse.dense(sparse.squareDiagonal(v, format)), [weft.ndarray(Float64Array.of(0.5, -1, 2))]);
    t.pass('checkRop agreed');
  });

  t.test(`${format}: Rop of structuredDot, dot and samplingDot`, async (t) => {
    const S = onPattern(randomSparse(411, 4, 5, 0.5), format);
    const T = onPattern(randomSparse(412, 5, 3, 0.5), format);
    const P = onPattern(randomSparse(413, 4, 3, 0.5), format);
    const D = nd(randomDense(414, 5, 3));
    const E = nd(randomDense(415, 2, 4));
    await weft.checkRop((data, d) => sparse.structuredDot(S.of(data), d), [S.data, D]);
    await weft.checkRop((data, d) => sparse.dot(S.of(data), d) as TV, [S.data, D]);
    await weft.checkRop((e, data) => sparse.dot(e, S.of(data)) as TV, [E, S.data]);
    await weft.checkRop((a, b) => sparse.dense(sparse.dot(S.of(a), T.of(b))), [S.data, T.data]);
    await weft.checkRop((x, y, p) => sparse.dense(sparse.samplingDot(x, y, P.of(p))), [nd(randomDense(416, 4, 2)), nd(randomDense(417, 3, 2)), P.data]);
    t.pass('checkRop agreed');
  });

  t.test(`${format}: Rop of add, mul, sum and the structured functions`, async (t) => {
    const A = onPattern(randomSparse(421, 4, 5, 0.5), format);
    const B = onPattern(randomSparse(422, 4, 5, 0.5), format);
    const E = nd(randomDense(423, 4, 5));
    await weft.checkRop((a, b) => sparse.dense(sparse.add(A.of(a), B.of(b))), [A.data, B.data]);
    await weft.checkRop((a, e) => sparse.add(A.of(a), e) as TV, [A.data, E]);
    await weft.checkRop((a, b) => sparse.dense(sparse.mul(A.of(a), B.of(b))), [A.data, B.data]);
    await weft.checkRop((a, e) => sparse.dense(sparse.mul(A.of(a), e)), [A.data, E]);
    for (const axis of [undefined, 0, 1] as const) await weft.checkRop((a) => sparse.sum(A.of(a), { axis }), [A.data]);
    // Positive stored values, so that log and fractional powers are defined.
    const positive = weft.ndarray(Float64Array.from((A.data.data as Float64Array).map((x) => Math.abs(x) + 0.5)));
    for (const f of [sparse.structuredSigmoid, sparse.structuredExp, sparse.structuredLog, (s: weft.sparse.SparseVariable) => sparse.structuredPow(s, 1.5)]) {
      await weft.checkRop((a) => sparse.dense(f(A.of(a))), [positive]);
    }
    t.pass('checkRop agreed');
  });
}

t.test('Rop with respect to a sparse variable directly: the tangent of structuredDot(s, d) is structuredDot(es, d)', async (t) => {
  const s = sparse.csrMatrix('s');
  const es = sparse.csrMatrix('es');
  const d = pt.matrix('d');
  const jv = weft.Rop(sparse.structuredDot(s, d), s, es) as TV;
  const fn = await weft.compile([s, es, d], jv, { onUnusedInput: 'ignore' });
  const [S, ES] = [randomSparse(431, 3, 4, 0.5), randomSparse(432, 3, 4, 0.5)];
  const D = randomDense(433, 4, 2);
  const got = weft.tolist((await fn(sparse.csr(S.csr), sparse.csr(ES.csr), D)) as weft.NdArray) as number[][];
  const want = ES.dense.map((row) => D[0]!.map((_, j) => row.reduce((acc, x, k) => acc + x * D[k]![j]!, 0)));
  t.ok(got.flat().every((v, i) => Math.abs(v - want.flat()[i]!) < 1e-12), 'es d');
});
