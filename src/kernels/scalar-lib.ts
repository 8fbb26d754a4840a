// Scalar helpers that generated element-wise loops call as `L.name(...)`: the functions that
// JavaScript's Math lacks or gets wrong for NumPy semantics (floor-mod, half-to-even rounding,
// stable sigmoid and softplus, erf and erfc).

const TWO_OVER_SQRT_PI = 1.1283791670955126;
const ONE_OVER_SQRT_PI = 0.5641895835477563;

/** Floor modulo: the result has the sign of the divisor (Python and NumPy `%`). */
function mod(a: number, b: number): number {
  const r = a % b;
  return r !== 0 && r < 0 !== b < 0 ? r + b : r;
}

function sign(x: number): number {
  return x > 0 ? 1 : x < 0 ? -1 : x;
}

/** Rounds half to even, as NumPy's round. */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : r;
}

function sigmoid(x: number): number {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const e = Math.exp(x);
  return e / (1 + e);
}

/** log(1 + exp(x)) without overflow or loss for large |x|. */
function softplus(x: number): number {
  return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x));
}

/** erf by its Maclaurin series; accurate to a few ulps for |x| < 2.5. */
function erfSeries(x: number): number {
  const x2 = x * x;
  let term = x;
  let sum = x;
  for (let n = 1; n < 100; n++) {
    term *= -x2 / n;
    const add = term / (2 * n + 1);
    sum += add;
    if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
  }
  return TWO_OVER_SQRT_PI * sum;
}

/** erfc for x >= 2.5 by its continued fraction (modified Lentz). */
function erfcContinuedFraction(x: number): number {
  // erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...)))))
  const tiny = 1e-300;
  let f = x;
  let c = x;
  let d = 0;
  for (let n = 1; n < 500; n++) {
    const a = n / 2;
    d = x + a * d;
    d = d === 0 ? tiny : d;
    c = x + a / c;
    c = c === 0 ? tiny : c;
    d = 1 / d;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return (Math.exp(-x * x) * ONE_OVER_SQRT_PI) / f;
}

function erf(x: number): number {
  if (Number.isNaN(x)) return x;
  const ax = Math.abs(x);
  if (ax < 2.5) return erfSeries(x);
  const r = 1 - erfcContinuedFraction(ax);
  return x < 0 ? -r : r;
}

function erfc(x: number): number {
  if (Number.isNaN(x)) return x;
  if (x < 0.5) return 1 - erf(x);
  if (x < 2.5) {
    // 1 - erf loses relative accuracy as erfc gets small; the series for erf is still exact enough
    // here (erfc(2.5) is about 4e-4), so the loss stays within about 3 decimal digits of 1e-16.
    return 1 - erfSeries(x);
  }
  return erfcContinuedFraction(x);
}

export const scalarLib = Object.freeze({ mod, sign, roundHalfEven, sigmoid, softplus, erf, erfc });
export type ScalarLib = typeof scalarLib;
