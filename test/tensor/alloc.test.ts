// Alloc and the constructors built on it (zeros, ones, zerosLike, onesLike): values, broadcasting
// a value into a shape, static shapes from constant lengths, inferShape, gradients, Rop and bad
// input (values that cannot broadcast, negative lengths, runtime broadcasting refused).
import ndarray from 'ndarray';
import t from 'tap';
import type { Test } from 'tap';
import { broadcastLike } from '../../src/tensor/shape/alloc.js';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

/** `a` is empty with exactly `shape` (nested arrays cannot spell an empty matrix). */
function isEmpty(t: Test, a: weft.NdArray, shape: readonly number[], msg = 'empty'): void {
  t.same(a.shape, shape, `${msg}: shape`);
  t.equal(weft.tolist(a).toString(), '', `${msg}: no elements`);
}

t.test('alloc broadcasts a value into a shape', async (t) => {
  const v = pt.vector('v');
  near(t, await run([v], pt.alloc(v, 2, 3), [[1, 2, 3]]), [[1, 2, 3], [1, 2, 3]]);
  near(t, await run([v], pt.alloc(v, 2, 1, 3), [[1, 2, 3]]), [[[1, 2, 3]], [[1, 2, 3]]]);
  near(t, await run([v], pt.alloc(v, 3), [[1, 2, 3]]), [1, 2, 3], 0, 'same shape: a copy');
  const s = pt.scalar('s');
  near(t, await run([s], pt.alloc(s, 2, 2), [7]), [[7, 7], [7, 7]]);
  near(t, await run([], pt.alloc(2.5, 3), []), [2.5, 2.5, 2.5]);
  const b = pt.tensor({ shape: [1, null], name: 'b' });
  near(t, await run([b], pt.alloc(b, 3, 2), [[[4, 5]]]), [[4, 5], [4, 5], [4, 5]]);
  near(t, await run([b], pt.alloc(b, 2, 1, 2), [[[4, 5]]]), [[[4, 5]], [[4, 5]]]);
  const c = pt.tensor({ shape: [null, 1], name: 'c' });
  near(t, await run([c], pt.alloc(c, 2, 3), [[[1], [2]]]), [[1, 1, 1], [2, 2, 2]]);
  isEmpty(t, await run([s], pt.alloc(s, 0, 3), [1]), [0, 3]);
  near(t, await run([s], pt.alloc(s), [1]), 1, 0, 'no lengths: the 0-d value itself');
  t.equal(pt.alloc(s), s);
});

t.test('alloc with symbolic lengths', async (t) => {
  const v = pt.vector('v');
  const n = pt.scalar('n', 'int32');
  const k = pt.scalar('k', 'int8');
  near(t, await run([n, v], pt.alloc(v, n, 3), [2, [1, 2, 3]]), [[1, 2, 3], [1, 2, 3]]);
  near(t, await run([n, k], pt.alloc(1.5, n, k), [1, 2]), [[1.5, 1.5]]);
  isEmpty(t, await run([n, v], pt.alloc(v, n, 3), [0, [1, 2, 3]]), [0, 3]);
  const x = pt.matrix('x');
  near(t, await run([x], pt.alloc(0.5, x.shape.sum()), [[[1, 2, 3], [4, 5, 6]]]), [0.5, 0.5, 0.5, 0.5, 0.5], 0, 'a length computed from a shape');
});

t.test('non-contiguous values', async (t) => {
  const x = pt.matrix('x');
  // Logical [[0, 3], [1, 4], [2, 5]] stored transposed.
  const transposed = ndarray(new Float64Array([0, 1, 2, 3, 4, 5]), [3, 2], [1, 3]);
  near(t, await run([x], pt.alloc(x, 2, 3, 2), [transposed]), [[[0, 3], [1, 4], [2, 5]], [[0, 3], [1, 4], [2, 5]]]);
  near(t, await run([x], pt.alloc(x.T, 1, 2, 3), [transposed]), [[[0, 1, 2], [3, 4, 5]]]);
});

t.test('dtypes', async (t) => {
  const i = pt.vector('i', 'int16');
  const r = await run([i], pt.alloc(i, 2, 2), [[-3, 4]]);
  t.equal(r.data.constructor.name, 'Int16Array');
  near(t, r, [[-3, 4], [-3, 4]]);
  const b = pt.scalar('b', 'bool');
  const rb = await run([b], pt.alloc(b, 3), [true]);
  t.equal(pt.alloc(b, 3).dtype, 'bool');
  near(t, rb, [1, 1, 1]);
  const f = pt.scalar('f', 'float32');
  const rf = await run([f], pt.alloc(f, 2), [0.1]);
  t.equal(rf.data.constructor.name, 'Float32Array');
  t.equal(rf.data[0], Math.fround(0.1));
});

t.test('static shapes from constant lengths and from the value', async (t) => {
  const v = pt.vector('v');
  const n = pt.scalar('n', 'int32');
  t.equal(String(pt.alloc(v, 2, 3).type), 'TensorType(float64, (2, 3))');
  t.equal(String(pt.alloc(v, n, 3).type), 'TensorType(float64, (?, 3))');
  t.equal(String(pt.alloc(v, 2, n).type), 'TensorType(float64, (2, ?))');
  const w = pt.tensor({ shape: [4], name: 'w' });
  t.equal(String(pt.alloc(w, n, n).type), 'TensorType(float64, (?, 4))', "the value's static length carries over");
  const b = pt.tensor({ shape: [1, null], name: 'b' });
  t.equal(String(pt.alloc(b, n, n).type), 'TensorType(float64, (?, ?))', 'a broadcastable value axis says nothing');
  t.equal(String(pt.alloc(b, 1, n).type), 'TensorType(float64, (1, ?))');
  t.equal(String(pt.zeros([2, n]).type), 'TensorType(float64, (2, ?))');
  t.equal(String(pt.ones([]).type), 'TensorType(float64, ())');
  t.equal(String(pt.alloc(v, 2, 3).owner?.op), 'Alloc');
});

t.test('zeros, ones, zerosLike, onesLike', async (t) => {
  near(t, await run([], pt.zeros([2, 3]), []), [[0, 0, 0], [0, 0, 0]]);
  near(t, await run([], pt.ones([3]), []), [1, 1, 1]);
  near(t, await run([], pt.ones([]), []), 1);
  isEmpty(t, await run([], pt.zeros([0, 2]), []), [0, 2]);
  t.equal(pt.zeros([2]).dtype, weft.config.floatX, 'floatX by default');
  const zi = await run([], pt.zeros([2], 'int8'), []);
  t.equal(zi.data.constructor.name, 'Int8Array');
  near(t, zi, [0, 0]);
  const ob = await run([], pt.ones([2], 'bool'), []);
  t.equal(pt.ones([2], 'bool').dtype, 'bool');
  near(t, ob, [1, 1]);
  const n = pt.scalar('n', 'int32');
  near(t, await run([n], pt.ones([n, 2], 'float32'), [2]), [[1, 1], [1, 1]]);
  const x = pt.matrix('x');
  const xv = [[1, 2, 3], [4, 5, 6]];
  near(t, await run([x], pt.zeros(x.shape), [xv]), [[0, 0, 0], [0, 0, 0]]);
  t.equal(String(pt.zeros(pt.tensor({ shape: [2, null] }).shape).type), 'TensorType(float64, (2, ?))', "x.shape keeps x's static lengths");
  near(t, await run([x], pt.zerosLike(x), [xv]), [[0, 0, 0], [0, 0, 0]]);
  near(t, await run([x], pt.onesLike(x), [xv]), [[1, 1, 1], [1, 1, 1]]);
  const oi = await run([x], pt.onesLike(x, 'int32'), [xv]);
  t.equal(oi.data.constructor.name, 'Int32Array');
  near(t, oi, [[1, 1, 1], [1, 1, 1]]);
  const i = pt.vector('i', 'uint16');
  t.equal(pt.zerosLike(i).dtype, 'uint16');
  t.equal(String(pt.onesLike(pt.tensor({ shape: [3, null, 1] })).type), 'TensorType(float64, (3, ?, 1))');
  isEmpty(t, await run([x], pt.zerosLike(x), [ndarray(new Float64Array(0), [0, 4])]), [0, 4]);
});

t.test('inferShape', async (t) => {
  const v = pt.vector('v');
  const n = pt.scalar('n', 'int32');
  t.equal(await weft.checkInferShape([n, v], [pt.alloc(v, n, 3)], [4, [1, 2, 3]], undefined), 1);
  const x = pt.matrix('x');
  const value = rng(1).normal([2, 3]);
  t.ok((await weft.checkInferShape([x], [pt.zerosLike(x)], [value])) >= 1, 'zerosLike');
  t.ok((await weft.checkInferShape([x], [pt.alloc(x, 4, 2, 3)], [value])) >= 1, 'leading axes');
  t.ok((await weft.checkInferShape([n], [pt.ones([n, 0])], [3])) >= 1, 'an empty result');
});

t.test('gradients and Rop', async (t) => {
  const r = rng(2);
  await weft.verifyGrad((v) => pt.alloc(v, 2, 3), [r.normal([3])]);
  await weft.verifyGrad((s) => pt.alloc(s, 2, 3), [r.normal([])]);
  await weft.verifyGrad((b) => pt.alloc(b, 4, 3), [r.normal([1, 3])]);
  await weft.verifyGrad((c) => pt.alloc(c, 2, 3, 4), [r.normal([3, 1])]);
  await weft.verifyGrad((m) => pt.alloc(m, 2, 3), [r.normal([2, 3])]);
  await weft.verifyGrad((v) => pt.alloc(v, 2, 3), [r.normal([3], { dtype: 'float32' })]);
  await weft.checkRop((v) => pt.alloc(v, 2, 3), [r.normal([3])]);
  await weft.checkRop((c) => pt.alloc(c, 2, 3, 4), [r.normal([3, 1])]);
  // Direct values: every copy of an element sends its gradient back to that element.
  const c = pt.tensor({ shape: [null, 1], name: 'c' });
  const g = weft.grad(pt.sum(pt.alloc(c, 2, 2, 3).mul([[1, 2, 3], [4, 5, 6]])), c);
  near(t, await run([c], g, [[[0], [0]]]), [[12], [30]]);
  // No gradient flows to the lengths.
  const n = pt.scalar('n', 'int32');
  const x = pt.scalar('x');
  const [gx, gn] = weft.grad(pt.sum(pt.alloc(x, n)), [x, n]);
  near(t, await run([x, n], gx!, [2, 5]), 5, 0, 'd sum(alloc(x, n)) / dx = n');
  near(t, await run([x, n], gn!, [2, 5]), 0, 0, 'the gradient with respect to a length is 0');
});

t.test('bad input is refused with exact messages', async (t) => {
  const v = pt.vector('v');
  const x = pt.matrix('x');
  await throwsExactly(t, () => pt.alloc(pt.constant([1, 2]), 2, 3), TypeError,
    'Alloc: the value TensorConstant{[1,2]} (TensorType(float64, (2,))) cannot be broadcast to length 3 on axis 1');
  await throwsExactly(t, () => pt.alloc(x, 3), TypeError, 'Alloc: the value x has 2 axes, more than the 1 of the requested shape');
  await throwsExactly(t, () => pt.alloc(v), TypeError, 'Alloc: the value v has 1 axis, more than the 0 of the requested shape');
  await throwsExactly(t, () => pt.alloc(0, -1, 2), RangeError, 'Alloc: negative length -1 on axis 0');
  await throwsExactly(t, () => pt.zeros([2, -3]), RangeError, 'Alloc: negative length -3 on axis 1');
  await throwsExactly(t, () => pt.alloc(0, 1.5), TypeError, 'Alloc: length 0: expected an integer, got 1.5');
  await throwsExactly(t, () => pt.alloc(0, 2, pt.scalar('f')), TypeError,
    'Alloc: length 1: expected an integer or a scalar integer variable, got f (TensorType(float64, ()))');
  await throwsExactly(t, () => pt.alloc(0, pt.vector('l', 'int32')), TypeError,
    'Alloc: length 0: expected an integer or a scalar integer variable, got l (TensorType(int32, (?,)))');
  await throwsExactly(t, () => pt.zeros(pt.vector('q', 'int32')), TypeError,
    'zeros: a shape given as a variable must be a vector of static length, got TensorType(int32, (?,))');

  const n = pt.scalar('n', 'int32');
  await throwsExactly(t, () => run([n], pt.alloc(0, n, 2), [-1]), weft.NodeError,
    'Alloc: negative length -1 on axis 0\n  in node 0: Alloc(TensorConstant{0}, n, TensorConstant{2})\n  input values: float64 [], int32 [], int32 []');
  // A value of length 1 on an axis not marked broadcastable is not stretched at run time.
  await throwsExactly(t, () => run([v], pt.alloc(v, 2, 3), [[1]]), weft.NodeError,
    'Alloc: the value of shape [1] cannot be broadcast to shape [2, 3] (axis 0 of the value is not statically broadcastable)' +
      '\n  in node 0: Alloc(v, TensorConstant{2}, TensorConstant{3})\n  input values: float64 [1], int32 [], int32 []');
  await throwsExactly(t, () => run([v], pt.alloc(v, 2, 3), [[1, 2]]), weft.NodeError,
    'Alloc: the value of shape [2] cannot be broadcast to shape [2, 3]' +
      '\n  in node 0: Alloc(v, TensorConstant{2}, TensorConstant{3})\n  input values: float64 [2], int32 [], int32 []');
  const w = pt.tensor({ shape: [3], name: 'w' });
  await throwsExactly(t, () => run([n, w], pt.alloc(w, n), [2, [1, 2, 3]]), weft.NodeError,
    'Alloc: the value of shape [3] cannot be broadcast to shape [2]' +
      '\n  in node 0: Alloc(w, n)\n  input values: float64 [3], int32 []');
});

t.test('broadcastLike', async (t) => {
  const x = pt.matrix('x');
  const b = pt.tensor({ shape: [1, null], name: 'b' });
  t.equal(broadcastLike(x, pt.matrix('y')), x, 'already of the shape: unchanged');
  const out = broadcastLike(b, x);
  t.equal(String(out.owner?.op), 'Alloc');
  near(t, await run([b, x], out, [[[1, 2]], [[0, 0], [0, 0], [0, 0]]]), [[1, 2], [1, 2], [1, 2]]);
  const s = pt.scalar('s');
  near(t, await run([s, x], broadcastLike(s, x), [3, [[0, 0], [0, 0]]]), [[3, 3], [3, 3]]);
});
