// The value type of tensors: scijs ndarrays over typed arrays. Helpers here make, copy, flatten
// and print them; conversion of user values into a tensor type lives in TensorType.filter.
import ndarrayFactory from 'ndarray';
import type ndarray from 'ndarray';
import { copyView } from '../../kernels/copy.js';
import { STORAGE, dtypeOfTypedArray, type Dtype, type TypedArray } from '../../kernels/dtype.js';
import { contiguousStrides, isContiguous, reachOf, sizeOf } from '../../kernels/view.js';

export type NdArray = ndarray.NdArray<TypedArray>;

/** A TypeError about a value that does not fit a variable: what, where, expected what. */
export class ValueTypeError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = 'ValueTypeError';
  }
}

/** A nested JS array of numbers or booleans (any depth). */
export type NestedArray = ReadonlyArray<number | boolean | NestedArray>;

export function isNdArray(x: unknown): x is NdArray {
  if (typeof x !== 'object' || x === null) return false;
  const o = x as Partial<NdArray>;
  return Array.isArray(o.shape) && Array.isArray(o.stride) && typeof o.offset === 'number' && o.data !== undefined;
}

type ViewClass = new (...args: unknown[]) => NdArray;
/**
 * scijs ndarray's view classes by storage and rank, as its factory made them: the factory finds
 * the class from the storage's tag on every call, which costs more than a small call's kernel.
 * A class takes (data, ...shape, ...stride, offset).
 */
const viewClasses = new Map<unknown, ViewClass[]>();

export function makeNdArray(data: TypedArray, shape: readonly number[], stride?: readonly number[], offset = 0): NdArray {
  const strides = stride ?? contiguousStrides(shape);
  let classes = viewClasses.get(data.constructor);
  if (!classes) viewClasses.set(data.constructor, (classes = []));
  const known = classes[shape.length];
  if (known) return new known(data, ...shape, ...strides, offset);
  const made = ndarrayFactory(data, [...shape], [...strides], offset) as NdArray;
  classes[shape.length] = made.constructor as ViewClass;
  return made;
}

/**
 * A scijs ndarray over `data` (weft.ndarray, so that programs need not install ndarray
 * themselves): C-order strides unless given, a 1-d array of the whole data without a shape.
 * Every element the view can reach must lie inside `data`.
 */
export function wrapTypedArray(data: TypedArray, shape: readonly number[] = [data.length], stride?: readonly number[], offset = 0): NdArray {
  if (!ArrayBuffer.isView(data) || data instanceof DataView) throw new TypeError(`weft.ndarray: data must be a typed array, got ${Object.prototype.toString.call(data)}`);
  const bad = shape.findIndex((n) => !Number.isInteger(n) || n < 0);
  if (bad >= 0) throw new RangeError(`weft.ndarray: shape[${bad}] must be a non-negative integer, got ${shape[bad]}`);
  const strides = stride ?? contiguousStrides(shape);
  if (strides.length !== shape.length) throw new RangeError(`weft.ndarray: ${strides.length} strides for ${shape.length} axes`);
  if (shape.every((n) => n > 0)) {
    const { low: lo, high: hi } = reachOf(shape, strides, offset);
    if (!Number.isInteger(offset) || lo < 0 || hi >= data.length) {
      throw new RangeError(`weft.ndarray: shape ${shapeText(shape)} with strides (${strides.join(', ')}) at offset ${offset} reaches elements ${lo}..${hi}, outside the data's ${data.length}`);
    }
  }
  return makeNdArray(data, shape, strides, offset);
}

/**
 * scijs lets an ndarray's data be another 1-d ndarray, read through its `get`: `ndarray(pool.from(a),
 * [n, n])` is the natural way to shape an array of a pool. Such a value as one view of the typed
 * array underneath (offsets and strides composed, through any depth), so that it is read as its
 * storage is: in place when that is the pool's, and as its dtype. Element by element through `get`
 * a 512x512 float32 product ran 15x slower and its values counted as JS numbers. Undefined for
 * anything else (data a typed array, a JS array, or an inner view of more than one axis, which
 * scijs would index by its first axis alone). Each view must reach only elements of the one under
 * it: ValueTypeError otherwise (`where` names the value).
 */
export function composedView(v: NdArray, where = 'value'): NdArray | undefined {
  const data: unknown = v.data;
  if (ArrayBuffer.isView(data) || !isNdArray(data) || data.shape.length !== 1) return undefined;
  const inner = ArrayBuffer.isView(data.data) ? data : composedView(data, where);
  if (!inner || dtypeOfTypedArray(inner.data) === undefined) return undefined;
  if (sizeOf(v.shape) > 0) {
    const { low, high } = reachOf(v.shape, v.stride, v.offset);
    if (low < 0 || high >= data.shape[0]!) {
      throw new ValueTypeError(
        `${where}: a view with shape ${shapeText(v.shape)}, strides (${v.stride.join(', ')}) and offset ${v.offset} reaches element ${low < 0 ? low : high} of the ndarray under it, which holds ${data.shape[0]}`,
      );
    }
  }
  const step = inner.stride[0]!;
  return makeNdArray(inner.data, v.shape, v.stride.map((t) => t * step), inner.offset + step * v.offset);
}

/** The dtype of an ndarray's storage (seen through views of views), or undefined for other storage. */
export function ndarrayDtype(v: NdArray, where = 'value'): Dtype | undefined {
  return dtypeOfTypedArray((composedView(v, where) ?? v).data);
}

/** A new contiguous, zero-filled array. */
export function empty(dtype: Dtype, shape: readonly number[]): NdArray {
  return makeNdArray(new STORAGE[dtype](sizeOf(shape)), shape);
}

/** A new contiguous copy of `a` stored as `dtype` (its own dtype by default). */
export function copyArray(a: NdArray, dtype?: Dtype): NdArray {
  const out = empty(dtype ?? storageDtype(a), a.shape);
  copyView(a, out);
  return out;
}

/** `a` itself when contiguous, else a contiguous copy. */
export function contiguous(a: NdArray): NdArray {
  return isContiguous(a) ? a : copyArray(a);
}

/** The dtype of the typed array behind `a` (bool arrays read as uint8). */
export function storageDtype(a: NdArray): Dtype {
  const d = dtypeOfTypedArray(a.data);
  if (!d) throw new TypeError('ndarray data must be a typed array');
  return d;
}

/** The elements of `a` in C order, as a new typed array of `a`'s storage class. */
export function flatValues(a: NdArray): TypedArray {
  if (isContiguous(a)) return a.data.subarray(a.offset, a.offset + sizeOf(a.shape));
  return copyArray(a).data;
}

/** What tolist gives: a number, or arrays of them nested once per axis. */
export type NestedList = number | NestedList[];

/**
 * Nested JS arrays (a number for a 0-d array). The shape of a value is known only when it runs,
 * so say the form you expect to index it: `tolist<number[][]>(m)[0][1]` (NumPy's tolist is
 * untyped for the same reason).
 */
export function tolist<T extends NestedList = NestedList>(a: NdArray): T {
  return nestedOf(a) as T;
}

function nestedOf(a: NdArray): NestedList {
  const flat = flatValues(a);
  const shape = a.shape;
  if (shape.length === 0) return flat[0]!;
  let pos = 0;
  const build = (axis: number): NestedList[] => {
    const out: NestedList[] = [];
    for (let i = 0; i < shape[axis]!; i++) out.push(axis === shape.length - 1 ? flat[pos++]! : build(axis + 1));
    return out;
  };
  return build(0);
}

/** Shape of a nested JS array; throws if it is ragged or holds non-numbers. */
export function nestedShape(value: unknown, where: string): number[] {
  const shape: number[] = [];
  let v: unknown = value;
  while (Array.isArray(v)) {
    shape.push(v.length);
    v = v[0];
  }
  const check = (x: unknown, axis: number): void => {
    if (axis === shape.length) {
      if (typeof x !== 'number' && typeof x !== 'boolean') {
        throw new ValueTypeError(`${where}: expected numbers in the nested array, found ${typeof x} at depth ${axis}`);
      }
      return;
    }
    if (!Array.isArray(x) || x.length !== shape[axis]) {
      throw new ValueTypeError(`${where}: the nested array is ragged (expected length ${shape[axis]} at depth ${axis})`);
    }
    for (const e of x) check(e, axis + 1);
  };
  check(value, 0);
  return shape;
}

export function flattenNested(value: unknown): Array<number | boolean> {
  return Array.isArray(value) ? (value.flat(Infinity) as Array<number | boolean>) : [value as number | boolean];
}

export function shapeText(shape: readonly number[]): string {
  return `[${shape.join(', ')}]`;
}
