// weft's own erf and erfc, written once against FloatOps (as the other vmath functions), so that
// the JS and the WebAssembly loops give the same bits on every engine; accurate to a few ulps over
// the whole real line.
//
// |x| < 0.5: erf by its Maclaurin series (a polynomial in x^2; no cancellation at these x), and
// erfc = 1 - erf, which is at least 0.47 there.
// x >= 0.5: erfc(x) = exp(-x^2) * g(t) / (1 + 2x), where g(t) = (1 + 2x) exp(x^2) erfc(x) is a
// smooth function of t = (x - 4) / (x + 4) on [-1, 1] (the mapping of [0, inf) used by Shepherd
// and Laframboise), given by its Chebyshev series; erf = 1 - erfc, and negative x by symmetry.
// The coefficients below were computed for weft by Chebyshev interpolation of g at 48 nodes in
// 60-digit arithmetic and rounded to doubles; the terms left out are below 1e-19.
import { divSum, expOf, horner, type FloatOps } from './functions.js';
import { expm1Of } from './logarithms.js';

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

/** Veltkamp's splitting constant: (x C) - ((x C) - x) is x rounded to 26 bits. */
const SPLIT = 134217729;

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
 * Where erf leaves the series for 1 - erfc: at 0.5, 1 - erfc(x) would carry erfc's tail error
 * (up to 4 ulp of 0.48) into erf; at 0.75 the series still converges well (terms below 2^-60).
 */
const ERF_SERIES_LIMIT = 0.75;

function erfSeries<F, M>(o: FloatOps<F, M>, x: F, terms: readonly number[] = ERF_SERIES): F {
  return o.mul(x, horner(o, o.mul(x, x), terms));
}

/**
 * exp(-x^2) without the error of rounding x^2 (which would cost up to x^2 * 1e-16 relative):
 * with h = x rounded to 26 bits, h^2 is exact and x^2 = h^2 + (x - h)(x + h).
 */
function expMinusSquare<F, M>(o: FloatOps<F, M>, x: F): F {
  const p = o.mul(x, o.c(SPLIT));
  const h = o.sub(p, o.sub(p, x));
  const rest = o.mul(o.sub(x, h), o.add(x, h));
  // e^-h^2 (1 + expm1(-rest)), the small part added last: one rounding less than a product of exps.
  const head = expOf(o, o.sub(o.c(0), o.mul(h, h)));
  return o.add(head, o.mul(head, expm1Of(o, o.sub(o.c(0), rest))));
}

/** erfc for x >= 0.5 (finite or +inf): Clenshaw's sum of the Chebyshev series of g. */
function erfcTail<F, M>(o: FloatOps<F, M>, x: F): F {
  const t = o.div(o.sub(x, o.c(ERFC_SCALE)), o.add(x, o.c(ERFC_SCALE)));
  const t2 = o.add(t, t);
  let b1 = o.c(0);
  let b2 = o.c(0);
  for (let k = ERFC_CHEBYSHEV.length - 1; k >= 1; k--) {
    const b = o.sub(o.add(o.c(ERFC_CHEBYSHEV[k]!), o.mul(t2, b1)), b2);
    b2 = b1;
    b1 = b;
  }
  const g = o.sub(o.add(o.c(ERFC_CHEBYSHEV[0]), o.mul(t, b1)), b2);
  const y = o.mul(expMinusSquare(o, x), divSum(o, g, o.c(1), o.add(x, x)));
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
  return o.sel(o.isNaN(x), x, o.sel(o.lt(a, o.c(0.5)), o.sub(o.c(1), erfSeries(o, x)), far));
}
