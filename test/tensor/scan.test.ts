// weft.scan: Theano's classic examples with their values (powers, a polynomial, cumulative sums,
// Fibonacci with taps, goBackwards, nSteps alone), an RNN against a JS loop and its gradients by
// finite differences, truncated BPTT, random draws and shared variables inside the step,
// inferShape, bitwise equal results on 0 and 2 workers, and bad input with its messages.
import t from 'tap';
import type { KernelContext } from '../../src/graph/op.js';
import { innerPlanning } from '../../src/scheduler/inner-planner.js';
import { near, pt, rng, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
const one = (outputs: TV | TV[]): TV => outputs as TV;
/** The context a plan gives Op.kernel for inputs like these. */
const planning = (inputs: readonly weft.NdArray[]): KernelContext => ({ ...innerPlanning, inputs });
const many = (outputs: TV | TV[]): TV[] => outputs as TV[];

t.test('A**k by repeated multiplication', async (t) => {
  const A = pt.vector('A');
  const k = pt.scalar('k', 'int32');
  const { outputs, updates } = weft.scan({ fn: (prior: TV, a: TV) => prior.mul(a), outputsInfo: pt.onesLike(A), nonSequences: [A], nSteps: k });
  t.same(updates, []);
  const all = one(outputs);
  const fn = await weft.compile([A, k], [all, all.get(-1)], { workers: 0 });
  const [steps, last] = await fn([1, 2, 3], 4);
  near(t, steps!, [[1, 2, 3], [1, 4, 9], [1, 8, 27], [1, 16, 81]]);
  near(t, last!, [1, 16, 81]);
  near(t, (await fn([0.5, -2], 1))[0]!, [[0.5, -2]], 1e-15, 'one step');
});

t.test('a polynomial from its coefficients (a sequence and an arange)', async (t) => {
  const coefficients = pt.vector('coefficients');
  const x = pt.scalar('x');
  const { outputs } = weft.scan({
    fn: (c: TV, power: TV, free: TV) => c.mul(pt.pow(free, power)),
    sequences: [coefficients, pt.arange(10000)],
    nonSequences: [x],
  });
  const fn = await weft.compile([coefficients, x], [one(outputs), one(outputs).sum()], { workers: 0 });
  const [terms, value] = await fn([1, 0, 2], 3);
  near(t, terms!, [1, 0, 18]);
  near(t, value!, 19);
});

t.test('cumulative sum, forwards and backwards', async (t) => {
  const x = pt.vector('x');
  const forward = weft.scan({ fn: (xt: TV, acc: TV) => acc.add(xt), sequences: [x], outputsInfo: [pt.zeros([])] });
  const backward = weft.scan({ fn: (xt: TV, acc: TV) => acc.add(xt), sequences: [x], outputsInfo: [pt.zeros([])], goBackwards: true });
  const fn = await weft.compile([x], [one(forward.outputs), one(backward.outputs)], { workers: 0 });
  const [f, b] = await fn([1, 2, 3, 4]);
  near(t, f!, [1, 3, 6, 10]);
  near(t, b!, [4, 7, 9, 10], 1e-15, 'goBackwards sums from the end');
});

t.test('Fibonacci with taps [-2, -1], and sequences with taps', async (t) => {
  const { outputs } = weft.scan({
    fn: (a: TV, b: TV) => a.add(b),
    outputsInfo: { initial: pt.constant([0, 1], { dtype: 'int32' }), taps: [-2, -1] },
    nSteps: 10,
  });
  t.equal(one(outputs).dtype, 'int32');
  t.same(weft.tolist(await one(outputs).eval()), [1, 2, 3, 5, 8, 13, 21, 34, 55, 89]);
  // Only the first -min(taps) rows of the initial value are read.
  const longer = weft.scan({ fn: (a: TV, b: TV) => a.add(b), outputsInfo: { initial: pt.constant([2, 3, 100]), taps: [-2, -1] }, nSteps: 3 });
  near(t, await one(longer.outputs).eval(), [5, 8, 13]);

  const x = pt.vector('x');
  const around = (goBackwards: boolean): TV =>
    one(weft.scan({ fn: (before: TV, now: TV, after: TV) => before.add(after).sub(now), sequences: [{ input: x, taps: [-1, 0, 1] }], goBackwards }).outputs);
  const fn = await weft.compile([x], [around(false), around(true)], { workers: 0 });
  const [f, b] = await fn([1, 2, 4, 8, 16]);
  near(t, f!, [1 + 4 - 2, 2 + 8 - 4, 4 + 16 - 8]);
  near(t, b!, [4 + 16 - 8, 2 + 8 - 4, 1 + 4 - 2], 1e-15, 'goBackwards with taps');
  // Taps that are all positive (or all negative) still cut as if tap 0 were used.
  const ahead = one(weft.scan({ fn: (a: TV, c: TV) => a.mul(c), sequences: [{ input: x, taps: [1, 2] }] }).outputs);
  near(t, await ahead.eval(new Map([[x, [1, 2, 3, 4]]])), [6, 12]);
});

t.test('nSteps without sequences, as a number and as a variable; several outputs', async (t) => {
  const n = pt.scalar('n', 'int32');
  const build = (steps: number | TV) =>
    weft.scan({
      fn: (y: TV) => [y.mul(2), y.add(0.5)],
      outputsInfo: [pt.constant(1), null],
      nSteps: steps,
    }).outputs as TV[];
  const [doubled, plusHalf] = build(5);
  near(t, await doubled!.eval(), [2, 4, 8, 16, 32]);
  near(t, await plusHalf!.eval(), [1.5, 2.5, 4.5, 8.5, 16.5]);
  const fn = await weft.compile([n], build(n), { workers: 0 });
  const [d, h] = await fn(3);
  near(t, d!, [2, 4, 8]);
  near(t, h!, [1.5, 2.5, 4.5]);
  const [d0] = await fn(0);
  t.same(d0!.shape, [0], 'zero steps give empty outputs');
  // nSteps shorter than the sequence: the first nSteps rows.
  const x = pt.vector('x');
  const short = one(weft.scan({ fn: (xt: TV) => xt.mul(10), sequences: [x], nSteps: 2 }).outputs);
  near(t, await short.eval(new Map([[x, [1, 2, 3]]])), [10, 20]);
});

/** h_t = tanh(W x_t + U h_{t-1} + b) for each row x_t of X. */
function rnn(W: TV, U: TV, b: TV, h0: TV, X: TV, truncateGradient?: number): TV {
  return one(
    weft.scan({
      fn: (x: TV, h: TV, w: TV, u: TV, bias: TV) => pt.tanh(pt.dot(w, x).add(pt.dot(u, h)).add(bias)),
      sequences: [X],
      outputsInfo: [h0],
      nonSequences: [W, U, b],
      ...(truncateGradient === undefined ? {} : { truncateGradient }),
      name: 'rnn',
    }).outputs,
  );
}

/** W, U, b, h0 and X: one value per input of the RNN. */
type RnnValues = [weft.NdArray, weft.NdArray, weft.NdArray, weft.NdArray, weft.NdArray];

function rnnValues(seed: number, nh: number, nx: number, steps: number): RnnValues {
  const r = rng(seed);
  return [r.normal([nh, nx], { std: 0.5 }), r.normal([nh, nh], { std: 0.5 }), r.normal([nh]), r.normal([nh]), r.normal([steps, nx])];
}

function rnnByHand([W, U, b, h0, X]: weft.NdArray[]): number[][] {
  const nh = h0!.shape[0]!;
  const nx = X!.shape[1]!;
  const at = (a: weft.NdArray, ...i: number[]) => a.get(...i);
  let h = Array.from({ length: nh }, (_, i) => at(h0!, i));
  const out: number[][] = [];
  for (let t = 0; t < X!.shape[0]!; t++) {
    h = h.map((_, i) => {
      let s = at(b!, i);
      for (let j = 0; j < nx; j++) s += at(W!, i, j) * at(X!, t, j);
      for (let j = 0; j < nh; j++) s += at(U!, i, j) * h[j]!;
      return Math.tanh(s);
    });
    out.push(h);
  }
  return out;
}

t.test('a simple RNN: values against a JS loop, gradients against finite differences', async (t) => {
  const [W, U, b, h0, X] = [pt.matrix('W'), pt.matrix('U'), pt.vector('b'), pt.vector('h0'), pt.matrix('X')];
  const values = rnnValues(7, 4, 3, 6);
  const fn = await weft.compile([W, U, b, h0, X], rnn(W, U, b, h0, X), { workers: 0 });
  near(t, await fn(...values), rnnByHand(values), 1e-12);
  await weft.verifyGrad((w, u, bias, h, x) => rnn(w, u, bias, h, x).sum(), rnnValues(8, 3, 2, 5), { rng: rng(9) });
  await weft.verifyGrad((w, u, bias, h, x) => rnn(w, u, bias, h, x).get(-1).sum(), rnnValues(10, 3, 2, 4), { rng: rng(11) });
  t.pass('verifyGrad with respect to W, U, b, h0 and X');
  // Sequences with taps, goBackwards, and several past states: gradients too.
  await weft.verifyGrad(
    (x, h) =>
      one(
        weft.scan({
          fn: (prev: TV, next: TV, a: TV, c: TV) => pt.tanh(a.mul(c).add(prev.mul(next))),
          sequences: [{ input: x, taps: [-1, 1] }],
          outputsInfo: { initial: h, taps: [-2, -1] },
          goBackwards: true,
        }).outputs,
      ).sum(),
    [rng(12).normal([6]), rng(13).normal([3])],
    { rng: rng(14) },
  );
  t.pass('verifyGrad through taps and goBackwards');
});

t.test('Rop: the tangents carried next to the states, against finite differences and Lop', async (t) => {
  await weft.checkRop((w, u, bias, h, x) => rnn(w, u, bias, h, x), rnnValues(50, 3, 2, 4), { rng: rng(51) });
  await weft.checkRop(
    (x, h) => many(weft.scan({ fn: (now: TV, a: TV, b: TV) => [pt.tanh(a.mul(b).add(now)), now.mul(b)], sequences: [x], outputsInfo: [{ initial: h, taps: [-2, -1] }, null] }).outputs)[1]!,
    [rng(52).normal([5]), rng(53).normal([2])],
    { rng: rng(54) },
  );
  t.pass('checkRop through sit-sot and mit-sot states and an output that is not fed back');
});

t.test('truncateGradient goes back through the last k steps, then hands the carried gradient to the initial state', async (t) => {
  // y_t = a y_{t-1} + x_t, y_{-1} = y0. For cost y_{n-1}: dcost/dx_t = a^(n-1-t), zero beyond k
  // steps back, and (as in Theano) the initial state gets the gradient of the state before those
  // k steps, a^k, instead of a^n.
  const x = pt.vector('x');
  const a = pt.scalar('a');
  const y0 = pt.scalar('y0');
  const ys = (k: number): TV =>
    one(weft.scan({ fn: (xt: TV, y: TV, aa: TV) => aa.mul(y).add(xt), sequences: [x], outputsInfo: [y0], nonSequences: [a], truncateGradient: k }).outputs);
  const grads = async (k: number, cost: (y: TV) => TV) => {
    const fn = await weft.compile([x, a, y0], [...weft.grad(cost(ys(k)), [x, a, y0]), ys(-1)], { workers: 0 });
    return fn([1, 2, 3, 4], 0.5, 2);
  };
  const lastOnly = (y: TV): TV => y.get(-1);
  const [gx, ga, gy0, ys4] = await grads(-1, lastOnly);
  near(t, gx!, [0.125, 0.25, 0.5, 1]);
  near(t, gy0!, 0.0625);
  const y = weft.tolist(ys4!) as number[];
  near(t, ga!, y[2]! + 0.5 * y[1]! + 0.25 * y[0]! + 0.125 * 2, 1e-12, 'da over all steps');
  const [tx, ta, ty0] = await grads(2, lastOnly);
  near(t, tx!, [0, 0, 0.5, 1], 1e-15, 'dx with k = 2');
  near(t, ty0!, 0.25, 1e-15, 'the initial state gets dcost/dy_1 = a^2');
  near(t, ta!, y[2]! + 0.5 * y[1]!, 1e-12, 'da over the last two steps');
  const [ox, oa, oy0] = await grads(1, lastOnly);
  near(t, ox!, [0, 0, 0, 1], 1e-15, 'dx with k = 1');
  near(t, oy0!, 0.5, 1e-15, 'k = 1: the initial state gets dcost/dy_2 = a');
  near(t, oa!, y[2]!, 1e-12);
  const [kx, , ky0] = await grads(10, lastOnly);
  near(t, kx!, [0.125, 0.25, 0.5, 1], 1e-15, 'k beyond the number of steps is all of them');
  near(t, ky0!, 0.0625);
  // cost sum(y), k = 2: steps 3 and 2 send (1 + a) a = 0.75 to y_1, which goes to y0.
  const [sx, sa, sy0] = await grads(2, (v) => v.sum());
  near(t, sx!, [0, 0, 1.5, 1], 1e-15, 'dx of sum(y) with k = 2');
  near(t, sy0!, 0.75, 1e-15, 'dy0 of sum(y) with k = 2');
  near(t, sa!, y[2]! + 1.5 * y[1]!, 1e-12, 'da of sum(y) with k = 2');
  // Two past states (taps [-2, -1]): z_t = a z_{t-2} + x_t, k = 1, cost z_3; z_3 = a z_1 + x_3,
  // so the carry after one step holds dz_3/dz_1 = a (for the state two steps back) and 0.
  const z0 = pt.vector('z0');
  const zs = one(weft.scan({ fn: (xt: TV, z2: TV, _z1: TV, aa: TV) => aa.mul(z2).add(xt), sequences: [x], outputsInfo: { initial: z0, taps: [-2, -1] }, nonSequences: [a], truncateGradient: 1 }).outputs);
  const fz = await weft.compile([x, a, z0], weft.grad(zs.get(-1), [x, z0]), { workers: 0 });
  const [zx, gz0] = await fz([1, 2, 3, 4], 0.5, [7, 9]);
  near(t, zx!, [0, 0, 0, 1], 1e-15, 'dx with taps [-2, -1] and k = 1');
  near(t, gz0!, [0.5, 0], 1e-15, 'the rows of the initial state get the carry: [dz_3/dz_1, dz_3/dz_2]');
});

t.test('zero steps: gradients and tangents are zeros, what reaches the initial state from elsewhere passes', async (t) => {
  // y_t = a y_{t-1} + x_t over n steps; cost = sum(y) + 3 y0.
  const x = pt.vector('x');
  const a = pt.scalar('a');
  const y0 = pt.scalar('y0');
  const n = pt.scalar('n', 'int32');
  const ys = one(weft.scan({ fn: (xt: TV, y: TV, aa: TV) => aa.mul(y).add(xt), sequences: [x], outputsInfo: [y0], nonSequences: [a], nSteps: n }).outputs);
  const grads = weft.grad(ys.sum().add(y0.mul(3)), [x, a, y0]);
  const dx = pt.vector('dx');
  const da = pt.scalar('da');
  const dy0 = pt.scalar('dy0');
  const tangent = weft.Rop(ys, [x, a, y0], [dx, da, dy0]) as TV;
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  for (const options of [{ workers: 0 }, { pool }]) {
    const fn = await weft.compile([x, a, y0, n, dx, da, dy0], [...grads, tangent], options);
    const [gx, ga, gy0, dy] = await fn([1, 2, 3], 0.5, 2, 0, [1, 1, 1], 1, 1);
    near(t, gx!, [0, 0, 0], 0, 'nSteps 0: the sequence gets zeros');
    near(t, ga!, 0, 0, 'nSteps 0: the non-sequence gets zero');
    near(t, gy0!, 3, 0, 'nSteps 0: the initial state gets only its other use');
    t.same(dy!.shape, [0], 'nSteps 0: an empty tangent');
    const [ex, ea, ey0] = await fn([], 0.5, 2, 0, [], 1, 1);
    near(t, ex!, [], 0, 'an empty sequence gets an empty gradient');
    near(t, ea!, 0, 0);
    near(t, ey0!, 3, 0);
    // Two steps, for contrast: y = [a y0 + x0, a^2 y0 + a x0 + x1].
    const [sx, sa, sy0, sdy] = await fn([1, 2, 3], 0.5, 2, 2, [1, 1, 1], 1, 1);
    near(t, sx!, [1.5, 1, 0]);
    near(t, sa!, 2 + 2 * 0.5 * 2 + 1);
    near(t, sy0!, 0.5 + 0.25 + 3);
    near(t, sdy!, [2 + 0.5 + 1, 2 * 0.5 * 2 + 0.25 + 1 + 0.5 + 1], 1e-12, 'd(a y0 + x0), d(a^2 y0 + a x0 + x1)');
  }

  // An RNN over no rows: zeros of the parameters' shapes, not empty stacks.
  const [W, U, b, h0, X] = [pt.matrix('W'), pt.matrix('U'), pt.vector('b'), pt.vector('h0'), pt.matrix('X')];
  const h = rnn(W, U, b, h0, X);
  const fn = await weft.compile([W, U, b, h0, X], weft.grad(h.sum().add(h0.mul(h0).sum()), [W, U, b, h0, X]), { workers: 0 });
  const [w, u, bb, hh, xx] = rnnValues(60, 3, 2, 0);
  t.same(xx!.shape, [0, 2]);
  const [gW, gU, gb, gh0, gX] = await fn(w, u, bb, hh, xx);
  near(t, gW!, [[0, 0], [0, 0], [0, 0]], 0, 'dW');
  near(t, gU!, [[0, 0, 0], [0, 0, 0], [0, 0, 0]], 0, 'dU');
  near(t, gb!, [0, 0, 0], 0, 'db');
  near(t, gh0!, (weft.tolist(hh!) as number[]).map((v) => 2 * v), 1e-15, 'dh0 = 2 h0, from its use outside');
  t.same(gX!.shape, [0, 2], 'dX keeps the shape (0, 2)');
  await weft.verifyGrad((ww, uu, bias, h1, x1) => rnn(ww, uu, bias, h1, x1).sum().add(pt.tanh(h1).sum()), rnnValues(61, 3, 2, 0), { rng: rng(62) });
  await weft.checkRop((ww, uu, bias, h1, x1) => rnn(ww, uu, bias, h1, x1).sum({ axis: 0 }).add(h1), rnnValues(63, 3, 2, 0), { rng: rng(64) });
  t.pass('verifyGrad and checkRop over zero rows');

  // A shared variable carried as a state: its final value is the initial one when no step runs,
  // so the gradient (and tangent) of the final state passes to it unchanged.
  const s = weft.shared(1.5, { name: 's' });
  const k = pt.scalar('k', 'int32');
  const doubled = weft.scan({ fn: () => [s.mul(1), [[s, s.mul(2)]]] as const, nSteps: k });
  const last = doubled.updates[0]![1];
  const ds = pt.scalar('ds');
  const gs = await weft.compile([k, ds], [weft.grad(last, s), weft.Rop(last, s, ds) as TV], { workers: 0 });
  for (const [steps, want] of [[0, 1], [1, 2], [3, 8]] as const) {
    const [g, r] = await gs(steps, 0.25);
    near(t, g!, want, 0, `d final / d s over ${steps} steps`);
    near(t, r!, want * 0.25, 0, `its tangent over ${steps} steps`);
  }
});

t.test('until: the loop stops after the first step whose condition holds', async (t) => {
  const n = pt.scalar('n', 'int32');
  const doubling = one(weft.scan({ fn: (y: TV) => [y.mul(2), weft.until(y.mul(2).gt(40))], outputsInfo: [pt.constant(1)], nSteps: n }).outputs);
  t.same(doubling.type.shape, [null], 'the number of rows is not static');
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  for (const options of [{ workers: 0 }, { pool }]) {
    const fn = await weft.compile([n], [doubling, doubling.shape, doubling.sum().add(1)], options);
    const [ys, shape, total] = await fn(100);
    near(t, ys!, [2, 4, 8, 16, 32, 64], 0, 'stops after 64 > 40');
    t.same(weft.tolist(shape!), [6], 'the shape of the steps run');
    near(t, total!, 127, 0, 'nodes after the loop see the rows run');
    near(t, (await fn(3))[0]!, [2, 4, 8], 0, 'nSteps bounds the loop');
    t.same((await fn(0))[0]!.shape, [0], 'zero steps');
    near(t, (await fn(6))[0]!, [2, 4, 8, 16, 32, 64], 0, 'the condition holds at the last step');
  }
  t.equal(doubling.owner!.op.kernel!(doubling.owner!, planning([rng(1).integers([], 5, 6), weft.pt.constant(1).data as weft.NdArray])), undefined, 'an until-scan runs on the calling thread');

  // Sequences, an output not fed back, a shared variable updated per step, several outputs:
  // [outputs, updates, until] as Theano's step returns them.
  const x = pt.vector('x');
  const count = weft.shared(0, { name: 'count' });
  const { outputs, updates } = weft.scan({
    fn: (xt: TV, acc: TV) => {
      const next = acc.add(xt);
      return [[next, xt.mul(10)], [[count, count.add(1)]], weft.until(next.gt(5))] as const;
    },
    sequences: [x],
    outputsInfo: [pt.zeros([]), null],
  });
  const [sums, tens] = many(outputs);
  const fn = await weft.compile([x], [sums!, tens!], { updates, workers: 0 });
  const [s1, s2] = await fn([1, 2, 3, 4, 5]);
  near(t, s1!, [1, 3, 6], 0);
  near(t, s2!, [10, 20, 30], 0);
  t.equal(weft.tolist(count.getValue()), 3, 'the shared variable went up once per step run');
  const [l1] = await fn([1, 1, 1]);
  near(t, l1!, [1, 2, 3], 0, 'a condition that never holds: all the steps');
  t.equal(weft.tolist(count.getValue()), 6);
  // Many steps: the stacks grow as the loop runs, nSteps is only a bound.
  const big = one(weft.scan({ fn: (y: TV) => [y.add(1), weft.until(y.add(1).ge(1000))], outputsInfo: [pt.constant(0, { dtype: 'int32' })], nSteps: 1e9 }).outputs);
  const counted = weft.tolist(await big.eval()) as number[];
  t.equal(counted.length, 1000);
  t.equal(counted[999], 1000);
});

t.test('until: gradients over the steps run, Rop stops with the loop', async (t) => {
  // y_t = a y_{t-1} + x_t until y_t > 6; x = 1s, a = 2, y0 = 0: y = [1, 3, 7], three steps of five.
  const x = pt.vector('x');
  const a = pt.scalar('a');
  const y0 = pt.scalar('y0');
  const ys = (xs: TV, aa: TV, init: TV): TV =>
    one(weft.scan({ fn: (xt: TV, y: TV, av: TV) => [av.mul(y).add(xt), weft.until(av.mul(y).add(xt).gt(6))], sequences: [xs], outputsInfo: [init], nonSequences: [aa] }).outputs);
  const y = ys(x, a, y0);
  const dx = pt.vector('dx');
  const fn = await weft.compile([x, a, y0, dx], [y, ...weft.grad(y.sum(), [x, a, y0]), weft.Rop(y, x, dx) as TV], { workers: 0 });
  const [values, gx, ga, gy0, tangent] = await fn([1, 1, 1, 1, 1], 2, 0, [1, 1, 1, 1, 1]);
  near(t, values!, [1, 3, 7], 0);
  near(t, gx!, [1 + 2 + 4, 1 + 2, 1, 0, 0], 1e-15, 'dx: rows beyond the steps run get zeros');
  near(t, ga!, 0 + (1 + 2 * 0) + (3 + 2 * 1), 1e-15, 'da = sum of dy_t/da = 0 + 1 + 5');
  near(t, gy0!, 2 + 4 + 8, 1e-15, 'dy0 = a + a^2 + a^3');
  near(t, tangent!, [1, 3, 7], 1e-15, 'the tangent along dx = 1s, three rows');
  // Points well away from the threshold: the condition does not move under finite differences.
  const points = [[1.1, 0.9, 1.2, 1, 1], 2, 0.1].map((v) => weft.pt.constant(v, { dtype: 'float64' }).data as weft.NdArray);
  await weft.verifyGrad((xs, aa, init) => ys(xs, aa, init).sum(), points, { rng: rng(70) });
  await weft.checkRop((xs, aa, init) => ys(xs, aa, init), points, { rng: rng(71) });
  t.pass('verifyGrad and checkRop through an until-scan');
  // truncateGradient with until: the last k steps run.
  const tr = one(weft.scan({ fn: (xt: TV, yv: TV, av: TV) => [av.mul(yv).add(xt), weft.until(av.mul(yv).add(xt).gt(6))], sequences: [x], outputsInfo: [y0], nonSequences: [a], truncateGradient: 2 }).outputs);
  const ft = await weft.compile([x, a, y0], weft.grad(tr.get(-1), [x, y0]), { workers: 0 });
  const [tx, ty0] = await ft([1, 1, 1, 1, 1], 2, 0);
  near(t, tx!, [0, 2, 1, 0, 0], 1e-15, 'dx with k = 2 over the three steps run');
  near(t, ty0!, 4, 1e-15, 'dy0 gets dy_2/dy_0 = a^2');
});

t.test('until: a shared variable carried as a state, and its gradient over the steps run', async (t) => {
  // s doubles until the s a step reads exceeds 10: 1.5 -> 3 -> 6 -> 12 -> 24 (four steps).
  const s = weft.shared(1.5, { name: 's' });
  const { updates } = weft.scan({ fn: () => [[[s, s.mul(2)]], weft.until(s.gt(10))] as const, nSteps: 10 });
  const fn = await weft.compile([], [updates[0]![1], weft.grad(updates[0]![1], s)], { workers: 0 });
  const [last, g] = await fn();
  near(t, last!, 24, 0);
  near(t, g!, 16, 0, 'd final / d s = 2^4');
});

t.test('until: bad input', async (t) => {
  const v = pt.vector('v');
  await throwsExactly(t, () => weft.until(v), TypeError, 'until: the condition must be a scalar, got v (TensorType(float64, (?,)))');
  await throwsExactly(
    t,
    () => weft.scan({ fn: (y: TV) => [weft.until(y.gt(1)), y.mul(2), weft.until(y.gt(2))] as never, outputsInfo: [pt.constant(1)], nSteps: 3 }),
    TypeError,
    'scan: fn returned until() at position 0; it must be the last element, and only one',
  );
});

t.test('outputs are typed by what the step returns: one variable, or a list', async (t) => {
  const x = pt.vector('x');
  // These annotations are checked by `npm run typecheck`: no cast is needed.
  const single: TV = weft.scan({ fn: (xt: TV) => xt.mul(2), sequences: [x] }).outputs;
  const pair: TV[] = weft.scan({ fn: (xt: TV) => [xt.mul(2), xt.add(1)], sequences: [x] }).outputs;
  const stopping: TV = weft.scan({ fn: (xt: TV) => [xt.mul(2), weft.until(xt.gt(1))] as const, sequences: [x] }).outputs;
  const counter = weft.shared(0, { name: 'counter' });
  const updating: TV[] = weft.scan({ fn: (xt: TV) => [[xt.mul(2), xt.neg()], [[counter, counter.add(1)]]] as const, sequences: [x] }).outputs;
  // @ts-expect-error a step that returns one variable gives one variable, not a list
  const wrong: TV[] = weft.scan({ fn: (xt: TV) => xt.mul(2), sequences: [x] }).outputs;
  t.notOk(Array.isArray(single));
  t.notOk(Array.isArray(stopping));
  t.notOk(Array.isArray(wrong));
  t.equal(pair.length, 2);
  t.equal(updating.length, 2);
  const fn = await weft.compile([x], [single, ...pair, stopping], { workers: 0 });
  const [a, b, c, d] = await fn([0.5, 2, 3]);
  near(t, a!, [1, 4, 6], 0);
  near(t, b!, [1, 4, 6], 0);
  near(t, c!, [1.5, 3, 4], 0);
  near(t, d!, [1, 4], 0, 'stops after 2 > 1');
});

t.test('random draws inside the step: new numbers per step, the state advanced across calls', async (t) => {
  const draws = (seed: number) => {
    const stream = new weft.RandomStream(seed);
    return weft.scan({ fn: () => stream.uniform([2]), nSteps: 3 });
  };
  const { outputs, updates } = draws(42);
  t.equal(updates.length, 1, 'one update: the draw state');
  const fn = await weft.compile([], one(outputs), { updates, workers: 0 });
  const first = weft.tolist(await fn()) as number[][];
  const second = weft.tolist(await fn()) as number[][];
  t.not(first[0]![0], first[1]![0], 'each step draws new numbers');
  t.not(first[0]![0], second[0]![0], 'each call continues from the last state');
  // Three draws of the same stream one call at a time give the same numbers.
  const stream = new weft.RandomStream(42);
  const single = await weft.compile([], stream.uniform([2]), { workers: 0 });
  const sequential = [];
  for (let i = 0; i < 6; i++) sequential.push(weft.tolist(await single()));
  t.same([...first, ...second], sequential);
  // Same seed, same values; without explicit updates the default updates advance it too.
  const again = draws(42);
  const fn2 = await weft.compile([], one(again.outputs), { workers: 0 });
  t.same(weft.tolist(await fn2()), first);
  t.same(weft.tolist(await fn2()), second);
});

t.test('shared variables inside the step, and updates returned by the step', async (t) => {
  const w = weft.shared([1, 2], { name: 'w' });
  const count = weft.shared(0, { name: 'count' });
  const x = pt.matrix('x');
  const { outputs, updates } = weft.scan({
    fn: (row: TV) => [row.mul(w).sum(), [[count, count.add(1)]]] as const,
    sequences: [x],
  });
  t.equal(updates.length, 1);
  t.equal(updates[0]![0], count);
  const fn = await weft.compile([x], one(outputs), { updates, workers: 0 });
  near(t, await fn([[1, 1], [2, 3]]), [3, 8]);
  t.equal(weft.tolist(count.getValue()), 2, 'the counter went up once per step');
  w.setValue([10, 0]);
  near(t, await fn([[1, 1], [2, 3], [0, 1]]), [10, 20, 0]);
  t.equal(weft.tolist(count.getValue()), 5);
  // The gradient with respect to a shared variable read inside equals that of an explicit input.
  const W = weft.shared(rng(20).normal([3, 2]), { name: 'W' });
  const U = pt.matrix('U');
  const b = pt.vector('b');
  const h0 = pt.vector('h0');
  const X = pt.matrix('X');
  const Wx = pt.matrix('Wx');
  const implicit = one(weft.scan({ fn: (xt: TV, h: TV) => pt.tanh(pt.dot(W, xt).add(pt.dot(U, h)).add(b)), sequences: [X], outputsInfo: [h0] }).outputs);
  const g1 = weft.grad(implicit.sum(), W);
  const g2 = weft.grad(rnn(Wx, U, b, h0, X).sum(), Wx);
  const [, u, bb, h, xx] = rnnValues(21, 3, 2, 4);
  const f1 = await weft.compile([U, b, h0, X], g1, { workers: 0 });
  const f2 = await weft.compile([Wx, U, b, h0, X], g2, { workers: 0 });
  t.same(weft.tolist(await f1(u, bb, h, xx)), weft.tolist(await f2(W.getValue(), u, bb, h, xx)));
});

t.test('inferShape: steps from the sequences or nSteps, rows from the step', async (t) => {
  const X = pt.matrix('X');
  const h0 = pt.vector('h0');
  const n = pt.scalar('n', 'int32');
  const W = pt.matrix('W');
  const scanned = weft.scan({
    fn: (x: TV, h: TV, w: TV) => [pt.tanh(pt.dot(w, x).add(h)), pt.outer(x, h)],
    sequences: [X],
    outputsInfo: [h0, null],
    nonSequences: [W],
    nSteps: n,
  });
  const r = rng(30);
  t.equal(await weft.checkInferShape([X, h0, W, n], many(scanned.outputs), [r.normal([5, 2]), r.normal([3]), r.normal([3, 2]), 4], weft.ScanOp), 1);
  const fib = weft.scan({ fn: (a: TV, b: TV, x: TV) => a.add(b).add(x), sequences: [{ input: X, taps: [-1, 0] }], outputsInfo: { initial: pt.matrix('i0'), taps: [-2, -1] } });
  const i0 = one(fib.outputs).owner!.inputs.find((v) => v.name === 'i0') as TV | undefined;
  void i0;
  const init = pt.matrix('init');
  const fib2 = weft.scan({ fn: (a: TV, b: TV, x: TV) => a.add(b).add(x), sequences: [{ input: X, taps: [-1, 0] }], outputsInfo: { initial: init, taps: [-2, -1] } });
  t.equal(await weft.checkInferShape([X, init], [one(fib2.outputs)], [r.normal([6, 2]), r.normal([2, 2])], weft.ScanOp), 1);
  const shape = await weft.compile([X, init], one(fib2.outputs).shape, { workers: 0 });
  t.same(weft.tolist(await shape(r.normal([6, 2]), r.normal([3, 2]))), [5, 2]);
});

t.test('a pool of 2 workers computes the same bits as the calling thread', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const [W, U, b, h0, X] = [pt.matrix('W'), pt.matrix('U'), pt.vector('b'), pt.vector('h0'), pt.matrix('X')];
  const h = rnn(W, U, b, h0, X);
  const outs = [h, ...weft.grad(h.sum(), [W, U, b, h0, X])];
  const values = rnnValues(40, 64, 32, 50);
  const inline = await weft.compile([W, U, b, h0, X], outs, { workers: 0 });
  const pooled = await weft.compile([W, U, b, h0, X], outs, { pool });
  const want = await inline(...values);
  for (let call = 0; call < 2; call++) {
    const got = await pooled(...values);
    got.forEach((g, i) => t.same(Array.from(g.data), Array.from(want[i]!.data), `output ${i}, call ${call}`));
  }
  near(t, want[0]!, rnnByHand(values), 1e-9, 'the forward values (summed in another order)');
  // The loop is one task of the plan (the step's own plan inside), unless the step needs the calling thread.
  const node = h.owner!;
  const steps = rng(41).integers([], 50, 51);
  t.equal(node.op.kernel!(node, planning([steps, values[4]!, values[3]!, values[0]!, values[1]!, values[2]!]))?.name, 'scanLoop');
  const stream = new weft.RandomStream(3);
  const drawing = one(weft.scan({ fn: () => stream.normal([2]), nSteps: 4 }).outputs).owner!;
  t.equal(drawing.op.kernel!(drawing, planning([rng(42).integers([], 4, 5), stream.stateUpdates[0]![0].getValue()]))?.name, 'scanLoop', 'a step with random draws runs on a worker too (draws have worker kernels)');
});

t.test('bad input', async (t) => {
  const x = pt.vector('x');
  const h = pt.scalar('h');
  await throwsExactly(t, () => weft.scan({ fn: (a: TV) => a, outputsInfo: [h] }), TypeError, 'scan: nSteps is required when there are no sequences');
  await throwsExactly(
    t,
    () => weft.scan({ fn: (a: TV) => a, sequences: [pt.constant([1, 2, 3])], nSteps: 5 }),
    RangeError,
    'scan: nSteps is 5 but sequence 0 has only 3 steps',
  );
  await throwsExactly(
    t,
    () => weft.scan({ fn: (a: TV) => a, sequences: [{ input: pt.constant([1, 2, 3]), taps: [-1, 0] }], nSteps: 3 }),
    RangeError,
    'scan: nSteps is 3 but sequence 0 (at tap -1) has only 2 steps',
  );
  const n = pt.scalar('n', 'int32');
  const symbolic = await weft.compile([x, n], one(weft.scan({ fn: (a: TV) => a.mul(2), sequences: [x], nSteps: n }).outputs), { workers: 0 });
  await t.rejects(symbolic([1, 2, 3], 4), /Scan\{scan\}: nSteps is 4 but sequence 0 has only 3 steps/);
  await t.rejects(symbolic([1, 2, 3], -1), /Scan\{scan\}: nSteps must not be negative, got -1/);
  await throwsExactly(
    t,
    () => weft.scan({ fn: (a: TV, s: TV) => [a, s], sequences: [x], outputsInfo: [h] }),
    TypeError,
    'scan: fn returned 2 outputs but outputsInfo has 1 entry',
  );
  await throwsExactly(
    t,
    () => weft.scan({ fn: (a: TV, s: TV) => s.add(a).astype('float32'), sequences: [x], outputsInfo: [h] }),
    TypeError,
    'scan: output 0 of fn has dtype float32 but its initial state (outputsInfo[0]) has dtype float64; a recurrent output must keep its state\'s dtype (cast one of them)',
  );
  await throwsExactly(
    t,
    () => weft.scan({ fn: (a: TV, s: TV) => s.add(a), sequences: [pt.matrix('m')], outputsInfo: [h] }),
    TypeError,
    'scan: output 0 of fn has 1 axes but its initial state (outputsInfo[0]) has 0',
  );
  // A state whose step result has another length: found when the lengths are known.
  const v = pt.vector('v');
  const grows = one(weft.scan({ fn: (s: TV) => pt.concatenate([s, s]), outputsInfo: [v], nSteps: 2 }).outputs);
  const fn = await weft.compile([v], grows, { workers: 0 });
  await t.rejects(fn([1, 2]), /Scan\{scan\}: the step gives output 0 the shape \[4\], but its state has shape \[2\]; a recurrent output keeps its state's shape/);
  await throwsExactly(
    t,
    () => weft.scan({ fn: (a: TV) => a, sequences: [{ input: x, taps: [0, 0] }] }),
    TypeError,
    'scan: sequence 0: taps must be a non-empty list of distinct integers, got [0,0]',
  );
  await throwsExactly(
    t,
    () => weft.scan({ fn: (a: TV) => a, outputsInfo: { initial: x, taps: [-1, 1] }, nSteps: 2 }),
    TypeError,
    'scan: outputsInfo[0]: taps must be a non-empty list of distinct negative integers, got [-1,1]',
  );
  await throwsExactly(t, () => weft.scan({ fn: (a: TV) => a, sequences: [x], truncateGradient: 0 }), RangeError, 'scan: truncateGradient must be -1 (all steps) or a positive integer, got 0');
});
