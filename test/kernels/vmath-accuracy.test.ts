// The accuracy of weft's own math functions (kernels/vmath, issue 12), measured in ulps against the
// double-double reference (reference-math.ts): for each function, seeded inputs spread over its
// domain (uniform on the interesting interval and log-spaced over the whole range, both signs),
// float64 and float32 (the float32 kernels' results: exp and tanh in float32 arithmetic, the
// others computed in float64 and rounded once). docs/performance.md reports these figures.
// 1M inputs per function in float64 and for the float32 kernels of exp and tanh, which compute in
// float32; 100k for the float32 kernels that round a float64 result once (WEFT_ACCURACY_COUNT=N);
// a quarter of that for arctan2, arcsin and arccos.
import t from 'tap';
import { uniformStream } from '../helpers.js';
import { scalarLib } from '../../src/kernels/scalar-lib.js';
import { exp32, tanh32 } from '../../src/kernels/vmath/float32.js';
import * as reference from './reference-math.js';

const COUNT = Number(process.env['WEFT_ACCURACY_COUNT'] ?? 1_000_000);

interface Spec {
  readonly name: string;
  readonly f64: (x: number) => number;
  readonly f32: (x: number) => number;
  readonly ref: (x: number) => reference.DD;
  /** The interval sampled uniformly; a quarter of the inputs are log-spaced over [tiny, huge] instead. */
  readonly lo: number;
  readonly hi: number;
  /** Log-spaced magnitudes: 10^[from, to], with both signs unless `positive`. */
  readonly from: number;
  readonly to: number;
  readonly positive?: boolean;
  /** The bound this test holds weft to, per dtype: issue 12's 2 ulp. */
  readonly bound64: number;
  readonly bound32: number;
  /** Its float32 kernel computes in float64 and rounds once. */
  readonly promoted?: boolean;
}

const round32 = Math.fround;
const promoted = (f: (x: number) => number) => (x: number): number => round32(f(x));

const SPECS: readonly Spec[] = [
  { name: 'exp', f64: scalarLib.exp, f32: exp32, ref: reference.exp, lo: -745, hi: 709.7, from: -300, to: 2.85, bound64: 2, bound32: 2 },
  { name: 'expm1', f64: scalarLib.expm1, f32: promoted(scalarLib.expm1), ref: reference.expm1, lo: -40, hi: 709.7, from: -300, to: 2.85, bound64: 2, bound32: 2, promoted: true },
  { name: 'log', f64: scalarLib.log, f32: promoted(scalarLib.log), ref: reference.log, lo: 0, hi: 10, from: -323, to: 308, positive: true, bound64: 2, bound32: 2, promoted: true },
  { name: 'log1p', f64: scalarLib.log1p, f32: promoted(scalarLib.log1p), ref: reference.log1p, lo: -1, hi: 10, from: -300, to: 308, positive: true, bound64: 2, bound32: 2, promoted: true },
  { name: 'log2', f64: scalarLib.log2, f32: promoted(scalarLib.log2), ref: reference.log2, lo: 0, hi: 10, from: -323, to: 308, positive: true, bound64: 2, bound32: 2, promoted: true },
  { name: 'log10', f64: scalarLib.log10, f32: promoted(scalarLib.log10), ref: reference.log10, lo: 0, hi: 10, from: -323, to: 308, positive: true, bound64: 2, bound32: 2, promoted: true },
  { name: 'tanh', f64: scalarLib.tanh, f32: tanh32, ref: reference.tanh, lo: -20, hi: 20, from: -300, to: 2, bound64: 2, bound32: 2 },
  { name: 'sinh', f64: scalarLib.sinh, f32: promoted(scalarLib.sinh), ref: reference.sinh, lo: -30, hi: 30, from: -300, to: 2.85, bound64: 2, bound32: 2, promoted: true },
  { name: 'cosh', f64: scalarLib.cosh, f32: promoted(scalarLib.cosh), ref: reference.cosh, lo: -30, hi: 30, from: -300, to: 2.85, bound64: 2, bound32: 2, promoted: true },
  { name: 'sigmoid', f64: scalarLib.sigmoid, f32: promoted(scalarLib.sigmoid), ref: reference.sigmoid, lo: -40, hi: 40, from: -300, to: 2.85, bound64: 2, bound32: 2, promoted: true },
  { name: 'softplus', f64: scalarLib.softplus, f32: promoted(scalarLib.softplus), ref: reference.softplus, lo: -40, hi: 40, from: -300, to: 2.85, bound64: 2, bound32: 2, promoted: true },
  { name: 'erf', f64: scalarLib.erf, f32: promoted(scalarLib.erf), ref: reference.erf, lo: -6, hi: 6, from: -300, to: 1.5, bound64: 2, bound32: 2, promoted: true },
  { name: 'erfc', f64: scalarLib.erfc, f32: promoted(scalarLib.erfc), ref: reference.erfc, lo: -6, hi: 27, from: -300, to: 1.43, bound64: 2, bound32: 2, promoted: true },
  { name: 'arcsinh', f64: scalarLib.arcsinh, f32: promoted(scalarLib.arcsinh), ref: reference.asinh, lo: -10, hi: 10, from: -300, to: 308, bound64: 2, bound32: 2, promoted: true },
  { name: 'arccosh', f64: scalarLib.arccosh, f32: promoted(scalarLib.arccosh), ref: reference.acosh, lo: 1, hi: 10, from: 0, to: 308, positive: true, bound64: 2, bound32: 2, promoted: true },
  { name: 'arctanh', f64: scalarLib.arctanh, f32: promoted(scalarLib.arctanh), ref: reference.atanh, lo: -1, hi: 1, from: -300, to: 0, bound64: 2, bound32: 2, promoted: true },
  { name: 'xlogx', f64: scalarLib.xlogx, f32: promoted(scalarLib.xlogx), ref: (x) => (x === 0 ? reference.fromNumber(0) : reference.mul(reference.fromNumber(x), reference.log(x))), lo: 0, hi: 10, from: -300, to: 37, positive: true, bound64: 2, bound32: 2, promoted: true },
  { name: 'arctan', f64: scalarLib.atan, f32: promoted(scalarLib.atan), ref: reference.atan, lo: -5, hi: 5, from: -300, to: 300, bound64: 2, bound32: 2, promoted: true },
];

function inputs(s: Spec, seed: number): Float64Array {
  const u = uniformStream(seed);
  return Float64Array.from({ length: COUNT }, (_, i) => {
    if (i % 4 !== 3) return s.lo + (s.hi - s.lo) * u();
    const magnitude = 10 ** (s.from + (s.to - s.from) * u());
    return s.positive || u() < 0.5 ? magnitude : -magnitude;
  });
}

/** The largest error over `xs` and where it is. */
function worst(xs: Float64Array, f: (x: number) => number, error: (y: number, ref: reference.DD) => number, ref: (x: number) => reference.DD): { ulps: number; at: number } {
  let ulps = 0;
  let at = NaN;
  for (const x of xs) {
    const e = error(f(x), ref(x));
    if (e > ulps) [ulps, at] = [e, x];
  }
  return { ulps, at };
}

SPECS.forEach((s, k) => {
  t.test(`${s.name}: ${COUNT} inputs, float64 and float32, against the double-double reference`, async (t) => {
    const xs = inputs(s, 1000 + k);
    const w64 = worst(xs, s.f64, reference.ulpError, s.ref);
    t.ok(w64.ulps <= s.bound64, `${s.name} float64: at most ${w64.ulps.toFixed(3)} ulp (at ${w64.at}; bound ${s.bound64})`);
    // A function computed in float64 and rounded once is within half a float32 ulp of the float64
    // result, so its float32 error follows from the float64 one: a tenth of the inputs check it.
    // exp and tanh compute in float32 arithmetic and get every input.
    const xs32 = Float64Array.from(s.promoted ? xs.subarray(0, Math.ceil(COUNT / 10)) : xs, round32);
    const w32 = worst(xs32, s.f32, reference.ulpError32, s.ref);
    t.ok(w32.ulps <= s.bound32, `${s.name} float32: at most ${w32.ulps.toFixed(3)} ulp (at ${w32.at}; bound ${s.bound32})`);
  });
});

t.test(`arctan2: ${COUNT / 4} points over every quadrant, float64 and float32, against the double-double reference`, async (t) => {
  const u = uniformStream(77);
  const n = COUNT / 4;
  const ys = Float64Array.from({ length: n }, (_, i) => (i % 3 === 0 ? (u() - 0.5) * 10 ** (40 * u() - 20) : (u() - 0.5) * 20));
  const xs = Float64Array.from({ length: n }, (_, i) => (i % 5 === 0 ? (u() - 0.5) * 10 ** (40 * u() - 20) : (u() - 0.5) * 20));
  let w64 = 0;
  let w32 = 0;
  for (let i = 0; i < n; i++) {
    w64 = Math.max(w64, reference.ulpError(scalarLib.atan2(ys[i]!, xs[i]!), reference.atan2(ys[i]!, xs[i]!)));
    const [y32, x32] = [round32(ys[i]!), round32(xs[i]!)];
    if (i % 10 === 0) w32 = Math.max(w32, reference.ulpError32(round32(scalarLib.atan2(y32, x32)), reference.atan2(y32, x32)));
  }
  t.ok(w64 <= 2, `float64: at most ${w64.toFixed(3)} ulp`);
  t.ok(w32 <= 2, `float32: at most ${w32.toFixed(3)} ulp`);
  const specials: Array<[number, number, number]> = [
    [0, 1, 0], [-0, 1, -0], [0, -1, Math.PI], [-0, -1, -Math.PI], [0, 0, 0], [-0, 0, -0], [0, -0, Math.PI], [-0, -0, -Math.PI],
    [1, 0, Math.PI / 2], [-1, 0, -Math.PI / 2], [1, -0, Math.PI / 2], [Infinity, 1, Math.PI / 2], [-Infinity, -1, -Math.PI / 2],
    [Infinity, Infinity, Math.PI / 4], [Infinity, -Infinity, (3 * Math.PI) / 4], [-Infinity, -Infinity, (-3 * Math.PI) / 4],
    [1, Infinity, 0], [-1, Infinity, -0], [1, -Infinity, Math.PI], [-1, -Infinity, -Math.PI], [NaN, 1, NaN], [1, NaN, NaN],
  ];
  for (const [y, x, want] of specials) {
    const got = scalarLib.atan2(y, x);
    t.ok(Object.is(got, want) || (Number.isNaN(want) && Number.isNaN(got)), `atan2(${y}, ${x}) = ${got} (${want})`);
  }
});

// arcsin and arccos have their own inputs: a quarter next to +-1 (1 - 10^-16u), where the slope
// is infinite and acos nears 0 or pi, an eighth log-spaced over 10^[-300, -1] (asin x -> x), the
// rest uniform on [-1, 1].
t.test(`arcsin and arccos: ${COUNT / 4} inputs in [-1, 1], near ±1 and tiny too, float64 and float32, against the double-double reference`, async (t) => {
  const u = uniformStream(91);
  const n = COUNT / 4;
  const xs = Float64Array.from({ length: n }, (_, i) => {
    const sign = u() < 0.5 ? -1 : 1;
    if (i % 4 === 0) return sign * (1 - 10 ** (-16 * u()));
    if (i % 8 === 1) return sign * 10 ** (-300 + 299 * u());
    return 2 * u() - 1;
  });
  // Both compute in float64 and round once in float32 (as the promoted SPECS do): a tenth of the inputs.
  const xs32 = Float64Array.from(xs.subarray(0, Math.ceil(n / 10)), round32);
  for (const [name, f, ref] of [['arcsin', scalarLib.asin, reference.asin], ['arccos', scalarLib.acos, reference.acos]] as const) {
    const w64 = worst(xs, f, reference.ulpError, ref);
    t.ok(w64.ulps <= 2, `${name} float64: at most ${w64.ulps.toFixed(3)} ulp (at ${w64.at}; bound 2)`);
    const w32 = worst(xs32, promoted(f), reference.ulpError32, ref);
    t.ok(w32.ulps <= 2, `${name} float32: at most ${w32.ulps.toFixed(3)} ulp (at ${w32.at}; bound 2)`);
  }
});

// log1mexp, logit and xlogy0 on their domains (x <= 0; (0, 1); x log y for y > 0) against the
// double-double forms of their definitions; logaddexp is NumPy's algorithm, larger + log1p(e^-d),
// whose sum cancels where the result nears 0: it is held to 2 ulp of the larger of its argument
// and its result (NumPy's has the same property).
t.test(`log1mexp, logit, xlogy0 and logaddexp: ${COUNT / 4} inputs each, float64 and float32, against the double-double reference`, async (t) => {
  const u = uniformStream(123);
  const n = COUNT / 4;
  const tiny = (from: number, to: number): number => 10 ** (from + (to - from) * u());
  const unary: Array<[string, (x: number) => number, (x: number) => reference.DD, () => number]> = [
    [
      'log1mexp',
      scalarLib.log1mexp,
      (x) => (x < -Math.LN2 ? reference.log1pDD(reference.neg(reference.exp(x))) : reference.logDD(reference.neg(reference.expm1(x)))),
      () => (u() < 0.25 ? -tiny(-300, 2.8) : -40 * u()),
    ],
    ['logit', scalarLib.logit, (x) => reference.logDD(reference.div(reference.fromNumber(x), reference.twoSum(1, -x))), () => (u() < 0.25 ? tiny(-300, -1) : 0.001 + 0.998 * u())],
  ];
  for (const [name, f, ref, draw] of unary) {
    const xs = Float64Array.from({ length: n }, draw);
    const w64 = worst(xs, f, reference.ulpError, ref);
    t.ok(w64.ulps <= 2, `${name} float64: at most ${w64.ulps.toFixed(3)} ulp (at ${w64.at}; bound 2)`);
    const w32 = worst(Float64Array.from(xs.subarray(0, Math.ceil(n / 10)), round32), promoted(f), reference.ulpError32, ref);
    t.ok(w32.ulps <= 2, `${name} float32: at most ${w32.ulps.toFixed(3)} ulp (at ${w32.at}; bound 2)`);
  }
  let xlogy = 0;
  let sums = 0;
  for (let i = 0; i < n; i++) {
    const [x, y] = [(u() - 0.5) * 20, u() < 0.25 ? tiny(-300, 300) : 10 * u()];
    xlogy = Math.max(xlogy, reference.ulpError(scalarLib.xlogy0(x, y), reference.mul(reference.fromNumber(x), reference.log(y))));
    const a = (u() - 0.5) * 200;
    const b = i % 3 === 0 ? a + (u() - 0.5) * 2 : (u() - 0.5) * 200;
    const larger = Math.max(a, b);
    const ref = reference.add(reference.fromNumber(larger), reference.log1pDD(reference.exp(-Math.abs(a - b))));
    const got = scalarLib.logaddexp(a, b);
    const scale = Math.max(Math.abs(larger), Math.abs(ref.hi));
    sums = Math.max(sums, Math.abs(got - ref.hi - ref.lo) / (scale * 2 ** -52));
  }
  t.ok(xlogy <= 2, `xlogy0 float64: at most ${xlogy.toFixed(3)} ulp`);
  t.ok(sums <= 2, `logaddexp float64: at most ${sums.toFixed(3)} ulp of max(|larger argument|, |result|)`);
});
