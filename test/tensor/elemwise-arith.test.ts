// Element-wise arithmetic (add sub mul trueDiv intDiv mod pow neg abs sign sqr maximum minimum
// clip where) through the broadcast tester, plus NumPy's reference values for the edge cases:
// floor division and modulo signs, division by zero, integer wrapping, NaN propagation.
import t from 'tap';
import type { Dtype } from '../../src/kernels/dtype.js';
import {
  arr,
  domain,
  dtypeRules,
  gradCases,
  isFloat,
  makeBroadcastTester,
  standardCases,
  type Arg,
  type Expectation,
} from '../elemwise-tester.js';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

const r = rng(2024);
const INTS: readonly Dtype[] = ['int8', 'uint8', 'int16', 'int32', 'uint32'];

// Independent expectations: floats in plain JS arithmetic (float32 results rounded after each
// operation, as NumPy computes them), integers exactly with BigInt and then wrapped to 32 bits
// (storing into the output's typed array wraps further to its width).
const wrap = (b: bigint): number => Number(BigInt.asIntN(32, b));
const round32 = (out: Dtype, v: number): number => (out === 'float32' ? Math.fround(v) : v);
const isInt = (d: Dtype): boolean => !isFloat(d);

function bigFloorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

const expectAdd: Expectation = (xs, out) =>
  isInt(out) ? wrap(xs.reduce((s, v) => s + BigInt(v), 0n)) : xs.reduce((s, v) => round32(out, s + v));
const expectMul: Expectation = (xs, out) =>
  isInt(out) ? wrap(xs.reduce((s, v) => s * BigInt(v), 1n)) : xs.reduce((s, v) => round32(out, s * v));
const expectSub: Expectation = ([a, b], out) => (isInt(out) ? wrap(BigInt(a!) - BigInt(b!)) : a! - b!);
const expectIntDiv: Expectation = ([a, b], out) => {
  if (isFloat(out)) return Math.floor(a! / b!);
  return b === 0 ? 0 : wrap(bigFloorDiv(BigInt(a!), BigInt(b!)));
};
const expectMod: Expectation = ([a, b], out) => {
  if (isFloat(out)) return a! - b! * Math.floor(a! / b!);
  if (b === 0) return 0;
  return wrap(BigInt(a!) - BigInt(b!) * bigFloorDiv(BigInt(a!), BigInt(b!)));
};
const expectPow: Expectation = ([a, b], out) => (isInt(out) ? wrap(BigInt(a!) ** BigInt(b!)) : a! ** b!);
const nanOr = (xs: readonly number[], f: () => number): number => (xs.some(Number.isNaN) ? NaN : f());

const binaryGrad = (ranges: readonly (readonly [number, number])[]): Record<string, readonly Arg[]> =>
  gradCases(2, domain(r, ranges));

t.test('add', makeBroadcastTester({
  op: (x, y) => pt.add(x, y),
  expected: expectAdd,
  good: {
    ...standardCases(2, domain(r, [[-10, 10]]), dtypeRules.arith, { ints: [...INTS, 'bool'] }),
    int32_overflow: { args: [arr('int32', [2147483647, -2147483648, 5]), arr('int32', [1, -1, -7])], dtype: 'int32' },
    uint8_wrap: { args: [arr('uint8', [250, 255, 0]), arr('uint8', [10, 255, 0])], dtype: 'uint8' },
    uint32_wrap: { args: [arr('uint32', [4294967295, 4000000000]), arr('uint32', [1, 500000000])], dtype: 'uint32' },
    int8_uint8: { args: [arr('int8', [-128, 127]), arr('uint8', [255, 255])], dtype: 'int16' },
    uint32_int32: { args: [arr('uint32', [4294967295]), arr('int32', [-2147483648])], dtype: 'float64' },
    inf_nan: { args: [arr('float64', [Infinity, Infinity, NaN]), arr('float64', [-Infinity, 1, 1])], dtype: 'float64' },
  },
  grad: binaryGrad([[-3, 3]]),
}));

t.test('add with several inputs', makeBroadcastTester({
  op: (x, y, z) => pt.add(x, y, z),
  expected: expectAdd,
  good: {
    ...standardCases(3, domain(r, [[-10, 10]]), dtypeRules.arith, { ints: ['int32', 'uint8'] }),
    // float32 sums round after each addition: add(a, b, c) == add(add(a, b), c)
    float32_rounding: {
      args: [arr('float32', [1, 16777216, 0.1]), arr('float32', [1e-8, 1, 0.2]), arr('float32', [-1, -16777216, 0.3])],
      dtype: 'float32',
    },
  },
  grad: gradCases(3, domain(r, [[-3, 3]])),
}));

t.test('sub', makeBroadcastTester({
  op: (x, y) => pt.sub(x, y),
  expected: expectSub,
  good: {
    ...standardCases(2, domain(r, [[-10, 10]]), dtypeRules.arith, { ints: INTS }),
    uint8_wrap: { args: [arr('uint8', [3, 0]), arr('uint8', [5, 255])], dtype: 'uint8' },
    int32_overflow: { args: [arr('int32', [-2147483648]), arr('int32', [1])], dtype: 'int32' },
  },
  grad: binaryGrad([[-3, 3]]),
}));

t.test('mul', makeBroadcastTester({
  op: (x, y) => pt.mul(x, y),
  expected: expectMul,
  good: {
    ...standardCases(2, domain(r, [[-10, 10]]), dtypeRules.arith, { ints: [...INTS, 'bool'] }),
    int32_overflow: {
      args: [arr('int32', [65536, 123456789, -2147483648, 46341]), arr('int32', [65536, 987654321, -1, 46341])],
      dtype: 'int32',
    },
    uint32_wrap: { args: [arr('uint32', [4294967295, 3000000000]), arr('uint32', [4294967295, 3])], dtype: 'uint32' },
    int16_wrap: { args: [arr('int16', [300, -32768]), arr('int16', [300, -1])], dtype: 'int16' },
    inf_times_zero: { args: [arr('float64', [Infinity, -Infinity]), arr('float64', [0, -2])], dtype: 'float64' },
  },
  grad: binaryGrad([[-3, 3]]),
}));

t.test('mul with several inputs', makeBroadcastTester({
  op: (x, y, z, w) => pt.mul(x, y, z, w),
  expected: expectMul,
  good: {
    ...standardCases(4, domain(r, [[-4, 4]]), dtypeRules.arith, { ints: ['int16', 'int32'] }),
    // products past 2^53 must still wrap exactly
    int32_large: { args: [arr('int32', [2147483647]), arr('int32', [2147483647]), arr('int32', [2147483647]), arr('int32', [3])], dtype: 'int32' },
    int16_large: { args: [arr('int16', [30001]), arr('int16', [30003]), arr('int16', [30007]), arr('int16', [30011])], dtype: 'int16' },
  },
  grad: gradCases(4, domain(r, [[-2, 2]])),
}));

t.test('trueDiv', makeBroadcastTester({
  op: (x, y) => pt.trueDiv(x, y),
  expected: ([a, b]) => a! / b!,
  good: {
    ...standardCases(2, domain(r, [[-10, 10]], { nonzero: [1] }), dtypeRules.trueDiv, { ints: [...INTS, 'bool'] }),
    by_zero: { args: [arr('float64', [1, -1, 0, NaN]), arr('float64', [0, 0, 0, 0])], dtype: 'float64' },
    by_negative_zero: { args: [arr('float64', [1, -1]), arr('float64', [-0, -0])], dtype: 'float64' },
    int_by_zero: { args: [arr('int32', [1, -1, 0]), arr('int32', [0, 0, 0])], dtype: 'float64' },
    int8_int8: { args: [arr('int8', [1, -7]), arr('int8', [3, 2])], dtype: 'float64' },
  },
  grad: binaryGrad([[-3, 3], [0.5, 3]]),
}));

t.test('intDiv', makeBroadcastTester({
  op: (x, y) => pt.intDiv(x, y),
  expected: expectIntDiv,
  good: {
    ...standardCases(2, domain(r, [[-20, 20], [-6, 6]], { nonzero: [1] }), dtypeRules.arith, { ints: INTS }),
    signs: { args: [arr('int32', [7, -7, 7, -7, 6, -6]), arr('int32', [2, 2, -2, -2, 3, 3])], dtype: 'int32' },
    int_by_zero: { args: [arr('int32', [5, -5, 0]), arr('int32', [0, 0, 0])], dtype: 'int32' },
    uint8_by_zero: { args: [arr('uint8', [5, 255]), arr('uint8', [0, 16])], dtype: 'uint8' },
    int32_min_by_minus_one: { args: [arr('int32', [-2147483648]), arr('int32', [-1])], dtype: 'int32' },
  },
  grad: binaryGrad([[0.2, 0.8], [2, 3]]),
}));

t.test('mod', makeBroadcastTester({
  op: (x, y) => pt.mod(x, y),
  expected: expectMod,
  tol: 1e-13,
  absTol: 1e-13,
  good: {
    ...standardCases(2, domain(r, [[-20, 20], [-6, 6]], { nonzero: [1] }), dtypeRules.arith, { ints: INTS }),
    signs: { args: [arr('int32', [7, -7, 7, -7, 6, -6]), arr('int32', [2, 2, -2, -2, 3, 3])], dtype: 'int32' },
    int_by_zero: { args: [arr('int32', [5, -5, 0]), arr('int32', [0, 0, 0])], dtype: 'int32' },
    int8_min_by_minus_one: { args: [arr('int8', [-128]), arr('int8', [-1])], dtype: 'int8' },
  },
  // away from the jumps at multiples of y
  grad: binaryGrad([[0.2, 0.8], [1, 1.5]]),
}));

t.test('pow', makeBroadcastTester({
  op: (x, y) => pt.pow(x, y),
  expected: expectPow,
  good: {
    // weft's float pow is its own (kernels/vmath/power.ts, within 0.51 ulp), V8's Math.pow within
    // about 1: they may differ by an ulp (the accuracy itself is test/kernels/vmath-power.test.ts).
    ...Object.fromEntries(Object.entries(standardCases(2, domain(r, [[0.1, 4], [-3, 3]]), dtypeRules.arith, { floats: [] })).map(([k, c]) => [k, { ...c, tol: 2.3e-16 }])),
    float32: { args: [arr('float32', [0.5, 2, 3.7]), arr('float32', [2, -1.5, 3])], dtype: 'float32', tol: 0 },
    ...Object.fromEntries(
      (['int8', 'uint8', 'int16', 'int32', 'uint32'] as const).map((d) => [
        d,
        { args: [domain(r, [[-5, 5]])(0, d, [2, 3]), domain(r, [[0, 6]])(1, d, [2, 3])], dtype: d },
      ]),
    ),
    int32_overflow: { args: [arr('int32', [3, 2, -3, 7]), arr('int32', [40, 31, 21, 0])], dtype: 'int32' },
    int8_overflow: { args: [arr('int8', [3, 2, -2]), arr('int8', [5, 7, 7])], dtype: 'int8' },
  },
  grad: binaryGrad([[0.5, 2], [-2, 2]]),
}));

t.test('neg', makeBroadcastTester({
  op: (x) => pt.neg(x),
  expected: ([a], out) => (isInt(out) ? wrap(-BigInt(a!)) : -a!),
  good: {
    ...standardCases(1, domain(r, [[-10, 10]]), dtypeRules.arith, { ints: [...INTS, 'bool'] }),
    wrap: { args: [arr('int32', [-2147483648, 2147483647])], dtype: 'int32' },
    uint8: { args: [arr('uint8', [0, 5, 255])], dtype: 'uint8' },
  },
  grad: gradCases(1, domain(r, [[-3, 3]])),
}));

t.test('abs', makeBroadcastTester({
  op: (x) => pt.abs(x),
  expected: ([a], out) => (isInt(out) ? wrap(a! < 0 ? -BigInt(a!) : BigInt(a!)) : a! < 0 ? -a! : a!),
  good: {
    ...standardCases(1, domain(r, [[-10, 10]]), dtypeRules.numpy, { ints: [...INTS, 'bool'] }),
    int8_min: { args: [arr('int8', [-128, -127, 0])], dtype: 'int8' },
    specials: { args: [arr('float64', [-Infinity, NaN, -0])], dtype: 'float64' },
  },
  grad: gradCases(1, domain(r, [[0.5, 3]])),
}));

t.test('sign', makeBroadcastTester({
  op: (x) => pt.sign(x),
  expected: ([a]) => (Number.isNaN(a!) ? NaN : a! > 0 ? 1 : a! < 0 ? -1 : 0),
  good: {
    ...standardCases(1, domain(r, [[-10, 10]]), dtypeRules.arith, { ints: INTS }),
    specials: { args: [arr('float64', [-Infinity, Infinity, NaN, -0, 0, 1e-300])], dtype: 'float64' },
  },
  grad: gradCases(1, domain(r, [[0.5, 3]])),
}));

t.test('sqr', makeBroadcastTester({
  op: (x) => pt.sqr(x),
  expected: ([a], out) => (isInt(out) ? wrap(BigInt(a!) * BigInt(a!)) : a! * a!),
  good: {
    ...standardCases(1, domain(r, [[-10, 10]]), dtypeRules.arith, { ints: [...INTS, 'bool'] }),
    int32_overflow: { args: [arr('int32', [46341, 65536, -2147483648, 2147483647])], dtype: 'int32' },
    int8_overflow: { args: [arr('int8', [16, -128, 12])], dtype: 'int8' },
  },
  grad: gradCases(1, domain(r, [[-3, 3]])),
}));

const expectMax: Expectation = (xs) => nanOr(xs, () => (xs[0]! >= xs[1]! ? xs[0]! : xs[1]!));
const expectMin: Expectation = (xs) => nanOr(xs, () => (xs[0]! <= xs[1]! ? xs[0]! : xs[1]!));

t.test('maximum', makeBroadcastTester({
  op: (x, y) => pt.maximum(x, y),
  expected: expectMax,
  good: {
    ...standardCases(2, domain(r, [[-10, 10]]), dtypeRules.numpy, { ints: [...INTS, 'bool'] }),
    nan: { args: [arr('float64', [NaN, 1, NaN, -Infinity]), arr('float64', [1, NaN, NaN, 3])], dtype: 'float64' },
    int8_uint8: { args: [arr('int8', [-128, 5]), arr('uint8', [0, 200])], dtype: 'int16' },
  },
  // points without ties (the inputs are drawn from separate ranges)
  grad: binaryGrad([[-3, -1], [1, 3]]),
}));

t.test('minimum', makeBroadcastTester({
  op: (x, y) => pt.minimum(x, y),
  expected: expectMin,
  good: {
    ...standardCases(2, domain(r, [[-10, 10]]), dtypeRules.numpy, { ints: [...INTS, 'bool'] }),
    nan: { args: [arr('float64', [NaN, 1, NaN, Infinity]), arr('float64', [1, NaN, NaN, 3])], dtype: 'float64' },
  },
  grad: binaryGrad([[-3, -1], [1, 3]]),
}));

t.test('clip', makeBroadcastTester({
  op: (x, lo, hi) => pt.clip(x, lo, hi),
  expected: (xs) =>
    nanOr(xs, () => {
      const m = xs[0]! > xs[1]! ? xs[0]! : xs[1]!;
      return m < xs[2]! ? m : xs[2]!;
    }),
  good: {
    ...standardCases(3, domain(r, [[-10, 10], [-5, -1], [1, 5]]), dtypeRules.numpy, { ints: ['int8', 'uint8', 'int32'] }),
    nan: { args: [arr('float64', [NaN, 0.5, 0.5, -1, 5]), arr('float64', [0, NaN, 0, 0, 0]), arr('float64', [1, 1, NaN, 1, 1])], dtype: 'float64' },
    low_above_high: { args: [arr('float64', [0.5, 3, -3]), arr('float64', 2), arr('float64', 1)], dtype: 'float64' },
    bool: { args: [arr('bool', [true, false]), arr('bool', false), arr('bool', true)], dtype: 'bool' },
  },
  // x strictly inside, below and above the bounds (no ties)
  grad: {
    inside: [arr('float64', [[0.2, -0.3], [0.7, 0.1]]), arr('float64', [[-1, -1], [-2, -0.5]]), arr('float64', [[1, 2], [1.5, 0.5]])],
    below_and_above: [arr('float64', [-3, 3, 0.5, -2]), arr('float64', [-1, -1, -1, -1]), arr('float64', [1, 1, 1, 1])],
    broadcast_bounds: [arr('float64', [[-3, 0.2, 3]]), arr('float64', [[-1]]), arr('float64', [[1]])],
    float32: [arr('float32', [-3, 0.25, 3]), arr('float32', [-1, -1, -1]), arr('float32', [1, 1, 1])],
  },
}));

t.test('where', makeBroadcastTester({
  op: (c, a, b) => pt.where(c, a, b),
  // NumPy's truthiness: non-zero and NaN are true (JS's Boolean(NaN) is false)
  expected: ([c, a, b]) => (c !== 0 || Number.isNaN(c!) ? a! : b!),
  good: {
    ...Object.fromEntries(
      Object.entries(standardCases(3, domain(r, [[-10, 10]]), dtypeRules.numpy)).map(([k, v]) => [
        k,
        { ...v, args: [{ ...v.args[0]!, dtype: 'bool', values: v.args[0]!.values.map((x) => (x > 0 ? 1 : 0)) }, ...v.args.slice(1)] } as const,
      ]),
    ),
    nan_condition: { args: [arr('float64', [NaN, 0, -0, 2]), arr('float64', [1, 1, 1, 1]), arr('float64', [2, 2, 2, 2])], dtype: 'float64' },
    int_condition: { args: [arr('int32', [0, 3, -1]), arr('int8', [1, 1, 1]), arr('uint8', [200, 200, 200])], dtype: 'int16' },
    bools: { args: [arr('bool', [true, false]), arr('bool', [true, true]), arr('bool', [false, false])], dtype: 'bool' },
  },
}));

t.test('where: gradients', makeBroadcastTester({
  // the condition comes from a float input away from 0, which gets a zero gradient
  op: (c, a, b) => pt.where(pt.gt(c, 0), a, b),
  expected: ([c, a, b]) => (c! > 0 ? a! : b!),
  grad: {
    same_shapes: [arr('float64', [[1, -1, 1], [-1, -1, 1]]), arr('float64', [[1, 2, 3], [4, 5, 6]]), arr('float64', [[-1, -2, -3], [-4, -5, -6]])],
    broadcast: [arr('float64', [[1], [-1]]), arr('float64', [[1, 2, 3]]), arr('float64', [[-1, -2, -3], [-4, -5, -6]])],
    float32: [arr('float32', [1, -1]), arr('float32', [0.5, 2]), arr('float32', [-3, 4])],
  },
}));

// ---------------------------------------------------------------------------------------------
// NumPy's own answers for the edge cases (np.floor_divide, np.mod, np.power on these inputs).

t.test('intDiv and mod on floats: reference values', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const a = [Infinity, -Infinity, 5, -5, 0, -0, NaN, 1e308, 7.5, -7.5, 1, 1, 0, -1, 5.5, -5.5, 5.5, -5.5];
  const b = [2, 2, Infinity, Infinity, -3, 3, 1, 1e-10, -2, 0.5, 0.1, 0, 0, 0, 2, 2, -2, -2];
  const div = await run([x, y], pt.intDiv(x, y), [a, b]);
  near(t, div, [NaN, NaN, 0, -1, -0, -0, NaN, Infinity, -4, -15, 9, Infinity, NaN, -Infinity, 2, -3, -3, 2], 0);
  const mod = await run([x, y], pt.mod(x, y), [a, b]);
  const want = [NaN, NaN, 5, Infinity, -0, 0, NaN, null, -0.5, 0, 0.09999999999999995, NaN, NaN, NaN, 1.5, 0.5, -0.5, -1.5];
  const got = weft.tolist(mod) as number[];
  want.forEach((w, i) => {
    if (w !== null) t.ok(Object.is(got[i], w) || (w === 0 && got[i] === 0), `mod(${a[i]}, ${b[i]}) = ${w}, got ${got[i]}`);
  });
  t.ok(Object.is(got[4], -0), 'a zero result takes the sign of the divisor (-3)');
  t.ok(Object.is(got[5], 0), 'a zero result takes the sign of the divisor (3)');
  // float32 too: 1 // 0.1f is 9 and -1 // 0.1f is -10 (0.1f is a little above 0.1)
  const x32 = pt.vector('x', 'float32');
  near(t, await run([x32], pt.intDiv(x32, 0.1), [new Float32Array([1, -1])]), [9, -10], 0);
});

t.test('intDiv and mod on integers: reference values', async (t) => {
  const x = pt.vector('x', 'int32');
  const y = pt.vector('y', 'int32');
  const a = [7, -7, 7, -7, 5, -5, -2147483648];
  const b = [2, 2, -2, -2, 0, 0, -1];
  near(t, await run([x, y], pt.intDiv(x, y), [a, b]), [3, -4, -4, 3, 0, 0, -2147483648], 0);
  near(t, await run([x, y], pt.mod(x, y), [a, b]), [1, 1, -1, -1, 0, 0, 0], 0);
  const i8 = pt.vector('i', 'int8');
  const out = pt.intDiv(i8, -1);
  t.equal(out.dtype, 'int8');
  near(t, await run([i8], out, [[-128, 127]]), [-128, -127], 0);
});

t.test('pow: reference values', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  // C's pow, as NumPy: 1^NaN = 1, (-1)^inf = 1, NaN^0 = 1; JS's Math.pow differs on the first two
  const out = await run([x, y], pt.pow(x, y), [[1, -1, NaN, 0, -0, 2, -8, 4], [NaN, Infinity, 0, -1, -1, 0.5, 1 / 3, -0.5]]);
  near(t, out, [1, 1, 1, Infinity, -Infinity, Math.SQRT2, NaN, 0.5], 1e-16);
  const i = pt.vector('i', 'int32');
  const j = pt.vector('j', 'int32');
  near(t, await run([i, j], pt.pow(i, j), [[3, 2, -3, 0, 5], [40, 31, 3, 0, 1]]), [689956897, -2147483648, -27, 1, 5], 0);
  // NumPy refuses negative integer powers; weft gives the integer part of the reciprocal
  near(t, await run([i, j], pt.pow(i, j), [[2, 1, -1, -1], [-1, -3, -3, -2]]), [0, 1, -1, 1], 0);
  const b = pt.vector('b', 'int8');
  near(t, await run([b], pt.pow(b, 5), [[3, -3]]), [-13, 13], 0);
});

t.test('arithmetic in float32 equals Math.fround of the float64 result', async (t) => {
  const values = r.uniform([64], { low: -100, high: 100, dtype: 'float32' });
  const others = r.uniform([64], { low: 0.5, high: 100, dtype: 'float32' });
  const x = pt.vector('x', 'float32');
  const y = pt.vector('y', 'float32');
  const ops: Array<[string, (a: weft.pt.TensorVariable, b: weft.pt.TensorVariable) => weft.pt.TensorVariable, (a: number, b: number) => number]> = [
    ['add', pt.add, (a, b) => a + b],
    ['sub', pt.sub, (a, b) => a - b],
    ['mul', pt.mul, (a, b) => a * b],
    ['trueDiv', pt.trueDiv, (a, b) => a / b],
  ];
  for (const [name, op, f] of ops) {
    const out = op(x, y);
    t.equal(out.dtype, 'float32', `${name}: float32`);
    const got = (await run([x, y], out, [values, others])).data;
    const bad = [...got].filter((g, k) => g !== Math.fround(f(values.data[k]!, others.data[k]!))).length;
    t.equal(bad, 0, `${name}: every element is the rounded float64 result`);
  }
  // 0.1f + 0.2f: the float64 sum 0.30000000447034836 rounds to the float32 0.3
  near(t, await run([x, y], pt.add(x, y), [new Float32Array([0.1]), new Float32Array([0.2])]), [Math.fround(0.3)], 0);
});

// ---------------------------------------------------------------------------------------------
// Bad input

t.test('arity is checked', async (t) => {
  const x = pt.vector('x');
  const loose = pt.sub as unknown as (...xs: unknown[]) => weft.pt.TensorVariable;
  await throwsExactly(t, () => loose(x), TypeError, 'Elemwise{sub}: expected 2 inputs, got 1');
  await throwsExactly(t, () => loose(x, x, x), TypeError, 'Elemwise{sub}: expected 2 inputs, got 3');
  const looseClip = pt.clip as unknown as (...xs: unknown[]) => weft.pt.TensorVariable;
  await throwsExactly(t, () => looseClip(x, 0), TypeError, 'Elemwise{clip}: expected 3 inputs, got 2');
  const looseNeg = pt.neg as unknown as (...xs: unknown[]) => weft.pt.TensorVariable;
  await throwsExactly(t, () => looseNeg(x, x), TypeError, 'Elemwise{neg}: expected 1 input, got 2');
  await throwsExactly(t, () => pt.add(), TypeError, 'Elemwise{add}: expected at least 1 input, got 0');
  await throwsExactly(t, () => x.sub(undefined as unknown as number), TypeError, 'Elemwise{sub}: argument 1 is undefined; expected a tensor or a value');
});

t.test('incompatible static shapes are refused when the graph is built', async (t) => {
  const x = pt.tensor({ shape: [2, 3], name: 'x' });
  const y = pt.tensor({ shape: [4, 3], name: 'y' });
  await throwsExactly(
    t,
    () => pt.mul(x, y),
    weft.ShapeMismatchError,
    'Elemwise{mul}: input 0 (x) has static length 2 on axis 0 and input 1 (y) has 4; they cannot be broadcast together (lengths must match or be 1)',
  );
  const v = pt.tensor({ shape: [5], name: 'v' });
  await throwsExactly(
    t,
    () => pt.add(x, v),
    weft.ShapeMismatchError,
    'Elemwise{add}: input 0 (x) has static length 3 on axis 1 and input 1 (v) has 5; they cannot be broadcast together (lengths must match or be 1)',
  );
  const z = pt.tensor({ shape: [null, 3], name: 'z' });
  await throwsExactly(
    t,
    () => pt.clip(z, x, y),
    weft.ShapeMismatchError,
    'Elemwise{clip}: input 1 (x) has static length 2 on axis 0 and input 2 (y) has 4; they cannot be broadcast together (lengths must match or be 1)',
  );
});

t.test('shape mismatches at run time name the inputs and the axis', makeBroadcastTester({
  op: (x, y) => pt.add(x, y),
  expected: expectAdd,
  badRuntime: {
    bad_shapes: {
      args: [arr('float64', [[1, 2, 3], [4, 5, 6]]), arr('float64', [[1, 2], [3, 4], [5, 6]])],
      error: weft.NodeError,
      message:
        'Elemwise{add}: input 0 has shape [2, 3] and input 1 has shape [3, 2]: they differ on axis 0 (2 vs 3)' +
        '\n  in node 0: Elemwise{add}(x0, x1)\n  input values: float64 [2, 3], float64 [3, 2]',
    },
    bad_row: {
      args: [arr('float64', [[1, 2, 3], [4, 5, 6]]), arr('float64', [[1, 2]])],
      error: weft.NodeError,
      message:
        'Elemwise{add}: input 0 has shape [2, 3] and input 1 has shape [1, 2]: they differ on axis 1 (3 vs 2)' +
        '\n  in node 0: Elemwise{add}(x0, x1)\n  input values: float64 [2, 3], float64 [1, 2]',
    },
  },
}));

t.test('runtime broadcasting of an axis not marked broadcastable is refused', async (t) => {
  const x = pt.matrix('x');
  const y = pt.vector('y');
  const fn = await weft.compile([x, y], pt.mul(x, y));
  await throwsExactly(
    t,
    () => fn([[1, 2, 3], [4, 5, 6]], [7]),
    weft.NodeError,
    'Elemwise{mul}: input 1 (y, padded to 2 axes) has length 1 on axis 1 where input 0 has 3, but its type TensorType(float64, (1, ?)) ' +
      'does not mark that axis broadcastable; give it a static length of 1 (e.g. pt.tensor({ shape: [1, null] }) or x.dimshuffle)' +
      '\n  in node 1: Elemwise{mul}(x, DimShuffle{x,0}.out)\n  input values: float64 [2, 3], float64 [1, 1]',
  );
  // the same with the broadcastable axis declared works, and broadcasts
  const yb = pt.tensor({ shape: [1], name: 'yb' });
  near(t, await run([x, yb], pt.mul(x, yb), [[[1, 2, 3], [4, 5, 6]], [7]]), [[7, 14, 21], [28, 35, 42]], 0);
});
