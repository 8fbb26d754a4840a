// The sparse rewrites: transpose(transpose(s)) is s, and dot(dense(s), d) / dot(d, dense(s))
// become sparse products, in compiled graphs (names of the ops that run), with the values of the
// graph as written (FAST_COMPILE, which does not rewrite it) and their gradients.
import t from 'tap';
import { pt, weft } from '../helpers.js';
import { randomDense, randomSparse } from './random.js';

const { sparse } = weft;
const opsOf = (fn: { fgraph: weft.FunctionGraph }) => fn.fgraph.toposort().map((n) => n.op.constructor.name);

t.test('transpose(transpose(s)) is s', async (t) => {
  const s = sparse.cscMatrix('s');
  const fn = await weft.compile([s], sparse.dense(sparse.transpose(sparse.transpose(s))));
  t.notOk(opsOf(fn).includes('Transpose'), `no transpose runs: ${opsOf(fn).join(' ')}`);
  const A = randomSparse(91, 3, 4);
  t.same(weft.tolist((await fn(sparse.csc(A.csc))) as weft.NdArray), A.dense);
});

t.test('dot(dense(s), d) and dot(d, dense(s)) run as sparse products, with the same values', async (t) => {
  const s = sparse.csrMatrix('s');
  const d = pt.matrix('d');
  const e = pt.matrix('e');
  const outs = [pt.dot(sparse.dense(s), d), pt.dot(e, sparse.dense(s))];
  const cost = pt.sum(pt.sqr(outs[0]!)).add(pt.sum(outs[1]!));
  const all = [...outs, weft.grad(cost, d), weft.grad(cost, e)];
  // Without the lowering to tensor ops over s's parts, the sparse ops themselves are seen.
  const fast = await weft.compile([s, d, e], all, { mode: new weft.Mode({ excluding: ['sparse_lower'] }) });
  t.ok(opsOf(fast).includes('StructuredDot') && opsOf(fast).includes('SparseDot'), `sparse products: ${opsOf(fast).join(' ')}`);
  t.notOk(opsOf(fast).includes('DenseFromSparse'), 'no dense copy of s is made');
  const lowered = await weft.compile([s, d, e], all);
  t.notOk(opsOf(lowered).includes('CompressedToDense'), `lowered, still no dense copy of s: ${opsOf(lowered).join(' ')}`);
  const plain = await weft.compile([s, d, e], all, { mode: 'FAST_COMPILE' });
  t.ok(opsOf(plain).includes('DenseFromSparse'), 'FAST_COMPILE runs the graph as written');
  const values = [sparse.csr(randomSparse(92, 4, 5).csr), randomDense(93, 5, 3), randomDense(94, 2, 4)] as const;
  const b = (await plain(...values)) as weft.NdArray[];
  for (const [name, fn] of [['sparse ops', fast], ['lowered', lowered]] as const) {
    const a = (await fn(...values)) as weft.NdArray[];
    a.forEach((x, i) => {
      const [p, q] = [weft.tolist(x) as number[][], weft.tolist(b[i]!) as number[][]];
      t.ok(p.flat().every((v, k) => Math.abs(v - q.flat()[k]!) <= 1e-12 * Math.max(1, Math.abs(v))), `${name}: output ${i} agrees`);
    });
  }
});
