// The variable methods (x.add(y), x.sum(), x.T, x.get(...), ...) on symbolic, constant and
// shared tensors, each against the pt function of the same name (same graph, same values);
// variable properties; automatic constant wrapping with weak literals; pt.constant and the
// constructors; weft.tolist; weft.Rng (determinism, ranges, moments, bad arguments).
import ndarray from 'ndarray';
import t, { type Test } from 'tap';
import { pt, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
type Case = readonly [label: string, method: (a: TV, b: TV) => TV, fn: (a: TV, b: TV) => TV];

const X = [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]];
const Y = [[0.7, 0.1, 0.9], [0.3, 0.8, 0.2]];
const I = [[1, 0, 3], [2, 5, 0]];
const J = [[3, 2, 3], [1, 1, 4]];

const UNARY = [
  'neg', 'abs', 'sign', 'exp', 'expm1', 'log', 'log1p', 'log2', 'log10', 'sqrt', 'sqr', 'sin', 'cos', 'tan', 'arcsin',
  'arccos', 'arctan', 'sinh', 'cosh', 'tanh', 'sigmoid', 'softplus', 'erf', 'erfc', 'floor', 'ceil', 'round',
] as const;
const BINARY = ['add', 'sub', 'mul', 'trueDiv', 'intDiv', 'mod', 'pow', 'arctan2', 'maximum', 'minimum', 'eq', 'neq', 'lt', 'le', 'gt', 'ge'] as const;
const LOGICAL = ['and', 'or', 'xor'] as const;

type Fn = (...args: unknown[]) => TV;
const method = (a: TV, name: string): Fn => (a as unknown as Record<string, Fn>)[name]!.bind(a);
const ptFn = (name: string): Fn => (pt as unknown as Record<string, Fn>)[name]!;

/** Methods on float operands, each with the pt call it must equal. */
const FLOAT_CASES: readonly Case[] = [
  ...UNARY.map((n): Case => [n, (a) => method(a, n)(), (a) => ptFn(n)(a)]),
  ...BINARY.map((n): Case => [n, (a, b) => method(a, n)(b), (a, b) => ptFn(n)(a, b)]),
  ['add of several', (a, b) => a.add(b, 2, a), (a, b) => pt.add(a, b, 2, a)],
  ['mul of several', (a, b) => a.mul(b, 0.5), (a, b) => pt.mul(a, b, 0.5)],
  ['div (alias of trueDiv)', (a, b) => a.div(b), (a, b) => pt.trueDiv(a, b)],
  ['add of a literal', (a) => a.add(2), (a) => pt.add(a, 2)],
  ['clip', (a) => a.clip(0.2, 0.5), (a) => pt.clip(a, 0.2, 0.5)],
  ['astype', (a) => a.astype('float32'), (a) => pt.cast(a, 'float32')],
  ['astype int', (a) => a.mul(10).astype('int16'), (a) => pt.cast(pt.mul(a, 10), 'int16')],
  ['squeeze', (a) => a.dimshuffle('x', 0, 1).squeeze(), (a) => pt.squeeze(pt.dimshuffle(a, ['x', 0, 1]))],
  ['swapaxes', (a) => a.swapaxes(0, 1), (a) => pt.swapaxes(a, 0, 1)],
  ['repeat', (a) => a.repeat(2, { axis: 1 }), (a) => pt.repeat(a, 2, { axis: 1 })],
  ['diagonal', (a) => a.diagonal({ offset: 1 }), (a) => pt.diagonal(a, { offset: 1 })],
  ['trace', (a) => a.trace(), (a) => pt.trace(a)],
  ['cumsum', (a) => a.cumsum({ axis: 1 }), (a) => pt.cumsum(a, { axis: 1 })],
  ['cumprod', (a) => a.cumprod(), (a) => pt.cumprod(a)],
  ['sort', (a) => a.sort({ axis: 0 }), (a) => pt.sort(a, { axis: 0 })],
  ['argsort', (a) => a.argsort(), (a) => pt.argsort(a)],
  ['sum', (a) => a.sum(), (a) => pt.sum(a)],
  ['sum axis 0', (a) => a.sum({ axis: 0 }), (a) => pt.sum(a, { axis: 0 })],
  ['sum keepdims', (a) => a.sum({ axis: 1, keepdims: true }), (a) => pt.sum(a, { axis: 1, keepdims: true })],
  ['prod', (a) => a.prod({ axis: -1 }), (a) => pt.prod(a, { axis: -1 })],
  ['mean', (a) => a.mean({ axis: [0, 1] }), (a) => pt.mean(a, { axis: [0, 1] })],
  ['max', (a) => a.max({ axis: 0 }), (a) => pt.max(a, { axis: 0 })],
  ['min', (a) => a.min(), (a) => pt.min(a)],
  ['argmax', (a) => a.argmax({ axis: 1 }), (a) => pt.argmax(a, { axis: 1 })],
  ['argmin', (a) => a.argmin(), (a) => pt.argmin(a)],
  ['all', (a) => a.gt(0.15).all({ axis: 0 }), (a) => pt.all(pt.gt(a, 0.15), { axis: 0 })],
  ['any', (a) => a.gt(0.55).any(), (a) => pt.any(pt.gt(a, 0.55))],
  ['var', (a) => a.var(), (a) => pt.var(a)],
  ['var ddof 1', (a) => a.var({ ddof: 1 }), (a) => pt.var(a, { ddof: 1 })],
  ['std', (a) => a.std({ axis: 0, ddof: 1 }), (a) => pt.std(a, { axis: 0, ddof: 1 })],
  ['reshape', (a) => a.reshape([3, 2]), (a) => pt.reshape(a, [3, 2])],
  ['reshape -1', (a) => a.reshape([-1]), (a) => pt.reshape(a, [-1])],
  ['flatten', (a) => a.flatten(), (a) => pt.flatten(a)],
  ['flatten ndim 2', (a) => a.dimshuffle('x', 0, 1).flatten(2), (a) => pt.flatten(pt.dimshuffle(a, ['x', 0, 1]), 2)],
  ['dimshuffle', (a) => a.dimshuffle(1, 'x', 0), (a) => pt.dimshuffle(a, [1, 'x', 0])],
  ['transpose', (a) => a.transpose(1, 0), (a) => pt.transpose(a, [1, 0])],
  ['T', (a) => a.T, (a) => pt.transpose(a)],
  ['shape', (a) => a.shape, (a) => pt.shape(a)],
  ['get', (a) => a.get(0, weft.slice(1, null)), (a) => pt.get(a, 0, weft.slice(1, null))],
  ['get with a new axis and a step', (a) => a.get(null, weft.slice(null, null, -1), 2), (a) => pt.get(a, null, weft.slice(null, null, -1), 2)],
  ['dot', (a, b) => a.dot(b.T), (a, b) => pt.dot(a, pt.transpose(b))],
  ['matmul', (a, b) => a.T.matmul(b), (a, b) => pt.matmul(pt.transpose(a), b)],
];

/** Methods that need integer (or bool) operands. */
const INT_CASES: readonly Case[] = [
  ...LOGICAL.map((n): Case => [n, (a, b) => method(a, n)(b), (a, b) => ptFn(n)(a, b)]),
  ['not', (a) => a.not(), (a) => pt.not(a)],
  ['intDiv of ints', (a, b) => a.intDiv(b), (a, b) => pt.intDiv(a, b)],
  ['mod of ints', (a, b) => a.mod(b), (a, b) => pt.mod(a, b)],
  ['astype bool', (a) => a.astype('bool'), (a) => pt.cast(a, 'bool')],
];

/** The three kinds of tensor variable holding `value` (the symbolic one needs `value` as input 0). */
function receivers(value: number[][], dtype: weft.Dtype): Array<[string, TV]> {
  return [
    ['TensorVariable', pt.matrix('a', dtype)],
    ['TensorConstant', pt.constant(value, { dtype, name: 'k' }) as unknown as TV],
    ['TensorSharedVariable', weft.shared(value, { dtype, name: 's' }) as unknown as TV],
  ];
}

async function checkCases(t: Test, cases: readonly Case[], av: number[][], bv: number[][], dtype: weft.Dtype): Promise<void> {
  const b = pt.matrix('b', dtype);
  for (const [kind, a] of receivers(av, dtype)) {
    const inputs = kind === 'TensorVariable' ? [a, b] : [b];
    const values = kind === 'TensorVariable' ? [av, bv] : [bv];
    const outs: TV[] = [];
    for (const [label, m, f] of cases) {
      const viaMethod = m(a, b);
      const viaFn = f(a, b);
      t.equal(weft.debugprint(viaMethod), weft.debugprint(viaFn), `${kind}.${label}: the same graph as the pt function`);
      t.equal(String(viaMethod.type), String(viaFn.type), `${kind}.${label}: the same type`);
      outs.push(viaMethod, viaFn);
    }
    const fn = await weft.compile(inputs, outs, { onUnusedInput: 'ignore' });
    const results = await fn(...values);
    cases.forEach(([label], i) => {
      t.same(weft.tolist(results[2 * i]!), weft.tolist(results[2 * i + 1]!), `${kind}.${label}: the same values`);
    });
  }
}

t.test('every method exists on the three tensor variable classes, and no method goes untested here', async (t) => {
  const tested = new Set<string>([
    ...UNARY, ...BINARY, ...LOGICAL, 'not', 'div', 'clip', 'astype', 'sum', 'prod', 'mean', 'max', 'min', 'argmax', 'argmin', 'all', 'any',
    'var', 'std', 'reshape', 'flatten', 'dimshuffle', 'transpose', 'get', 'dot', 'matmul', 'squeeze', 'swapaxes', 'repeat', 'diagonal', 'trace', 'cumsum', 'cumprod', 'sort', 'argsort',
  ]);
  const getters = ['T', 'shape', 'dtype', 'ndim', 'broadcastable'];
  for (const cls of [pt.TensorVariable, pt.TensorConstant, pt.TensorSharedVariable]) {
    const proto = cls.prototype as unknown as Record<string, unknown>;
    for (const name of tested) t.equal(typeof proto[name], 'function', `${cls.name}.${name} is a method`);
    for (const name of getters) {
      t.equal(typeof Object.getOwnPropertyDescriptor(cls.prototype, name)?.get, 'function', `${cls.name}.${name} is a getter`);
    }
    const methods = Object.getOwnPropertyNames(cls.prototype).filter(
      (n) => typeof Object.getOwnPropertyDescriptor(cls.prototype, n)?.value === 'function' && !['constructor', 'toString', 'getValue', 'setValue', 'eval'].includes(n),
    );
    t.same(methods.filter((n) => !tested.has(n)), [], `${cls.name}: every installed method is covered by this file`);
  }
});

t.test('float methods give the graph and the values of the pt functions', async (t) => {
  await checkCases(t, FLOAT_CASES, X, Y, 'float64');
});

t.test('float32 receivers stay float32', async (t) => {
  const cases = FLOAT_CASES.filter(([l]) => ['add', 'mul of several', 'exp', 'sum axis 0', 'var ddof 1', 'dot', 'T', 'get', 'add of a literal'].includes(l));
  t.equal(cases.length, 9);
  await checkCases(t, cases, X, Y, 'float32');
  const a = pt.matrix('a', 'float32');
  t.equal(a.mul(2).dtype, 'float32', 'an int literal takes the float32 dtype');
  t.equal(a.add(0.1).dtype, 'float32', 'a float literal too');
  t.equal(a.dot(pt.matrix('b', 'float32')).dtype, 'float32');
});

t.test('integer and logical methods give the graph and the values of the pt functions', async (t) => {
  await checkCases(t, INT_CASES, I, J, 'int8');
  await checkCases(t, INT_CASES.filter(([l]) => LOGICAL.includes(l as never) || l === 'not'), [[1, 0, 1], [0, 0, 1]], [[1, 1, 0], [0, 1, 0]], 'bool');
});

t.test('dtype, ndim, type, broadcastable, name and owner', async (t) => {
  const x = pt.tensor({ shape: [null, 1, 3], dtype: 'int16', name: 'x' });
  t.equal(x.dtype, 'int16');
  t.equal(x.ndim, 3);
  t.ok(x.type instanceof weft.TensorType);
  t.equal(x.type.key, 'TensorType(int16, (?, 1, 3))');
  t.same(x.broadcastable, [false, true, false]);
  t.equal(x.name, 'x');
  t.equal(x.owner, null, 'an input has no owner');
  const y = x.add(1);
  t.equal(y.name, undefined, 'results are unnamed');
  t.equal(String(y.owner!.op), 'Elemwise{add}');
  t.equal(y.owner!.inputs[0], x);
  t.equal(y.owner!.outputs[0], y);
  t.equal(y.ndim, 3);
  y.name = 'y';
  t.equal(y.name, 'y', 'names can be set');
  const s = x.sum({ axis: [0, 2] });
  t.equal(s.ndim, 1);
  t.equal(s.dtype, 'int32', 'a sum of int16 accumulates in a wider int');

  const k = pt.constant([[1.5, 2]], { name: 'k' });
  t.equal(k.dtype, 'float64');
  t.equal(k.ndim, 2);
  t.equal(k.type.key, 'TensorType(float64, (1, 2))', 'a constant has a static shape');
  t.same(k.broadcastable, [true, false]);
  t.equal(k.name, 'k');
  t.equal(k.owner, null);
  t.same(weft.tolist(k.data), [[1.5, 2]]);

  const sh = weft.shared([1, 2, 3], { name: 'sh', dtype: 'float32' });
  t.equal(sh.dtype, 'float32');
  t.equal(sh.ndim, 1);
  t.equal(sh.type.key, 'TensorType(float32, (?,))', 'a shared variable keeps unknown lengths');
  t.equal(sh.name, 'sh');
  t.equal(sh.owner, null);
  t.equal(sh.T, sh, 'the transpose of a 1-d tensor is itself');
  t.same(weft.tolist((await sh.mul(2).eval()) as weft.NdArray), [2, 4, 6], 'methods of shared variables evaluate with their value');
  t.same(weft.tolist((await k.T.eval()) as weft.NdArray), [[1.5], [2]]);
  t.same(weft.tolist((await x.shape.eval(new Map([[x, ndarray(new Int16Array(6), [2, 1, 3])]]))) as weft.NdArray), [2, 1, 3], 'x.shape evaluates to the lengths');
  t.equal(x.shape.dtype, 'int32');
});

t.test('automatic constant wrapping: numbers, booleans, nested arrays, typed arrays and ndarrays', async (t) => {
  const wrapped = (y: TV): TV => y.owner!.inputs[1] as TV;
  const base = (v: TV): TV => (v.owner && String(v.owner.op).startsWith('DimShuffle') ? (v.owner.inputs[0] as TV) : v);
  const f32 = pt.vector('f', 'float32');
  const i8 = pt.vector('i', 'int8');
  const u8 = pt.vector('u', 'uint8');
  const b = pt.vector('b', 'bool');
  // [operation, expected constant type, expected result dtype]
  const cases: Array<[string, TV, string, string]> = [
    ['float32 * 2', f32.mul(2), 'TensorType(float32, ())', 'float32'],
    ['float32 + 2.5', f32.add(2.5), 'TensorType(float32, ())', 'float32'],
    ['float32 + true', f32.add(true), 'TensorType(float32, ())', 'float32'],
    ['int8 + 1', i8.add(1), 'TensorType(int8, ())', 'int8'],
    ['int8 + 1000 (does not fit int8)', i8.add(1000), 'TensorType(int16, ())', 'int16'],
    ['int8 + 2.5', i8.add(2.5), 'TensorType(float64, ())', 'float64'],
    ['uint8 - 1', u8.sub(1), 'TensorType(uint8, ())', 'uint8'],
    ['uint8 + -1', u8.add(-1), 'TensorType(int16, ())', 'int16'],
    ['int8 + true', i8.add(true), 'TensorType(int8, ())', 'int8'],
    ['bool + 2', b.add(2), 'TensorType(int8, ())', 'int8'],
    ['bool and true', b.and(true), 'TensorType(bool, ())', 'bool'],
    ['[1, 2] + 3 (literals alone)', pt.add([1, 2], 3), `TensorType(${weft.config.floatX}, ())`, weft.config.floatX],
    ['[true] and false (booleans alone)', pt.and([true], false), 'TensorType(bool, ())', 'bool'],
    ['float32 + [1, 2]', f32.add([1, 2]), 'TensorType(float32, (2,))', 'float32'],
    ['int8 + [1, 300]', i8.add([1, 300]), 'TensorType(int16, (2,))', 'int16'],
    ['float32 + [[1], [2]]', f32.add([[1], [2]]), 'TensorType(float32, (2, 1))', 'float32'],
    ['float32 + Float64Array (strong)', f32.add(new Float64Array([1, 2])), 'TensorType(float64, (2,))', 'float64'],
    ['int8 + Int16Array (strong)', i8.add(new Int16Array([1, 2])), 'TensorType(int16, (2,))', 'int16'],
    ['float32 + int32 ndarray (strong)', f32.add(ndarray(new Int32Array([1, 2]))), 'TensorType(int32, (2,))', 'float64'],
    ['int8 + uint8 ndarray (strong)', i8.add(ndarray(new Uint8Array([1, 2]))), 'TensorType(uint8, (2,))', 'int16'],
    ['float32 + ndarray over a plain array', f32.add(ndarray([1, 2]) as unknown as weft.NdArray), 'TensorType(float64, (2,))', 'float64'],
  ];
  for (const [label, y, constType, dtype] of cases) {
    const c = base(wrapped(y));
    t.ok(c instanceof pt.TensorConstant, `${label}: wrapped as a constant`);
    t.equal(String(c.type), constType, `${label}: the constant's type`);
    t.equal(y.dtype, dtype, `${label}: the result's dtype`);
  }
  // Wrapped values compute: a 2-d nested array, a transposed ndarray and a typed array.
  const x = pt.matrix('x');
  const fn = await weft.compile([x], [
    x.add([[10, 20, 30]]),
    x.mul(ndarray(new Float64Array([1, 2, 3, 4, 5, 6]), [3, 2]).transpose(1, 0)),
    x.sub(new Float32Array([1, 1, 1])),
  ]);
  const [r1, r2, r3] = await fn([[1, 2, 3], [4, 5, 6]]);
  t.same(weft.tolist(r1!), [[11, 22, 33], [14, 25, 36]]);
  t.same(weft.tolist(r2!), [[1, 6, 15], [8, 20, 36]]);
  t.same(weft.tolist(r3!), [[0, 1, 2], [3, 4, 5]]);
  // The constant holds its own copy of the value.
  const nd = ndarray(new Float64Array([1, 2]));
  const yn = pt.vector('v').add(nd);
  nd.data[0] = 100;
  t.same(weft.tolist((wrapped(yn) as unknown as weft.pt.TensorConstant).data), [1, 2], 'later changes to a source ndarray do not leak in');
  const source = new Float64Array([1, 2]);
  const y = pt.vector('v').add(source);
  source[0] = 100;
  t.same(weft.tolist((wrapped(y) as unknown as weft.pt.TensorConstant).data), [1, 2], 'later changes to a source typed array do not leak in');
  const shared = new Float64Array([1, 2]);
  const s = weft.shared(shared);
  shared[0] = 100;
  s.setValue(shared);
  shared[1] = 200;
  t.same(weft.tolist(s.getValue()), [100, 2], 'shared() and setValue() keep their own copy of a typed array');
  await throwsExactly(t, () => x.add('a' as unknown as number), TypeError, 'Elemwise{add}: argument 1: constant: cannot make a constant from string');
  await throwsExactly(t, () => x.add([[1, 2], [3]]), weft.ValueTypeError, 'Elemwise{add}: argument 1: the nested array is ragged (expected length 2 at depth 1)');
});

t.test('pt.constant: dtype inference, explicit dtype and name', async (t) => {
  // Plain numbers alone are floatX (JS cannot write 1.0 apart from 1), whatever their values;
  // booleans alone stay bool; typed arrays and ndarrays keep their own dtype.
  const fx = weft.config.floatX;
  const cases: Array<[weft.TensorLike, string]> = [
    [5, `TensorType(${fx}, ())`],
    [-128, `TensorType(${fx}, ())`],
    [300, `TensorType(${fx}, ())`],
    [70000, `TensorType(${fx}, ())`],
    [3e9, `TensorType(${fx}, ())`],
    [-3e9, `TensorType(${fx}, ())`],
    [5.5, `TensorType(${fx}, ())`],
    [true, 'TensorType(bool, ())'],
    [[true, false], 'TensorType(bool, (2,))'],
    [[true, 2], `TensorType(${fx}, (2,))`],
    [[1, 2.5], `TensorType(${fx}, (2,))`],
    [[[1, 2, 3]], `TensorType(${fx}, (1, 3))`],
    [new Uint16Array([1, 2]), 'TensorType(uint16, (2,))'],
    [new Float32Array([1]), 'TensorType(float32, (1,))'],
    [ndarray(new Int8Array([1, 2, 3, 4]), [2, 2]).transpose(1, 0), 'TensorType(int8, (2, 2))'],
    [ndarray([1.5, 2]) as unknown as weft.NdArray, 'TensorType(float64, (2,))'],
  ];
  for (const [value, type] of cases) {
    const label = Array.isArray(value) || typeof value !== 'object' ? JSON.stringify(value) : value.constructor.name;
    t.equal(String(pt.constant(value).type), type, `constant(${label})`);
  }
  // An explicit dtype wins over floatX.
  const explicit: Array<[weft.TensorLike, weft.Dtype, string]> = [
    [5, 'int8', 'TensorType(int8, ())'],
    [-128, 'int8', 'TensorType(int8, ())'],
    [300, 'int16', 'TensorType(int16, ())'],
    [70000, 'int32', 'TensorType(int32, ())'],
    [3e9, 'uint32', 'TensorType(uint32, ())'],
    [5, 'float32', 'TensorType(float32, ())'],
    [[true, 2], 'int8', 'TensorType(int8, (2,))'],
    [[[1, 2, 3]], 'uint8', 'TensorType(uint8, (1, 3))'],
  ];
  for (const [value, dtype, type] of explicit) {
    t.equal(String(pt.constant(value, { dtype }).type), type, `constant(${JSON.stringify(value)}, { dtype: '${dtype}' })`);
  }
  t.same(weft.tolist(pt.constant(3e9, { dtype: 'uint32' }).data), 3e9, 'an explicit uint32 holds 3e9');
  t.same(weft.tolist(pt.constant([true, 2]).data), [1, 2], 'a mixed boolean and number array holds numbers');
  t.equal(String(pt.constant([]).type), `TensorType(${weft.config.floatX}, (0,))`, 'an empty array takes floatX, as shared([]) does');
  await throwsExactly(t, () => pt.constant(300, { dtype: 'int8' }), RangeError, 'constant: 300 does not fit int8 (integers from -128 to 127)');
  t.same(weft.tolist(pt.constant(ndarray(new Int8Array([1, 2, 3, 4]), [2, 2]).transpose(1, 0)).data), [[1, 3], [2, 4]], 'a transposed ndarray');
  const five = pt.constant(5, { dtype: 'float32', name: 'five' });
  t.equal(String(five.type), 'TensorType(float32, ())');
  t.equal(five.name, 'five');
  t.equal(String(five), 'five', 'a named constant prints as its name');
  t.equal(String(pt.constant(5)), 'TensorConstant{5}');
  t.same(weft.tolist(pt.constant([1.7, -2.2], { dtype: 'int32' }).data), [1, -2], 'an explicit dtype truncates floats');
  t.equal(pt.constant([1, 2], { dtype: 'bool' }).dtype, 'bool');
  const src = ndarray(new Float64Array([1, 2]));
  const c = pt.constant(src);
  t.not(c.data.data, src.data, 'the constant owns a copy');
  await throwsExactly(t, () => pt.constant(pt.vector('v')), TypeError, 'constant: expected a value, got a variable');
  await throwsExactly(t, () => pt.constant('a' as unknown as number), TypeError, 'constant: cannot make a constant from string');
  await throwsExactly(t, () => pt.constant([[1], [2, 3]]), TypeError, 'constant: the nested array is ragged (expected length 1 at depth 1)');
  await throwsExactly(t, () => pt.constant(NaN, { dtype: 'int32' }), weft.ValueTypeError,
    'constant: NaN is not a value of int32 (integers from -2147483648 to 2147483647)');
  await throwsExactly(t, () => pt.constant(1, { dtype: 'int64' as weft.Dtype }), TypeError, 'TensorType: unknown dtype "int64"');
});

t.test('constructors: scalar, vector, matrix, tensor3, tensor4 and tensor', async (t) => {
  const made: Array<[string, TV, number]> = [
    ['scalar', pt.scalar('a'), 0],
    ['vector', pt.vector('a'), 1],
    ['matrix', pt.matrix('a'), 2],
    ['tensor3', pt.tensor3('a'), 3],
    ['tensor4', pt.tensor4('a'), 4],
  ];
  for (const [name, v, ndim] of made) {
    t.ok(v instanceof pt.TensorVariable, `${name}: a TensorVariable`);
    t.equal(v.ndim, ndim, `${name}: ${ndim}-d`);
    t.equal(v.dtype, weft.config.floatX, `${name}: floatX by default`);
    t.same(v.type.shape, Array(ndim).fill(null), `${name}: unknown lengths`);
    t.equal(v.name, 'a');
    t.equal(v.owner, null);
  }
  t.equal(pt.vector().name, undefined, 'no name');
  t.equal(String(pt.scalar('i', 'int32').type), 'TensorType(int32, ())');
  t.equal(String(pt.tensor4(undefined, 'uint8').type), 'TensorType(uint8, (?, ?, ?, ?))');
  t.equal(String(pt.matrix('b', 'bool').type), 'TensorType(bool, (?, ?))');
  t.not(pt.vector('a'), pt.vector('a'), 'every call makes a new variable');
  const s = pt.tensor({ shape: [2, null, 1], name: 't', dtype: 'int8' });
  t.equal(String(s.type), 'TensorType(int8, (2, ?, 1))');
  t.equal(s.name, 't');
  t.same(s.broadcastable, [false, false, true]);
  t.equal(pt.tensor({ shape: [] }).dtype, weft.config.floatX);
  await throwsExactly(t, () => pt.vector('v', 'int64' as weft.Dtype), TypeError, 'TensorType: unknown dtype "int64"');
  await throwsExactly(t, () => pt.tensor({ shape: [-1] }), TypeError, 'TensorType: static lengths must be non-negative integers or null, got [-1]');
});

t.test('weft.tolist for 0-d and n-d outputs', async (t) => {
  t.equal(weft.tolist(ndarray(new Float64Array([7.5]), [])), 7.5, '0-d: a number');
  t.same(weft.tolist(ndarray(new Int8Array([1, 2, 3]))), [1, 2, 3]);
  t.same(weft.tolist(ndarray(new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3])), [[1, 2, 3], [4, 5, 6]]);
  t.same(weft.tolist(ndarray(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), [2, 2, 2])), [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]);
  t.same(weft.tolist(ndarray(new Float64Array([1, 2, 3, 4, 5, 6]), [2, 3]).transpose(1, 0)), [[1, 4], [2, 5], [3, 6]], 'non-contiguous');
  t.same(weft.tolist(ndarray(new Float64Array([0, 1, 2, 3]), [2, 2], [-2, -1], 3)), [[3, 2], [1, 0]], 'negative strides');
  t.same(weft.tolist(ndarray(new Float64Array(0), [0])), []);
  t.same(weft.tolist(ndarray(new Float64Array(0), [2, 0])), [[], []]);
  t.same(weft.tolist(ndarray(new Float64Array(0), [0, 2])), []);
  const x = pt.matrix('x');
  const fn = await weft.compile([x], [x.sum(), x.mul(2), x.gt(2)]);
  const [s, m, b] = await fn([[1, 2], [3, 4]]);
  t.equal(weft.tolist(s!), 10, 'a 0-d output');
  t.same(weft.tolist(m!), [[2, 4], [6, 8]]);
  t.same(weft.tolist(b!), [[0, 0], [1, 1]], 'bool outputs read as 0 and 1');
});

t.test('weft.Rng: the same seed gives the same values, other seeds other values', async (t) => {
  const draw = (seed: number): number[][] => {
    const r = new weft.Rng(seed);
    return [
      Array.from(r.uniform([5], { dtype: 'float64' }).data),
      Array.from(r.normal([5], { dtype: 'float64' }).data),
      Array.from(r.integers([5], 0, 1000).data),
      [r.random(), r.random()],
    ];
  };
  t.same(draw(1), draw(1), 'seed 1 twice');
  t.same(draw(0), draw(0));
  t.same(draw(4294967295), draw(4294967295));
  const a = draw(1);
  const b = draw(2);
  for (let i = 0; i < a.length; i++) t.notSame(a[i], b[i], `draw ${i} differs between seeds 1 and 2`);
  t.notSame(draw(0)[0], draw(4294967295)[0]);
  const r = new weft.Rng(3);
  t.notSame(Array.from(r.uniform([4]).data), Array.from(r.uniform([4]).data), 'successive draws differ');
  t.equal(new weft.Rng(9).seed, 9);
  const u = new weft.Rng(5).uniform([2, 3], { dtype: 'float32' });
  t.equal(u.data.constructor, Float32Array);
  t.same(u.shape, [2, 3]);
  t.same(new weft.Rng(5).normal([0, 4]).shape, [0, 4], 'empty draws');
  t.same(new weft.Rng(5).normal([]).shape, [], '0-d draws');
});

t.test('weft.Rng: uniform bounds, normal moments, integer ranges', async (t) => {
  const n = 10000;
  const r = new weft.Rng(11);
  const u = Array.from(r.uniform([n], { low: -2, high: 3, dtype: 'float64' }).data);
  t.ok(u.every((v) => v >= -2 && v < 3), 'uniform values in [-2, 3)');
  t.ok(Math.min(...u) < -1.99 && Math.max(...u) > 2.99, 'and they reach both ends');
  const mean = u.reduce((a, v) => a + v, 0) / n;
  t.ok(Math.abs(mean - 0.5) < 0.05, `uniform mean ${mean} near 0.5`);
  const u01 = Array.from(r.uniform([n], { dtype: 'float32' }).data);
  t.ok(u01.every((v) => v >= 0 && v <= 1), 'default bounds [0, 1)');

  const g = Array.from(r.normal([n], { mean: 3, std: 2, dtype: 'float64' }).data);
  const gm = g.reduce((a, v) => a + v, 0) / n;
  const gs = Math.sqrt(g.reduce((a, v) => a + (v - gm) ** 2, 0) / (n - 1));
  t.ok(Math.abs(gm - 3) < 0.06, `normal mean ${gm} near 3 (4 standard errors: 0.08)`);
  t.ok(Math.abs(gs - 2) < 0.06, `normal std ${gs} near 2`);
  const within1 = g.filter((v) => Math.abs(v - 3) < 2).length / n;
  t.ok(Math.abs(within1 - 0.6827) < 0.02, `${within1} of the samples within one std (0.683)`);
  const std01 = Array.from(r.normal([n]).data);
  const m01 = std01.reduce((a, v) => a + v, 0) / n;
  t.ok(Math.abs(m01) < 0.04, `standard normal mean ${m01}`);

  const ints = r.integers([n], -3, 4, 'int8');
  t.equal(ints.data.constructor, Int8Array);
  const iv = Array.from(ints.data);
  t.ok(iv.every((v) => Number.isInteger(v) && v >= -3 && v < 4), 'integers in [-3, 4)');
  const counts = new Map<number, number>();
  for (const v of iv) counts.set(v, (counts.get(v) ?? 0) + 1);
  t.same([...counts.keys()].sort((a, b) => a - b), [-3, -2, -1, 0, 1, 2, 3], 'every value appears');
  t.ok([...counts.values()].every((c) => Math.abs(c - n / 7) < 200), 'about equally often');
  t.same(Array.from(r.integers([3], 5, 6).data), [5, 5, 5], 'a range of one value');
  t.equal(r.integers([2], 0, 2).data.constructor, Int32Array, 'int32 by default');
  t.ok(Array.from(r.integers([100], 0, 2, 'bool').data).every((v) => v === 0 || v === 1), 'bool integers');
  t.ok(Array.from(r.integers([100], 0, 4294967296, 'uint32').data).every((v) => v >= 0 && v <= 4294967295), 'the whole uint32 range');
  const x = r.random();
  t.ok(x >= 0 && x < 1, 'random() in [0, 1)');
});

t.test('weft.Rng: bad arguments', async (t) => {
  const r = new weft.Rng(1);
  await throwsExactly(t, () => r.uniform([2], { dtype: 'int32' }), TypeError, 'Rng.uniform: dtype must be a float dtype, got int32');
  await throwsExactly(t, () => r.normal([2], { dtype: 'bool' }), TypeError, 'Rng.normal: dtype must be a float dtype, got bool');
  await throwsExactly(t, () => r.integers([2], 1.5, 3), RangeError, 'Rng.integers: expected integers low < high, got 1.5 and 3');
  await throwsExactly(t, () => r.integers([2], 3, 3), RangeError, 'Rng.integers: expected integers low < high, got 3 and 3');
  await throwsExactly(t, () => r.integers([2], 5, 1), RangeError, 'Rng.integers: expected integers low < high, got 5 and 1');
  await throwsExactly(t, () => r.integers([2], 0, 300, 'int8'), RangeError, 'Rng.integers: [0, 300) does not fit int8 (integers from -128 to 127)');
  await throwsExactly(t, () => r.integers([2], -1, 2, 'uint8'), RangeError, 'Rng.integers: [-1, 2) does not fit uint8 (integers from 0 to 255)');
  for (const seed of [1.5, -1, 4294967296, NaN]) {
    await throwsExactly(t, () => new weft.Rng(seed), RangeError, `Rng: the seed must be an integer from 0 to 4294967295, got ${seed}`, `seed ${seed}`);
  }
});
