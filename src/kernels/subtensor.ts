// Basic indexing on strided views: Python's slice arithmetic (written once over an abstract
// integer algebra, so the graph layer reuses the same rules for static and symbolic shapes), the
// view an index selects, y broadcast onto such a view, and the strided add of incSubtensor.
import type { TypedArray } from './dtype.js';
import { sizeOf, type TensorView } from './view.js';

/** A slice entry of an index, as structure: which bounds are given (their values come apart). */
export interface SliceSpec {
  readonly start: boolean;
  readonly stop: boolean;
  readonly step: boolean;
}

/** One entry of a basic index: an integer, a slice, or a new axis of length 1. */
export type IndexSpec = 'int' | 'newaxis' | SliceSpec;

export function isSliceSpec(e: IndexSpec): e is SliceSpec {
  return typeof e === 'object';
}

/** How many index values an entry consumes. */
export function valueCount(e: IndexSpec): number {
  if (e === 'int') return 1;
  if (e === 'newaxis') return 0;
  return Number(e.start) + Number(e.stop) + Number(e.step);
}

/**
 * Integer arithmetic over some representation T of integers (exact numbers, numbers-or-unknown,
 * symbolic scalars) with conditions C; `known` tells whether a condition is decided already.
 */
export interface IntAlgebra<T, C> {
  int(n: number): T;
  add(a: T, b: T): T;
  sub(a: T, b: T): T;
  neg(a: T): T;
  max(a: T, b: T): T;
  min(a: T, b: T): T;
  /** Division rounded toward minus infinity (Python's //). */
  floorDiv(a: T, b: T): T;
  lt(a: T, b: T): C;
  known(c: C): boolean | undefined;
  select(c: C, ifTrue: T, ifFalse: T): T;
}

/** Plain numbers: what perform uses. */
export const exactInts: IntAlgebra<number, boolean> = {
  int: (n) => n,
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  neg: (a) => -a,
  max: (a, b) => Math.max(a, b),
  min: (a, b) => Math.min(a, b),
  floorDiv: (a, b) => Math.floor(a / b),
  lt: (a, b) => a < b,
  known: (c) => c,
  select: (c, a, b) => (c ? a : b),
};

/** The first selected index, the step and the number of elements of a slice of one axis. */
export interface SliceRange<T> {
  readonly start: T;
  readonly step: T;
  readonly length: T;
}

/** A bound as Python reads it: negative counts from the end, then clipped into [lower, upper]. */
function clipBound<T, C>(A: IntAlgebra<T, C>, len: T, bound: T, lower: T, upper: T): T {
  const negative = A.lt(bound, A.int(0));
  const fromEnd = (): T => A.max(A.add(bound, len), lower);
  const direct = (): T => A.min(bound, upper);
  const k = A.known(negative);
  if (k !== undefined) return k ? fromEnd() : direct();
  return A.select(negative, fromEnd(), direct());
}

function forwardRange<T, C>(A: IntAlgebra<T, C>, len: T, start: T | undefined, stop: T | undefined, step: T): SliceRange<T> {
  const zero = A.int(0);
  const s = start === undefined ? zero : clipBound(A, len, start, zero, len);
  const e = stop === undefined ? len : clipBound(A, len, stop, zero, len);
  // ceil((e - s) / step), and 0 when the range is empty
  const length = A.max(zero, A.floorDiv(A.add(A.sub(e, s), A.sub(step, A.int(1))), step));
  return { start: s, step, length };
}

function backwardRange<T, C>(A: IntAlgebra<T, C>, len: T, start: T | undefined, stop: T | undefined, step: T): SliceRange<T> {
  const minusOne = A.int(-1);
  const last = A.sub(len, A.int(1));
  const s = start === undefined ? last : clipBound(A, len, start, minusOne, last);
  const e = stop === undefined ? minusOne : clipBound(A, len, stop, minusOne, last);
  const back = A.neg(step);
  const length = A.max(A.int(0), A.floorDiv(A.add(A.sub(s, e), A.sub(back, A.int(1))), back));
  return { start: s, step, length };
}

/**
 * Python's `slice(start, stop, step).indices(len)` and the slice's length, over any integer
 * algebra; undefined bounds take their defaults. A zero step is the caller's to reject.
 */
export function sliceRange<T, C>(
  A: IntAlgebra<T, C>,
  len: T,
  start: T | undefined,
  stop: T | undefined,
  step: T | undefined,
): SliceRange<T> {
  // a full slice keeps the axis as it is (and adds no arithmetic to symbolic shapes)
  if (step === undefined && start === undefined && stop === undefined) return { start: A.int(0), step: A.int(1), length: len };
  if (step === undefined) return forwardRange(A, len, start, stop, A.int(1));
  const forward = A.lt(A.int(0), step);
  const k = A.known(forward);
  if (k !== undefined) return k ? forwardRange(A, len, start, stop, step) : backwardRange(A, len, start, stop, step);
  const f = forwardRange(A, len, start, stop, step);
  const b = backwardRange(A, len, start, stop, step);
  return { start: A.select(forward, f.start, b.start), step, length: A.select(forward, f.length, b.length) };
}

/** A view over `data`: what `selectView` returns (an ndarray is made from it by the caller). */
export interface ViewLayout {
  readonly offset: number;
  readonly shape: number[];
  readonly stride: number[];
}

/**
 * The view of `x` that the index `spec` with `values` selects (NumPy basic indexing): integer
 * entries drop their axis, slices keep it with a scaled stride, new axes have stride 0, and axes
 * past the index are kept whole. `where` names the op in errors.
 */
export function selectView(x: TensorView, spec: readonly IndexSpec[], values: ArrayLike<number>, where: string): ViewLayout {
  let offset = x.offset;
  const shape: number[] = [];
  const stride: number[] = [];
  let axis = 0;
  let v = 0;
  for (const e of spec) {
    if (e === 'newaxis') {
      shape.push(1);
      stride.push(0);
      continue;
    }
    const len = x.shape[axis]!;
    const st = x.stride[axis]!;
    if (e === 'int') {
      const i = values[v++]!;
      if (i < -len || i >= len) throw new RangeError(`${where}: index ${i} is out of bounds for axis ${axis} with length ${len}`);
      offset += (i < 0 ? i + len : i) * st;
    } else {
      const start = e.start ? values[v++] : undefined;
      const stop = e.stop ? values[v++] : undefined;
      const step = e.step ? values[v++] : undefined;
      if (step === 0) throw new RangeError(`${where}: slice step cannot be zero (axis ${axis})`);
      const r = sliceRange(exactInts, len, start, stop, step);
      shape.push(r.length);
      stride.push(r.step * st);
      // an empty slice keeps the base offset, so the view never points outside the data
      if (r.length > 0) offset += r.start * st;
    }
    axis++;
  }
  for (; axis < x.shape.length; axis++) {
    shape.push(x.shape[axis]!);
    stride.push(x.stride[axis]!);
  }
  return { offset, shape, stride };
}

/**
 * `y` seen with the shape of a region: leading axes are added, and an axis of y broadcasts only
 * where `yBroadcastable` says its length is statically 1 (NumPy broadcasting restricted as in
 * PyTensor). Returns a problem description instead of a view when y does not fit.
 */
export function broadcastOnto(
  y: TensorView,
  shape: readonly number[],
  yBroadcastable: readonly boolean[],
): { readonly view: TensorView } | { readonly problem: string } {
  const lead = shape.length - y.shape.length;
  if (lead < 0) return { problem: `it has ${y.shape.length} axes, more than the region's ${shape.length}` };
  const stride = new Array<number>(shape.length).fill(0);
  for (let a = 0; a < y.shape.length; a++) {
    const d = y.shape[a]!;
    const want = shape[a + lead]!;
    if (d === want) stride[a + lead] = d === 1 ? 0 : y.stride[a]!;
    else if (d === 1 && yBroadcastable[a]) stride[a + lead] = 0;
    else {
      const hint = d === 1 ? ' and that axis of y is not statically broadcastable' : '';
      return { problem: `axis ${a} of y has length ${d} where the region has ${want}${hint}` };
    }
  }
  return { view: { data: y.data, offset: y.offset, shape, stride } };
}

/** dst += src element-wise over two views of one shape; `asBool` keeps a bool result 0 or 1. */
export function addIntoView(src: TensorView, dst: TensorView, asBool: boolean): void {
  const shape = dst.shape;
  const nd = shape.length;
  const total = sizeOf(shape);
  if (total === 0) return;
  const sd: TypedArray = src.data;
  const dd: TypedArray = dst.data;
  if (nd === 0) {
    dd[dst.offset] = combine(dd[dst.offset]!, sd[src.offset]!, asBool);
    return;
  }
  const last = nd - 1;
  const n = shape[last]!;
  const ss = src.stride[last]!;
  const ds = dst.stride[last]!;
  const idx = new Array<number>(nd).fill(0);
  let ps = src.offset;
  let pd = dst.offset;
  for (let row = 0, rows = total / n; row < rows; row++) {
    let a = ps;
    let b = pd;
    if (asBool) {
      for (let j = 0; j < n; j++, a += ss, b += ds) dd[b] = dd[b]! !== 0 || sd[a]! !== 0 ? 1 : 0;
    } else {
      for (let j = 0; j < n; j++, a += ss, b += ds) dd[b] = dd[b]! + sd[a]!;
    }
    // step to the next row: carry through the outer axes
    for (let k = last - 1; k >= 0; k--) {
      idx[k] = idx[k]! + 1;
      ps += src.stride[k]!;
      pd += dst.stride[k]!;
      if (idx[k]! < shape[k]!) break;
      idx[k] = 0;
      ps -= shape[k]! * src.stride[k]!;
      pd -= shape[k]! * dst.stride[k]!;
    }
  }
}

function combine(a: number, b: number, asBool: boolean): number {
  return asBool ? (a !== 0 || b !== 0 ? 1 : 0) : a + b;
}
