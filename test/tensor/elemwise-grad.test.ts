// Gradients of element-wise ops beyond the per-op verifyGrad and checkRop of the tester files:
// zero gradients through the discrete and piecewise-constant ops, float32 gradients staying
// float32, integer inputs, ties and the conventions at kinks.
import t from 'tap';
import { near, pt, rng, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
const r = rng(11);

async function gradValues(cost: TV, wrt: TV[], givens: Array<[TV, unknown]>): Promise<unknown[]> {
  const grads = weft.grad(cost, wrt, { disconnectedInputs: 'ignore' });
  const fn = await weft.compile(givens.map(([v]) => v), grads, { onUnusedInput: 'ignore' });
  return (await fn(...(givens.map(([, value]) => value) as weft.InputValue[]))).map((g) => weft.tolist(g));
}

t.test('the gradient through piecewise-constant and discrete ops is zero', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const xv = [0.3, -1.7, 2.5];
  const yv = [1.5, -2, 0.25];
  const costs: Array<[string, TV]> = [
    ['floor', pt.sum(pt.floor(x))],
    ['ceil', pt.sum(pt.ceil(x))],
    ['round', pt.sum(pt.round(x))],
    ['sign', pt.sum(pt.sign(x))],
    ['intDiv', pt.sum(pt.intDiv(x, y))],
    ['cast to int32 and back', pt.sum(pt.cast(pt.cast(x, 'int32'), 'float64'))],
    ['eq', pt.sum(pt.cast(pt.eq(x, y), 'float64'))],
    ['neq', pt.sum(pt.cast(pt.neq(x, y), 'float64'))],
    ['lt', pt.sum(pt.cast(pt.lt(x, y), 'float64'))],
    ['le', pt.sum(pt.cast(pt.le(x, y), 'float64'))],
    ['gt', pt.sum(pt.cast(pt.gt(x, y), 'float64'))],
    ['ge', pt.sum(pt.cast(pt.ge(x, y), 'float64'))],
    ['where condition', pt.sum(pt.where(pt.gt(x, y), 1.5, 2.5))],
    ['and of comparisons', pt.sum(pt.cast(pt.and(pt.gt(x, 0), pt.lt(y, 1)), 'float64'))],
  ];
  for (const [name, cost] of costs) {
    const [gx, gy] = await gradValues(cost, [x, y], [[x, xv], [y, yv]]);
    t.same([gx, gy], [[0, 0, 0], [0, 0, 0]], `${name}: zero gradient`);
  }
  // finite differences agree (the points are away from the jumps)
  await weft.verifyGrad((a) => pt.floor(a), [[0.3, -1.7, 2.4]]);
  await weft.verifyGrad((a, b) => pt.mul(pt.gt(a, b), a), [[0.3, -1.7, 2.5], [1.5, -2, 0.25]]);
  t.pass('verifyGrad');
});

t.test('float32 gradients stay float32', async (t) => {
  const x = pt.vector('x', 'float32');
  const xv = new Float32Array([0.25, 0.5, 0.75]);
  const fns: Array<[string, (v: TV) => TV, (v: number) => number]> = [
    ['exp', pt.exp, Math.exp],
    ['log', pt.log, (v) => 1 / v],
    ['sqrt', pt.sqrt, (v) => 0.5 / Math.sqrt(v)],
    ['tanh', pt.tanh, (v) => 1 - Math.tanh(v) ** 2],
    ['sigmoid', pt.sigmoid, (v) => Math.exp(-v) / (1 + Math.exp(-v)) ** 2],
    ['erf', pt.erf, (v) => (2 / Math.sqrt(Math.PI)) * Math.exp(-v * v)],
    ['mul by 3', (v) => v.mul(3), () => 3],
    ['pow 2.5', (v) => v.pow(2.5), (v) => 2.5 * v ** 1.5],
    ['arctan2 with 1', (v) => pt.arctan2(v, 1), (v) => 1 / (1 + v * v)],
  ];
  for (const [name, f, df] of fns) {
    const g = weft.grad(pt.sum(f(x)), x);
    t.equal(g.dtype, 'float32', `${name}: the gradient is float32`);
    const value = await (await weft.compile([x], g))(xv);
    t.equal(value.data.constructor, Float32Array);
    near(t, value, [...xv].map(df), 1e-6, name);
  }
  // a float32 input next to a float64 one still gets a float32 gradient
  const y = pt.vector('y');
  const gx = weft.grad(pt.sum(pt.mul(x, y)), x);
  t.equal(gx.dtype, 'float32');
  await weft.verifyGrad((a) => pt.mul(pt.exp(a), pt.sin(a)), [new Float32Array([0.1, 0.2, 0.3])]);
});

t.test('integer inputs: gradients only for the float ones', async (t) => {
  const x = pt.vector('x');
  const i = pt.vector('i', 'int32');
  const cost = pt.sum(pt.mul(x, i));
  t.equal(weft.grad(cost, x).dtype, 'float64');
  const [gx, gi] = await gradValues(cost, [x, i], [[x, [1, 2]], [i, [3, -4]]]);
  t.same(gx, [3, -4]);
  t.same(gi, [0, 0], 'the integer input gets zeros');
});

t.test('conventions at ties and edges', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  // at a tie, maximum and minimum pass the gradient to the first input only (PyTensor's convention)
  const [mx, my] = await gradValues(pt.sum(pt.maximum(x, y)), [x, y], [[x, [1, 2]], [y, [1, 3]]]);
  t.same([mx, my], [[1, 0], [0, 1]]);
  const [nx, ny] = await gradValues(pt.sum(pt.minimum(x, y)), [x, y], [[x, [1, 2]], [y, [1, 3]]]);
  t.same([nx, ny], [[1, 1], [0, 0]]);
  // clip: at a bound the gradient goes to x, not to the bound
  const lo = pt.scalar('lo');
  const hi = pt.scalar('hi');
  const [cx, clo, chi] = await gradValues(pt.sum(pt.clip(x, lo, hi)), [x, lo, hi], [[x, [0, 0.5, 1, -1, 2]], [lo, 0], [hi, 1]]);
  t.same([cx, clo, chi], [[1, 1, 1, 0, 0], 1, 1]);
  // pow: d/dy x^y at x = 0 is 0, not NaN (0 * log 0)
  const [px, py] = await gradValues(pt.sum(pt.pow(x, y)), [x, y], [[x, [0, 2]], [y, [2, 3]]]);
  t.same(px, [0, 12]);
  t.same(py, [0, 8 * Math.log(2)]);
  // abs at 0: sign(0) = 0
  const [ax] = await gradValues(pt.sum(pt.abs(x)), [x], [[x, [0, -2, 3]]]);
  t.same(ax, [0, -1, 1]);
});

t.test('broadcast inputs get gradients summed over the broadcast axes', async (t) => {
  const m = pt.matrix('m');
  const row = pt.tensor({ shape: [1, null], name: 'row' });
  const s = pt.scalar('s');
  const v = pt.vector('v');
  const cost = pt.sum(pt.mul(pt.add(m, row, v), s));
  const mv = [[1, 2], [3, 4], [5, 6]];
  const [gm, grow, gs, gv] = await gradValues(cost, [m, row, s, v], [[m, mv], [row, [[10, 20]]], [s, 2], [v, [100, 200]]]);
  t.same(gm, [[2, 2], [2, 2], [2, 2]]);
  t.same(grow, [[6, 6]]);
  t.same(gv, [6, 6]);
  t.equal(gs, 1 + 2 + 3 + 4 + 5 + 6 + 3 * (10 + 20) + 3 * (100 + 200));
  await weft.verifyGrad((a, b, c) => pt.mul(pt.add(a, b), c), [r.normal([3, 2]), r.normal([1, 2]), r.normal([])]);
  await weft.checkRop((a, b, c) => pt.mul(pt.add(a, b), c), [r.normal([3, 2]), r.normal([1, 2]), r.normal([])]);
  t.pass('verifyGrad and checkRop with a broadcast row and a 0-d input');
});
