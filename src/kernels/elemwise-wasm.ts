// WebAssembly SIMD loops for element-wise programs (elemwise-program.ts): a fused computation is
// compiled into a loop over the arena's shared memory that takes four elements at a time (two
// when every value is float64 or bool), each value in v128 lanes of its dtype (float64 values of
// four elements in two vectors, bools as lane masks), then a scalar tail. Only IEEE-exact
// operations are used, each rounded as the JS loops round it, and the math functions are weft's
// own (vmath), so both give the same bits on any engine. A module is compiled once per program
// and layout, and instantiated once per memory, on each thread.
import { flatAccess } from './elemwise.js';
import {
  COMPARISONS,
  comparisonDtype,
  outputDtype,
  programKey,
  programProblem,
  valueDtype,
  type ElemwiseProgram,
  type NumberDtype,
  type ProgramDtype,
  type ProgramOp,
  type ProgramStep,
} from './elemwise-program.js';
import { attachedMemoryOf, threadBlockOf } from './gemm-wasm.js';
import { argumentLimit, emitBinaryFunction, emitFunction, isBinaryMathFunction, isMathFunction, mathArity } from './vmath/wasm-library.js';
import { Body, F32, F64, HIGH_HALF, I32, LOW_HALVES, ModuleBuilder, V128, type MemoryOp, type Op, type ValType } from './wasm-emit.js';
import { isContiguous, type Range, type TensorView } from './view.js';
import { instanceFor } from './wasm-instances.js';

export * from './elemwise-program.js';

/**
 * How an input is read: element i of a contiguous array ('c'), one value everywhere ('s'), or
 * element i at a byte stride given as a further parameter of the loop ('g', gathered lane by lane).
 */
export type WasmAccess = 'c' | 's' | 'g';

/**
 * The loop of one program and layout: (start, end, output address, input addresses...) gives the
 * element where it stopped: `end`, or the first element of a block holding an argument beyond a
 * math function's limit (arguments the JS loops reduce exactly), nothing of that block stored.
 */
type Loop = (start: number, end: number, out: number, ...inputs: number[]) => number;

/** log2 of the bytes of an element. */
const SHIFT: Record<ProgramDtype, number> = { float32: 2, int32: 2, float64: 3, bool: 0 };
const SCALAR: Record<ProgramDtype, ValType> = { float32: F32, float64: F64, int32: I32, bool: I32 };
const SIMD_PREFIX = { float32: 'f32x4', float64: 'f64x2', int32: 'i32x4' } as const;
const SCALAR_PREFIX = { float32: 'f32', float64: 'f64', int32: 'i32' } as const;
/** The integer comparisons' and extremes' signed instruction names. */
const SIGNED: Partial<Record<ProgramOp, string>> = { lt: 'lt_s', le: 'le_s', gt: 'gt_s', ge: 'ge_s', min: 'min_s', max: 'max_s' };

/** The low 32 bits of each 64-bit lane of two v128s: two i64x2 masks as one i32x4 mask. */
const NARROW_64 = [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27];
/** Byte 0 and byte 8 to bytes 0 and 1: an i64x2 mask as two bytes. */
const MASK_64_BYTES = [0, 8, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8];

/**
 * The form a value takes in the loop: its dtype, or 'bool64' (a bool as two i64x2 masks of four
 * elements, as float64 operations of a four-element block need it).
 */
type Form = ProgramDtype | 'bool64';

/**
 * One part of the loop (the SIMD block or the scalar tail) under construction: the locals of
 * each value in each form it is needed in, made on first use (the loop body is straight-line).
 */
interface Part {
  readonly body: Body;
  readonly module: ModuleBuilder;
  /** Elements per iteration: 4, 2, or 1 (the scalar tail). */
  readonly block: 1 | 2 | 4;
  readonly forms: Map<Form, number[]>[];
}

const isSimd = (p: Part): boolean => p.block > 1;
/** The vectors of a value of `form` in part `p`: float64 of a four-element block takes two. */
const partsOf = (p: Part, form: Form): number => (p.block === 4 && (form === 'float64' || form === 'bool64') ? 2 : 1);

function locals(p: Part, form: Form): number[] {
  const t = isSimd(p) ? V128 : SCALAR[form === 'bool64' ? 'bool' : form];
  return Array.from({ length: partsOf(p, form) }, () => p.body.local(t));
}

/** Sets `a`'s locals of `form` from the values the emitter `fill` leaves on the stack, one per part. */
function define(p: Part, a: number, form: Form, fill: (part: number) => void): number[] {
  const out = locals(p, form);
  out.forEach((l, k) => {
    fill(k);
    p.body.set(l);
  });
  p.forms[a]!.set(form, out);
  return out;
}

/** A vector of zeros, or of one constant, in `form`'s lanes. */
function splatConst(p: Part, form: NumberDtype, x: number): void {
  if (!isSimd(p)) {
    if (form === 'float32') p.body.f32(x);
    else if (form === 'float64') p.body.f64(x);
    else p.body.i32(x);
  } else if (form === 'float32') p.body.f32x4(x);
  else if (form === 'float64') p.body.f64x2(x);
  else p.body.i32x4(x);
}

/**
 * The locals of value `a` in `form`, converted from the form it has (see converts() for which
 * conversions programs use; each here is exact, or the one IEEE rounding a cast asks for).
 */
function value(p: Part, a: number, form: Form): number[] {
  const known = p.forms[a]!;
  const hit = known.get(form);
  if (hit) return hit;
  const b = p.body;
  const [from, have] = [...known.entries()][0]!;
  const get = (k = 0): Body => b.get(have[k] ?? have[0]!);
  if (!isSimd(p)) return define(p, a, form, () => scalarConvert(p, from === 'bool64' ? 'bool' : from, form as ProgramDtype, () => get()));
  // Bools: masks of 32-bit lanes (four elements), of 64-bit lanes, or numbers 1 and 0.
  if (form === 'bool64') {
    // Two elements: one i64x2 mask is both forms.
    if (p.block === 2) {
      const m = value(p, a, 'bool');
      known.set(form, m);
      return m;
    }
    const m = value(p, a, 'bool')[0]!;
    return define(p, a, form, (k) => b.get(m).op(k === 0 ? 'i64x2.extend_low_i32x4_s' : 'i64x2.extend_high_i32x4_s'));
  }
  if (from === 'bool' || from === 'bool64') {
    if (form === 'bool') return define(p, a, form, () => get(0).get(have[1] ?? have[0]!).shuffle(NARROW_64));
    // A mask used as a number: 1 where it holds, else 0.
    const mask = form === 'float64' ? value(p, a, 'bool64') : value(p, a, 'bool');
    return define(p, a, form, (k) => {
      b.get(mask[k]!);
      splatConst(p, form, 1);
      b.op('v128.and');
    });
  }
  if (form === 'bool') {
    // A number as a condition: true unless 0 (NaN is true, as the JS loops' x !== 0).
    if (from === 'float64' && p.block === 4) return define(p, a, form, () => {
      for (const k of [0, 1]) get(k).f64x2(0).op('f64x2.ne');
      b.shuffle(NARROW_64);
    });
    const ne = `${SIMD_PREFIX[from]}.ne` as Op;
    return define(p, a, form, () => {
      get();
      splatConst(p, from, 0);
      b.op(ne);
    });
  }
  if (form === 'float64') {
    const widen = from === 'float32' ? 'f64x2.promote_low_f32x4' : 'f64x2.convert_low_i32x4_s';
    return define(p, a, form, (k) => {
      get();
      if (k === 1) get().shuffle(HIGH_HALF);
      b.op(widen);
    });
  }
  if (form === 'int32') {
    // A float as JS's x | 0: float64 lanes (float32 promoted; a block holding int32 values has
    // four elements, two vectors of them) wrapped into [-2^31, 2^31), converted, packed.
    const wide = value(p, a, 'float64');
    return define(p, a, form, () => {
      for (const [k, l] of wide.entries()) {
        b.get(l);
        wrapToInt32(p);
        b.op('i32x4.trunc_sat_f64x2_s_zero');
        if (k === 1) b.shuffle(LOW_HALVES);
      }
    });
  }
  if (form === 'float32' && from === 'int32') return define(p, a, form, () => get().op('f32x4.convert_i32x4_s'));
  if (form === 'float32' && from === 'float64') {
    return define(p, a, form, () => get(0).op('f32x4.demote_f64x2_zero').get(have[1]!).op('f32x4.demote_f64x2_zero').shuffle(LOW_HALVES));
  }
  throw new Error(`elemwise-wasm: no conversion from ${from} to ${form}`);
}

/**
 * The float64 on the stack (f64 or f64x2 lanes, in part `p`) as JS's ToInt32 sees it, still a
 * float: truncated, reduced modulo 2^32 into [-2^31, 2^31) (each step exact), NaN and infinities 0.
 */
function wrapToInt32(p: Part): void {
  const b = p.body;
  const f = isSimd(p) ? 'f64x2' : 'f64';
  const [t, r] = [b.local(isSimd(p) ? V128 : F64), b.local(isSimd(p) ? V128 : F64)];
  b.op(`${f}.trunc` as Op).tee(t);
  splatConst(p, 'float64', 2 ** -32);
  b.op(`${f}.mul` as Op, `${f}.floor` as Op);
  splatConst(p, 'float64', 2 ** 32);
  b.op(`${f}.mul` as Op).set(r);
  b.get(t).get(r).op(`${f}.sub` as Op).tee(r);
  // r in [0, 2^32): above 2^31 - 1 it is r - 2^32.
  splatConst(p, 'float64', 2 ** 32);
  b.op(`${f}.sub` as Op).get(r);
  b.get(r);
  splatConst(p, 'float64', 2 ** 31);
  b.op(`${f}.ge` as Op).op(isSimd(p) ? 'v128.bitselect' : 'select').set(r);
  // NaN (from NaN or an infinity) is 0.
  b.get(r);
  splatConst(p, 'float64', 0);
  b.get(r).get(r).op(`${f}.eq` as Op).op(isSimd(p) ? 'v128.bitselect' : 'select');
}

/** The scalar conversion of the value `push` leaves on the stack from `from` to `to`. */
function scalarConvert(p: Part, from: ProgramDtype, to: ProgramDtype, push: () => void): void {
  const b = p.body;
  push();
  if (from === to || (from === 'bool' && to === 'int32')) return;
  if (to === 'int32') {
    if (from === 'float32') b.op('f64.promote_f32');
    wrapToInt32(p);
    b.op('i32.trunc_sat_f64_s');
    return;
  }
  if (to === 'bool') {
    if (from === 'float32') b.f32(0).op('f32.ne');
    else if (from === 'float64') b.f64(0).op('f64.ne');
    else b.i32(0).op('i32.ne');
    return;
  }
  const op = ({
    'float64>float32': 'f32.demote_f64', 'int32>float32': 'f32.convert_i32_s', 'bool>float32': 'f32.convert_i32_s',
    'float32>float64': 'f64.promote_f32', 'int32>float64': 'f64.convert_i32_s', 'bool>float64': 'f64.convert_i32_s',
  } as Record<string, Op>)[`${from}>${to}`];
  if (!op) throw new Error(`elemwise-wasm: no conversion from ${from} to ${to}`);
  b.op(op);
}

/**
 * Appends one step's instructions: its value's locals are set (value `a` of `program`). A math
 * function with an argument limit first returns the block's first element when an argument
 * (finite) lies beyond it, before anything of the block is stored.
 */
function emitStep(p: Part, program: ElemwiseProgram, step: ProgramStep, a: number, index: number): void {
  const b = p.body;
  const d = step.dtype;
  const simd = isSimd(p);
  if (step.op === 'const') {
    // A bool constant is a mask (all ones for true) in the block, 1 or 0 in the tail.
    const v = step.value!;
    if (d === 'bool') define(p, a, d, () => (simd ? splatConst(p, 'int32', v ? -1 : 0) : b.i32(v)));
    else define(p, a, d, () => splatConst(p, d, v));
    return;
  }
  if (COMPARISONS.has(step.op)) {
    const c = comparisonDtype(step.args.map((x) => valueDtype(program, x)));
    const [x, y] = step.args.map((v) => value(p, v, c)) as [number[], number[]];
    const name = c === 'int32' ? (SIGNED[step.op] ?? step.op) : step.op;
    const op = `${simd ? SIMD_PREFIX[c] : SCALAR_PREFIX[c]}.${name}` as Op;
    // float64 comparisons of four elements give two i64x2 masks.
    define(p, a, c === 'float64' && p.block === 4 ? 'bool64' : 'bool', (k) => b.get(x[k]!).get(y[k]!).op(op));
    return;
  }
  if (step.op === 'where') {
    const [c, x, y] = step.args as [number, number, number];
    const mask = value(p, c, simd && d === 'float64' ? 'bool64' : 'bool');
    const [vx, vy] = [value(p, x, d), value(p, y, d)];
    define(p, a, d, (k) => b.get(vx[k]!).get(vy[k]!).get(mask[k]!).op(simd ? 'v128.bitselect' : 'select'));
    return;
  }
  if (step.op === 'cast') {
    p.forms[a]!.set(d, value(p, step.args[0]!, d));
    return;
  }
  if (d === 'bool') {
    // Logical operations on masks (or on 0 and 1 in the scalar tail).
    const [x, y] = step.args.map((v) => value(p, v, 'bool'));
    if (step.op === 'not') define(p, a, d, () => (simd ? b.get(x![0]!).op('v128.not') : b.get(x![0]!).op('i32.eqz')));
    else define(p, a, d, () => b.get(x![0]!).get(y![0]!).op(simd ? (`v128.${step.op}` as Op) : (`i32.${step.op}` as Op)));
    return;
  }
  const number = d as NumberDtype;
  const prefix = simd ? SIMD_PREFIX[number] : SCALAR_PREFIX[number];
  const args = step.args.map((v) => value(p, v, d));
  const [first, ...rest] = args as [number[], ...number[][]];
  const limit = isMathFunction(step.op) ? argumentLimit(step.op) : undefined;
  if (limit !== undefined) emitLimitCheck(p, d as 'float32' | 'float64', first, limit, index);
  define(p, a, d, (k) => {
    b.get(first[k]!);
    if (isMathFunction(step.op)) {
      emitFunction(b, step.op, prefix as 'f32' | 'f64' | 'f32x4' | 'f64x2', p.module);
      return;
    }
    if (isBinaryMathFunction(step.op)) {
      emitBinaryFunction(b.get(rest[0]![k]!), step.op, prefix as 'f32' | 'f64' | 'f32x4' | 'f64x2', p.module);
      return;
    }
    if (d === 'int32') return integerStep(p, step.op, first[k]!, rest.map((r) => r[k]!));
    switch (step.op) {
      case 'sqr':
        b.get(first[k]!).op(`${prefix}.mul` as Op);
        return;
      case 'neg':
      case 'abs':
        b.signOp(step.op, prefix as 'f32' | 'f64' | 'f32x4' | 'f64x2');
        return;
      case 'sqrt':
      case 'floor':
      case 'ceil':
      case 'trunc':
        b.op(`${prefix}.${step.op}` as Op);
        return;
      case 'round':
        // IEEE's roundTiesToEven is NumPy's round (and the JS loops' roundHalfEven).
        b.op(`${prefix}.nearest` as Op);
        return;
      case 'clip':
        b.get(rest[0]![k]!).op(`${prefix}.max` as Op).get(rest[1]![k]!).op(`${prefix}.min` as Op);
        return;
      case 'sign':
        return floatSign(p, number as 'float32' | 'float64', first[k]!);
      default:
        // Variadic add and mul fold from the left, each partial result rounded (as the JS loops).
        for (const r of rest) b.get(r[k]!).op(`${prefix}.${step.op}` as Op);
    }
  });
}

/**
 * sign x of the float on the stack (local `x`): 1 above 0, -1 below, 0 for either zero (+0, as
 * the JS loops' sign), NaN for NaN: x, then 0, -1 and 1 chosen where those tests hold.
 */
function floatSign(p: Part, d: 'float32' | 'float64', x: number): void {
  const b = p.body;
  const prefix = isSimd(p) ? SIMD_PREFIX[d] : SCALAR_PREFIX[d];
  const choose = (value: number, test: 'eq' | 'lt' | 'gt'): void => {
    const kept = b.local(isSimd(p) ? V128 : SCALAR[d]);
    b.set(kept);
    splatConst(p, d, value);
    b.get(kept).get(x);
    splatConst(p, d, 0);
    b.op(`${prefix}.${test}` as Op).op(isSimd(p) ? 'v128.bitselect' : 'select');
  };
  choose(0, 'eq');
  choose(-1, 'lt');
  choose(1, 'gt');
}

/** An int32 step (its first operand already on the stack): arithmetic modulo 2^32, bitwise operations. */
function integerStep(p: Part, op: ProgramOp, first: number, rest: readonly number[]): void {
  const b = p.body;
  if (op === 'sign') {
    // (x < 0) - (x > 0) on masks (-1 where true), or (x > 0) - (x < 0) on 0 and 1.
    const [lt, gt] = isSimd(p) ? ['i32x4.lt_s', 'i32x4.gt_s'] as const : ['i32.gt_s', 'i32.lt_s'] as const;
    b.op('drop').get(first);
    splatConst(p, 'int32', 0);
    b.op(lt).get(first);
    splatConst(p, 'int32', 0);
    b.op(gt).op(isSimd(p) ? 'i32x4.sub' : 'i32.sub');
    return;
  }
  if (op === 'clip') {
    integerStep(p, 'max', first, [rest[0]!]);
    const kept = b.local(isSimd(p) ? V128 : I32);
    b.set(kept).get(kept);
    integerStep(p, 'min', kept, [rest[1]!]);
    return;
  }
  if (isSimd(p)) {
    if (op === 'sqr') b.get(first).op('i32x4.mul');
    else if (op === 'neg' || op === 'abs') b.op(`i32x4.${op}`);
    else if (op === 'not') b.op('v128.not');
    else for (const r of rest) b.get(r).op(op === 'and' || op === 'or' || op === 'xor' ? `v128.${op}` : (`i32x4.${SIGNED[op] ?? op}` as Op));
    return;
  }
  switch (op) {
    case 'sqr': b.get(first).op('i32.mul'); return;
    case 'neg': b.op('drop').i32(0).get(first).op('i32.sub'); return;
    case 'not': b.i32(-1).op('i32.xor'); return;
    // |x| as (x xor s) - s with s = x >> 31: abs(-2^31) wraps to -2^31, as Math.abs(x) | 0 does.
    case 'abs': b.get(first).i32(31).op('i32.shr_s').op('i32.xor').get(first).i32(31).op('i32.shr_s').op('i32.sub'); return;
    case 'min':
    case 'max':
      b.get(rest[0]!).get(first).get(rest[0]!).op(op === 'min' ? 'i32.lt_s' : 'i32.gt_s').op('select');
      return;
    default:
      for (const r of rest) b.get(r).op(`i32.${op}` as Op);
  }
}

/**
 * Returns the block's first element (`index`) when a finite argument of the block lies beyond a
 * math function's limit: the JS loops (same bits below it, an exact reduction beyond) take it.
 */
function emitLimitCheck(p: Part, d: 'float32' | 'float64', x: readonly number[], limit: number, index: number): void {
  const b = p.body;
  // The least value of d at or above the limit: arguments at or above it are beyond.
  const bound = d === 'float32' && Math.fround(limit) < limit ? Math.fround(limit) + 2 ** (Math.floor(Math.log2(limit)) - 23) : limit;
  const prefix = isSimd(p) ? SIMD_PREFIX[d] : SCALAR_PREFIX[d];
  const magnitude = b.local(isSimd(p) ? V128 : SCALAR[d]);
  x.forEach((l, k) => {
    b.get(l).signOp('abs', prefix).tee(magnitude);
    splatConst(p, d, bound);
    b.op(`${prefix}.ge` as Op);
    b.get(magnitude);
    splatConst(p, d, Infinity);
    b.op(`${prefix}.lt` as Op).op(isSimd(p) ? 'v128.and' : 'i32.and');
    if (k > 0) b.op(isSimd(p) ? 'v128.or' : 'i32.or');
  });
  if (isSimd(p)) b.op('v128.any_true');
  b.if().get(index).op('return').end();
}

/**
 * The bytes (0 or 1, or any nonzero for true) in the low lanes of the v128 on the stack, one per
 * element of the block, as the block's bool masks: 32-bit lanes, or 64-bit of a two-element block.
 */
function bytesToMasks(p: Part): void {
  p.body.i32(0).op('i8x16.splat', 'i8x16.ne', 'i16x8.extend_low_i8x16_s', 'i32x4.extend_low_i16x8_s');
  if (p.block === 2) p.body.op('i64x2.extend_low_i32x4_s');
}

/**
 * Loads the block's elements of a strided input as value `a`, lane by lane: element i + j at
 * `at` + j `stride` bytes, `at` being element i's address.
 */
function gather(p: Part, a: number, d: ProgramDtype, at: number, stride: number): void {
  const b = p.body;
  const lane = (j: number): void => {
    b.get(at);
    if (j > 0) b.get(stride).i32(j).op('i32.mul').i32Add();
  };
  if (d === 'bool') {
    // Bytes into lanes 0..block-1, then spread to masks as a contiguous load's.
    define(p, a, 'bool', () => {
      b.i32x4(0);
      const v = b.local(V128);
      b.set(v);
      for (let j = 0; j < p.block; j++) {
        lane(j);
        b.get(v).memLane('v128.load8_lane', j).set(v);
      }
      b.get(v);
      bytesToMasks(p);
    });
    return;
  }
  const wide = d === 'float64';
  const perVector = wide ? 2 : 4;
  define(p, a, d, (k) => {
    const v = b.local(V128);
    for (let j = 0; j < perVector; j++) {
      lane(k * perVector + j);
      if (j === 0) b.mem(wide ? 'v128.load64_zero' : 'v128.load32_zero');
      else b.get(v).memLane(wide ? 'v128.load64_lane' : 'v128.load32_lane', j);
      b.set(v);
    }
    b.get(v);
  });
}

/** Loads element i of a contiguous input (its address on the stack) as value `a`. */
function load(p: Part, a: number, d: ProgramDtype, address: () => void): void {
  const b = p.body;
  if (!isSimd(p)) {
    define(p, a, d, () => {
      address();
      b.mem(d === 'bool' ? 'i32.load8_u' : (`${SCALAR_PREFIX[d]}.load` as MemoryOp));
      // A stored bool is a byte: nonzero is true, kept as 1 and 0 in the tail.
      if (d === 'bool') b.i32(0).op('i32.ne');
    });
    return;
  }
  if (d !== 'bool') {
    define(p, a, d, (k) => {
      address();
      b.v128Load(k * 16);
    });
    return;
  }
  // Four (or two) bytes, spread to 32-bit (or 64-bit) masks.
  define(p, a, 'bool', () => {
    address();
    b.mem(p.block === 4 ? 'v128.load32_zero' : 'v128.load16_splat');
    bytesToMasks(p);
  });
}

/** Stores value `a` (the output) at the address on the stack. */
function store(p: Part, a: number, d: ProgramDtype, address: () => void): void {
  const b = p.body;
  const v = value(p, a, d);
  if (!isSimd(p)) {
    address();
    b.get(v[0]!).mem(d === 'bool' ? 'i32.store8' : (`${SCALAR_PREFIX[d]}.store` as MemoryOp));
    return;
  }
  if (d !== 'bool') {
    v.forEach((l, k) => {
      address();
      b.get(l).v128Store(k * 16);
    });
    return;
  }
  // Masks to bytes 1 and 0.
  address();
  b.get(v[0]!);
  if (p.block === 4) b.get(v[0]!).op('i16x8.narrow_i32x4_s').get(v[0]!).get(v[0]!).op('i16x8.narrow_i32x4_s').op('i8x16.narrow_i16x8_s');
  else b.get(v[0]!).shuffle(MASK_64_BYTES);
  b.i32(1).op('i8x16.splat', 'v128.and').memLane(p.block === 4 ? 'v128.store32_lane' : 'v128.store16_lane', 0);
}

/** SIMD blocks per iteration of the loop. */
const UNROLL = 2;

/** Elements per SIMD iteration: two when every value is float64 or bool, else four. */
function blockOf(program: ElemwiseProgram): 2 | 4 {
  const dtypes = [...program.inputs, ...program.steps.map((s) => s.dtype)];
  return dtypes.every((d) => d === 'float64' || d === 'bool') ? 2 : 4;
}

/**
 * The loop's function: parameters (start, end, out, in0, in1, ...) as element indices and byte
 * addresses, result the element where it stopped (see Loop). The SIMD part takes a block of
 * elements at a time, the tail one at a time.
 */
function loopBody(program: ElemwiseProgram, access: readonly WasmAccess[], module: ModuleBuilder): Body {
  const problem = programProblem(program, mathArity);
  if (problem) throw new RangeError(`elemwise program: ${problem}`);
  const nin = program.inputs.length;
  const gathered = access.filter((a) => a === 'g').length;
  const body = new Body([I32, I32, I32, ...Array<typeof I32>(nin + gathered).fill(I32)], [I32]).hoistConstants();
  const [START, END, OUT] = [0, 1, 2];
  const arg = (k: number): number => 3 + k;
  /** The byte stride parameter of gathered input k (after the addresses, in input order). */
  const strideOf = (k: number): number => 3 + nin + access.slice(0, k).filter((a) => a === 'g').length;
  const i = body.local(I32);
  const out = outputDtype(program);
  const address = (base: number, d: ProgramDtype) => (): void => {
    body.get(base).get(i);
    if (SHIFT[d] > 0) body.i32(SHIFT[d]).op('i32.shl');
    body.i32Add();
  };
  const block = blockOf(program);
  // Broadcast inputs are read once, before the loops: their scalar, then its splat.
  const tail: Part = { body, module, block: 1, forms: [] };
  const simd: Part = { body, module, block, forms: [] };
  const once = program.inputs.map((d, k) => {
    if (access[k] !== 's') return undefined;
    const scalar = body.local(SCALAR[d]);
    body.get(arg(k));
    if (d === 'bool') body.mem('i32.load8_u').i32(0).op('i32.ne');
    else body.mem(`${SCALAR_PREFIX[d]}.load` as MemoryOp);
    body.set(scalar);
    const vector = body.local(V128);
    if (d === 'bool') {
      // 1 or 0 as an all-ones or zero mask.
      body.i32(0).get(scalar).op('i32.sub');
      if (block === 2) body.op('i64.extend_i32_s', 'i64x2.splat');
      else body.op('i32x4.splat');
    } else body.get(scalar).op(`${SIMD_PREFIX[d]}.splat` as Op);
    body.set(vector);
    return { scalar, vector };
  });
  const run = (p: Part): void => {
    p.forms.length = 0;
    for (let a = 0; a < nin + program.steps.length; a++) p.forms.push(new Map());
    program.inputs.forEach((d, k) => {
      const o = once[k];
      if (access[k] === 'g') {
        // Element i's address: the base plus i strides.
        const at = body.local(I32);
        body.get(arg(k)).get(i).get(strideOf(k)).op('i32.mul').i32Add().set(at);
        if (isSimd(p)) gather(p, k, d, at, strideOf(k));
        else load(p, k, d, () => body.get(at));
        return;
      }
      if (!o) return load(p, k, d, address(arg(k), d));
      // A splat float64 of four elements is the same vector twice.
      p.forms[k]!.set(d, isSimd(p) ? Array(partsOf(p, d)).fill(o.vector) : [o.scalar]);
    });
    program.steps.forEach((s, j) => emitStep(p, program, s, nin + j, i));
    store(p, nin + program.steps.length - 1, out, address(OUT, out));
  };
  body.get(START).set(i);
  // SIMD, UNROLL blocks an iteration while i + UNROLL block <= end: fewer of the loop's branches
  // and counter updates, and the blocks' independent work side by side.
  body.block().loop();
  body.get(i).i32(UNROLL * block).i32Add().get(END).op('i32.gt_s').brIf(1);
  for (let u = 0; u < UNROLL; u++) {
    run(simd);
    body.get(i).i32(block).i32Add().set(i);
  }
  body.br(0);
  body.end().end();
  // SIMD: while i + block <= end (one block at most).
  body.block().loop();
  body.get(i).i32(block).i32Add().get(END).op('i32.gt_s').brIf(1);
  run(simd);
  body.get(i).i32(block).i32Add().set(i).br(0);
  body.end().end();
  // The tail: while i < end.
  body.block().loop();
  body.get(i).get(END).op('i32.ge_s').brIf(1);
  run(tail);
  body.get(i).i32(1).i32Add().set(i).br(0);
  body.end().end();
  body.get(END);
  return body;
}

/** The module bytes of the loop for `program` over inputs read as `access`, exported as `run`. */
export function loopModuleBytes(program: ElemwiseProgram, access: readonly WasmAccess[]): Uint8Array<ArrayBuffer> {
  const module = new ModuleBuilder();
  // The loop is function 0's slot, reserved before its body adds the math functions it calls.
  module.export('run', module.function('run', () => loopBody(program, access, module)));
  return module.bytes();
}

/** Why `program` cannot run as a WebAssembly loop (the step and the reason), or undefined when it can. */
export function whyNotRunnable(program: ElemwiseProgram): string | undefined {
  return programProblem(program, mathArity);
}

/** Whether `program` can run as a WebAssembly loop (the tensor layer offers only such programs). */
export function isRunnable(program: ElemwiseProgram): boolean {
  return whyNotRunnable(program) === undefined;
}

/** Programs' keys, by program object (a kernel gets the same object at every call of a plan). */
const keys = new WeakMap<ElemwiseProgram, string>();
/**
 * Loops already found, by memory, program object and access: a scalar call's kernels find theirs
 * without building (and hashing) the module key, a string as long as the program, at every call
 * (1.3 µs of W6's 5 µs scalar call).
 */
const loops = new WeakMap<WebAssembly.Memory, WeakMap<ElemwiseProgram, Map<string, Loop>>>();

/** The loop of `program` over inputs read as `access`, compiled once and instantiated once per memory (per thread). */
function loopFor(memory: WebAssembly.Memory, program: ElemwiseProgram, access: readonly WasmAccess[]): Loop {
  let byProgram = loops.get(memory);
  if (!byProgram) loops.set(memory, (byProgram = new WeakMap()));
  let byAccess = byProgram.get(program);
  if (!byAccess) byProgram.set(program, (byAccess = new Map()));
  const reads = access.join('');
  let loop = byAccess.get(reads);
  if (loop === undefined) {
    let key = keys.get(program);
    if (key === undefined) keys.set(program, (key = programKey(program)));
    loop = instanceFor(memory, `elemwise|${key}|${reads}`, () => loopModuleBytes(program, access), (e) => e['run'] as Loop);
    byAccess.set(reads, loop);
  }
  return loop;
}

type ProgramArray = Float32Array | Float64Array | Int32Array | Uint8Array;
const ARRAY: Record<ProgramDtype, new (buffer: ArrayBufferLike, offset: number, length: number) => ProgramArray> = {
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  bool: Uint8Array,
};

/**
 * Below this many elements per row, a bias row (or a repeated element) is left to the JS loop:
 * the WebAssembly loop is called once per row, and short rows would cost more calls than work.
 */
const MIN_ROW = 64;

/** Runs elements [start, end) in the JS loops (the fallback for arguments beyond a function's limit). */
export type JsRange = (start: number, end: number) => void;

/**
 * Runs `program` over `ins` (broadcast to the output's shape) into `out`, elements [range) of
 * it, when the WebAssembly loop can: every view of its value's dtype in one memory this thread
 * attached, the output contiguous, each input contiguous, a broadcast scalar, or a block repeated
 * along leading axes (a bias row) or each element repeated along trailing axes, those blocks of
 * one length of at least MIN_ROW; other strides run row by row (runStrided). Returns false,
 * having done nothing, otherwise (the JS loops then run). Blocks with an argument beyond a math
 * function's limit go to `js`.
 */
export function runProgram(program: ElemwiseProgram, ins: readonly TensorView[], out: TensorView, range: Range | undefined, js?: JsRange): boolean {
  const dtype = outputDtype(program);
  if (ins.length !== program.inputs.length || !(out.data instanceof ARRAY[dtype]) || !ins.every((v, k) => v.data instanceof ARRAY[program.inputs[k]!])) return false;
  const memory = ins.length > 0 ? attachedMemoryOf(ins[0]!.data.buffer) : attachedMemoryOf(out.data.buffer);
  if (!memory || !ins.every((v) => attachedMemoryOf(v.data.buffer) === memory)) return false;
  if (!isContiguous(out)) return false;
  // An output outside the memory (a call's fresh output array) is computed into this thread's
  // block in the memory, a piece at a time, and copied out.
  const staged = attachedMemoryOf(out.data.buffer) === memory ? undefined : threadBlockOf(memory);
  if (attachedMemoryOf(out.data.buffer) !== memory && !staged) return false;
  const accesses = [];
  let period = 0;
  for (const v of ins) {
    const a = flatAccess(v, out.shape);
    if (!a || ((a[0] === 'r' || a[0] === 'e') && ((period !== 0 && a[1] !== period) || a[1] < MIN_ROW))) {
      return runStrided(program, ins, out, range, memory, staged, js);
    }
    if (a[0] === 'r' || a[0] === 'e') period = a[1];
    accesses.push(a[0]);
  }
  let n = 1;
  for (const d of out.shape) n *= d;
  const start = range?.start ?? 0;
  const end = range?.end ?? n;
  if (end <= start) return true;
  const at = (v: TensorView, d: ProgramDtype): number => v.data.byteOffset + v.offset * 2 ** SHIFT[d];
  // A row of a bias is contiguous within each row of the output, an element repeated along it a
  // scalar there: the loop runs row by row with their addresses moved (addresses wrap modulo 2^32
  // in wasm, so a row's base may lie before the block).
  const base = ins.map((v, k) => at(v, program.inputs[k]!));
  const drive = driver(program, loopFor(memory, program, accesses.map((a) => (a === 'c' || a === 'r' ? 'c' : 's'))), out, memory, staged, js);
  if (period === 0) {
    drive(start, end, base);
    return true;
  }
  const addresses = [...base];
  for (let row = start - (start % period); row < end; row += period) {
    accesses.forEach((a, k) => {
      const bytes = 2 ** SHIFT[program.inputs[k]!];
      if (a === 'r') addresses[k] = base[k]! - row * bytes;
      else if (a === 'e') addresses[k] = base[k]! + (row / period) * bytes;
    });
    drive(Math.max(start, row), Math.min(end, row + period), addresses);
  }
  return true;
}

type Staging = { readonly address: number; readonly bytes: number } | undefined;
/** Runs output elements [from, to) of the loop with these input addresses (and strides). */
type Drive = (from: number, to: number, addresses: readonly number[]) => void;

/**
 * The loop over output elements, into the output or through the staging block (its base moved
 * back by `from`, copied out piece by piece), handing to `js` each block the loop stops before
 * (arguments beyond a math function's limit), then going on after it.
 */
function driver(program: ElemwiseProgram, compiled: Loop, out: TensorView, memory: WebAssembly.Memory, staged: Staging, js: JsRange | undefined): Drive {
  const dtype = outputDtype(program);
  const outBytes = 2 ** SHIFT[dtype];
  const loop: Loop = staged
    ? (from, to, _o, ...addresses) => {
        const piece = Math.floor(staged.bytes / outBytes);
        for (let a = from; a < to; a += piece) {
          const b = Math.min(to, a + piece);
          const stop = compiled(a, b, staged.address - a * outBytes, ...addresses);
          (out.data as ProgramArray).set(new ARRAY[dtype](memory.buffer, staged.address, stop - a), out.offset + a);
          if (stop < b) return stop;
        }
        return to;
      }
    : compiled;
  const o = staged ? 0 : out.data.byteOffset + out.offset * outBytes;
  const block = blockOf(program);
  return (from, to, addresses) => {
    for (let a = from; a < to; ) {
      const stop = loop(a, to, o, ...addresses);
      if (stop >= to) return;
      if (!js) throw new Error('elemwise-wasm: a block needs the JS loops, and none were given');
      a = Math.min(to, stop + block);
      js(stop, a);
    }
  };
}

/**
 * Inputs of any strides (a transposed or sliced view): the loop runs row by row along the
 * output's last axis, each input read there contiguously, as one value, or at its stride
 * (gathered). Rows shorter than MIN_ROW are left to the JS loops (returns false).
 */
function runStrided(program: ElemwiseProgram, ins: readonly TensorView[], out: TensorView, range: Range | undefined, memory: WebAssembly.Memory, staged: Staging, js: JsRange | undefined): boolean {
  const nd = out.shape.length;
  const row = out.shape[nd - 1] ?? 1;
  if (nd === 0 || row < MIN_ROW) return false;
  const bytes = program.inputs.map((d) => 2 ** SHIFT[d]);
  const access: WasmAccess[] = ins.map((v) => (v.stride[nd - 1] === 0 ? 's' : v.stride[nd - 1] === 1 ? 'c' : 'g'));
  const strides = ins.flatMap((v, k) => (access[k] === 'g' ? [v.stride[nd - 1]! * bytes[k]!] : []));
  const drive = driver(program, loopFor(memory, program, access), out, memory, staged, js);
  let n = 1;
  for (const d of out.shape) n *= d;
  const start = range?.start ?? 0;
  const end = range?.end ?? n;
  for (let r = Math.floor(start / row); r * row < end; r++) {
    const first = r * row;
    // Each input's element at the row's start, then its address moved back by `first` elements
    // (or strides), so that element i of the output reads element i of the loop.
    const addresses = ins.map((v, k) => {
      let e = v.offset;
      let rest = r;
      for (let a = nd - 2; a >= 0; a--) {
        e += (rest % out.shape[a]!) * v.stride[a]!;
        rest = Math.floor(rest / out.shape[a]!);
      }
      const at = v.data.byteOffset + e * bytes[k]!;
      return access[k] === 'c' ? at - first * bytes[k]! : access[k] === 'g' ? at - first * v.stride[nd - 1]! * bytes[k]! : at;
    });
    drive(Math.max(start, first), Math.min(end, first + row), [...addresses, ...strides]);
  }
  return true;
}
