// pt.special: SciPy's special functions as PyTensor has them (pytensor.tensor.special and
// math's gamma family), element-wise with NumPy broadcasting. Each applies a scalar op of
// scalar/special.ts, so they fuse with the element-wise work around them.
import { constant } from '../core/as-tensor.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { elemwise } from '../elemwise/elemwise.js';
import * as S from '../scalar/special.js';

/** The gamma function. */
export function gamma(x: TensorLike): TensorVariable {
  return elemwise(S.gamma, x);
}
/** log|gamma(x)|. */
export function gammaln(x: TensorLike): TensorVariable {
  return elemwise(S.gammaln, x);
}
/** The digamma function, d/dx gammaln(x). */
export function psi(x: TensorLike): TensorVariable {
  return elemwise(S.psi, x);
}
/** The n-th derivative of psi (n an integer tensor or number; polygamma(0, x) is psi(x)). */
export function polygamma(n: TensorLike, x: TensorLike): TensorVariable {
  // A JS integer is an int32 order (a number literal would otherwise be a float).
  const order = typeof n === 'number' && Number.isInteger(n) ? constant(n, { dtype: 'int32' }) : n;
  return elemwise(S.polygamma, order, x);
}
/** The inverse of erf on (-1, 1). */
export function erfinv(x: TensorLike): TensorVariable {
  return elemwise(S.erfinv, x);
}
/** The inverse of erfc on (0, 2). */
export function erfcinv(x: TensorLike): TensorVariable {
  return elemwise(S.erfcinv, x);
}
/** The scaled complementary error function exp(x^2) erfc(x). */
export function erfcx(x: TensorLike): TensorVariable {
  return elemwise(S.erfcx, x);
}
/** log(B(a, b)), the log of the beta function. */
export function betaln(a: TensorLike, b: TensorLike): TensorVariable {
  return elemwise(S.betaln, a, b);
}
/** The regularized incomplete beta function I_x(a, b), scipy's betainc(a, b, x). */
export function betainc(a: TensorLike, b: TensorLike, x: TensorLike): TensorVariable {
  return elemwise(S.betainc, a, b, x);
}
/** The regularized lower incomplete gamma function P(k, x), scipy's gammainc(k, x). */
export function gammainc(k: TensorLike, x: TensorLike): TensorVariable {
  return elemwise(S.gammainc, k, x);
}
/** The regularized upper incomplete gamma function Q(k, x) = 1 - P(k, x), scipy's gammaincc. */
export function gammaincc(k: TensorLike, x: TensorLike): TensorVariable {
  return elemwise(S.gammaincc, k, x);
}
/** The modified Bessel function of the first kind of order 0. */
export function i0(x: TensorLike): TensorVariable {
  return elemwise(S.i0, x);
}
/** The modified Bessel function of the first kind of order 1. */
export function i1(x: TensorLike): TensorVariable {
  return elemwise(S.i1, x);
}
/** e^-|x| I0(x). */
export function i0e(x: TensorLike): TensorVariable {
  return elemwise(S.i0e, x);
}
/** e^-|x| I1(x). */
export function i1e(x: TensorLike): TensorVariable {
  return elemwise(S.i1e, x);
}
/** The Bessel function of the first kind of order 0. */
export function j0(x: TensorLike): TensorVariable {
  return elemwise(S.j0, x);
}
/** The Bessel function of the first kind of order 1. */
export function j1(x: TensorLike): TensorVariable {
  return elemwise(S.j1, x);
}
