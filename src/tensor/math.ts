// The element-wise functions of `weft.pt` (add, exp, where, cast, ...): each applies one
// ScalarOp of the catalog through Elemwise, with NumPy broadcasting and weak JS literals.
import type { Dtype } from '../kernels/dtype.js';
import { isDtype } from '../kernels/dtype.js';
import { asTensorVariable } from './as-tensor.js';
import { elemwise } from './elemwise.js';
import * as S from './scalar/catalog.js';
import type { TensorLike, TensorVariable } from './variable.js';

export function add(...xs: TensorLike[]): TensorVariable {
  return elemwise(S.add, ...xs);
}
export function mul(...xs: TensorLike[]): TensorVariable {
  return elemwise(S.mul, ...xs);
}
export function sub(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.sub, x, y);
}
export function trueDiv(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.trueDiv, x, y);
}
export function intDiv(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.intDiv, x, y);
}
export function mod(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.mod, x, y);
}
export function pow(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.pow, x, y);
}
export function neg(x: TensorLike): TensorVariable {
  return elemwise(S.neg, x);
}
export function abs(x: TensorLike): TensorVariable {
  return elemwise(S.abs, x);
}
export function sign(x: TensorLike): TensorVariable {
  return elemwise(S.sign, x);
}
export function exp(x: TensorLike): TensorVariable {
  return elemwise(S.exp, x);
}
export function expm1(x: TensorLike): TensorVariable {
  return elemwise(S.expm1, x);
}
export function log(x: TensorLike): TensorVariable {
  return elemwise(S.log, x);
}
export function log1p(x: TensorLike): TensorVariable {
  return elemwise(S.log1p, x);
}
export function log2(x: TensorLike): TensorVariable {
  return elemwise(S.log2, x);
}
export function log10(x: TensorLike): TensorVariable {
  return elemwise(S.log10, x);
}
export function sqrt(x: TensorLike): TensorVariable {
  return elemwise(S.sqrt, x);
}
export function sqr(x: TensorLike): TensorVariable {
  return elemwise(S.sqr, x);
}
export function sin(x: TensorLike): TensorVariable {
  return elemwise(S.sin, x);
}
export function cos(x: TensorLike): TensorVariable {
  return elemwise(S.cos, x);
}
export function tan(x: TensorLike): TensorVariable {
  return elemwise(S.tan, x);
}
export function arcsin(x: TensorLike): TensorVariable {
  return elemwise(S.arcsin, x);
}
export function arccos(x: TensorLike): TensorVariable {
  return elemwise(S.arccos, x);
}
export function arctan(x: TensorLike): TensorVariable {
  return elemwise(S.arctan, x);
}
/** The angle of the point (x, y): atan2(y, x), as NumPy's arctan2(y, x). */
export function arctan2(y: TensorLike, x: TensorLike): TensorVariable {
  return elemwise(S.arctan2, y, x);
}
export function sinh(x: TensorLike): TensorVariable {
  return elemwise(S.sinh, x);
}
export function cosh(x: TensorLike): TensorVariable {
  return elemwise(S.cosh, x);
}
export function tanh(x: TensorLike): TensorVariable {
  return elemwise(S.tanh, x);
}
export function sigmoid(x: TensorLike): TensorVariable {
  return elemwise(S.sigmoid, x);
}
export function softplus(x: TensorLike): TensorVariable {
  return elemwise(S.softplus, x);
}
export function erf(x: TensorLike): TensorVariable {
  return elemwise(S.erf, x);
}
export function erfc(x: TensorLike): TensorVariable {
  return elemwise(S.erfc, x);
}
export function floor(x: TensorLike): TensorVariable {
  return elemwise(S.floor, x);
}
export function ceil(x: TensorLike): TensorVariable {
  return elemwise(S.ceil, x);
}
/** Rounds half to even, as NumPy. */
export function round(x: TensorLike): TensorVariable {
  return elemwise(S.round, x);
}
export function clip(x: TensorLike, min: TensorLike, max: TensorLike): TensorVariable {
  return elemwise(S.clip, x, min, max);
}
export function maximum(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.maximum, x, y);
}
export function minimum(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.minimum, x, y);
}
/** `a` where `cond` is non-zero, else `b` (NumPy's where with three arguments). */
export function where(cond: TensorLike, a: TensorLike, b: TensorLike): TensorVariable {
  return elemwise(S.where, cond, a, b);
}
export function eq(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.eq, x, y);
}
export function neq(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.neq, x, y);
}
export function lt(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.lt, x, y);
}
export function le(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.le, x, y);
}
export function gt(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.gt, x, y);
}
export function ge(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.ge, x, y);
}
/** Logical on bools, bitwise on integers. */
export function and(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.and, x, y);
}
export function or(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.or, x, y);
}
export function xor(x: TensorLike, y: TensorLike): TensorVariable {
  return elemwise(S.xor, x, y);
}
export function not(x: TensorLike): TensorVariable {
  return elemwise(S.not, x);
}

/** `x` converted to `dtype` (no node when it already has that dtype). */
export function cast(x: TensorLike, dtype: Dtype): TensorVariable {
  if (!isDtype(dtype)) throw new TypeError(`cast: unknown dtype ${JSON.stringify(dtype)}`);
  const v = asTensorVariable(x);
  return v.dtype === dtype ? v : elemwise(S.castTo(dtype), v);
}
