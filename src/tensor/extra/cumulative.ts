// Cumulative sums and products along an axis (PyTensor's CumOp): cumsum's gradient is the
// reversed cumsum of the output gradient; cumprod's is CumprodGrad, a kernel that holds where x
// has zeros (PyTensor's formula divides by x), whose own gradient (second order) is CumprodRop for
// the output gradient and CumprodGradGrad for x. Kernels: kernels/cumulate.ts, chunked by lanes.
import { isDiscreteDtype, isFloatDtype, type Dtype } from '../../kernels/dtype.js';
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import type { KernelCall, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { propKinds } from '../../graph/prop-kinds.js';
import { asTensorArgs, asTensorVariable } from '../core/as-tensor.js';
import { TensorOp } from '../core/op.js';
import { axisOptionsOf } from '../core/options.js';
import { tensorPropKinds } from '../core/prop-kinds.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { add } from '../elemwise/math.js';
import { normalizeAxes } from '../elemwise/reduce.js';
import { evalPointOrZeros, zerosLike } from '../shape/alloc.js';
import { flip } from '../shape/axes.js';
import { flatten } from '../shape/reshape.js';

/** NumPy's accumulation dtype: floats keep theirs, smaller integers and bools widen (to int32 or uint32). */
function cumulativeDtype(d: Dtype): Dtype {
  if (isFloatDtype(d)) return d;
  return d === 'uint8' || d === 'uint16' || d === 'uint32' ? 'uint32' : 'int32';
}

export class CumOp extends TensorOp {
  static override readonly props = ['axis', 'mode'] as const;
  static override readonly propKinds = { axis: tensorPropKinds.axis, mode: propKinds.oneOf<'add' | 'mul'>(['add', 'mul']) };

  constructor(
    readonly axis: number,
    readonly mode: 'add' | 'mul',
  ) {
    super();
    if (!Number.isInteger(axis) || axis < 0) throw new RangeError(`CumOp: axis must be a non-negative integer, got ${axis}`);
    if (mode !== 'add' && mode !== 'mul') throw new TypeError(`CumOp: mode must be 'add' or 'mul', got ${JSON.stringify(mode)}`);
  }

  override makeNode(x: unknown): Apply {
    const v = asTensorVariable(x as TensorLike);
    if (this.axis >= v.ndim) throw new RangeError(`${this}: axis ${this.axis} is out of range for ${v} (${v.type})`);
    return new Apply(this, [v], [new TensorType(cumulativeDtype(v.dtype), v.type.shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: 'cumulate', params: { axis: this.axis, mode: this.mode }, chunking: { by: 'lanes', axis: this.axis } };
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [xs!];
  }

  override grad([x]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    if (isDiscreteDtype(x!.dtype)) return [zerosLike(x!)];
    if (this.mode === 'add') return [flip(this.call(flip(gz!, { axis: this.axis })) as TensorVariable, { axis: this.axis })];
    return [new CumprodGrad(this.axis).call(x!, gz!)];
  }

  override rop([x]: readonly TensorVariable[], [ev]: readonly Variable[]): Variable[] {
    if (this.mode === 'add') return [this.call(evalPointOrZeros(ev!, x!))];
    return [new CumprodRop(this.axis).call(x!, evalPointOrZeros(ev!, x!))];
  }

  override toString(): string {
    return `${this.mode === 'add' ? 'Cumsum' : 'Cumprod'}{axis=${this.axis}}`;
  }
}

/** An op of (x, and arrays shaped as x) along `axis` that gives an array shaped as x: cumprod's derivatives. */
abstract class CumprodDerivative extends TensorOp {
  static override readonly props = ['axis'] as const;
  static override readonly propKinds = { axis: tensorPropKinds.axis };
  protected abstract readonly kernelName: string;

  constructor(readonly axis: number) {
    super();
  }

  override makeNode(x: unknown, ...others: unknown[]): Apply {
    const vs = asTensorArgs([x as TensorLike, ...(others as TensorLike[])], String(this));
    const [xv, last] = [vs[0]!, vs[vs.length - 1]!];
    vs.slice(1).forEach((v) => {
      if (v.ndim !== xv.ndim) throw new TypeError(`${this}: x (${xv.type}) and ${v} (${v.type}) must have the same axes`);
    });
    return new Apply(this, vs, [new TensorType(last.dtype, xv.type.shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: this.kernelName, params: { axis: this.axis, mode: 'mul' }, chunking: { by: 'lanes', axis: this.axis } };
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [xs!];
  }

  protected abstract readonly title: string;

  override toString(): string {
    return `${this.title}{axis=${this.axis}}`;
  }
}

/**
 * The gradient of cumprod(x) along `axis` for output gradient g, computed without dividing by x.
 * Linear in g (its transpose is the Rop, CumprodRop); its gradient for x is CumprodGradGrad.
 */
export class CumprodGrad extends CumprodDerivative {
  protected readonly kernelName = 'cumprodGrad';
  protected readonly title = 'CumprodGrad';

  override grad([x, g]: readonly TensorVariable[], [h]: readonly TensorVariable[]): Variable[] {
    return [new CumprodGradGrad(this.axis).call(x!, g!, h!), new CumprodRop(this.axis).call(x!, h!)];
  }

  override rop([x, g]: readonly TensorVariable[], [ex, eg]: readonly Variable[]): Variable[] {
    return [add(this.call(x!, evalPointOrZeros(eg!, g!)) as TensorVariable, new CumprodGradGrad(this.axis).call(x!, g!, evalPointOrZeros(ex!, x!)) as TensorVariable)];
  }
}

function cumulative(x: TensorLike, axis: number | undefined, mode: 'add' | 'mul', name: string): TensorVariable {
  const v = asTensorVariable(x);
  if (axis === undefined) return new CumOp(0, mode).call(flatten(v)) as TensorVariable;
  const [a] = normalizeAxes(axis, v.ndim, name);
  return new CumOp(a!, mode).call(v) as TensorVariable;
}

/** The running sums along the axis (of the flattened array when axis is omitted), NumPy's cumsum. */
export function cumsum(x: TensorLike, axisOrOptions: { readonly axis?: number } | number = {}): TensorVariable {
  return cumulative(x, axisOptionsOf('cumsum', axisOrOptions, ['axis'], false).axis, 'add', 'cumsum');
}

/** The running products along the axis (of the flattened array when axis is omitted), NumPy's cumprod. */
export function cumprod(x: TensorLike, axisOrOptions: { readonly axis?: number } | number = {}): TensorVariable {
  return cumulative(x, axisOptionsOf('cumprod', axisOrOptions, ['axis'], false).axis, 'mul', 'cumprod');
}

/** The Rop of cumprod(x) along `axis` for eval point ev: y'_i = y'_{i-1} x_i + y_{i-1} ev_i. */
export class CumprodRop extends CumprodDerivative {
  protected readonly kernelName = 'cumprodRop';
  protected readonly title = 'CumprodRop';

  override grad([x, ev]: readonly TensorVariable[], [h]: readonly TensorVariable[]): Variable[] {
    return [new CumprodGradGrad(this.axis).call(x!, h!, ev!), new CumprodGrad(this.axis).call(x!, h!)];
  }
}

/**
 * Second derivatives of cumprod, of (x, a, b): element m is the sum over j >= m of a_j times the
 * sum over i <= j, i != m, of b_i times the product of x_k for k <= j but i and m. It is the
 * gradient for x of <b, CumprodGrad(x, a)> and of <a, CumprodRop(x, b)>. No division by x.
 */
export class CumprodGradGrad extends CumprodDerivative {
  protected readonly kernelName = 'cumprodGradGrad';
  protected readonly title = 'CumprodGradGrad';
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(CumOp);
registerOpCodec(CumprodGrad);
registerOpCodec(CumprodRop);
registerOpCodec(CumprodGradGrad);
