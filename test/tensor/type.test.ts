// TensorType through the public API: construction errors, key/equals/toString, broadcastable,
// `filter` of every value kind into every dtype (strict, safe upcasts, allowDowncast, range,
// bool, ragged, rank and static-length errors), value comparison with dtype tolerances,
// signatures, copies, convertVariable and config.floatX.
import ndarray from 'ndarray';
import t from 'tap';
import { pt, throwsExactly, weft } from '../helpers.js';

type Dtype = weft.Dtype;
type Storage = Exclude<Dtype, 'bool'>;
type TypedArrayClass = new (n: number) => weft.TypedArray;

const T = weft.TensorType;
const DTYPES: readonly Dtype[] = ['float32', 'float64', 'int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32', 'bool'];
const STORAGES: readonly Storage[] = ['float32', 'float64', 'int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32'];
const CLASS: Readonly<Record<Dtype, TypedArrayClass>> = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, int16: Int16Array, int32: Int32Array,
  uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array, bool: Uint8Array,
};

/** NumPy's can_cast(from, to, 'safe') for weft's dtypes, written out (bool targets go by value). */
const SAFE: Readonly<Record<Storage, readonly Dtype[]>> = {
  float32: ['float32', 'float64'],
  float64: ['float64'],
  int8: ['int8', 'int16', 'int32', 'float32', 'float64'],
  int16: ['int16', 'int32', 'float32', 'float64'],
  int32: ['int32', 'float64'],
  uint8: ['uint8', 'uint16', 'uint32', 'int16', 'int32', 'float32', 'float64'],
  uint16: ['uint16', 'uint32', 'int32', 'float32', 'float64'],
  uint32: ['uint32', 'float64'],
};

const BITS: Readonly<Record<string, number>> = { int8: 8, int16: 16, int32: 32, uint8: 8, uint16: 16, uint32: 32 };
const RANGE: Readonly<Record<string, readonly [number, number]>> = {
  int8: [-128, 127], int16: [-32768, 32767], int32: [-2147483648, 2147483647],
  uint8: [0, 255], uint16: [0, 65535], uint32: [0, 4294967295],
};

const article = (d: string): string => (d.startsWith('int') ? 'an' : 'a');
const lossMessage = (src: Dtype, dst: Dtype): string =>
  `value: ${article(src)} ${src} value cannot be converted to ${dst} without loss; ` +
  'convert it first, or pass allowInputDowncast: true to accept the conversion';

/** What a lossy conversion gives: float32 rounds, ints truncate then wrap modulo 2^bits, bool is v != 0. */
function downcast(v: number, to: Dtype): number {
  if (to === 'float64') return v;
  if (to === 'float32') return Math.fround(v);
  if (to === 'bool') return v !== 0 ? 1 : 0;
  const bits = BigInt(BITS[to]!);
  const m = 1n << bits;
  let r = BigInt(Math.trunc(v)) % m;
  if (r < 0n) r += m;
  if (to.startsWith('int') && r >= m >> 1n) r -= m;
  return Number(r);
}

/** A 2-d ndarray over `cls` holding `m`, laid out with these strides and offset; other slots hold 99. */
function laid(cls: TypedArrayClass, m: readonly (readonly number[])[], stride: readonly [number, number], offset: number): weft.NdArray {
  let last = offset;
  m.forEach((row, i) => row.forEach((_, j) => (last = Math.max(last, offset + i * stride[0] + j * stride[1]))));
  const data = new cls(last + 1).fill(99);
  m.forEach((row, i) => row.forEach((v, j) => (data[offset + i * stride[0] + j * stride[1]] = v)));
  return ndarray(data, [m.length, m[0]!.length], [...stride], offset) as weft.NdArray;
}

const M01 = [[1, 0, 1], [0, 0, 1]];
const LAYOUTS: ReadonlyArray<[string, readonly [number, number], number]> = [
  ['contiguous', [3, 1], 0],
  ['column-major (transposed)', [1, 2], 0],
  ['reversed strides with an offset', [-3, -1], 5],
  ['stepped strides with an offset', [7, 2], 2],
];

t.test('construction: dtypes and static lengths, with exact errors', async (t) => {
  for (const d of DTYPES) t.equal(new T(d, [null]).dtype, d);
  await throwsExactly(t, () => new T('float16' as Dtype, []), TypeError, 'TensorType: unknown dtype "float16"');
  await throwsExactly(t, () => new T('int64' as Dtype, [2]), TypeError, 'TensorType: unknown dtype "int64"');
  await throwsExactly(t, () => new T(undefined as unknown as Dtype, []), TypeError, 'TensorType: unknown dtype undefined');
  await throwsExactly(t, () => new T('float32', [2, -1]), TypeError,
    'TensorType: static lengths must be non-negative integers or null, got [2, -1]');
  await throwsExactly(t, () => new T('float32', [2.5]), TypeError,
    'TensorType: static lengths must be non-negative integers or null, got [2.5]');
  await throwsExactly(t, () => new T('float32', [null, NaN]), TypeError,
    'TensorType: static lengths must be non-negative integers or null, got [null, NaN]');
  const shape: (number | null)[] = [2, null];
  const ty = new T('int16', shape);
  shape[0] = 5;
  t.same(ty.shape, [2, null], 'the type keeps its own copy of the shape');
  t.ok(Object.isFrozen(ty.shape), 'and it is frozen');
  t.equal(ty.ndim, 2);
  t.equal(new T('float64', []).ndim, 0);
  t.same(new T('float64', [0]).shape, [0], 'a static length of 0 is allowed');
});

t.test('key, toString, equals and broadcastable', async (t) => {
  const a = new T('float32', [null, 1, 3]);
  t.equal(a.key, 'TensorType(float32, (?, 1, 3))');
  t.equal(String(a), a.key);
  t.equal(new T('int8', [null]).key, 'TensorType(int8, (?,))', 'a 1-tuple has a trailing comma');
  t.equal(new T('bool', []).key, 'TensorType(bool, ())');
  t.same(a.broadcastable, [false, true, false], 'only static 1s broadcast');
  t.same(new T('float64', []).broadcastable, []);
  t.same(new T('float64', [1, 1]).broadcastable, [true, true]);
  t.ok(a.equals(new T('float32', [null, 1, 3])), 'same dtype and static shape: equal');
  t.ok(a.equals(a));
  t.notOk(a.equals(new T('float64', [null, 1, 3])), 'another dtype');
  t.notOk(a.equals(new T('float32', [null, null, 3])), 'another static shape');
  t.notOk(a.equals(new T('float32', [null, 1])), 'another rank');
  t.notOk(a.equals(new weft.NullType('why')), 'another kind of type');
  t.notOk(new weft.NullType('why').equals(a));
  t.equal(String(pt.matrix('m', 'uint16').type), 'TensorType(uint16, (?, ?))');
  t.same(pt.tensor({ shape: [1, null] }).broadcastable, [true, false], 'variables expose their broadcastable pattern');
  t.same(a.clone({ dtype: 'int32' }).key, 'TensorType(int32, (?, 1, 3))');
  t.same(a.clone({ shape: [2] }).key, 'TensorType(float32, (2,))');
});

t.test('filter: typed arrays and ndarrays of every storage dtype, in every layout, into every dtype', async (t) => {
  for (const src of STORAGES) {
    const values = [0, 1, 1, 0, 1, 0];
    for (const dst of DTYPES) {
      const ty = new T(dst, [null]);
      const ty2 = new T(dst, [null, null]);
      // Safe upcasts are accepted; a bool target accepts any source holding only 0 and 1.
      const accepted = dst === 'bool' || SAFE[src].includes(dst);
      const label = `${src} into ${dst}`;
      const arr = Float64Array.from(values, (v) => v);
      const typed = new CLASS[src](values.length);
      typed.set(arr);
      if (accepted) {
        const out = ty.filter(typed);
        t.equal(out.data.constructor, CLASS[dst], `${label}: stored as ${CLASS[dst].name}`);
        t.same(out.shape, [6], `${label}: a typed array is 1-d`);
        t.same(weft.tolist(out), values, `${label}: typed array values`);
        for (const [layout, stride, offset] of LAYOUTS) {
          const nd = laid(CLASS[src], M01, stride, offset);
          const o = ty2.filter(nd);
          t.equal(o.data.constructor, CLASS[dst], `${label}, ${layout}: storage`);
          t.same(weft.tolist(o), M01, `${label}, ${layout}: values`);
        }
      } else {
        await throwsExactly(t, () => ty.filter(typed), weft.ValueTypeError, lossMessage(src, dst), `${label} (typed array)`);
        await throwsExactly(t, () => ty2.filter(laid(CLASS[src], M01, [1, 2], 0)), weft.ValueTypeError, lossMessage(src, dst),
          `${label} (transposed ndarray)`);
      }
      // With allowDowncast every pairing is accepted.
      for (const [layout, stride, offset] of LAYOUTS) {
        const o = ty2.filter(laid(CLASS[src], M01, stride, offset), { allowDowncast: true });
        t.equal(o.data.constructor, CLASS[dst], `${label}, ${layout}, allowDowncast: storage`);
        t.same(weft.tolist(o), M01, `${label}, ${layout}, allowDowncast: values`);
      }
      // strict: only the exact dtype (and uint8 holding 0/1 for bool), never converted.
      const strictOk = src === dst || (dst === 'bool' && src === 'uint8');
      const nd = laid(CLASS[src], M01, [1, 2], 0);
      if (strictOk) {
        t.equal(ty2.filter(nd, { strict: true }), nd, `${label}, strict: the value itself`);
        t.same(weft.tolist(ty.filter(typed, { strict: true })), values, `${label}, strict: a typed array`);
      } else {
        await throwsExactly(t, () => ty2.filter(nd, { strict: true }), weft.ValueTypeError,
          `value: expected an ndarray of ${dst} (strict), got ${src}`, `${label}, strict`);
      }
    }
  }
});

t.test('filter: a value of the exact dtype is returned as is, a typed array is wrapped without a copy', async (t) => {
  const nd = laid(Float32Array, [[1, 2, 3], [4, 5, 6]], [1, 2], 0);
  t.equal(new T('float32', [null, null]).filter(nd), nd);
  const typed = new Int16Array([1, 2, 3]);
  const out = new T('int16', [3]).filter(typed);
  t.equal(out.data, typed, 'the ndarray is a view of the typed array');
  const converted = new T('float64', [3]).filter(typed);
  t.not(converted.data.buffer, typed.buffer, 'a converted value is a new array');
});

t.test('filter: safe upcasts keep every value exactly, lossy ones need allowDowncast', async (t) => {
  const EXTREMES: Readonly<Record<Storage, readonly number[]>> = {
    float32: [0.5, -1.25, 3.4028234663852886e38, -7],
    float64: [0.1, -1e300, 65536.75, -3],
    int8: [-128, 127, 0, -1],
    int16: [-32768, 32767, 200, -1],
    int32: [-2147483648, 2147483647, 70000, -1],
    uint8: [0, 255, 128, 1],
    uint16: [0, 65535, 300, 1],
    uint32: [0, 4294967295, 2147483648, 1],
  };
  for (const src of STORAGES) {
    const values = EXTREMES[src];
    const typed = new CLASS[src](values.length);
    values.forEach((v, i) => (typed[i] = v));
    const held = Array.from(typed);
    t.same(held, values, `${src}: the test values are exact in ${src}`);
    for (const dst of DTYPES) {
      const ty = new T(dst, [null]);
      const label = `${src} [${values}] into ${dst}`;
      if (SAFE[src].includes(dst)) {
        t.same(weft.tolist(ty.filter(typed)), values, `${label}: exact`);
      } else if (dst === 'bool') {
        const bad = values.find((v) => v !== 0 && v !== 1);
        await throwsExactly(t, () => ty.filter(typed), weft.ValueTypeError, `value: a bool value holds only 0 and 1, found ${bad}`, label);
      } else {
        await throwsExactly(t, () => ty.filter(typed), weft.ValueTypeError, lossMessage(src, dst), label);
      }
      const forced = ty.filter(typed, { allowDowncast: true });
      t.same(weft.tolist(forced), values.map((v) => downcast(v, dst)), `${label}, allowDowncast: rounded, truncated or wrapped`);
    }
  }
});

t.test('filter: JS values (numbers, booleans, nested arrays, ndarrays over plain arrays) into every dtype', async (t) => {
  for (const dst of DTYPES) {
    const cls = CLASS[dst];
    const s = new T(dst, []);
    const m = new T(dst, [null, null]);
    const n0 = s.filter(1);
    t.equal(n0.data.constructor, cls, `number into ${dst}: storage`);
    t.same(n0.shape, [], 'a number is 0-d');
    t.equal(weft.tolist(n0), 1, `number into ${dst}`);
    t.equal(weft.tolist(s.filter(true)), 1, `true into ${dst}`);
    t.equal(weft.tolist(s.filter(false)), 0, `false into ${dst}`);
    const nested = m.filter([[1, 0, 1], [0, 0, 1]]);
    t.equal(nested.data.constructor, cls, `nested array into ${dst}: storage`);
    t.same(weft.tolist(nested), M01, `nested array into ${dst}`);
    t.same(weft.tolist(m.filter([[true, false, true], [false, false, true]])), M01, `nested booleans into ${dst}`);
    t.same(weft.tolist(m.filter([[true, 0, 1], [false, 0, true]])), M01, `mixed booleans and numbers into ${dst}`);
    const plain = ndarray([1, 0, 1, 0, 0, 1], [2, 3]) as unknown as weft.NdArray;
    t.same(weft.tolist(m.filter(plain)), M01, `an ndarray over a plain array into ${dst}`);
    const plainT = ndarray([1, 0, 0, 0, 1, 1], [2, 3], [1, 2]) as unknown as weft.NdArray;
    const o = m.filter(plainT);
    t.equal(o.data.constructor, cls, `a transposed ndarray over a plain array into ${dst}: storage`);
    t.same(weft.tolist(o), M01, `a transposed ndarray over a plain array into ${dst}`);
  }
  // Wider values per dtype: floats take any number (float32 rounds), ints their range.
  t.same(weft.tolist(new T('float32', [null]).filter([0.1, 1e39, -2.5])), [Math.fround(0.1), Infinity, -2.5], 'float32 rounds');
  t.same(weft.tolist(new T('float64', [null]).filter([0.1, 1e300, NaN, -Infinity])), [0.1, 1e300, NaN, -Infinity]);
  for (const [d, [lo, hi]] of Object.entries(RANGE)) {
    t.same(weft.tolist(new T(d as Dtype, [null]).filter([lo, hi, 0])), [lo, hi, 0], `${d}: its whole range`);
  }
  const empty = new T('float64', [null]).filter([]);
  t.same(empty.shape, [0], 'an empty array');
  t.same(new T('int8', [null, null]).filter([[]]).shape, [1, 0]);
  t.same(new T('int8', [null, null, null]).filter([[[1], [2]]]).shape, [1, 2, 1]);
});

t.test('filter: integers out of range, non-integers, NaN and Infinity into int dtypes', async (t) => {
  for (const [d, [lo, hi]] of Object.entries(RANGE)) {
    const ty = new T(d as Dtype, [null]);
    const range = `integers from ${lo} to ${hi}`;
    for (const v of [hi + 1, lo - 1, 2.5, -0.5]) {
      await throwsExactly(t, () => ty.filter([0, v]), weft.ValueTypeError,
        `value: ${v} is not a value of ${d} (${range}); pass allowInputDowncast: true to truncate it`, `${v} into ${d}`);
      t.same(weft.tolist(ty.filter([0, v], { allowDowncast: true })), [0, downcast(v, d as Dtype)], `${v} into ${d}, allowDowncast`);
    }
    for (const v of [NaN, Infinity, -Infinity]) {
      for (const allowDowncast of [false, true]) {
        await throwsExactly(t, () => ty.filter([v], { allowDowncast }), weft.ValueTypeError,
          `value: ${v} is not a value of ${d} (${range})`, `${v} into ${d}, allowDowncast ${allowDowncast}`);
      }
      await throwsExactly(t, () => ty.filter(new Float64Array([1, v]), { allowDowncast: true }), weft.ValueTypeError,
        `value: ${v} is not a value of ${d} (${range})`, `a float64 array holding ${v} into ${d}`);
    }
  }
  await throwsExactly(t, () => new T('int32', []).filter(3e10), weft.ValueTypeError,
    'value: 30000000000 is not a value of int32 (integers from -2147483648 to 2147483647); pass allowInputDowncast: true to truncate it');
  await throwsExactly(t, () => new T('uint8', [null]).filter([-1], { what: 'input 0 (x) of f' }), weft.ValueTypeError, 'input 0 (x) of f: -1 is not a value of uint8 (integers from 0 to 255); pass allowInputDowncast: true to truncate it',
    'the `what` option names the value');
});

t.test('filter: bool holds only 0, 1, true and false', async (t) => {
  const b = new T('bool', [null]);
  for (const v of [2, -1, 0.5, NaN]) {
    await throwsExactly(t, () => b.filter([1, v]), weft.ValueTypeError, `value: a bool value holds only 0, 1, true and false, found ${v}`, `${v}`);
  }
  t.same(weft.tolist(b.filter([2, -1, 0.5, 0], { allowDowncast: true })), [1, 1, 1, 0], 'allowDowncast: non-zero is true');
  await throwsExactly(t, () => b.filter(new Uint8Array([0, 1, 2])), weft.ValueTypeError, 'value: a bool value holds only 0 and 1, found 2');
  await throwsExactly(t, () => b.filter(new Float32Array([0, 0.25])), weft.ValueTypeError, 'value: a bool value holds only 0 and 1, found 0.25');
  t.same(weft.tolist(b.filter(new Int16Array([0, 7, -3]), { allowDowncast: true })), [0, 1, 1]);
  const u8 = ndarray(new Uint8Array([0, 1, 1]), [3]) as weft.NdArray;
  t.equal(b.filter(u8, { strict: true }), u8, 'strict: uint8 storage holding 0/1 is a bool value');
  t.same(weft.tolist(b.filter(new Uint8Array([1, 0]), { strict: true })), [1, 0]);
  await throwsExactly(t, () => b.filter(new Uint8Array([0, 3]), { strict: true }), weft.ValueTypeError,
    'value: a bool value holds only 0 and 1, found 3');
  t.ok(b.isValidValue(u8), 'isValidValue is the strict filter');
  t.notOk(b.isValidValue(new Uint8Array([5])));
  t.notOk(b.isValidValue([true]), 'a JS value is not a bool value until filtered');
});

t.test('filter: strict refuses JS values and other dtypes', async (t) => {
  const f = new T('float32', [null]);
  for (const [v, ty] of [[[1, 2], f], [1, new T('float32', [])], [true, new T('float32', [])], [ndarray([1, 2]), f]] as const) {
    await throwsExactly(t, () => ty.filter(v, { strict: true }), weft.ValueTypeError, 'value: expected an ndarray of float32 (strict), got a JS value');
  }
  await throwsExactly(t, () => f.filter(new Float64Array(2), { strict: true, allowDowncast: true }), weft.ValueTypeError,
    'value: expected an ndarray of float32 (strict), got float64', 'strict wins over allowDowncast');
  await throwsExactly(t, () => new T('float32', []).filter(new Float32Array(1), { strict: true }), weft.ValueTypeError, 'value: expected a 0-d value (TensorType(float32, ())), got a 1-d value of shape [1]', 'the rank is checked first');
  t.ok(f.isValidValue(new Float32Array(2)));
  t.notOk(f.isValidValue(new Float64Array(2)));
});

t.test('filter: ragged arrays, rank and static-length mismatches, unsupported values', async (t) => {
  const m = new T('float64', [null, null]);
  await throwsExactly(t, () => m.filter([[1, 2], [3]]), TypeError, 'value: the nested array is ragged (expected length 2 at depth 1)');
  await throwsExactly(t, () => m.filter([[1, 2], 3]), TypeError, 'value: the nested array is ragged (expected length 2 at depth 1)');
  await throwsExactly(t, () => new T('float64', [null, null, null]).filter([[[1], [2]], [[3], [4, 5]]]), TypeError,
    'value: the nested array is ragged (expected length 1 at depth 2)');
  await throwsExactly(t, () => m.filter([[1, 'a']]), TypeError, 'value: expected numbers in the nested array, found string at depth 2');
  await throwsExactly(t, () => m.filter([[1, null]]), TypeError, 'value: expected numbers in the nested array, found object at depth 2');
  await throwsExactly(t, () => m.filter([[1, 2], [3]], { what: 'input 1 (m)' }), TypeError,
    'input 1 (m): the nested array is ragged (expected length 2 at depth 1)');

  await throwsExactly(t, () => new T('float32', [null]).filter([[1]]), weft.ValueTypeError,
    'value: expected a 1-d value (TensorType(float32, (?,))), got a 2-d value of shape [1, 1]');
  await throwsExactly(t, () => m.filter(3), weft.ValueTypeError, 'value: expected a 2-d value (TensorType(float64, (?, ?))), got a 0-d value of shape []');
  await throwsExactly(t, () => m.filter(new Float64Array(4)), weft.ValueTypeError,
    'value: expected a 2-d value (TensorType(float64, (?, ?))), got a 1-d value of shape [4]');
  await throwsExactly(t, () => m.filter([]), weft.ValueTypeError, 'value: expected a 2-d value (TensorType(float64, (?, ?))), got a 1-d value of shape [0]');
  await throwsExactly(t, () => new T('int8', []).filter(ndarray(new Int8Array(2), [2])), weft.ValueTypeError,
    'value: expected a 0-d value (TensorType(int8, ())), got a 1-d value of shape [2]');

  const fixed = new T('float32', [2, null, 1]);
  await throwsExactly(t, () => fixed.filter([[[1]], [[2]], [[3]]]), weft.ValueTypeError,
    'value: expected length 2 on axis 0 (TensorType(float32, (2, ?, 1))), got shape [3, 1, 1]');
  await throwsExactly(t, () => fixed.filter(ndarray(new Float32Array(4), [2, 1, 2])), weft.ValueTypeError,
    'value: expected length 1 on axis 2 (TensorType(float32, (2, ?, 1))), got shape [2, 1, 2]');
  t.same(fixed.filter([[[1], [2], [3]], [[4], [5], [6]]]).shape, [2, 3, 1], 'unknown lengths take any value');
  await throwsExactly(t, () => new T('float32', [2]).filter([1, 2, 3]), weft.ValueTypeError,
    'value: expected length 2 on axis 0 (TensorType(float32, (2,))), got shape [3]');

  const v = new T('float64', [null]);
  for (const [value, kind] of [['abc', 'string'], [null, 'null'], [undefined, 'undefined'], [{}, 'object'], [new DataView(new ArrayBuffer(8)), 'object'], [1n, 'bigint']] as const) {
    await throwsExactly(t, () => v.filter(value), weft.ValueTypeError,
      `value: expected an ndarray, a nested array, a number or a typed array for TensorType(float64, (?,)), got ${kind}`, `a ${kind}`);
  }
  await throwsExactly(t, () => v.filter(new BigInt64Array(2)), weft.ValueTypeError, 'value: typed arrays of BigInt64Array are not supported');
});

t.test('valuesEq and valuesEqApprox', async (t) => {
  const f32 = new T('float32', [null]);
  const f64 = new T('float64', [null]);
  const i32 = new T('int32', [null]);
  const a32 = (...v: number[]) => ndarray(Float32Array.from(v), [v.length]) as weft.NdArray;
  const a64 = (...v: number[]) => ndarray(Float64Array.from(v), [v.length]) as weft.NdArray;

  t.ok(f64.valuesEq(a64(1, 2, NaN, Infinity, -0), a64(1, 2, NaN, Infinity, 0)), 'equal values, NaN matching NaN, -0 equal to 0');
  t.notOk(f64.valuesEq(a64(1, 2), a64(1, 2 + 1e-15)), 'valuesEq is exact');
  t.notOk(f64.valuesEq(a64(NaN), a64(1)));
  t.notOk(f64.valuesEq(a64(1, 2), a64(1, 2, 3)), 'different shapes');
  const m = new T('float64', [null, null]);
  t.notOk(m.valuesEq(ndarray(new Float64Array(6), [2, 3]) as weft.NdArray, ndarray(new Float64Array(6), [3, 2]) as weft.NdArray),
    'same data, different shapes');
  t.ok(m.valuesEq(laid(Float64Array, [[1, 2, 3], [4, 5, 6]], [1, 2], 0), laid(Float64Array, [[1, 2, 3], [4, 5, 6]], [-3, -1], 5)),
    'layouts do not matter, values do');

  // float32: 1e-5 absolute and relative.
  t.ok(f32.valuesEqApprox(a32(1), a32(1 + 1.5e-5)), 'float32: 1.5e-5 apart at 1 (within 1e-5 + 1e-5 * 1)');
  t.notOk(f32.valuesEqApprox(a32(1), a32(1 + 2.5e-5)), 'float32: 2.5e-5 apart at 1');
  t.ok(f32.valuesEqApprox(a32(0), a32(9e-6)), 'float32: 9e-6 near 0');
  t.notOk(f32.valuesEqApprox(a32(0), a32(1.2e-5)), 'float32: 1.2e-5 near 0');
  t.ok(f32.valuesEqApprox(a32(100), a32(100.0009)), 'float32: 9e-4 apart at 100 (within 1e-5 + 1e-5 * 100)');
  t.notOk(f32.valuesEqApprox(a32(100), a32(100.0012)), 'float32: 1.2e-3 apart at 100');
  // float64: 1e-8 absolute, 1e-5 relative.
  t.ok(f64.valuesEqApprox(a64(0), a64(9e-9)), 'float64: 9e-9 near 0');
  t.notOk(f64.valuesEqApprox(a64(0), a64(1.1e-8)), 'float64: 1.1e-8 near 0');
  t.notOk(f64.valuesEqApprox(a64(0), a64(9e-6)), 'float64 is stricter than float32 near 0');
  t.ok(f64.valuesEqApprox(a64(1000), a64(1000.009)), 'float64: relative 9e-6 at 1000');
  t.notOk(f64.valuesEqApprox(a64(1000), a64(1000.011)), 'float64: relative 1.1e-5 at 1000');
  t.ok(f64.valuesEqApprox(a64(1, NaN, -Infinity), a64(1, NaN, -Infinity)), 'NaNs match NaNs, infinities match');
  t.notOk(f64.valuesEqApprox(a64(NaN), a64(0)), 'a NaN must match a NaN');
  t.notOk(f64.valuesEqApprox(a64(0), a64(NaN)));
  t.notOk(f64.valuesEqApprox(a64(Infinity), a64(-Infinity)), 'opposite infinities differ');
  t.notOk(f64.valuesEqApprox(a64(Infinity), a64(1e308)), 'an infinity is not close to a finite value');
  t.notOk(f64.valuesEqApprox(a64(1e308), a64(Infinity)), 'nor a finite value to an infinity');
  t.notOk(f32.valuesEqApprox(a32(-Infinity), a32(Infinity)));
  t.notOk(f64.valuesEqApprox(a64(1), a64(1, 1)), 'different shapes');
  // Integers: exact.
  const ai = (...v: number[]) => ndarray(Int32Array.from(v), [v.length]) as weft.NdArray;
  t.ok(i32.valuesEqApprox(ai(1, 2), ai(1, 2)));
  t.notOk(i32.valuesEqApprox(ai(1000000), ai(1000001)), 'int values compare exactly');
  // Explicit tolerances.
  t.ok(f64.valuesEqApprox(a64(1), a64(1.5), { atol: 0.6 }));
  t.notOk(f64.valuesEqApprox(a64(1), a64(1.5), { atol: 0.4 }));
  t.ok(f64.valuesEqApprox(a64(100), a64(110), { atol: 0, rtol: 0.1 }));
});

t.test('valueSignature: equal for equal values, different otherwise, large arrays hashed', async (t) => {
  const m = new T('float64', [null, null]);
  const a = laid(Float64Array, [[1, 2, 3], [4, 5, 6]], [3, 1], 0);
  const b = laid(Float64Array, [[1, 2, 3], [4, 5, 6]], [1, 2], 0);
  t.equal(m.valueSignature(a), m.valueSignature(b), 'equal values in other layouts');
  t.not(m.valueSignature(a), m.valueSignature(laid(Float64Array, [[1, 2, 3], [4, 5, 7]], [3, 1], 0)), 'one value differs');
  t.not(m.valueSignature(a), m.valueSignature(ndarray(new Float64Array([1, 2, 3, 4, 5, 6]), [3, 2]) as weft.NdArray), 'another shape');
  const s = new T('float64', []);
  t.not(s.valueSignature(ndarray(new Float64Array([0]), []) as weft.NdArray), s.valueSignature(ndarray(new Float64Array([-0]), []) as weft.NdArray),
    '0 and -0 differ');

  const n = 100000;
  const big = rngValues(n, 1);
  const v = new T('float64', [null]);
  const sig = v.valueSignature(big);
  t.ok(sig.length < 64, `a large array is hashed (${sig.length} characters)`);
  t.equal(v.valueSignature(v.copyValue(big)), sig, 'a copy signs the same');
  const other = v.copyValue(big);
  other.data[n - 1] = other.data[n - 1]! + 1e-9;
  t.not(v.valueSignature(other), sig, 'one element of a large array changes the signature');
  const shorter = ndarray(big.data.subarray(0, n - 1), [n - 1]) as weft.NdArray;
  t.not(v.valueSignature(shorter), sig, 'another length');
  const reshaped = ndarray(big.data, [n / 2, 2]) as weft.NdArray;
  t.not(m.valueSignature(reshaped), sig, 'another shape, same data');
  const big2 = rngValues(n, 2);
  t.not(v.valueSignature(big2), sig, 'other random values');
  // A non-contiguous large value signs like its contiguous copy.
  const strided = ndarray(big.data, [n / 2], [2]) as weft.NdArray;
  const packed = ndarray(Float64Array.from({ length: n / 2 }, (_, i) => big.data[2 * i]!), [n / 2]) as weft.NdArray;
  t.equal(v.valueSignature(strided), v.valueSignature(packed));
});

function rngValues(n: number, seed: number): weft.NdArray {
  return new weft.Rng(seed).uniform([n], { dtype: 'float64' });
}

t.test('copyValue shares no memory, mayShareMemory sees views', async (t) => {
  const m = new T('int16', [null, null]);
  const a = laid(Int16Array, [[1, 2, 3], [4, 5, 6]], [1, 2], 0);
  const c = m.copyValue(a);
  t.not(c.data.buffer, a.data.buffer, 'a new buffer');
  t.ok(m.valuesEq(a, c), 'the same values');
  t.equal(c.data.constructor, Int16Array, 'the same dtype');
  t.notOk(m.mayShareMemory(a, c));
  c.data[0] = 100;
  t.equal(a.get(0, 0), 1, 'writing the copy leaves the original alone');
  const view = ndarray(a.data, [3], [1], 0) as weft.NdArray;
  t.ok(m.mayShareMemory(a, view as weft.NdArray), 'a view of the same data');
  const b = new T('bool', [null]);
  const bc = b.copyValue(ndarray(new Uint8Array([1, 0]), [2]) as weft.NdArray);
  t.same(weft.tolist(bc), [1, 0]);
});

t.test('convertVariable: a more specific static shape is accepted, a less specific one is not', async (t) => {
  const general = new T('float64', [null, 3]);
  const specific = pt.tensor({ shape: [2, 3], name: 's' });
  t.equal(general.convertVariable(specific), specific, 'more static lengths: the variable itself');
  const same = pt.tensor({ shape: [null, 3], name: 'g' });
  t.equal(general.convertVariable(same), same, 'the same type');
  t.equal(new T('float64', [2, 3]).convertVariable(same), undefined, 'fewer static lengths: refused');
  t.equal(general.convertVariable(pt.tensor({ shape: [null, 4] })), undefined, 'another static length');
  t.equal(general.convertVariable(pt.tensor({ shape: [2, 3], dtype: 'float32' })), undefined, 'another dtype');
  t.equal(general.convertVariable(pt.tensor3('t')), undefined, 'another rank');
  const b = pt.tensor({ shape: [1] });
  t.equal(new T('float64', [null]).convertVariable(b), b, 'a broadcastable vector fits a vector');
  t.equal(b.type.convertVariable(pt.vector()), undefined, 'and not the reverse');
  // makeVariable / makeConstant
  const v = general.makeVariable('v');
  t.ok(v instanceof pt.TensorVariable);
  t.equal(v.type, general);
  t.equal(v.name, 'v');
  const k = new T('int8', [2]).makeConstant(ndarray(new Int8Array([1, 2]), [2]) as weft.NdArray, 'k');
  t.ok(k instanceof pt.TensorConstant);
  t.same(weft.tolist(k.data), [1, 2]);
});

t.test('config.floatX: float64 by default, float32 on request, bad values refused', async (t) => {
  t.teardown(() => {
    weft.config.floatX = 'float64';
  });
  t.equal(weft.config.floatX, 'float64', 'the default');
  t.equal(pt.vector().dtype, 'float64');
  t.equal(pt.constant(1.5).dtype, 'float64');
  t.equal(pt.constant(2).dtype, 'float64', 'an integer literal alone is floatX too');
  weft.config.floatX = 'float32';
  t.equal(weft.config.floatX, 'float32');
  for (const v of [pt.scalar(), pt.vector('v'), pt.matrix(), pt.tensor3(), pt.tensor4(), pt.tensor({ shape: [2, null] })]) {
    t.equal(v.dtype, 'float32', `${v.type} made without a dtype follows floatX`);
  }
  t.equal(pt.vector('i', 'int8').dtype, 'int8', 'an explicit dtype wins');
  t.equal(pt.constant(1.5).dtype, 'float32', 'a float literal takes floatX');
  t.equal(pt.constant(2).dtype, 'float32', 'an integer literal alone takes floatX too (JS cannot write 2.0 apart from 2)');
  t.equal(pt.constant([[1, 2, 3]]).dtype, 'float32', 'so does a nested array of integers');
  t.equal(pt.constant(2, { dtype: 'int8' }).dtype, 'int8', 'an explicit dtype on a literal wins');
  t.equal(pt.constant(true).dtype, 'bool', 'a boolean literal alone stays bool');
  t.equal(pt.vector('i', 'int8').add(2).dtype, 'int8', 'an integer literal next to a typed operand stays weak');
  t.equal(weft.shared([1, 2]).dtype, 'float32', 'shared values from JS numbers take floatX');
  t.equal(new weft.Rng(1).uniform([2]).data.constructor, Float32Array, 'Rng draws floatX by default');
  const x = pt.vector('x');
  const fn = await weft.compile([x], x.mul(2));
  const out = await fn([1, 2]);
  t.equal(out.data.constructor, Float32Array, 'a function of floatX inputs computes in float32');
  for (const bad of ['int32', 'float16', 'bool', 3, undefined]) {
    await throwsExactly(t, () => {
      weft.config.floatX = bad as Dtype;
    }, TypeError, `config.floatX must be 'float32' or 'float64', got ${JSON.stringify(bad)}`, `floatX = ${String(bad)}`);
    t.equal(weft.config.floatX, 'float32', 'a refused value leaves floatX unchanged');
  }
  weft.config.floatX = 'float64';
  t.equal(weft.config.floatX, 'float64', 'and back');
  t.equal(pt.matrix().dtype, 'float64');
});

t.test('makeNdArray gives the same views as the ndarray factory, for every storage and rank', async (t) => {
  const { makeNdArray } = await import('../../src/tensor/core/ndarray.js');
  const { STORAGE } = await import('../../src/kernels/dtype.js');
  for (const [dtype, Storage] of Object.entries(STORAGE)) {
    const data = new Storage(64);
    for (let i = 0; i < 64; i++) data[i] = i % 7;
    for (const shape of [[], [5], [2, 3], [2, 2, 3], [1, 2, 2, 2]]) {
      const stride = shape.map((_, a) => (a === 0 ? -1 : 2 ** a));
      for (const args of [[shape], [shape, stride, 40]] as const) {
        // Twice: the first call learns the view class, the second uses it.
        for (const round of [1, 2]) {
          const got = makeNdArray(data, ...(args as unknown as [number[], number[]?, number?]));
          const want = ndarray(data, [...shape], args[1] ? [...args[1]] : undefined, args[2] ?? 0);
          const label = `${dtype} ${JSON.stringify(args)} round ${round}`;
          t.equal(got.constructor, want.constructor, `${label}: class`);
          t.same([got.shape, got.stride, got.offset, got.size, got.dtype], [want.shape, want.stride, want.offset, want.size, want.dtype], label);
          if (shape.length > 0) t.equal(got.get(...shape.map((d) => d - 1)), want.get(...shape.map((d) => d - 1)), `${label}: get`);
        }
      }
    }
  }
});
