// weft's own sin, cos and tan, written once against FloatOps as the other vmath functions: x =
// k pi/2 + r with r = hi + lo, |r| <= pi/4 (Cody and Waite's reduction with pi/2 in six parts, or,
// in the JS functions for |x| >= 2^32, Payne and Hanek's with 2/pi's bits in 23-bit chunks), then
// Taylor kernels for sin r and cos r, picked and signed by k mod 4; tan divides them, corrected.
import type { FloatOps } from './functions.js';
import { exponentField, factorial, horner, MAGIC, POW2, significandOf } from './functions.js';
import { split, splitConstant, SPLIT, twoDifference, twoProduct } from './exact-arithmetic.js';
import { compileBinaryToJs, compileToJs } from './js-compile.js';

/**
 * Below this |x| the FloatOps functions reduce exactly enough (k < 2^32, so k times each 21-bit
 * part of pi/2 is exact); from it on they may return anything, and the JS functions reduce
 * with 2/pi's bits instead (the WebAssembly loops hand those elements to them).
 */
export const TRIG_REDUCTION_LIMIT = 2 ** 32;

const TWO_OVER_PI = 0.6366197723675814;
/**
 * pi/2 = sum of these to 2^-158: the first five are its bits truncated to multiples of 2^-20,
 * 2^-41, 2^-62, 2^-83, 2^-104 (at most 21 significant bits each, so k P is exact for k < 2^32),
 * the last is the rest rounded to a double. Summed with k < 2^32 their error is below 2^-126,
 * 2^-65 of the smallest |r| a double has (about 2^-61, at 6381956970095103 * 2^797).
 */
export const PIO2_PARTS = [1.570796012878418, 3.1391618904308416e-7, 2.89607313824769e-13, 8.333741273895185e-20, 1.644622145585423e-26, 3.548047002737576e-32] as const;
/** pi/2 as a double-double: the nearest double and the rest. */
const PIO2_HI = 1.5707963267948966;
const PIO2_LO = 6.123233995736766e-17;
/**
 * sin r = r + r z P(z), z = r^2, P(z) = sum (-1)^j z^(j-1) / (2j+1)!, j = 1..8: for |r| <= pi/4
 * the first term left out, r^19/19!, is below 2^-62.5 of sin r.
 */
const SIN_P = Array.from({ length: 8 }, (_, j) => (j % 2 === 0 ? -1 : 1) / factorial(2 * j + 3));
/**
 * cos r = 1 - z/2 + z^2 Q(z), Q(z) = sum (-1)^j z^(j-2) / (2j)!, j = 2..9: the first term left
 * out, r^20/20!, is below 2^-68 of cos r.
 */
const COS_Q = Array.from({ length: 8 }, (_, j) => (j % 2 === 0 ? 1 : -1) / factorial(2 * j + 4));

/** A value as hi + lo. */
interface Pair<F> {
  readonly hi: F;
  readonly lo: F;
}

/**
 * |x| = k pi/2 + (hi + lo) for 0 <= |x| < TRIG_REDUCTION_LIMIT, k the integer nearest |x| 2/pi
 * (so |hi + lo| <= pi/4 plus a hair). |x| - k P1 is exact (Sterbenz's lemma), and so is taking
 * k P2 from it (what is left is a multiple of 2^-53 below 1); each later part is taken off by a
 * two-sum, whose result is exact unless it is large beside all that is left to take off, so the
 * roundings of lo (the two-sums' errors and k P6) are about 2^-100 of r at most.
 */
function reduceByHalfPi<F, M>(o: FloatOps<F, M>, a: F): { readonly k: F; readonly r: Pair<F> } {
  const k = nearest(o, o.mul(a, o.c(TWO_OVER_PI)));
  const [p1, p2, p3, p4, p5, p6] = PIO2_PARTS.map((p) => o.c(p)) as [F, F, F, F, F, F];
  const t2 = o.sub(o.sub(a, o.mul(k, p1)), o.mul(k, p2));
  const [t3, e3] = twoDifference(o, t2, o.mul(k, p3));
  const [t4, e4] = twoDifference(o, t3, o.mul(k, p4));
  const [hi, e5] = twoDifference(o, t4, o.mul(k, p5));
  const lo = o.sub(o.add(o.add(e3, e4), e5), o.mul(k, p6));
  return { k, r: { hi, lo } };
}

/** r^2 = hi^2 + 2 hi lo + ...: hi^2 exactly as z + zlo (Dekker), hz = z / 2. */
interface Square<F> {
  readonly z: F;
  readonly zlo: F;
  readonly hz: F;
}

function squareOf<F, M>(o: FloatOps<F, M>, hi: F): Square<F> {
  const [h, l] = split(o, hi);
  const z = o.mul(hi, hi);
  const zlo = o.add(o.add(o.sub(o.mul(h, h), z), o.mul(o.add(h, h), l)), o.mul(l, l));
  return { z, zlo, hz: o.mul(o.c(0.5), z) };
}

/**
 * sin(hi + lo) as hi + (hi z P(z) + the first-order terms of lo and of z's rounding):
 * sin(hi + lo) ~ sin hi + lo cos hi, cos hi ~ 1 - hz, and hi^3 P(hi^2) ~ hi z P(z) + hi zlo P(0).
 * The small part is about a tenth of hi at most, so its roundings cost a fraction of an ulp.
 */
function sinPair<F, M>(o: FloatOps<F, M>, r: Pair<F>, sq: Square<F>): Pair<F> {
  const firstOrder = o.add(o.sub(r.lo, o.mul(r.lo, sq.hz)), o.mul(o.mul(r.hi, sq.zlo), o.c(SIN_P[0]!)));
  return { hi: r.hi, lo: o.add(o.mul(o.mul(r.hi, sq.z), horner(o, sq.z, SIN_P)), firstOrder) };
}

/**
 * cos(hi + lo) as w + (the rounding of w = 1 - hz, exact by fast two-sum, + z^2 Q(z) - zlo/2 -
 * lo sin hi): w carries most of it, and the parts it rounds off are added back below its ulp.
 */
function cosPair<F, M>(o: FloatOps<F, M>, r: Pair<F>, sq: Square<F>): Pair<F> {
  const w = o.sub(o.c(1), sq.hz);
  const wError = o.sub(o.sub(o.c(1), w), sq.hz);
  const loSinHi = o.mul(o.mul(r.hi, r.lo), o.sub(o.c(1), o.mul(sq.z, o.c(1 / 6))));
  const tail = o.sub(o.mul(o.mul(sq.z, sq.z), horner(o, sq.z, COS_Q)), o.add(o.mul(o.c(0.5), sq.zlo), loSinHi));
  return { hi: w, lo: o.add(wError, tail) };
}

/** hi + lo as the nearest double and the rest (fast two-sum: |hi| >= |lo|). */
function normalized<F, M>(o: FloatOps<F, M>, p: Pair<F>): Pair<F> {
  const s = o.add(p.hi, p.lo);
  return { hi: s, lo: o.sub(p.lo, o.sub(s, p.hi)) };
}

/**
 * n / d for normalized pairs: q = n.hi / d.hi, then q + (n - q d) / d.hi with n - q d computed
 * from q d.hi exactly (Dekker): the last rounding is the one that counts (n and d are good to
 * about 2^-55, so tan stays within an ulp).
 */
function quotient<F, M>(o: FloatOps<F, M>, n: Pair<F>, d: Pair<F>): F {
  const q = o.div(n.hi, d.hi);
  const [p, pe] = twoProduct(o, q, split(o, q), d.hi, split(o, d.hi));
  const residual = o.sub(o.add(o.sub(o.sub(n.hi, p), pe), n.lo), o.mul(q, d.lo));
  return o.add(q, o.div(residual, d.hi));
}

/** The kernels on a reduced r = hi + lo, |r| <= pi/4 (the JS functions call them compiled). */
function sinReduced<F, M>(o: FloatOps<F, M>, hi: F, lo: F): F {
  const s = sinPair(o, { hi, lo }, squareOf(o, hi));
  return o.add(s.hi, s.lo);
}

function cosReduced<F, M>(o: FloatOps<F, M>, hi: F, lo: F): F {
  const c = cosPair(o, { hi, lo }, squareOf(o, hi));
  return o.add(c.hi, c.lo);
}

/** tan r = sin r / cos r. */
function tanReduced<F, M>(o: FloatOps<F, M>, hi: F, lo: F): F {
  const sq = squareOf(o, hi);
  return quotient(o, normalized(o, sinPair(o, { hi, lo }, sq)), normalized(o, cosPair(o, { hi, lo }, sq)));
}

/** cot r = cos r / sin r (tan(r + pi/2) = -cot r). */
function cotReduced<F, M>(o: FloatOps<F, M>, hi: F, lo: F): F {
  const sq = squareOf(o, hi);
  return quotient(o, normalized(o, cosPair(o, { hi, lo }, sq)), normalized(o, sinPair(o, { hi, lo }, sq)));
}

/** v rounded to an integer, ties to even (|v| < 2^51). */
function nearest<F, M>(o: FloatOps<F, M>, v: F): F {
  return o.sub(o.add(v, o.c(MAGIC)), o.c(MAGIC));
}

/** floor(k / 2) for an integer k >= 0: k/2 - 1/4 rounds to it, with no ties. */
function halfOf<F, M>(o: FloatOps<F, M>, k: F): F {
  return nearest(o, o.sub(o.mul(k, o.c(0.5)), o.c(0.25)));
}

/** (-1)^h for an integer h >= 0. */
function signOf<F, M>(o: FloatOps<F, M>, h: F): F {
  const hh = halfOf(o, h);
  const odd = o.sub(h, o.add(hh, hh));
  return o.sub(o.c(1), o.add(odd, odd));
}

/** What the three functions share: |x| reduced, h = floor(k / 2), k mod 2 (and as a mask). */
function reduced<F, M>(o: FloatOps<F, M>, x: F): { readonly a: F; readonly r: Pair<F>; readonly h: F; readonly parity: F; readonly odd: M } {
  const a = o.abs(x);
  const { k, r } = reduceByHalfPi(o, a);
  const h = halfOf(o, k);
  const parity = o.sub(k, o.add(h, h));
  return { a, r, h, parity, odd: o.eq(parity, o.c(1)) };
}

/** NaN for infinite or NaN x (whose reduction is meaningless), else y. */
function finite<F, M>(o: FloatOps<F, M>, a: F, y: F): F {
  return o.sel(o.lt(a, o.c(Infinity)), y, o.c(NaN));
}

/** sin r and cos r of the reduced argument (both: the functions choose between them with sel). */
function kernels<F, M>(o: FloatOps<F, M>, r: Pair<F>): { s: Pair<F>; c: Pair<F> } {
  const sq = squareOf(o, r.hi);
  return { s: sinPair(o, r, sq), c: cosPair(o, r, sq) };
}

/**
 * sin x for |x| < TRIG_REDUCTION_LIMIT: sin |x| is sin r, cos r, -sin r, -cos r as k mod 4 is
 * 0, 1, 2, 3 (the sign is (-1)^floor(k/2)), then x's sign (sin(-0) = -0; tiny x give x).
 */
export function sinOf<F, M>(o: FloatOps<F, M>, x: F): F {
  const { a, h, r, odd } = reduced(o, x);
  const signX = o.copysign(o.c(1), x);
  const { s, c } = kernels(o, r);
  const y = o.sel(odd, o.add(c.hi, c.lo), o.add(s.hi, s.lo));
  return finite(o, a, o.mul(o.mul(y, signOf(o, h)), signX));
}

/**
 * cos x for |x| < TRIG_REDUCTION_LIMIT: cos |x| = sin(|x| + pi/2), so the sign is
 * (-1)^floor((k + 1) / 2), floor((k + 1) / 2) = h + k mod 2.
 */
export function cosOf<F, M>(o: FloatOps<F, M>, x: F): F {
  const { a, r, h, parity, odd } = reduced(o, x);
  const { s, c } = kernels(o, r);
  const y = o.sel(odd, o.add(s.hi, s.lo), o.add(c.hi, c.lo));
  return finite(o, a, o.mul(y, signOf(o, o.add(h, parity))));
}

/** tan x for |x| < TRIG_REDUCTION_LIMIT: sin r / cos r for even k, -cos r / sin r for odd k. */
export function tanOf<F, M>(o: FloatOps<F, M>, x: F): F {
  const { a, r, odd } = reduced(o, x);
  const signX = o.copysign(o.c(1), x);
  const pair = kernels(o, r);
  const s = normalized(o, pair.s);
  const c = normalized(o, pair.c);
  const n = { hi: o.sel(odd, c.hi, s.hi), lo: o.sel(odd, c.lo, s.lo) };
  const d = { hi: o.sel(odd, s.hi, c.hi), lo: o.sel(odd, s.lo, c.lo) };
  const t = quotient(o, n, d);
  return finite(o, a, o.mul(o.mul(t, o.sel(odd, o.c(-1), o.c(1))), signX));
}

// ---------------------------------------------------------------------------------------------
// The JS functions: the compiled FloatOps functions below TRIG_REDUCTION_LIMIT; beyond, an exact
// reduction (Payne and Hanek) and the same kernels, compiled.

const sinSmall = compileToJs(sinOf, 'sin');
const cosSmall = compileToJs(cosOf, 'cos');
const tanSmall = compileToJs(tanOf, 'tan');
const sinKernel = compileBinaryToJs(sinReduced, 'sinReduced');
const cosKernel = compileBinaryToJs(cosReduced, 'cosReduced');
const tanKernel = compileBinaryToJs(tanReduced, 'tanReduced');
const cotKernel = compileBinaryToJs(cotReduced, 'cotReduced');

/**
 * 2/pi = sum c_j 2^(-23(j+1)) for these c_j (23-bit integers, j = 0..53), after two zeros that
 * stand for c_-2 and c_-1: bits enough to reduce x up to 2^1024 (see reduceLarge).
 */
const TWO_OVER_PI_CHUNKS = Float64Array.of(
  0, 0,
  5340353, 6001553, 173375, 4355453, 1026470, 7799661, 4533042, 3949456, 2162472, 5827319, 5732524, 1798726, 7459346, 3623808,
  823901, 6949329, 4787839, 490183, 1451316, 7597704, 1159081, 3861778, 643896, 7349940, 3129120, 5137525, 4665450, 3383113,
  6562556, 3078116, 5273151, 7903231, 7275212, 261067, 6435179, 2139857, 8087987, 8076447, 1446766, 5195327, 3362607, 8031069,
  2422616, 8306271, 776680, 1894366, 1352997, 6974459, 3135631, 6510402, 704614, 290759, 5987679, 4407024,
);
/** c_0, c_1, ...: the chunks (exported for the test that checks them against 2/pi computed anew). */
export const TWO_OVER_PI_BITS: readonly number[] = Array.from(TWO_OVER_PI_CHUNKS.subarray(2));

const CHUNK = 8388608; // 2^23
const INV_CHUNK = 1 / CHUNK;
/** Limbs of x 2/pi kept below the last multiple of 8: their sum is exact to 2^-180. */
const LIMBS = 10;
const limb = new Float64Array(LIMBS);
/** PIO2_HI's Veltkamp halves. */
const [PIO2_HI_1, PIO2_HI_2] = splitConstant(PIO2_HI);
/** reduceLarge's r = hi + lo. */
let reducedHi = 0;
let reducedLo = 0;

/** (hi + lo) + x as a double-double in (reducedHi, reducedLo): two-sum, lo added to its error. */
function ddAdd(hi: number, lo: number, x: number): void {
  const s = hi + x;
  const v = s - hi;
  const e = hi - (s - v) + (x - v) + lo;
  reducedHi = s + e;
  reducedLo = e - (reducedHi - s);
}

/**
 * a = k pi/2 + r for finite a >= TRIG_REDUCTION_LIMIT: returns k mod 4, sets r = reducedHi +
 * reducedLo (|r| <= pi/4, relative error about 2^-104). a = M 2^e with M = M2 2^46 + M1 2^23 + M0
 * (23-bit integers): a 2/pi = sum over d of L_d 2^(e - 23 - 23d), L_d = sum_i M_i c_(d+i), each
 * product below 2^46 and so exact. The limbs of weight 8 or more are left out (multiples of 8,
 * nothing to k mod 4); ten more limbs are summed exactly with carries in base 2^23, rounded to
 * the nearest integer k (the fraction taken from 1, limb by limb, when it is a half or more) and
 * the fraction's limbs summed into a double-double and multiplied by pi/2.
 */
function reduceLarge(a: number): number {
  const e = exponentField(a) - 52;
  const m = significandOf(a) * 4503599627370496;
  const m2 = Math.floor(m * INV_CHUNK * INV_CHUNK);
  const m01 = m - m2 * CHUNK * CHUNK;
  const m1 = Math.floor(m01 * INV_CHUNK);
  const m0 = m01 - m1 * CHUNK;
  const t = e - 23;
  // The first limb below weight 8: weight 2^w0, w0 in [-20, 2]; d0 >= -1 since a >= 2^32.
  const d0 = Math.ceil((t - 2) / 23);
  const w0 = t - 23 * d0;
  for (let i = 0; i < LIMBS; i++) {
    const j = d0 + i + 2;
    limb[i] = m0 * TWO_OVER_PI_CHUNKS[j]! + m1 * TWO_OVER_PI_CHUNKS[j + 1]! + m2 * TWO_OVER_PI_CHUNKS[j + 2]!;
  }
  for (let i = LIMBS - 1; i > 0; i--) {
    const carry = Math.floor(limb[i]! * INV_CHUNK);
    limb[i] -= carry * CHUNK;
    limb[i - 1] += carry;
  }
  // The top limb mod 2^(3 - w0) (its value mod 8), then the integer part from the top two limbs:
  // A is exact (46 bits) and a multiple of 2^(w0 - 23), which the limbs below never reach.
  const period = POW2[3 - w0 + 560]!;
  const top = limb[0]! - period * Math.floor(limb[0]! / period);
  const weight = POW2[w0 + 560]!;
  const A = top * weight + limb[1]! * weight * INV_CHUNK;
  let n = Math.floor(A);
  let f = A - n;
  const unit = weight * INV_CHUNK;
  let sign = 1;
  if (f >= 0.5) {
    // 1 - (f + rest) = (1 - f - unit) + (unit - rest), the second as complemented limbs (short
    // of the last limb's unit, 2^-200 or less).
    n += 1;
    sign = -1;
    f = 1 - f - unit;
    for (let i = 2; i < LIMBS; i++) limb[i] = CHUNK - 1 - limb[i]!;
  }
  // The fraction's limbs two at a time (46 bits, exact) into a double-double.
  reducedHi = f;
  reducedLo = 0;
  let scale = unit;
  for (let i = 2; i < LIMBS; i += 2) {
    scale *= INV_CHUNK * INV_CHUNK;
    ddAdd(reducedHi, reducedLo, (limb[i]! * CHUNK + limb[i + 1]!) * scale);
  }
  // r = ±(hi + lo) pi/2: the product of the highs exactly (Dekker), the cross terms added.
  const gh = reducedHi;
  const gl = reducedLo;
  const p = gh * PIO2_HI;
  const gp = gh * SPLIT;
  const gh1 = gp - (gp - gh);
  const gh2 = gh - gh1;
  const pe = gh1 * PIO2_HI_1 - p + gh1 * PIO2_HI_2 + gh2 * PIO2_HI_1 + gh2 * PIO2_HI_2;
  const err = pe + (gh * PIO2_LO + gl * PIO2_HI);
  const hi = p + err;
  reducedHi = sign * hi;
  reducedLo = sign * (err - (hi - p));
  return n & 3;
}

/** sin x, weft's own: within an ulp over every double, the same bits as the WebAssembly loops. */
export function sin(x: number): number {
  const a = Math.abs(x);
  if (!(a >= TRIG_REDUCTION_LIMIT)) return sinSmall(x);
  if (a === Infinity) return NaN;
  const q = reduceLarge(a);
  const y = q & 1 ? cosKernel(reducedHi, reducedLo) : sinKernel(reducedHi, reducedLo);
  return (q & 2 ? -y : y) * (x < 0 ? -1 : 1);
}

/** cos x, weft's own. */
export function cos(x: number): number {
  const a = Math.abs(x);
  if (!(a >= TRIG_REDUCTION_LIMIT)) return cosSmall(x);
  if (a === Infinity) return NaN;
  const q = reduceLarge(a);
  const y = q & 1 ? sinKernel(reducedHi, reducedLo) : cosKernel(reducedHi, reducedLo);
  return q === 1 || q === 2 ? -y : y;
}

/** tan x, weft's own. */
export function tan(x: number): number {
  const a = Math.abs(x);
  if (!(a >= TRIG_REDUCTION_LIMIT)) return tanSmall(x);
  if (a === Infinity) return NaN;
  const q = reduceLarge(a);
  const y = q & 1 ? -cotKernel(reducedHi, reducedLo) : tanKernel(reducedHi, reducedLo);
  return x < 0 ? -y : y;
}
