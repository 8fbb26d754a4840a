// Sorting and searching (NumPy's sort, argsort, searchsorted; PyTensor's topk and argtopk): Sort
// and ArgSort along an axis (stable; NaN last), SearchSorted of values in a sorted vector. sort's
// gradient sends each output gradient back to the element it came from (a gather by the inverse
// order); topk is a gather by argtopk, so its gradient is the gather's. Kernels: kernels/sorting.ts.
import { isFloatDtype } from '../../kernels/dtype.js';
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import type { KernelCall, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { propKinds } from '../../graph/prop-kinds.js';
import { asTensorArgs, asTensorVariable } from '../core/as-tensor.js';
import { TensorOp } from '../core/op.js';
import { axisOptionsOf, checkedOptions } from '../core/options.js';
import { tensorPropKinds } from '../core/prop-kinds.js';
import { slice } from '../core/slice.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { normalizeAxes } from '../elemwise/reduce.js';
import { zerosLike } from '../shape/alloc.js';
import { arange } from '../shape/creation.js';
import { dimshuffle, type ShuffleEntry } from '../shape/dimshuffle.js';
import { get } from '../shape/indexing.js';
import { shapeOf } from '../shape/shape.js';

abstract class AlongAxis extends TensorOp {
  constructor(readonly axis: number) {
    super();
    if (!Number.isInteger(axis) || axis < 0) throw new RangeError(`${new.target.name}: axis must be a non-negative integer, got ${axis}`);
  }

  protected input(x: unknown): TensorVariable {
    const v = asTensorVariable(x as TensorLike);
    if (this.axis >= v.ndim) throw new RangeError(`${this}: axis ${this.axis} is out of range for ${v} (${v.type})`);
    if (v.dtype === 'bool') throw new TypeError(`${this}: cannot order bools (${v}); cast them to an integer dtype`);
    return v;
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [xs!];
  }
}

/** x's elements along `axis` in ascending order. */
export class Sort extends AlongAxis {
  static override readonly props = ['axis'] as const;
  static override readonly propKinds = { axis: tensorPropKinds.axis };

  override makeNode(x: unknown): Apply {
    const v = this.input(x);
    return new Apply(this, [v], [v.type.makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: 'sort', params: { axis: this.axis }, chunking: { by: 'lanes', axis: this.axis } };
  }

  override grad([x]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    if (!isFloatDtype(x!.dtype)) return [zerosLike(x!)];
    // sorted = x at `order`: element order[i] of x received gz[i], so x's gradient is gz at the inverse order.
    const order = new ArgSort(this.axis, false).call(x!) as TensorVariable;
    const inverse = new ArgSort(this.axis, false).call(order) as TensorVariable;
    return [takeAlongAxis(gz!, inverse, this.axis)];
  }

  override rop([x]: readonly TensorVariable[], [ev]: readonly Variable[]): Variable[] {
    return [takeAlongAxis(ev as TensorVariable, new ArgSort(this.axis, false).call(x!) as TensorVariable, this.axis)];
  }

  override toString(): string {
    return `Sort{axis=${this.axis}}`;
  }
}

/** The stable order of x's elements along `axis` (int32 indices), ascending or descending; NaN last. */
export class ArgSort extends AlongAxis {
  static override readonly props = ['axis', 'descending'] as const;
  static override readonly propKinds = { axis: tensorPropKinds.axis, descending: propKinds.boolean() };

  constructor(axis: number, readonly descending: boolean) {
    super(axis);
  }

  override makeNode(x: unknown): Apply {
    const v = this.input(x);
    return new Apply(this, [v], [new TensorType('int32', v.type.shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: 'argsort', params: { axis: this.axis, descending: this.descending }, chunking: { by: 'lanes', axis: this.axis } };
  }

  override grad([x]: readonly TensorVariable[]): Variable[] {
    return [zerosLike(x!)];
  }

  override toString(): string {
    return `ArgSort{axis=${this.axis}${this.descending ? ', descending' : ''}}`;
  }
}

/** Where each value would be inserted into a sorted vector to keep it sorted: the first place ('left') or the last ('right'). */
export class SearchSorted extends TensorOp {
  static override readonly props = ['side'] as const;
  static override readonly propKinds = { side: propKinds.oneOf<'left' | 'right'>(['left', 'right']) };

  constructor(readonly side: 'left' | 'right') {
    super();
    if (side !== 'left' && side !== 'right') throw new TypeError(`searchsorted: side must be 'left' or 'right', got ${JSON.stringify(side)}`);
  }

  override makeNode(sorted: unknown, values: unknown): Apply {
    const [s, v] = asTensorArgs([sorted as TensorLike, values as TensorLike], String(this)) as [TensorVariable, TensorVariable];
    if (s.ndim !== 1) throw new TypeError(`searchsorted: the sorted array must be a vector, got ${s} (${s.type})`);
    return new Apply(this, [s, v], [new TensorType('int32', v.type.shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: 'searchsorted', params: { side: this.side }, chunking: { by: 'elements' } };
  }

  override outputShapes(_node: Apply, [, v]: readonly TensorView[]): number[][] {
    return [[...v!.shape]];
  }

  override inferShape(_node: Apply, [, vs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [vs!];
  }

  override grad([s, v]: readonly TensorVariable[]): Variable[] {
    return [zerosLike(s!), zerosLike(v!)];
  }

  override toString(): string {
    return `SearchSorted{${this.side}}`;
  }
}

/** x at `indices` along `axis` (NumPy's take_along_axis): a gather whose other index arrays are the positions. */
export function takeAlongAxis(x: TensorVariable, indices: TensorVariable, axis: number): TensorVariable {
  const lengths = shapeOf(x);
  const grids = [...Array(x.ndim).keys()].map((a) => {
    if (a === axis) return indices;
    const pattern: ShuffleEntry[] = [...Array(x.ndim).keys()].map((b) => (b === a ? 0 : 'x'));
    return dimshuffle(arange(lengths[a]!), pattern);
  });
  return get(x, ...grids);
}

/** The axis (the last by default) that `name` works along in `v`, from its axis alone or its options. */
function axisOf(v: TensorVariable, axisOrOptions: AxisOrOptions, name: string): number {
  const { axis = -1 } = axisOptionsOf(name, axisOrOptions, ['axis'], false);
  return normalizeAxes(axis, v.ndim, name)[0]!;
}

type AxisOrOptions = { readonly axis?: number } | number;

/** x sorted along the axis (the last by default), NumPy's sort. */
export function sort(x: TensorLike, axisOrOptions: AxisOrOptions = {}): TensorVariable {
  const v = asTensorVariable(x);
  return new Sort(axisOf(v, axisOrOptions, 'sort')).call(v) as TensorVariable;
}

/** The indices that sort x along the axis (the last by default), stable, NumPy's argsort. */
export function argsort(x: TensorLike, axisOrOptions: AxisOrOptions = {}): TensorVariable {
  const v = asTensorVariable(x);
  return new ArgSort(axisOf(v, axisOrOptions, 'argsort'), false).call(v) as TensorVariable;
}

/**
 * The indices of the k largest elements along the axis (the last by default), largest first;
 * of the |k| smallest, smallest first, for a negative k (PyTensor's argtopk). Ties keep index order.
 */
export function argtopk(x: TensorLike, k: number, axisOrOptions: AxisOrOptions = {}): TensorVariable {
  const v = asTensorVariable(x);
  const a = axisOf(v, axisOrOptions, 'argtopk');
  if (!Number.isInteger(k) || k === 0) throw new RangeError(`argtopk: k must be a non-zero integer, got ${k}`);
  const n = v.type.shape[a];
  if (n !== null && n !== undefined && Math.abs(k) > n) throw new RangeError(`argtopk: k = ${k} but axis ${a} of ${v} has length ${n}`);
  const order = new ArgSort(a, k > 0).call(v) as TensorVariable;
  return get(order, ...[...Array(v.ndim).keys()].map((b) => (b === a ? slice(0, Math.abs(k)) : slice(null, null))));
}

/** The k largest elements along the axis, largest first (the |k| smallest for a negative k), PyTensor's topk. */
export function topk(x: TensorLike, k: number, axisOrOptions: AxisOrOptions = {}): TensorVariable {
  const v = asTensorVariable(x);
  const a = axisOf(v, axisOrOptions, 'topk');
  return takeAlongAxis(v, argtopk(v, k, { axis: a }), a);
}

/** For each value, its insertion index in the sorted vector (NumPy's searchsorted; int32). */
export function searchsorted(sorted: TensorLike, values: TensorLike, options: { readonly side?: 'left' | 'right' } = {}): TensorVariable {
  return new SearchSorted(checkedOptions('searchsorted', options, ['side']).side ?? 'left').call(sorted, values) as TensorVariable;
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(Sort);
registerOpCodec(ArgSort);
registerOpCodec(SearchSorted);
