// weft's own x^y, written once against LogOps as the other vmath functions: 2^(y log2|x|) with
// log2|x| and its product with y carried as double-doubles (Dekker's exact products: FloatOps has
// no fma), so that the result is rounded once, after errors below 2^-60 (within 0.51 ulp); with
// C99's (Annex F) special values.
//
// log2|x| = k + log2(c) + log2(m/c): x = 2^k m with m in [1, 2), c the nearest of 1, 1.26, 1.59
// and 2, and log2(m/c) = (2/ln2) atanh(s), s = (m - c)/(m + c), |s| < 0.059, a double-double (m - c
// is exact, the division's remainder comes back through an exact product), its series' leading
// terms in double-double too. 2^(hi + lo) = 2^n 2^(j/8) 2^r with |r| <= 1/16: n goes to `scale`
// (overflow and gradual underflow, rounded once), 2^(j/8) from a table of eight, 2^r - 1 a series.
import { horner, MAGIC, type FloatOps } from './functions.js';
import { compileBinaryToJs } from './js-compile.js';
import type { LogOps } from './logarithms.js';
import { split, splitConstant, twoProduct, twoSum, type Pair } from './exact-arithmetic.js';

const SMALLEST_NORMAL = 2.2250738585072014e-308;

/**
 * The entry of `table` for a value's piece: below[i] holds when the value is below the boundary
 * between entries i and i + 1 (boundaries increasing), a chain of selects.
 */
function pick<F, M>(o: FloatOps<F, M>, below: readonly M[], table: readonly number[]): F {
  let v = o.c(table[table.length - 1]!);
  for (let i = below.length - 1; i >= 0; i--) v = o.sel(below[i]!, o.c(table[i]!), v);
  return v;
}

// log2 of the significand m in [1, 2): the pieces [1, 1.12), [1.12, 1.41), [1.41, 1.78), [1.78, 2)
// around c = 1, 161/128, 203/128, 2, so that |s| = |m - c|/(m + c) < 0.0587, s^2 < 0.00345.

const LOG_BOUNDS = [1.12, 1.41, 1.78] as const;
const LOG_CENTERS = [1, 161 / 128, 203 / 128, 2] as const;
/**
 * log2(c) = hi + lo, hi of at most 41 fractional bits, so that k + hi is exact for any exponent k
 * (computed in 400-bit arithmetic; log2 1 and log2 2 are exact).
 */
const LOG2_CENTER_HI = [0, 0.3309168781142944, 0.6653359171850752, 1] as const;
const LOG2_CENTER_LO = [0, 3.226025805155831e-13, 1.0099633394713634e-13, 0] as const;

/** 2/ln2 and 2/(3 ln2) as double-doubles (the nearest double and the rest, in 400-bit arithmetic). */
const K1_HI = 2.8853900817779268;
const K1_LO = 4.0710547481862066e-17;
const K3_HI = 0.9617966939259756;
const K3_LO = 5.0577616648125907e-17;
const K3_HALVES = splitConstant(K3_HI);
/**
 * The rest of log2(m/c) = s (K1 + K3 s^2 + K5 s^4 + ...), K_n = 2/(n ln2): K5..K17 in doubles
 * (their rounding is below 2^-72 of the sum); the first term left out, K19 s^18, is below 2^-77.9.
 */
const LOG_TAIL = Array.from({ length: 7 }, (_, i) => K1_HI / (2 * i + 5));

/**
 * log2 a as hi + lo for a positive finite a (subnormals scaled by 2^54 first), to about 2^-72
 * relative: the product with y of up to 2^11 then errs by less than 2^-60.
 */
function log2Parts<F, M>(o: LogOps<F, M>, a: F): Pair<F> {
  const tiny = o.lt(a, o.c(SMALLEST_NORMAL));
  const scaled = o.sel(tiny, o.mul(a, o.c(2 ** 54)), a);
  const m = o.significand(scaled);
  const k = o.sub(o.exponent(scaled), o.sel(tiny, o.c(54), o.c(0)));
  const below = LOG_BOUNDS.map((b) => o.lt(m, o.c(b)));
  const c = pick(o, below, LOG_CENTERS);
  // s = f/d with f exact (Sterbenz: c/2 <= m <= 2c), d = m + c as a two-sum, and the remainder
  // f - s d, exact through Dekker's product, divided once more: s = sHi + sLo to ~2^-104.
  const f = o.sub(m, c);
  const [dHi, dLo] = twoSum(o, m, c);
  const sHi = o.div(f, dHi);
  const sHalves = split(o, sHi);
  const [sd, sdErr] = twoProduct(o, sHi, sHalves, dHi, split(o, dHi));
  const sLo = o.div(o.sub(o.sub(o.sub(f, sd), sdErr), o.mul(sHi, dLo)), dHi);
  // z = s^2 as zHi + zLo (the square of sHi exactly, plus 2 sHi sLo).
  const zHi = o.mul(sHi, sHi);
  const zSquareErr = o.add(o.add(o.sub(o.mul(sHalves[0], sHalves[0]), zHi), o.mul(o.add(sHalves[0], sHalves[0]), sHalves[1])), o.mul(sHalves[1], sHalves[1]));
  const zLo = o.add(zSquareErr, o.mul(o.add(sHi, sHi), sLo));
  // w = K1 + K3 z + z^2 (K5 + K7 z + ...): K3 z is a third of z, so it is kept exact (Dekker),
  // and the sum as wHi + wLo; the rest is small enough for plain doubles.
  const [k3z, k3zErr] = twoProduct(o, zHi, split(o, zHi), o.c(K3_HI), [o.c(K3_HALVES[0]), o.c(K3_HALVES[1])]);
  const rest = o.mul(o.mul(zHi, zHi), horner(o, zHi, LOG_TAIL));
  const small = o.add(o.add(o.add(o.add(k3zErr, o.mul(o.c(K3_HI), zLo)), o.mul(o.c(K3_LO), zHi)), o.c(K1_LO)), rest);
  const w0 = o.add(o.c(K1_HI), k3z);
  const w1 = o.add(o.add(o.sub(o.c(K1_HI), w0), k3z), small);
  // Renormalized (w1 holds the tail, up to 2^-17): the products below, and the caller's, need lo
  // below hi's last place.
  const wHi = o.add(w0, w1);
  const wLo = o.sub(w1, o.sub(wHi, w0));
  // log2(m/c) = s w as uHi + uLo.
  const [uHi, uErr] = twoProduct(o, sHi, sHalves, wHi, split(o, wHi));
  const uLo = o.add(o.add(uErr, o.mul(sHi, wLo)), o.mul(sLo, wHi));
  // k + log2(c) is exact; adding uHi is a fast two-sum: |uHi| < 0.17 < 0.33 <= |k + log2 c| unless that is 0.
  const whole = o.add(k, pick(o, below, LOG2_CENTER_HI));
  const hi = o.add(whole, uHi);
  const lo = o.add(o.sub(uHi, o.sub(hi, whole)), o.add(uLo, pick(o, below, LOG2_CENTER_LO)));
  return [hi, lo];
}

// 2^t for t = hi + lo: t = n + j/8 + r, |r| <= 1/16 (+ lo).

/** ln 2 as a double-double (the nearest double and the rest), and the halves of the first. */
const LN2_HI = 0.6931471805599453;
const LN2_LO = 2.3190468138462996e-17;
const LN2_HALVES = splitConstant(LN2_HI);
/** 2^(j/8), j = 0..7, as double-doubles (the nearest double and the rest, in 400-bit arithmetic). */
const TWO_POW_HI = [1, 1.0905077326652577, 1.189207115002721, 1.2968395546510096, 1.4142135623730951, 1.5422108254079407, 1.681792830507429, 1.8340080864093424] as const;
const TWO_POW_LO = [0, -3.046782079812471e-17, 3.982015231465646e-17, 2.5382502794888315e-17, -9.667293313452913e-17, 7.949834809697621e-17, 8.199010020581497e-17, 3.283107224245627e-17] as const;
/** Where j (an integer 0..7) moves to the next table entry. */
const TABLE_BOUNDS = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5] as const;
/**
 * 2^r - 1 = ln2 r + r^2 (c2 + c3 r + ... + c9 r^7), c_n = ln2^n / n! (Taylor's series); for
 * |r| <= 1/16 the first term left out is below 2^-67.
 */
const EXP2_SERIES = (() => {
  const c: number[] = [];
  let term = LN2_HI;
  for (let n = 2; n <= 9; n++) c.push((term = (term * LN2_HI) / n));
  return c;
})();

/** The exponent t = hi + lo clamped to this: beyond it 2^t is 0 or inf, and scale's range holds n. */
const EXP2_LIMIT = 1100;

/**
 * 2^(hi + lo) as 2^n (v + w) for a double-double exponent (|lo| below 2^-20 or clamped there),
 * before its one rounding: n an integer in [-1100, 1100], v + w in [0.95, 2) within 2^-62 or so of
 * the exact 2^(hi + lo - n), |w| < 2^-9 v (so that w's own rounding errors stay below 2^-62).
 * Exponents beyond ±1100 are clamped (2^n (v + w) is then 0 or inf).
 */
export function exp2Parts<F, M>(o: FloatOps<F, M>, hi: F, lo: F): { n: F; v: F; w: F } {
  const t = o.max(o.min(hi, o.c(EXP2_LIMIT)), o.c(-EXP2_LIMIT));
  const tLo = o.max(o.min(lo, o.c(2 ** -20)), o.c(-(2 ** -20)));
  // n8 = round(8t), n = floor(n8 / 8) (n8/8 - 7/16 rounds to it), j = n8 - 8n in 0..7; t - n8/8
  // is exact (both are multiples of t's last place, within 1/16 of each other).
  const n8 = o.sub(o.add(o.mul(t, o.c(8)), o.c(MAGIC)), o.c(MAGIC));
  const eighths = o.mul(n8, o.c(0.125));
  const n = o.sub(o.add(o.sub(eighths, o.c(0.4375)), o.c(MAGIC)), o.c(MAGIC));
  const j = o.sub(n8, o.mul(n, o.c(8)));
  const a = o.sub(t, eighths);
  const [rHi, rLo] = twoSum(o, a, tLo);
  // p = 2^r - 1 as pHi + pLo, ln2 rHi exact (Dekker).
  const [pHi, pErr] = twoProduct(o, rHi, split(o, rHi), o.c(LN2_HI), [o.c(LN2_HALVES[0]), o.c(LN2_HALVES[1])]);
  const pLo = o.add(o.add(o.add(pErr, o.mul(rHi, o.c(LN2_LO))), o.mul(rLo, o.c(LN2_HI))), o.mul(o.mul(rHi, rHi), horner(o, rHi, EXP2_SERIES)));
  const below = TABLE_BOUNDS.map((b) => o.lt(j, o.c(b)));
  const c = pick(o, below, TWO_POW_HI);
  const cLo = pick(o, below, TWO_POW_LO);
  // 2^(j/8) 2^r = c + c pHi + (c pLo + cLo (1 + pHi)), c pHi exact (Dekker) and its sum with c
  // a fast two-sum (|c pHi| < 0.045 c): the small rest's rounding is all that is left.
  const [cp, cpErr] = twoProduct(o, c, split(o, c), pHi, split(o, pHi));
  const v = o.add(c, cp);
  const w = o.add(o.sub(cp, o.sub(v, c)), o.add(cpErr, o.add(o.mul(c, pLo), o.mul(cLo, o.add(o.c(1), pHi)))));
  return { n, v, w };
}

/**
 * 2^n (v + w) rounded once, for |w| much smaller than |v| (as exp2Parts gives them): scale
 * rounds v + w and then, for results below 2^-1021 (whose last place is 2^-1074), rounds again;
 * there the sum is taken after scaling instead, v's rounding to that grid plus the rest rounded
 * to it (v minus 2^-n scale(v, n) is exact), so that both are multiples of 2^-1074 and add exactly.
 */
export function scaleSum<F, M>(o: FloatOps<F, M>, n: F, v: F, w: F): F {
  const direct = o.scale(o.add(v, w), n);
  const vs = o.scale(v, n);
  const rest = o.add(o.sub(v, o.scale(vs, o.sub(o.c(0), n))), w);
  return o.sel(o.lt(o.abs(direct), o.c(2 ** -1021)), o.add(vs, o.scale(rest, n)), direct);
}

/**
 * |y| as far as pow needs it: its magnitude beyond 2^64 does not change a result (|y log2 x| is
 * then above 2^11 for every x but 1, which has its own case) and keeps Dekker's split finite.
 */
const Y_LIMIT = 2 ** 64;

/**
 * Whether y is an odd integer, and whether it is an integer (every |y| >= 2^53, inf included, is
 * even). From h = w/2, w = |y| brought below 2^52 with its parity kept (2^52 taken off in
 * [2^52, 2^53), clamped beyond): |h - round(h)| is 0 for an even integer, 1/2 for an odd one.
 */
function integerKind<F, M>(o: FloatOps<F, M>, y: F): { odd: M; integer: M } {
  const ay = o.abs(y);
  const w = o.sel(o.lt(ay, o.c(2 ** 52)), ay, o.min(o.sub(ay, o.c(2 ** 52)), o.c(2 ** 52)));
  const h = o.mul(w, o.c(0.5));
  const d = o.abs(o.sub(h, o.sub(o.add(h, o.c(MAGIC)), o.c(MAGIC))));
  const odd = o.eq(d, o.c(0.5));
  return { odd, integer: o.eq(o.sel(odd, o.c(0), d), o.c(0)) };
}

/**
 * x^y with C99's special values (Annex F): pow(x, ±0) = 1 and pow(1, y) = 1 even for NaN;
 * pow(-1, ±inf) = 1; negative finite x with non-integer y gives NaN; an odd integer y keeps x's
 * sign (-0 and -inf too); ±0 and ±inf give 0 or inf by the sign of y; overflow gives inf and
 * underflow gradual subnormals, then 0.
 */
export function powOf<F, M>(o: LogOps<F, M>, x: F, y: F): F {
  const ax = o.abs(x);
  const [lHi, lLo] = log2Parts(o, ax);
  // t = y log2|x| as tHi + tLo: y lHi exact (Dekker), y lLo added.
  const yc = o.max(o.min(y, o.c(Y_LIMIT)), o.c(-Y_LIMIT));
  const [tHi, tErr] = twoProduct(o, yc, split(o, yc), lHi, split(o, lHi));
  const { n, v, w } = exp2Parts(o, tHi, o.add(tErr, o.mul(yc, lLo)));
  const general = scaleSum(o, n, v, w);
  // ±0 and ±inf (whose logarithm above is no logarithm): 0 or inf by the sign of y.
  const yNegative = o.lt(y, o.c(0));
  const atZero = o.sel(yNegative, o.c(Infinity), o.c(0));
  const atInfinity = o.sel(yNegative, o.c(0), o.c(Infinity));
  const magnitude = o.sel(o.eq(ax, o.c(0)), atZero, o.sel(o.eq(ax, o.c(Infinity)), atInfinity, general));
  const kind = integerKind(o, y);
  const signed = o.sel(kind.odd, o.copysign(magnitude, x), magnitude);
  // Negative x (finite, not -0) with y not an integer: no real power.
  const real = o.sel(kind.integer, signed, o.sel(o.lt(x, o.c(0)), o.sel(o.eq(ax, o.c(Infinity)), signed, o.c(NaN)), signed));
  const nan = o.sel(o.isNaN(x), x, o.sel(o.isNaN(y), y, real));
  return o.sel(o.eq(y, o.c(0)), o.c(1), o.sel(o.eq(x, o.c(1)), o.c(1), nan));
}

/** x^y as weft's kernels compute it (the same bits as the WebAssembly version). */
export const pow = compileBinaryToJs(powOf, 'pow');
