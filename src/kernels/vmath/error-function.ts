// weft's own erf and erfc, written once against FloatOps (as the other vmath functions), so that
// the JS and the WebAssembly loops give the same bits on every engine; accurate to 2 ulp (erfc to
// one) over the whole real line.
//
// |x| < 0.75 (erf) or 0.47 (erfc): erf by its Maclaurin series (a polynomial in x^2; no
// cancellation at these x), and erfc = 1 - erf, which is above 1/2 there (so that erf's rounding
// costs at most half an ulp of erfc).
// Beyond: erfc(x) = exp(-x^2) * g(t) / (1 + 2x), where g(t) = (1 + 2x) exp(x^2) erfc(x) is a
// smooth function of t = (x - 4) / (x + 4) on [-1, 1] (the mapping of [0, inf) used by Shepherd
// and Laframboise), given by its Chebyshev series; erf = 1 - erfc, and negative x by symmetry.
// exp(-x^2) is 2^(-x^2/ln2) with x^2/ln2 an exact double-double (power.ts's exp2Parts), and the
// three factors are multiplied as double-doubles, so that erfc is rounded once but for g's error.
// The coefficients below were computed for weft by Chebyshev interpolation of g at 48 nodes in
// 60-digit arithmetic and rounded to doubles; the terms left out are below 1e-19.
import { horner, type FloatOps } from './functions.js';
import { split, splitConstant, twoProduct, twoSum } from './exact-arithmetic.js';
import { exp2Parts, scaleSum } from './power.js';

/** 2/sqrt(pi) * (-1)^n / (n! (2n + 1)), n = 0..14: erf(x) = x * sum(c_n x^(2n)). */
const ERF_SERIES = [
  1.1283791670955126, -0.37612638903183754, 0.11283791670955126, -0.026866170645131252, 0.005223977625442188,
  -0.0008548327023450853, 0.00012055332981789664, -1.492565035840625e-5, 1.6462114365889248e-6,
  -1.6365844691234924e-7, 1.4807192815879218e-8, -1.2290555301717928e-9, 9.422759064650411e-11,
  -6.7113668551641105e-12, 4.4632242632864775e-13,
] as const;

/** Chebyshev coefficients of g(t) (the first one already halved, for Clenshaw's sum). */
const ERFC_CHEBYSHEV = [
  1.1774832005374487, -0.007260796620301901, -0.081265123236185, 0.06009212804122225, -0.02875393558027666,
  0.01059566336347286, -0.003136927294554264, 0.0007456494372536184, -0.0001369696503010054,
  1.7183861600300937e-5, -7.158364623450346e-7, -2.4261399442449534e-7, 5.5765709395703566e-8,
  -2.1057869513809494e-9, -1.1717889351884957e-9, 1.9098355172456688e-10, 1.408871764208813e-11,
  -6.901108320480815e-12, 9.167958364111294e-14, 2.1454508286554553e-13, -1.4716575027010623e-14,
  -6.668675118770408e-15, 7.504598509880083e-16, 2.22009300666632e-16, -3.1704898956330886e-17,
  -8.193570309884333e-18, 1.2459819733129574e-18, 3.3664022738726354e-19,
] as const;

const ERFC_SCALE = 4;
/** Beyond this, erfc(x) is below half the smallest subnormal double. */
const ERFC_UNDERFLOW = 27.4;

/** What c0 (g's first Chebyshev coefficient) lost to its rounding to a double. */
const ERFC_CHEBYSHEV_0_LO = -5.6466378867754156e-18;

/**
 * g'(t) = sum of k c_k U_(k-1)(t) (T_k' = k U_(k-1)), its first eight terms: g' only scales t's
 * rounding error (2^-53 of t), so its own error of about 1% does not matter.
 */
const ERFC_DERIVATIVE = Array.from({ length: 8 }, (_, k) => (k + 1) * ERFC_CHEBYSHEV[k + 1]!);

/** 1/ln2 as the nearest double and the rest (in 400-bit arithmetic), and the halves of the first. */
const INV_LN2_HI = 1.4426950408889634;
const INV_LN2_LO = 2.0355273740931033e-17;
const INV_LN2_HALVES = splitConstant(INV_LN2_HI);

/**
 * The series' further terms, n = 15..22 (computed here: their rounding is far below the sum's),
 * which erf needs up to |x| = ERF_SERIES_LIMIT.
 */
const ERF_SERIES_LONG = [...ERF_SERIES, ...Array.from({ length: 8 }, (_, k) => {
  const n = 15 + k;
  let factorial = 1;
  for (let j = 2; j <= n; j++) factorial *= j;
  return ((n % 2 === 0 ? 1 : -1) * ERF_SERIES[0]) / (factorial * (2 * n + 1));
})];

/**
 * Where erf leaves the series for 1 - erfc: at 0.75 the series still converges well (terms below
 * 2^-60); 1 - erfc would do from 0.5 on too (erfc's error is below half of erf's ulp there).
 */
const ERF_SERIES_LIMIT = 0.75;
/** Where erfc leaves 1 - erf for its tail: erfc(0.4769) = 1/2, below which erfc's ulp is half erf's. */
const ERFC_SERIES_LIMIT = 0.47;

/** erfc's series after its first term: 1 - erf(x) = 1 - c0 x - x^3 (c1 + c2 x^2 + ...). */
const ERF_SERIES_REST = ERF_SERIES.slice(1);

function erfSeries<F, M>(o: FloatOps<F, M>, x: F, terms: readonly number[]): F {
  return o.mul(x, horner(o, o.mul(x, x), terms));
}

/** 2/sqrt(pi) = ERF_SERIES[0] + this (in 300-bit arithmetic), and the halves of the first. */
const TWO_OVER_SQRT_PI_LO = 1.533545961316588e-17;
const TWO_OVER_SQRT_PI_HALVES = splitConstant(ERF_SERIES[0]);

/**
 * erfc = 1 - erf for |x| < ERFC_SERIES_LIMIT, as 1 - c0 x - x^3 P(x^2): c0 x exact (Dekker) and
 * its difference with 1 a fast two-sum, so that only the rest's rounding (x^3 P is at most 7.5% of
 * c0 x) and the last one are left.
 */
function erfcSeries<F, M>(o: FloatOps<F, M>, x: F): F {
  const z = o.mul(x, x);
  const rest = o.mul(o.mul(x, z), horner(o, z, ERF_SERIES_REST));
  const [a, aErr] = twoProduct(o, x, split(o, x), o.c(ERF_SERIES[0]), [o.c(TWO_OVER_SQRT_PI_HALVES[0]), o.c(TWO_OVER_SQRT_PI_HALVES[1])]);
  const h = o.sub(o.c(1), a);
  const hErr = o.sub(o.sub(o.c(1), h), a);
  return o.add(h, o.sub(hErr, o.add(o.add(aErr, o.mul(x, o.c(TWO_OVER_SQRT_PI_LO))), rest)));
}

/**
 * erfc for x >= 0.47 (finite or +inf): g by Clenshaw's sum of its Chebyshev series, its last step
 * as gHi + gLo; q = g / (1 + 2x) as qHi + qLo; e^-x^2 = 2^n (v + w) from the exact x^2/ln2; and
 * (v + w) q rounded once (scaleSum, which also rounds the subnormal results once).
 */
function erfcTail<F, M>(o: FloatOps<F, M>, x: F): F {
  // (x - 4)/(x + 4) = t + tLo (two-sums, and the division's remainder through Dekker's product):
  // g(t + tLo) = g(t) + g'(t) tLo, where g'(t) is up to 0.53.
  const [nHi, nLo] = twoSum(o, x, o.c(-ERFC_SCALE));
  const [mHi, mLo] = twoSum(o, x, o.c(ERFC_SCALE));
  const t = o.div(nHi, mHi);
  const [tm, tmErr] = twoProduct(o, t, split(o, t), mHi, split(o, mHi));
  const tLo = o.div(o.add(o.sub(o.sub(nHi, tm), tmErr), o.sub(nLo, o.mul(t, mLo))), mHi);
  const t2 = o.add(t, t);
  // Clenshaw's sum for the U series of g': its value is the last d.
  let d1 = o.c(0);
  let d2 = o.c(0);
  for (let k = ERFC_DERIVATIVE.length - 1; k >= 0; k--) {
    const d = o.sub(o.add(o.c(ERFC_DERIVATIVE[k]!), o.mul(t2, d1)), d2);
    d2 = d1;
    d1 = d;
  }
  let b1 = o.c(0);
  let b2 = o.c(0);
  for (let k = ERFC_CHEBYSHEV.length - 1; k >= 1; k--) {
    const b = o.sub(o.add(o.c(ERFC_CHEBYSHEV[k]!), o.mul(t2, b1)), b2);
    b2 = b1;
    b1 = b;
  }
  // g = c0 + (t b1 - b2), a fast two-sum (|t b1 - b2| < 0.2 < c0).
  const tail = o.sub(o.mul(t, b1), b2);
  const gHi = o.add(o.c(ERFC_CHEBYSHEV[0]), tail);
  const gLo = o.add(o.add(o.sub(o.c(ERFC_CHEBYSHEV[0]), gHi), tail), o.add(o.c(ERFC_CHEBYSHEV_0_LO), o.mul(d1, tLo)));
  // q = g / (1 + 2x): 1 + 2x as a two-sum, the division's remainder through Dekker's product.
  const [dHi, dLo] = twoSum(o, o.add(x, x), o.c(1));
  const qHi = o.div(gHi, dHi);
  const qHalves = split(o, qHi);
  const [qd, qdErr] = twoProduct(o, qHi, qHalves, dHi, split(o, dHi));
  const qLo = o.div(o.add(o.sub(o.sub(gHi, qd), qdErr), o.sub(gLo, o.mul(qHi, dLo))), dHi);
  // -x^2/ln2 = -(e + eLo): x^2 = s + sLo and s/ln2 exactly (Dekker), the rest's products added.
  const xHalves = split(o, x);
  const [s, sLo] = twoProduct(o, x, xHalves, x, xHalves);
  const [e, eErr] = twoProduct(o, s, split(o, s), o.c(INV_LN2_HI), [o.c(INV_LN2_HALVES[0]), o.c(INV_LN2_HALVES[1])]);
  const eLo = o.add(o.add(eErr, o.mul(s, o.c(INV_LN2_LO))), o.mul(sLo, o.c(INV_LN2_HI)));
  const { n, v, w } = exp2Parts(o, o.sub(o.c(0), e), o.sub(o.c(0), eLo));
  // (v + w)(qHi + qLo) = p + (pErr + v qLo + w qHi), v qHi = p + pErr exactly (Dekker).
  const [p, pErr] = twoProduct(o, v, split(o, v), qHi, qHalves);
  const y = scaleSum(o, n, p, o.add(pErr, o.add(o.mul(v, qLo), o.mul(w, qHi))));
  return o.sel(o.gt(x, o.c(ERFC_UNDERFLOW)), o.c(0), y);
}

/** The error function: odd, erf(±inf) = ±1, erf(NaN) = NaN. */
export function erfOf<F, M>(o: FloatOps<F, M>, x: F): F {
  const a = o.abs(x);
  const far = o.copysign(o.sub(o.c(1), erfcTail(o, a)), x);
  return o.sel(o.isNaN(x), x, o.sel(o.lt(a, o.c(ERF_SERIES_LIMIT)), erfSeries(o, x, ERF_SERIES_LONG), far));
}

/** The complementary error function 1 - erf(x), without its cancellation: erfc(-inf) = 2, erfc(inf) = 0. */
export function erfcOf<F, M>(o: FloatOps<F, M>, x: F): F {
  const a = o.abs(x);
  const tail = erfcTail(o, a);
  const far = o.sel(o.gt(x, o.c(0)), tail, o.sub(o.c(2), tail));
  return o.sel(o.isNaN(x), x, o.sel(o.lt(a, o.c(ERFC_SERIES_LIMIT)), erfcSeries(o, x), far));
}
