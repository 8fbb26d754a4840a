// Sparse nodes in compiled functions beside dense ops: a graph that holds sparse values is planned
// (sparse values as their parts; ops whose pattern depends on values, like sparse * dense here,
// run on the calling thread between stages); results are the same with 0 and 2 workers and under
// DebugMode, for values, gradients and a training step with a shared dense weight.
import t from 'tap';
import { pt, weft } from '../helpers.js';
import { randomDense, randomSparse } from './random.js';

const { sparse } = weft;

t.test('{ workers: 0 } and { workers: 2 } give the same results', async (t) => {
  const s = sparse.csrMatrix('s');
  const w = pt.matrix('w');
  // Dense work that would be big enough for the pool (a 256 x 256 product) around the sparse nodes.
  const h = pt.tanh(sparse.structuredDot(s, pt.dot(w, w)));
  const back = sparse.dense(sparse.mul(s, pt.exp(h.mul(0.5))));
  const cost = pt.sum(pt.sqr(back)).add(sparse.sum(sparse.mul(s, s)));
  const outputs = [h, back, cost, weft.grad(cost, w), weft.grad(cost, s)];
  const S = sparse.csr(randomSparse(41, 64, 256, 0.05).csr);
  const W = weft.ndarray(Float64Array.from(randomDense(42, 256, 256).flat().map((x) => x / 16)), [256, 256]);
  const results = [];
  for (const workers of [0, 2]) {
    const fn = await weft.compile([s, w], outputs, { workers, profile: true });
    results.push((await fn(S, W)) as unknown[]);
    if (workers === 2) {
      t.equal(fn.profile!.fallback, undefined, 'planned, not run on the reference executor');
      t.ok(new Set(fn.profile!.events.map((e) => e.thread)).size >= 2, 'tasks ran on more than one thread');
    }
  }
  const type = new sparse.SparseTensorType('csr');
  for (const other of results.slice(1)) {
    for (let i = 0; i < 4; i++) t.same(weft.tolist(other[i] as weft.NdArray), weft.tolist(results[0]![i] as weft.NdArray), `output ${i}`);
    t.ok(type.valuesEqApprox(other[4] as weft.sparse.SparseValue, results[0]![4] as weft.sparse.SparseValue), 'the sparse gradient');
  }
  await weft.shutdown();
});

t.test('DebugMode: the sparse ops keep their promises (no undeclared aliases, perform as declared)', async (t) => {
  const s = sparse.cscMatrix('s');
  const w = pt.matrix('w');
  const h = pt.tanh(sparse.structuredDot(s, w));
  const cost = pt.sum(sparse.dense(sparse.mul(sparse.add(s, sparse.neg(sparse.transpose(sparse.transpose(s)))), pt.exp(h)))).add(sparse.sum(s, { axis: 0 }).sum());
  const outputs = [h, cost, weft.grad(cost, w), weft.grad(cost, s)];
  const S = sparse.csc(randomSparse(46, 8, 6, 0.4).csc);
  const W = randomDense(47, 6, 6);
  const plain = (await (await weft.compile([s, w], outputs, { workers: 0 }))(S, W)) as unknown[];
  const checked = (await (await weft.compile([s, w], outputs, { mode: 'DebugMode' }))(S, W)) as unknown[];
  for (let i = 0; i < 3; i++) t.same(weft.tolist(checked[i] as weft.NdArray), weft.tolist(plain[i] as weft.NdArray), `output ${i}`);
  t.ok(new sparse.SparseTensorType('csc').valuesEq(checked[3] as weft.sparse.SparseValue, plain[3] as weft.sparse.SparseValue), 'the sparse gradient');
});

t.test('a training step: a shared dense weight updated through a sparse product, on 2 workers', async (t) => {
  const X = sparse.csr(randomSparse(43, 32, 16, 0.2).csr);
  const Y = randomDense(44, 32, 4);
  const run = async (workers: number) => {
    const w = weft.shared(randomDense(45, 16, 4), { name: 'w' });
    const x = sparse.csrMatrix('x');
    const y = pt.matrix('y');
    const loss = pt.mean(pt.sqr(sparse.structuredDot(x, w).sub(y)));
    const step = await weft.compile([x, y], loss, { updates: [[w, w.sub(weft.grad(loss, w).mul(0.5))]], workers });
    const losses: number[] = [];
    for (let i = 0; i < 5; i++) losses.push(((await step(X, Y)) as weft.NdArray).data[0]!);
    return losses;
  };
  const [a, b] = [await run(0), await run(2)];
  t.same(a, b, 'the same losses');
  t.ok(a.every((l, i) => i === 0 || l < a[i - 1]!), `the loss decreases: ${a.map((l) => l.toFixed(4)).join(' ')}`);
  await weft.shutdown();
});
