// Alloc: a new tensor of a given shape filled by broadcasting a value into it; zeros, ones,
// zerosLike, onesLike and broadcastLike are built on it. AllocEmpty: memory of a given shape
// left unfilled, for an output that the next node writes entirely (the inplace rewrites use it).
// BroadcastTo: Alloc's semantics as a view with stride 0 on the repeated axes.
import { isFloatDtype, type Dtype } from '../../kernels/dtype.js';
import { broadcastView, type TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import { disconnected, isDisconnected } from '../../graph/gradient.js';
import type { IndexMap, KernelCall, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { asTensorVariable, constant } from '../core/as-tensor.js';
import { config } from '../core/config.js';
import { dimshuffle } from './dimshuffle.js';
import { shapeText } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { sum } from '../elemwise/reduce.js';
import { asIntScalar, constantScalar, Shape, shapeOf, smallInputValues } from './shape.js';
import { TensorType } from '../core/type.js';
import { isTensorVariable, type ShapeLike, type TensorLike, type TensorVariable } from '../core/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { tensorPropKinds } from '../core/prop-kinds.js';

export class Alloc extends TensorOp {
  override makeNode(value: unknown, ...dims: unknown[]): Apply {
    const v = asTensorVariable(value as TensorLike);
    const lengths = dims.map((d, i) => asIntScalar(d as number | Variable, `${this}: length ${i}`));
    if (v.ndim > lengths.length) {
      const axes = `${v.ndim} ${v.ndim === 1 ? 'axis' : 'axes'}`;
      throw new TypeError(`${this}: the value ${v} has ${axes}, more than the ${lengths.length} of the requested shape`);
    }
    const lead = lengths.length - v.ndim;
    const shape = lengths.map((len, i) => {
      const known = constantScalar(len) ?? null;
      if (known !== null && known < 0) throw new RangeError(`${this}: negative length ${known} on axis ${i}`);
      const vd = i >= lead ? v.type.shape[i - lead]! : 1;
      if (known !== null && vd !== null && vd !== 1 && vd !== known) {
        throw new TypeError(`${this}: the value ${v} (${v.type}) cannot be broadcast to length ${known} on axis ${i}`);
      }
      return known ?? (vd !== 1 ? vd : null);
    });
    return new Apply(this, [v, ...lengths], [new TensorType(v.dtype, shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: 'alloc', params: {}, chunking: { by: 'elements' } };
  }

  /** The lengths are read from the scalar inputs; the value must broadcast to them (strictly). */
  override outputShapes(node: Apply, [value, ...dims]: readonly TensorView[]): number[][] {
    const shape = dims.map((d, i) => smallInputValues(d, `${this}: length ${i}`)[0]!);
    shape.forEach((d, i) => {
      if (d < 0) throw new RangeError(`${this}: negative length ${d} on axis ${i}`);
    });
    const lead = shape.length - value!.shape.length;
    const vType = node.inputs[0]!.type as TensorType;
    shape.forEach((d, i) => {
      if (i < lead) return;
      const vd = value!.shape[i - lead]!;
      if (vd === d || (vd === 1 && vType.shape[i - lead] === 1)) return;
      throw new RangeError(
        `${this}: the value of shape ${shapeText(value!.shape)} cannot be broadcast to shape ${shapeText(shape)}` +
          (vd === 1 ? ` (axis ${i - lead} of the value is not statically broadcastable)` : ''),
      );
    });
    return [shape];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    return [node.inputs.slice(1)];
  }

  override connectionPattern(node: Apply): boolean[][] {
    return node.inputs.map((_, i) => [i === 0]);
  }

  override grad([value, ...dims]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    const lead = gz!.ndim - value!.ndim;
    const axes: number[] = [];
    for (let i = 0; i < gz!.ndim; i++) {
      if (i < lead || (value!.type.shape[i - lead] === 1 && gz!.type.shape[i] !== 1)) axes.push(i);
    }
    let g = axes.length > 0 ? sum(gz!, { axis: axes, keepdims: true }) : gz!;
    if (lead > 0) g = dimshuffle(g, [...Array(value!.ndim).keys()].map((a) => a + lead));
    return [g, ...dims.map(() => disconnected())];
  }

  override rop([, ...dims]: readonly TensorVariable[], [ev]: readonly TensorVariable[]): Variable[] {
    return [this.call(ev, ...dims)];
  }

  override toString(): string {
    return 'Alloc';
  }
}

/**
 * A tensor of the given lengths whose contents are unspecified (Theano's AllocEmpty): only for
 * a value that its one reader overwrites entirely before anything reads it. perform gives
 * zeros; a plan gives whatever its buffer held.
 */
export class AllocEmpty extends TensorOp {
  static override readonly props = ['dtype'] as const;
  static override readonly propKinds = { dtype: tensorPropKinds.dtype };

  constructor(readonly dtype: Dtype) {
    super();
  }

  override makeNode(...dims: unknown[]): Apply {
    const lengths = dims.map((d, i) => asIntScalar(d as number | Variable, `AllocEmpty: length ${i}`));
    const shape = lengths.map((len, i) => {
      const known = constantScalar(len) ?? null;
      if (known !== null && known < 0) throw new RangeError(`AllocEmpty: negative length ${known} on axis ${i}`);
      return known;
    });
    return new Apply(this, lengths, [new TensorType(this.dtype, shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: 'allocEmpty', params: {}, chunking: { by: 'none' } };
  }

  override outputShapes(_node: Apply, dims: readonly TensorView[]): number[][] {
    const shape = dims.map((d, i) => smallInputValues(d, `AllocEmpty: length ${i}`)[0]!);
    shape.forEach((d, i) => {
      if (d < 0) throw new RangeError(`AllocEmpty: negative length ${d} on axis ${i}`);
    });
    return [shape];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    return [node.inputs];
  }

  override connectionPattern(node: Apply): boolean[][] {
    return node.inputs.map(() => [false]);
  }

  override grad(dims: readonly TensorVariable[]): Variable[] {
    return dims.map(() => disconnected());
  }

  /** Folding would make a constant of unspecified contents, which merging could then share. */
  override doConstantFolding(): boolean {
    return false;
  }

  override toString(): string {
    return `AllocEmpty{dtype=${this.dtype}}`;
  }
}

/** An unfilled tensor of `dtype` with these lengths (see AllocEmpty: its contents are unspecified). */
export function allocEmpty(dtype: Dtype, ...shape: Array<number | Variable>): TensorVariable {
  return new AllocEmpty(dtype).call(...shape);
}

let allocOp: Alloc | undefined;

function shapeArgs(shape: ShapeLike, where: string): Array<number | TensorVariable> {
  if (typeof shape === 'number') return [shape];
  if (isTensorVariable(shape)) {
    // `x.shape` itself: take x's lengths directly (static ones stay static, no indexing needed).
    if (shape.owner?.op instanceof Shape) return shapeOf(shape.owner.inputs[0] as TensorVariable);
    if (shape.ndim !== 1 || shape.type.shape[0] === null) {
      throw new TypeError(`${where}: a shape given as a variable must be a vector of static length, got ${shape.type}`);
    }
    const n = shape.type.shape[0]!;
    return [...Array(n).keys()].map((i) => shape.get(i));
  }
  if (!Array.isArray(shape)) throw new TypeError(`${where}: the shape must be a number, an array of lengths or a vector variable, got ${String(shape)}`);
  return [...(shape as ReadonlyArray<number | TensorVariable>)];
}

/** `value` broadcast into a new tensor of `shape`. */
export function alloc(value: TensorLike, ...shape: Array<number | Variable>): TensorVariable {
  if (shape.length === 0) {
    const v = asTensorVariable(value);
    if (v.ndim === 0) return v;
  }
  return (allocOp ??= new Alloc()).call(value, ...shape);
}

export function zeros(shape: ShapeLike, dtype: Dtype = config.floatX): TensorVariable {
  return alloc(constant(0, { dtype }), ...shapeArgs(shape, 'zeros'));
}

export function ones(shape: ShapeLike, dtype: Dtype = config.floatX): TensorVariable {
  return alloc(constant(1, { dtype }), ...shapeArgs(shape, 'ones'));
}

/** Zeros of `x`'s shape and static shape (and dtype, unless given). */
export function zerosLike(x: TensorLike, dtype?: Dtype): TensorVariable {
  const v = asTensorVariable(x);
  return alloc(constant(0, { dtype: dtype ?? v.dtype }), ...shapeOf(v));
}

/** A zero tangent for `x`: zeros of its shape, in its dtype when it is a float, else in floatX. */
export function zeroTangent(x: TensorVariable): TensorVariable {
  return zerosLike(x, isFloatDtype(x.dtype) ? x.dtype : config.floatX);
}

/**
 * The eval point a rop got for input `x`, or a zero tangent where it got `disconnected()` (x is
 * discrete, so it does not move), for the rops whose formula needs a tangent of every input.
 */
export function evalPointOrZeros(ev: Variable, x: TensorVariable): TensorVariable {
  return isDisconnected(ev) ? zeroTangent(x) : (ev as TensorVariable);
}

export function onesLike(x: TensorLike, dtype?: Dtype): TensorVariable {
  const v = asTensorVariable(x);
  return alloc(constant(1, { dtype: dtype ?? v.dtype }), ...shapeOf(v));
}

/** `value` broadcast to the shape of `like` (unchanged if it already has like's static shape). */
export function broadcastLike(value: TensorVariable, like: TensorVariable): TensorVariable {
  if (value.ndim === like.ndim && value.type.shape.every((d, i) => d !== 1 || like.type.shape[i] === 1)) return value;
  return alloc(value, ...shapeOf(like));
}

/**
 * `x` broadcast to the lengths, as a view (NumPy's broadcast_to): the new leading axes and the
 * axes of static length 1 that grow have stride 0. Its elements share memory, so nothing
 * overwrites it in place (the destroy handler refuses; an inplace rewrite then keeps a copy).
 */
export class BroadcastTo extends Alloc {
  override readonly viewMap: IndexMap = { 0: [0] };
  override readonly repeatsElements = true;

  override view(node: Apply, inputs: readonly TensorView[]): TensorView[] {
    const [shape] = this.outputShapes(node, inputs);
    return [broadcastView(inputs[0]!, shape!)];
  }

  override toString(): string {
    return 'BroadcastTo';
  }
}

let broadcastOp: BroadcastTo | undefined;

/** NumPy's broadcast_to: `x` as a read-only view with its axes of length 1 (and new leading ones) repeated to `shape`. */
export function broadcastTo(x: TensorLike, shape: ReadonlyArray<number | Variable>): TensorVariable {
  const v = asTensorVariable(x);
  if (shape.length < v.ndim) throw new TypeError(`broadcastTo: ${v} (${v.type}) has ${v.ndim} axes, more than the ${shape.length} of the shape`);
  return (broadcastOp ??= new BroadcastTo()).call(v, ...shape) as TensorVariable;
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(Alloc);
registerOpCodec(BroadcastTo);
registerOpCodec(AllocEmpty);
