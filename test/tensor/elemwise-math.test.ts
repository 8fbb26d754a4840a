// Element-wise functions of one real variable (exp ... erfc, floor, ceil, round) and arctan2,
// through the broadcast tester: values against JS's Math on the raw numbers or published
// reference values, the float dtypes integers compute in, gradients away from kinks and edges.
import t from 'tap';
import type { Dtype } from '../../src/kernels/dtype.js';
import {
  arr,
  domain,
  dtypeRules,
  gradCases,
  makeBroadcastTester,
  standardCases,
  type Expectation,
  type GoodCase,
} from '../elemwise-tester.js';
import { near, pt, rng, run, weft } from '../helpers.js';

const r = rng(77);
const INTS: readonly Dtype[] = ['int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'bool'];
type Unary = (x: weft.pt.TensorVariable) => weft.pt.TensorVariable;

interface UnarySpec {
  readonly op: Unary;
  readonly f: (x: number) => number;
  /** Values of the good cases. */
  readonly range: readonly [number, number];
  /** Points of the gradient checks (inside the domain, away from kinks). */
  readonly gradRange?: readonly [number, number];
  readonly specials?: readonly number[];
  readonly tol?: number;
  readonly tol32?: number;
}

/** A JS-Math function of one variable: standard cases with every integer dtype, specials, gradients. */
function unaryTester(s: UnarySpec): ReturnType<typeof makeBroadcastTester> {
  const good: Record<string, GoodCase> = standardCases(1, domain(r, [s.range]), dtypeRules.float, { ints: INTS });
  if (s.specials) good.specials = { args: [arr('float64', [...s.specials])], dtype: 'float64' };
  return makeBroadcastTester({
    op: s.op,
    expected: ([x]) => s.f(x!),
    good,
    tol: s.tol,
    tol32: s.tol32,
    grad: s.gradRange ? gradCases(1, domain(r, [s.gradRange])) : undefined,
  });
}

const SPECIALS = [NaN, Infinity, -Infinity, 0, -0, 1e-300, -1e-300, 1e300];

// exp and tanh are weft's own (kernels/vmath): within 1 ulp (exp) and 3 ulp (tanh) of V8's
// Math.exp and Math.tanh in float64 (test/kernels/vmath.test.ts measures them), and equal to
// their correctly rounded float32 values there.
t.test('exp', unaryTester({ op: pt.exp, f: Math.exp, range: [-5, 5], gradRange: [-3, 3], specials: [...SPECIALS, 709.7, 710, -745, -746], tol: 2.3e-16, tol32: 2.4e-7 }));
// expm1, log and log1p are weft's own too (kernels/vmath/logarithms.ts): V8's Math functions are
// within 1 ulp of the true value, as are weft's (test/kernels/vmath-logarithms.test.ts measures
// both against a double-double reference), so they may differ by 1 ulp (2.3e-16 relative).
t.test('expm1', unaryTester({ op: pt.expm1, f: Math.expm1, range: [-5, 5], gradRange: [-3, 3], specials: [...SPECIALS, 1e-20], tol: 2.3e-16 }));
t.test('log', unaryTester({ op: pt.log, f: Math.log, range: [0, 10], gradRange: [0.5, 5], specials: [...SPECIALS, -1, 5e-324], tol: 2.3e-16 }));
t.test('log1p', unaryTester({ op: pt.log1p, f: Math.log1p, range: [-0.9, 10], gradRange: [-0.5, 3], specials: [...SPECIALS, -1, -2, 1e-20], tol: 2.3e-16 }));
// log2, log10, sinh and cosh are weft's own as well; V8's log10 is up to 1.83 ulp off, weft's 0.68.
t.test('log2', unaryTester({ op: pt.log2, f: Math.log2, range: [0, 10], gradRange: [0.5, 5], specials: [...SPECIALS, 8, 1024, -1], tol: 2.3e-16 }));
t.test('log10', unaryTester({ op: pt.log10, f: Math.log10, range: [0, 10], gradRange: [0.5, 5], specials: [...SPECIALS, 1000, -1], tol: 4.5e-16 }));
t.test('sqrt', unaryTester({ op: pt.sqrt, f: Math.sqrt, range: [0, 10], gradRange: [0.5, 5], specials: [...SPECIALS, -1, 4] }));
// sin, cos and tan are weft's own (kernels/vmath/trigonometric.ts: within 0.83 ulp at any size,
// test/kernels/vmath-trigonometric.test.ts), V8's within 1: they may differ by 1 ulp (2 for tan).
t.test('sin', unaryTester({ op: pt.sin, f: Math.sin, range: [-10, 10], gradRange: [-3, 3], specials: [...SPECIALS, 1e22, -3e300], tol: 2.3e-16 }));
t.test('cos', unaryTester({ op: pt.cos, f: Math.cos, range: [-10, 10], gradRange: [-3, 3], specials: [...SPECIALS, 1e22, -3e300], tol: 2.3e-16 }));
t.test('tan', unaryTester({ op: pt.tan, f: Math.tan, range: [-1.5, 1.5], gradRange: [-1.2, 1.2], specials: [...SPECIALS, 1e22], tol: 4.5e-16 }));
// arcsin and arccos are weft's own (kernels/vmath/arcsine.ts): within 0.66 ulp.
t.test('arcsin', unaryTester({ op: pt.arcsin, f: Math.asin, range: [-1, 1], gradRange: [-0.9, 0.9], specials: [...SPECIALS, 1, -1, 1.5], tol: 4.5e-16 }));
t.test('arccos', unaryTester({ op: pt.arccos, f: Math.acos, range: [-1, 1], gradRange: [-0.9, 0.9], specials: [...SPECIALS, 1, -1, 1.5], tol: 4.5e-16 }));
t.test('arctan', unaryTester({ op: pt.arctan, f: Math.atan, range: [-10, 10], gradRange: [-3, 3], specials: SPECIALS }));
t.test('sinh', unaryTester({ op: pt.sinh, f: Math.sinh, range: [-5, 5], gradRange: [-2, 2], specials: [...SPECIALS, 711], tol: 4.5e-16 }));
t.test('cosh', unaryTester({ op: pt.cosh, f: Math.cosh, range: [-5, 5], gradRange: [-2, 2], specials: [...SPECIALS, 711], tol: 4.5e-16 }));
t.test('tanh', unaryTester({ op: pt.tanh, f: Math.tanh, range: [-5, 5], gradRange: [-2, 2], specials: [...SPECIALS, 20], tol: 6.7e-16, tol32: 2.4e-7 }));

// sigmoid and softplus are computed in forms stable for large |x|; the expectations are the
// textbook formulas, equal to within a few ulps on these ranges.
t.test('sigmoid', unaryTester({ op: pt.sigmoid, f: (x) => 1 / (1 + Math.exp(-x)), range: [-10, 10], gradRange: [-5, 5], tol: 1e-15, tol32: 1.2e-7 }));
t.test('softplus', unaryTester({ op: pt.softplus, f: (x) => Math.log1p(Math.exp(x)), range: [-10, 10], gradRange: [-5, 5], tol: 1e-15, tol32: 1.2e-7 }));

t.test('sigmoid and softplus: reference values', async (t) => {
  const x = pt.vector('x');
  const xs = [-1000, -745, -40, -10, -1, 0, 1, 10, 40, 1000];
  near(t, await run([x], pt.sigmoid(x), [xs]), [0, 5e-324, 4.248354255291589e-18, 4.5397868702434395e-5, 0.2689414213699951, 0.5, 0.7310585786300049, 0.9999546021312976, 1, 1], 1e-15);
  near(t, await run([x], pt.softplus(x), [xs]), [0, 0, 4.248354255291589e-18, 4.539889921686465e-5, 0.3132616875182228, 0.6931471805599453, 1.3132616875182228, 10.000045398899218, 40, 1000], 1e-15);
  near(t, await run([x], pt.sigmoid(x), [[NaN, Infinity, -Infinity]]), [NaN, 1, 0], 0);
  near(t, await run([x], pt.softplus(x), [[NaN, Infinity, -Infinity]]), [NaN, Infinity, 0], 0);
});

// ---------------------------------------------------------------------------------------------
// erf and erfc. Random cases are checked against a plain reference (the everywhere-positive
// series erf(x) = 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1) / (1*3*...*(2n+1)), good to ~1e-15
// absolute for |x| <= 2); the tables hold 40-digit values (mpmath) to 1e-15 relative.

function erfReference(x: number): number {
  let term = x;
  let sum = x;
  for (let n = 1; n < 200 && Math.abs(term) > 1e-18 * Math.abs(sum); n++) {
    term *= (2 * x * x) / (2 * n + 1);
    sum += term;
  }
  return (2 / Math.sqrt(Math.PI)) * Math.exp(-x * x) * sum;
}

t.test('erf', makeBroadcastTester({
  op: pt.erf,
  expected: ([x]) => erfReference(x!),
  good: standardCases(1, domain(r, [[-2, 2]]), dtypeRules.float, { ints: INTS }),
  tol: 1e-13,
  absTol: 1e-15,
  tol32: 1.2e-7,
  grad: gradCases(1, domain(r, [[-2, 2]])),
}));

t.test('erfc', makeBroadcastTester({
  op: pt.erfc,
  expected: ([x]) => 1 - erfReference(x!),
  good: standardCases(1, domain(r, [[-2, 2]]), dtypeRules.float, { ints: INTS }),
  tol: 1e-12,
  tol32: 1.2e-7,
  grad: gradCases(1, domain(r, [[-2, 2]])),
}));

const ERF_X = [-30, -6, -3, -1, -0.5, -1e-10, 0, 1e-300, 1e-10, 0.1, 0.3, 0.49, 0.5, 0.51, 0.75, 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10, 15, 20, 26];
const ERF = [
  -1, -1, -0.9999779095030014, -0.8427007929497149, -0.5204998778130465, -1.1283791670955126e-10, 0, 1.1283791670955126e-300,
  1.1283791670955126e-10, 0.1124629160182849, 0.32862675945912745, 0.5116682611885232, 0.5204998778130465, 0.5292436198411704,
  0.7111556336535151, 0.8427007929497149, 0.9661051464753108, 0.9953222650189527, 0.999593047982555, 0.9999779095030014,
  0.9999999845827421, 0.9999999999984626, 1, 1, 1, 1, 1, 1,
];
const ERFC = [
  2, 2, 1.9999779095030015, 1.8427007929497148, 1.5204998778130465, 1.000000000112838, 1, 1, 0.999999999887162, 0.8875370839817152,
  0.6713732405408726, 0.4883317388114769, 0.4795001221869535, 0.4707563801588296, 0.28884436634648486, 0.15729920705028513,
  0.033894853524689274, 0.004677734981047266, 0.0004069520174449589, 2.209049699858544e-5, 1.541725790028002e-8,
  1.537459794428035e-12, 2.1519736712498913e-17, 1.1224297172982926e-29, 2.088487583762545e-45, 7.212994172451207e-100,
  5.395865611607901e-176, 5.663192408856143e-296,
];

/** Relative errors, exact zeros and infinities. */
function relErrors(got: ArrayLike<number>, want: readonly number[], xs: readonly number[], tol: number): string[] {
  const bad: string[] = [];
  want.forEach((w, i) => {
    const g = got[i]!;
    const ok = Number.isNaN(w) ? Number.isNaN(g) : g === w || Math.abs(g - w) <= tol * Math.abs(w);
    if (!ok) bad.push(`at ${xs[i]}: got ${g}, expected ${w} (relative error ${(Math.abs(g - w) / Math.abs(w)).toExponential(2)})`);
  });
  return bad;
}

t.test('erf and erfc: reference values to 1e-15 relative over the real line', async (t) => {
  const x = pt.vector('x');
  const erf = (await run([x], pt.erf(x), [ERF_X])).data;
  const erfc = (await run([x], pt.erfc(x), [ERF_X])).data;
  t.same(relErrors(erf, ERF, ERF_X, 1e-15), [], 'erf');
  t.same(relErrors(erfc, ERFC, ERF_X, 1e-15), [], 'erfc');
  // the values the brief of this work quotes
  t.equal(erf[ERF_X.indexOf(0.5)], 0.5204998778130465, 'erf(0.5)');
  t.ok(Math.abs(erfc[ERF_X.indexOf(3)]! / 2.209049699858544e-5 - 1) < 1e-15, 'erfc(3)');
  t.ok(Math.abs(erfc[ERF_X.indexOf(10)]! / 2.088487583762545e-45 - 1) < 1e-15, 'erfc(10)');
  // near 0, erf is 2x/sqrt(pi) to full precision
  t.equal(erf[ERF_X.indexOf(1e-300)], 1.1283791670955126e-300, 'erf(1e-300)');
  // limits, NaN and the subnormal tail of erfc
  const edges = [Infinity, -Infinity, NaN, 27, 27.5, 100, -100];
  const e1 = (await run([x], pt.erf(x), [edges])).data;
  const e2 = (await run([x], pt.erfc(x), [edges])).data;
  t.same([...e1], [1, -1, NaN, 1, 1, 1, -1], 'erf at the edges');
  t.same([e2[0], e2[1], e2[2], e2[4], e2[5], e2[6]], [0, 2, NaN, 0, 0, 2], 'erfc at the edges');
  t.ok(Math.abs(e2[3]! / 5.23705e-319 - 1) < 1e-5, `erfc(27) is the subnormal 5.23705e-319 (got ${e2[3]})`);
});

t.test('erf and erfc in float32 round the float64 values', async (t) => {
  const x = pt.vector('x', 'float32');
  const xs = new Float32Array([-3, -0.5, 0.25, 0.5, 1, 2, 4, 9]);
  const f64 = pt.vector('y');
  const erf64 = (await run([f64], pt.erf(f64), [Array.from(xs)])).data;
  const erfc64 = (await run([f64], pt.erfc(f64), [Array.from(xs)])).data;
  t.same([...(await run([x], pt.erf(x), [xs])).data], [...erf64].map(Math.fround));
  t.same([...(await run([x], pt.erfc(x), [xs])).data], [...erfc64].map(Math.fround));
});

// ---------------------------------------------------------------------------------------------
// arctan2 (a function of two variables)

t.test('arctan2', makeBroadcastTester({
  op: (y, x) => pt.arctan2(y, x),
  expected: ([y, x]) => Math.atan2(y!, x!),
  good: {
    ...standardCases(2, domain(r, [[-5, 5]]), dtypeRules.float, { ints: ['int8', 'int16', 'int32', 'uint8'] }),
    quadrants: { args: [arr('float64', [0, -0, 0, -0, 1, -1, Infinity, NaN]), arr('float64', [0, 0, -0, -0, -Infinity, Infinity, Infinity, 1])], dtype: 'float64' },
    int8_float32: { args: [arr('int8', [1, -1]), arr('float32', [2, 2])], dtype: 'float32' },
  },
  grad: gradCases(2, domain(r, [[-3, 3], [0.5, 3]])),
}));

// ---------------------------------------------------------------------------------------------
// Rounding: integers pass through with their dtype; the gradient is zero (away from the jumps)

/** Half to even, written independently of the kernel's. */
function roundHalfEven(x: number): number {
  if (!Number.isFinite(x)) return x;
  const f = Math.floor(x);
  const d = x - f;
  if (d < 0.5) return f;
  if (d > 0.5) return f + 1;
  return f % 2 === 0 ? f : f + 1;
}

const rounding = (op: Unary, f: Expectation, specials: readonly number[], grad: readonly [number, number]) =>
  makeBroadcastTester({
    op,
    expected: f,
    good: {
      ...standardCases(1, domain(r, [[-10, 10]]), dtypeRules.numpy, { ints: INTS }),
      specials: { args: [arr('float64', [...specials])], dtype: 'float64' },
      int32_large: { args: [arr('int32', [2147483647, -2147483648])], dtype: 'int32' },
    },
    grad: gradCases(1, domain(r, [grad])),
  });

const EDGES = [NaN, Infinity, -Infinity, -0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 2.675, 0.49999999999999994, -0.49999999999999994, 4503599627370495.5, 1e300, -1e300];
t.test('floor', rounding(pt.floor, ([x]) => Math.floor(x!), EDGES, [0.2, 0.8]));
t.test('ceil', rounding(pt.ceil, ([x]) => Math.ceil(x!), EDGES, [0.2, 0.8]));
t.test('round', rounding(pt.round, ([x]) => roundHalfEven(x!), EDGES, [0.1, 0.4]));

t.test('round: half to even, reference values', async (t) => {
  const x = pt.vector('x');
  const out = await run([x], pt.round(x), [[0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 2.675, 4503599627370495.5, -1e300]]);
  near(t, out, [0, 2, 2, 4, -0, -2, -2, 3, 4503599627370496, -1e300], 0);
  t.ok(Object.is(out.data[4], -0), 'round(-0.5) is -0');
  const x32 = pt.vector('x', 'float32');
  near(t, await run([x32], pt.round(x32), [new Float32Array([2.5, 3.5, -4.5])]), [2, 4, -4], 0);
});
