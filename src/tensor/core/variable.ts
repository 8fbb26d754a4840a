// The tensor variables users hold: TensorVariable (symbolic), TensorConstant (a fixed value)
// and TensorSharedVariable (a value kept between calls). All three carry the methods of
// TensorMethods (x.add(y), x.sum(), x.T, ...); methods.ts installs them, so that this module
// imports no ops and every op module may import it.
import type { Dtype } from '../../kernels/dtype.js';
import { Constant, Variable, type Givens } from '../../graph/variable.js';
import { SharedVariable } from '../../graph/shared.js';
import type { FilterOptions } from '../../graph/type.js';
import type { NdArray, NestedArray } from './ndarray.js';
import type { Slice } from './slice.js';
import type { TensorType } from './type.js';

/** Anything an op accepts where a tensor is expected: JS literals and arrays become constants. */
export type TensorLike = TensorVariable | number | boolean | NestedArray | NdArray | NdArray['data'];

/** A tensor's value as users give it: an ndarray, a typed array, nested arrays or a number. */
export type TensorValue = NdArray | NdArray['data'] | NestedArray | number | boolean;

/** One entry of `x.get(...)`: an integer (or scalar int variable), a slice, or null for a new axis. */
/** An index array (integers) or a mask (booleans) written in JS, nested for several axes. */
export type IndexArray = ReadonlyArray<number | boolean | IndexArray>;
export type IndexEntry = number | TensorVariable | Slice | null | IndexArray;

/** A shape argument: numbers and scalar int variables, or an int vector variable. */
/** A shape: lengths (numbers or int scalars), an int vector variable, or one number for a vector (`zeros(3)`). */
export type ShapeLike = number | ReadonlyArray<number | TensorVariable> | TensorVariable;

/** An axis or axes given alone: `x.sum(1)`, `pt.mean(x, [0, 2])`, as in PyTensor and NumPy. */
export type AxisArg = number | readonly number[];

export interface ReduceOptions {
  /** The axis or axes to reduce (negative counts from the end); all axes when omitted. */
  readonly axis?: number | readonly number[] | null;
  /** Keep reduced axes with length 1. */
  readonly keepdims?: boolean;
}

export interface VarOptions extends ReduceOptions {
  /** Delta degrees of freedom: the divisor is N - ddof (0 by default, as NumPy). */
  readonly ddof?: number;
}

export interface TensorMethods {
  add(...others: TensorLike[]): TensorVariable;
  sub(y: TensorLike): TensorVariable;
  mul(...others: TensorLike[]): TensorVariable;
  trueDiv(y: TensorLike): TensorVariable;
  /** Alias of trueDiv. */
  div(y: TensorLike): TensorVariable;
  intDiv(y: TensorLike): TensorVariable;
  mod(y: TensorLike): TensorVariable;
  pow(y: TensorLike): TensorVariable;
  neg(): TensorVariable;
  abs(): TensorVariable;
  sign(): TensorVariable;
  exp(): TensorVariable;
  expm1(): TensorVariable;
  log(): TensorVariable;
  log1p(): TensorVariable;
  log2(): TensorVariable;
  log10(): TensorVariable;
  sqrt(): TensorVariable;
  sqr(): TensorVariable;
  sin(): TensorVariable;
  cos(): TensorVariable;
  tan(): TensorVariable;
  arcsin(): TensorVariable;
  arccos(): TensorVariable;
  arctan(): TensorVariable;
  arctan2(x: TensorLike): TensorVariable;
  sinh(): TensorVariable;
  cosh(): TensorVariable;
  tanh(): TensorVariable;
  sigmoid(): TensorVariable;
  softplus(): TensorVariable;
  erf(): TensorVariable;
  erfc(): TensorVariable;
  floor(): TensorVariable;
  ceil(): TensorVariable;
  round(): TensorVariable;
  clip(min: TensorLike, max: TensorLike): TensorVariable;
  maximum(y: TensorLike): TensorVariable;
  minimum(y: TensorLike): TensorVariable;
  eq(y: TensorLike): TensorVariable;
  neq(y: TensorLike): TensorVariable;
  lt(y: TensorLike): TensorVariable;
  le(y: TensorLike): TensorVariable;
  gt(y: TensorLike): TensorVariable;
  ge(y: TensorLike): TensorVariable;
  and(y: TensorLike): TensorVariable;
  or(y: TensorLike): TensorVariable;
  xor(y: TensorLike): TensorVariable;
  not(): TensorVariable;
  astype(dtype: Dtype): TensorVariable;

  sum(options?: ReduceOptions | AxisArg): TensorVariable;
  prod(options?: ReduceOptions | AxisArg): TensorVariable;
  mean(options?: ReduceOptions | AxisArg): TensorVariable;
  max(options?: ReduceOptions | AxisArg): TensorVariable;
  min(options?: ReduceOptions | AxisArg): TensorVariable;
  argmax(options?: ReduceOptions | AxisArg): TensorVariable;
  argmin(options?: ReduceOptions | AxisArg): TensorVariable;
  all(options?: ReduceOptions | AxisArg): TensorVariable;
  any(options?: ReduceOptions | AxisArg): TensorVariable;
  var(options?: VarOptions | AxisArg): TensorVariable;
  std(options?: VarOptions | AxisArg): TensorVariable;

  reshape(shape: ShapeLike): TensorVariable;
  flatten(ndim?: number): TensorVariable;
  dimshuffle(...pattern: Array<number | 'x'>): TensorVariable;
  /** Without the given axes of length 1 (all of static length 1 by default). */
  squeeze(options?: { readonly axis?: number | readonly number[] }): TensorVariable;
  swapaxes(a: number, b: number): TensorVariable;
  /** Each element repeated in place along the axis (the flattened array by default). */
  repeat(repeats: number, options?: { readonly axis?: number }): TensorVariable;
  diagonal(options?: { readonly offset?: number; readonly axis1?: number; readonly axis2?: number }): TensorVariable;
  trace(): TensorVariable;
  cumsum(options?: { readonly axis?: number }): TensorVariable;
  cumprod(options?: { readonly axis?: number }): TensorVariable;
  sort(options?: { readonly axis?: number }): TensorVariable;
  argsort(options?: { readonly axis?: number }): TensorVariable;
  transpose(...axes: number[]): TensorVariable;
  /** The transpose (axes reversed). */
  readonly T: TensorVariable;
  /** The symbolic shape: an int32 vector. */
  readonly shape: TensorVariable;
  /** Basic indexing, as x[...] in NumPy: a view. */
  get(...index: IndexEntry[]): TensorVariable;

  dot(y: TensorLike): TensorVariable;
  matmul(y: TensorLike): TensorVariable;
}

export interface TensorVariable extends TensorMethods {}
export class TensorVariable extends Variable<TensorType> {
  /** The value of this variable (computed on the calling thread); `givens` maps inputs to values. */
  override eval(givens?: Givens): Promise<NdArray> {
    return super.eval(givens) as Promise<NdArray>;
  }

  get dtype(): Dtype {
    return this.type.dtype;
  }
  get ndim(): number {
    return this.type.ndim;
  }
  get broadcastable(): readonly boolean[] {
    return this.type.broadcastable;
  }
}

export interface TensorConstant extends TensorMethods {}
export class TensorConstant extends Constant<TensorType, NdArray> {
  /** The value of this variable (computed on the calling thread); `givens` maps inputs to values. */
  override eval(givens?: Givens): Promise<NdArray> {
    return super.eval(givens) as Promise<NdArray>;
  }

  override toString(): string {
    if (this.name !== undefined) return this.name;
    const v = this.data;
    if (v.shape.length === 0) return `TensorConstant{${v.data[v.offset]}}`;
    const n = v.shape.reduce((a, b) => a * b, 1);
    if (n <= 8) return `TensorConstant{${JSON.stringify(tolistOf(v))}}`;
    return `TensorConstant{${this.dtype}, shape [${v.shape.join(', ')}]}`;
  }

  get dtype(): Dtype {
    return this.type.dtype;
  }
  get ndim(): number {
    return this.type.ndim;
  }
  get broadcastable(): readonly boolean[] {
    return this.type.broadcastable;
  }
}

export interface TensorSharedVariable extends TensorMethods {}
export class TensorSharedVariable extends SharedVariable<TensorType, NdArray> {
  /** The value of this variable (computed on the calling thread); `givens` maps inputs to values. */
  override eval(givens?: Givens): Promise<NdArray> {
    return super.eval(givens) as Promise<NdArray>;
  }

  get dtype(): Dtype {
    return this.type.dtype;
  }
  get ndim(): number {
    return this.type.ndim;
  }
  get broadcastable(): readonly boolean[] {
    return this.type.broadcastable;
  }
  override getValue(options: { borrow?: boolean } = {}): NdArray {
    return super.getValue(options);
  }
  /** Replaces the value (checked and converted to this variable's type; copied unless `borrow`). */
  override setValue(value: TensorValue, options: { borrow?: boolean } & FilterOptions = {}): void {
    super.setValue(value, options);
  }
}

function tolistOf(v: NdArray): unknown {
  const rec = (axis: number, offset: number): unknown =>
    axis === v.shape.length
      ? v.data[offset]
      : [...Array(v.shape[axis]).keys()].map((i) => rec(axis + 1, offset + i * v.stride[axis]!));
  return rec(0, v.offset);
}

/** Every tensor-valued variable (symbolic, constant or shared). */
export function isTensorVariable(x: unknown): x is TensorVariable {
  return x instanceof TensorVariable || x instanceof TensorConstant || x instanceof TensorSharedVariable;
}
