// weft's own arcsinh, arccosh and arctanh, from its log and log1p (fdlibm's method: log1p where
// the argument is near 1, so that nothing cancels; log(x) + ln2 where x^2 would overflow), the
// same IEEE operations in JS and in WebAssembly.
import type { LogOps } from './logarithms.js';
import { log1pOf, logOf } from './logarithms.js';

const LN2 = Math.LN2;
/** Below this, arcsinh x and arctanh x are x (the cube term is below its last bit). */
const TINY = 2 ** -28;
/** Above this, sqrt(x^2 + 1) is |x| to the last bit: arcsinh and arccosh are log(2|x|). */
const HUGE = 2 ** 28;

/** arcsinh x: odd; log1p(|x| + x^2 / (1 + sqrt(1 + x^2))) up to 2, log(2|x| + 1 / (sqrt(x^2 + 1) + |x|)) beyond. */
export function asinhOf<F, M>(o: LogOps<F, M>, x: F): F {
  const a = o.abs(x);
  const t = o.mul(a, a);
  const small = log1pOf(o, o.add(a, o.div(t, o.add(o.c(1), o.sqrt(o.add(o.c(1), t))))));
  const medium = logOf(o, o.add(o.add(a, a), o.div(o.c(1), o.add(o.sqrt(o.add(t, o.c(1))), a))));
  const large = o.add(logOf(o, a), o.c(LN2));
  const y = o.copysign(o.sel(o.gt(a, o.c(HUGE)), large, o.sel(o.gt(a, o.c(2)), medium, small)), x);
  return o.sel(o.isNaN(x), x, o.sel(o.lt(a, o.c(TINY)), x, y));
}

/** arccosh x for x >= 1 (NaN below): log1p(t + sqrt(2t + t^2)) with t = x - 1 up to 2, log(2x - 1 / (x + sqrt(x^2 - 1))) beyond. */
export function acoshOf<F, M>(o: LogOps<F, M>, x: F): F {
  const t = o.sub(x, o.c(1));
  const small = log1pOf(o, o.add(t, o.sqrt(o.add(o.add(t, t), o.mul(t, t)))));
  const medium = logOf(o, o.sub(o.add(x, x), o.div(o.c(1), o.add(x, o.sqrt(o.sub(o.mul(x, x), o.c(1)))))));
  const large = o.add(logOf(o, x), o.c(LN2));
  const y = o.sel(o.gt(x, o.c(HUGE)), large, o.sel(o.gt(x, o.c(2)), medium, small));
  return o.sel(o.isNaN(x), x, o.sel(o.lt(x, o.c(1)), o.c(NaN), y));
}

/** arctanh x for |x| <= 1 (±inf at ±1, NaN beyond): odd; log1p(2|x| / (1 - |x|)) / 2, arranged as fdlibm's below 1/2. */
export function atanhOf<F, M>(o: LogOps<F, M>, x: F): F {
  const a = o.abs(x);
  const twice = o.add(a, a);
  const small = o.mul(o.c(0.5), log1pOf(o, o.add(twice, o.div(o.mul(twice, a), o.sub(o.c(1), a)))));
  const large = o.mul(o.c(0.5), log1pOf(o, o.div(twice, o.sub(o.c(1), a))));
  const y = o.copysign(o.sel(o.lt(a, o.c(0.5)), small, large), x);
  return o.sel(o.isNaN(x), x, o.sel(o.gt(a, o.c(1)), o.c(NaN), o.sel(o.lt(a, o.c(TINY)), x, y)));
}
