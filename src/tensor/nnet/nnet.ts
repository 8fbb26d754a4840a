// Neural-network functions: Softmax and LogSoftmax along one axis (numerically stable, with
// their own kernels), SoftmaxGrad (softmax's gradient as one op, so that backprop through a
// softmax is one pass), and relu as an element-wise composition. The three ops run the
// 'softmax', 'logSoftmax' and 'softmaxGrad' kernels, chunked by lanes along their axis.
import { isFloatDtype, type Dtype } from '../../kernels/dtype.js';
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import type { KernelCall, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { asTensorArgs, asTensorVariable } from '../core/as-tensor.js';
import { upcast, upgradeToFloat } from '../core/dtype.js';
import { ShapeMismatchError } from '../elemwise/elemwise.js';
import { add, exp, gt, mul, sub, where } from '../elemwise/math.js';
import { shapeText } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { sum } from '../elemwise/reduce.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { tensorPropKinds } from '../core/prop-kinds.js';

function checkAxis(where: string, axis: number): void {
  if (!Number.isInteger(axis) || axis < 0) {
    throw new RangeError(`${where}: the axis must be a non-negative integer, got ${axis} (the functions softmax and logSoftmax accept negative axes)`);
  }
}

/** The input as a tensor variable that has `axis`. */
function inputWithAxis(op: TensorOp, x: unknown, axis: number): TensorVariable {
  const v = asTensorVariable(x as TensorLike);
  if (axis >= v.ndim) {
    throw new TypeError(`${op}: the input ${v} (${v.type}) has ${v.ndim} axes; axis ${axis} does not exist`);
  }
  return v;
}

/** The kernel call of an op along `axis`: one task per group of lanes. */
function laneKernel(name: string, axis: number): KernelCall {
  return { name, params: { axis }, chunking: { by: 'lanes', axis } };
}

function sumAlong(v: TensorVariable, axis: number): TensorVariable {
  return sum(v, { axis, keepdims: true });
}

/** exp(x - max) / sum(exp(x - max)) along `axis`; integer inputs give floats. */
export class Softmax extends TensorOp {
  static override readonly props = ['axis'] as const;
  static override readonly propKinds = { axis: tensorPropKinds.axis };

  constructor(readonly axis: number) {
    super();
    checkAxis('Softmax', axis);
  }

  override makeNode(x: unknown): Apply {
    const v = inputWithAxis(this, x, this.axis);
    return new Apply(this, [v], [new TensorType(upgradeToFloat(v.dtype), v.type.shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return laneKernel('softmax', this.axis);
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [xs!];
  }

  override Lop(_inputs: readonly TensorVariable[], [sm]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    return [new SoftmaxGrad(this.axis).call(gz!, sm!)];
  }

  /** The Jacobian of softmax is symmetric, so its Rop is its Lop. */
  override rop([x]: readonly TensorVariable[], [ev]: readonly TensorVariable[]): Variable[] {
    return [new SoftmaxGrad(this.axis).call(ev!, this.call(x!))];
  }
}

/** The gradient of softmax given the output gradient dy and the softmax sm: (dy - sum(dy * sm)) * sm. */
export class SoftmaxGrad extends TensorOp {
  static override readonly props = ['axis'] as const;
  static override readonly propKinds = { axis: tensorPropKinds.axis };

  constructor(readonly axis: number) {
    super();
    checkAxis('SoftmaxGrad', axis);
  }

  override makeNode(dy: unknown, sm: unknown): Apply {
    const [g, s] = asTensorArgs([dy as TensorLike, sm as TensorLike], String(this));
    [g!, s!].forEach((v, i) => {
      if (!isFloatDtype(v.dtype)) throw new TypeError(`${this}: input ${i} ${v} (${v.type}) must be float32 or float64`);
    });
    inputWithAxis(this, g, this.axis);
    if (g!.ndim !== s!.ndim || g!.type.shape.some((d, a) => d !== null && s!.type.shape[a] !== null && d !== s!.type.shape[a])) {
      throw new ShapeMismatchError(`${this}: the gradient ${g} (${g!.type}) and the softmax ${s} (${s!.type}) must have one shape`);
    }
    const shape = g!.type.shape.map((d, a) => d ?? s!.type.shape[a]!);
    const dtype: Dtype = upcast(g!.dtype, s!.dtype);
    return new Apply(this, [g!, s!], [new TensorType(dtype, shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return laneKernel('softmaxGrad', this.axis);
  }

  override outputShapes(_node: Apply, [dy, sm]: readonly TensorView[]): number[][] {
    if (dy!.shape.some((d, a) => d !== sm!.shape[a])) {
      throw new ShapeMismatchError(`${this}: the gradient has shape ${shapeText(dy!.shape)} but the softmax has shape ${shapeText(sm!.shape)}`);
    }
    return [[...dy!.shape]];
  }

  override inferShape(node: Apply, [gs, ss]: readonly SymbolicShape[]): SymbolicShape[] {
    const g = node.inputs[0] as TensorVariable;
    return [gs!.map((d, a) => (g.type.shape[a] === null ? ss![a]! : d))];
  }

  override grad([dy, sm]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    // out = sm * (dy - s1) with s1 = sum(dy * sm): the part through dy is again SoftmaxGrad; the
    // part through sm is gz * (dy - s1) - dy * sum(gz * sm).
    const s1 = sumAlong(mul(dy!, sm!), this.axis);
    const gsm = sub(mul(gz!, sub(dy!, s1)), mul(dy!, sumAlong(mul(gz!, sm!), this.axis)));
    return [this.call(gz!, sm!), gsm];
  }

  override rop([dy, sm]: readonly TensorVariable[], [edy, esm]: readonly TensorVariable[]): Variable[] {
    const s1 = sumAlong(mul(dy!, sm!), this.axis);
    const throughSm = sub(mul(esm!, sub(dy!, s1)), mul(sm!, sumAlong(mul(dy!, esm!), this.axis)));
    return [add(this.call(edy!, sm!), throughSm)];
  }
}

/** x - max - log(sum(exp(x - max))) along `axis`; integer inputs give floats. */
export class LogSoftmax extends TensorOp {
  static override readonly props = ['axis'] as const;
  static override readonly propKinds = { axis: tensorPropKinds.axis };

  constructor(readonly axis: number) {
    super();
    checkAxis('LogSoftmax', axis);
  }

  override makeNode(x: unknown): Apply {
    const v = inputWithAxis(this, x, this.axis);
    return new Apply(this, [v], [new TensorType(upgradeToFloat(v.dtype), v.type.shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return laneKernel('logSoftmax', this.axis);
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [xs!];
  }

  override Lop(_inputs: readonly TensorVariable[], [out]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    return [sub(gz!, mul(exp(out!), sumAlong(gz!, this.axis)))];
  }

  override rop([x]: readonly TensorVariable[], [ev]: readonly TensorVariable[]): Variable[] {
    const sm = exp(this.call(x!));
    return [sub(ev!, sumAlong(mul(sm, ev!), this.axis))];
  }
}

/** `axis` of `v` as a non-negative number, or a clear error. */
function normalizedAxis(where: string, v: TensorVariable, axis: number): number {
  if (v.ndim === 0) throw new TypeError(`${where}: the input ${v} (${v.type}) is 0-d; ${where} normalizes along an axis, so it needs at least one`);
  if (!Number.isInteger(axis) || axis < -v.ndim || axis >= v.ndim) {
    throw new RangeError(`${where}: axis ${axis} is out of range for ${v} (${v.type}); the axes are ${-v.ndim}..${v.ndim - 1}`);
  }
  return axis < 0 ? axis + v.ndim : axis;
}

/** The softmax of `x` along `axis` (the last by default). */
export function softmax(x: TensorLike, axis = -1): TensorVariable {
  const v = asTensorVariable(x);
  return new Softmax(normalizedAxis('softmax', v, axis)).call(v);
}

/** The log of the softmax of `x` along `axis` (the last by default), computed stably. */
export function logSoftmax(x: TensorLike, axis = -1): TensorVariable {
  const v = asTensorVariable(x);
  return new LogSoftmax(normalizedAxis('logSoftmax', v, axis)).call(v);
}

/** max(x, 0) element-wise, as where(x > 0, x, 0): its gradient at 0 is 0, and NaN gives 0. */
export function relu(x: TensorLike): TensorVariable {
  const v = asTensorVariable(x);
  return where(gt(v, 0), v, 0);
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(Softmax);
registerOpCodec(SoftmaxGrad);
registerOpCodec(LogSoftmax);
