// weft.ndarray: scijs ndarrays over a typed array without installing ndarray, checked so that a
// view cannot reach outside its data; compiled functions take them as any ndarray.
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
