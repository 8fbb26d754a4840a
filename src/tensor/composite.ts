// Composite: several element-wise ops fused into one loop (Theano's Composite). Its scalar op
// is a small typed IR, a list of steps over the fused inputs; the kernel code is one JS
// expression rendered from it, with each intermediate wrapped to its dtype (Math.fround for
// float32, |0 for int32, ...), so fused results equal unfused ones bit for bit. The structure is
// the op's identity: equal fusions share one compiled loop.
import type { Dtype } from '../kernels/dtype.js';
import type { Apply } from '../graph/apply.js';
import type { Variable } from '../graph/variable.js';
import { Elemwise, elemwise } from './elemwise.js';
import { Lop, Rop } from './grad.js';
import { ScalarOp, type CodeContext } from './scalar/scalar-op.js';
import type { TensorVariable } from './variable.js';

/** One step of a fused computation: a scalar op applied to earlier values. */
export interface CompositeStep {
  readonly op: ScalarOp;
  /** Indices into the values: the composite's inputs first, then the results of earlier steps. */
  readonly args: readonly number[];
  readonly dtype: Dtype;
}

const SHORT: Record<Dtype, string> = {
  float32: 'f32', float64: 'f64', int8: 'i8', int16: 'i16', int32: 'i32', uint8: 'u8', uint16: 'u16', uint32: 'u32', bool: 'b',
};

/** A JS expression of `expr` brought to `dtype`, as storing it into that dtype's array would. */
export function wrapToDtype(expr: string, dtype: Dtype): string {
  switch (dtype) {
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

/** The readable structure of a fused computation, e.g. add(mul(exp(i0),i1),tanh(i2)). */
function render(steps: readonly CompositeStep[], nin: number, at: number): string {
  if (at < nin) return `i${at}`;
  const s = steps[at - nin]!;
  return `${s.op.name}(${s.args.map((a) => render(steps, nin, a)).join(',')})`;
}

export class CompositeScalar extends ScalarOp {
  constructor(
    readonly inputDtypes: readonly Dtype[],
    readonly steps: readonly CompositeStep[],
  ) {
    const nin = inputDtypes.length;
    const structure = render(steps, nin, nin + steps.length - 1);
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
        const dtypes: Dtype[] = [...inputDtypes];
        steps.forEach((s, k) => {
          const ctx: CodeContext = { inputs: s.args.map((a) => dtypes[a]!), output: s.dtype };
          const e = s.op.spec.code(s.args.map((a) => exprs[a]!), ctx);
          exprs.push(k === steps.length - 1 ? e : wrapToDtype(e, s.dtype));
          dtypes.push(s.dtype);
        });
        return exprs[exprs.length - 1]!;
      },
      grad: (inputs, _output, gz) => Lop(this.expand(inputs), inputs, gz) as TensorVariable[],
    });
    this.structure = structure;
  }

  readonly structure: string;

  /** The fused computation rebuilt from element-wise ops on `inputs`. */
  expand(inputs: readonly TensorVariable[]): TensorVariable {
    const values: TensorVariable[] = [...inputs];
    for (const s of this.steps) values.push(elemwise(s.op, ...s.args.map((a) => values[a]!)));
    return values[values.length - 1]!;
  }
}

export class Composite extends Elemwise {
  constructor(readonly composite: CompositeScalar) {
    super(composite);
  }

  override rop(inputs: readonly TensorVariable[], evalPoints: readonly TensorVariable[]): Variable[] {
    return [Rop(this.composite.expand(inputs), [...inputs], [...evalPoints]) as TensorVariable];
  }

  override toString(): string {
    return `Composite{${this.composite.structure}}`;
  }
}

/** The steps of a fused computation for `node` when it is itself a Composite (so fusions nest flat). */
export function compositeOf(node: Apply): CompositeScalar | undefined {
  return node.op instanceof Composite ? node.op.composite : undefined;
}
