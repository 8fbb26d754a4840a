// Join (concatenate, stack) and Split: values against hand-written results, dtype upcasting with
// weak literals, static shapes, views, non-contiguous and empty inputs, inferShape, gradients
// (missing output gradients of split become zeros), Rop and bad input with exact messages.
import ndarray from 'ndarray';
import t from 'tap';
import { Join, Split } from '../../src/tensor/shape/join.js';
import { dataKind, near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

const A = [[1, 2, 3], [4, 5, 6]];
const B = [[7, 8, 9]];
const C = [[10], [20]];

t.test('concatenate: values along each axis', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  near(t, await run([x, y], pt.concatenate([x, y]), [A, B]), [[1, 2, 3], [4, 5, 6], [7, 8, 9]]);
  near(t, await run([x, y], pt.concatenate([x, y], 1), [A, C]), [[1, 2, 3, 10], [4, 5, 6, 20]]);
  near(t, await run([x, y], pt.concatenate([y, x, y], -1), [A, C]), [[10, 1, 2, 3, 10], [20, 4, 5, 6, 20]]);
  const v = pt.vector('v');
  near(t, await run([v], pt.concatenate([v, v]), [[1, 2]]), [1, 2, 1, 2]);
  const z = pt.tensor3('z');
  const value = [[[1, 2]], [[3, 4]]];
  near(t, await run([z], pt.concatenate([z, z], 1), [value]), [[[1, 2], [1, 2]], [[3, 4], [3, 4]]]);
  t.equal(pt.concatenate([x]), x, 'one tensor is returned as it is');
});

t.test('concatenate: non-contiguous and empty inputs', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  // x.T of [[1,2,3],[4,5,6]] is [[1,4],[2,5],[3,6]]
  near(t, await run([x, y], pt.concatenate([x.T, y], 1), [A, [[0], [0], [0]]]), [[1, 4, 0], [2, 5, 0], [3, 6, 0]]);
  near(t, await run([x, y], pt.concatenate([x.T, y.T]), [A, [[7], [8]]]), [[1, 4], [2, 5], [3, 6], [7, 8]]);
  const empty = ndarray(new Float64Array(0), [0, 3]);
  near(t, await run([x, y], pt.concatenate([x, y]), [empty, A]), A);
  const both = await run([x, y], pt.concatenate([x, y]), [empty, empty]);
  t.same(both.shape, [0, 3]);
});

t.test('concatenate: dtypes are upcast, JS literals are weak', async (t) => {
  const f32 = pt.matrix('f32', 'float32');
  const f64 = pt.matrix('f64');
  const i8 = pt.matrix('i8', 'int8');
  const i32 = pt.matrix('i32', 'int32');
  const b = pt.matrix('b', 'bool');
  t.equal(pt.concatenate([f32, f64]).dtype, 'float64');
  t.equal(pt.concatenate([i8, f32]).dtype, 'float32');
  t.equal(pt.concatenate([i32, f32]).dtype, 'float64');
  t.equal(pt.concatenate([b, i8]).dtype, 'int8');
  t.equal(pt.concatenate([f32, [[1, 2, 3]]]).dtype, 'float32', 'a literal next to float32');
  t.equal(pt.concatenate([i8, [[1, 2, 3]]]).dtype, 'int8', 'small integers next to int8');
  t.equal(pt.concatenate([i8, [[1000, 2, 3]]]).dtype, 'int16', 'an integer that int8 cannot hold');
  const out = await run([i8, f32], pt.concatenate([i8, f32]), [[[-3, 4]], [[0.5, 1.5]]]);
  t.equal(dataKind(out), 'Float32Array');
  near(t, out, [[-3, 4], [0.5, 1.5]]);
  const mixed = await run([b, i32], pt.concatenate([b, i32], 1), [[[1, 0]], [[7]]]);
  t.equal(dataKind(mixed), 'Int32Array');
  near(t, mixed, [[1, 0, 7]]);
  near(t, await run([f32], pt.concatenate([f32, [[9, 8]]]), [[[1, 2]]]), [[1, 2], [9, 8]]);
});

t.test('concatenate: static shapes', async (t) => {
  const a = pt.tensor({ shape: [2, null] });
  const b = pt.tensor({ shape: [3, 4] });
  const c = pt.tensor({ shape: [null, 4] });
  t.same(pt.concatenate([a, b]).type.shape, [5, 4]);
  t.same(pt.concatenate([a, c]).type.shape, [null, 4]);
  t.same(pt.concatenate([b, c], 1).type.shape, [3, 8]);
  t.same(pt.concatenate([b, b], -1).type.shape, [3, 8]);
  t.equal(String(pt.concatenate([a, b]).owner!.op), 'Join{axis=0}');
  t.equal(String(pt.concatenate([b, b], -1).owner!.op), 'Join{axis=1}', 'the axis is normalized');
});

t.test('stack: a new axis', async (t) => {
  const s = pt.scalar('s');
  const u = pt.scalar('u');
  near(t, await run([s, u], pt.stack([s, u, 3]), [1, 2]), [1, 2, 3]);
  const v = pt.vector('v');
  const w = pt.vector('w');
  near(t, await run([v, w], pt.stack([v, w]), [[1, 2], [3, 4]]), [[1, 2], [3, 4]]);
  near(t, await run([v, w], pt.stack([v, w], 1), [[1, 2], [3, 4]]), [[1, 3], [2, 4]]);
  near(t, await run([v, w], pt.stack([v, w], -1), [[1, 2], [3, 4]]), [[1, 3], [2, 4]]);
  near(t, await run([v], pt.stack([v]), [[5, 6]]), [[5, 6]]);
  const x = pt.matrix('x');
  // x.T of A: [[1,4],[2,5],[3,6]]; stacking x.T twice along axis 1 gives [i][k][j] = x.T[i][j]
  near(t, await run([x], pt.stack([x.T, x.T], 1), [A]), [[[1, 4], [1, 4]], [[2, 5], [2, 5]], [[3, 6], [3, 6]]]);
  t.same(pt.stack([s, u, 3]).type.shape, [3]);
  t.same(pt.stack([x, x, x], 2).type.shape, [null, null, 3]);
  t.equal(pt.stack([pt.scalar('a', 'int8'), 2]).dtype, 'int8');
});

t.test('split: values, symbolic sizes, empty pieces', async (t) => {
  const x = pt.matrix('x');
  const [p, q] = pt.split(x, [1, 2], 1);
  near(t, await run([x], p!, [A]), [[1], [4]]);
  near(t, await run([x], q!, [A]), [[2, 3], [5, 6]]);
  const [r0, r1] = pt.split(x, [2, 0]);
  near(t, await run([x], r0!, [A]), A);
  t.same((await run([x], r1!, [A])).shape, [0, 3], 'an empty piece');
  const n = pt.scalar('n', 'int32');
  const [s0, s1] = pt.split(x, [n, 1], -1);
  near(t, await run([x, n], s0!, [A, 2]), [[1, 2], [4, 5]]);
  near(t, await run([x, n], s1!, [A, 2]), [[3], [6]]);
  const sizes = pt.tensor({ shape: [3], dtype: 'int32', name: 'sizes' });
  const parts = pt.split(pt.vector('v'), sizes);
  t.equal(parts.length, 3);
  const v = parts[0]!.owner!.inputs[0] as weft.pt.TensorVariable;
  const values = await (await weft.compile([v, sizes], parts))([10, 20, 30, 40, 50], [2, 0, 3]);
  near(t, values[0]!, [10, 20]);
  t.same(values[1]!.shape, [0]);
  near(t, values[2]!, [30, 40, 50]);
  near(t, await run([x], pt.split(x.T, [1, 2])[1]!, [A]), [[2, 5], [3, 6]], 0, 'a transposed input');
  const [only] = pt.split(x, [2]);
  near(t, await run([x], only!, [A]), A, 0, 'one piece');
});

t.test('split: static shapes and views', async (t) => {
  const x = pt.tensor({ shape: [4, 5] });
  const n = pt.scalar('n', 'int32');
  const parts = pt.split(x, [n, 3], 1);
  t.same(parts.map((p) => p.type.shape), [[4, null], [4, 3]]);
  const node = pt.split(pt.matrix('m'), [1, 2], 1)[0]!.owner!;
  t.same(node.op.viewMap, { 0: [0], 1: [0] });
  const data = Float64Array.of(0, 1, 2, 3, 4, 5, 6);
  const value = ndarray(data, [2, 3], [3, 1], 1);
  const outs = node.op.perform(node, [value, (node.inputs[1] as weft.pt.TensorConstant).data]) as weft.NdArray[];
  t.ok(outs.every((o) => o.data === data), 'every piece shares the input data');
  near(t, outs[0]!, [[1], [4]]);
  near(t, outs[1]!, [[2, 3], [5, 6]]);
  t.equal(String(node.op), 'Split{nSplits=2, axis=1}');
});

t.test('join and split: inferShape', async (t) => {
  const r = rng(3);
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const n = pt.scalar('n', 'int32');
  const a = r.normal([2, 3]);
  const b = r.normal([4, 3]);
  t.equal(await weft.checkInferShape([x, y], [pt.concatenate([x, y])], [a, b], Join), 1);
  t.equal(await weft.checkInferShape([x, y], [pt.concatenate([x.T, y.T], 1)], [a, b], Join), 1);
  t.equal(await weft.checkInferShape([x], [pt.stack([x, x], 1)], [a], Join), 1);
  t.equal(await weft.checkInferShape([x, n], [...pt.split(x, [n, 1], 1)], [a, 2], Split), 1);
  t.equal(await weft.checkInferShape([x], [...pt.split(x, [0, 2])], [a], Split), 1);
  const sizes = pt.tensor({ shape: [2], dtype: 'int32', name: 'sizes' });
  t.equal(await weft.checkInferShape([x, sizes], [...pt.split(x, sizes, 1)], [a, [1, 2]], Split), 1, 'sizes as an int vector');
  const empty = ndarray(new Float64Array(0), [0, 3]);
  t.equal(await weft.checkInferShape([x, y], [pt.concatenate([x, y])], [empty, empty], Join), 1, 'empty inputs');
});

t.test('join and split: grad and Rop', async (t) => {
  const r = rng(4);
  const a = r.normal([2, 3]);
  const b = r.normal([2, 2]);
  const c = r.normal([3, 2], { dtype: 'float32' });
  const d = r.normal([2, 2], { dtype: 'float32' });
  await weft.verifyGrad((x, y) => pt.concatenate([x, y, x], 1), [a, b]);
  await weft.verifyGrad((x, y) => pt.concatenate([x.T, y], 1).sqr(), [c, d]);
  await weft.verifyGrad((x, y) => pt.stack([x, y], 2).exp(), [b, b]);
  await weft.verifyGrad((x) => pt.concatenate([x, [[1, 2], [3, 4]]], 1), [a], { rng: 5 });
  await weft.verifyGrad((x) => pt.split(x, [1, 1, 1], 1)[1]!, [a]);
  await weft.verifyGrad((x) => {
    const [p, q] = pt.split(x, [2, 1]);
    return p!.sum({ axis: 0 }).mul(q!.get(0));
  }, [r.normal([3, 4])]);
  await weft.verifyGrad((x) => pt.split(x.T, [2, 1], 1)[0]!, [c]);
  await weft.checkRop((x, y) => pt.concatenate([x, y], 1), [a, b]);
  await weft.checkRop((x, y) => pt.stack([x, y]), [b, b]);
  await weft.checkRop((x) => pt.split(x, [1, 2], 1)[1]!, [a]);
  await weft.checkRop((x) => pt.split(x, [2, 1], 0)[0]!, [c]);

  // The gradient of one piece: ones where it came from, zeros for the pieces not used.
  const x = pt.matrix('x');
  const g = weft.grad(pt.split(x, [1, 2], 1)[1]!.sum(), x);
  near(t, await run([x], g, [A]), [[0, 1, 1], [0, 1, 1]]);
  const h = weft.grad(pt.concatenate([x, x.mul(2)]).sum(), x);
  near(t, await run([x], h, [A]), [[3, 3, 3], [3, 3, 3]]);
  const i = pt.matrix('i', 'int32');
  const gi = weft.grad(pt.concatenate([x, i]).sum(), x);
  near(t, await run([x, i], gi, [A, [[1, 1, 1]]]), [[1, 1, 1], [1, 1, 1]], 0, 'next to an int input');
});

t.test('split: Lop with a disconnected output gradient gives zeros there', async (t) => {
  const x = pt.matrix('x');
  const parts = pt.split(x, [1, 2], 1);
  const node = parts[0]!.owner!;
  const gz = pt.matrix('gz');
  const [gx, gs] = node.op.Lop!(node.inputs, node.outputs, [weft.disconnected(), gz]);
  t.ok(gs!.type instanceof weft.DisconnectedType, 'no gradient for the sizes');
  near(t, await run([x, gz], gx as weft.pt.TensorVariable, [A, [[7, 8], [9, 10]]]), [[0, 7, 8], [0, 9, 10]]);
  t.same(node.op.connectionPattern!(node), [[true, true], [false, false]]);
});

t.test('join: bad input', async (t) => {
  const x = pt.tensor({ shape: [2, 3], name: 'x' });
  const y = pt.tensor({ shape: [2, 4], name: 'y' });
  await throwsExactly(
    t,
    () => pt.concatenate([x, y]),
    weft.ShapeMismatchError,
    'Join{axis=0}: input 1 (y, TensorType(float64, (2, 4))) has length 4 on axis 1 where input 0 has 3; joined inputs must have equal lengths on every axis but 0',
  );
  await throwsExactly(
    t,
    () => pt.concatenate([x, pt.vector('v')]),
    TypeError,
    'Join{axis=0}: input 1 (v, TensorType(float64, (?,))) has 1 axes but input 0 has 2; joined inputs must have the same number of axes',
  );
  await throwsExactly(t, () => pt.concatenate([x, y], 2), RangeError, 'concatenate: axis 2 is out of range for a 2-d input (axes are -2..1)');
  await throwsExactly(
    t,
    () => pt.concatenate([pt.scalar('s'), pt.scalar('u')]),
    TypeError,
    'concatenate: cannot join 0-d tensors such as s (stack makes a vector of scalars)',
  );
  await throwsExactly(t, () => pt.concatenate([]), TypeError, 'concatenate: expected at least one tensor');
  await throwsExactly(t, () => pt.stack([]), TypeError, 'stack: expected at least one tensor');
  await throwsExactly(
    t,
    () => pt.stack([x, pt.vector('v')]),
    TypeError,
    'stack: tensor 1 (v, TensorType(float64, (?,))) has 1 axes but tensor 0 has 2; stacked tensors must have the same shape',
  );
  await throwsExactly(t, () => pt.stack([x, x], 3), RangeError, 'stack: axis 3 is out of range for stacking 2-d tensors (axes are -3..2)');
  await throwsExactly(t, () => new Join(0).call(), TypeError, 'Join{axis=0}: expected at least one input');
});

t.test('join: mismatched lengths at run time', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  await throwsExactly(
    t,
    () => run([x, y], pt.concatenate([x, y]), [A, [[1, 2]]]),
    weft.NodeError,
    'Join{axis=0}: input 1 has shape [1, 2] but input 0 has shape [2, 3]: they differ on axis 1 (3 vs 2); all lengths but those on axis 0 must match' +
      '\n  in node 0: Join{axis=0}(x, y)\n  input values: float64 [2, 3], float64 [1, 2]',
  );
});

t.test('split: bad input', async (t) => {
  const x = pt.tensor({ shape: [3, 4], name: 'x' });
  await throwsExactly(
    t,
    () => pt.split(x, [1, 1]),
    weft.ShapeMismatchError,
    'Split{nSplits=2, axis=0}: the sizes [1, 1] add up to 2 but axis 0 of x (TensorType(float64, (3, 4))) has length 3',
  );
  await throwsExactly(t, () => pt.split(x, [4, -1], 1), RangeError, 'Split{nSplits=2, axis=1}: size 1 is negative (-1)');
  await throwsExactly(t, () => pt.split(x, []), RangeError, 'split: expected at least one size');
  await throwsExactly(t, () => pt.split(x, [1.5, 1.5]), TypeError, 'split: sizes[0]: expected an integer, got 1.5');
  await throwsExactly(t, () => pt.split(x, [1, 2], 2), RangeError, 'split: axis 2 is out of range for a 2-d input (axes are -2..1)');
  await throwsExactly(t, () => pt.split(pt.scalar('s'), [1]), TypeError, 'split: cannot split the 0-d tensor s');
  await throwsExactly(
    t,
    () => pt.split(x, pt.vector('sz', 'int32')),
    TypeError,
    'split: sizes given as a variable must be an int vector of static length, got sz (TensorType(int32, (?,)))',
  );
  await throwsExactly(
    t,
    () => new Split(2, 0).call(x, pt.vector('f')),
    TypeError,
    'Split{nSplits=2, axis=0}: the sizes must be an int vector, got f (TensorType(float64, (?,)))',
  );
  await throwsExactly(
    t,
    () => new Split(2, 0).call(x, pt.tensor({ shape: [3], dtype: 'int32', name: 'three' })),
    TypeError,
    'Split{nSplits=2, axis=0}: expected 2 sizes, got a vector of 3',
  );
});

t.test('split: bad sizes at run time', async (t) => {
  const x = pt.matrix('x');
  const sizes = pt.tensor({ shape: [2], dtype: 'int32', name: 'sizes' });
  const [p] = pt.split(x, sizes, 1);
  const context = '\n  in node 0: Split{nSplits=2, axis=1}(x, sizes)\n  input values: float64 [2, 3], int32 [2]';
  await throwsExactly(
    t,
    () => run([x, sizes], p!, [A, [1, 1]]),
    weft.NodeError,
    'Split{nSplits=2, axis=1}: the sizes [1, 1] add up to 2 but axis 1 of the input has length 3 (input shape [2, 3])' + context,
  );
  await throwsExactly(t, () => run([x, sizes], p!, [A, [4, -1]]), weft.NodeError, 'Split{nSplits=2, axis=1}: size 1 is negative (-1)' + context);
});
