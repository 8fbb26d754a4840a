// weft.ndarray: scijs ndarrays over a typed array without installing ndarray, checked so that a
// view cannot reach outside its data; compiled functions take them as any ndarray.
import ndarray from 'ndarray';
import t from 'tap';
import { pt, throwsExactly, weft } from '../helpers.js';

t.test('weft.ndarray: C order by default, a 1-d view of the whole data without a shape', async (t) => {
  const data = Float64Array.from([1, 2, 3, 4, 5, 6]);
  t.same(weft.tolist(weft.ndarray(data)), [1, 2, 3, 4, 5, 6]);
  const m = weft.ndarray(data, [2, 3]);
  t.same(weft.tolist(m), [[1, 2, 3], [4, 5, 6]]);
  const mt = weft.ndarray(data, [3, 2], [1, 3]);
  t.same(weft.tolist(mt), [[1, 4], [2, 5], [3, 6]], 'given strides: a transposed view');
  t.equal(weft.ndarray(data, [2], [-1], 5).get(1), 5, 'negative strides from an offset');
  const x = pt.matrix('x');
  const f = await weft.compile([x], x.mul(2), { workers: 0 });
  t.same(weft.tolist(await f(mt)), [[2, 8], [4, 10], [6, 12]], 'a compiled function reads it through its strides');
});

t.test('weft.ndarray: bad data, shapes and strides are refused', async (t) => {
  const data = new Float32Array(6);
  await throwsExactly(t, () => weft.ndarray([1, 2] as unknown as Float32Array), TypeError, 'weft.ndarray: data must be a typed array, got [object Array]');
  await throwsExactly(t, () => weft.ndarray(data, [2, -3]), RangeError, 'weft.ndarray: shape[1] must be a non-negative integer, got -3');
  await throwsExactly(t, () => weft.ndarray(data, [2, 4]), RangeError, 'weft.ndarray: shape [2, 4] with strides (4, 1) at offset 0 reaches elements 0..7, outside the data\'s 6');
  await throwsExactly(t, () => weft.ndarray(data, [2], [1, 1]), RangeError, 'weft.ndarray: 2 strides for 1 axes');
  await throwsExactly(t, () => weft.ndarray(data, [3], [-1], 1), RangeError, "weft.ndarray: shape [3] with strides (-1) at offset 1 reaches elements -1..1, outside the data's 6");
  t.same(weft.ndarray(data, [0, 5]).shape, [0, 5], 'an empty view reaches nothing');
});

// scijs lets an ndarray's data be another 1-d ndarray (read through its get): ndarray(pool.from(a),
// shape) is how a scijs user shapes an array of the pool. weft reads such a value as the typed
// array underneath, offsets and strides composed: in place and as its dtype (through `get` a
// 512x512 float32 product ran 8x slower and the values counted as JS numbers).
t.test('an ndarray over another 1-d ndarray (ndarray(pool.from(a), shape)) is read as the typed array underneath', async (t) => {
  // @types/ndarray types data as an array; scijs itself takes any object with get and set, as an
  // ndarray is.
  const over = (data: weft.NdArray, shape: number[], stride?: number[], offset?: number): weft.NdArray =>
    ndarray(data as unknown as Float32Array, shape, stride, offset) as unknown as weft.NdArray;
  const pool = weft.createPool({ workers: 1 });
  t.teardown(() => pool.close());
  const a = Float32Array.from({ length: 24 }, (_, i) => Math.sin(i + 1));
  const inPool = pool.from(a);
  const wrapped = over(inPool, [4, 6]);
  const x = pt.matrix('x', 'float32');
  const seen = x.type.filter(wrapped);
  t.equal(seen.data, inPool.data, "its storage: the pool's array itself, which calls read in place");
  t.same([seen.shape, seen.stride, seen.offset], [[4, 6], [6, 1], 0]);
  t.equal(x.type.filter(wrapped, { strict: true }).data, inPool.data, 'float32 storage: a strict float32 input takes it');

  const f = await weft.compile([x], x.mul(2).sum({ axis: 0 }), { pool, workers: 1 });
  const want = weft.tolist(await f(weft.ndarray(a, [4, 6])));
  t.same(weft.tolist(await f(wrapped)), want, 'a call on a worker: the same values as the plain array');

  // Composed through strides and offsets: a strided inner view (every other element from the
  // second), a transposed outer view of it, and a reversed view of that one between them.
  const inner = ndarray(inPool.data).lo(1).step(2) as unknown as weft.NdArray;
  const byGet = (v: weft.NdArray): number[][] =>
    Array.from({ length: v.shape[0]! }, (_, i) => Array.from({ length: v.shape[1]! }, (_, j) => v.get(i, j)));
  const outer = over(inner, [3, 4], [1, 3]);
  t.same(weft.tolist(x.type.filter(outer)), byGet(outer), 'a transposed view of a strided view: as scijs reads it');
  const deeper = over(over(inner, [12]).step(-1), [2, 6], [6, 1], 0);
  t.same(weft.tolist(x.type.filter(deeper)), byGet(deeper), 'a view of a reversed view of a strided view');
  t.same(weft.tolist(await f(deeper)), byGet(deeper).reduce((s, row) => s.map((v, j) => Math.fround(v + Math.fround(2 * row[j]!))), [0, 0, 0, 0, 0, 0]));

  t.equal(pt.constant(wrapped).dtype, 'float32', 'a constant takes the storage dtype');
  t.equal(pt.add(wrapped, 1).dtype, 'float32', 'as an operand too');
  const s = weft.shared(wrapped);
  t.equal(s.dtype, 'float32', 'so does a shared variable');
  inPool.data[0] = 99;
  t.not((s.getValue() as weft.NdArray).get(0, 0), 99, 'which holds a copy, not the pool array');

  const v = pt.vector('v', 'float32');
  const reversed = over(inner, [4], [-2], 7);
  t.same(weft.tolist(v.type.filter(reversed)), [0, 1, 2, 3].map((i) => reversed.get(i)), 'a negative outer stride from an offset');

  const reach = (where: string, shape: string, strides: string, offset: number, element: number) =>
    `${where}: a view with shape ${shape}, strides (${strides}) and offset ${offset} reaches element ${element} of the ndarray under it, which holds 12`;
  await throwsExactly(t, () => x.type.filter(over(inner, [4, 6])), weft.ValueTypeError, reach('value', '[4, 6]', '6, 1', 0, 23));
  await throwsExactly(t, () => f(over(inner, [2, 7])), weft.ValueTypeError, reach('input 0 (x) of the function', '[2, 7]', '7, 1', 0, 13), 'through a call');
  await throwsExactly(t, () => v.type.filter(over(inner, [3], [-1], 1)), weft.ValueTypeError, reach('value', '[3]', '-1', 1, -1), 'below the first element');
  await throwsExactly(t, () => pt.constant(over(inner, [4, 6])), weft.ValueTypeError, reach('constant', '[4, 6]', '6, 1', 0, 23), 'a constant');
  await throwsExactly(t, () => weft.shared(over(inner, [13])), weft.ValueTypeError, reach('shared', '[13]', '1', 0, 12), 'a shared variable');
});

t.test('an update value over a pool array is copied when the function is compiled, as a plain array is', async (t) => {
  const pool = weft.createPool({ workers: 1 });
  t.teardown(() => pool.close());
  const inPool = pool.from(Float32Array.from([1, 2, 3, 4]));
  const value = ndarray(inPool as unknown as Float32Array, [2, 2]) as unknown as weft.NdArray;
  const m = weft.shared(weft.ndarray(new Float32Array(4), [2, 2]), { name: 'm' });
  const f = await weft.compile([], [], { updates: [[m, value]], pool });
  inPool.data.fill(9);
  await f();
  t.same(weft.tolist(m.getValue() as weft.NdArray), [[1, 2], [3, 4]], 'the value as it was at compile time');
});
