// weft's own float64 exp and tanh, written once against FloatOps: the same IEEE operations in
// the same order run as WebAssembly (scalar f64 or f64x2 lanes, through Lanes) and as plain JS
// (jsOps), so every kernel gives the same bits on any engine, unlike Math.exp and Math.tanh,
// whose last bits differ between V8 versions. float32 kernels compute these in float64 and round.

import type { LogOps } from './logarithms.js';

/** The operations the functions are written in: IEEE-exact float64 arithmetic, masks, selects. */
export interface FloatOps<F, M> {
  c(x: number): F;
  add(a: F, b: F): F;
  sub(a: F, b: F): F;
  mul(a: F, b: F): F;
  div(a: F, b: F): F;
  /**
   * The smaller (larger) of a value `a` and a bound `b`: a NaN `a` stays NaN (its payload may
   * differ), and `b` is not NaN, nor a zero where the sign of a zero result would matter (SIMD
   * lanes use wasm's pmin and pmax, which differ from Math.min and Math.max only there).
   */
  min(a: F, b: F): F;
  max(a: F, b: F): F;
  abs(a: F): F;
  /** The correctly rounded square root (IEEE's sqrt, in wasm and in JS alike). */
  sqrt(a: F): F;
  lt(a: F, b: F): M;
  gt(a: F, b: F): M;
  eq(a: F, b: F): M;
  isNaN(a: F): M;
  /** `a` where the mask holds, else `b`. */
  sel(m: M, a: F, b: F): F;
  /** `|a|` with the sign of `s`. */
  copysign(a: F, s: F): F;
  /** p * 2^k for an integer-valued k in [-1100, 1100]: two exact power-of-two products. */
  scale(p: F, k: F): F;
}

/** 1.5 * 2^52: (x + MAGIC) - MAGIC rounds |x| < 2^51 to an integer, ties to even. */
export const MAGIC = 6755399441055744;
const INV_LN2 = 1.4426950408889634;
/** ln 2 split: LN2_HI has 32 significant bits, so k * LN2_HI is exact for |k| < 2^20. */
export const LN2_HI = 6.93147180369123816490e-1;
export const LN2_LO = 1.90821492927058770002e-10;
/**
 * The minimax fit of exp on [-ln2/2, ln2/2] that fdlibm's exp (and V8's, its port) uses:
 * R(z) = 2 + z P(z) with z = r^2 and P's coefficients below, good to 2^-59 (Remez).
 */
const EXP_P = [1.66666666666666019037e-1, -2.77777777770155933842e-3, 6.61375632143793436117e-5, -1.65339022054652515390e-6, 4.13813679705723846039e-8];
/**
 * tanh's odd series tanh a = a + a^3 (c1 + c2 a^2 + ...), c1 = -1/3, from tanh' = 1 - tanh^2:
 * (2k + 1) c_k = -(sum of c_i c_j over i + j = k - 1), c_0 = 1. 24 terms: below 2^-60 for a < 0.55.
 */
const TANH_SERIES = (() => {
  const c = [1];
  for (let k = 1; k <= 24; k++) {
    let sum = 0;
    for (let i = 0; i <= k - 1; i++) sum += c[i]! * c[k - 1 - i]!;
    c.push(-sum / (2 * k + 1));
  }
  return c.slice(1);
})();


export function factorial(n: number): number {
  let f = 1;
  for (let k = 2; k <= n; k++) f *= k;
  return f;
}

/** c[0] + z*(c[1] + z*(c[2] + ...)). */
export function horner<F, M>(o: FloatOps<F, M>, z: F, c: readonly number[]): F {
  let acc = o.c(c[c.length - 1]!);
  for (let k = c.length - 2; k >= 0; k--) acc = o.add(o.c(c[k]!), o.mul(z, acc));
  return acc;
}

/**
 * n / (a + b), with the rounding of a + b (Knuth's two-sum gives it exactly) corrected to first
 * order: the quotient's error is then the division's and n's, not also the denominator's.
 */
export function divSum<F, M>(o: FloatOps<F, M>, n: F, a: F, b: F): F {
  const d = o.add(a, b);
  const bv = o.sub(d, a);
  const err = o.add(o.sub(a, o.sub(d, bv)), o.sub(b, bv));
  const q = o.div(n, d);
  return o.sub(q, o.div(o.mul(q, err), d));
}

/**
 * x = k ln2 + r with |r| <= ln2/2 and k an integer in [-limit, limit]: Cody and Waite's two-part
 * ln2, r = hi - lo with hi and lo exact (the one rounding is r's own).
 */
export function reduceByLn2<F, M>(o: FloatOps<F, M>, x: F, limit: number): { k: F; hi: F; lo: F; r: F } {
  const t = o.max(o.min(o.mul(x, o.c(INV_LN2)), o.c(limit)), o.c(-limit));
  const k = o.sub(o.add(t, o.c(MAGIC)), o.c(MAGIC));
  const hi = o.sub(x, o.mul(k, o.c(LN2_HI)));
  const lo = o.mul(k, o.c(LN2_LO));
  return { k, hi, lo, r: o.sub(hi, lo) };
}

/**
 * e^x: x = k ln2 + r with |r| <= ln2/2 (Cody and Waite's two-part ln2, r kept as hi - lo), e^r
 * from the rational form of fdlibm's method, e^r = 1 - ((lo - r c / (2 - c)) - hi) with
 * c = r - r^2 P(r^2) (under 1 ulp), then scaled by 2^k, which gives overflow to inf and gradual
 * underflow by itself. e^1 is given as Math.E, the correctly rounded e, as V8 gives it.
 */
export function expOf<F, M>(o: FloatOps<F, M>, x: F): F {
  const { k, hi, lo, r } = reduceByLn2(o, x, 1100);
  const z = o.mul(r, r);
  const c = o.sub(r, o.mul(z, horner(o, z, EXP_P)));
  const er = o.sub(o.c(1), o.sub(o.sub(lo, o.div(o.mul(r, c), o.sub(o.c(2), c))), hi));
  const y = o.sel(o.eq(x, o.c(1)), o.c(Math.E), o.scale(er, k));
  // Beyond these e^x rounds to 0 (below half the least subnormal) or overflows; they also keep
  // infinite x (whose r would be infinite, NaN through the polynomial) and clamped k away.
  const limits = o.sel(o.lt(x, o.c(-745.2)), o.c(0), o.sel(o.gt(x, o.c(709.8)), o.c(Infinity), y));
  return o.sel(o.isNaN(x), x, limits);
}

/**
 * tanh x, from a = |x|: for a < 0.55, its odd series (a plus a small term: no cancellation);
 * beyond, 1 - 2/(e^(2a) + 1). The sign of x is put back (tanh(-0) = -0).
 */
export function tanhOf<F, M>(o: FloatOps<F, M>, x: F): F {
  const a = o.abs(x);
  const t = o.add(a, a);
  const z = o.mul(a, a);
  const small = o.add(a, o.mul(o.mul(a, z), horner(o, z, TANH_SERIES)));
  const large = o.sub(o.c(1), o.div(o.c(2), o.add(expOf(o, t), o.c(1))));
  return o.copysign(o.sel(o.lt(a, o.c(0.55)), small, large), x);
}

const bits = new BigInt64Array(1);
const floats = new Float64Array(bits.buffer);

/** 2^n for an integer n in [-1022, 1023], built from its bits (exact, as the wasm does it). */
function pow2(n: number): number {
  bits[0] = BigInt(n + 1023) << 52n;
  return floats[0]!;
}

/** 2^n for n in [-560, 560]: scale's halves, looked up by the JS versions below. */
export const POW2 = Float64Array.from({ length: 1121 }, (_, i) => pow2(i - 560));

const word = new Float64Array(1);
/** word's two halves: [low, high] on the little-endian machines JS runs on (checked below). */
const halves = new Uint32Array(word.buffer);
word[0] = 2;
if (halves[1] !== 0x40000000) throw new Error('weft: vmath expects a little-endian machine');

/** The biased exponent field of a minus 1023 (LogOps.exponent). */
export function exponentField(a: number): number {
  word[0] = a;
  return ((halves[1]! >>> 20) & 0x7ff) - 1023;
}

/** |a| with the exponent field of 1 (LogOps.significand). */
export function significandOf(a: number): number {
  word[0] = a;
  halves[1] = (halves[1]! & 0x000fffff) | 0x3ff00000;
  return word[0]!;
}

/** The operations as plain JS numbers: JS arithmetic is IEEE float64, as wasm's is. */
export const jsOps: LogOps<number, boolean> = {
  c: (x) => x,
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => a / b,
  // IEEE's min and max (NaN if either is NaN, -0 below +0); on a value and a bound, as FloatOps.min
  // asks, they equal the pmin and pmax of the SIMD lanes.
  min: (a, b) => Math.min(a, b),
  max: (a, b) => Math.max(a, b),
  abs: (a) => Math.abs(a),
  sqrt: (a) => Math.sqrt(a),
  lt: (a, b) => a < b,
  gt: (a, b) => a > b,
  eq: (a, b) => a === b,
  isNaN: (a) => a !== a,
  sel: (m, a, b) => (m ? a : b),
  copysign: (a, s) => (s < 0 || Object.is(s, -0) ? -Math.abs(a) : Math.abs(a)),
  scale: (p, k) => {
    if (k !== k) return NaN;
    const half = Math.floor(k / 2);
    return p * POW2[half + 560]! * POW2[k - half + 560]!;
  },
  exponent: exponentField,
  significand: significandOf,
};

// The JS kernels call these: expOf and tanhOf over jsOps written out by hand, the same operations
// in the same order (test/kernels/vmath.test.ts checks they agree bit for bit), without a closure
// call per operation.

const [P0, P1, P2, P3, P4] = EXP_P as [number, number, number, number, number];

/** e^x as weft's kernels compute it (the same bits as the WebAssembly version). */
export function exp(x: number): number {
  if (x !== x) return x;
  if (x < -745.2) return 0;
  if (x > 709.8) return Infinity;
  if (x === 1) return Math.E;
  const t = Math.max(Math.min(x * INV_LN2, 1100), -1100);
  const k = t + MAGIC - MAGIC;
  const hi = x - k * LN2_HI;
  const lo = k * LN2_LO;
  const r = hi - lo;
  const z = r * r;
  const c = r - z * (P0 + z * (P1 + z * (P2 + z * (P3 + z * P4))));
  const er = 1 - (lo - (r * c) / (2 - c) - hi);
  const half = Math.floor(k / 2);
  return er * POW2[half + 560]! * POW2[k - half + 560]!;
}

/** tanh x as weft's kernels compute it. */
export function tanh(x: number): number {
  const a = Math.abs(x);
  let y: number;
  if (a < 0.55) {
    const z = a * a;
    let acc = TANH_SERIES[TANH_SERIES.length - 1]!;
    for (let k = TANH_SERIES.length - 2; k >= 0; k--) acc = TANH_SERIES[k]! + z * acc;
    y = a + a * z * acc;
  } else y = 1 - 2 / (exp(a + a) + 1);
  return x < 0 || (x === 0 && 1 / x < 0) ? -y : y;
}
