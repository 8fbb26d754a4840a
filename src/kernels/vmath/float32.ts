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
/** 1/n! for n = 2..8: e^r = 1 + (r + r^2 Q(r)) for |r| <= ln2/2, truncation below 2^-27. */
const Q = [1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720, 1 / 5040, 1 / 40320].map(Math.fround);

/** e^x in float32 arithmetic: the float64 method's reduction, a float32 polynomial, 2^k in halves. */
export function exp32Of<F, M>(o: FloatOps<F, M>, x: F): F {
  const t = o.max(o.min(o.mul(x, o.c(INV_LN2)), o.c(160)), o.c(-160));
  const k = o.sub(o.add(t, o.c(MAGIC32)), o.c(MAGIC32));
  const r = o.sub(o.sub(x, o.mul(k, o.c(LN2_HI))), o.mul(k, o.c(LN2_LO)));
  let q = o.c(Q[Q.length - 1]!);
  for (let j = Q.length - 2; j >= 0; j--) q = o.add(o.c(Q[j]!), o.mul(r, q));
  const er = o.add(o.c(1), o.add(r, o.mul(o.mul(r, r), q)));
  const y = o.scale(er, k);
  // NaN needs no test of its own: it goes through every step as NaN (its payload may differ).
  return o.sel(o.lt(x, o.c(-110)), o.c(0), o.sel(o.gt(x, o.c(100)), o.c(Infinity), y));
}

/** tanh's odd series: tanh a = a + a z T(z), z = a^2, for a < 0.55 (8 terms, below 1 ulp). */
const T = [-1 / 3, 2 / 15, -17 / 315, 62 / 2835, -1382 / 155925, 21844 / 6081075, -929569 / 638512875, 6404582 / 10854718875].map(Math.fround);

/** tanh x in float32 arithmetic: the odd series below 0.55, 1 - 2/(e^(2a) + 1) above; x's sign. */
export function tanh32Of<F, M>(o: FloatOps<F, M>, x: F): F {
  const a = o.abs(x);
  const z = o.mul(a, a);
  let p = o.c(T[T.length - 1]!);
  for (let j = T.length - 2; j >= 0; j--) p = o.add(o.c(T[j]!), o.mul(z, p));
  const small = o.add(a, o.mul(a, o.mul(z, p)));
  const large = o.sub(o.c(1), o.div(o.c(2), o.add(exp32Of(o, o.add(a, a)), o.c(1))));
  return o.copysign(o.sel(o.lt(a, o.c(0.55)), small, large), x);
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
export const js32Ops: FloatOps<number, boolean> = {
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
export function lanes32Ops(body: Body, simd: boolean): FloatOps<F32Value | number, M32> {
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
      body.op(op('abs'));
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
    scale: (p, k) => {
      // k as integers (an integer-valued float of magnitude at most 160), halved: the bits of
      // k + 1.5 * 2^23 less those of 1.5 * 2^23 are k (cheaper than a saturating conversion).
      const n = body.local(simd ? V128 : I32);
      const half = body.local(simd ? V128 : I32);
      push(k);
      if (simd) body.f32x4(MAGIC32).op('f32x4.add').i32x4(MAGIC32_BITS).op('i32x4.sub');
      else body.f32(MAGIC32).op('f32.add', 'i32.reinterpret_f32').i32(MAGIC32_BITS).op('i32.sub');
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
    },
  };
}

// The JS kernels call exp32: exp32Of over js32Ops written out by hand, the same operations in the
// same order (test/kernels/vmath.test.ts checks they agree bit for bit).

const POW2_32 = Float32Array.from({ length: 161 }, (_, i) => pow2(i - 80));

/** e^x of a float32 x as weft's float32 kernels compute it. */
export function exp32(x: number): number {
  if (x !== x) return x;
  if (x < -110) return 0;
  if (x > 100) return Infinity;
  const t = Math.max(Math.min(f32(x * INV_LN2), 160), -160);
  const k = f32(f32(t + MAGIC32) - MAGIC32);
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
  } else y = f32(1 - f32(2 / f32(exp32(f32(a + a)) + 1)));
  return x < 0 || (x === 0 && 1 / x < 0) ? -y : y;
}
