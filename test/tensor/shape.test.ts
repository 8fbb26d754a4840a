// Shape and Shape_i: a tensor's lengths as an int32 vector (pt.shape, x.shape) or one int32
// scalar; static lengths become constants; inferShape, no gradient (disconnected), no tangent
// (Rop), and bad axes.
import ndarray from 'ndarray';
import t from 'tap';
import { shapeI, shapeOf } from '../../src/tensor/shape/shape.js';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

t.test('shape values', async (t) => {
  const x = pt.matrix('x');
  const s = await run([x], pt.shape(x), [[[1, 2, 3], [4, 5, 6]]]);
  t.equal(s.data.constructor.name, 'Int32Array');
  near(t, s, [2, 3]);
  near(t, await run([x], x.shape, [[[1, 2, 3], [4, 5, 6]]]), [2, 3]);
  const y = pt.tensor3('y');
  near(t, await run([y], y.shape, [ndarray(new Float64Array(0), [2, 0, 5])]), [2, 0, 5], 0, 'an empty input');
  const z = pt.scalar('z');
  const zs = await run([z], pt.shape(z), [3]);
  t.same(zs.shape, [0], 'a 0-d input has an empty shape');
  // A non-contiguous value, and a view in the graph.
  const transposed = ndarray(new Float64Array(6), [3, 2], [1, 3]);
  near(t, await run([x], x.shape, [transposed]), [3, 2]);
  near(t, await run([y], y.T.shape, [ndarray(new Float64Array(24), [2, 3, 4])]), [4, 3, 2]);
  const b = pt.vector('b', 'bool');
  near(t, await run([b], b.shape, [[true, false, true]]), [3], 0, 'any dtype');
  near(t, await run([], pt.shape(pt.constant([[1, 2, 3]])), []), [1, 3], 0, 'a constant');
});

t.test('shape types', async (t) => {
  t.equal(String(pt.shape(pt.matrix()).type), 'TensorType(int32, (2,))');
  t.equal(String(pt.tensor4().shape.type), 'TensorType(int32, (4,))');
  t.equal(String(pt.shape(pt.scalar()).type), 'TensorType(int32, (0,))');
  t.equal(String(pt.shape(pt.matrix()).owner?.op), 'Shape');
});

t.test('Shape_i and symbolic shapes', async (t) => {
  const x = pt.tensor({ shape: [null, 4, null], name: 'x' });
  const value = ndarray(new Float64Array(2 * 4 * 7), [2, 4, 7]);
  const s0 = shapeI(x, 0);
  t.equal(String(s0.owner?.op), 'Shape_i{0}');
  t.equal(String(s0.type), 'TensorType(int32, ())');
  near(t, await run([x], s0, [value]), 2);
  near(t, await run([x], shapeI(x, -1), [value]), 7, 0, 'a negative axis counts from the end');
  t.equal(shapeI(x, 1).owner, null, 'a static length is a constant');
  near(t, await run([x], shapeI(x, 1), [value]), 4);
  t.equal(shapeI(x, 0).owner!.op, shapeI(x, -3).owner!.op, 'one op instance per axis');
  const lengths = shapeOf(x);
  t.same(lengths.map((v) => String(v.owner?.op ?? 'constant')), ['Shape_i{0}', 'constant', 'Shape_i{2}']);
  const [a, b, c] = await weft.compile([x], lengths).then((f) => f(value));
  t.same([a!.data[0], b!.data[0], c!.data[0]], [2, 4, 7]);
});

t.test('inferShape', async (t) => {
  const x = pt.tensor3('x');
  const value = rng(1).normal([2, 3, 4]);
  t.equal(await weft.checkInferShape([x], [pt.shape(x)], [value]), 1);
  t.equal(await weft.checkInferShape([x], [shapeI(x, 1)], [value]), 1);
  t.equal(await weft.checkInferShape([x], [pt.shape(x.sum({ axis: 0 }))], [value]), 2);
});

t.test('gradients: lengths are not differentiable', async (t) => {
  const r = rng(2);
  const a = r.normal([3, 4]);
  const x = pt.matrix('x');
  const size = pt.cast(pt.prod(pt.shape(x)), 'float64');
  // d (sum(x) * size) / dx = size everywhere: no gradient flows through the shape.
  near(t, await run([x], weft.grad(pt.sum(x).mul(size), x), [a]), Array.from({ length: 3 }, () => [12, 12, 12, 12]));
  await weft.verifyGrad((v) => v.mul(pt.cast(pt.sum(pt.shape(v)), 'float64')), [a]);
  await weft.verifyGrad((v) => v.div(pt.cast(shapeI(v, 0), 'float64')), [a]);
  await throwsExactly(t, () => weft.grad(size, x), weft.DisconnectedInputError,
    'grad was asked for the gradient with respect to m, which is not part of the graph of the cost or is used only by non-differentiable operations (pass disconnectedInputs: "ignore" or "warn" to allow this)'.replace('to m,', 'to x,'));
  const g = weft.grad(size, x, { disconnectedInputs: 'ignore' });
  near(t, await run([x], g, [a]), Array.from({ length: 3 }, () => [0, 0, 0, 0]));
});

t.test('Rop: no tangent flows through a shape', async (t) => {
  const a = rng(3).normal([3, 4]);
  await weft.checkRop((v) => v.mul(pt.cast(pt.sum(pt.shape(v)), 'float64')), [a]);
  await weft.checkRop((v) => pt.mean(v, { axis: 1 }), [a]);
  const x = pt.matrix('x');
  const ev = pt.matrix('ev');
  const jv = weft.Rop(pt.cast(pt.sum(x.shape), 'float64'), x, ev) as weft.pt.TensorVariable;
  near(t, await run([x, ev], jv, [a, a]), 0);
});

t.test('bad axes', async (t) => {
  const x = pt.matrix('x');
  const op = shapeI(pt.tensor3('y'), 2).owner!.op;
  await throwsExactly(t, () => op.makeNode(x), RangeError, 'Shape_i{2}: axis 2 is out of range for x (TensorType(float64, (?, ?)), 2 axes)');
  await throwsExactly(t, () => shapeI(x, 2), RangeError, 'Shape_i: axis 2 is out of range for x (TensorType(float64, (?, ?)), 2 axes)');
  await throwsExactly(t, () => shapeI(x, -3), RangeError, 'Shape_i: axis -3 is out of range for x (TensorType(float64, (?, ?)), 2 axes)');
});
