// NumPy's axis rearrangements as views: squeeze, expandDims, swapaxes (DimShuffles) and flip
// (a slice of step -1: negative strides). Each is its existing op applied with the pattern NumPy's
// function means, so gradients, inferShape, Rop and kernels are those ops'.
import { asTensorVariable } from '../core/as-tensor.js';
import { axisOptionsOf } from '../core/options.js';
import { slice } from '../core/slice.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { normalizeAxes } from '../elemwise/reduce.js';
import { dimshuffle, type ShuffleEntry } from './dimshuffle.js';
import { reshape } from './reshape.js';
import { shapeOf } from './shape.js';
import { get } from './subtensor.js';

export interface AxisOptions {
  /** An axis or axes (negative ones count from the end); all of them when omitted. */
  readonly axis?: number | readonly number[];
}

/**
 * `x` without the given axes of length 1 (by default every axis whose static length is 1). An
 * axis of static length 1 is dropped by a view; one whose length is known only when running
 * is checked then (a reshape to the other lengths, which fails unless it is 1).
 */
export function squeeze(x: TensorLike, axisOrOptions: AxisOptions | number | readonly number[] = {}): TensorVariable {
  const v = asTensorVariable(x);
  const { axis } = axisOptionsOf('squeeze', axisOrOptions, ['axis'], true);
  const axes = axis === undefined ? v.type.shape.flatMap((d, a) => (d === 1 ? [a] : [])) : normalizeAxes(axis, v.ndim, 'squeeze');
  for (const a of axes) {
    const d = v.type.shape[a];
    if (d !== null && d !== 1) throw new RangeError(`squeeze: axis ${a} of ${v} (${v.type}) has length ${d}; only axes of length 1 can be removed`);
  }
  if (axes.length === 0) return v;
  const kept = [...Array(v.ndim).keys()].filter((a) => !axes.includes(a));
  if (axes.every((a) => v.type.shape[a] === 1)) return dimshuffle(v, kept);
  const lengths = shapeOf(v);
  return reshape(v, kept.map((a) => lengths[a]!));
}

/** `x` with new axes of length 1 at the positions `axis` names in the result (NumPy's expand_dims). */
export function expandDims(x: TensorLike, axis: number | readonly number[]): TensorVariable {
  const v = asTensorVariable(x);
  const count = typeof axis === 'number' ? 1 : axis.length;
  const inserted = normalizeAxes(axis, v.ndim + count, 'expandDims');
  let next = 0;
  const pattern: ShuffleEntry[] = [...Array(v.ndim + count).keys()].map((a) => (inserted.includes(a) ? 'x' : next++));
  return dimshuffle(v, pattern);
}

/** `x` with axes `a` and `b` exchanged. */
export function swapaxes(x: TensorLike, a: number, b: number): TensorVariable {
  const v = asTensorVariable(x);
  const [p] = normalizeAxes(a, v.ndim, 'swapaxes');
  const [q] = normalizeAxes(b, v.ndim, 'swapaxes');
  const order = [...Array(v.ndim).keys()];
  [order[p!], order[q!]] = [q!, p!];
  return dimshuffle(v, order);
}

/** `x` with the order of elements reversed along the axes (all of them by default): a view with negative strides. */
export function flip(x: TensorLike, axisOrOptions: AxisOptions | number | readonly number[] = {}): TensorVariable {
  const v = asTensorVariable(x);
  const axes = normalizeAxes(axisOptionsOf('flip', axisOrOptions, ['axis'], true).axis, v.ndim, 'flip');
  if (axes.length === 0) return v;
  return get(v, ...[...Array(v.ndim).keys()].map((a) => (axes.includes(a) ? slice(null, null, -1) : slice(null, null))));
}
