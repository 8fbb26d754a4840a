// weft's own logarithms of sums and products that lose nothing where the plain formula would:
// logaddexp (NumPy's npy_logaddexp), log1mexp (Maechler's switch at -ln2, as PyTensor's),
// logit, and x log x / x log y with 0 where x is 0 (PyTensor's XlogX, XlogY0). One definition
// gives the JS functions and the WebAssembly loops, so both have the same bits.
import { expOf } from './functions.js';
import type { LogOps } from './logarithms.js';
import { atanhOf } from './inverse-hyperbolic.js';
import { expm1Of, log1pOf, logOf } from './logarithms.js';

const LN2 = Math.LN2;

/** log(e^a + e^b): the larger plus log1p(e^-|a - b|); a + ln2 where a = b (so two infinities give one). */
export function logaddexpOf<F, M>(o: LogOps<F, M>, a: F, b: F): F {
  const d = o.sub(a, b);
  const larger = o.sel(o.gt(d, o.c(0)), a, b);
  const y = o.add(larger, log1pOf(o, expOf(o, o.sub(o.c(0), o.abs(d)))));
  return o.sel(o.eq(a, b), o.add(a, o.c(LN2)), o.sel(o.isNaN(d), d, y));
}

/** log(1 - e^x) for x <= 0 (NaN above 0, -inf at 0): log1p(-e^x) below -ln2, log(-expm1(x)) from there. */
export function log1mexpOf<F, M>(o: LogOps<F, M>, x: F): F {
  const below = log1pOf(o, o.sub(o.c(0), expOf(o, x)));
  const near = logOf(o, o.sub(o.c(0), expm1Of(o, x)));
  return o.sel(o.lt(x, o.c(-LN2)), below, near);
}

/**
 * log(x / (1 - x)), the inverse of the sigmoid. Near 1/2, where that logarithm would cancel, it is
 * 2 arctanh(2x - 1), 2x - 1 being exact there (Sterbenz).
 */
export function logitOf<F, M>(o: LogOps<F, M>, x: F): F {
  const near = o.mul(o.c(2), atanhOf(o, o.sub(o.add(x, x), o.c(1))));
  const far = logOf(o, o.div(x, o.sub(o.c(1), x)));
  return o.sel(o.lt(o.abs(o.sub(x, o.c(0.5))), o.c(0.25)), near, far);
}

/** x log x, and 0 at x = 0. */
export function xlogxOf<F, M>(o: LogOps<F, M>, x: F): F {
  return o.sel(o.eq(x, o.c(0)), o.c(0), o.mul(x, logOf(o, x)));
}

/** x log y, and 0 where x = 0 (whatever y is). */
export function xlogy0Of<F, M>(o: LogOps<F, M>, x: F, y: F): F {
  return o.sel(o.eq(x, o.c(0)), o.c(0), o.mul(x, logOf(o, y)));
}
