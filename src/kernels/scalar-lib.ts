// Scalar helpers that generated element-wise loops call as `L.name(...)`: the functions that
// JavaScript's Math lacks or gets wrong for NumPy semantics (floor division and modulo, integer
// powers, half-to-even rounding), and weft's own exp, tanh, log, log1p, log2, log10, expm1,
// pow, sin, cos, tan, sinh, cosh, arctan, arcsin, arccos, arctan2, sigmoid, softplus, erf, erfc,
// the inverse hyperbolic functions and the log sums (vmath), which the WebAssembly loops compute
// with the same bits; and the special functions of pt.special (special-functions.ts, JS only).
import { exp32, tanh32 } from './vmath/float32.js';
import * as vmath from './vmath/functions.js';
import { atan2Of, atanOf } from './vmath/arctangent.js';
import { acosOf, asinOf } from './vmath/arcsine.js';
import { compileBinaryToJs, compileToJs } from './vmath/js-compile.js';
import { erfcOf, erfOf } from './vmath/error-function.js';
import { coshOf, sinhOf } from './vmath/hyperbolic.js';
import { acoshOf, asinhOf, atanhOf } from './vmath/inverse-hyperbolic.js';
import { log1mexpOf, logaddexpOf, logitOf, xlogxOf, xlogy0Of } from './vmath/log-sums.js';
import { expm1Of, log10Of, log1pOf, log2Of, logOf, sigmoidOf, softplusOf } from './vmath/logarithms.js';
import { cos, sin, tan } from './vmath/trigonometric.js';
// weft's own pow, with C's special values (pow(1, y) = pow(-1, ±inf) = 1, where Math.pow differs).
import { pow } from './vmath/power.js';
import { specialFunctions } from './special-functions.js';

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

// weft's own logarithms, hyperbolic and inverse trigonometric functions, erf and erfc (vmath),
// compiled to JS with the bits of the WebAssembly loops.
const log = compileToJs(logOf, 'log');
const log1p = compileToJs(log1pOf, 'log1p');
const expm1 = compileToJs(expm1Of, 'expm1');
const log2 = compileToJs(log2Of, 'log2');
const log10 = compileToJs(log10Of, 'log10');
const sinh = compileToJs(sinhOf, 'sinh');
const cosh = compileToJs(coshOf, 'cosh');
const atan = compileToJs(atanOf, 'atan');
const asin = compileToJs(asinOf, 'asin');
const acos = compileToJs(acosOf, 'acos');
const atan2 = compileBinaryToJs(atan2Of, 'atan2');
/** 1 / (1 + e^-x), stable for both signs. */
const sigmoid = compileToJs(sigmoidOf, 'sigmoid');
/** log(1 + e^x) without overflow or loss for large |x|. */
const softplus = compileToJs(softplusOf, 'softplus');

/** The error function and its complement (vmath/error-function.ts). */
const erf = compileToJs(erfOf, 'erf');
const erfc = compileToJs(erfcOf, 'erfc');

/** Named as their ops (and ProgramOps) are. */
const arcsinh = compileToJs(asinhOf, 'arcsinh');
const arccosh = compileToJs(acoshOf, 'arccosh');
const arctanh = compileToJs(atanhOf, 'arctanh');
const log1mexp = compileToJs(log1mexpOf, 'log1mexp');
const logit = compileToJs(logitOf, 'logit');
const xlogx = compileToJs(xlogxOf, 'xlogx');
const logaddexp = compileBinaryToJs(logaddexpOf, 'logaddexp');
const xlogy0 = compileBinaryToJs(xlogy0Of, 'xlogy0');

export const scalarLib = Object.freeze({
  exp: vmath.exp,
  exp32,
  tanh32,
  tanh: vmath.tanh,
  log,
  log1p,
  expm1,
  log2,
  log10,
  sin,
  cos,
  tan,
  sinh,
  cosh,
  atan,
  atan2,
  asin,
  acos,
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
  arcsinh,
  arccosh,
  arctanh,
  log1mexp,
  logit,
  xlogx,
  logaddexp,
  xlogy0,
  ...specialFunctions,
});
export type ScalarLib = typeof scalarLib;
