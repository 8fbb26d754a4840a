// The special functions of pt.special, as scalar functions of doubles that generated element-wise
// loops call (L.gamma, ...). Most are @stdlib/math's (ports of Boost and Cephes, well kept and
// accurate: see docs/special.md for the errors measured against mpmath); erfcinv's tail is
// polished by Newton steps on weft's own erfc (stdlib's had 5e-14 at 1e-291); the modified
// Bessel functions I0, I1 and their scaled forms are weft's own (series, then Hankel's expansion),
// and so are the incomplete gamma functions and the parameter derivatives
// (incomplete-gamma-beta.ts: stdlib's gammaincc lost three digits for large k and x).
import {
  besselj0 as j0Stdlib,
  besselj1 as j1Stdlib,
  betainc as betaincStdlib,
  betaln,
  digamma as psiStdlib,
  erfcinv as erfcinvStdlib,
  erfcx,
  erfinv as erfinvStdlib,
  gamma,
  gammaln,
  polygamma as polygammaStdlib,
} from './stdlib.js';
import { betaincDa, betaincDb, gammainc, gammaincc, gammaincDk } from './incomplete-gamma-beta.js';
import { erfcOf } from './vmath/error-function.js';
import { compileToJs } from './vmath/js-compile.js';

const erfc = compileToJs(erfcOf, 'erfc');
const TWO_OVER_SQRT_PI = 1.1283791670955126;

/** t with erfc(t) = y, for 0 < y < 2 (the inverse of the complementary error function). */
function erfcinv(y: number): number {
  if (!(y > 0 && y < 2)) return y === 0 ? Infinity : y === 2 ? -Infinity : NaN;
  if (y > 1) return -erfcinv(2 - y);
  // SciPy's erfcinv(1) is -0.
  if (y === 1) return -0;
  let t = erfcinvStdlib(y);
  if (y >= 1e-16) return t;
  // Newton on log(erfc(t)) = log(y), whose derivative -2 e^(-t^2) / (sqrt(pi) erfc(t)) stays
  // finite far into the tail: a few steps from stdlib's start reach the correctly rounded root.
  for (let k = 0; k < 6; k++) {
    const e = erfc(t);
    const step = (Math.log(e) - Math.log(y)) / ((TWO_OVER_SQRT_PI * Math.exp(-t * t)) / e);
    t += step;
    if (Math.abs(step) <= 1e-17 * t) break;
  }
  return t;
}

/** x with erf(x) = y, for -1 < y < 1 (erfinv(-0) is 0, as SciPy's). */
function erfinv(y: number): number {
  if (y === 0) return 0;
  // Near +-1 the complement carries the digits (1 - y is exact there).
  if (y > 0.5) return erfcinv(1 - y);
  if (y < -0.5) return -erfcinv(1 + y);
  return erfinvStdlib(y);
}

/** The digamma function; at 0 the infinity of the side the zero's sign says (SciPy's). */
function psi(x: number): number {
  if (x === 0) return Object.is(x, -0) ? Infinity : -Infinity;
  return psiStdlib(x);
}

/** PyTensor's polygamma(n, x): the n-th derivative of psi (n a non-negative integer). */
function polygamma(n: number, x: number): number {
  if (!Number.isInteger(n) || n < 0) return NaN;
  if (n === 0) return psi(x);
  // At the poles (0, -1, -2, ...): (-1)^(n+1) n! zeta(n + 1, x) is an infinity of that sign.
  if (x <= 0 && Number.isInteger(x)) return n % 2 === 1 ? Infinity : -Infinity;
  return polygammaStdlib(n, x);
}

/** The regularized incomplete beta function I_x(a, b) (scipy's betainc(a, b, x)). */
function betainc(a: number, b: number, x: number): number {
  if (!(a >= 0 && b >= 0) || !(x >= 0 && x <= 1) || (a === 0 && b === 0)) return NaN;
  // The limits SciPy gives: all the mass at 0 (a = 0) or at 1 (b = 0).
  if (x === 0 || x === 1) return x;
  if (a === 0 || b === 0) return a === 0 ? 1 : 0;
  return betaincStdlib(x, a, b);
}

/** The Bessel functions of the first kind; NaN at the infinities, as SciPy's (Cephes). */
function j0(x: number): number {
  return Math.abs(x) === Infinity ? NaN : j0Stdlib(x);
}

function j1(x: number): number {
  return Math.abs(x) === Infinity ? NaN : j1Stdlib(x);
}

/** Where the power series of I0 and I1 give way to Hankel's expansion (both converge to full precision there). */
const SERIES_LIMIT = 30;
const INV_SQRT_2PI = 0.3989422804014327;

/**
 * e^(-|x|) I_nu(x) for nu = 0 or 1 and x >= 0: the power series (positive terms, no
 * cancellation) up to SERIES_LIMIT, then Hankel's asymptotic expansion, whose terms fall below
 * 1e-17 of the sum long before they start to grow for x that large.
 */
function scaledBesselI(nu: 0 | 1, x: number): number {
  if (x <= SERIES_LIMIT) {
    const q = (x * x) / 4;
    let term = nu === 0 ? 1 : x / 2;
    let sum = term;
    for (let k = 1; k < 500 && term > sum * 1e-17; k++) {
      term *= q / (k * (k + nu));
      sum += term;
    }
    return sum * Math.exp(-x);
  }
  const mu = 4 * nu * nu;
  let term = 1;
  let sum = 1;
  for (let k = 1; k < 200; k++) {
    term *= -(mu - (2 * k - 1) ** 2) / (8 * k * x);
    sum += term;
    if (Math.abs(term) <= Math.abs(sum) * 1e-17) break;
  }
  return (sum * INV_SQRT_2PI) / Math.sqrt(x);
}

/** e^(-|x|) I0(x), scipy's i0e. */
function i0e(x: number): number {
  return x !== x ? NaN : scaledBesselI(0, Math.abs(x));
}

/** e^(-|x|) I1(x), scipy's i1e (odd). */
function i1e(x: number): number {
  if (x !== x) return NaN;
  const v = scaledBesselI(1, Math.abs(x));
  return x < 0 ? -v : v;
}

/** The modified Bessel function of order 0, scipy's i0. */
function i0(x: number): number {
  const ax = Math.abs(x);
  if (ax <= SERIES_LIMIT) {
    const q = (x * x) / 4;
    let term = 1;
    let sum = 1;
    for (let k = 1; term > sum * 1e-17; k++) {
      term *= q / (k * k);
      sum += term;
    }
    return sum;
  }
  return i0e(ax) * Math.exp(ax);
}

/** The modified Bessel function of order 1, scipy's i1 (odd). */
function i1(x: number): number {
  const ax = Math.abs(x);
  let v: number;
  if (ax <= SERIES_LIMIT) {
    const q = (x * x) / 4;
    let term = ax / 2;
    v = term;
    for (let k = 1; term > v * 1e-17; k++) {
      term *= q / (k * (k + 1));
      v += term;
    }
  } else v = i1e(ax) * Math.exp(ax);
  return x < 0 ? -v : v;
}

export const specialFunctions = Object.freeze({
  gamma,
  gammaln,
  psi,
  polygamma,
  erfinv,
  erfcinv,
  erfcx,
  betaln,
  betainc,
  gammainc,
  gammaincc,
  gammaincDk,
  betaincDa,
  betaincDb,
  i0,
  i1,
  i0e,
  i1e,
  j0,
  j1,
});
