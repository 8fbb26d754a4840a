// Composite: several element-wise ops fused into one loop (Theano's Composite). Its scalar op
// is a small typed IR, a list of steps over the fused inputs; the kernel code is one JS
// expression rendered from it, with each intermediate wrapped to its dtype (Math.fround for
// float32, |0 for int32, ...), so fused results equal unfused ones bit for bit. The structure is
// the op's identity: equal fusions share one kernel source, compiled once. Like Elemwise, a
// Composite may write its output over one of its inputs (its inplace pattern, set late).
import { isDiscreteDtype, type Dtype } from '../../kernels/dtype.js';
import type { ElemwiseSource } from '../../kernels/elemwise.js';
import type { Apply } from '../../graph/apply.js';
import type { Variable } from '../../graph/variable.js';
import { zerosLike } from '../shape/alloc.js';
import { Elemwise, elemwise } from './elemwise.js';
import { Lop, Rop } from '../gradient/grad.js';
import { ScalarOp, asDtype, isProgramDtype, type CodeContext } from '../scalar/scalar-op.js';
import { isRunnable, type ElemwiseProgram, type ProgramStep } from '../../kernels/elemwise-wasm.js';
import type { TensorType } from '../core/type.js';
import type { TensorVariable } from '../core/variable.js';

/** One step of a fused computation: a scalar op applied to earlier values. */
export interface CompositeStep {
  readonly op: ScalarOp;
  /** Indices into the values: the composite's inputs first, then the results of earlier steps. */
  readonly args: readonly number[];
  /** The step's result dtype: what `op` gives for its arguments' dtypes. */
  readonly dtype: Dtype;
}

const SHORT: Record<Dtype, string> = {
  float32: 'f32', float64: 'f64', int8: 'i8', int16: 'i16', int32: 'i32', uint8: 'u8', uint16: 'u16', uint32: 'u32', bool: 'b',
};

/** Checks the steps; returns the dtype of every value (inputs, then steps). */
function checkSteps(inputDtypes: readonly Dtype[], steps: readonly CompositeStep[]): Dtype[] {
  if (steps.length === 0) throw new TypeError('CompositeScalar: no steps; a fused computation needs at least one');
  const dtypes: Dtype[] = [...inputDtypes];
  steps.forEach((s, k) => {
    const where = `CompositeScalar: step ${k} (${s.op})`;
    const nin = s.op.spec.nin;
    if (nin === 'variadic' ? s.args.length < 1 : s.args.length !== nin) {
      throw new TypeError(`${where} has ${s.args.length} arguments; ${s.op} takes ${nin === 'variadic' ? 'at least 1' : nin}`);
    }
    const bad = s.args.find((a) => !Number.isInteger(a) || a < 0 || a >= dtypes.length);
    if (bad !== undefined) {
      throw new RangeError(
        `${where} reads value ${bad}; it may read values 0 to ${dtypes.length - 1} (the ${inputDtypes.length} inputs, then the steps before it)`,
      );
    }
    const argDtypes = s.args.map((a) => dtypes[a]!);
    const problem = s.op.spec.checkInputs?.(argDtypes);
    if (problem) throw new TypeError(`${where}: ${problem}`);
    const want = s.op.spec.outputDtype(argDtypes);
    if (s.dtype !== want) throw new TypeError(`${where} has dtype ${s.dtype}, but ${s.op} of (${argDtypes.join(', ')}) gives ${want}`);
    dtypes.push(s.dtype);
  });
  return dtypes;
}

/**
 * The readable structure of a fused computation: a tree such as add(mul(exp(i0),i1),tanh(i2)),
 * or, when a step is read more than once (only composites built by hand share steps), the list
 * of steps s0=...;s1=... so that the text stays as long as the computation.
 */
function render(steps: readonly CompositeStep[], nin: number): string {
  const reads = new Array<number>(steps.length).fill(0);
  for (const s of steps) for (const a of s.args) if (a >= nin) reads[a - nin]! += 1;
  if (reads.some((n) => n > 1)) {
    const ref = (a: number): string => (a < nin ? `i${a}` : `s${a - nin}`);
    return steps.map((s, k) => `s${k}=${s.op.name}(${s.args.map(ref).join(',')})`).join(';');
  }
  const tree = (at: number): string => {
    if (at < nin) return `i${at}`;
    const s = steps[at - nin]!;
    return `${s.op.name}(${s.args.map(tree).join(',')})`;
  };
  return tree(nin + steps.length - 1);
}

export class CompositeScalar extends ScalarOp {
  readonly structure: string;
  readonly #key: string;

  constructor(
    readonly inputDtypes: readonly Dtype[],
    readonly steps: readonly CompositeStep[],
  ) {
    const dtypes = checkSteps(inputDtypes, steps);
    const nin = inputDtypes.length;
    const structure = render(steps, nin);
    const out = steps[steps.length - 1]!.dtype;
    super({
      name: `composite[${inputDtypes.map((d) => SHORT[d]).join(',')}]{${structure}}`,
      nin,
      outputDtype: () => out,
      checkInputs: (ins) => {
        const i = ins.findIndex((d, k) => d !== inputDtypes[k]);
        return i < 0 ? undefined : `input ${i} has dtype ${ins[i]}, the fused computation expects ${inputDtypes[i]}`;
      },
      code: (args) => {
        const exprs: string[] = [...args];
        steps.forEach((s, k) => {
          const ctx: CodeContext = { inputs: s.args.map((a) => dtypes[a]!), output: s.dtype };
          const e = s.op.spec.code(s.args.map((a) => exprs[a]!), ctx);
          // Every intermediate is stored as its node would store it; ScalarOp.code wraps the last.
          exprs.push(k === steps.length - 1 ? e : asDtype(s.dtype, e));
        });
        return exprs[exprs.length - 1]!;
      },
      grad: (inputs, _output, gz) => Lop(this.expand(inputs), inputs, gz) as TensorVariable[],
    });
    this.structure = structure;
    // The identity: every step with its dtype, in order (the name leaves the dtypes of steps out).
    const ref = (a: number): string => (a < nin ? `i${a}` : `s${a - nin}`);
    this.#key = `scalar.composite[${inputDtypes.join(',')}]{${steps.map((s) => `${s.op.key}:${s.dtype}(${s.args.map(ref).join(',')})`).join(';')}}`;
  }

  override get key(): string {
    return this.#key;
  }

  /**
   * The fused computation as one WebAssembly program, when every step has a wasm form, every
   * value a program dtype, and the program is exact (kernels/elemwise-program.ts).
   */
  override program(inputs: readonly Dtype[], output: Dtype): ElemwiseProgram | undefined {
    if (!inputs.every(isProgramDtype) || this.steps[this.steps.length - 1]?.dtype !== output) return undefined;
    // Each step's own program inlined: its arguments are the composite's values, its steps
    // follow the ones before (`at` maps a composite value to its program value).
    const at = inputs.map((_, k) => k);
    const steps: ProgramStep[] = [];
    for (const s of this.steps) {
      const own = s.op.programSteps(s.args.map((a) => this.dtypeOf(a)), s.dtype);
      if (!own) return undefined;
      const base = inputs.length + steps.length;
      const nin = s.args.length;
      for (const step of own) steps.push({ ...step, args: step.args.map((a) => (a < nin ? at[s.args[a]!]! : base + a - nin)) });
      at.push(inputs.length + steps.length - 1);
    }
    const program: ElemwiseProgram = { inputs, steps };
    return isRunnable(program) ? program : undefined;
  }

  /** The dtype of composite value `a` (an input, then a step). */
  private dtypeOf(a: number): Dtype {
    return a < this.inputDtypes.length ? this.inputDtypes[a]! : this.steps[a - this.inputDtypes.length]!.dtype;
  }

  /** The fused computation rebuilt from element-wise ops on `inputs`. */
  expand(inputs: readonly TensorVariable[]): TensorVariable {
    const values: TensorVariable[] = [...inputs];
    for (const s of this.steps) values.push(elemwise(s.op, ...s.args.map((a) => values[a]!)));
    return values[values.length - 1]!;
  }
}

/** Kernel sources of composites by structure: equal fusions in any graph share one. */
const sources = new Map<string, ElemwiseSource>();

export class Composite extends Elemwise {
  constructor(
    readonly composite: CompositeScalar,
    /** output index -> the input it overwrites (set by the inplace rewrites) */
    inplacePattern: Readonly<Record<number, number>> = {},
  ) {
    super(composite, inplacePattern);
  }

  override withInplace(input: number | undefined): Composite {
    return new Composite(this.composite, input === undefined ? {} : { 0: input });
  }

  override source(node: Apply): ElemwiseSource {
    const outDtype = (node.outputs[0]!.type as TensorType).dtype;
    const key = `${this.composite.key}>${outDtype}`;
    let src = sources.get(key);
    if (!src) {
      src = super.source(node);
      sources.set(key, src);
    }
    return src;
  }

  /** The Rop of the expanded computation; integer and bool inputs carry no direction. */
  override rop(inputs: readonly TensorVariable[], evalPoints: readonly TensorVariable[]): Variable[] {
    const out = this.composite.expand(inputs);
    const moving = inputs.map((_, i) => i).filter((i) => !isDiscreteDtype(inputs[i]!.dtype));
    if (isDiscreteDtype(out.dtype) || moving.length === 0) return [zerosLike(out)];
    return [Rop(out, moving.map((i) => inputs[i]!), moving.map((i) => evalPoints[i]!)) as TensorVariable];
  }

  override toString(): string {
    const inplace = Object.keys(this.inplacePattern).length > 0 ? ',inplace' : '';
    return `Composite{${this.composite.structure}${inplace}}`;
  }
}
