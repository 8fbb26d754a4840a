// ShapeFeature and shape lifting: shape(f(x)) compiled in FAST_RUN computes lengths from the
// inputs' shapes without computing f(x); x.shape after reshape, concatenate, dot, subtensor and
// friends gives the right values; Shape_i of an input stays; x.shape[i] becomes Shape_i; the
// feature's symbolic shapes, and what it forgets when the graph changes.
import t, { type Test } from 'tap';
import { Dot } from '../../src/tensor/linalg/linalg.js';
import { Elemwise } from '../../src/tensor/elemwise/elemwise.js';
import { Shape, ShapeI } from '../../src/tensor/shape/shape.js';
import { ShapeFeature, shapeFeatureOf } from '../../src/tensor/rewriting/shape-feature.js';
import { pt, rng, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
type OpClass = abstract new (...args: never[]) => weft.Op;

function opNames(fn: weft.CompiledFunction): string[] {
  return fn.fgraph.toposort().map((n) => String(n.op));
}

/**
 * Compiles shape(out) in FAST_RUN: every node left computes integer lengths (the float tensors
 * are not computed, so no node of `computes` is left either), and the lengths are `want`.
 */
async function liftedShape(t: Test, inputs: TV[], out: TV, args: unknown[], want: number[], computes: OpClass[], what: string) {
  const fn = await weft.compile(inputs, pt.shape(out), { onUnusedInput: 'ignore' });
  const nodes = fn.fgraph.toposort();
  const floats = nodes.filter((n) => n.outputs.some((o) => (o.type as weft.TensorType).dtype.startsWith('float')));
  t.same(floats.map((n) => String(n.op)), [], `${what}: nothing but lengths computed (${opNames(fn).join(', ')})`);
  for (const cls of computes) t.notOk(nodes.some((n) => n.op instanceof cls), `${what}: no ${cls.name}`);
  t.notOk(fn.fgraph.toposort().some((n) => n.op instanceof Shape), `${what}: no Shape node`);
  t.same(weft.tolist(await fn(...(args as weft.InputValue[]))), want, `${what}: lengths`);
  // And the same as x.shape without the lifting (FAST_RUN without shape_lift computes f(x)).
  const plain = await weft.compile(inputs, pt.shape(out), { onUnusedInput: 'ignore', mode: new weft.Mode({ excluding: ['shape_lift'] }) });
  t.ok(plain.fgraph.toposort().some((n) => n.op instanceof Shape), `${what}: without shape_lift, Shape stays`);
  t.same(weft.tolist(await plain(...(args as weft.InputValue[]))), want, `${what}: lengths without the lifting`);
  return fn;
}

const r = rng(404);

t.test('shape(f(x)) does not compute f(x)', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const v = pt.vector('v');
  const xv = r.normal([3, 4]);
  const yv = r.normal([4, 5]);
  const fn = await liftedShape(t, [x], pt.exp(x), [xv], [3, 4], [], 'exp');
  t.equal(weft.debugprint(fn), 'MakeVector [id A]   2\n |Shape_i{0} [id B]   0\n | |x [id C]\n |Shape_i{1} [id D]   1\n   |x [id C]');
  await liftedShape(t, [x, y], pt.dot(pt.exp(x), y), [xv, yv], [3, 5], [Dot], 'dot');
  await liftedShape(t, [x], pt.sum(pt.tanh(x), { axis: 0 }), [xv], [4], [], 'sum over axis 0');
  await liftedShape(t, [x], pt.exp(x).dimshuffle(1, 'x', 0), [xv], [4, 1, 3], [], 'dimshuffle');
  await liftedShape(t, [x, v], pt.add(pt.exp(x), v), [xv, r.normal([4])], [3, 4], [], 'broadcast add');
  await liftedShape(t, [x], pt.reshape(pt.exp(x), [2, -1]), [xv], [2, 6], [], 'reshape');
  await liftedShape(t, [x, y], pt.concatenate([pt.exp(x), y.T], 0), [xv, yv], [8, 4], [], 'concatenate');
  await liftedShape(t, [x], pt.exp(x).get(weft.slice(1, null), weft.slice(null, null, 2)), [xv], [2, 2], [], 'subtensor');
  await liftedShape(t, [x], pt.exp(x).get(-1), [xv], [4], [], 'an integer index');
  await liftedShape(t, [x], pt.flatten(pt.exp(x)), [xv], [12], [], 'flatten');
  // A shape that is fully static folds to a constant.
  const s = pt.tensor({ shape: [2, 3], name: 's' });
  const cs = await weft.compile([s], pt.shape(pt.exp(s)), { onUnusedInput: 'ignore' });
  t.equal(weft.debugprint(cs), 'DeepCopyOp [id A]   0\n |TensorConstant{[2,3]} [id B]');
  // A 0-d tensor has the empty shape.
  const a = pt.scalar('a');
  const c0 = await weft.compile([a], pt.shape(pt.exp(a)), { onUnusedInput: 'ignore' });
  t.notOk(c0.fgraph.toposort().some((n) => n.op instanceof Elemwise), '0-d: exp not computed');
  t.same(weft.tolist(await c0(2)), []);
});

t.test('x.shape after reshape, concatenate, dot, subtensor: values of the lifted lengths', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const cases: Array<[string, TV, number[][], number[]]> = [
    ['reshape to [-1, 3]', pt.reshape(x, [-1, 3]), [[2, 6], [1, 1]], [4, 3]],
    ['reshape to [3, 2, 2]', pt.reshape(x, [3, 2, 2]), [[2, 6], [1, 1]], [3, 2, 2]],
    ['concatenate on axis 1', pt.concatenate([x, y, x], 1), [[2, 3], [2, 5]], [2, 11]],
    ['dot', pt.dot(x, y.T), [[2, 3], [7, 3]], [2, 7]],
    ['stack', pt.stack([x, y]), [[2, 3], [2, 3]], [2, 2, 3]],
    ['subtensor of a slice', x.get(weft.slice(null, -1)), [[4, 3], [1, 1]], [3, 3]],
    ['subtensor with a step', x.get(weft.slice(null, null, -2), 1), [[5, 3], [1, 1]], [3]],
    ['an empty slice', x.get(weft.slice(3, 1)), [[4, 3], [1, 1]], [0, 3]],
  ];
  for (const [what, out, shapes, want] of cases) {
    const args = shapes.map((s) => r.normal(s)) as [weft.NdArray, weft.NdArray];
    const fn = await weft.compile([x, y], pt.shape(out), { onUnusedInput: 'ignore' });
    t.same(weft.tolist(await fn(...args)), want, what);
    const value = await (await weft.compile([x, y], out, { onUnusedInput: 'ignore' }))(...args);
    t.same(value.shape, want, `${what}: the tensor agrees`);
  }
  // Lengths used in arithmetic: mean by hand.
  const m = pt.trueDiv(pt.sum(x), pt.cast(pt.prod(pt.shape(pt.exp(x))), 'float64'));
  const fm = await weft.compile([x], m);
  t.notOk(fm.fgraph.toposort().some((n) => String(n.op) === 'Elemwise{exp}'), 'exp not computed for its shape');
  t.same(weft.tolist(await fm([[1, 2, 3], [4, 5, 6]])), 3.5);
});

t.test('Shape_i of an input stays; x.shape[i] becomes Shape_i', async (t) => {
  const x = pt.matrix('x');
  const fn = await weft.compile([x], pt.shape(x));
  t.same(opNames(fn), ['Shape_i{0}', 'Shape_i{1}', 'MakeVector']);
  t.same(weft.tolist(await fn([[1, 2, 3]])), [1, 3]);
  const f0 = await weft.compile([x], pt.shape(pt.exp(x)).get(1));
  t.equal(weft.debugprint(f0), 'Shape_i{1} [id A]   0\n |x [id B]');
  t.same(weft.tolist(await f0([[1, 2, 3]])), 3);
  const fneg = await weft.compile([x], pt.shape(pt.exp(x)).get(-2));
  t.equal(weft.debugprint(fneg), 'Shape_i{0} [id A]   0\n |x [id B]');
  // A symbolic index: left to the Subtensor (and its run-time range check).
  const k = pt.scalar('k', 'int32');
  const bad = await weft.compile([x, k], pt.shape(x).get(k));
  t.ok(bad.fgraph.toposort().some((n) => String(n.op).startsWith('Subtensor')), 'a symbolic index stays a Subtensor');
  // The lifting in FAST_COMPILE too (it is canonicalization).
  const fc = await weft.compile([x], pt.shape(pt.exp(x)), { mode: 'FAST_COMPILE' });
  t.same(opNames(fc), ['Shape_i{0}', 'Shape_i{1}', 'MakeVector']);
});

t.test('ShapeFeature: symbolic shapes from inputs, and forgetting them when the graph changes', async (t) => {
  const a = pt.matrix('a');
  const b = pt.matrix('b');
  const c = pt.matrix('c');
  const prod = pt.dot(a, b);
  const out = pt.exp(prod);
  const fg = new weft.FunctionGraph([a, b, c], [out], { clone: false });
  const feature = shapeFeatureOf(fg);
  t.type(feature, ShapeFeature);
  t.equal(shapeFeatureOf(fg), feature, 'attached once');
  const dims = feature.shapeOf(out);
  t.same(dims.map((d) => String(d.owner?.op)), ['Shape_i{0}', 'Shape_i{1}']);
  t.equal(dims[0]!.owner!.inputs[0], a, 'rows of a');
  t.equal(dims[1]!.owner!.inputs[0], b, 'columns of b');
  t.equal(feature.shapeOf(out), dims, 'cached');
  // Static lengths are constants.
  const s = pt.tensor({ shape: [2, null], name: 's' });
  const sd = feature.shapeOf(s);
  t.equal(String(sd[0]), 'TensorConstant{2}');
  t.equal(String(sd[1]!.owner!.op), 'Shape_i{1}');
  // Replacing a . b by c: exp's shape now comes from c.
  fg.replace(prod, c, { reason: 'test' });
  const after = feature.shapeOf(out);
  t.not(after, dims, 'recomputed');
  t.same(after.map((d) => d.owner?.inputs[0]), [c, c]);
  t.same(after.map((d) => (d.owner!.op as ShapeI).i), [0, 1]);
  fg.removeFeature(feature);
  t.not(shapeFeatureOf(fg), feature, 'a new feature after detaching');
});

t.test('shape lifting leaves the computation alone when the tensor is also needed', async (t) => {
  const x = pt.matrix('x');
  const e = pt.exp(x);
  const fn = await weft.compile([x], [e, pt.shape(e)]);
  t.equal(fn.fgraph.toposort().filter((n) => String(n.op) === 'Elemwise{exp}').length, 1, 'exp computed once, for the output');
  const [ev, sv] = await fn([[0, 1]]);
  t.same(weft.tolist(sv!), [1, 2]);
  t.same(weft.tolist(ev!), [[1, Math.E]]);
});
