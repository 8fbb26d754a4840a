// The element-wise functions of `weft.pt` (add, exp, where, cast, ...): each applies one
// ScalarOp of the catalog through Elemwise, with NumPy broadcasting and weak JS literals.
// Fixed-arity functions pass on exactly the arguments they were given, so that a call from JS
// with too few or too many is refused by Elemwise with the count instead of being truncated.
import type { Dtype } from '../../kernels/dtype.js';
import { DTYPES, isDtype } from '../../kernels/dtype.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { elemwise } from './elemwise.js';
import * as S from '../scalar/catalog.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';

export function add(...xs: TensorLike[]): TensorVariable {
  return elemwise(S.add, ...xs);
}
export function mul(...xs: TensorLike[]): TensorVariable {
  return elemwise(S.mul, ...xs);
}
export function sub(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.sub, ...args);
}
export function trueDiv(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.trueDiv, ...args);
}
export function intDiv(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.intDiv, ...args);
}
export function mod(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.mod, ...args);
}
export function pow(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.pow, ...args);
}
export function neg(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.neg, ...args);
}
export function abs(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.abs, ...args);
}
export function sign(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.sign, ...args);
}
export function exp(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.exp, ...args);
}
export function expm1(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.expm1, ...args);
}
export function log(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.log, ...args);
}
export function log1p(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.log1p, ...args);
}
export function log2(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.log2, ...args);
}
export function log10(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.log10, ...args);
}
export function sqrt(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.sqrt, ...args);
}
export function sqr(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.sqr, ...args);
}
export function sin(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.sin, ...args);
}
export function cos(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.cos, ...args);
}
export function tan(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.tan, ...args);
}
export function arcsin(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.arcsin, ...args);
}
export function arccos(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.arccos, ...args);
}
export function arctan(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.arctan, ...args);
}
/** The angle of the point (x, y): atan2(y, x), as NumPy's arctan2(y, x). */
export function arctan2(...args: [y: TensorLike, x: TensorLike]): TensorVariable {
  return elemwise(S.arctan2, ...args);
}
export function sinh(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.sinh, ...args);
}
export function cosh(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.cosh, ...args);
}
export function tanh(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.tanh, ...args);
}
export function sigmoid(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.sigmoid, ...args);
}
export function softplus(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.softplus, ...args);
}
export function erf(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.erf, ...args);
}
export function erfc(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.erfc, ...args);
}
export function floor(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.floor, ...args);
}
export function ceil(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.ceil, ...args);
}
/** Rounds half to even, as NumPy. */
export function round(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.round, ...args);
}
export function clip(...args: [x: TensorLike, min: TensorLike, max: TensorLike]): TensorVariable {
  return elemwise(S.clip, ...args);
}
export function maximum(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.maximum, ...args);
}
export function minimum(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.minimum, ...args);
}
/** `a` where `cond` is non-zero, else `b` (NumPy's where with three arguments). */
export function where(...args: [cond: TensorLike, a: TensorLike, b: TensorLike]): TensorVariable {
  return elemwise(S.where, ...args);
}
export function eq(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.eq, ...args);
}
export function neq(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.neq, ...args);
}
export function lt(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.lt, ...args);
}
export function le(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.le, ...args);
}
export function gt(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.gt, ...args);
}
export function ge(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.ge, ...args);
}
/** Logical on bools, bitwise on integers. */
export function and(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.and, ...args);
}
export function or(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.or, ...args);
}
export function xor(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.xor, ...args);
}
export function not(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.not, ...args);
}

export function arcsinh(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.arcsinh, ...args);
}
export function arccosh(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.arccosh, ...args);
}
export function arctanh(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.arctanh, ...args);
}
/** 1 / x, in a float dtype. */
export function reciprocal(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.reciprocal, ...args);
}
/** 2 to the power x. */
export function exp2(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.exp2, ...args);
}
/** Rounds toward zero. */
export function trunc(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.trunc, ...args);
}
export function isnan(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.isnan, ...args);
}
export function isinf(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.isinf, ...args);
}
/** log(e^a + e^b), without overflow (NumPy's logaddexp). */
export function logaddexp(...args: [a: TensorLike, b: TensorLike]): TensorVariable {
  return elemwise(S.logaddexp, ...args);
}
/** log(1 - e^x) for x <= 0, accurate near 0 and for large -x. */
export function log1mexp(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.log1mexp, ...args);
}
/** log(x / (1 - x)). */
export function logit(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.logit, ...args);
}
/** x log x, 0 at x = 0. */
export function xlogx(...args: [x: TensorLike]): TensorVariable {
  return elemwise(S.xlogx, ...args);
}
/** x log y, 0 where x = 0. */
export function xlogy0(...args: [x: TensorLike, y: TensorLike]): TensorVariable {
  return elemwise(S.xlogy0, ...args);
}

/** `x` converted to `dtype` (no node when it already has that dtype). */
export function cast(x: TensorLike, dtype: Dtype): TensorVariable {
  if (!isDtype(dtype)) throw new TypeError(`cast: unknown dtype ${JSON.stringify(dtype)}; expected one of ${DTYPES.join(', ')}`);
  const v = asTensorVariable(x);
  return v.dtype === dtype ? v : elemwise(S.castTo(dtype), v);
}
