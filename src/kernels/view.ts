// TensorView: the one data structure kernels see. It is exactly the shape of a scijs ndarray
// (data, offset, shape, stride), so an ndarray passes as a view with no conversion, and a worker
// builds one over shared memory from numbers alone.
import type { TypedArray } from './dtype.js';

export interface TensorView {
  readonly data: TypedArray;
  /** Element offset of index (0, ..., 0) in `data`. */
  readonly offset: number;
  readonly shape: readonly number[];
  /** Element strides, one per axis; 0 on a broadcast axis. */
  readonly stride: readonly number[];
}

/** A half-open range [start, end) of flat output elements (or rows) that one task computes. */
export interface Range {
  readonly start: number;
  readonly end: number;
}

export function sizeOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** The lowest and highest positions a non-empty view reaches in its data. */
export function reachOf(shape: readonly number[], stride: readonly number[], offset: number): { readonly low: number; readonly high: number } {
  let low = offset;
  let high = offset;
  for (let a = 0; a < shape.length; a++) {
    const step = (shape[a]! - 1) * stride[a]!;
    if (step < 0) low += step;
    else high += step;
  }
  return { low, high };
}

/** C-order (row-major) strides for a shape. */
export function contiguousStrides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    s[i] = acc;
    acc *= shape[i]!;
  }
  return s;
}

/**
 * Where element k (in C order) of the first `axes` axes of a layout lies: `offset` plus each
 * axis's index times its stride.
 */
export function positionOf(shape: readonly number[], stride: readonly number[], offset: number, k: number, axes = shape.length): number {
  let p = offset;
  for (let d = axes - 1; d >= 0; d--) {
    const n = shape[d]!;
    p += (k % n) * stride[d]!;
    k = Math.floor(k / n);
  }
  return p;
}

/** `v` seen with `shape` (right-aligned): new leading axes and axes of length 1 that grow get stride 0. */
export function broadcastView(v: TensorView, shape: readonly number[]): TensorView {
  const lead = shape.length - v.shape.length;
  return {
    data: v.data,
    offset: v.offset,
    shape,
    stride: shape.map((d, a) => (a < lead || (v.shape[a - lead] === 1 && d !== 1) ? 0 : v.stride[a - lead]!)),
  };
}

/** Is the view laid out C-contiguously (axes of length 1 may have any stride)? */
export function isContiguous(v: Pick<TensorView, 'shape' | 'stride'>): boolean {
  let acc = 1;
  for (let i = v.shape.length - 1; i >= 0; i--) {
    const d = v.shape[i]!;
    if (d !== 1 && v.stride[i] !== acc) return false;
    acc *= d;
  }
  return true;
}

/** Row `r` of a view (its first axis fixed), as a view of the same memory. */
export function rowOf(v: TensorView, r: number): TensorView {
  return { data: v.data, offset: v.offset + r * v.stride[0]!, shape: v.shape.slice(1), stride: v.stride.slice(1) };
}
