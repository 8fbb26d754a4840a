// ScalarOp: what one element of an Elemwise computes. It is a description, not a graph op:
// its dtype rule, its JS code for one element (which the element-wise kernels compile), its
// gradient written with tensor ops, and the algebraic facts rewrites use. The code of every
// ScalarOp yields exactly a value of its output dtype (rounded to float32, wrapped to the
// integer width, 0 or 1 for bool), so fused expressions compute as the unfused nodes would.
import { isFloatDtype, type Dtype } from '../../kernels/dtype.js';
import { isRunnable, PROGRAM_DTYPES, whyNotRunnable, type ElemwiseProgram, type ProgramDtype, type ProgramOp, type ProgramStep } from '../../kernels/elemwise-wasm.js';
import type { Variable } from '../../graph/variable.js';
import { upcast, upgradeToFloat } from '../core/dtype.js';
import type { TensorVariable } from '../core/variable.js';

export type DtypeRule = (inputs: readonly Dtype[]) => Dtype;

export interface CodeContext {
  readonly inputs: readonly Dtype[];
  readonly output: Dtype;
}

/**
 * The gradient of one element: given the inputs, the output and the output gradient `gz`
 * (tensors of the node's broadcast shape), one term per input. Terms must be linear in gz:
 * Elemwise also derives its Rop from them.
 */
export type ScalarGrad = (
  inputs: readonly TensorVariable[],
  output: TensorVariable,
  gz: TensorVariable,
) => Array<TensorVariable | Variable>;

/** A scalar op's WebAssembly form for one call's dtypes (see ScalarOpSpec.wasm). */
export type ScalarWasmForm = (ctx: CodeContext) => readonly ProgramStep[] | undefined;

export interface ScalarOpSpec {
  readonly name: string;
  /** Number of inputs, or 'variadic' for two or more (add, mul). */
  readonly nin: number | 'variadic';
  readonly outputDtype: DtypeRule;
  /** Which input dtypes are allowed; returns an error text for a bad one. */
  readonly checkInputs?: (inputs: readonly Dtype[]) => string | undefined;
  /**
   * JS expression for one element, given the operand expressions (each a value of its input's
   * dtype). Its value is then converted to the output dtype by `asDtype`.
   */
  readonly code: (args: readonly string[], ctx: CodeContext) => string;
  readonly grad?: ScalarGrad;
  /**
   * How the WebAssembly loops compute this op, when they can (kernels/elemwise-program.ts): one
   * program operation applied to the arguments, or, for an op of your own, a function of the
   * call's dtypes giving program steps over the arguments (values 0 to nin-1, then the steps
   * before; the last step is the output), or undefined for dtypes it has no form for. The steps
   * must compute what `code` computes bit for bit (round where the JS expression rounds): workers
   * run them on shared memory, the calling thread runs `code`.
   */
  readonly wasm?: ProgramOp | ScalarWasmForm;
  readonly commutative?: boolean;
  readonly associative?: boolean;
}

export class ScalarOp {
  constructor(readonly spec: ScalarOpSpec) {}

  get name(): string {
    return this.spec.name;
  }

  get key(): string {
    return `scalar.${this.spec.name}`;
  }

  /** The JS expression of one element, a value of `ctx.output` exactly. */
  code(args: readonly string[], ctx: CodeContext): string {
    return asDtype(ctx.output, this.spec.code(args, ctx));
  }

  /**
   * This op as a WebAssembly program over inputs of `inputs` dtypes, when it has one and the
   * program is exact (kernels/elemwise-program.ts: program dtypes, exact conversions).
   */
  program(inputs: readonly Dtype[], output: Dtype): ElemwiseProgram | undefined {
    const steps = this.programSteps(inputs, output);
    if (!steps) return undefined;
    const program: ElemwiseProgram = { inputs: inputs as ProgramDtype[], steps };
    return isRunnable(program) ? program : undefined;
  }

  /**
   * The program steps of this op over its arguments (values 0 to inputs.length - 1), the last
   * giving `output`, or undefined where it has none. A form of the user's that is not an exact
   * program is an error here, at compile time, rather than a silent fall back to JS.
   */
  programSteps(inputs: readonly Dtype[], output: Dtype): readonly ProgramStep[] | undefined {
    const form = this.spec.wasm;
    if (form === undefined || !isProgramDtype(output) || !inputs.every(isProgramDtype)) return undefined;
    if (typeof form === 'string') return [{ op: form, args: inputs.map((_, k) => k), dtype: output }];
    const steps = form({ inputs, output });
    if (steps === undefined) return undefined;
    const where = `ScalarOp ${this.name}: its wasm form for (${inputs.join(', ')}) to ${output}`;
    const last = steps[steps.length - 1];
    if (last !== undefined && last.dtype !== output) throw new TypeError(`${where} ends in a ${last.dtype} step; the last step gives the output`);
    const problem = whyNotRunnable({ inputs: inputs as ProgramDtype[], steps });
    if (problem) throw new TypeError(`${where}: ${problem}`);
    return steps;
  }

  toString(): string {
    return this.spec.name;
  }
}

/** Whether program values may have dtype `d` (float32, float64, int32 or bool). */
export function isProgramDtype(d: Dtype): d is ProgramDtype {
  return PROGRAM_DTYPES.has(d);
}

/**
 * `expr` converted to a value of dtype `d` as a store into `d`'s typed array would convert it:
 * float32 rounds, integers truncate toward zero and wrap modulo their width (NaN and infinities
 * give 0). For bool it takes the expression's truthiness, so bool-valued code must give a JS
 * boolean or 0/1 (a number test is written `x !== 0`, which holds for NaN as NumPy's does).
 */
export function asDtype(d: Dtype, expr: string): string {
  switch (d) {
    case 'float64': return expr;
    case 'float32': return `Math.fround(${expr})`;
    case 'int32': return `((${expr}) | 0)`;
    case 'uint32': return `((${expr}) >>> 0)`;
    case 'int16': return `((${expr}) << 16 >> 16)`;
    case 'uint16': return `((${expr}) & 65535)`;
    case 'int8': return `((${expr}) << 24 >> 24)`;
    case 'uint8': return `((${expr}) & 255)`;
    case 'bool': return `((${expr}) ? 1 : 0)`;
  }
}

// ---------------------------------------------------------------------------------------------
// Dtype rules

/** NumPy promotion, but arithmetic on bools gives int8 (True + True is 2, not True). */
export const upcastNoBool: DtypeRule = (ins) => {
  const d = upcast(...ins);
  return d === 'bool' ? 'int8' : d;
};

/** The float dtype the inputs compute in (ints go to float32 or float64 by width). */
export const toFloat: DtypeRule = (ins) => upgradeToFloat(upcast(...ins));

export const toBool: DtypeRule = () => 'bool';

/**
 * NumPy promotion, bools staying bool: maximum, clip and where of bools are bools, and floor,
 * ceil and round keep integer dtypes (NumPy 2: the values are already whole).
 */
export const upcastRule: DtypeRule = (ins) => upcast(...ins);

/** Bitwise on integers, logical on bools; floats are refused (see integerInputs). */
export const bitwise: DtypeRule = (ins) => upcast(...ins);

/** True division: floats by NumPy promotion, and integers or bools alone give float64, as NumPy. */
export const trueDivRule: DtypeRule = (ins) => {
  const d = upcast(...ins);
  return isFloatDtype(d) ? d : 'float64';
};

/**
 * The input check of the bitwise ops: bool or integer inputs with a common integer dtype
 * (uint32 with a signed integer would need int64, which weft does not have).
 */
export function integerInputs(name: string): (ins: readonly Dtype[]) => string | undefined {
  return (ins) => {
    const i = ins.findIndex(isFloatDtype);
    if (i >= 0) return `input ${i} has dtype ${ins[i]}; ${name} takes bool or integer inputs`;
    if (isFloatDtype(upcast(...ins))) {
      return `inputs of dtypes ${ins.join(' and ')} have no common integer dtype (NumPy would use int64); cast one of them`;
    }
    return undefined;
  };
}

