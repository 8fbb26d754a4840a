// Output dtypes of the element-wise ops: NumPy's promotion for weft's dtypes, weak JS literals
// (which take the dtype of the typed operands where their values fit), the float dtypes that
// integer inputs compute in, and every element-wise function as a variable method.
import t from 'tap';
import { DTYPES, type Dtype } from '../../src/kernels/dtype.js';
import { resultType } from '../elemwise-tester.js';
import { near, pt, run, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
const v = (dtype: Dtype, name = 'x'): TV => pt.vector(name, dtype);

t.test('promotion: NumPy examples', async (t) => {
  const cases: Array<[Dtype, Dtype, Dtype]> = [
    ['int8', 'uint8', 'int16'],
    ['int16', 'uint16', 'int32'],
    ['uint8', 'uint16', 'uint16'],
    ['int32', 'float32', 'float64'],
    ['int16', 'float32', 'float32'],
    ['uint16', 'float32', 'float32'],
    ['uint32', 'int32', 'float64'],
    ['uint32', 'int8', 'float64'],
    ['uint32', 'uint8', 'uint32'],
    ['float32', 'float64', 'float64'],
    ['bool', 'int8', 'int8'],
    ['bool', 'float32', 'float32'],
  ];
  for (const [a, b, want] of cases) t.equal(pt.add(v(a), v(b, 'y')).dtype, want, `${a} + ${b} is ${want}`);
  t.equal(pt.add(v('bool'), v('bool', 'y')).dtype, 'int8', 'bool + bool is int8 (True + True is 2)');
  t.equal(pt.mul(v('bool'), v('bool', 'y')).dtype, 'int8', 'bool * bool is int8');
  t.equal(pt.maximum(v('bool'), v('bool', 'y')).dtype, 'bool', 'maximum of bools is bool');
  t.equal(pt.where(v('bool'), v('bool', 'y'), v('bool', 'z')).dtype, 'bool', 'where of bools is bool');
  t.equal(pt.and(v('bool'), v('int8', 'y')).dtype, 'int8', 'bool & int8 is int8');
  near(t, (await pt.add(pt.constant([true, true]), pt.constant([true, false])).eval()) as weft.NdArray, [2, 1], 0);
});

t.test('promotion: every pair of dtypes, for the arithmetic family', async (t) => {
  for (const a of DTYPES) {
    for (const b of DTYPES) {
      const want = resultType([a, b]);
      t.equal(pt.sub(v(a), v(b, 'y')).dtype, want === 'bool' ? 'int8' : want, `${a} - ${b}`);
      t.equal(pt.minimum(v(a), v(b, 'y')).dtype, want, `minimum(${a}, ${b})`);
      t.equal(pt.ge(v(a), v(b, 'y')).dtype, 'bool', `${a} >= ${b}`);
    }
  }
});

t.test('weak JS literals', async (t) => {
  const f32 = v('float32');
  t.equal(f32.mul(2).dtype, 'float32', 'x_float32 * 2 stays float32');
  t.equal(f32.add(0.1).dtype, 'float32', 'x_float32 + 0.1 stays float32');
  t.equal(pt.sub(1, f32).dtype, 'float32', '1 - x_float32 stays float32');
  t.equal(pt.where(v('bool', 'c'), f32, 0).dtype, 'float32', 'where(c, x_float32, 0) stays float32');
  t.equal(pt.clip(f32, 0, 1).dtype, 'float32', 'clip(x_float32, 0, 1) stays float32');
  const i8 = v('int8');
  t.equal(i8.add(1).dtype, 'int8', 'x_int8 + 1 stays int8');
  t.equal(i8.add(300).dtype, 'int16', 'x_int8 + 300 upcasts to int16');
  t.equal(i8.add(-40000).dtype, 'int32', 'x_int8 - 40000 upcasts to int32');
  t.equal(i8.mul(0.5).dtype, 'float64', 'x_int8 * 0.5 is float64 (floatX)');
  t.equal(v('uint8').add(-1).dtype, 'int16', 'x_uint8 + (-1) upcasts to int16');
  t.equal(v('int32').add(2 ** 40).dtype, 'float64', 'x_int32 + 2^40 is float64');
  t.equal(v('bool').add(1).dtype, 'int8', 'x_bool + 1 is int8');
  t.equal(v('bool').and(true).dtype, 'bool', 'x_bool & true is bool');
  t.equal(pt.add(1, 2).dtype, weft.config.floatX, 'two integer literals alone are floatX (JS cannot write 1.0 apart from 1)');
  t.equal(pt.and(true, false).dtype, 'bool', 'boolean literals alone stay bool');
  t.equal(pt.add(1, 2.5).dtype, 'float64', 'a float literal alone is floatX');
  t.equal(pt.add(f32, [1, 2.5]).dtype, 'float32', 'literal arrays are weak too');
  // the values follow the dtypes
  near(t, await run([i8], i8.add(300), [[100, -128]]), [400, 172], 0);
  near(t, await run([i8], i8.add(1), [[127, 0]]), [-128, 1], 0);
  near(t, await run([f32], f32.mul(0.1), [new Float32Array([3])]), [Math.fround(Math.fround(3) * Math.fround(0.1))], 0);
  // typed operands are strong: a typed array keeps its dtype
  t.equal(pt.add(v('int8', 'z'), new Float32Array([1, 2])).dtype, 'float32', 'a typed array operand keeps its dtype');
  t.equal(pt.add(v('float32', 'z'), new Float64Array([1, 2])).dtype, 'float64', 'a float64 array upcasts float32');
});

t.test('float functions of integers compute in float32 (16 bits or less) or float64', async (t) => {
  const want: Record<Dtype, Dtype> = {
    bool: 'float32', int8: 'float32', uint8: 'float32', int16: 'float32', uint16: 'float32',
    int32: 'float64', uint32: 'float64', float32: 'float32', float64: 'float64',
  };
  const fns: Array<[string, (x: TV) => TV]> = [
    ['exp', pt.exp], ['log', pt.log], ['sqrt', pt.sqrt], ['sin', pt.sin], ['tanh', pt.tanh], ['sigmoid', pt.sigmoid],
    ['erf', pt.erf], ['erfc', pt.erfc], ['arctan2', (x) => pt.arctan2(x, x)], ['log1p', pt.log1p], ['expm1', pt.expm1],
  ];
  for (const d of DTYPES) for (const [name, f] of fns) t.equal(f(v(d)).dtype, want[d], `${name}(${d}) is ${want[d]}`);
  // division of integers is true division in float64 (NumPy), of floats in their own dtype
  t.equal(pt.trueDiv(v('int8'), v('int8', 'y')).dtype, 'float64');
  t.equal(pt.trueDiv(v('int8'), v('float32', 'y')).dtype, 'float32');
  t.equal(pt.trueDiv(v('bool'), v('bool', 'y')).dtype, 'float64');
  t.equal(pt.trueDiv(v('float32'), 2).dtype, 'float32');
  // rounding keeps integers (NumPy 2), as do abs and sign
  for (const d of ['int8', 'uint16', 'int32', 'uint32'] as const) {
    t.equal(pt.floor(v(d)).dtype, d);
    t.equal(pt.round(v(d)).dtype, d);
    t.equal(pt.abs(v(d)).dtype, d);
    t.equal(pt.sign(v(d)).dtype, d);
  }
  const i = v('int16');
  const e = await run([i], pt.exp(i), [[1, 2]]);
  t.equal(e.data.constructor, Float32Array, 'exp(int16) values are float32');
  near(t, e, [Math.fround(Math.E), Math.fround(Math.exp(2))], 0);
});

t.test('every element-wise function is also a method', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const b = pt.vector('b', 'int32');
  const values = [[0.25, 0.5], [0.75, 1.5], [3, 5]] as const;
  const pairs: Array<[TV, TV]> = [
    [x.add(y), pt.add(x, y)], [x.sub(y), pt.sub(x, y)], [x.mul(y), pt.mul(x, y)], [x.trueDiv(y), pt.trueDiv(x, y)],
    [x.intDiv(y), pt.intDiv(x, y)], [x.mod(y), pt.mod(x, y)], [x.pow(y), pt.pow(x, y)], [x.neg(), pt.neg(x)],
    [x.abs(), pt.abs(x)], [x.sign(), pt.sign(x)], [x.exp(), pt.exp(x)], [x.expm1(), pt.expm1(x)], [x.log(), pt.log(x)],
    [x.log1p(), pt.log1p(x)], [x.log2(), pt.log2(x)], [x.log10(), pt.log10(x)], [x.sqrt(), pt.sqrt(x)], [x.sqr(), pt.sqr(x)],
    [x.sin(), pt.sin(x)], [x.cos(), pt.cos(x)], [x.tan(), pt.tan(x)], [x.arcsin(), pt.arcsin(x)], [x.arccos(), pt.arccos(x)],
    [x.arctan(), pt.arctan(x)], [x.arctan2(y), pt.arctan2(x, y)], [x.sinh(), pt.sinh(x)], [x.cosh(), pt.cosh(x)],
    [x.tanh(), pt.tanh(x)], [x.sigmoid(), pt.sigmoid(x)], [x.softplus(), pt.softplus(x)], [x.erf(), pt.erf(x)],
    [x.erfc(), pt.erfc(x)], [x.floor(), pt.floor(x)], [x.ceil(), pt.ceil(x)], [x.round(), pt.round(x)],
    [x.clip(0.3, 0.6), pt.clip(x, 0.3, 0.6)], [x.maximum(y), pt.maximum(x, y)], [x.minimum(y), pt.minimum(x, y)],
    [x.eq(y), pt.eq(x, y)], [x.neq(y), pt.neq(x, y)], [x.lt(y), pt.lt(x, y)], [x.le(y), pt.le(x, y)], [x.gt(y), pt.gt(x, y)],
    [x.ge(y), pt.ge(x, y)], [b.and(b), pt.and(b, b)], [b.or(3), pt.or(b, 3)], [b.xor(1), pt.xor(b, 1)], [b.not(), pt.not(b)],
    [x.astype('int8'), pt.cast(x, 'int8')],
  ];
  for (const [m, f] of pairs) {
    t.equal(String(m.owner!.op), String(f.owner!.op), `method ${m.owner!.op}`);
    const [gm, gf] = await (await weft.compile([x, y, b], [m, f], { onUnusedInput: 'ignore' }))(...values);
    t.same(weft.tolist(gm!), weft.tolist(gf!));
  }
  t.equal(pt.where(x.gt(0.5), x, y).dtype, 'float64');
});
