// Scalar helpers that generated element-wise loops call as `L.name(...)`: the functions that
// JavaScript's Math lacks or gets wrong for NumPy semantics (floor division and modulo, integer
// powers, C's pow edge cases, half-to-even rounding, erf and erfc), and weft's own exp, tanh,
// log, log1p, expm1, sigmoid and softplus (vmath), which the WebAssembly loops compute with the
// same bits.
import { exp32, tanh32 } from './vmath/float32.js';
import * as vmath from './vmath/functions.js';
import { compileToJs } from './vmath/js-compile.js';
import { expm1Of, log1pOf, logOf, sigmoidOf, softplusOf } from './vmath/logarithms.js';

/** Integer floor division; division by zero gives 0, as NumPy's integer `//`. */
function floorDivInt(a: number, b: number): number {
  // |a|, |b| < 2^32: the float quotient is never close enough to an integer to round onto it.
  return b === 0 ? 0 : Math.floor(a / b);
}

/** Integer floor modulo (the sign of the divisor); modulo zero gives 0, as NumPy. */
function modInt(a: number, b: number): number {
  if (b === 0) return 0;
  const r = a % b;
  return r !== 0 && r < 0 !== b < 0 ? r + b : r;
}

/**
 * Float floor modulo as NumPy's divmod defines it: fmod (exact), shifted by the divisor when the
 * signs differ; a zero result takes the divisor's sign. x % 0 and inf % y are NaN.
 */
function modFloat(a: number, b: number): number {
  const r = a % b;
  if (r === 0) return b < 0 ? -0 : 0;
  return r < 0 !== b < 0 ? r + b : r;
}

/**
 * Float floor division as NumPy's divmod defines it: (a - mod(a, b)) / b, floored and corrected
 * to the nearest integer, so that a == b * (a // b) + a % b holds as closely as floats allow
 * (1 // 0.1 is 9, not the 10 of floor(1 / 0.1)). Division by zero gives a / b (inf or NaN).
 */
function floorDivFloat(a: number, b: number): number {
  if (b === 0) return a / b;
  const m = a % b;
  let div = (a - m) / b;
  if (m !== 0 && m < 0 !== b < 0) div -= 1;
  if (div === 0) {
    const q = a / b;
    return q < 0 || Object.is(q, -0) ? -0 : 0;
  }
  const f = Math.floor(div);
  return div - f > 0.5 ? f + 1 : f;
}

/** C's pow: Math.pow differs where the C standard defines pow(1, y) = pow(-1, ±inf) = 1. */
function pow(a: number, b: number): number {
  if (a === 1 || (a === -1 && (b === Infinity || b === -Infinity))) return 1;
  return Math.pow(a, b);
}

/**
 * Integer power by repeated squaring modulo 2^32, so that the result wraps exactly as NumPy's
 * fixed-width product does once stored (a float pow loses the low bits past 2^53). A negative
 * exponent gives the integer part of 1 / a^-b: 1 for a = 1, ±1 for a = -1, else 0 (NumPy refuses
 * negative integer powers; a kernel cannot raise per element).
 */
function powInt(a: number, b: number): number {
  if (b < 0) return a === 1 ? 1 : a === -1 ? (b % 2 === 0 ? 1 : -1) : 0;
  let result = 1;
  let base = a | 0;
  let e = b;
  while (e > 0) {
    if (e % 2 === 1) result = Math.imul(result, base);
    base = Math.imul(base, base);
    e = Math.floor(e / 2);
  }
  return result;
}

/** The sign of x: -1, 0 or 1 (NaN stays NaN; -0 gives 0, as NumPy). */
function sign(x: number): number {
  return x > 0 ? 1 : x < 0 ? -1 : x === 0 ? 0 : x;
}

/** Rounds half to even, as NumPy's round (-0.5 gives -0). */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  // Math.round rounds ties up; a tie is where x is exactly halfway, which then differs by 0.5.
  if (r - x !== 0.5) return r;
  return r % 2 === 0 ? r : r - 1;
}

// weft's own logarithms and their kin (vmath/logarithms.ts), compiled to JS with the bits of the
// WebAssembly loops.
const log = compileToJs(logOf, 'log');
const log1p = compileToJs(log1pOf, 'log1p');
const expm1 = compileToJs(expm1Of, 'expm1');
/** 1 / (1 + e^-x), stable for both signs. */
const sigmoid = compileToJs(sigmoidOf, 'sigmoid');
/** log(1 + e^x) without overflow or loss for large |x|. */
const softplus = compileToJs(softplusOf, 'softplus');

// ---------------------------------------------------------------------------------------------
// erf and erfc, accurate to a few ulps over the whole real line.
//
// |x| < 0.5: erf by its Maclaurin series (a polynomial in x^2; no cancellation at these x), and
// erfc = 1 - erf, which is at least 0.47 there.
// x >= 0.5: erfc(x) = exp(-x^2) * g(t) / (1 + 2x), where g(t) = (1 + 2x) exp(x^2) erfc(x) is a
// smooth function of t = (x - 4) / (x + 4) on [-1, 1] (the mapping of [0, inf) used by Shepherd
// and Laframboise), given by its Chebyshev series; erf = 1 - erfc, and negative x by symmetry.
// The coefficients below were computed for weft by Chebyshev interpolation of g at 48 nodes in
// 60-digit arithmetic and rounded to doubles; the terms left out are below 1e-19.

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

function erfSeries(x: number): number {
  const z = x * x;
  let p = ERF_SERIES[ERF_SERIES.length - 1]!;
  for (let k = ERF_SERIES.length - 2; k >= 0; k--) p = p * z + ERF_SERIES[k]!;
  return x * p;
}

/**
 * exp(-x^2) without the error of rounding x^2 (which would cost up to x^2 * 1e-16 relative):
 * with h = x rounded to 24 bits, h^2 is exact and x^2 = h^2 + (x - h)(x + h).
 */
function expMinusSquare(x: number): number {
  const h = Math.fround(x);
  return Math.exp(-h * h) * Math.exp(-(x - h) * (x + h));
}

/** erfc for x >= 0.5 (finite or +inf). */
function erfcTail(x: number): number {
  if (x > ERFC_UNDERFLOW) return 0;
  const t = (x - ERFC_SCALE) / (x + ERFC_SCALE);
  const t2 = 2 * t;
  let b1 = 0;
  let b2 = 0;
  for (let k = ERFC_CHEBYSHEV.length - 1; k >= 1; k--) {
    const b = ERFC_CHEBYSHEV[k]! + t2 * b1 - b2;
    b2 = b1;
    b1 = b;
  }
  const g = ERFC_CHEBYSHEV[0] + t * b1 - b2;
  return expMinusSquare(x) * (g / (1 + 2 * x));
}

function erf(x: number): number {
  const ax = Math.abs(x);
  if (ax < 0.5) return erfSeries(x);
  if (Number.isNaN(x)) return x;
  const r = 1 - erfcTail(ax);
  return x < 0 ? -r : r;
}

function erfc(x: number): number {
  if (Math.abs(x) < 0.5) return 1 - erfSeries(x);
  if (Number.isNaN(x)) return x;
  return x > 0 ? erfcTail(x) : 2 - erfcTail(-x);
}

export const scalarLib = Object.freeze({
  exp: vmath.exp,
  exp32,
  tanh32,
  tanh: vmath.tanh,
  log,
  log1p,
  expm1,
  floorDivInt,
  floorDivFloat,
  modInt,
  modFloat,
  pow,
  powInt,
  sign,
  roundHalfEven,
  sigmoid,
  softplus,
  erf,
  erfc,
});
export type ScalarLib = typeof scalarLib;
