// Reshape and flatten: values against hand-written C-order layouts, -1 inference (constant and
// symbolic), static shapes, views of contiguous inputs and copies of others, 0-d and empty
// arrays, inferShape, gradients, Rop and bad input with exact messages.
import ndarray from 'ndarray';
import t from 'tap';
import { Reshape } from '../../src/tensor/shape/reshape.js';
import { dataKind, near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

const M23 = [[1, 2, 3], [4, 5, 6]];

t.test('reshape: values in C order, with and without -1', async (t) => {
  const x = pt.matrix('x');
  near(t, await run([x], pt.reshape(x, [3, 2]), [M23]), [[1, 2], [3, 4], [5, 6]]);
  near(t, await run([x], pt.reshape(x, [-1]), [M23]), [1, 2, 3, 4, 5, 6]);
  near(t, await run([x], pt.reshape(x, [1, -1, 2]), [M23]), [[[1, 2], [3, 4], [5, 6]]]);
  near(t, await run([x], x.reshape([6, 1]), [M23]), [[1], [2], [3], [4], [5], [6]]);
});

t.test('reshape: dtypes are kept (float32, int32, uint8, bool)', async (t) => {
  for (const [dtype, kind] of [['float32', 'Float32Array'], ['int32', 'Int32Array'], ['uint8', 'Uint8Array'], ['bool', 'Uint8Array']] as const) {
    const x = pt.matrix('x', dtype);
    const value = dtype === 'bool' ? [[1, 0, 1], [0, 0, 1]] : M23;
    const out = await run([x], pt.reshape(x, [3, 2]), [value]);
    t.equal(dataKind(out), kind, `${dtype} storage`);
    near(t, out, dtype === 'bool' ? [[1, 0], [1, 0], [0, 1]] : [[1, 2], [3, 4], [5, 6]], 0, dtype);
  }
});

t.test('reshape: a non-contiguous input is read in its logical C order', async (t) => {
  const x = pt.matrix('x');
  // x.T of [[1,2,3],[4,5,6]] is [[1,4],[2,5],[3,6]]
  near(t, await run([x], pt.reshape(x.T, [-1]), [M23]), [1, 4, 2, 5, 3, 6]);
  near(t, await run([x], pt.reshape(x.T, [2, 3]), [M23]), [[1, 4, 2], [5, 3, 6]]);
  const y = pt.tensor3('y');
  const value = [[[0, 1], [2, 3]], [[4, 5], [6, 7]]];
  // transposed axes (2, 1, 0): element [i][j][k] = value[k][j][i]
  near(t, await run([y], pt.flatten(y.T), [value]), [0, 4, 2, 6, 1, 5, 3, 7]);
});

t.test('reshape: a view of a contiguous input, a copy of any other', async (t) => {
  const x = pt.matrix('x');
  const out = pt.reshape(x, [3, 2]);
  const node = out.owner!;
  const data = Float64Array.of(9, 1, 2, 3, 4, 5, 6);
  const offsetView = ndarray(data, [2, 3], [3, 1], 1);
  const [view] = node.op.perform(node, [offsetView, (node.inputs[1] as weft.pt.TensorConstant).data]) as weft.NdArray[];
  t.equal(view!.data, data, 'same data');
  t.equal(view!.offset, 1, 'same offset');
  near(t, view!, [[1, 2], [3, 4], [5, 6]]);
  t.same(node.op.viewMap, { 0: [0] });
  const transposed = ndarray(Float64Array.of(1, 4, 2, 5, 3, 6), [2, 3], [1, 2], 0);
  const [copy] = node.op.perform(node, [transposed, (node.inputs[1] as weft.pt.TensorConstant).data]) as weft.NdArray[];
  t.not(copy!.data, transposed.data, 'a copy');
  near(t, copy!, [[1, 2], [3, 4], [5, 6]]);
});

t.test('reshape: symbolic target lengths', async (t) => {
  const x = pt.matrix('x');
  const n = pt.scalar('n', 'int32');
  near(t, await run([x, n], pt.reshape(x, [n, -1]), [M23, 3]), [[1, 2], [3, 4], [5, 6]]);
  near(t, await run([x, n], pt.reshape(x, [n, 3]), [M23, -1]), [[1, 2, 3], [4, 5, 6]], 0, 'a -1 that is only known at run time');
  const y = pt.matrix('y');
  near(t, await run([x, y], pt.reshape(x, y.shape), [M23, [[0, 0], [0, 0], [0, 0]]]), [[1, 2], [3, 4], [5, 6]], 0, 'y.shape');
  const s = pt.tensor({ shape: [2], dtype: 'int32', name: 's' });
  near(t, await run([x, s], pt.reshape(x, s), [M23, [2, 3]]), M23, 0, 'an int vector');
  const k = pt.scalar('k', 'int8');
  near(t, await run([x, k], pt.reshape(x, k), [M23, 6]), [1, 2, 3, 4, 5, 6], 0, 'a scalar int variable');
});

t.test('reshape: static shapes where the target lengths are constants', async (t) => {
  const n = pt.scalar('n', 'int32');
  t.same(pt.reshape(pt.matrix('x'), [3, -1]).type.shape, [3, null]);
  t.same(pt.reshape(pt.tensor({ shape: [2, 3] }), [3, -1]).type.shape, [3, 2]);
  t.same(pt.reshape(pt.tensor({ shape: [2, 3] }), [n, 2]).type.shape, [null, 2]);
  t.same(pt.reshape(pt.tensor({ shape: [2, null] }), [-1]).type.shape, [null]);
  const y = pt.tensor({ shape: [4, 5] });
  t.same(pt.reshape(pt.vector('v'), y.shape).type.shape, [4, 5], 'from the static shape of y');
  t.same(pt.reshape(pt.vector('v'), [n, 1]).type.broadcastable, [false, true]);
  t.equal(pt.reshape(pt.vector('v', 'float32'), [2, -1]).dtype, 'float32');
});

t.test('reshape: 0-d and empty arrays', async (t) => {
  const s = pt.scalar('s');
  near(t, await run([s], pt.reshape(s, [1, 1]), [7]), [[7]]);
  near(t, await run([s], pt.reshape(s, [-1]), [7]), [7]);
  const v = pt.vector('v');
  const out = await run([v], pt.reshape(v, []), [[7]]);
  t.same(out.shape, []);
  t.equal(weft.tolist(out), 7);
  const x = pt.matrix('x');
  const e = await run([x], pt.reshape(x, [3, 0]), [ndarray(new Float64Array(0), [0, 3])]);
  t.same(e.shape, [3, 0]);
  const f = await run([x], pt.reshape(x, [-1]), [ndarray(new Float64Array(0), [0, 3])]);
  t.same(f.shape, [0]);
  const g = await run([x], pt.reshape(x, [2, -1, 0]), [ndarray(new Float64Array(0), [0, 3])]).catch((err: Error) => err);
  t.type(g, weft.NodeError, 'a -1 next to a 0 cannot be inferred');
});

t.test('flatten: keeps the first ndim - 1 axes', async (t) => {
  const x = pt.tensor3('x');
  const value = [[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]];
  near(t, await run([x], pt.flatten(x), [value]), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  near(t, await run([x], x.flatten(2), [value]), [[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12]]);
  near(t, await run([x], pt.flatten(x, 3), [value]), value);
  const s = pt.scalar('s');
  near(t, await run([s], pt.flatten(s), [5]), [5]);
  t.same(pt.flatten(pt.tensor({ shape: [null, 2, 3] }), 2).type.shape, [null, 6]);
  t.same(pt.flatten(pt.tensor({ shape: [4, null, 3] }), 2).type.shape, [4, null]);
  t.same(pt.flatten(pt.tensor({ shape: [4, 2, 3] })).type.shape, [24]);
  const e = await run([x], pt.flatten(x, 2), [ndarray(new Float64Array(0), [0, 3, 2])]);
  t.same(e.shape, [0, 6], 'an empty input');
});

t.test('reshape and flatten: inferShape', async (t) => {
  const r = rng(1);
  const a = r.normal([2, 3]);
  const x = pt.matrix('x');
  const n = pt.scalar('n', 'int32');
  const y = pt.matrix('y');
  const s = pt.tensor({ shape: [3], dtype: 'int32', name: 's' });
  t.equal(await weft.checkInferShape([x], [pt.reshape(x, [3, -1])], [a], Reshape), 1);
  t.equal(await weft.checkInferShape([x], [pt.reshape(x.T, [-1])], [a], Reshape), 1);
  t.equal(await weft.checkInferShape([x, n], [pt.reshape(x, [n, -1])], [a, 2], Reshape), 1);
  t.equal(await weft.checkInferShape([x, n], [pt.reshape(x, [n, 2])], [a, -1], Reshape), 1, 'a runtime -1');
  t.equal(await weft.checkInferShape([x, n], [pt.reshape(x, [n, 2])], [a, 3], Reshape), 1);
  t.equal(await weft.checkInferShape([x, y], [pt.reshape(x, y.shape)], [a, r.normal([3, 2])], Reshape), 1);
  t.equal(await weft.checkInferShape([x, s], [pt.reshape(x, s)], [a, [1, -1, 2]], Reshape), 1, 'a symbolic int vector');
  t.equal(await weft.checkInferShape([x], [pt.flatten(x)], [a], Reshape), 1);
  t.equal(await weft.checkInferShape([x], [pt.reshape(x, [3, 0])], [ndarray(new Float64Array(0), [0, 3])], Reshape), 1, 'an empty input');
});

t.test('reshape: grad and Rop (float64 and float32, contiguous and transposed)', async (t) => {
  const r = rng(2);
  const a = r.normal([2, 3]);
  const b = r.normal([3, 4], { dtype: 'float32' });
  await weft.verifyGrad((x) => pt.reshape(x, [3, -1]), [a]);
  await weft.verifyGrad((x) => pt.reshape(x.T, [-1]).mul(pt.reshape(x, [-1])), [a]);
  await weft.verifyGrad((x) => pt.flatten(x.T).exp(), [b]);
  await weft.verifyGrad((x) => pt.reshape(x, [2, 2, 3]).sum({ axis: 1 }), [b]);
  await weft.checkRop((x) => pt.reshape(x, [3, -1]), [a]);
  await weft.checkRop((x) => pt.flatten(x.T), [b]);
  const x = pt.matrix('x');
  const n = pt.scalar('n', 'int32');
  const g = weft.grad(pt.reshape(x, [n, -1]).sum(), x);
  near(t, await run([x, n], g, [M23, 3]), [[1, 1, 1], [1, 1, 1]], 0, 'gradient of the sum');
});

t.test('reshape: bad input', async (t) => {
  const x = pt.tensor({ shape: [2, 3], name: 'x' });
  await throwsExactly(
    t,
    () => pt.reshape(x, [4, 2]),
    weft.ShapeMismatchError,
    'Reshape{ndim=2}: cannot reshape x of shape [2, 3] (6 elements) into shape [4, 2] (8 elements)',
  );
  await throwsExactly(
    t,
    () => pt.reshape(x, [4, -1]),
    weft.ShapeMismatchError,
    'Reshape{ndim=2}: cannot reshape x of shape [2, 3] (6 elements) into shape [4, -1]: 6 is not a multiple of 4',
  );
  await throwsExactly(
    t,
    () => pt.reshape(x, [-1, 2, -1]),
    RangeError,
    'Reshape{ndim=3}: the target shape [-1, 2, -1] has more than one -1 (only one length can be inferred)',
  );
  await throwsExactly(
    t,
    () => pt.reshape(x, [-2, 3]),
    RangeError,
    'Reshape{ndim=2}: the target shape [-2, 3] has the negative length -2 (only -1 is allowed, for one length to be inferred)',
  );
  await throwsExactly(t, () => pt.reshape(x, [2.5, 2]), TypeError, 'reshape: shape[0]: expected an integer, got 2.5');
  const f = pt.scalar('f');
  await throwsExactly(
    t,
    () => pt.reshape(x, [f, 2]),
    TypeError,
    'reshape: shape[0]: expected an integer or a scalar integer variable, got f (TensorType(float64, ()))',
  );
  const iv = pt.vector('iv', 'int32');
  await throwsExactly(
    t,
    () => pt.reshape(x, iv),
    TypeError,
    'reshape: a shape given as a variable must be an int vector of static length, got iv (TensorType(int32, (?,)))',
  );
  await throwsExactly(
    t,
    () => pt.reshape(x, pt.vector('fv')),
    TypeError,
    'reshape: a shape given as a variable must be an int vector of static length, got fv (TensorType(float64, (?,)))',
  );
  await throwsExactly(t, () => pt.flatten(x, 3), RangeError, 'flatten: ndim must be an integer from 1 to 2 for x (2-d), got 3');
  await throwsExactly(t, () => pt.flatten(x, 0), RangeError, 'flatten: ndim must be an integer from 1 to 2 for x (2-d), got 0');
});

t.test('reshape: bad values at run time', async (t) => {
  const x = pt.matrix('x');
  const s = pt.tensor({ shape: [2], dtype: 'int32', name: 's' });
  const context = (shape: string): string => `\n  in node 0: Reshape{ndim=2}(x, s)\n  input values: float64 ${shape}, int32 [2]`;
  const cases: Array<[unknown, number[], string]> = [
    [M23, [4, 2], 'Reshape{ndim=2}: cannot reshape an array of shape [2, 3] (6 elements) into shape [4, 2] (8 elements)' + context('[2, 3]')],
    [M23, [4, -1], 'Reshape{ndim=2}: cannot reshape an array of shape [2, 3] (6 elements) into shape [4, -1]: 6 is not a multiple of 4' + context('[2, 3]')],
    [M23, [-1, -1], 'Reshape{ndim=2}: the target shape [-1, -1] has more than one -1 (only one length can be inferred)' + context('[2, 3]')],
    [M23, [-3, -2], 'Reshape{ndim=2}: the target shape [-3, -2] has the negative length -3 (only -1 is allowed, for one length to be inferred)' + context('[2, 3]')],
    [
      ndarray(new Float64Array(0), [0, 3]),
      [-1, 0],
      'Reshape{ndim=2}: cannot infer the -1 in the target shape [-1, 0] for an array of shape [0, 3]: the other lengths multiply to 0' + context('[0, 3]'),
    ],
  ];
  for (const [value, target, message] of cases) {
    await throwsExactly(t, () => run([x, s], pt.reshape(x, s), [value, target]), weft.NodeError, message, `target ${target}`);
  }
});
