// PyTensor's local_softmax_stabilize: exp(x) / sum(exp(x)) over one axis, with the sum's axis put
// back (keepdims, or the broadcast of a sum over leading axes), becomes the stable Softmax. Each
// case: the graph with and without the rewrite, values at inputs where exp overflows (the naive
// graph gives NaN), and cases where it must not fire; also inside an OpFromGraph's inner graph.
import t, { type Test } from 'tap';
import { near, pt, rng, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
const REWRITE = 'local_softmax_stabilize';
const noInplace = ['inplace'];

/** FAST_RUN with and without the rewrite (inplace excluded, for stable debugprints); how often it fired. */
async function both(inputs: TV[], out: TV) {
  const on = await weft.compile(inputs, out, { profile: true, mode: new weft.Mode({ excluding: noInplace }) });
  const off = await weft.compile(inputs, out, { mode: new weft.Mode({ excluding: [REWRITE, ...noInplace] }) });
  return { on, off, applied: on.profile!.rewrites.byRewriter.get(REWRITE)?.applied ?? 0 };
}

/** Softmax of rows (or of a vector) in float64, stably: the numbers the tests expect. */
function softmaxOf(v: readonly number[]): number[] {
  const m = Math.max(...v);
  const e = v.map((a) => Math.exp(a - m));
  const s = e.reduce((p, q) => p + q, 0);
  return e.map((a) => a / s);
}

const hasOp = (fn: weft.CompiledFunction, name: string): boolean =>
  fn.fgraph.toposort().some((n) => String(n.op).startsWith(name));

t.test('exp(x) / sum(exp(x)) of a vector is Softmax: [1000, 1001] gives [0.2689, 0.7311], not NaN', async (t) => {
  const x = pt.vector('x');
  const e = pt.exp(x);
  const c = await both([x], e.trueDiv(e.sum()));
  t.equal(c.applied, 1, 'fired once');
  t.equal(weft.debugprint(c.on), 'Softmax{axis=0} [id A]   0\n |x [id B]', 'the graph with it');
  t.ok(hasOp(c.off, 'Composite') || hasOp(c.off, 'Elemwise{trueDiv}'), 'without it the division stays');
  near(t, await c.on([1000, 1001]), [0.2689414213699951, 0.7310585786300049], 1e-15, 'softmax of [1000, 1001]');
  const naive = weft.tolist(await c.off([1000, 1001])) as number[];
  t.ok(naive.every(Number.isNaN), `without the rewrite exp overflows: ${naive}`);
  // ordinary values agree with the unrewritten graph
  const v = rng(5).uniform([6], { low: -3, high: 3 });
  near(t, await c.on(v), weft.tolist(await c.off(v)) as number[], 1e-15, 'seeded values');
});

t.test('test_softmax_graph (pytensor tests/tensor/rewriting/test_special.py): exp(c) / exp(c).sum(axis=-1, keepdims=True) and its gradient', async (t) => {
  const x = pt.matrix('x');
  const softmaxGraph = (c: TV): TV => pt.exp(c).trueDiv(pt.exp(c).sum({ axis: -1, keepdims: true }));
  const c = await both([x], softmaxGraph(x));
  t.equal(c.applied, 1, 'fired once');
  t.ok(hasOp(c.on, 'Softmax{axis=1}'), 'a Softmax along axis 1');
  const rows = [[1000, 1001, 999], [1, 2, 3]];
  near(t, await c.on(rows), rows.map(softmaxOf), 1e-15, 'rows that overflow exp');
  // PyTensor's test: the gradient through known output gradients, checked by finite differences.
  const r = rng(7);
  const g = r.uniform([3, 4]);
  await weft.verifyGrad((a) => softmaxGraph(a).mul(pt.constant(g)).sum(), [r.uniform([3, 4])]);
  t.pass('verifyGrad');
});

t.test('a sum over axis 0 without keepdims (broadcast from the front) is Softmax along axis 0', async (t) => {
  const x = pt.matrix('x');
  const e = pt.exp(x);
  const c = await both([x], e.trueDiv(e.sum({ axis: 0 })));
  t.equal(c.applied, 1, 'fired once');
  t.ok(hasOp(c.on, 'Softmax{axis=0}'), 'a Softmax along axis 0');
  const cols = [[1000, 1], [1001, 2]];
  near(t, await c.on(cols), [[0.2689414213699951, 0.2689414213699951], [0.7310585786300049, 0.7310585786300049]], 1e-15, 'columns');
});

t.test('log(exp(x) / sum(exp(x), keepdims)) becomes logSoftmax, as in test_full_history (pytensor tests/graph/test_features.py)', async (t) => {
  const x = pt.vector('x');
  const out = pt.log(pt.exp(x).trueDiv(pt.sum(pt.exp(x), { keepdims: true })));
  const fn = await weft.compile([x], out, { mode: new weft.Mode({ excluding: noInplace }) });
  t.equal(weft.debugprint(fn), 'LogSoftmax{axis=0} [id A]   0\n |x [id B]', 'the stable LogSoftmax');
  near(t, await fn([1000, 1001]), [-1.3132616875182228, -0.3132616875182228], 1e-15, 'log softmax of [1000, 1001]');
});

async function notFired(t: Test, what: string, inputs: TV[], out: TV, values: unknown[]): Promise<void> {
  const c = await both(inputs, out);
  t.equal(c.applied, 0, `not fired: ${what}`);
  t.equal(weft.debugprint(c.on), weft.debugprint(c.off), `unchanged: ${what}`);
  near(t, await c.on(...(values as weft.InputValue[])), weft.tolist(await c.off(...(values as weft.InputValue[]))) as number[][], 1e-15, `values: ${what}`);
}

t.test('not fired where the quotient is not a softmax', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const e = pt.exp(x);
  const sq = [[0.5, 1], [2, -1]];
  // a sum over axis 1 without keepdims broadcasts along axis 0: row sums divide columns
  await notFired(t, 'sum(exp(x), axis 1) broadcast as a row', [x], e.trueDiv(e.sum({ axis: 1 })), [sq]);
  await notFired(t, 'exp(x) / sum(exp(y))', [x, y], e.trueDiv(pt.exp(y).sum({ axis: 1, keepdims: true })), [sq, sq]);
  // over both axes weft's Softmax (one axis) does not apply
  await notFired(t, 'a sum over two axes', [x], e.trueDiv(e.sum({ keepdims: true })), [sq]);
  await notFired(t, 'x / sum(x)', [x], x.trueDiv(x.sum({ axis: 1, keepdims: true })), [sq]);
});

t.test('test_inner_graph_keeps_symbolic_op_recognition (pytensor tests/compile/test_builders.py): inside an OpFromGraph', async (t) => {
  const x = pt.vector('x');
  const inner = pt.vector('inner');
  const e = pt.exp(inner);
  const op = new weft.OpFromGraph([inner], [e.trueDiv(e.sum())]);
  const fn = await weft.compile([x], op.call(x) as TV);
  near(t, await fn([1000, 1001]), softmaxOf([1000, 1001]), 1e-15, 'softmax of [1000, 1001] through the OpFromGraph');
  const onPool = await weft.compile([x], op.call(x) as TV, { workers: 1 });
  near(t, await onPool([1000, 1001]), softmaxOf([1000, 1001]), 1e-15, 'and on a worker');
});
