// weft's own sinh and cosh, from its exp and expm1 (fdlibm's method: expm1 where e^|x| is near 1,
// so that nothing cancels; e^(|x|/2) squared where e^|x| alone would overflow).
import { expOf, type FloatOps } from './functions.js';
import { expm1Of } from './logarithms.js';

/** Where e^a overflows but e^(a/2)^2 / 2 does not, and beyond which sinh and cosh overflow. */
const EXP_MAX = 709.782712893384;
const OVERFLOW = 710.4758600739439;

/** e^a / 2 for a in [EXP_MAX, OVERFLOW] (and inf beyond): (e^(a/2) / 2) e^(a/2). */
function halfExpLarge<F, M>(o: FloatOps<F, M>, a: F, h: F): F {
  const w = expOf(o, o.mul(o.c(0.5), a));
  const y = o.mul(o.mul(h, w), w);
  return o.sel(o.gt(a, o.c(OVERFLOW)), o.mul(h, o.c(Infinity)), y);
}

/** sinh x: odd; x itself below 2^-28 (the cube term is below its last bit). */
export function sinhOf<F, M>(o: FloatOps<F, M>, x: F): F {
  const a = o.abs(x);
  const h = o.copysign(o.c(0.5), x);
  const t = expm1Of(o, o.min(a, o.c(22)));
  const tt = o.div(o.mul(t, t), o.add(t, o.c(1)));
  const small = o.mul(h, o.sel(o.lt(a, o.c(1)), o.sub(o.add(t, t), tt), o.add(t, o.div(t, o.add(t, o.c(1))))));
  const medium = o.mul(h, expOf(o, o.min(a, o.c(EXP_MAX))));
  const y = o.sel(o.lt(a, o.c(22)), small, o.sel(o.lt(a, o.c(EXP_MAX)), medium, halfExpLarge(o, a, h)));
  return o.sel(o.isNaN(x), x, o.sel(o.lt(a, o.c(2 ** -28)), x, y));
}

/** cosh x: even, at least 1; 1 + t^2 / (2 (1 + t)) with t = expm1(|x|) below ln2/2. */
export function coshOf<F, M>(o: FloatOps<F, M>, x: F): F {
  const a = o.abs(x);
  const t = expm1Of(o, o.min(a, o.c(0.5)));
  const w = o.add(o.c(1), t);
  const small = o.add(o.c(1), o.div(o.mul(t, t), o.add(w, w)));
  const e = expOf(o, o.min(a, o.c(22)));
  const medium = o.add(o.mul(o.c(0.5), e), o.div(o.c(0.5), e));
  const large = o.mul(o.c(0.5), expOf(o, o.min(a, o.c(EXP_MAX))));
  const y = o.sel(o.lt(a, o.c(0.34657359027997264)), small, o.sel(o.lt(a, o.c(22)), medium, o.sel(o.lt(a, o.c(EXP_MAX)), large, halfExpLarge(o, a, o.c(0.5)))));
  return o.sel(o.isNaN(x), x, y);
}
