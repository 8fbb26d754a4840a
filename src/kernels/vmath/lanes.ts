// The language the vector math library is written in: float64 computations over a local per
// value, emitted either for one f64 (scalar) or for two lanes of f64x2 (SIMD). Each function is
// written once against this interface, so the scalar and the SIMD versions run the same IEEE
// operations per lane and give the same bits; branches become masks and selects.
import { F64, I32, I64, V128, type Body, type Op } from '../wasm-emit.js';

/** A local holding float64 lanes. */
export interface F {
  readonly f: number;
}
/** A local holding int64 lanes (bit patterns, exponents). */
export interface I {
  readonly i: number;
}
/** A local holding a lane mask: an i32 0/1 in scalar code, all-ones/zero lanes in SIMD code. */
export interface M {
  readonly m: number;
}
/** A float operand: a local or a constant (splat to every lane). */
export type FArg = F | number;
/** An integer operand: a local or a constant. */
export type IArg = I | bigint;

type FloatOp = 'add' | 'sub' | 'mul' | 'div' | 'min' | 'max' | 'pmin' | 'pmax';
type FloatUnary = 'abs' | 'neg' | 'sqrt' | 'nearest' | 'floor' | 'ceil' | 'trunc';
type FloatCmp = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';
type IntOp = 'add' | 'sub' | 'and' | 'or' | 'xor';
type Shift = 'shl' | 'shr_s' | 'shr_u';

/** 1.5 * 2^52: adding it to an integer-valued float of magnitude below 2^51 puts the integer in the low bits. */
const MAGIC = 6755399441055744;
const MAGIC_BITS = 0x4338000000000000n;

export class Lanes {
  /** The local type of a float or int value. */
  readonly #t: typeof F64 | typeof V128;

  constructor(
    readonly body: Body,
    readonly simd: boolean,
  ) {
    this.#t = simd ? V128 : F64;
  }

  /** The parameter `index` as a float value. */
  param(index: number): F {
    return { f: index };
  }

  #pushF(a: FArg): void {
    if (typeof a === 'number') {
      if (this.simd) this.body.f64x2(a);
      else this.body.f64(a);
    } else this.body.get(a.f);
  }

  #pushI(a: IArg): void {
    if (typeof a === 'bigint') {
      if (this.simd) this.body.i64x2(a);
      else this.body.i64(a);
    } else this.body.get(a.i);
  }

  #newF(): F {
    const f = this.body.local(this.#t);
    this.body.set(f);
    return { f };
  }

  #newI(): I {
    const i = this.body.local(this.simd ? V128 : I64);
    this.body.set(i);
    return { i };
  }

  #newM(): M {
    const m = this.body.local(this.simd ? V128 : I32);
    this.body.set(m);
    return { m };
  }

  #f(op: FloatOp | FloatUnary | FloatCmp): Op {
    return `${this.simd ? 'f64x2' : 'f64'}.${op}` as Op;
  }

  /** A float value held in a local (a constant materialized, a local passed through). */
  val(a: FArg): F {
    if (typeof a !== 'number') return a;
    this.#pushF(a);
    return this.#newF();
  }

  /** A fresh local holding a copy of `a`: for values reassigned in a loop of code generation. */
  copy(a: FArg): F {
    this.#pushF(a);
    return this.#newF();
  }

  #bin(op: FloatOp, a: FArg, b: FArg): F {
    this.#pushF(a);
    this.#pushF(b);
    this.body.op(this.#f(op));
    return this.#newF();
  }

  add(a: FArg, b: FArg): F { return this.#bin('add', a, b); }
  sub(a: FArg, b: FArg): F { return this.#bin('sub', a, b); }
  mul(a: FArg, b: FArg): F { return this.#bin('mul', a, b); }
  div(a: FArg, b: FArg): F { return this.#bin('div', a, b); }
  /**
   * min and max of a value `a` and a bound `b` (see FloatOps.min): in SIMD lanes wasm's pmin and
   * pmax (b < a ? b : a; one instruction, where V8 spends several on IEEE's), which keep a NaN
   * `a`; scalar IEEE min and max.
   */
  min(a: FArg, b: FArg): F { return this.#bin(this.simd ? 'pmin' : 'min', a, b); }
  max(a: FArg, b: FArg): F { return this.#bin(this.simd ? 'pmax' : 'max', a, b); }

  #un(op: FloatUnary, a: FArg): F {
    this.#pushF(a);
    this.body.op(this.#f(op));
    return this.#newF();
  }

  abs(a: FArg): F { return this.#sign('abs', a); }
  neg(a: FArg): F { return this.#sign('neg', a); }
  #sign(op: 'abs' | 'neg', a: FArg): F {
    this.#pushF(a);
    this.body.signOp(op, this.simd ? 'f64x2' : 'f64');
    return this.#newF();
  }
  sqrt(a: FArg): F { return this.#un('sqrt', a); }
  /** Round to the nearest integer, ties to even. */
  nearest(a: FArg): F { return this.#un('nearest', a); }
  floor(a: FArg): F { return this.#un('floor', a); }
  trunc(a: FArg): F { return this.#un('trunc', a); }

  /** Horner's scheme: c[0] + z*(c[1] + z*(c[2] + ...)). */
  poly(z: F, c: readonly number[]): F {
    let acc: FArg = c[c.length - 1]!;
    for (let k = c.length - 2; k >= 0; k--) acc = this.add(c[k]!, this.mul(z, acc));
    return this.val(acc);
  }

  #cmp(op: FloatCmp, a: FArg, b: FArg): M {
    this.#pushF(a);
    this.#pushF(b);
    this.body.op(this.#f(op));
    return this.#newM();
  }

  eq(a: FArg, b: FArg): M { return this.#cmp('eq', a, b); }
  ne(a: FArg, b: FArg): M { return this.#cmp('ne', a, b); }
  lt(a: FArg, b: FArg): M { return this.#cmp('lt', a, b); }
  le(a: FArg, b: FArg): M { return this.#cmp('le', a, b); }
  gt(a: FArg, b: FArg): M { return this.#cmp('gt', a, b); }
  ge(a: FArg, b: FArg): M { return this.#cmp('ge', a, b); }
  isNaN(a: F): M { return this.ne(a, a); }

  and(a: M, b: M): M {
    this.body.get(a.m).get(b.m).op(this.simd ? 'v128.and' : 'i32.and');
    return this.#newM();
  }
  or(a: M, b: M): M {
    this.body.get(a.m).get(b.m).op(this.simd ? 'v128.or' : 'i32.or');
    return this.#newM();
  }
  not(a: M): M {
    this.body.get(a.m).op(this.simd ? 'v128.not' : 'i32.eqz');
    return this.#newM();
  }

  /** `a` where the mask holds, else `b`. */
  sel(m: M, a: FArg, b: FArg): F {
    this.#pushF(a);
    this.#pushF(b);
    this.body.get(m.m).op(this.simd ? 'v128.bitselect' : 'select');
    return this.#newF();
  }

  selI(m: M, a: IArg, b: IArg): I {
    this.#pushI(a);
    this.#pushI(b);
    this.body.get(m.m).op(this.simd ? 'v128.bitselect' : 'select');
    return this.#newI();
  }

  /** Pushes an i32: nonzero when the mask holds in any lane (for `if`). */
  pushAny(m: M): void {
    this.body.get(m.m);
    if (this.simd) this.body.op('v128.any_true');
  }

  /** `|a|` with the sign of `s`. */
  copysign(a: FArg, s: FArg): F {
    if (!this.simd) {
      this.#pushF(a);
      this.#pushF(s);
      this.body.op('f64.copysign');
      return this.#newF();
    }
    const sign = this.iand(this.bits(this.val(s)), -0x8000000000000000n);
    return this.fromBits(this.ior(this.iand(this.bits(this.val(a)), 0x7fffffffffffffffn), sign));
  }

  /** The sign bit of `s` xored into `a` (a * sign(s) for s nonzero, without a multiply). */
  xorsign(a: FArg, s: FArg): F {
    const sign = this.iand(this.bits(this.val(s)), -0x8000000000000000n);
    return this.fromBits(this.ixor(this.bits(this.val(a)), sign));
  }

  /** The bits of a float. */
  bits(a: F): I {
    this.body.get(a.f);
    if (!this.simd) this.body.op('i64.reinterpret_f64');
    return this.#newI();
  }

  /** The float with these bits. */
  fromBits(a: IArg): F {
    this.#pushI(a);
    if (!this.simd) this.body.op('f64.reinterpret_i64');
    return this.#newF();
  }

  #ibin(op: IntOp, a: IArg, b: IArg): I {
    this.#pushI(a);
    this.#pushI(b);
    this.body.op(this.simd ? (op === 'add' || op === 'sub' ? (`i64x2.${op}` as Op) : (`v128.${op}` as Op)) : (`i64.${op}` as Op));
    return this.#newI();
  }

  iadd(a: IArg, b: IArg): I { return this.#ibin('add', a, b); }
  isub(a: IArg, b: IArg): I { return this.#ibin('sub', a, b); }
  iand(a: IArg, b: IArg): I { return this.#ibin('and', a, b); }
  ior(a: IArg, b: IArg): I { return this.#ibin('or', a, b); }
  ixor(a: IArg, b: IArg): I { return this.#ibin('xor', a, b); }

  #shift(op: Shift, a: IArg, k: number): I {
    this.#pushI(a);
    if (this.simd) this.body.i32(k).op(`i64x2.${op}` as Op);
    else this.body.i64(BigInt(k)).op(`i64.${op}` as Op);
    return this.#newI();
  }

  shl(a: IArg, k: number): I { return this.#shift('shl', a, k); }
  shrS(a: IArg, k: number): I { return this.#shift('shr_s', a, k); }
  shrU(a: IArg, k: number): I { return this.#shift('shr_u', a, k); }

  ieq(a: IArg, b: IArg): M {
    this.#pushI(a);
    this.#pushI(b);
    this.body.op(this.simd ? 'i64x2.eq' : 'i64.eq');
    return this.#newM();
  }
  /** Signed a > b. */
  igt(a: IArg, b: IArg): M {
    this.#pushI(a);
    this.#pushI(b);
    this.body.op(this.simd ? 'i64x2.gt_s' : 'i64.gt_s');
    return this.#newM();
  }

  /** The integer value of an integer-valued float of magnitude below 2^51 (exact). */
  toInt(a: F): I {
    return this.isub(this.bits(this.add(a, MAGIC)), MAGIC_BITS);
  }

  /** The float value of an integer of magnitude below 2^51 (exact). */
  toFloat(a: IArg): F {
    return this.sub(this.fromBits(this.iadd(a, MAGIC_BITS)), MAGIC);
  }

  /** 2^k for integer k in [-1022, 1023], as a float. */
  pow2(k: IArg): F {
    return this.fromBits(this.shl(this.iadd(k, 1023n), 52));
  }

  /** Keeps only the high `keep` bits of the significand (trailing bits zero): a value whose products with short constants are exact. */
  truncBits(a: F, dropped: number): F {
    return this.fromBits(this.iand(this.bits(a), -(1n << BigInt(dropped))));
  }
}
