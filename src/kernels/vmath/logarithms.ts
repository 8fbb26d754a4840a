// weft's own float64 log, log1p, expm1, sigmoid and softplus, written once against LogOps (FloatOps
// and the two bit operations a logarithm needs), as exp and tanh are in functions.ts: the same
// IEEE operations in the same order as WebAssembly and as JS. float32 kernels compute them in
// float64 and round once, so their results are within half an ulp (plus the float64 error).
import { divSum, expOf, factorial, horner, LN2_HI, LN2_LO, reduceByLn2, type FloatOps } from './functions.js';

/** FloatOps with the exponent and significand of a float, read from its bits. */
export interface LogOps<F, M> extends FloatOps<F, M> {
  /** The biased exponent field minus 1023, as a float: floor(log2 |a|) for normal a. */
  exponent(a: F): F;
  /** |a| with its exponent field set to 1023: the significand, in [1, 2) for normal a. */
  significand(a: F): F;
}

const SQRT2 = Math.SQRT2;
const SMALLEST_NORMAL = 2.2250738585072014e-308;
const TWO54 = 2 ** 54;
/**
 * The minimax fit of fdlibm's log: log(1 + f) = 2s + s R(s^2), s = f / (2 + f), for
 * f in [sqrt(2)/2 - 1, sqrt(2) - 1]; R's error is below 2^-58.45 (fdlibm's e_log.c).
 */
const LG = [6.666666666666735130e-1, 3.999999999940941908e-1, 2.857142874366239149e-1, 2.222219843214978396e-1, 1.818357216161805012e-1, 1.531383769920937332e-1, 1.479819860511658591e-1] as const;

/**
 * log(1 + f) = f - hfsq + s (hfsq + R(s^2)) for f in [sqrt(2)/2 - 1, sqrt(2) - 1], with hfsq =
 * f^2 / 2 and s = f / (2 + f): the two small terms [hfsq, s (hfsq + R)], which the logarithms
 * combine with f so that the rounding errors stay below that of f's last bit (fdlibm's method).
 */
function logTerms<F, M>(o: FloatOps<F, M>, f: F): [F, F] {
  const hfsq = o.mul(o.mul(o.c(0.5), f), f);
  const s = o.div(f, o.add(o.c(2), f));
  const z = o.mul(s, s);
  const w = o.mul(z, z);
  const t1 = o.mul(w, o.add(o.c(LG[1]), o.mul(w, o.add(o.c(LG[3]), o.mul(w, o.c(LG[5]))))));
  const t2 = o.mul(z, o.add(o.c(LG[0]), o.mul(w, o.add(o.c(LG[2]), o.mul(w, o.add(o.c(LG[4]), o.mul(w, o.c(LG[6]))))))));
  return [hfsq, o.mul(s, o.add(hfsq, o.add(t2, t1)))];
}

/**
 * k ln2 + log(1 + f) + c, for a small correction c (the part of the argument that 1 + f lost to
 * rounding, for log1p): f is added last.
 */
function logCore<F, M>(o: FloatOps<F, M>, k: F, f: F, c: F): F {
  const [hfsq, sr] = logTerms(o, f);
  const inner = o.add(sr, o.add(o.mul(k, o.c(LN2_LO)), c));
  return o.sub(o.mul(k, o.c(LN2_HI)), o.sub(o.sub(hfsq, inner), f));
}

/** Veltkamp's constant 2^32 + 1: (x C) - ((x C) - x) is x rounded to 21 bits. */
const SPLIT_21 = 4294967297;

/**
 * log(1 + f) as hi + lo, hi of 21 bits (so that its products with the 32-bit high parts of
 * 1/ln2 and 1/ln10 are exact): the split of FreeBSD's e_log2.c and e_log10.c.
 */
function logHiLo<F, M>(o: FloatOps<F, M>, f: F): [F, F] {
  const [hfsq, sr] = logTerms(o, f);
  const d = o.sub(f, hfsq);
  const p = o.mul(d, o.c(SPLIT_21));
  const hi = o.sub(p, o.sub(p, d));
  return [hi, o.add(o.sub(o.sub(f, hi), hfsq), sr)];
}

/** x = 2^k m with m in [sqrt(2)/2, sqrt(2)), for positive normal x: [k, m]. */
function split<F, M>(o: LogOps<F, M>, x: F): [F, F] {
  const m = o.significand(x);
  const k = o.exponent(x);
  const high = o.gt(m, o.c(SQRT2));
  return [o.sel(high, o.add(k, o.c(1)), k), o.sel(high, o.mul(m, o.c(0.5)), m)];
}

/** x = 2^k (1 + f) for positive x, subnormals scaled first: [k, f], f in [sqrt(2)/2 - 1, sqrt(2) - 1]. */
function logArgument<F, M>(o: LogOps<F, M>, x: F): [F, F] {
  const tiny = o.lt(x, o.c(SMALLEST_NORMAL));
  const [k0, m] = split(o, o.sel(tiny, o.mul(x, o.c(TWO54)), x));
  return [o.sel(tiny, o.sub(k0, o.c(54)), k0), o.sub(m, o.c(1))];
}

/** A logarithm's value `y` of x, or the special values: -inf at ±0, NaN below 0 and at NaN, inf at inf. */
function logSpecials<F, M>(o: FloatOps<F, M>, x: F, y: F): F {
  const special = o.sel(o.eq(x, o.c(0)), o.c(-Infinity), o.sel(o.lt(x, o.c(0)), o.c(NaN), o.sel(o.eq(x, o.c(Infinity)), x, y)));
  return o.sel(o.isNaN(x), x, special);
}

/** The natural logarithm: log(±0) = -inf, log(x < 0) = NaN, log(inf) = inf; subnormals scaled first. */
export function logOf<F, M>(o: LogOps<F, M>, x: F): F {
  const [k, f] = logArgument(o, x);
  return logSpecials(o, x, logCore(o, k, f, o.c(0)));
}

/** 1/ln2 and 1/ln10, each as a high part of 32 bits and the rest, and log10(2) as a high part and the rest (fdlibm's constants). */
const INV_LN2_HI = 1.44269504072144627571;
const INV_LN2_LO = 1.67517131648865118353e-10;
const INV_LN10_HI = 4.34294481878168880939e-1;
const INV_LN10_LO = 2.50829467116452752298e-11;
const LOG10_2_HI = 3.01029995663611771306e-1;
const LOG10_2_LO = 3.69423907715893078616e-13;

/**
 * `big` + `hi` + `lo` with big + hi summed exactly (its rounding error carried into lo): the
 * last step of log2 and log10, where big is k or k log10(2).
 */
function sumLast<F, M>(o: FloatOps<F, M>, big: F, hi: F, lo: F): F {
  const w = o.add(big, hi);
  return o.add(o.add(lo, o.add(o.sub(big, w), hi)), w);
}

/** log2(x) = k + log(1 + f) / ln 2, log(1 + f) in two parts: exact at powers of two. */
export function log2Of<F, M>(o: LogOps<F, M>, x: F): F {
  const [k, f] = logArgument(o, x);
  const [hi, lo] = logHiLo(o, f);
  const valLo = o.add(o.mul(o.add(lo, hi), o.c(INV_LN2_LO)), o.mul(lo, o.c(INV_LN2_HI)));
  return logSpecials(o, x, sumLast(o, k, o.mul(hi, o.c(INV_LN2_HI)), valLo));
}

/** log10(x) = k log10(2) + log(1 + f) / ln 10, each in two parts. */
export function log10Of<F, M>(o: LogOps<F, M>, x: F): F {
  const [k, f] = logArgument(o, x);
  const [hi, lo] = logHiLo(o, f);
  const valLo = o.add(o.add(o.mul(k, o.c(LOG10_2_LO)), o.mul(o.add(lo, hi), o.c(INV_LN10_LO))), o.mul(lo, o.c(INV_LN10_HI)));
  return logSpecials(o, x, sumLast(o, o.mul(k, o.c(LOG10_2_HI)), o.mul(hi, o.c(INV_LN10_HI)), valLo));
}

/**
 * log(1 + x): u = 1 + x rounded, and the rounding's loss c = ((1 + x) - u) / u added to log(u)
 * (fdlibm's s_log1p.c does the same): c is exact to first order, so small x lose nothing.
 */
export function log1pOf<F, M>(o: LogOps<F, M>, x: F): F {
  const u = o.add(o.c(1), x);
  const [k, m] = split(o, u);
  // Each form is exact where it is used: u - 1 for u < 2 (Sterbenz), u - x from there on.
  const lost = o.sel(o.lt(u, o.c(2)), o.sub(x, o.sub(u, o.c(1))), o.sub(o.c(1), o.sub(u, x)));
  const y = logCore(o, k, o.sub(m, o.c(1)), o.div(lost, u));
  // Below 2^-54, log1p(x) rounds to x (which keeps -0).
  const small = o.sel(o.lt(o.abs(x), o.c(2 ** -54)), x, y);
  const special = o.sel(o.eq(x, o.c(-1)), o.c(-Infinity), o.sel(o.lt(x, o.c(-1)), o.c(NaN), o.sel(o.eq(x, o.c(Infinity)), x, small)));
  return o.sel(o.isNaN(x), x, special);
}

/** 1/n! for n = 2..14: expm1(r) = r + r^2 Q(r) for |r| <= ln2/2, truncation below 2^-61. */
const Q = Array.from({ length: 13 }, (_, n) => 1 / factorial(n + 2));

/**
 * e^x - 1: x = k ln2 + r with |r| <= ln2/2 (r's rounding error cr kept), e^(r + cr) - 1 =
 * r + tail by its Taylor series, then 2^k (r + tail) + (2^k - 1) summed as (2^k - 1 + 2^k r)
 * with its rounding error (Knuth's two-sum), plus 2^k tail: one rounding that matters. Beyond
 * 37 it is e^x (2^k - 1 would no longer be exact), below -40 it rounds to -1.
 */
export function expm1Of<F, M>(o: FloatOps<F, M>, x: F): F {
  const { k, hi, lo, r } = reduceByLn2(o, x, 60);
  const cr = o.sub(o.sub(hi, r), lo);
  const tail = o.add(o.mul(o.mul(r, r), horner(o, r, Q)), o.mul(cr, o.add(o.c(1), r)));
  const p = o.scale(o.c(1), k);
  const a = o.sub(p, o.c(1));
  const b = o.mul(p, r);
  const sum = o.add(a, b);
  const bv = o.sub(sum, a);
  const error = o.add(o.sub(a, o.sub(sum, bv)), o.sub(b, bv));
  const y = o.add(sum, o.add(error, o.mul(p, tail)));
  // |x| below 2^-54: e^x - 1 rounds to x (which keeps -0).
  const near = o.sel(o.lt(o.abs(x), o.c(2 ** -54)), x, y);
  const big = o.sel(o.gt(x, o.c(37)), expOf(o, x), o.sel(o.lt(x, o.c(-40)), o.c(-1), near));
  return o.sel(o.isNaN(x), x, big);
}

/** 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: no overflow, no cancellation. */
export function sigmoidOf<F, M>(o: FloatOps<F, M>, x: F): F {
  const e = expOf(o, o.sub(o.c(0), o.abs(x)));
  const positive = divSum(o, o.c(1), o.c(1), e);
  const negative = divSum(o, e, o.c(1), e);
  return o.sel(o.isNaN(x), x, o.sel(o.lt(x, o.c(0)), negative, positive));
}

/** log(1 + e^x) as max(x, 0) + log1p(e^-|x|): no overflow, and exact to e^x for very negative x. */
export function softplusOf<F, M>(o: LogOps<F, M>, x: F): F {
  const tail = log1pOf(o, expOf(o, o.sub(o.c(0), o.abs(x))));
  const y = o.add(o.max(x, o.c(0)), tail);
  return o.sel(o.isNaN(x), x, o.sel(o.eq(x, o.c(Infinity)), x, y));
}
