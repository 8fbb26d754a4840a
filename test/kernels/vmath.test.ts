// weft's own exp and tanh (kernels/vmath/functions.ts): special values exactly, and the error
// over 1M seeded inputs spread over each function's domain, measured in ulps:
// - float32 (float64 computation rounded): against Math's float64 result rounded to float32, whose
//   own error is far below a float32 ulp, so the comparison is with the correctly rounded value.
// - float64: against V8's Math.exp and Math.tanh (fdlibm's, within 1 ulp), so these bounds are
//   what the closing note reports, not a proof against the correctly rounded values.
import t from 'tap';
import { uniformStream } from '../helpers.js';
import { exp32, exp32Of, js32Ops, tanh32, tanh32Of } from '../../src/kernels/vmath/float32.js';
import { exp, expOf, jsOps, tanh, tanhOf } from '../../src/kernels/vmath/functions.js';

const i64 = new BigInt64Array(1);
const f64 = new Float64Array(i64.buffer);
const i32 = new Int32Array(1);
const f32 = new Float32Array(i32.buffer);

/** A float64's position on the number line of floats (adjacent floats differ by 1). */
function order64(x: number): bigint {
  f64[0] = x;
  const b = i64[0]!;
  return b < 0n ? -(b & 0x7fffffffffffffffn) : b;
}
function order32(x: number): number {
  f32[0] = x;
  const b = i32[0]!;
  return b < 0 ? -(b & 0x7fffffff) : b;
}
const ulps64 = (a: number, b: number): number => Math.abs(Number(order64(a) - order64(b)));
const ulps32 = (a: number, b: number): number => Math.abs(order32(a) - order32(b));

/** Inputs over [lo, hi], and over [-1, 1] and a log-spaced tail, n in all. */
function inputs(lo: number, hi: number, n: number, seed: number): Float64Array {
  const u = uniformStream(seed);
  return Float64Array.from({ length: n }, (_, i) => {
    if (i % 4 === 0) return 2 * u() - 1;
    if (i % 4 === 1) return (u() < 0.5 ? -1 : 1) * 10 ** (-300 + 300 * u());
    return lo + (hi - lo) * u();
  });
}

function worst(f: (x: number) => number, g: (x: number) => number, xs: Float64Array, dtype: 'float32' | 'float64'): { ulps: number; at: number } {
  let most = 0;
  let at = NaN;
  for (const x0 of xs) {
    const x = dtype === 'float32' ? Math.fround(x0) : x0;
    const u = dtype === 'float32' ? ulps32(Math.fround(f(x)), Math.fround(g(x))) : ulps64(f(x), g(x));
    if (u > most) [most, at] = [u, x];
  }
  return { ulps: most, at };
}

t.test('exp32: special values', async (t) => {
  const cases: Array<[number, number]> = [[0, 1], [-0, 1], [Infinity, Infinity], [-Infinity, 0], [88.7, Math.exp(Math.fround(88.7))], [89, Infinity], [-104, 0], [-1000, 0], [1000, Infinity]];
  for (const [x, want] of cases) t.ok(Object.is(exp32(Math.fround(x)), Math.fround(want)) || ulps32(exp32(Math.fround(x)), Math.fround(want)) <= 2, `exp32(${x}) = ${exp32(Math.fround(x))} (${want})`);
  t.ok(Number.isNaN(exp32(NaN)), 'exp32(NaN) is NaN');
  t.ok(exp32(Math.fround(-103)) > 0 && exp32(Math.fround(-103)) < 1.2e-38, 'a subnormal float32 result');
});

t.test('exp: special values', async (t) => {
  const cases: Array<[number, number]> = [
    [0, 1], [-0, 1], [Infinity, Infinity], [-Infinity, 0], [1, Math.E], [709.78, 1.7928227943945155e308],
    [709.79, Infinity], [1000, Infinity], [-745.2, 0], [-745.13, 5e-324], [-1000, 0], [5e-324, 1], [1e-300, 1],
  ];
  for (const [x, want] of cases) t.ok(Object.is(exp(x), want) || ulps64(exp(x), want) <= 1, `exp(${x}) = ${exp(x)} (${want})`);
  t.ok(Number.isNaN(exp(NaN)), 'exp(NaN) is NaN');
  t.equal(exp(-740), Math.exp(-740), 'a subnormal result');
});

t.test('tanh: special values', async (t) => {
  const cases: Array<[number, number]> = [[0, 0], [-0, -0], [Infinity, 1], [-Infinity, -1], [20, 1], [-20, -1], [1e-300, 1e-300], [5e-324, 5e-324], [-5e-324, -5e-324]];
  for (const [x, want] of cases) t.ok(Object.is(tanh(x), want), `tanh(${x}) = ${tanh(x)} (${want})`);
  t.ok(Number.isNaN(tanh(NaN)), 'tanh(NaN) is NaN');
});

t.test('exp: 1M inputs over [-745, 709.7], float32 and float64', async (t) => {
  const xs = inputs(-745, 709.7, 1_000_000, 11);
  const w64 = worst(exp, Math.exp, xs, 'float64');
  t.ok(w64.ulps <= 1, `float64: at most ${w64.ulps} ulp from Math.exp (at ${w64.at})`);
  const xs32 = inputs(-103.9, 88.7, 1_000_000, 12);
  const w32 = worst(exp32, Math.exp, xs32, 'float32');
  t.ok(w32.ulps <= 2, `float32 (in float32 arithmetic): at most ${w32.ulps} ulp from the correctly rounded value (at ${w32.at})`);
});

t.test('tanh: 1M inputs over [-20, 20], float32 and float64', async (t) => {
  const xs = inputs(-20, 20, 1_000_000, 13);
  const w64 = worst(tanh, Math.tanh, xs, 'float64');
  t.ok(w64.ulps <= 3, `float64: at most ${w64.ulps} ulp from Math.tanh (at ${w64.at})`);
  const w32 = worst(tanh32, Math.tanh, xs, 'float32');
  t.ok(w32.ulps <= 2, `float32 (in float32 arithmetic): at most ${w32.ulps} ulp from the correctly rounded value (at ${w32.at})`);
  for (const [x, want] of [[0, 0], [-0, -0], [Infinity, 1], [-Infinity, -1], [30, 1], [1e-40, Math.fround(1e-40)]] as const) {
    t.ok(Object.is(tanh32(Math.fround(x)), want), `tanh32(${x}) = ${tanh32(Math.fround(x))}`);
  }
  t.ok(Number.isNaN(tanh32(NaN)), 'tanh32(NaN) is NaN');
});

t.test('the JS versions the kernels call are the generic algorithms bit for bit (the wasm is tested against them)', async (t) => {
  const xs = [...inputs(-800, 800, 500_000, 21), 0, -0, 1, -1, 0.55, -0.55, 709.8, -745.2, Infinity, -Infinity, NaN, 5e-324];
  let bad = 0;
  for (const x of xs) {
    if (!Object.is(exp(x), expOf(jsOps, x)) && !(Number.isNaN(exp(x)) && Number.isNaN(expOf(jsOps, x)))) bad++;
    if (!Object.is(tanh(x), tanhOf(jsOps, x)) && !(Number.isNaN(tanh(x)) && Number.isNaN(tanhOf(jsOps, x)))) bad++;
    const x32 = Math.fround(x / 8);
    if (!Object.is(exp32(x32), exp32Of(js32Ops, x32)) && !(Number.isNaN(exp32(x32)) && Number.isNaN(exp32Of(js32Ops, x32)))) bad++;
    if (!Object.is(tanh32(x32), tanh32Of(js32Ops, x32)) && !(Number.isNaN(tanh32(x32)) && Number.isNaN(tanh32Of(js32Ops, x32)))) bad++;
  }
  t.equal(bad, 0, `${xs.length} inputs`);
});
