// Test-only high-precision reference: double-double ("DD", hi + lo) arithmetic and the reference
// values of the math functions weft implements, good to about 2^-100 relative, against which the
// tests measure the error of weft's float64 and float32 results in ulps (to ~0.001 ulp).

/** A double-double: the value hi + lo, normalised so that hi is lo + hi rounded (|lo| <= ulp(hi)/2). */
export interface DD {
  readonly hi: number;
  readonly lo: number;
}

/** A value m * 2^k kept apart, so that results beyond float64's range are rounded only once. */
interface Scaled {
  readonly m: DD;
  readonly k: number;
}

const NAN: DD = { hi: NaN, lo: 0 };
const ZERO: DD = { hi: 0, lo: 0 };
const ONE: DD = { hi: 1, lo: 0 };
const POS_INF: DD = { hi: Infinity, lo: 0 };
const NEG_INF: DD = { hi: -Infinity, lo: 0 };

export function fromNumber(x: number): DD {
  return { hi: x, lo: 0 };
}

// ---------------------------------------------------------------------------------------------
// Powers of two, exponents, ldexp

/** POW2[n + 1074] = 2^n for n in [-1074, 1023], built by exact doublings. */
const POW2 = (() => {
  const table = new Float64Array(1074 + 1023 + 1);
  table[0] = 5e-324;
  for (let i = 1; i < table.length; i++) table[i] = table[i - 1]! * 2;
  return table;
})();

function pow2(n: number): number {
  return POW2[n + 1074]!;
}

const bitsView = new DataView(new ArrayBuffer(8));

/** floor(log2 |x|) for finite nonzero x, subnormals included (read off the bits, never rounded). */
export function exponentOf(x: number): number {
  if (x === 0 || !Number.isFinite(x)) throw new RangeError(`exponentOf(${x}): no exponent`);
  bitsView.setFloat64(0, x);
  const biased = (bitsView.getUint32(0) >>> 20) & 0x7ff;
  return biased !== 0 ? biased - 1023 : exponentOf(x * pow2(64)) - 64;
}

/**
 * x * 2^n rounded once, as IEEE would round the exact product: x is first brought to [1, 2)
 * (exact), then scaled by one power of two, so gradual underflow and overflow round correctly.
 */
export function ldexp(x: number, n: number): number {
  if (x === 0 || !Number.isFinite(x) || n === 0) return x;
  const e = exponentOf(x);
  const target = e + n;
  if (target > 1023) return x > 0 ? Infinity : -Infinity;
  if (target < -1075) return x > 0 ? 0 : -0;
  const unit = -e > 1023 ? x * pow2(1023) * pow2(-e - 1023) : x * pow2(-e);
  return target >= -1074 ? unit * pow2(target) : unit * 0.5 * pow2(target + 1);
}

/**
 * a * 2^n as a DD, rounded once where the result leaves float64's range: to +-Infinity past the
 * largest double (as round-to-nearest does), and to the nearest subnormal (ties to even) below
 * 2^-969, where lo has no room left below hi's last place and the rounding must be done here.
 */
export function ldexpDD(a: DD, n: number): DD {
  const { hi, lo } = a;
  if (hi === 0 || !Number.isFinite(hi)) return a;
  const e = exponentOf(hi) + n;
  if (e < -969) return roundTiny(hi, lo, n, e);
  const h = ldexp(hi, n);
  if (!Number.isFinite(h) || !Number.isFinite(h + ldexp(lo, n))) return h > 0 ? POS_INF : NEG_INF;
  return { hi: h, lo: ldexp(lo, n) };
}

/** (hi + lo) * 2^n for a result below 2^-969 whose exponent is e: rounded to its last place. */
function roundTiny(hi: number, lo: number, n: number, e: number): DD {
  const sign = hi < 0 ? -1 : 1;
  const h = sign * hi;
  const l = sign * lo;
  const lastPlace = Math.max(e - 52, -1074);
  // In units of the result's last place: q < 2^53 is exact, its fraction too.
  const q = ldexp(h, n - lastPlace);
  const whole = Math.floor(q);
  const fraction = q - whole;
  const tail = ldexp(l, n - lastPlace);
  const side = fraction - 0.5 + tail;
  const up = side > 0 || (side === 0 && whole % 2 === 1);
  const count = up ? whole + 1 : whole;
  const rounded = sign * ldexp(count, lastPlace);
  if (lastPlace === -1074 || count === 0) return { hi: rounded, lo: 0 };
  // What is left, rounded to the subnormal grid (so the DD is within 2^-1075 of the value), but
  // kept short of half an ulp beside an odd hi unless it is exactly that: hi + lo would tie
  // there, and round to the even neighbour.
  const rest = fraction - (up ? 1 : 0) + tail;
  const half = pow2(lastPlace + 1073);
  const units = ldexp(rest, lastPlace + 1074);
  const nearest = Math.round(units);
  const fakeTie = Math.abs(nearest) === half && Math.abs(units) !== half && count % 2 === 1;
  const restUnits = fakeTie ? Math.sign(nearest) * (half - 1) : nearest;
  return { hi: rounded, lo: sign * ldexp(restUnits, -1074) };
}

// ---------------------------------------------------------------------------------------------
// Error-free transformations and DD arithmetic (after Dekker, Knuth and Bailey's QD library)

/** a + b exactly as hi + lo (Knuth's two-sum: any order of magnitude). */
export function twoSum(a: number, b: number): DD {
  const s = a + b;
  const bb = s - a;
  return { hi: s, lo: a - (s - bb) + (b - bb) };
}

/** a + b exactly as hi + lo, for |a| >= |b| (or a = 0). */
export function quickTwoSum(a: number, b: number): DD {
  const s = a + b;
  return { hi: s, lo: b - (s - a) };
}

/** Veltkamp's constant 2^27 + 1: splits a double into two 26-bit halves. */
const SPLITTER = 134217729;
/** Above this, SPLITTER * a would overflow: such factors are split at a smaller scale. */
const SPLIT_LIMIT = 2 ** 996;

/** a = hi + lo with hi and lo of at most 26 significant bits each, so their products are exact. */
export function split(a: number): readonly [number, number] {
  if (Math.abs(a) > SPLIT_LIMIT) {
    const [h, l] = split(a * pow2(-28));
    return [h * pow2(28), l * pow2(28)];
  }
  const t = SPLITTER * a;
  const hi = t - (t - a);
  return [hi, a - hi];
}

/** a * b exactly as hi + lo (Dekker's product: JS has no fused multiply-add). */
export function twoProd(a: number, b: number): DD {
  const p = a * b;
  if (!Number.isFinite(p)) return { hi: p, lo: 0 };
  if (Math.abs(a) > SPLIT_LIMIT || Math.abs(b) > SPLIT_LIMIT) {
    const [ah, al] = split(a);
    const [bh, bl] = split(b);
    return { hi: p, lo: ah * bh - p + ah * bl + al * bh + al * bl };
  }
  let t = SPLITTER * a;
  const ah = t - (t - a);
  const al = a - ah;
  t = SPLITTER * b;
  const bh = t - (t - b);
  const bl = b - bh;
  return { hi: p, lo: ah * bh - p + ah * bl + al * bh + al * bl };
}

export function neg(a: DD): DD {
  return { hi: -a.hi, lo: -a.lo };
}

export function abs(a: DD): DD {
  return a.hi < 0 ? neg(a) : a;
}

/** a + b, the accurate sum (both parts added exactly, relative error ~2^-105). */
export function add(a: DD, b: DD): DD {
  const s = twoSum(a.hi, b.hi);
  const t = twoSum(a.lo, b.lo);
  const u = quickTwoSum(s.hi, s.lo + t.hi);
  return quickTwoSum(u.hi, u.lo + t.lo);
}

export function sub(a: DD, b: DD): DD {
  return add(a, neg(b));
}

export function addNumber(a: DD, b: number): DD {
  const s = twoSum(a.hi, b);
  return quickTwoSum(s.hi, s.lo + a.lo);
}

export function mul(a: DD, b: DD): DD {
  const p = twoProd(a.hi, b.hi);
  return quickTwoSum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}

export function mulNumber(a: DD, b: number): DD {
  const p = twoProd(a.hi, b);
  return quickTwoSum(p.hi, p.lo + a.lo * b);
}

/** a / b: three quotient digits, each from the exact remainder of the previous ones. */
export function div(a: DD, b: DD): DD {
  const q1 = a.hi / b.hi;
  let r = sub(a, mulNumber(b, q1));
  const q2 = r.hi / b.hi;
  r = sub(r, mulNumber(b, q2));
  const q3 = r.hi / b.hi;
  return addNumber(quickTwoSum(q1, q2), q3);
}

export function divNumber(a: DD, b: number): DD {
  const q1 = a.hi / b;
  const r = sub(a, twoProd(q1, b));
  const q2 = r.hi / b;
  const q = quickTwoSum(q1, q2);
  const r2 = sub(r, twoProd(q2, b));
  return addNumber(q, r2.hi / b);
}

/** sqrt(a): one Newton step from Math.sqrt on the exact residual a - s^2. */
export function sqrt(a: DD): DD {
  if (a.hi === 0) return a;
  if (a.hi < 0 || Number.isNaN(a.hi)) return NAN;
  if (a.hi === Infinity) return POS_INF;
  const s = Math.sqrt(a.hi);
  const r = sub(a, twoProd(s, s));
  return quickTwoSum(s, r.hi / (2 * s));
}

/** -1, 0 or 1 as a < b, a = b or a > b (NaN compares as unordered: NaN is returned). */
export function compare(a: DD, b: DD): number {
  if (a.hi !== b.hi) return a.hi < b.hi ? -1 : a.hi > b.hi ? 1 : NaN;
  return a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : a.lo === b.lo ? 0 : NaN;
}

export function equals(a: DD, b: DD): boolean {
  return compare(a, b) === 0;
}

/** Relative difference |a - b| / |b| as a number (for identities checked to ~1e-30). */
export function relativeDifference(a: DD, b: DD): number {
  if (a.hi === b.hi && a.lo === b.lo) return 0;
  return Math.abs(sub(a, b).hi / b.hi);
}

// ---------------------------------------------------------------------------------------------
// Exact constants, computed once with BigInt fixed-point arithmetic

function bitLength(v: bigint): number {
  if (v === 0n) return 0;
  const hex = v.toString(16);
  return (hex.length - 1) * 4 + (32 - Math.clz32(parseInt(hex[0]!, 16)));
}

/**
 * v * 2^exp2 as a DD: hi is v correctly rounded (a sticky bit stands for the bits dropped beyond
 * 120, so a tie is still seen as one), lo the rest rounded, and the scale applied by ldexpDD.
 */
export function bigToDD(v: bigint, exp2: number): DD {
  if (v === 0n) return ZERO;
  if (v < 0n) return neg(bigToDD(-v, exp2));
  const shift = Math.max(bitLength(v) - 120, 0);
  let top = v >> BigInt(shift);
  if (shift > 0 && top << BigInt(shift) !== v) top |= 1n;
  const hi = Number(top);
  const lo = Number(top - BigInt(hi));
  return ldexpDD({ hi, lo }, exp2 + shift);
}

/** 2^bits * sum (+-)1 / ((2k+1) n^(2k+1)): atan(1/n), or atanh(1/n) if not alternating. */
function inverseSeries(n: bigint, bits: number, alternating: boolean): bigint {
  let power = (1n << BigInt(bits)) / n;
  const n2 = n * n;
  let sum = 0n;
  for (let k = 0n; power !== 0n; k++) {
    const term = power / (2n * k + 1n);
    sum += alternating && k % 2n === 1n ? -term : term;
    power /= n2;
  }
  return sum;
}

function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = 1n << BigInt((bitLength(n) >> 1) + 1);
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

/** Fraction bits of the long pi/2: enough to reduce the largest double (2^1024) to ~2^-190. */
const PIO2_BITS = 1300;
const GUARD = 40;
/** pi/2 * 2^PIO2_BITS (Machin: pi = 16 atan(1/5) - 4 atan(1/239)), truncated. */
const PIO2_BIG = (16n * inverseSeries(5n, PIO2_BITS + GUARD, true) - 4n * inverseSeries(239n, PIO2_BITS + GUARD, true)) >> BigInt(GUARD + 1);
/** Fraction bits of the other constants. */
const C_BITS = 320;
const PI_BIG = PIO2_BIG >> BigInt(PIO2_BITS - C_BITS - 1);
const LN2_BIG = (2n * inverseSeries(3n, C_BITS + GUARD, false)) >> BigInt(GUARD);
/** ln 10 = 3 ln 2 + ln(5/4), and ln(5/4) = 2 atanh(1/9). */
const LN10_BIG = 3n * LN2_BIG + ((2n * inverseSeries(9n, C_BITS + GUARD, false)) >> BigInt(GUARD));
const SQRT_PI_BIG = isqrt(PI_BIG << BigInt(C_BITS));
const ONE_BIG = 1n << BigInt(C_BITS);

function constant(v: bigint): DD {
  return bigToDD(v, -C_BITS);
}
function inverseConstant(v: bigint): DD {
  return constant((ONE_BIG * ONE_BIG) / v);
}

export const PI = constant(PI_BIG);
export const HALF_PI = constant(PI_BIG >> 1n);
export const QUARTER_PI = constant(PI_BIG >> 2n);
export const LN2 = constant(LN2_BIG);
export const LN10 = constant(LN10_BIG);
const INV_LN2 = inverseConstant(LN2_BIG);
const INV_LN10 = inverseConstant(LN10_BIG);
const LOG10_2 = constant((LN2_BIG * ONE_BIG) / LN10_BIG);
const INV_SQRT_PI = inverseConstant(SQRT_PI_BIG);
const TWO_OVER_SQRT_PI = mulNumber(INV_SQRT_PI, 2);

/**
 * ln 2 in three parts for exp's reduction: LN2_A keeps 42 bits, so k * LN2_A is exact for
 * |k| < 2^11 (all of exp's range), and the DD LN2_BC carries the next 106.
 */
const LN2_A_BIG = (LN2_BIG >> BigInt(C_BITS - 42)) << BigInt(C_BITS - 42);
const LN2_A = constant(LN2_A_BIG).hi;
const LN2_BC = constant(LN2_BIG - LN2_A_BIG);

/** Series coefficients as DDs from exact rationals: 1/n!, 1/(2j+1) with alternating signs. */
function factorialBig(n: number): bigint {
  let f = 1n;
  for (let k = 2n; k <= BigInt(n); k++) f *= k;
  return f;
}
const INV_FACTORIAL: readonly DD[] = Array.from({ length: 41 }, (_, n) => bigToDD((1n << 400n) / factorialBig(n), -400));
function signed(c: DD, negative: boolean): DD {
  return negative ? neg(c) : c;
}
/** e^r = sum r^n/n!, n = 0..23: the first term left out is below 2^-115 for |r| <= ln2/2. */
const EXP_COEFFS: readonly DD[] = INV_FACTORIAL.slice(0, 24);
/** (e^r - 1)/r = sum r^n/(n+1)!. */
const EXPM1_COEFFS: readonly DD[] = INV_FACTORIAL.slice(1, 25);
/** sin r / r and cos r in z = r^2, |r| <= pi/4: 16 terms leave out less than 2^-112. */
const SIN_COEFFS: readonly DD[] = Array.from({ length: 16 }, (_, j) => signed(INV_FACTORIAL[2 * j + 1]!, j % 2 === 1));
const COS_COEFFS: readonly DD[] = Array.from({ length: 16 }, (_, j) => signed(INV_FACTORIAL[2 * j]!, j % 2 === 1));
const ODD_RECIPROCALS: readonly DD[] = Array.from({ length: 24 }, (_, j) => bigToDD((1n << 200n) / BigInt(2 * j + 1), -200));
/** atanh s / s = sum s^2j/(2j+1): 21 terms leave out less than 2^-112 for |s| <= 0.1716. */
const ATANH_COEFFS: readonly DD[] = ODD_RECIPROCALS.slice(0, 21);
/** atan t / t = sum (-1)^j t^2j/(2j+1): 17 terms leave out less than 2^-118 for |t| <= 0.1. */
const ATAN_COEFFS: readonly DD[] = ODD_RECIPROCALS.slice(0, 17).map((c, j) => signed(c, j % 2 === 1));

/** c[0] + z (c[1] + z (c[2] + ...)). */
function horner(coeffs: readonly DD[], z: DD): DD {
  let p = coeffs[coeffs.length - 1]!;
  for (let i = coeffs.length - 2; i >= 0; i--) p = add(mul(p, z), coeffs[i]!);
  return p;
}

// ---------------------------------------------------------------------------------------------
// exp, expm1

/** ln(2^1024): e^x overflows above it. */
const EXP_OVERFLOW = 709.79;
/** ln(2^-1075): e^x rounds to 0 below it. */
const EXP_UNDERFLOW = -745.14;
/** Below this |x|, f(x) = x (1 + O(x^2)) rounds to x or its scaled form: no series is needed. */
const TINY = pow2(-900);

/** e^x = m 2^k for |x| up to ~750: x = k ln2 + r, |r| <= ln2/2, m = e^r from its Taylor series. */
function expScaled(x: DD): Scaled {
  const k = Math.round(x.hi * INV_LN2.hi);
  // x.hi - k LN2_A is exact (Sterbenz: the two are within a factor 2 of each other).
  const r0 = twoSum(x.hi - k * LN2_A, x.lo);
  const r1 = sub(r0, twoProd(k, LN2_BC.hi));
  const r = addNumber(r1, -k * LN2_BC.lo);
  return { m: horner(EXP_COEFFS, r), k };
}

/** e^x for a DD argument. */
export function expDD(x: DD): DD {
  if (Number.isNaN(x.hi)) return NAN;
  if (x.hi > EXP_OVERFLOW) return POS_INF;
  if (x.hi < EXP_UNDERFLOW) return ZERO;
  const { m, k } = expScaled(x);
  return ldexpDD(m, k);
}

export function exp(x: number): DD {
  return expDD(fromNumber(x));
}

/** e^x - 1 for a DD argument: the series of (e^x - 1)/x near 0, where e^x - 1 would cancel. */
export function expm1DD(x: DD): DD {
  if (Number.isNaN(x.hi)) return NAN;
  if (x.hi === 0) return x;
  if (Math.abs(x.hi) <= 0.34657359) return mul(x, horner(EXPM1_COEFFS, x));
  if (x.hi === -Infinity) return { hi: -1, lo: 0 };
  // Beyond ln2/2 the subtraction loses at most 2 bits.
  const e = expDD(x);
  return Number.isFinite(e.hi) ? addNumber(e, -1) : e;
}

export function expm1(x: number): DD {
  return expm1DD(fromNumber(x));
}

// ---------------------------------------------------------------------------------------------
// log, log1p, log2, log10

/**
 * x = 2^e m with m in [sqrt(1/2), sqrt(2)) for a positive finite DD x, and ln m as 2 atanh(s),
 * s = (m - 1)/(m + 1), |s| <= 0.1716: m - 1 is exact (Sterbenz), so ln m keeps full relative
 * precision even for x next to 1, where a Newton step on exp would cancel.
 */
function logParts(x: DD): { readonly e: number; readonly logm: DD } {
  let e = exponentOf(x.hi);
  let m: DD = { hi: ldexp(x.hi, -e), lo: ldexp(x.lo, -e) };
  if (m.hi > Math.SQRT2) {
    m = { hi: m.hi / 2, lo: m.lo / 2 };
    e += 1;
  }
  const s = div(addNumber(m, -1), addNumber(m, 1));
  return { e, logm: mulNumber(atanhSeries(s), 2) };
}

/** atanh s for |s| <= 0.1716. */
function atanhSeries(s: DD): DD {
  return mul(s, horner(ATANH_COEFFS, mul(s, s)));
}

function logSpecial(x: DD): DD | undefined {
  if (Number.isNaN(x.hi) || x.hi < 0) return NAN;
  if (x.hi === 0) return NEG_INF;
  if (x.hi === Infinity) return POS_INF;
  return undefined;
}

/** ln x for a DD argument. */
export function logDD(x: DD): DD {
  const special = logSpecial(x);
  if (special) return special;
  const { e, logm } = logParts(x);
  return add(mulNumber(LN2, e), logm);
}

export function log(x: number): DD {
  return logDD(fromNumber(x));
}

/** ln(1 + d) for a DD d: the atanh form of d/(2 + d) near 0, where 1 + d would round d away. */
export function log1pDD(d: DD): DD {
  if (Number.isNaN(d.hi) || d.hi < -1) return NAN;
  if (d.hi === 0 || Math.abs(d.hi) < TINY) return d;
  if (Math.abs(d.hi) < 0.29) return mulNumber(atanhSeries(div(d, addNumber(d, 2))), 2);
  if (d.hi === -1 && d.lo <= 0) return d.lo === 0 ? NEG_INF : NAN;
  return logDD(addNumber(d, 1));
}

/** ln(1 + x): 1 + x is exact as a DD, and its ln keeps full relative precision. */
export function log1p(x: number): DD {
  if (x === Infinity) return POS_INF;
  if (x === 0 || Math.abs(x) < TINY) return fromNumber(x);
  if (Number.isNaN(x) || x < -1) return NAN;
  if (x === -1) return NEG_INF;
  return logDD(twoSum(1, x));
}

/** log2 x = e + ln m / ln 2: exact at powers of two. */
export function log2(x: number): DD {
  const special = logSpecial(fromNumber(x));
  if (special) return special;
  const { e, logm } = logParts(fromNumber(x));
  return addNumber(mul(logm, INV_LN2), e);
}

export function log10(x: number): DD {
  const special = logSpecial(fromNumber(x));
  if (special) return special;
  const { e, logm } = logParts(fromNumber(x));
  return add(mulNumber(LOG10_2, e), mul(logm, INV_LN10));
}

// ---------------------------------------------------------------------------------------------
// sin, cos, tan

/** x = mant 2^e with mant an integer below 2^53. */
function integerMantissa(x: number): { readonly mant: number; readonly e: number } {
  const e = exponentOf(x) - 52;
  return { mant: ldexp(x, -e), e };
}

/**
 * a = k pi/2 + r exactly enough for any finite a >= 0: in BigInt fixed point with F fraction
 * bits, where F leaves 190 bits below the largest k * pi/2 (the closest a double comes to a
 * multiple of pi/2 is about 2^-61, so r keeps over 120 bits). Returns k mod 4 and r.
 */
function reduceHalfPi(a: number): { readonly q: number; readonly r: DD } {
  if (a <= Math.PI / 4) return { q: 0, r: fromNumber(a) };
  const { mant, e } = integerMantissa(a);
  const fractionBits = Math.max(e + 53, 0) + 190;
  const x = BigInt(mant) << BigInt(e + fractionBits);
  const halfPi = PIO2_BIG >> BigInt(PIO2_BITS - fractionBits);
  const k = (x + (halfPi >> 1n)) / halfPi;
  return { q: Number(k & 3n), r: bigToDD(x - k * halfPi, -fractionBits) };
}

function sinReduced(r: DD): DD {
  return mul(r, horner(SIN_COEFFS, mul(r, r)));
}

function cosReduced(r: DD): DD {
  return horner(COS_COEFFS, mul(r, r));
}

/** v with the sign of x, -0 included (atan2 passes its zeros through). */
function odd(x: number, v: DD): DD {
  return x < 0 || Object.is(x, -0) ? neg(v) : v;
}

export function sin(x: number): DD {
  if (!Number.isFinite(x)) return NAN;
  if (x === 0) return fromNumber(x);
  const { q, r } = reduceHalfPi(Math.abs(x));
  const v = q === 0 ? sinReduced(r) : q === 1 ? cosReduced(r) : q === 2 ? neg(sinReduced(r)) : neg(cosReduced(r));
  return odd(x, v);
}

export function cos(x: number): DD {
  if (!Number.isFinite(x)) return NAN;
  const { q, r } = reduceHalfPi(Math.abs(x));
  return q === 0 ? cosReduced(r) : q === 1 ? neg(sinReduced(r)) : q === 2 ? neg(cosReduced(r)) : sinReduced(r);
}

export function tan(x: number): DD {
  if (!Number.isFinite(x)) return NAN;
  if (x === 0) return fromNumber(x);
  const { q, r } = reduceHalfPi(Math.abs(x));
  const v = q % 2 === 0 ? div(sinReduced(r), cosReduced(r)) : neg(div(cosReduced(r), sinReduced(r)));
  return odd(x, v);
}

// ---------------------------------------------------------------------------------------------
// atan, atan2

/** atan t for 0 <= t <= 1: halve the angle (t / (1 + sqrt(1 + t^2))) until t <= 0.1, then the series. */
function atanUnit(t: DD): DD {
  let scale = 1;
  while (t.hi > 0.1) {
    t = div(t, addNumber(sqrt(addNumber(mul(t, t), 1)), 1));
    scale *= 2;
  }
  return mulNumber(mul(t, horner(ATAN_COEFFS, mul(t, t))), scale);
}

export function atan(x: number): DD {
  if (Number.isNaN(x)) return NAN;
  if (x === 0 || Math.abs(x) < TINY) return fromNumber(x);
  const a = Math.abs(x);
  if (a === Infinity) return odd(x, HALF_PI);
  return odd(x, a <= 1 ? atanUnit(fromNumber(a)) : sub(HALF_PI, atanUnit(div(ONE, fromNumber(a)))));
}

/** atan2 with C99's (Annex F) signed zeros and infinities. */
export function atan2(y: number, x: number): DD {
  if (Number.isNaN(x) || Number.isNaN(y)) return NAN;
  const special = atan2Special(y, x);
  if (special) return odd(y, special);
  let ay = Math.abs(y);
  let ax = Math.abs(x);
  let angle: DD;
  if (ay / ax < TINY) {
    // atan(t) = t to far below an ulp; t itself is scaled so that its DD keeps every bit.
    const t = ldexpDD(div(fromNumber(ay * pow2(600)), fromNumber(ax)), -600);
    angle = x > 0 ? t : sub(PI, t);
  } else {
    // Scale both (exactly: neither is below 2^-900 of the other) so the larger is in [1, 2) and
    // the DD division's remainder stays clear of the subnormals.
    const e = exponentOf(Math.max(ax, ay));
    ax = ldexp(ax, -e);
    ay = ldexp(ay, -e);
    const a = ay <= ax ? atanUnit(div(fromNumber(ay), fromNumber(ax))) : sub(HALF_PI, atanUnit(div(fromNumber(ax), fromNumber(ay))));
    angle = x < 0 ? sub(PI, a) : a;
  }
  return odd(y, angle);
}

/** |atan2(y, x)| where a zero or an infinity decides it (the sign of y is applied by the caller). */
function atan2Special(y: number, x: number): DD | undefined {
  const xNegative = x < 0 || Object.is(x, -0);
  if (y === 0) return xNegative ? PI : ZERO;
  if (!Number.isFinite(y)) {
    if (x === Infinity) return QUARTER_PI;
    if (x === -Infinity) return mulNumber(QUARTER_PI, 3);
    return HALF_PI;
  }
  if (x === 0) return HALF_PI;
  if (x === Infinity) return ZERO;
  if (x === -Infinity) return PI;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// asin, acos

/**
 * asin x = atan(x / sqrt((1 - x)(1 + x))), with 1 - x and 1 + x exact as DDs (twoSum), so the
 * root keeps full relative precision next to +-1 where 1 - x^2 would cancel. Above sqrt(1/2)
 * the ratio exceeds 1 and its complement pi/2 - atan(sqrt(..)/x) is taken (at least pi/4: no
 * cancellation).
 */
export function asin(x: number): DD {
  if (Number.isNaN(x) || Math.abs(x) > 1) return NAN;
  // asin x = x (1 + x^2/6 + ...): below 2^-900 the rest is far below the DD's last bit.
  if (x === 0 || Math.abs(x) < TINY) return fromNumber(x);
  const a = Math.abs(x);
  if (a === 1) return odd(x, HALF_PI);
  const root = sqrt(mul(twoSum(1, -a), twoSum(1, a)));
  const t = fromNumber(a);
  return odd(x, a < Math.SQRT1_2 ? atanUnit(div(t, root)) : sub(HALF_PI, atanUnit(div(root, t))));
}

/**
 * acos x = 2 atan(sqrt((1 - x)/(1 + x))) for x > 1/2 (where pi/2 - asin x would cancel, down to
 * acos x -> 0 at 1), pi - that of -x below -1/2 (an angle of at most pi/3 off pi), and
 * pi/2 - asin x between, where asin x is at most pi/6 and the difference at least pi/3.
 */
export function acos(x: number): DD {
  if (Number.isNaN(x) || Math.abs(x) > 1) return NAN;
  if (x === 1) return ZERO;
  if (x === -1) return PI;
  if (Math.abs(x) <= 0.5) return sub(HALF_PI, asin(x));
  const a = Math.abs(x);
  const half = atanUnit(sqrt(div(twoSum(1, -a), twoSum(1, a))));
  const angle = mulNumber(half, 2);
  return x > 0 ? angle : sub(PI, angle);
}

// ---------------------------------------------------------------------------------------------
// tanh, sigmoid, softplus, sinh, cosh

export function tanh(x: number): DD {
  if (Number.isNaN(x)) return NAN;
  if (x === 0 || Math.abs(x) < TINY) return fromNumber(x);
  const a = Math.abs(x);
  if (a >= 20) {
    // tanh a = 1 - 2e^-2a + O(e^-4a), and e^-4a < 2^-115 here.
    return odd(x, addNumber(mulNumber(exp(-2 * a), -2), 1));
  }
  const e = expm1(2 * a);
  return odd(x, div(e, addNumber(e, 2)));
}

/** 1 / (1 + e^-x); for x < 0, e^x / (1 + e^x) with e^x kept scaled down to the subnormals. */
export function sigmoid(x: number): DD {
  if (Number.isNaN(x)) return NAN;
  if (x >= 0) return div(ONE, addNumber(exp(-x), 1));
  if (x < EXP_UNDERFLOW) return ZERO;
  const { m, k } = expScaled(fromNumber(x));
  // Below 2^-120, e^x / (1 + e^x) = e^x (1 - e^x) differs from e^x by less than 2^-120 relative.
  if (k < -120) return ldexpDD(m, k);
  const e = ldexpDD(m, k);
  return div(e, addNumber(e, 1));
}

/** ln(1 + e^x): x + ln(1 + e^-x) above 0, ln(1 + e^x) = e^x (1 - e^x/2 ...) below. */
export function softplus(x: number): DD {
  if (Number.isNaN(x)) return NAN;
  if (x === Infinity) return POS_INF;
  if (x > 0) return addNumber(log1pDD(exp(-x)), x);
  if (x < EXP_UNDERFLOW) return ZERO;
  const { m, k } = expScaled(fromNumber(x));
  if (k < -120) return ldexpDD(m, k);
  return log1pDD(ldexpDD(m, k));
}

/** Above this |x|, e^-|x| is below 2^-115 of e^|x| and sinh, cosh are e^|x|/2. */
const HYPERBOLIC_ONE_SIDED = 40;
/** sinh and cosh overflow above ln(2 * 2^1024). */
const HYPERBOLIC_OVERFLOW = 710.48;

export function sinh(x: number): DD {
  if (Number.isNaN(x)) return NAN;
  if (x === 0 || Math.abs(x) < TINY) return fromNumber(x);
  const a = Math.abs(x);
  if (a > HYPERBOLIC_OVERFLOW) return odd(x, POS_INF);
  if (a >= HYPERBOLIC_ONE_SIDED) {
    const { m, k } = expScaled(fromNumber(a));
    return odd(x, ldexpDD(m, k - 1));
  }
  // (E + E/(E + 1)) / 2 with E = e^a - 1 > 0: no cancellation near 0.
  const e = expm1(a);
  return odd(x, mulNumber(add(e, div(e, addNumber(e, 1))), 0.5));
}

export function cosh(x: number): DD {
  if (Number.isNaN(x)) return NAN;
  const a = Math.abs(x);
  if (a > HYPERBOLIC_OVERFLOW) return POS_INF;
  if (a >= HYPERBOLIC_ONE_SIDED) {
    const { m, k } = expScaled(fromNumber(a));
    return ldexpDD(m, k - 1);
  }
  const e = exp(a);
  return mulNumber(add(e, div(ONE, e)), 0.5);
}

// ---------------------------------------------------------------------------------------------
// asinh, acosh, atanh

/** Above this, asinh x = ln 2x + 1/(4x^2) - ... and acosh x = ln 2x - 1/(4x^2): the tail is below 2^-120. */
const LOG_OF_DOUBLE_FROM = 2 ** 60;

export function asinh(x: number): DD {
  if (Number.isNaN(x)) return NAN;
  if (x === 0 || Math.abs(x) < TINY) return fromNumber(x);
  const a = Math.abs(x);
  if (a === Infinity) return odd(x, POS_INF);
  if (a > LOG_OF_DOUBLE_FROM) return odd(x, add(log(a), LN2));
  const a2 = twoProd(a, a);
  const root = sqrt(addNumber(a2, 1));
  if (a >= 2) return odd(x, logDD(addNumber(root, a)));
  // ln(1 + d) with d = a + a^2 / (1 + sqrt(1 + a^2)) = a + sqrt(1 + a^2) - 1, without the cancellation.
  return odd(x, log1pDD(addNumber(div(a2, addNumber(root, 1)), a)));
}

export function acosh(x: number): DD {
  if (Number.isNaN(x) || x < 1) return NAN;
  if (x === 1) return ZERO;
  if (x === Infinity) return POS_INF;
  if (x > LOG_OF_DOUBLE_FROM) return add(log(x), LN2);
  if (x >= 2) return logDD(addNumber(sqrt(addNumber(twoProd(x, x), -1)), x));
  // ln(1 + t + sqrt(2t + t^2)) with t = x - 1 exact (Sterbenz).
  const t = x - 1;
  return log1pDD(addNumber(sqrt(addNumber(twoProd(t, t), 2 * t)), t));
}

export function atanh(x: number): DD {
  if (Number.isNaN(x)) return NAN;
  if (x === 0 || Math.abs(x) < TINY) return fromNumber(x);
  const a = Math.abs(x);
  if (a > 1) return NAN;
  if (a === 1) return odd(x, POS_INF);
  if (a <= 0.1716) return odd(x, atanhSeries(fromNumber(a)));
  // ln((1 + a)/(1 - a)) / 2: both sides exact as DDs, and the ratio is above 1.41.
  return odd(x, mulNumber(logDD(div(twoSum(1, a), twoSum(1, -a))), 0.5));
}

// ---------------------------------------------------------------------------------------------
// erf, erfc

/** erf's series is used below this; above it erf = 1 - erfc from the continued fraction. */
const ERF_SERIES_LIMIT = 3;
/** erfc's continued fraction is used from here; below it erfc = 1 - erf loses < 4 bits. */
const ERFC_FRACTION_FROM = 1.25;
/** erfc x rounds to 0 beyond this. */
const ERFC_UNDERFLOW = 27.3;

/**
 * erf a for 0 <= a < 3 from the series with positive terms,
 * erf a = 2/sqrt(pi) e^-a^2 sum_n (2a^2)^n a / (1 3 5 ... (2n+1)),
 * which, unlike the alternating Taylor series, loses nothing to cancellation.
 */
function erfSeries(a: number): DD {
  const a2 = twoProd(a, a);
  const twoA2 = mulNumber(a2, 2);
  let term = fromNumber(a);
  let sum = term;
  for (let n = 0; term.hi > sum.hi * 2 ** -112; n++) {
    term = divNumber(mul(term, twoA2), 2 * n + 3);
    sum = add(sum, term);
  }
  return mul(mul(TWO_OVER_SQRT_PI, expDD(neg(a2))), sum);
}

/**
 * erfc a = 2a e^-a^2 / sqrt(pi) / (2a^2 + 1 - 1*2/(2a^2 + 5 - 3*4/(2a^2 + 9 - ...))), the even
 * part of Laplace's continued fraction, evaluated from its tail, for a >= 1.25; e^-a^2 is kept
 * scaled, so erfc has full relative precision down to its subnormal results.
 */
function erfcFraction(a: number): DD {
  const u = mulNumber(twoProd(a, a), 2);
  const terms = continuedFractionTerms(a);
  let t = addNumber(u, 4 * terms + 1);
  for (let n = terms; n >= 1; n--) t = sub(addNumber(u, 4 * n - 3), div(fromNumber((2 * n - 1) * (2 * n)), t));
  const { m, k } = expScaled(neg(twoProd(a, a)));
  return ldexpDD(div(mulNumber(mul(m, TWO_OVER_SQRT_PI), a), t), k);
}

/**
 * Terms of the even continued fraction that bring its truncation error below 2^-112 at a: it
 * needs about (21/a)^2 for a <= 4 and fewer beyond (measured against 20000 terms: 250 at 1.25,
 * 53 at 3, 19 at 6, 6 at 27); this allows ~1.5 times that.
 */
function continuedFractionTerms(a: number): number {
  return Math.ceil(600 / (a * a) + 12);
}

export function erf(x: number): DD {
  if (Number.isNaN(x)) return NAN;
  if (x === 0) return fromNumber(x);
  const a = Math.abs(x);
  if (a === Infinity) return odd(x, ONE);
  if (a < TINY) return odd(x, ldexpDD(mulNumber(TWO_OVER_SQRT_PI, a * pow2(900)), -900));
  if (a < ERF_SERIES_LIMIT) return odd(x, erfSeries(a));
  return odd(x, addNumber(neg(erfcFraction(a)), 1));
}

export function erfc(x: number): DD {
  if (Number.isNaN(x)) return NAN;
  if (x < ERFC_FRACTION_FROM) return addNumber(neg(erf(x)), 1);
  if (x > ERFC_UNDERFLOW) return ZERO;
  return erfcFraction(x);
}

// ---------------------------------------------------------------------------------------------
// pow

function isOddInteger(y: number): boolean {
  return Number.isInteger(y) && Math.abs(y) % 2 === 1;
}

/** x^y with C99's (Annex F) special cases: pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN, and so on. */
export function pow(x: number, y: number): DD {
  if (y === 0 || x === 1) return ONE;
  if (Number.isNaN(x) || Number.isNaN(y)) return NAN;
  const special = powSpecial(x, y);
  if (special) return special;
  if (x < 0 && !Number.isInteger(y)) return NAN;
  const magnitude = powPositive(Math.abs(x), y);
  return x < 0 && isOddInteger(y) ? neg(magnitude) : magnitude;
}

function powSpecial(x: number, y: number): DD | undefined {
  const yOdd = isOddInteger(y);
  if (x === 0) {
    if (y < 0) return yOdd ? fromNumber(1 / x) : POS_INF;
    return fromNumber(yOdd ? x : 0);
  }
  if (!Number.isFinite(y)) {
    const ax = Math.abs(x);
    if (ax === 1) return ONE;
    return ax < 1 === y < 0 ? POS_INF : ZERO;
  }
  if (x === Infinity) return y < 0 ? ZERO : POS_INF;
  if (x === -Infinity) {
    if (y < 0) return fromNumber(yOdd ? -0 : 0);
    return yOdd ? NEG_INF : POS_INF;
  }
  return undefined;
}

/**
 * x^y for x > 0 as e^(y ln x): the error of y ln x is |y ln x| 2^-105, so the result keeps
 * ~2^-105 (1 + |y ln x|) relative (at worst ~2^-95, where x^y nears the float64 range).
 * Exact powers are computed exactly, since they can be ties that no approximation decides.
 */
function powPositive(x: number, y: number): DD {
  if (y === 1) return fromNumber(x);
  if (y === 0.5) return sqrtOf(x);
  const exact = exactPower(x, y);
  if (exact) return exact;
  return expDD(mulNumber(log(x), y));
}

/** sqrt x for a positive double, scaled (by an even power of two) clear of the subnormals. */
function sqrtOf(x: number): DD {
  if (x === Infinity) return POS_INF;
  if (x >= pow2(-900)) return sqrt(fromNumber(x));
  return ldexpDD(sqrt(fromNumber(x * pow2(1000))), -500);
}

/**
 * x^y for an integer y from the exact power of x's odd mantissa: exact when x is a power of two
 * or y > 0 (x^y can then be a tie, which no approximation would decide), and 1 / (a DD of the
 * exact x^-y) when y < 0 (2^-105 relative, where e^(y ln x) would give |y ln x| 2^-105);
 * undefined when y is not an integer or the exact power would be longer than 2200 bits.
 */
function exactPower(x: number, y: number): DD | undefined {
  if (!Number.isInteger(y)) return undefined;
  let { mant, e } = integerMantissa(x);
  while (mant % 2 === 0) {
    mant /= 2;
    e += 1;
  }
  if (mant === 1) return ldexpDD(ONE, e * y);
  const n = Math.abs(y);
  if (y === 1 || bitLength(BigInt(mant)) * n > 2200) return undefined;
  const power = BigInt(mant) ** BigInt(n);
  if (y > 0) return bigToDD(power, e * y);
  const top = bitLength(power) - 1;
  return ldexpDD(div(ONE, bigToDD(power, -top)), -top - e * n);
}

// ---------------------------------------------------------------------------------------------
// Rounding and ulp errors

/** The DD rounded to the nearest float64 (ties to even): the sum hi + lo rounds just so. */
export function correctlyRounded(ref: DD): number {
  return ref.lo === 0 ? ref.hi : ref.hi + ref.lo;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** The largest float32, and the midpoint between it and 2^128, from which float32 rounds to Infinity. */
const MAX_FLOAT32 = 3.4028234663852886e38;
const FLOAT32_OVERFLOW = 3.4028235677973366e38; // 2^128 - 2^103

/** The next float32 away from 0 (up) or toward 0 (down) from a positive float32. */
function nextFloat32(a: number, up: boolean): number {
  f32[0] = a;
  u32[0] = up ? u32[0]! + 1 : u32[0]! - 1;
  return f32[0]!;
}

/**
 * The DD rounded to the nearest float32 (ties to even). Math.fround(hi) is right unless hi is
 * exactly halfway between two float32s, where the sign of lo decides (rounding twice, to float64
 * and then to float32, would get this tie wrong).
 */
export function correctlyRounded32(ref: DD): number {
  const { hi, lo } = ref;
  if (!Number.isFinite(hi) || lo === 0) return Math.fround(hi);
  const sign = hi < 0 ? -1 : 1;
  const h = Math.abs(hi);
  if (h === FLOAT32_OVERFLOW) return sign * (sign * lo < 0 ? MAX_FLOAT32 : Infinity);
  const a = Math.fround(h);
  if (a === h || !Number.isFinite(a)) return sign * a;
  const b = a === 0 ? pow2(-149) : nextFloat32(a, h > a);
  if (!Number.isFinite(b) || h !== (a + b) / 2) return sign * a;
  const towardB = (sign * lo > 0) === b > a;
  return sign * (towardB ? b : a);
}

/** The exponent of one ulp of float64 at |r| (2^-1074 for subnormals and 0). */
function ulpExponent64(r: number): number {
  return Math.abs(r) < pow2(-1022) ? -1074 : exponentOf(r) - 52;
}

function ulpExponent32(r: number): number {
  return Math.abs(r) < pow2(-126) ? -149 : exponentOf(r) - 23;
}

/** |computed - ref| as a number (computed - hi is exact, then lo is taken off). */
function distance(computed: number, ref: DD): number {
  const d = twoSum(computed, -ref.hi);
  return Math.abs(d.hi + (d.lo - ref.lo));
}

/** 0 when both are NaN or the same infinity, Infinity when only one is NaN or infinite. */
function nonFiniteError(computed: number, rounded: number): number | undefined {
  if (Number.isNaN(rounded) || Number.isNaN(computed)) return Number.isNaN(rounded) && Number.isNaN(computed) ? 0 : Infinity;
  if (!Number.isFinite(rounded) || !Number.isFinite(computed)) return computed === rounded ? 0 : Infinity;
  return undefined;
}

/**
 * |computed - ref| in ulps of float64 at the correctly rounded reference (2^-1074 for subnormal
 * results): 0.5 at most for a correctly rounded computed value, up to 1 for a faithful one.
 */
export function ulpError(computed: number, ref: DD): number {
  const rounded = correctlyRounded(ref);
  return nonFiniteError(computed, rounded) ?? ldexp(distance(computed, ref), -ulpExponent64(rounded));
}

/**
 * The same in float32 ulps: computed is a float32 value, the ulp is float32's at the reference
 * rounded to float32 (2^-149 below 2^-126), and a reference that rounds past float32's largest
 * value is Infinity, which only an infinite computed value matches.
 */
export function ulpError32(computed: number, ref: DD): number {
  const rounded = correctlyRounded32(ref);
  return nonFiniteError(computed, rounded) ?? ldexp(distance(computed, ref), -ulpExponent32(rounded));
}
