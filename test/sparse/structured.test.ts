// The structured element-wise functions: f of each stored value only (absent entries stay absent,
// so exp does not fill the matrix with ones), against the same function of the dense data; their
// structured gradients against finite differences through csrFromData; their names in documents.
import t from 'tap';
import { weft } from '../helpers.js';
import { denseOf, randomSparse } from './random.js';

const { sparse } = weft;
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
const cases = [
  ['structuredSigmoid', (s: unknown) => sparse.structuredSigmoid(s), sigmoid],
  ['structuredExp', (s: unknown) => sparse.structuredExp(s), Math.exp],
  ['structuredLog', (s: unknown) => sparse.structuredLog(s), Math.log],
  ['structuredPow 3', (s: unknown) => sparse.structuredPow(s, 3), (x: number) => x ** 3],
  ['structuredPow 0.5', (s: unknown) => sparse.structuredPow(s, 0.5), Math.sqrt],
  ['structuredMinimum 0.7', (s: unknown) => sparse.structuredMinimum(s, 0.7), (x: number) => Math.min(x, 0.7)],
  ['structuredMaximum 0.7', (s: unknown) => sparse.structuredMaximum(s, 0.7), (x: number) => Math.max(x, 0.7)],
  ['structuredAddS -2', (s: unknown) => sparse.structuredAddS(s, -2), (x: number) => x - 2],
] as const;

// Positive data (log and the square root), away from the kinks of minimum and maximum at 0.7.
const r = randomSparse(51, 5, 6, 0.4);
const positive = { ...r.csr, data: r.csr.data.map((x) => Math.abs(x) + (Math.abs(Math.abs(x) - 0.7) < 0.05 ? 0.1 : 0)) };

t.test('values: f at the stored entries, nothing elsewhere', async (t) => {
  const s = sparse.csrMatrix('s');
  const fn = await weft.compile([s], cases.map(([, f]) => f(s)));
  const value = sparse.csr(positive);
  const outs = (await fn(value)) as weft.sparse.SparseValue[];
  cases.forEach(([name, , f], i) => {
    const o = outs[i]!;
    t.same([Array.from(o.indices), Array.from(o.indptr)], [Array.from(value.indices), Array.from(value.indptr)], `${name}: s's pattern`);
    const want = Array.from(value.data, f);
    t.ok(Array.from(o.data).every((x, k) => Math.abs(x - want[k]!) <= 1e-14 * Math.max(1, Math.abs(want[k]!))), `${name}: values`);
  });
  t.equal(denseOf(outs[1]!).flat().filter((x) => x === 0).length, 30 - value.data.length, 'exp leaves the absent entries absent');
});

t.test('structured gradients against finite differences', async (t) => {
  const pattern = [Int32Array.from(positive.indices), Int32Array.from(positive.indptr), Int32Array.from(positive.shape)] as const;
  for (const [name, f] of cases) {
    await weft.verifyGrad((data) => sparse.dense(f(sparse.csrFromData(data, ...pattern))), [Float64Array.from(positive.data)]);
    t.pass(`${name}: verifyGrad agreed`);
  }
});

t.test('bad arguments and documents', async (t) => {
  t.throws(() => new sparse.StructuredMap('tan' as 'exp'), { message: 'StructuredMap: unknown function "tan"; expected one of sigmoid, exp, log, pow, minimum, maximum, addS' });
  t.throws(() => sparse.structuredExp(weft.pt.matrix('d')), { message: 'structuredExp: input 0: expected a sparse matrix (a csr or csc variable or value), got d (TensorType(float64, (?, ?)))' });
  const s = sparse.cscMatrix('s', 'float32');
  const y = sparse.structuredPow(s, 2);
  const back = weft.deserialize(weft.serialize(y)).outputs[0]!;
  t.ok(back.owner!.op.equals(y.owner!.op), 'the op reads back equal');
  t.equal(String(y.owner!.op), 'structuredPow{2}');
});
