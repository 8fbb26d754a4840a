// The float32 forms of weft's exp and tanh: the same FloatOps, with float32 arithmetic (every operation
// rounded to float32), as WebAssembly f32 or f32x4 lanes (Lanes32) and as JS (js32Ops, Math.fround
// after each operation), so that both give the same bits; four lanes a vector instead of two.
import { jsOps, type FloatOps } from './functions.js';
import { Body, F32, I32, V128, type Op } from '../wasm-emit.js';

const MAGIC32 = 12582912; // 1.5 * 2^23: (x + MAGIC32) - MAGIC32 rounds |x| < 2^22 to an integer
/** The bits of MAGIC32 as a float32. */
const MAGIC32_BITS = 0x4b400000;
const INV_LN2 = Math.fround(1.4426950408889634);
/** ln 2 as 0.693359375 (9 bits: k * LN2_HI is exact for |k| < 2^15) and the rest. */
const LN2_HI = 0.693359375;
const LN2_LO = Math.fround(-2.1219444005469057e-4);
/**
 * e^r = 1 + (r + r^2 Q(r)) for |r| <= ln2/2, Q of degree 4: a minimax fit of (e^r - 1 - r)/r^2
 * for the relative error of e^r (Lawson's algorithm in float64, coefficients rounded to float32),
 * 3.1e-9 at most (a twentieth of a float32 ulp), in two Horner steps fewer than Taylor's degree 8.
 */
const Q = [0.4999999403953552, 0.1666651964187622, 0.04166839271783829, 0.008368780836462975, 0.0013814467238262296];

/**
 * float32 arithmetic with three more operations. The first two take k as `shifted`, the float
 * k + 1.5 * 2^23 (MAGIC32) that rounding found it by: its low bits are k's, so that no second
 * conversion is needed.
 */
export interface Float32Ops<F, M> extends FloatOps<F, M> {
  /**
   * p * 2^k for p in [0.5, 2) and k in [-29, 29]: p's exponent field plus k, exact (the result
   * is normal). Not for NaN p: the bits of a NaN `shifted` could turn p into a number.
   */
  pow2Scale(p: F, shifted: F): F;
  /** p * 2^k for k in [-160, 160], in two exact power-of-two products (so gradual underflow and overflow). */
  scaleShifted(p: F, shifted: F): F;
  /** v, which is +0 or more (or NaN), with x's sign: copysign for a v whose sign bit is clear. */
  signedLike(v: F, x: F): F;
}

/**
 * e^x for x in [-110, 100] (no test of range): k = round(x / ln 2), r = x - k ln 2 in two steps,
 * e^r = 1 + (r + r^2 Q(r)), and 2^k put on by `scaleBy` from k + MAGIC32 (see Float32Ops).
 */
function expCore32<F, M>(o: Float32Ops<F, M>, x: F, scaleBy: (p: F, shifted: F) => F): F {
  const shifted = o.add(o.mul(x, o.c(INV_LN2)), o.c(MAGIC32));
  const k = o.sub(shifted, o.c(MAGIC32));
  const r = o.sub(o.sub(x, o.mul(k, o.c(LN2_HI))), o.mul(k, o.c(LN2_LO)));
  let q = o.c(Q[Q.length - 1]!);
  for (let j = Q.length - 2; j >= 0; j--) q = o.add(o.c(Q[j]!), o.mul(r, q));
  return scaleBy(o.add(o.c(1), o.add(r, o.mul(o.mul(r, r), q))), shifted);
}

/**
 * e^x in float32 arithmetic: x held to [-110, 100] first, where e^x is already 0 (below half the
 * smallest subnormal) and inf, so the scaling by 2^k in halves gives those two without a select.
 * NaN goes through every step as NaN (its payload may differ).
 */
export function exp32Of<F, M>(o: Float32Ops<F, M>, x: F): F {
  return expCore32(o, o.max(o.min(x, o.c(100)), o.c(-110)), (p, shifted) => o.scaleShifted(p, shifted));
}
/**
 * tanh a = a + a z P(z), z = a^2, for a < 0.55, P of degree 4: a minimax fit for the relative
 * error of tanh (Lawson's algorithm in float64, coefficients rounded to float32), 1.0e-9 at most,
 * where the odd series needs eight.
 */
const T = [-0.33333316445350647, 0.13332585990428925, -0.05385231599211693, 0.021071700379252434, -0.006274267099797726];

/** The float32 below 0.55: a > SERIES_BELOW is a >= 0.55 for a float32 a, and false for NaN. */
const SERIES_BELOW = 0.5499999523162842;

/**
 * tanh x in float32 arithmetic: the odd series below 0.55, 1 - 2/(e^(2a) + 1) from 0.55 on (with
 * 2a held to 20, where tanh is 1 in float32, so 2^k goes on p's exponent); x's sign put back. A
 * NaN takes the series, which keeps it NaN.
 */
export function tanh32Of<F, M>(o: Float32Ops<F, M>, x: F): F {
  const a = o.abs(x);
  const z = o.mul(a, a);
  let p = o.c(T[T.length - 1]!);
  for (let j = T.length - 2; j >= 0; j--) p = o.add(o.c(T[j]!), o.mul(z, p));
  const small = o.add(a, o.mul(a, o.mul(z, p)));
  const e = expCore32(o, o.min(o.add(a, a), o.c(20)), (q, shifted) => o.pow2Scale(q, shifted));
  const large = o.sub(o.c(1), o.div(o.c(2), o.add(e, o.c(1))));
  return o.signedLike(o.sel(o.gt(a, o.c(SERIES_BELOW)), large, small), x);
}

const f32 = Math.fround;
const i32 = new Int32Array(1);
const floats = new Float32Array(i32.buffer);
function pow2(n: number): number {
  i32[0] = (n + 127) << 23;
  return floats[0]!;
}

/**
 * The operations in float32: each arithmetic result rounded, as f32 instructions round; the
 * comparisons, selects, min, max, abs and copysign are float64's, exact on float32 values.
 */
export const js32Ops: Float32Ops<number, boolean> = {
  ...jsOps,
  c: (x) => f32(x),
  add: (a, b) => f32(a + b),
  sub: (a, b) => f32(a - b),
  mul: (a, b) => f32(a * b),
  div: (a, b) => f32(a / b),
  // The float64 root of a float32 rounds to the correctly rounded float32 root.
  sqrt: (a) => f32(Math.sqrt(a)),
  scale: (p, k) => {
    if (k !== k) return NaN;
    const half = Math.floor(k / 2);
    return f32(f32(p * pow2(half)) * pow2(k - half));
  },
  scaleShifted: (p, shifted) => js32Ops.scale(p, shifted - MAGIC32),
  pow2Scale: (p, shifted) => (shifted !== shifted ? NaN : f32(p * pow2(shifted - MAGIC32))),
  signedLike: (v, x) => (x < 0 || Object.is(x, -0) ? -v : v),
};

/** A float32 value in a local (v128 of four lanes, or an f32). */
export interface F32Value {
  readonly f: number;
}
/** A mask in a local (all-ones lanes, or an i32 0/1). */
export interface M32 {
  readonly m: number;
}

/** FloatOps as f32 (scalar) or f32x4 instructions appended to `body`, each result in a new local. */
export function lanes32Ops(body: Body, simd: boolean): Float32Ops<F32Value | number, M32> {
  const t = simd ? V128 : F32;
  const push = (a: F32Value | number): void => {
    if (typeof a === 'number') {
      if (simd) body.f32x4(a);
      else body.f32(a);
    } else body.get(a.f);
  };
  const keep = (): F32Value => {
    const f = body.local(t);
    body.set(f);
    return { f };
  };
  const mask = (): M32 => {
    const m = body.local(simd ? V128 : I32);
    body.set(m);
    return { m };
  };
  const op = (name: string): Op => `${simd ? 'f32x4' : 'f32'}.${name}` as Op;
  const bin = (name: string) => (a: F32Value | number, b: F32Value | number): F32Value => {
    push(a);
    push(b);
    body.op(op(name));
    return keep();
  };
  const cmp = (name: string) => (a: F32Value | number, b: F32Value | number): M32 => {
    push(a);
    push(b);
    body.op(op(name));
    return mask();
  };
  /** 2^n from the integer lanes n (in [-126, 127]) on the stack, by its bits. */
  const pow2Of = (): void => {
    if (simd) body.i32x4(127).op('i32x4.add').i32(23).op('i32x4.shl');
    else body.i32(127).op('i32.add').i32(23).op('i32.shl').op('f32.reinterpret_i32');
  };
  /** p * 2^n in two products (n halved), n the integer lanes `pushN` leaves on the stack. */
  function scaleBy(p: F32Value | number, pushN: () => void): F32Value {
    const n = body.local(simd ? V128 : I32);
    const half = body.local(simd ? V128 : I32);
    pushN();
    body.tee(n);
    body.i32(1).op(simd ? 'i32x4.shr_s' : 'i32.shr_s').set(half);
    push(p);
    body.get(half);
    pow2Of();
    body.op(op('mul'));
    body.get(n).get(half).op(simd ? 'i32x4.sub' : 'i32.sub');
    pow2Of();
    body.op(op('mul'));
    return keep();
  }
  return {
    c: (x) => Math.fround(x),
    add: bin('add'),
    sub: bin('sub'),
    mul: bin('mul'),
    div: bin('div'),
    // A value and a bound (FloatOps.min): pmin and pmax, one instruction each in SIMD lanes.
    min: simd ? bin('pmin') : bin('min'),
    max: simd ? bin('pmax') : bin('max'),
    abs: (a) => {
      push(a);
      body.signOp('abs', simd ? 'f32x4' : 'f32');
      return keep();
    },
    sqrt: (a) => {
      push(a);
      body.op(op('sqrt'));
      return keep();
    },
    lt: cmp('lt'),
    gt: cmp('gt'),
    eq: cmp('eq'),
    isNaN: (a) => cmp('ne')(a, a),
    sel: (m, a, b) => {
      push(a);
      push(b);
      body.get(m.m).op(simd ? 'v128.bitselect' : 'select');
      return keep();
    },
    copysign: (a, s) => {
      if (!simd) {
        push(a);
        push(s);
        body.op('f32.copysign');
        return keep();
      }
      push(a);
      body.i32x4(0x7fffffff).op('v128.and');
      push(s);
      body.i32x4(-0x80000000).op('v128.and').op('v128.or');
      return keep();
    },
    pow2Scale: (p, shifted) => {
      // The bits of k + 1.5 * 2^23 are those of 1.5 * 2^23 plus k, and 1.5 * 2^23's bits end in
      // nine zeros: shifted left by 23 they are k << 23, added to p's exponent field.
      push(p);
      if (!simd) body.op('i32.reinterpret_f32');
      push(shifted);
      if (simd) body.i32(23).op('i32x4.shl', 'i32x4.add');
      else body.op('i32.reinterpret_f32').i32(23).op('i32.shl', 'i32.add', 'f32.reinterpret_i32');
      return keep();
    },
    scaleShifted: (p, shifted) => scaleBy(p, () => {
      push(shifted);
      if (simd) body.i32x4(MAGIC32_BITS).op('i32x4.sub');
      else body.op('i32.reinterpret_f32').i32(MAGIC32_BITS).op('i32.sub');
    }),
    scale: (p, k) => scaleBy(p, () => {
      // k as integers (an integer-valued float of magnitude at most 160): the bits of
      // k + 1.5 * 2^23 less those of 1.5 * 2^23 are k (cheaper than a saturating conversion).
      push(k);
      if (simd) body.f32x4(MAGIC32).op('f32x4.add').i32x4(MAGIC32_BITS).op('i32x4.sub');
      else body.f32(MAGIC32).op('f32.add', 'i32.reinterpret_f32').i32(MAGIC32_BITS).op('i32.sub');
    }),
    signedLike: (v, x) => {
      // v's sign bit is clear: x's sign bit or'ed in.
      push(v);
      if (!simd) body.op('i32.reinterpret_f32');
      push(x);
      if (simd) body.i32x4(-0x80000000).op('v128.and', 'v128.or');
      else body.op('i32.reinterpret_f32').i32(-0x80000000).op('i32.and', 'i32.or', 'f32.reinterpret_i32');
      return keep();
    },
  };
}

// The JS kernels call exp32: exp32Of over js32Ops written out by hand, the same operations in the
// same order (test/kernels/vmath.test.ts checks they agree bit for bit). tanh32 takes one branch
// and scales 2^k in two products where tanh32Of adds k to the exponent field: the same bits,
// because 2a is held to [1.1, 20] there, so k is in [2, 29] and every one of those products is exact.

const POW2_32 = Float32Array.from({ length: 161 }, (_, i) => pow2(i - 80));

/** e^x of a float32 x as weft's float32 kernels compute it. */
export function exp32(x: number): number {
  if (x !== x) return x;
  if (x < -110) return 0;
  if (x > 100) return Infinity;
  const k = f32(f32(f32(x * INV_LN2) + MAGIC32) - MAGIC32);
  const r = f32(f32(x - f32(k * LN2_HI)) - f32(k * LN2_LO));
  let q = Q[Q.length - 1]!;
  for (let j = Q.length - 2; j >= 0; j--) q = f32(Q[j]! + f32(r * q));
  const er = f32(1 + f32(r + f32(f32(r * r) * q)));
  const half = Math.floor(k / 2);
  return f32(f32(er * POW2_32[half + 80]!) * POW2_32[k - half + 80]!);
}

/** tanh x of a float32 x as weft's float32 kernels compute it. */
export function tanh32(x: number): number {
  const a = Math.abs(x);
  let y: number;
  if (a < 0.55) {
    const z = f32(a * a);
    let p = T[T.length - 1]!;
    for (let j = T.length - 2; j >= 0; j--) p = f32(T[j]! + f32(z * p));
    y = f32(a + f32(a * f32(z * p)));
  } else y = f32(1 - f32(2 / f32(exp32(Math.min(f32(a + a), 20)) + 1)));
  return x < 0 || (x === 0 && 1 / x < 0) ? -y : y;
}
