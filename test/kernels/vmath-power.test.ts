// weft's own pow (kernels/vmath/power.ts): its error in ulps against the double-double reference
// (reference-math.ts) over 1M seeded (x, y) pairs spread over the domain, results from overflow
// down through the subnormals included, and 100k float32 pairs; C99's special values exactly; and
// the JS version against the WebAssembly one (scalar f64 and f64x2 lanes) bit for bit.
import t from 'tap';
import { sameNumber, uniformStream } from '../helpers.js';
import { pow, powOf } from '../../src/kernels/vmath/power.js';
import { Lanes, type FArg, type M } from '../../src/kernels/vmath/lanes.js';
import { lanesOps } from '../../src/kernels/vmath/lanes-ops.js';
import { Body, F64, I32, ModuleBuilder, V128 } from '../../src/kernels/wasm-emit.js';
import * as reference from './reference-math.js';

const COUNT = 1_000_000;
/** Below this the reference rounds its results to their last place (ldexpDD: no room is left for lo). */
const REFERENCE_TINY = 2 ** -969;

/**
 * The error of pow(x, y) in ulps. Below 2^-969 the reference is rounded to the result's last place
 * (2^-1074 for subnormals), which would hide up to half an ulp of weft's error, so there x^y is
 * taken scaled by 2^300 instead, e^(y ln|x| + 300 ln2), and the distance measured in the ulps of
 * the correctly rounded result.
 */
function powError(x: number, y: number, got: number): number {
  const ref = reference.pow(x, y);
  const rounded = reference.correctlyRounded(ref);
  if (rounded === 0 || !(Math.abs(rounded) < REFERENCE_TINY)) return reference.ulpError(got, ref);
  const magnitude = reference.expDD(reference.add(reference.mulNumber(reference.log(Math.abs(x)), y), reference.mulNumber(reference.LN2, 300)));
  const scaled = rounded < 0 ? reference.neg(magnitude) : magnitude;
  const d = reference.twoSum(got * 2 ** 300, -scaled.hi);
  const ulp = Math.max(-1074, reference.exponentOf(rounded) - 52);
  return Math.abs(d.hi + (d.lo - scaled.lo)) * 2 ** (-300 - ulp);
}

/** The largest error over a set of pairs and where it is. */
class Worst {
  ulps = 0;
  at = '';
  note(x: number, y: number, ulps: number): void {
    if (ulps > this.ulps || Number.isNaN(ulps)) [this.ulps, this.at] = [ulps, `pow(${x}, ${y})`];
  }
}

const logUniform = (u: () => number, from: number, to: number): number => 10 ** (from + (to - from) * u());

/** Kinds of (x, y) pairs, each a fifth or so of the inputs. */
const KINDS: ReadonlyArray<readonly [string, (u: () => number) => [number, number]]> = [
  // x over every magnitude (subnormals included), |y| from 1e-20 to 1e4, both signs.
  ['x and |y| log-spaced', (u) => [logUniform(u, -323.5, 308.2), (u() < 0.5 ? -1 : 1) * logUniform(u, -20, 4)]],
  // y chosen so that log2(x^y) is uniform over [-1085, 1030]: overflow, every normal binade, the subnormals, underflow.
  ['results over the whole range', (u) => {
    const x = logUniform(u, -323.5, 308.2);
    return [x, (-1085 + 2115 * u()) / Math.log2(x)];
  }],
  // x within 1e-16..1 of 1, |y| up to 1e19, results over the whole range again.
  ['x near 1', (u) => {
    const x = 1 + (u() < 0.5 ? -1 : 1) * logUniform(u, -16, -0.05);
    return [x, (-1085 + 2115 * u()) / Math.log2(x)];
  }],
  // Negative x with integer y (odd and even), results over the range.
  ['negative x, integer y', (u) => {
    const x = -logUniform(u, -300, 300);
    const y = Math.round((-1085 + 2115 * u()) / Math.log2(-x));
    return [x, y === 0 ? 3 : y];
  }],
  // Everyday arguments.
  ['x in [1e-3, 1e3], y in [-20, 20]', (u) => [logUniform(u, -3, 3), 40 * u() - 20]],
];

t.test(`pow: ${COUNT} seeded pairs over the domain, float64, against the double-double reference`, async (t) => {
  const u = uniformStream(2024);
  const worst = KINDS.map(() => new Worst());
  for (let i = 0; i < COUNT; i++) {
    const k = i % KINDS.length;
    const [x, y] = KINDS[k]![1](u);
    if (!Number.isFinite(y)) continue;
    worst[k]!.note(x, y, powError(x, y, pow(x, y)));
  }
  KINDS.forEach(([name], k) => t.ok(worst[k]!.ulps <= 2, `${name}: at most ${worst[k]!.ulps.toFixed(4)} ulp (at ${worst[k]!.at}; bound 2)`));
});

t.test('pow: exact and known powers', async (t) => {
  const pairs: ReadonlyArray<readonly [number, number]> = [
    [3, 20], [10, -5], [10, 22], [10, 23], [10, -300], [1 + 2 ** -30, 2 ** 30], [1 + 2 ** -30, 2 ** 40], [1 - 2 ** -53, 2 ** 60],
    [2, 0.5], [2, -0.5], [7, 1 / 3], [0.1, 3], [-3, 37], [-1.5, -1001], [1.0000001, 7e9], [2, 1023.9999999], [2, -1074.4],
    [5e-324, 0.5], [5e-324, 1], [5e-324, -0.0001], [1.7976931348623157e308, 1], [1.7976931348623157e308, -1], [0.5, 1074], [9, 0.5],
  ];
  const worst = new Worst();
  for (const [x, y] of pairs) worst.note(x, y, powError(x, y, pow(x, y)));
  t.ok(worst.ulps <= 2, `at most ${worst.ulps.toFixed(4)} ulp (at ${worst.at})`);
  // Results that are doubles come out exactly.
  const exact: ReadonlyArray<readonly [number, number, number]> = [
    [3, 20, 3486784401], [2, 0.5, Math.SQRT2], [4, 0.5, 2], [10, 2, 100], [-2, 3, -8], [-2, -3, -0.125], [2, -1074, 5e-324],
    [2, 1023, 2 ** 1023], [0.5, -1023, 2 ** 1023], [5e-324, 0.5, 2 ** -537], [-1, 2 ** 52 + 1, -1], [-1, 1e300, 1], [1.5, 2, 2.25],
  ];
  for (const [x, y, want] of exact) t.ok(Object.is(pow(x, y), want), `pow(${x}, ${y}) = ${pow(x, y)} (${want})`);
});

t.test('pow: 100k float32 pairs, computed in float64 and rounded once', async (t) => {
  const u = uniformStream(32);
  const worst = new Worst();
  for (let i = 0; i < 100_000; i++) {
    const x = Math.fround(logUniform(u, -45, 38.5));
    if (x === 0 || !Number.isFinite(x)) continue;
    // log2(x^y) over [-155, 130]: float32 overflow, its normals, its subnormals (and a few negative x).
    let y = Math.fround((-155 + 285 * u()) / Math.log2(x));
    const negative = i % 8 === 0;
    if (negative) y = Math.round(y);
    if (!Number.isFinite(y)) continue;
    const x32 = negative ? -x : x;
    worst.note(x32, y, reference.ulpError32(Math.fround(pow(x32, y)), reference.pow(x32, y)));
  }
  t.ok(worst.ulps <= 2, `float32: at most ${worst.ulps.toFixed(4)} ulp (at ${worst.at}; bound 2)`);
});

/** C99's (Annex F) special values: [x, y, pow(x, y)]. */
const SPECIALS: ReadonlyArray<readonly [number, number, number]> = [
  // y = ±0, x = 1: 1, even for NaN.
  [NaN, 0, 1], [NaN, -0, 1], [Infinity, 0, 1], [-Infinity, -0, 1], [0, 0, 1], [-0, -0, 1], [-3, 0, 1],
  [1, NaN, 1], [1, Infinity, 1], [1, -Infinity, 1], [1, 1e308, 1], [1, -5e-324, 1],
  // Other NaNs.
  [NaN, 1, NaN], [NaN, -Infinity, NaN], [2, NaN, NaN], [-1, NaN, NaN], [0, NaN, NaN], [Infinity, NaN, NaN],
  // ±0.
  [0, -3, Infinity], [-0, -3, -Infinity], [0, -2, Infinity], [-0, -2, Infinity], [-0, -0.5, Infinity], [0, -Infinity, Infinity],
  [-0, -Infinity, Infinity], [0, 3, 0], [-0, 3, -0], [-0, 2, 0], [-0, 0.5, 0], [-0, Infinity, 0], [0, 5e-324, 0], [-0, 1e300, 0],
  // y = ±inf.
  [-1, Infinity, 1], [-1, -Infinity, 1], [0.5, -Infinity, Infinity], [-0.5, -Infinity, Infinity], [2, -Infinity, 0],
  [-2, -Infinity, 0], [0.5, Infinity, 0], [-0.5, Infinity, 0], [2, Infinity, Infinity], [-2, Infinity, Infinity],
  [1 - 2 ** -53, Infinity, 0], [1 + 2 ** -52, -Infinity, 0], [5e-324, -Infinity, Infinity],
  // x = ±inf.
  [-Infinity, -3, -0], [-Infinity, -2, 0], [-Infinity, -0.5, 0], [-Infinity, 3, -Infinity], [-Infinity, 2, Infinity],
  [-Infinity, 0.5, Infinity], [Infinity, -1, 0], [Infinity, 0.5, Infinity], [Infinity, -Infinity, 0], [Infinity, Infinity, Infinity],
  [-Infinity, Infinity, Infinity], [-Infinity, -Infinity, 0],
  // Negative finite x: NaN for non-integer y, the sign of x for odd y (|y| >= 2^53 is even).
  [-2, 0.5, NaN], [-8, 1 / 3, NaN], [-1e-300, 1.5, NaN], [-5e-324, -0.5, NaN], [-2, 2 ** 51 + 0.5, NaN], [-2, 2 ** 52 - 0.5, NaN],
  [-2, 2 ** 52 + 1, -Infinity], [-2, 2 ** 53, Infinity], [-0.5, 2 ** 52 + 1, -0], [-0.5, -(2 ** 52) - 1, -Infinity], [-2, -1075, -0],
  [-2, 1e300, Infinity], [-2, -1e300, 0],
  // Overflow and underflow.
  [2, 1024, Infinity], [10, 309, Infinity], [2, -1075, 0], [10, -324, 0], [1e308, 1e308, Infinity], [1e-308, 1e308, 0],
  [1 + 2 ** -52, 2 ** 62, Infinity], [1 + 2 ** -52, -(2 ** 62), 0],
];

t.test('pow: C99 special values exactly', async (t) => {
  for (const [x, y, want] of SPECIALS) {
    const got = pow(x, y);
    t.ok(Object.is(got, want) || (Number.isNaN(want) && Number.isNaN(got)), `pow(${x}, ${y}) = ${got} (${want})`);
  }
});

/**
 * A module with powOf on f64 (exported as `pow`) and on f64x2 lanes (exported as `pair`, which
 * takes x's two lanes at byte 0 of the memory, y's at 16, and leaves the results at 32).
 */
function wasmPow(): { pow: (x: number, y: number) => number; pair: (x0: number, x1: number, y0: number, y1: number) => [number, number] } {
  const module = new ModuleBuilder();
  const lanesFunction = (simd: boolean): number =>
    module.function(`pow.${simd ? 'f64x2' : 'f64'}`, () => {
      const type = simd ? V128 : F64;
      const body = new Body([type, type], [type]);
      const lanes = new Lanes(body, simd);
      body.get(lanes.val(powOf<FArg, M>(lanesOps(lanes), lanes.param(0), lanes.param(1))).f);
      return body;
    });
  const scalar = lanesFunction(false);
  const simd = lanesFunction(true);
  const pair = new Body([I32], []);
  pair.get(0).get(0).v128Load(0).get(0).v128Load(16).call(simd).v128Store(32);
  module.export('pow', scalar).export('pair', module.add(pair));
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 65536, shared: true });
  const exports = new WebAssembly.Instance(new WebAssembly.Module(module.bytes()), { env: { memory } }).exports as {
    pow: (x: number, y: number) => number;
    pair: (address: number) => void;
  };
  const values = new Float64Array(memory.buffer, 0, 6);
  return {
    pow: exports.pow,
    pair: (x0, x1, y0, y1) => {
      values.set([x0, x1, y0, y1]);
      exports.pair(0);
      return [values[4]!, values[5]!];
    },
  };
}

t.test('pow: the JS version is the WebAssembly one bit for bit (f64 and f64x2 lanes)', async (t) => {
  const wasm = wasmPow();
  const u = uniformStream(99);
  const pairs: Array<readonly [number, number]> = SPECIALS.map(([x, y]) => [x, y] as const);
  for (let i = 0; i < 4000; i++) {
    const [x, y] = KINDS[i % KINDS.length]![1](u);
    pairs.push([u() < 0.2 ? -x : x, y]);
  }
  let scalarBad = 0;
  let lanesBad = 0;
  for (let i = 0; i < pairs.length; i++) {
    const [x, y] = pairs[i]!;
    const [x1, y1] = pairs[(i * 7 + 3) % pairs.length]!;
    if (!sameNumber(wasm.pow(x, y), pow(x, y))) scalarBad++;
    const [a, b] = wasm.pair(x, x1, y, y1);
    if (!sameNumber(a, pow(x, y)) || !sameNumber(b, pow(x1, y1))) lanesBad++;
  }
  t.equal(scalarBad, 0, `f64: ${pairs.length} pairs`);
  t.equal(lanesBad, 0, `f64x2: ${pairs.length} pairs of lanes`);
});
