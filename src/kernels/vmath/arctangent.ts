// weft's own arctan and arctan2, written once against FloatOps as the other vmath functions:
// |x| is brought into |t| <= 7/16 by one of fdlibm's four reductions (atan(x) = atan(c) +
// atan((x - c) / (1 + c x)) for c = 1/2, 1, 3/2, inf), then atan t = t + t^3 P(t^2), P being
// the Taylor series, and atan(c) is added in two parts.
import type { FloatOps } from './functions.js';
import { horner } from './functions.js';

/** atan(c) for c = 1/2, 1, 3/2 and inf, each as the nearest double and the rest. */
const ATAN_HI = [0.4636476090008061, 0.7853981633974483, 0.982793723247329, 1.5707963267948966] as const;
const ATAN_LO = [2.2698777452961687e-17, 3.061616997868383e-17, 1.3903311031230998e-17, 6.123233995736766e-17] as const;
/** (-1)^k / (2k + 1), k = 1..24: atan t = t + t z P(z), z = t^2 <= (7/16)^2; truncation below 2^-63. */
const P = Array.from({ length: 24 }, (_, j) => (j % 2 === 0 ? -1 : 1) / (2 * j + 3));

const PI_HI = 3.141592653589793;
const PI_LO = 1.2246467991473532e-16;

/** The arctangent: odd, atan(±inf) = ±pi/2, atan(NaN) = NaN. */
export function atanOf<F, M>(o: FloatOps<F, M>, x: F): F {
  const a = o.abs(x);
  const [i0, i1, i2, i3] = [7 / 16, 11 / 16, 19 / 16, 39 / 16].map((b) => o.lt(a, o.c(b))) as [M, M, M, M];
  const pick = (direct: F, v: readonly [F, F, F, F]): F => o.sel(i0, direct, o.sel(i1, v[0], o.sel(i2, v[1], o.sel(i3, v[2], v[3]))));
  const constants = (c: readonly [number, number, number, number]): [F, F, F, F] => [o.c(c[0]), o.c(c[1]), o.c(c[2]), o.c(c[3])];
  const num = pick(a, [o.sub(o.add(a, a), o.c(1)), o.sub(a, o.c(1)), o.sub(a, o.c(1.5)), o.c(-1)]);
  const den = pick(o.c(1), [o.add(o.c(2), a), o.add(a, o.c(1)), o.add(o.c(1), o.mul(o.c(1.5), a)), a]);
  const t = o.div(num, den);
  const hi = pick(o.c(0), constants(ATAN_HI));
  const lo = pick(o.c(0), constants(ATAN_LO));
  const z = o.mul(t, t);
  const r = o.add(hi, o.add(t, o.add(o.mul(o.mul(t, z), horner(o, z, P)), lo)));
  return o.sel(o.isNaN(x), x, o.copysign(r, x));
}

/**
 * atan2(y, x), the angle of (x, y), with C99's special values: the sign of zeros decides
 * between 0 and pi, infinities give multiples of pi/4.
 */
export function atan2Of<F, M>(o: FloatOps<F, M>, y: F, x: F): F {
  const negX = o.lt(o.copysign(o.c(1), x), o.c(0));
  const z = atanOf(o, o.div(o.abs(y), o.abs(x)));
  const general = o.copysign(o.sel(negX, o.sub(o.c(PI_HI), o.sub(z, o.c(PI_LO))), z), y);
  const halfPi = o.copysign(o.c(PI_HI / 2), y);
  const yInf = o.sel(o.eq(o.abs(y), o.c(Infinity)), halfPi, general);
  const xZero = o.sel(o.eq(x, o.c(0)), halfPi, yInf);
  const atInfinity = o.sel(o.eq(o.abs(y), o.c(Infinity)), o.sel(negX, o.c(2.356194490192345), o.c(PI_HI / 4)), o.sel(negX, o.c(PI_HI), o.c(0)));
  const xInf = o.sel(o.eq(o.abs(x), o.c(Infinity)), o.copysign(atInfinity, y), xZero);
  const yZero = o.sel(o.eq(y, o.c(0)), o.sel(negX, o.copysign(o.c(PI_HI), y), y), xInf);
  return o.sel(o.isNaN(x), x, o.sel(o.isNaN(y), y, yZero));
}
