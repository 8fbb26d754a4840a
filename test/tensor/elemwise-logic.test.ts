// Comparisons (eq neq lt le gt ge), bitwise and logical operations (and or xor not) and casts,
// through the broadcast tester: NaN in comparisons, bitwise on integers and logical on bools,
// cast truncation toward zero, wrapping and truthiness; the errors for bad input dtypes.
import t from 'tap';
import { DTYPES, type Dtype } from '../../src/kernels/dtype.js';
import { arr, domain, dtypeRules, isFloat, makeBroadcastTester, standardCases, stored, type Expectation } from '../elemwise-tester.js';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

const r = rng(99);
type Binary = (x: weft.pt.TensorVariable, y: weft.pt.TensorVariable) => weft.pt.TensorVariable;

// ---------------------------------------------------------------------------------------------
// Comparisons

const NAN_ROW = [NaN, NaN, 1, -Infinity, 0];
const NAN_COL = [NaN, 1, NaN, -Infinity, -0];

function comparison(op: Binary, f: (a: number, b: number) => boolean): ReturnType<typeof makeBroadcastTester> {
  return makeBroadcastTester({
    op,
    expected: ([a, b]) => f(a!, b!),
    good: {
      // small integer ranges, so that ties happen
      ...standardCases(2, domain(r, [[-3, 3]]), dtypeRules.bool, { ints: ['int8', 'uint8', 'int16', 'int32', 'uint32', 'bool'] }),
      float_ties: { args: [arr('float64', [[1, 2], [3, 4]]), arr('float64', [[1, 3], [3, 3]])], dtype: 'bool' },
      nan: { args: [arr('float64', NAN_ROW), arr('float64', NAN_COL)], dtype: 'bool' },
      uint32_int32: { args: [arr('uint32', [4294967295, 0, 2147483648]), arr('int32', [-1, 0, -2147483648])], dtype: 'bool' },
      int8_uint8: { args: [arr('int8', [-1, 127]), arr('uint8', [255, 127])], dtype: 'bool' },
      float32_float64: { args: [arr('float32', [0.1, 0.5]), arr('float64', [0.1, 0.5])], dtype: 'bool' },
    },
  });
}

t.test('eq', comparison(pt.eq, (a, b) => a === b));
t.test('neq', comparison(pt.neq, (a, b) => a !== b));
t.test('lt', comparison(pt.lt, (a, b) => a < b));
t.test('le', comparison(pt.le, (a, b) => a <= b));
t.test('gt', comparison(pt.gt, (a, b) => a > b));
t.test('ge', comparison(pt.ge, (a, b) => a >= b));

t.test('comparisons: NaN compares unequal to everything (NumPy)', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const values = [[NaN, NaN, 1], [NaN, 1, NaN]];
  near(t, await run([x, y], pt.eq(x, y), values), [0, 0, 0], 0);
  near(t, await run([x, y], pt.neq(x, y), values), [1, 1, 1], 0);
  for (const op of [pt.lt, pt.le, pt.gt, pt.ge]) near(t, await run([x, y], op(x, y), values), [0, 0, 0], 0);
  // a weak literal that does not fit int8 compares as a wider integer
  const i8 = pt.vector('i', 'int8');
  near(t, await run([i8], pt.lt(i8, 300), [[127, -128]]), [1, 1], 0);
  near(t, await run([i8], pt.eq(i8, -129), [[127, -128]]), [0, 0], 0);
});

// ---------------------------------------------------------------------------------------------
// and, or, xor, not: bitwise on integers, logical on bools

const bits = (f: (a: bigint, b: bigint) => bigint, logical: (a: boolean, b: boolean) => boolean): Expectation =>
  ([a, b], out) => (out === 'bool' ? logical(a !== 0, b !== 0) : Number(BigInt.asIntN(64, f(BigInt(a!), BigInt(b!)))));

const INT_RANGES: Readonly<Partial<Record<Dtype, readonly [number, number]>>> = {
  int8: [-128, 127], uint8: [0, 255], int16: [-32768, 32767], uint16: [0, 65535],
  int32: [-2147483648, 2147483647], uint32: [0, 4294967295], bool: [0, 1],
};

function bitwiseCases(nin: number): Record<string, { args: ReturnType<typeof arr>[]; dtype: Dtype }> {
  const cases: Record<string, { args: ReturnType<typeof arr>[]; dtype: Dtype }> = {};
  for (const [d, range] of Object.entries(INT_RANGES) as [Dtype, readonly [number, number]][]) {
    const gen = domain(r, [range]);
    cases[d] = { args: Array.from({ length: nin }, (_, i) => gen(i, d, [2, 3])), dtype: d };
    cases[`${d}_row`] = { args: Array.from({ length: nin }, (_, i) => gen(i, d, i === 0 ? [2, 3] : [1, 3])), dtype: d };
  }
  const g = domain(r, [[-100, 100]]);
  cases.int8_uint8 = { args: [g(0, 'int8', [3]), g(1, 'uint8', [3])].slice(0, nin), dtype: nin === 1 ? 'int8' : 'int16' };
  cases.bool_int8 = { args: [g(0, 'bool', [4]), g(1, 'int8', [4])].slice(0, nin), dtype: nin === 1 ? 'bool' : 'int8' };
  cases.zero_d = { args: Array.from({ length: nin }, (_, i) => g(i, 'int32', [])), dtype: 'int32' };
  cases.empty = { args: Array.from({ length: nin }, (_, i) => g(i, 'int16', [0])), dtype: 'int16' };
  return cases;
}

const FLOAT_INPUT = (name: string, i: number): string => `Elemwise{${name}}: input ${i} has dtype float64; ${name} takes bool or integer inputs`;

function bitwiseTester(name: 'and' | 'or' | 'xor', op: Binary, f: (a: bigint, b: bigint) => bigint, logical: (a: boolean, b: boolean) => boolean) {
  return makeBroadcastTester({
    op,
    expected: bits(f, logical),
    good: bitwiseCases(2),
    badBuild: {
      float_input: { args: [arr('int32', [1]), arr('float64', [1])], error: TypeError, message: FLOAT_INPUT(name, 1) },
      float32_input: {
        args: [arr('float32', [1]), arr('bool', [true])],
        error: TypeError,
        message: `Elemwise{${name}}: input 0 has dtype float32; ${name} takes bool or integer inputs`,
      },
      no_common_integer: {
        args: [arr('uint32', [1]), arr('int32', [1])],
        error: TypeError,
        message: `Elemwise{${name}}: inputs of dtypes uint32 and int32 have no common integer dtype (NumPy would use int64); cast one of them`,
      },
    },
  });
}

t.test('and', bitwiseTester('and', pt.and, (a, b) => a & b, (a, b) => a && b));
t.test('or', bitwiseTester('or', pt.or, (a, b) => a | b, (a, b) => a || b));
t.test('xor', bitwiseTester('xor', pt.xor, (a, b) => a ^ b, (a, b) => a !== b));

t.test('not', makeBroadcastTester({
  op: pt.not,
  expected: ([a], out) => (out === 'bool' ? a === 0 : Number(~BigInt(a!))),
  good: bitwiseCases(1),
  badBuild: {
    float_input: { args: [arr('float64', [1])], error: TypeError, message: FLOAT_INPUT('not', 0) },
  },
}));

t.test('bitwise and logical: reference values', async (t) => {
  const b = pt.vector('b', 'bool');
  const c = pt.vector('c', 'bool');
  const tf = [[true, true, false, false], [true, false, true, false]];
  near(t, await run([b, c], pt.and(b, c), tf), [1, 0, 0, 0], 0);
  near(t, await run([b, c], pt.or(b, c), tf), [1, 1, 1, 0], 0);
  near(t, await run([b, c], pt.xor(b, c), tf), [0, 1, 1, 0], 0);
  near(t, await run([b], pt.not(b), [[true, false]]), [0, 1], 0);
  const u = pt.vector('u', 'uint8');
  near(t, await run([u], pt.not(u), [[5, 0, 255]]), [250, 255, 0], 0);
  const i = pt.vector('i', 'int8');
  near(t, await run([i], pt.not(i), [[5, -1, -128]]), [-6, 0, 127], 0);
  const w = pt.vector('w', 'uint32');
  near(t, await run([w], pt.and(w, 4294967295), [[4000000000, 1]]), [4000000000, 1], 0);
  near(t, await run([w], pt.xor(w, 4294967295), [[4000000000, 0]]), [294967295, 4294967295], 0);
  const x = pt.vector('x', 'int32');
  near(t, await run([x], pt.or(x, -2147483648), [[1, 0]]), [-2147483647, -2147483648], 0);
});

// ---------------------------------------------------------------------------------------------
// cast

/** Truncation toward zero, then wrapping; NaN and infinities give 0; bool is "not zero". */
const expectCast: Expectation = ([x], out) => {
  if (out === 'bool') return !(x === 0);
  if (isFloat(out)) return x!;
  return Number.isFinite(x!) ? Math.trunc(x!) : 0;
};

const SOURCES: readonly Dtype[] = DTYPES;

for (const target of DTYPES) {
  t.test(`cast to ${target}`, makeBroadcastTester({
    op: (x) => pt.cast(x, target),
    expected: expectCast,
    good: {
      ...Object.fromEntries(
        SOURCES.filter((s) => s !== target).map((s) => {
          const [lo, hi] = INT_RANGES[s] ?? [-300.5, 300.5];
          return [`from_${s}`, { args: [domain(r, [[lo, hi]])(0, s, [2, 3])], dtype: target }];
        }),
      ),
      fractions: { args: [arr('float64', [-2.7, 2.7, -0.2, 0.9, -0, 0])], dtype: target },
      specials: { args: [arr('float64', [NaN, Infinity, -Infinity])], dtype: target },
      out_of_range: { args: [arr('float64', [300.5, -129.9, 65535.9, -1, 4294967295, 4294967296])], dtype: target },
      zero_d: { args: [arr('float64', -3.5)], dtype: target },
      empty: { args: [arr('float64', [])], dtype: target },
    },
    inferShape: target === 'float32',
    grad: isFloat(target)
      ? { float64: [arr('float64', [[0.25, -1.5, 3]])], float32: [arr('float32', [[0.25, -1.5], [2, 3]])] }
      : undefined,
  }));
}

t.test('cast: reference values (NumPy astype)', async (t) => {
  const x = pt.vector('x');
  near(t, await run([x], pt.cast(x, 'int8'), [[-1.7, 2.9, 300.5, -129]]), [-1, 2, 44, 127], 0);
  near(t, await run([x], pt.cast(x, 'bool'), [[NaN, 0.3, -0, 0, -2]]), [1, 1, 0, 0, 1], 0);
  near(t, await run([x], pt.cast(x, 'uint8'), [[-1, 256, 255.9]]), [255, 0, 255], 0);
  near(t, await run([x], pt.cast(x, 'int16'), [[-2.7, 2.7, 65535.9]]), [-2, 2, -1], 0);
  near(t, await run([x], pt.cast(x, 'float32'), [[0.1, 1e39, 16777217]]), [Math.fround(0.1), Infinity, 16777216], 0);
  const i = pt.vector('i', 'int32');
  near(t, await run([i], pt.cast(i, 'uint16'), [[-1, 70000, 65536]]), [65535, 4464, 0], 0);
  const u = pt.vector('u', 'uint32');
  near(t, await run([u], pt.cast(u, 'int32'), [[4294967295, 2147483648]]), [-1, -2147483648], 0);
  near(t, await run([u], pt.cast(u, 'float32'), [[4294967295]]), [4294967296], 0);
  t.same(stored('int8', [200]), [-56], 'the tester stores as typed arrays do');
});

t.test('cast: same dtype is the variable itself; methods; unknown dtype', async (t) => {
  const x = pt.vector('x', 'int16');
  t.equal(pt.cast(x, 'int16'), x);
  t.equal(x.astype('float32').dtype, 'float32');
  t.equal(String(pt.cast(x, 'bool').owner!.op), 'Elemwise{cast{bool}}');
  await throwsExactly(
    t,
    () => pt.cast(x, 'float16' as Dtype),
    TypeError,
    'cast: unknown dtype "float16"; expected one of float32, float64, int8, int16, int32, uint8, uint16, uint32, bool',
  );
  await throwsExactly(
    t,
    () => x.astype('int64' as Dtype),
    TypeError,
    'cast: unknown dtype "int64"; expected one of float32, float64, int8, int16, int32, uint8, uint16, uint32, bool',
  );
});
