// weft's own arcsin and arccos, written once against FloatOps as the other vmath functions: one
// series of arcsin, at x^2 for |x| <= 1/2 and at w = (1 - |x|)/2 beyond (arcsin x = pi/2 -
// 2 arcsin(sqrt w)), the root corrected to double-double (Dekker) and pi/2 and pi in two parts,
// so that only the last addition rounds at full size.
import type { FloatOps } from './functions.js';
import { horner } from './functions.js';
import { split, twoProduct } from './exact-arithmetic.js';

/**
 * arcsin t = t + t z P(z), z = t^2 <= 1/4: P's coefficients are the series' (2k)! / (4^k k!^2
 * (2k + 1)), k = 1..26, from their ratio (2k - 1)^2 / (2k (2k + 1)); the first left out is below 2^-60.
 */
const P = (() => {
  const c = [1 / 6];
  for (let k = 2; k <= 26; k++) c.push((c[k - 2]! * (2 * k - 1) ** 2) / (2 * k * (2 * k + 1)));
  return c;
})();

const PIO2_HI = 1.5707963267948966;
const PIO2_LO = 6.123233995736766e-17;
const PI_HI = 3.141592653589793;
const PI_LO = 1.2246467991473532e-16;

/**
 * The parts both functions share, for a = |x|: the series at z (a^2 where a <= 1/2, else w), and
 * for the wide range s = sqrt(w) as s + c (c its rounding, from w - s^2 exactly: 0 where w is 0).
 */
function parts<F, M>(o: FloatOps<F, M>, a: F): { narrow: M; series: F; s: F; c: F } {
  const narrow = o.lt(a, o.c(0.5));
  const w = o.mul(o.sub(o.c(1), a), o.c(0.5));
  const s = o.sqrt(w);
  const halves = split(o, s);
  const [square, rest] = twoProduct(o, s, halves, s, halves);
  const c = o.sel(o.eq(w, o.c(0)), o.c(0), o.div(o.sub(o.sub(w, square), rest), o.add(s, s)));
  const z = o.sel(narrow, o.mul(a, a), w);
  return { narrow, series: o.mul(z, horner(o, z, P)), s, c };
}

/** hi - t + lo for hi >= |t| (pi/2 or pi less a value), with hi - t's rounding put back (Fast2Sum). */
function lessFrom<F, M>(o: FloatOps<F, M>, hi: number, t: F, lo: F): F {
  const r = o.sub(o.c(hi), t);
  const e = o.sub(o.sub(o.c(hi), r), t);
  return o.add(r, o.add(e, lo));
}

/** arcsin x: odd, ±pi/2 at ±1, NaN beyond and for NaN; x itself where x^2 underflows. */
export function asinOf<F, M>(o: FloatOps<F, M>, x: F): F {
  const a = o.abs(x);
  const { narrow, series, s, c } = parts(o, a);
  const small = o.add(a, o.mul(a, series));
  // pi/2 - 2 (s + c + s series).
  const wide = lessFrom(o, PIO2_HI, o.add(s, s), o.sub(o.c(PIO2_LO), o.mul(o.c(2), o.add(c, o.mul(s, series)))));
  return o.copysign(o.sel(narrow, small, wide), x);
}

/** arccos x: pi/2 - arcsin x near 0, 2 arcsin(sqrt w) near 1, pi - 2 arcsin(sqrt w) near -1. */
export function acosOf<F, M>(o: FloatOps<F, M>, x: F): F {
  const a = o.abs(x);
  const { narrow, series, s, c } = parts(o, a);
  const middle = lessFrom(o, PIO2_HI, x, o.sub(o.c(PIO2_LO), o.mul(x, series)));
  const twice = o.mul(o.c(2), o.add(c, o.mul(s, series)));
  const nearOne = o.add(o.add(s, s), twice);
  const nearMinusOne = lessFrom(o, PI_HI, o.add(s, s), o.sub(o.c(PI_LO), twice));
  return o.sel(narrow, middle, o.sel(o.lt(x, o.c(0)), nearMinusOne, nearOne));
}
