// An element-wise computation as plain data (it crosses threads in kernel params): the dtypes of
// its inputs, and steps that each apply one exact operation to earlier values and give a value
// of their own dtype. The tensor layer makes programs from ScalarOps and Composites; the
// WebAssembly loops (elemwise-wasm.ts) compile them. This file says which programs are exact.
import type { BinaryMathFunction, MathFunction } from './vmath/wasm-library.js';

/** The dtypes a program's values may have (bools are stored as bytes 0 and 1). */
export type ProgramDtype = 'float32' | 'float64' | 'int32' | 'bool';

/** The dtypes of numbers (what arithmetic and comparisons compute in). */
export type NumberDtype = Exclude<ProgramDtype, 'bool'>;

export const PROGRAM_DTYPES: ReadonlySet<string> = new Set<ProgramDtype>(['float32', 'float64', 'int32', 'bool']);

/**
 * The operations a step may apply, each IEEE-exact (or exact modulo 2^32 on int32) in wasm and in
 * JS: arithmetic, the math functions (on floats), comparisons (bool steps), `where` (a condition,
 * then the values where it holds and where it does not), `cast` (its argument in the step's
 * dtype), the logical/bitwise and, or, xor, not (on bools and int32), and `const` (no arguments:
 * the step's `value`, which its dtype must hold exactly).
 */
export type ProgramOp =
  | 'add' | 'sub' | 'mul' | 'div' | 'neg' | 'abs' | 'sqrt' | 'sqr' | 'min' | 'max' | 'clip' | 'sign'
  | 'floor' | 'ceil' | 'round' | 'trunc' | MathFunction | BinaryMathFunction
  | 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge' | 'where' | 'cast' | 'and' | 'or' | 'xor' | 'not' | 'const';
export type { BinaryMathFunction, MathFunction };

/** One step: an operation on earlier values (the program's inputs first, then earlier steps). */
export interface ProgramStep {
  readonly op: ProgramOp;
  readonly args: readonly number[];
  readonly dtype: ProgramDtype;
  /** The number a `const` step gives (other steps have none). */
  readonly value?: number;
}

/** The inputs' dtypes and the steps; the last step is the output. */
export interface ElemwiseProgram {
  readonly inputs: readonly ProgramDtype[];
  readonly steps: readonly ProgramStep[];
}

/** The comparisons: bool steps, computed in their arguments' common dtype. */
export const COMPARISONS: ReadonlySet<ProgramOp> = new Set<ProgramOp>(['eq', 'ne', 'lt', 'le', 'gt', 'ge']);
export const LOGICAL: ReadonlySet<ProgramOp> = new Set<ProgramOp>(['and', 'or', 'xor', 'not']);
/** Integer arithmetic wraps modulo 2^32 as the JS loops' `| 0` and Math.imul do. */
const INTEGER_ARITHMETIC: ReadonlySet<ProgramOp> = new Set<ProgramOp>(['add', 'sub', 'mul', 'neg', 'abs', 'sqr', 'min', 'max', 'clip', 'sign']);
/** Float operations beyond those: IEEE's division, square root and roundings (round is half to even, trunc toward zero). */
const FLOAT_ONLY: ReadonlySet<ProgramOp> = new Set<ProgramOp>(['div', 'sqrt', 'floor', 'ceil', 'round', 'trunc']);

const isFloat = (d: ProgramDtype): boolean => d === 'float32' || d === 'float64';

/** The dtype of value `a` of `program` (its inputs, then its steps). */
export function valueDtype(program: ElemwiseProgram, a: number): ProgramDtype {
  const n = program.inputs.length;
  return a < n ? program.inputs[a]! : program.steps[a - n]!.dtype;
}

/** The program's output dtype (its last step's). */
export function outputDtype(program: ElemwiseProgram): ProgramDtype {
  return program.steps[program.steps.length - 1]!.dtype;
}

/** The dtype a comparison of these dtypes is computed in: one that holds every value exactly. */
export function comparisonDtype(dtypes: readonly ProgramDtype[]): NumberDtype {
  if (dtypes.includes('float64') || (dtypes.includes('float32') && dtypes.includes('int32'))) return 'float64';
  if (dtypes.includes('float32')) return 'float32';
  return 'int32';
}

/**
 * Whether a value of `from` used as an operand of a `to` step gives what the JS loops compute:
 * only exact conversions do, to float64 from anything and bools as 1 or 0 anywhere (an int32
 * operand of a float32 step does not: JS computes in float64 and rounds once). A `cast` step
 * converts any program dtype: rounding to float32 once, testing against 0 for a bool, taking a
 * float to int32 as JS's `| 0` does (truncated, modulo 2^32; NaN and infinities give 0).
 */
export function converts(from: ProgramDtype, to: ProgramDtype): boolean {
  return from === to || from === 'bool' || to === 'float64';
}

/** How many arguments each operation takes ('n': one or more); math functions say their own. */
const ARITY: Partial<Record<ProgramOp, number | 'n'>> = {
  add: 'n', mul: 'n', sub: 2, div: 2, min: 2, max: 2, neg: 1, abs: 1, sqrt: 1, sqr: 1, clip: 3, sign: 1, floor: 1, ceil: 1, round: 1, trunc: 1,
  eq: 2, ne: 2, lt: 2, le: 2, gt: 2, ge: 2, where: 3, cast: 1, and: 2, or: 2, xor: 2, not: 1, const: 0,
};

/**
 * Why `program` cannot run exactly as a WebAssembly loop, or undefined when it can: every value
 * of a program dtype, every step's operation defined on its dtype with its number of arguments,
 * each an earlier value whose dtype converts exactly to the one the operation computes in.
 * `mathArity` gives a math function's number of arguments (undefined for other operations).
 */
export function programProblem(program: ElemwiseProgram, mathArity: (op: ProgramOp) => number | undefined): string | undefined {
  if (program.steps.length === 0) return 'a program needs at least one step';
  for (const d of program.inputs) if (!PROGRAM_DTYPES.has(d)) return `input dtype ${d} is not a program dtype`;
  for (let j = 0; j < program.steps.length; j++) {
    const s = program.steps[j]!;
    const here = program.inputs.length + j;
    const arity = ARITY[s.op] ?? mathArity(s.op);
    const what = `step ${j} (${s.op} to ${s.dtype})`;
    if (!PROGRAM_DTYPES.has(s.dtype)) return `${what}: ${s.dtype} is not a program dtype`;
    if (arity === undefined) return `${what}: unknown operation`;
    if (arity === 'n' ? s.args.length < 1 : s.args.length !== arity) return `${what}: takes ${arity === 'n' ? 'one or more' : arity} arguments, got ${s.args.length}`;
    if (s.args.some((a) => !Number.isInteger(a) || a < 0 || a >= here)) return `${what}: arguments must be earlier values`;
    const problem = stepProblem(s, s.args.map((a) => valueDtype(program, a)), mathArity(s.op) !== undefined);
    if (problem) return `${what}: ${problem}`;
  }
  return undefined;
}

function stepProblem(s: ProgramStep, args: readonly ProgramDtype[], math: boolean): string | undefined {
  const operands = (dtypes: readonly ProgramDtype[], to: ProgramDtype): string | undefined =>
    dtypes.every((d) => converts(d, to)) ? undefined : `${dtypes.join(', ')} do not all convert exactly to ${to}`;
  if (COMPARISONS.has(s.op)) return s.dtype === 'bool' ? undefined : 'a comparison gives a bool';
  if (s.op === 'where') return operands(args.slice(1), s.dtype);
  if (s.op === 'cast') return undefined;
  if (s.op === 'const') return constProblem(s.value, s.dtype);
  if (LOGICAL.has(s.op)) return s.dtype === 'bool' || s.dtype === 'int32' ? operands(args, s.dtype) : 'logical and bitwise operations are on bools and int32';
  if (s.dtype === 'bool') return 'arithmetic gives numbers, not bools';
  if (s.dtype === 'int32' && !INTEGER_ARITHMETIC.has(s.op)) return 'not an integer operation';
  if (isFloat(s.dtype) && !(math || INTEGER_ARITHMETIC.has(s.op) || FLOAT_ONLY.has(s.op))) return 'not a float operation';
  return operands(args, s.dtype);
}

/** Why `value` is not a constant of dtype `d` (a number `d` holds exactly), or undefined. */
function constProblem(value: number | undefined, d: ProgramDtype): string | undefined {
  if (typeof value !== 'number') return 'a constant needs a number value';
  const held =
    d === 'float64' ? true
    : d === 'float32' ? Number.isNaN(value) || Math.fround(value) === value
    : d === 'int32' ? (value | 0) === value
    : value === 0 || value === 1;
  return held ? undefined : `${value} is not ${d === 'int32' ? 'an' : 'a'} ${d} value`;
}

/** A program's identity as text (the cache key of its modules). */
export function programKey(program: ElemwiseProgram): string {
  return `${program.inputs.join(',')}|${program.steps.map((s) => `${s.op === 'const' ? `const=${Object.is(s.value, -0) ? '-0' : s.value}` : s.op}:${s.dtype}(${s.args.join(',')})`).join(';')}`;
}
