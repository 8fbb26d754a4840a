// Shape and Shape_i: a tensor's shape as values (an int32 vector, or one length as an int32
// scalar), and the symbolic shapes that inferShape works with: a static length becomes a
// constant, an unknown one a Shape_i node.
import { isIntDtype } from '../../kernels/dtype.js';
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import { disconnected } from '../../graph/gradient.js';
import type { SymbolicShape } from '../../graph/op.js';
import { Variable } from '../../graph/variable.js';
import { asTensorVariable, constant } from '../core/as-tensor.js';
import { makeNdArray, type NdArray } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { TensorType } from '../core/type.js';
import { isTensorVariable, TensorConstant, type TensorLike, type TensorVariable } from '../core/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { tensorPropKinds } from '../core/prop-kinds.js';

const intConstants = new Map<number, TensorVariable>();

/** An int32 scalar constant (shared for equal values, so shape graphs stay small). */
export function intConstant(n: number): TensorVariable {
  let c = intConstants.get(n);
  if (!c) {
    c = constant(n, { dtype: 'int32' });
    intConstants.set(n, c);
  }
  return c;
}

/** The value of a 0-d constant, or undefined for anything else. */
export function constantScalar(v: Variable): number | undefined {
  if (!(v instanceof TensorConstant) || v.ndim !== 0) return undefined;
  return v.data.data[v.data.offset];
}

/** The symbolic shape of `x` as one int32 scalar per axis (constants where the length is static). */
export function shapeOf(x: TensorVariable): TensorVariable[] {
  return x.type.shape.map((d, i) => (d !== null ? intConstant(d) : shapeI(x, i)));
}

/** `x` as a scalar integer variable (for lengths, indices and counts); `where` names the use. */
export function asIntScalar(x: number | Variable, where: string): TensorVariable {
  if (typeof x === 'number') {
    if (!Number.isInteger(x)) throw new TypeError(`${where}: expected an integer, got ${x}`);
    return intConstant(x);
  }
  if (!isTensorVariable(x) || x.ndim !== 0 || !isIntDtype(x.dtype)) {
    throw new TypeError(`${where}: expected an integer or a scalar integer variable, got ${x}${isTensorVariable(x) ? ` (${x.type})` : ''}`);
  }
  return x;
}

/**
 * The values of a small input that output shapes depend on (a length, an argument, a target
 * shape, split sizes): 0-d or 1-d, any stride. Plans pass such inputs with their values; when
 * only a layout came (a bug of the caller), this says so rather than compute with undefined.
 */
export function smallInputValues(v: TensorView, where: string): number[] {
  const n = v.shape.length === 0 ? 1 : v.shape[0]!;
  const step = v.shape.length === 0 ? 0 : v.stride[0]!;
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const x = v.data[v.offset + i * step];
    if (x === undefined) throw new Error(`${where}: its value is not known here (only its shape was given), and the output shape depends on it`);
    out[i] = x;
  }
  return out;
}

export class Shape extends TensorOp {
  override makeNode(x: unknown): Apply {
    const v = asTensorVariable(x as TensorLike);
    return new Apply(this, [v], [new TensorType('int32', [v.ndim]).makeVariable()]);
  }

  override perform(_node: Apply, [x]: readonly NdArray[]): NdArray[] {
    return [makeNdArray(Int32Array.from(x!.shape), [x!.shape.length])];
  }

  /** No kernel: plans compute the value on the calling thread from the input's shape. */
  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[x!.shape.length]];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    return [[intConstant((node.inputs[0]!.type as TensorType).ndim)]];
  }

  override connectionPattern(): boolean[][] {
    return [[false]];
  }

  override grad(): Variable[] {
    return [disconnected()];
  }

  /** Lengths do not move when values do: no tangent flows through. */
  override rop(): Variable[] {
    return [disconnected()];
  }

  override toString(): string {
    return 'Shape';
  }
}

export class ShapeI extends TensorOp {
  static override readonly props = ['i'] as const;
  static override readonly propKinds = { i: tensorPropKinds.axis };

  constructor(readonly i: number) {
    super();
  }

  override makeNode(x: unknown): Apply {
    const v = asTensorVariable(x as TensorLike);
    if (this.i < 0 || this.i >= v.ndim) {
      throw new RangeError(`${this}: axis ${this.i} is out of range for ${v} (${v.type}, ${v.ndim} axes)`);
    }
    return new Apply(this, [v], [new TensorType('int32', []).makeVariable()]);
  }

  override perform(_node: Apply, [x]: readonly NdArray[]): NdArray[] {
    return [makeNdArray(Int32Array.of(x!.shape[this.i]!), [])];
  }

  /** No kernel: plans compute the value on the calling thread from the input's shape. */
  override outputShapes(): number[][] {
    return [[]];
  }

  override inferShape(): SymbolicShape[] {
    return [[]];
  }

  override connectionPattern(): boolean[][] {
    return [[false]];
  }

  override grad(): Variable[] {
    return [disconnected()];
  }

  /** Lengths do not move when values do: no tangent flows through. */
  override rop(): Variable[] {
    return [disconnected()];
  }

  override toString(): string {
    return `Shape_i{${this.i}}`;
  }
}

let shapeOp: Shape | undefined;
const shapeIOps: ShapeI[] = [];

/** The shape of `x` as an int32 vector. */
export function shape(x: TensorLike): TensorVariable {
  return (shapeOp ??= new Shape()).call(x);
}

/** The length of axis `i` of `x` as an int32 scalar (a constant when it is static). */
export function shapeI(x: TensorVariable, i: number): TensorVariable {
  if (!Number.isInteger(i) || i < -x.ndim || i >= x.ndim) {
    throw new RangeError(`Shape_i: axis ${i} is out of range for ${x} (${x.type}, ${x.ndim} axes)`);
  }
  const axis = i < 0 ? i + x.ndim : i;
  const d = x.type.shape[axis];
  if (d !== undefined && d !== null) return intConstant(d);
  return (shapeIOps[axis] ??= new ShapeI(axis)).call(x);
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(Shape);
registerOpCodec(ShapeI);
