// OpFromGraph with random draws inside: the draw's next state is a hidden output of each
// application, which the outer function uses as the state's update (fresh draws per call, on 0
// and 2 workers, inline or not); applications of one op read one state (PyTensor's semantics);
// nested ops; gradients and Rop through them with the same draws; serialization; bad input.
import t from 'tap';
import { near, pt, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
type Shared = weft.pt.TensorSharedVariable;

const one = (v: TV | TV[]): TV => (Array.isArray(v) ? v[0]! : v);
const stateOf = (draws: TV): Shared => draws.owner!.inputs[0] as Shared;
const list = (a: weft.NdArray): number[] => weft.tolist(a) as number[];
const ofgNodes = (fn: { fgraph: weft.FunctionGraph }) => fn.fgraph.toposort().filter((n) => n.op instanceof weft.OpFromGraph);

/** The draws `noise` gives from the state's current value, without moving it. */
async function drawsNow(noise: TV, inputs: TV[] = [], values: unknown[] = []): Promise<number[]> {
  const fn = await weft.compile(inputs, noise, { noDefaultUpdates: true, onUnusedInput: 'ignore' });
  return list(await fn(...(values as weft.InputValue[])));
}

t.test('a draw inside: a hidden output updates its state, call returns the user outputs', async (t) => {
  for (const workers of [0, 2]) {
    const stream = new weft.RandomStream(3);
    const x = pt.vector('x');
    const noise = stream.normal(pt.shape(x));
    const state = stateOf(noise);
    const op = new weft.OpFromGraph([x], [x.add(noise)], { name: 'noisy' });
    t.same(op.shared, [state], 'the state is an implicit input');
    t.same(op.updatedShared, [state], 'and its update a hidden output');
    t.equal(op.innerOutputs.length, 2);
    t.equal(op.visibleOutputs.length, 1);
    const y = op.call(x) as TV;
    t.notOk(Array.isArray(y), 'call returns the one user output');
    t.equal(y.owner!.outputs.length, 2, 'the node has the hidden output too');
    t.same(op.defaultUpdates(y.owner!), [[state, y.owner!.outputs[1]]]);
    const fn = await weft.compile([x], y, { workers });
    t.same(fn.updated, [state], `workers ${workers}: the state is updated`);
    const calls: number[][] = [];
    for (let i = 0; i < 3; i++) {
      const want = await drawsNow(noise, [x], [[0, 0, 0, 0]]);
      const got = list(await fn([1, 2, 3, 4]));
      near(t, weft.pt.constant(got).data, want.map((v, k) => v + k + 1), 1e-15, `call ${i}: x + the draws of the current state`);
      calls.push(got);
    }
    t.notSame(calls[0], calls[1], 'fresh draws per call');
    t.notSame(calls[1], calls[2]);
    // Inline, the same draws.
    stream.seed(3);
    const inlined = new weft.OpFromGraph([x], [x.add(noise)], { inline: true });
    const fi = await weft.compile([x], one(inlined.call(x)), { workers });
    t.equal(ofgNodes(fi).length, 0, 'inlined');
    t.same(fi.updated, [state]);
    t.same(list(await fi([1, 2, 3, 4])), calls[0], 'inline gives the same draws');
    t.same(list(await fi([1, 2, 3, 4])), calls[1]);
  }
});

t.test('draws bit for bit equal on 0 and 2 workers', async (t) => {
  const results: number[][][] = [];
  for (const workers of [0, 2]) {
    const stream = new weft.RandomStream(17);
    const x = pt.matrix('x');
    const op = new weft.OpFromGraph([x], [x.mul(stream.uniform(pt.shape(x))).tanh()]);
    const y = one(op.call(x)).add(x.exp()).sum({ axis: 0 });
    const fn = await weft.compile([x], y, { workers });
    const xv = new weft.Rng(4).normal([256, 200]);
    results.push([Array.from((await fn(xv)).data), Array.from((await fn(xv)).data)]);
  }
  const [a, b] = results;
  a!.forEach((v, i) => t.ok(v.every((e, k) => Object.is(e, b![i]![k])), `call ${i}: bitwise equal`));
});

t.test('applications of one op read one state and draw the same numbers; two ops do not', async (t) => {
  const stream = new weft.RandomStream(5);
  const x = pt.vector('x');
  const noise = stream.uniform([3]);
  const op = new weft.OpFromGraph([x], [x.add(noise)]);
  const a = pt.vector('a');
  const b = pt.vector('b');
  // As in PyTensor, where the shared state is an implicit input of each application: both read
  // its value at the call, so both draw the same numbers, and the state advances once.
  const fn = await weft.compile([a, b], [one(op.call(a)), one(op.call(b))]);
  t.equal(ofgNodes(fn).length, 2);
  t.same(fn.updated, [stateOf(noise)], 'one update for the one state');
  const want = await drawsNow(noise);
  const [ya, yb] = await fn([0, 0, 0], [10, 20, 30]);
  near(t, ya!, want, 1e-15, 'the first application');
  near(t, yb!, want.map((v, k) => v + 10 * (k + 1)), 1e-15, 'the second, with the same draws');
  t.notSame(await drawsNow(noise), want, 'the state moved once the call succeeded');
  // Equal inputs: the applications merge, which changes nothing.
  const merged = await weft.compile([a], [one(op.call(a)), one(op.call(a))]);
  t.equal(ofgNodes(merged).length, 1, 'equal applications merge');
  const [m1, m2] = await merged([1, 1, 1]);
  t.same(list(m1!), list(m2!));
  // Another op from another draw has its own state.
  const op2 = new weft.OpFromGraph([x], [x.add(stream.uniform([3]))]);
  t.notOk(op.equals(op2), 'ops reading other states are different ops');
  const two = await weft.compile([a], [one(op.call(a)), one(op2.call(a))]);
  const [p, q] = await two([0, 0, 0]);
  t.notSame(list(p!), list(q!), 'two ops, two draws');
  t.equal(two.updated.length, 2);
});

t.test('nested: the inner op\'s hidden output becomes the outer op\'s', async (t) => {
  const stream = new weft.RandomStream(7);
  const x = pt.vector('x');
  const mu = pt.scalar('mu');
  const noise = stream.normal(pt.shape(x), { mean: mu });
  const inner = new weft.OpFromGraph([x, mu], [x.add(noise)], { name: 'inner' });
  const z = pt.vector('z');
  const outer = new weft.OpFromGraph([z], [one(inner.call(z, 5)).mul(2)], { name: 'outer' });
  t.same(outer.updatedShared, [stateOf(noise)], 'the outer op updates the state too');
  const deeper = new weft.OpFromGraph([z], [one(outer.call(z)).sub(1)], { name: 'deeper' });
  t.same(deeper.updatedShared, [stateOf(noise)], 'through two levels');
  const fn = await weft.compile([z], one(deeper.call(z)), { workers: 2 });
  t.same(fn.updated, [stateOf(noise)]);
  const seen: number[][] = [];
  for (let i = 0; i < 2; i++) {
    const want = await drawsNow(noise, [x, mu], [[0, 0], 5]);
    const got = list(await fn([1, -1]));
    near(t, weft.pt.constant(got).data, [2 * (1 + want[0]!) - 1, 2 * (-1 + want[1]!) - 1], 1e-14, `call ${i}`);
    seen.push(got);
  }
  t.notSame(seen[0], seen[1], 'fresh draws at each level of nesting');
});

t.test('under grad: the pullback recomputes the same draws; gradients check against finite differences', async (t) => {
  const stream = new weft.RandomStream(11);
  const x = pt.vector('x');
  const op = new weft.OpFromGraph([x], [x.add(stream.normal(pt.shape(x)))], { name: 'noisy' });
  const w = pt.vector('w');
  const y = one(op.call(w));
  const cost = y.mul(w).sum();
  const g = weft.grad(cost, w);
  t.same(op.pullback().updatedShared, [], 'the pullback reads the state as an input and updates nothing');
  const fn = await weft.compile([w], [g, y]);
  t.equal(fn.updated.length, 1, 'the state is updated once');
  for (let i = 0; i < 2; i++) {
    const [gv, yv] = await fn([1, 2, 3]);
    // d/dw sum((w + n) w) = 2w + n = y + w, with the draws n of this call.
    near(t, gv!, list(yv!).map((v, k) => v + k + 1), 1e-14, `call ${i}: the gradient uses the call's draws`);
  }
  // Finite differences with the draws held (no default updates).
  const f = await weft.compile([w], cost, { noDefaultUpdates: true });
  const df = await weft.compile([w], g, { noDefaultUpdates: true });
  const w0 = [0.3, -1.2, 2];
  const grad0 = list(await df(w0));
  for (let k = 0; k < 3; k++) {
    const eps = 1e-6;
    const up = w0.map((v, i) => (i === k ? v + eps : v));
    const down = w0.map((v, i) => (i === k ? v - eps : v));
    const fd = (Number(weft.tolist(await f(up))) - Number(weft.tolist(await f(down)))) / (2 * eps);
    t.ok(Math.abs(fd - grad0[k]!) < 1e-6, `d/dw${k}: ${grad0[k]} vs finite differences ${fd}`);
  }
  // Nested, under grad.
  const z = pt.vector('z');
  const outer = new weft.OpFromGraph([z], [one(op.call(z.mul(3)))]);
  const gz = weft.grad(one(outer.call(w)).sum(), w);
  t.same(list(await (await weft.compile([w], gz))([1, 1])), [3, 3], 'd/dw sum(3w + n) = 3');
  // A parameter of the draw: the mean's gradient is the reparameterized one; Student's df has none.
  const mu = pt.scalar('mu');
  const withMean = new weft.OpFromGraph([x, mu], [x.mul(stream.normal(pt.shape(x), { mean: mu }))], { name: 'scaled' });
  const c = one(withMean.call(w, 0.5)).sum();
  const gw = weft.grad(c, w);
  const both = await weft.compile([w], [gw, one(withMean.call(w, 0.5)).div(w)]);
  const [gwv, drawsv] = await both([1, 2]);
  near(t, gwv!, list(drawsv!), 1e-14, 'd/dx sum(x n) = n');
  const gmu = weft.grad(one(withMean.call(w, mu)).sum(), mu);
  t.equal(weft.tolist(await (await weft.compile([w, mu], gmu))([1, 2], 0.5)), 3, 'd/dmu sum(x (mu + z)) = sum(x)');
  const nu = pt.scalar('nu');
  const heavy = new weft.OpFromGraph([x, nu], [x.mul(stream.studentT(nu, 0, 1, { size: pt.shape(x) }))], { name: 'heavy' });
  await throwsExactly(t, () => weft.grad(one(heavy.call(w, nu)).sum(), nu), weft.NullGradientError,
    'grad: the gradient with respect to nu is needed but the gradient of OpFromGraph{heavy} with respect to input 1 is undefined: ' +
      'the gradient with respect to nu is needed but the gradient of StudentTRV{dtype=float64, ndim=1} with respect to input 2 is undefined: ' +
      'random draws have no gradient with respect to their parameters');
});

t.test('the hidden outputs: connection pattern, shapes, Rop of the user outputs', async (t) => {
  const stream = new weft.RandomStream(13);
  const x = pt.vector('x');
  const y0 = pt.vector('y0');
  const op = new weft.OpFromGraph([x, y0], [x.mul(stream.uniform(pt.shape(x)))], { connectionPattern: [[true], [false]] });
  // x only sets the draw's shape (Shape is not connected to its input), so the next state does not depend on it.
  t.same(op.connectionPattern(), [[true, false], [false, false], [true, true]], 'user columns as given, the hidden one computed');
  const v = pt.vector('v');
  const out = one(op.call(v, v));
  t.equal(await weft.checkInferShape([v], [out], [[1, 2, 3]], weft.OpFromGraph), 1, 'inferShape covers the hidden output');
  const ev = pt.vector('ev');
  const jv = weft.Rop(out, v, ev) as TV;
  const fn = await weft.compile([v, ev], [jv, out], { noDefaultUpdates: true });
  const [jvv, outv] = await fn([1, 2, 4], [1, 1, 1]);
  near(t, jvv!, list(outv!).map((o, k) => o / [1, 2, 4][k]!), 1e-14, 'Rop: the draws times the direction');
});

t.test('explicit updates and noDefaultUpdates take precedence; updates the op cannot compute stay outside', async (t) => {
  const stream = new weft.RandomStream(19);
  const x = pt.vector('x');
  const noise = stream.uniform([2]);
  const state = stateOf(noise);
  const op = new weft.OpFromGraph([x], [x.add(noise)]);
  const kept = await weft.compile([x], one(op.call(x)), { updates: [[state, state]] });
  t.same(list(await kept([0, 0])), list(await kept([0, 0])), 'an explicit update wins');
  const off = await weft.compile([x], one(op.call(x)), { noDefaultUpdates: true });
  t.same(off.updated, []);
  t.same(list(await off([0, 0])), list(await off([0, 0])), 'noDefaultUpdates');
  // A default update set after the op was made: the outer function computes it itself.
  const count = weft.shared(0, { name: 'count' });
  const counter = new weft.OpFromGraph([x], [x.mul(count)]);
  t.same(counter.updatedShared, []);
  count.defaultUpdate = count.add(1);
  const fc = await weft.compile([x], one(counter.call(x)));
  t.same(fc.updated, [count]);
  t.same([list(await fc([1])), list(await fc([1]))], [[0], [1]]);
  // An update that reads a variable nobody gives.
  const p = pt.scalar('p');
  count.defaultUpdate = count.add(p);
  await throwsExactly(t, () => weft.compile([x], one(counter.call(x))), weft.MissingInputError,
    'p is needed to compute the outputs (by compile of the function) but is neither an input of the graph nor a constant; ' +
      'pass it as an input or give it a value with givens');
  const fp = await weft.compile([x, p], one(counter.call(x)));
  await fp([1], 5);
  t.same(weft.tolist(count.getValue()), 7, 'an update may read the inputs');
});

t.test('serialization: the document stores the user outputs, loading finds the hidden ones again', async (t) => {
  const stream = new weft.RandomStream(23);
  const x = pt.vector('x');
  const inner = new weft.OpFromGraph([x], [x.add(stream.normal(pt.shape(x)))], { name: 'inner' });
  const outer = new weft.OpFromGraph([x], [one(inner.call(x)).mul(2)], { name: 'outer' });
  const y = one(outer.call(x));
  const json = weft.serialize(y);
  const doc = JSON.parse(json) as { graphs: Array<{ outputs: number[] }>; nodes: unknown[] };
  t.same(doc.graphs.map((g) => g.outputs.length), [1, 1], 'inner graphs without hidden outputs');
  const copy = weft.deserialize(json);
  if (copy.kind !== 'variables') throw new Error('expected a graph');
  const op = copy.outputs[0]!.owner!.op as weft.OpFromGraph;
  t.equal(op.updatedShared.length, 1, 'the loaded op updates its state');
  t.equal(weft.serialize(copy.outputs), json, 'and writes the same document');
  const f = await weft.compile([x], y);
  const g = await weft.compile(copy.inputs, copy.outputs[0]!);
  for (let i = 0; i < 2; i++) t.same(list(await g([1, 2])), list(await f([1, 2])), `call ${i}: the same draws`);
});

t.teardown(() => weft.shutdown());
