// WebAssembly SIMD loops for element-wise programs: a fused computation given as plain data
// (ElemwiseProgram, made by the tensor layer from a Composite's steps) is compiled into a loop over
// the arena's shared memory, f32x4 for float32 and f64x2 for float64, with a scalar tail. Only
// IEEE-exact operations are used, each rounded to the program's dtype as the JS loops round it,
// and the math functions are weft's own (vmath, which the JS loops call too), so both give the
// same bits on any engine; float32 exp and tanh run in float32 lanes (vmath/float32.ts), the
// others in float64, rounded once. A module is compiled once per program and layout, and
// instantiated once per memory, on each thread.
import { flatAccess } from './elemwise.js';
import { attachedMemoryOf, threadBlockOf } from './gemm-wasm.js';
import { emitFunction, isMathFunction, type MathFunction } from './vmath/wasm-library.js';
import { Body, F32, F64, I32, ModuleBuilder, V128, type Op } from './wasm-emit.js';
import { isContiguous, type Range, type TensorView } from './view.js';
import { instanceFor } from './wasm-instances.js';

/** The dtypes programs compute in. */
export type ProgramDtype = 'float32' | 'float64';

/**
 * The operations a program step may apply (each IEEE-exact in wasm and in JS): arithmetic, the
 * math functions, comparisons (whose steps are bools, never the program's output), `where`
 * (condition, then the values where it holds and where it does not) and `cast` (a bool as 1 or
 * 0, or a value of the program's dtype as it is).
 */
export type ProgramOp =
  | 'add' | 'sub' | 'mul' | 'div' | 'neg' | 'abs' | 'sqrt' | 'sqr' | 'min' | 'max' | MathFunction
  | 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge' | 'where' | 'cast';
export type { MathFunction };

/** One step: an operation on earlier values (the program's inputs first, then earlier steps). */
export interface ProgramStep {
  readonly op: ProgramOp;
  readonly args: readonly number[];
}

/**
 * An element-wise computation as data (it crosses threads in kernel params): every input, step
 * and the output have `dtype`; the last step is the output.
 */
export interface ElemwiseProgram {
  readonly dtype: ProgramDtype;
  readonly nin: number;
  readonly steps: readonly ProgramStep[];
}

/** How an input is read: element i of a contiguous array ('c'), or one value everywhere ('s'). */
export type WasmAccess = 'c' | 's';

/** The loop of one program and layout: (start, end, output address, input addresses...). */
type Loop = (start: number, end: number, out: number, ...inputs: number[]) => void;

/** The comparisons: their steps give masks (all-ones lanes, or an i32 0/1 in the scalar tail), used as bools. */
export const COMPARISONS: ReadonlySet<ProgramOp> = new Set<ProgramOp>(['eq', 'ne', 'lt', 'le', 'gt', 'ge']);

/** Whether value `a` of `program` (its inputs, then its steps) is a mask. */
export function isMaskValue(program: ElemwiseProgram, a: number): boolean {
  return a >= program.nin && COMPARISONS.has(program.steps[a - program.nin]!.op);
}

/** How one step's instructions read its operands. */
interface Operands {
  readonly local: (a: number) => number;
  readonly mask: (a: number) => boolean;
}

/**
 * Appends the instructions of one step to `body`: its value is left on the stack. The exact
 * operations are named as their wasm instructions are (`${prefix}.${op}`). A mask used as a
 * number is 1 or 0 (as a bool in the JS loops); a number used as a condition is true unless 0.
 */
function emitStep(body: Body, step: ProgramStep, prefix: 'f32' | 'f64' | 'f32x4' | 'f64x2', operands: Operands, module: ModuleBuilder): void {
  const op = (name: string): Op => `${prefix}.${name}` as Op;
  const simd = prefix === 'f32x4' || prefix === 'f64x2';
  const float = (a: number): void => {
    body.get(operands.local(a));
    if (!operands.mask(a)) return;
    if (!simd) body.op(prefix === 'f32' ? 'f32.convert_i32_s' : 'f64.convert_i32_s');
    else {
      if (prefix === 'f32x4') body.f32x4(1);
      else body.f64x2(1);
      body.op('v128.and');
    }
  };
  const condition = (a: number): void => {
    body.get(operands.local(a));
    if (operands.mask(a)) return;
    if (prefix === 'f32x4') body.f32x4(0);
    else if (prefix === 'f64x2') body.f64x2(0);
    else if (prefix === 'f32') body.f32(0);
    else body.f64(0);
    body.op(op('ne'));
  };
  const [first, ...rest] = step.args;
  if (step.op === 'where') {
    float(step.args[1]!);
    float(step.args[2]!);
    condition(first!);
    body.op(simd ? 'v128.bitselect' : 'select');
    return;
  }
  float(first!);
  if (isMathFunction(step.op)) {
    emitFunction(body, step.op, prefix, module);
    return;
  }
  switch (step.op) {
    case 'cast':
      return;
    case 'sqr':
      float(first!);
      body.op(op('mul'));
      return;
    case 'neg':
    case 'abs':
    case 'sqrt':
      body.op(op(step.op));
      return;
    default:
      // Variadic add and mul fold from the left, each partial result rounded (as the JS loops).
      for (const a of rest) {
        float(a);
        body.op(op(step.op));
      }
  }
}

/**
 * The loop's function: parameters (start, end, out, in0, in1, ...) as element indices and byte
 * addresses. The SIMD part takes `lanes` elements at a time; the tail one at a time.
 */
function loopBody(program: ElemwiseProgram, access: readonly WasmAccess[], module: ModuleBuilder): Body {
  if (program.steps.length === 0 || isMaskValue(program, program.nin + program.steps.length - 1)) {
    throw new RangeError(`elemwise program: the last step must give a ${program.dtype} value, not a comparison's bool`);
  }
  const f32 = program.dtype === 'float32';
  const scalar = f32 ? F32 : F64;
  const size = f32 ? 4 : 8;
  const shift = f32 ? 2 : 3;
  const lanes = 16 / size;
  const s = f32 ? 'f32' : 'f64';
  const v = f32 ? 'f32x4' : 'f64x2';
  const nin = program.nin;
  const body = new Body([I32, I32, I32, ...Array<typeof I32>(nin).fill(I32)]);
  const [START, END, OUT] = [0, 1, 2];
  const arg = (k: number): number => 3 + k;
  const i = body.local(I32);
  // Broadcast inputs are read once: their scalar and its splat.
  const once = access.map((a, k) => {
    if (a !== 's') return undefined;
    const x = body.local(scalar);
    const splat = body.local(V128);
    body.get(arg(k)).mem(f32 ? 'f32.load' : 'f64.load').tee(x).op(`${v}.splat` as Op).set(splat);
    return { x, splat };
  });
  const vectorValues = [...Array(nin + program.steps.length)].map(() => body.local(V128));
  const scalarValues = [...Array(nin + program.steps.length)].map((_, a) => body.local(isMaskValue(program, a) ? I32 : scalar));
  const mask = (a: number): boolean => isMaskValue(program, a);
  /** The byte address of element i of input k (or of the output, k = -1). */
  const address = (base: number): void => {
    body.get(base).get(i).i32(shift).op('i32.shl').i32Add();
  };

  body.get(START).set(i);
  // SIMD: while i + lanes <= end.
  body.block().loop();
  body.get(i).i32(lanes).i32Add().get(END).op('i32.gt_s').brIf(1);
  access.forEach((a, k) => {
    if (a === 'c') {
      address(arg(k));
      body.v128Load().set(vectorValues[k]!);
    } else body.get(once[k]!.splat).set(vectorValues[k]!);
  });
  program.steps.forEach((step, j) => {
    emitStep(body, step, v, { local: (a) => vectorValues[a]!, mask }, module);
    body.set(vectorValues[nin + j]!);
  });
  address(OUT);
  body.get(vectorValues[nin + program.steps.length - 1]!).v128Store();
  body.get(i).i32(lanes).i32Add().set(i).br(0);
  body.end().end();
  // The tail: while i < end.
  body.block().loop();
  body.get(i).get(END).op('i32.ge_s').brIf(1);
  access.forEach((a, k) => {
    if (a === 'c') {
      address(arg(k));
      body.mem(f32 ? 'f32.load' : 'f64.load').set(scalarValues[k]!);
    } else body.get(once[k]!.x).set(scalarValues[k]!);
  });
  program.steps.forEach((step, j) => {
    emitStep(body, step, s, { local: (a) => scalarValues[a]!, mask }, module);
    body.set(scalarValues[nin + j]!);
  });
  address(OUT);
  body.get(scalarValues[nin + program.steps.length - 1]!).mem(f32 ? 'f32.store' : 'f64.store');
  body.get(i).i32(1).i32Add().set(i).br(0);
  body.end().end();
  return body;
}

/** The module bytes of the loop for `program` over inputs read as `access`, exported as `run`. */
export function loopModuleBytes(program: ElemwiseProgram, access: readonly WasmAccess[]): Uint8Array<ArrayBuffer> {
  const module = new ModuleBuilder();
  // The loop is function 0's slot, reserved before its body adds the math functions it calls.
  module.export('run', module.function('run', () => loopBody(program, access, module)));
  return module.bytes();
}

/** A program's identity as text (the cache key of its modules). */
export function programKey(program: ElemwiseProgram): string {
  return `${program.dtype}|${program.nin}|${program.steps.map((s) => `${s.op}(${s.args.join(',')})`).join(';')}`;
}

/** Programs' keys, by program object (a kernel gets the same object at every call of a plan). */
const keys = new WeakMap<ElemwiseProgram, string>();

/** The loop of `program` over inputs read as `access`, compiled once and instantiated once per memory (per thread). */
function loopFor(memory: WebAssembly.Memory, program: ElemwiseProgram, access: readonly WasmAccess[]): Loop {
  let key = keys.get(program);
  if (key === undefined) keys.set(program, (key = programKey(program)));
  return instanceFor(memory, `elemwise|${key}|${access.join('')}`, () => loopModuleBytes(program, access), (e) => e['run'] as Loop);
}

const BYTES: Record<ProgramDtype, number> = { float32: 4, float64: 8 };
const ARRAY: Record<ProgramDtype, Float32ArrayConstructor | Float64ArrayConstructor> = { float32: Float32Array, float64: Float64Array };

/**
 * Below this many elements per row, a bias row (or a repeated element) is left to the JS loop:
 * the WebAssembly loop is called once per row, and short rows would cost more calls than work.
 */
const MIN_ROW = 64;

/**
 * Runs `program` over `ins` (broadcast to the output's shape) into `out`, elements [range) of
 * it, when the WebAssembly loop can: every view of the program's dtype in one memory this thread
 * attached, the output contiguous, each input contiguous, a broadcast scalar, or a block repeated
 * along leading axes (a bias row) or each element repeated along trailing axes, those blocks of
 * one length of at least MIN_ROW. Returns false, having done nothing, otherwise (the JS loops
 * then run).
 */
export function runProgram(program: ElemwiseProgram, ins: readonly TensorView[], out: TensorView, range: Range | undefined): boolean {
  const kind = ARRAY[program.dtype];
  if (ins.length !== program.nin || !(out.data instanceof kind) || !ins.every((v) => v.data instanceof kind)) return false;
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
    if (!a) return false;
    if (a[0] === 'r' || a[0] === 'e') {
      if ((period !== 0 && a[1] !== period) || a[1] < MIN_ROW) return false;
      period = a[1];
    }
    accesses.push(a[0]);
  }
  let n = 1;
  for (const d of out.shape) n *= d;
  const start = range?.start ?? 0;
  const end = range?.end ?? n;
  if (end <= start) return true;
  const bytes = BYTES[program.dtype];
  const at = (v: TensorView): number => v.data.byteOffset + v.offset * bytes;
  // A row of a bias is contiguous within each row of the output, an element repeated along it a
  // scalar there: the loop runs row by row with their addresses moved (addresses wrap modulo 2^32
  // in wasm, so a row's base may lie before the block).
  const compiled = loopFor(memory, program, accesses.map((a) => (a === 'c' || a === 'r' ? 'c' : 's')));
  const base = ins.map(at);
  // Elements [from, to) into the output, or into the staging block (its base moved back by from).
  const loop: Loop = staged
    ? (from, to, _o, ...addresses) => {
        const piece = Math.floor(staged.bytes / bytes);
        for (let a = from; a < to; a += piece) {
          const b = Math.min(to, a + piece);
          compiled(a, b, staged.address - a * bytes, ...addresses);
          (out.data as Float32Array | Float64Array).set(new kind(memory.buffer, staged.address, b - a), out.offset + a);
        }
      }
    : compiled;
  const o = staged ? 0 : at(out);
  if (period === 0) {
    loop(start, end, o, ...base);
    return true;
  }
  const addresses = [...base];
  for (let row = start - (start % period); row < end; row += period) {
    accesses.forEach((a, k) => {
      if (a === 'r') addresses[k] = base[k]! - row * bytes;
      else if (a === 'e') addresses[k] = base[k]! + (row / period) * bytes;
    });
    loop(Math.max(start, row), Math.min(end, row + period), o, ...addresses);
  }
  return true;
}
