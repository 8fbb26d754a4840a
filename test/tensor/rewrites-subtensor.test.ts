// Rewrites around indexing (issue 14), after PyTensor's test_subtensor_lift.py (test_local_subtensor_lift)
// and test_nnet.py's log-softmax stabilizations: element-wise work moved after an index (basic
// or integer-array) so that only the selected elements are computed, and left alone where an
// input broadcasts or f(x) has another reader; log(softmax(x)[idx]) as logSoftmax(x)[idx], its
// gradient without the division by probabilities; a gather by an arange as a slice.
import t from 'tap';
import { pt, rng, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
const r = rng(4142);

/** The ops of the compiled graph, in order. */
async function ops(inputs: TV[], y: TV | TV[]): Promise<string[]> {
  const fn = await weft.compile(inputs, Array.isArray(y) ? y : [y], { onUnusedInput: 'ignore', mode: new weft.Mode({ excluding: ['fusion'] }) });
  return fn.fgraph.toposort().map((n) => String(n.op));
}

t.test('local_subtensor_lift: f(x, y)[idx] -> f(x[idx], y[idx]), basic and advanced, values kept', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const cases: Array<[string, TV]> = [
    ['exp(x)[0]', pt.exp(x).get(0)],
    ['(x * y)[1:, ::2]', x.mul(y).get(weft.slice(1, null), weft.slice(null, null, 2))],
    ['(x + 2)[[0, 2]]', x.add(2).get([0, 2])],
    ['tanh(x)[:, [1, 1]]', pt.tanh(x).get(weft.slice(null), [1, 1])],
  ];
  const xv = r.normal([3, 4]);
  const yv = r.normal([3, 4]);
  for (const [what, z] of cases) {
    const order = await ops([x, y], z);
    const first = order.findIndex((o) => /Subtensor/.test(o));
    const elemwise = order.findIndex((o) => o.startsWith('Elemwise'));
    t.ok(first >= 0 && elemwise > first, `${what}: indexed first (${order.join(', ')})`);
    const fn = await weft.compile([x, y], z, { onUnusedInput: 'ignore' });
    const lifted = (await fn(xv, yv)) as weft.NdArray;
    const plain = (await (await weft.compile([x, y], z, { onUnusedInput: 'ignore', mode: new weft.Mode({ excluding: ['local_subtensor_lift'] }) }))(xv, yv)) as weft.NdArray;
    t.same(weft.tolist(lifted), weft.tolist(plain), `${what}: the same values`);
  }
});

t.test('local_subtensor_lift leaves alone: a broadcast row, f(x) read elsewhere', async (t) => {
  const x = pt.matrix('x');
  const row = pt.tensor({ name: 'row', shape: [1, null] });
  const bias = await ops([x, row], x.add(row).get(0));
  t.ok(bias.findIndex((o) => o.startsWith('Elemwise')) < bias.findIndex((o) => /Subtensor/.test(o)), `a broadcast row: not lifted (${bias.join(', ')})`);
  const e = pt.exp(x);
  const shared = await ops([x], [e.get(0), e.sum()]);
  t.ok(shared.findIndex((o) => o.startsWith('Elemwise')) < shared.findIndex((o) => /Subtensor/.test(o)), `exp(x) read twice: computed once, whole (${shared.join(', ')})`);
});

t.test('log(softmax(x)[arange(n), labels]) is logSoftmax(x)[arange(n), labels]: finite for huge logits', async (t) => {
  const x = pt.matrix('x');
  const y = pt.vector('y', 'int32');
  const loss = pt.log(pt.softmax(x).get(pt.arange(x.shape.get(0)), y)).neg();
  const fn = await weft.compile([x, y], loss);
  t.ok(fn.fgraph.toposort().some((n) => String(n.op).startsWith('LogSoftmax')), 'logSoftmax');
  t.same(Array.from((await fn([[1000, -1000], [0, 900]], [1, 0])).data), [2000, 900]);
  // Its gradient, taken through softmax (SoftmaxGrad of a scatter of gz / p), loses the division
  // (softmax_grad_of_log_indexed): softmax minus the one-hot rows, finite for saturated logits.
  const g = weft.grad(loss.sum(), x) as TV;
  const gfn = await weft.compile([x, y], g);
  t.same(Array.from((await gfn([[1000, -1000], [0, 900]], [1, 0])).data), [1, -1, -1, 1], 'saturated: finite');
  const gv = Array.from((await gfn([[2, 0], [0, 1]], [1, 0])).data);
  const [p, q] = [1 / (1 + Math.exp(-2)), 1 / (1 + Math.exp(-1))];
  const want = [p, -p, -q, q];
  t.ok(gv.every((v, k) => Math.abs(v - want[k]!) < 1e-15), `softmax minus the one-hot rows (${gv.join(', ')})`);
  const repeated = pt.log(pt.softmax(x).get([0, 0], [1, 1])).sum();
  const gr = weft.grad(repeated, x) as TV;
  const xv = [[0.5, -0.25], [1, 2]];
  const stable = Array.from((await (await weft.compile([x], gr))(xv)).data);
  const plain = Array.from((await (await weft.compile([x], gr, { mode: new weft.Mode({ excluding: ['softmax_grad_of_log_indexed'] }) }))(xv)).data);
  t.ok(stable.every((v, k) => Math.abs(v - plain[k]!) < 1e-15), `a label picked twice: the same gradient as without the rewrite (${stable.join(', ')})`);
});


t.test('local_adv_sub_of_arange: x[arange(start, n, step)] is the slice (a view), where it cannot go out of bounds', async (t) => {
  const x = pt.matrix('x');
  const xv = r.normal([5, 4]);
  const whole = x.get(pt.arange(x.shape.get(0)));
  const part = pt.tensor({ name: 'p', shape: [5, 4] });
  const fromOne = part.get(weft.slice(null), pt.arange(1, 4, 2));
  for (const [what, y, input] of [['x[arange(n)]', whole, x], ['p[:, arange(1, 4, 2)]', fromOne, part]] as const) {
    const fn = await weft.compile([input], y);
    const names = fn.fgraph.toposort().map((n) => String(n.op));
    t.notOk(names.some((o) => o.startsWith('AdvancedSubtensor')), `${what}: no gather (${names.join(', ')})`);
    const plain = await weft.compile([input], y, { mode: new weft.Mode({ excluding: ['local_adv_sub_of_arange'] }) });
    t.same(weft.tolist((await fn(xv)) as weft.NdArray), weft.tolist((await plain(xv)) as weft.NdArray), `${what}: values`);
  }
  // A stop past the static length keeps the gather (and its out-of-bounds error).
  const beyond = await weft.compile([part], part.get(pt.arange(0, 6)));
  t.ok(beyond.fgraph.toposort().some((n) => String(n.op).startsWith('AdvancedSubtensor')), 'arange(0, 6) of 5 rows: still a gather');
  await t.rejects(beyond(xv), { message: /index 5 is out of bounds for axis 0 with length 5/ });
});

t.teardown(() => weft.shutdown());
