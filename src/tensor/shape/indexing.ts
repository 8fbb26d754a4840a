// The public indexing functions, NumPy's x[...]: `get` with basic entries (integers, slices, null:
// Subtensor, a view) or with integer arrays and boolean masks too (AdvancedSubtensor after the slices, the indexed
// axes moved first when they are not adjacent, as NumPy does), and setSubtensor / incSubtensor on
// either's result, which rebuild the tensor that was indexed.
import { isIntDtype } from '../../kernels/dtype.js';
import { asTensorVariable, constant } from '../core/as-tensor.js';
import { axisOptionsOf } from '../core/options.js';
import { Slice, slice } from '../core/slice.js';
import { isTensorVariable, type IndexEntry, type TensorLike, type TensorVariable } from '../core/variable.js';
import { normalizeAxes } from '../elemwise/reduce.js';
import { AdvancedIncSubtensor, AdvancedSubtensor } from './advanced-subtensor.js';
import { dimshuffle } from './dimshuffle.js';
import { nonzero } from './nonzero.js';
import { flatten } from './reshape.js';
import * as basic from './subtensor.js';

/** How an advanced index was built: rebuilding its base with new values at the selected elements. */
interface AdvancedOrigin {
  readonly base: TensorVariable;
  /** The base with the slices applied (the base itself when there were none), and the axis order given to the gather. */
  readonly sliced: TensorVariable;
  readonly order: readonly number[] | undefined;
  readonly axis: number;
  readonly arrays: readonly TensorVariable[];
}

const origins = new WeakMap<TensorVariable, AdvancedOrigin>();

function isIndexArray(e: unknown): boolean {
  return Array.isArray(e) || (isTensorVariable(e) && e.ndim > 0);
}

/** A boolean mask: a bool tensor with axes, or a JS array of booleans (nested for several axes). */
function isMask(e: unknown): boolean {
  if (isTensorVariable(e)) return e.dtype === 'bool' && e.ndim > 0;
  return Array.isArray(e) && (e as unknown[]).flat(Infinity as 1).some((v) => typeof v === 'boolean');
}

/** The index arrays a mask at entry `k`, over x's axes from `axis`, stands for: its true elements' positions. */
function maskArrays(e: unknown, k: number, x: TensorVariable, axis: number): TensorVariable[] {
  let mask: TensorVariable;
  if (Array.isArray(e)) {
    const bad = (e as unknown[]).flat(Infinity as 1).find((v) => typeof v !== 'boolean');
    if (bad !== undefined) throw new TypeError(`get: entry ${k} mixes booleans with ${JSON.stringify(bad)}; a mask holds booleans only`);
    mask = constant(e as unknown as number[], { dtype: 'bool' });
  } else mask = e as TensorVariable;
  if (axis + mask.ndim > x.ndim) throw new TypeError(`get: the mask at entry ${k} has ${mask.ndim} axes but ${x} (${x.type}) has ${x.ndim - axis} left from axis ${axis}`);
  mask.type.shape.forEach((d, i) => {
    const n = x.type.shape[axis + i];
    if (d !== null && n !== null && n !== undefined && d !== n) {
      throw new RangeError(`get: the mask at entry ${k} has length ${d} on its axis ${i} but axis ${axis + i} of ${x} has length ${n}`);
    }
  });
  return nonzero(mask);
}


/** An integer index array from entry `k`: a tensor of an integer dtype, or a JS array of integers. */
function indexArray(e: unknown, k: number): TensorVariable {
  if (Array.isArray(e)) {
    const flat = (e as unknown[]).flat(Infinity as 1);
    const bad = flat.find((v) => typeof v !== 'number' || !Number.isInteger(v));
    if (bad !== undefined) throw new TypeError(`get: entry ${k} is an array holding ${JSON.stringify(bad)}; index arrays hold integers`);
    return constant(e as number[], { dtype: 'int32' });
  }
  const v = e as TensorVariable;
  if (!isIntDtype(v.dtype)) throw new TypeError(`get: entry ${k} is ${v} (${v.type}); index arrays must have an integer dtype`);
  return v;
}

/** `x.get(...)`: basic indexing (a view), or NumPy's advanced indexing when an entry is an integer array. */
export function get(x: TensorLike, ...entries: IndexEntry[]): TensorVariable {
  const v = asTensorVariable(x);
  if (!entries.some(isIndexArray)) return basic.get(v, ...entries);
  // A mask of k axes stands for the k index arrays of its true elements (NumPy's rule).
  let consumed = 0;
  const index = entries.flatMap((e, k): IndexEntry[] => {
    if (!isMask(e)) {
      if (e !== null) consumed++;
      return [e];
    }
    const arrays = maskArrays(e, k, v, consumed);
    consumed += arrays.length;
    return arrays;
  });
  if (index.some((e) => e === null)) throw new TypeError('get: null (a new axis) cannot be mixed with index arrays; use pt.expandDims first');
  if (index.length > v.ndim) throw new TypeError(`get: too many indices for ${v} (${v.type}): it has ${v.ndim} axes but ${index.length} were indexed`);
  // Integers among index arrays are 0-d index arrays (NumPy: they take part in the broadcast).
  const advanced = index.flatMap((e, k) => (e instanceof Slice ? [] : [k]));
  const arrays = advanced.map((k) => {
    const e = index[k];
    if (typeof e !== 'number') return indexArray(e, k);
    if (!Number.isInteger(e)) throw new TypeError(`get: entry ${k} is ${e}; an index must be an integer`);
    return constant(e, { dtype: 'int32' });
  });
  const slices = index.map((e) => (e instanceof Slice ? e : slice(null, null)));
  const sliced = index.some((e) => e instanceof Slice && (e.start ?? e.stop ?? e.step) !== null) ? basic.get(v, ...slices) : v;
  const adjacent = advanced.every((k, i) => k === advanced[0]! + i);
  const order = adjacent ? undefined : [...advanced, ...[...Array(v.ndim).keys()].filter((a) => !advanced.includes(a))];
  const axis = adjacent ? advanced[0]! : 0;
  const out = new AdvancedSubtensor(axis, arrays.length).call(order ? dimshuffle(sliced, order) : sliced, ...arrays);
  origins.set(out, { base: v, sliced, order, axis, arrays });
  return out;
}

/** NumPy's take: x's elements along `axis` at the indices (of the flattened x when axis is omitted). */
export function take(x: TensorLike, indices: TensorLike | readonly unknown[], axisOrOptions: { readonly axis?: number } | number = {}): TensorVariable {
  const v = asTensorVariable(x);
  const { axis } = axisOptionsOf('take', axisOrOptions, ['axis'], false);
  const idx = indexArray(Array.isArray(indices) ? indices : asTensorVariable(indices as TensorLike), 1);
  if (axis === undefined) return new AdvancedSubtensor(0, 1).call(flatten(v), idx);
  const [a] = normalizeAxes(axis, v.ndim, 'take');
  return new AdvancedSubtensor(a!, 1).call(v, idx);
}

function update(view: TensorVariable, y: TensorLike, set: boolean): TensorVariable {
  const origin = origins.get(view);
  if (!origin) return set ? basic.setSubtensor(view, y) : basic.incSubtensor(view, y);
  const { base, sliced, order, axis, arrays } = origin;
  const target = order ? dimshuffle(sliced, order) : sliced;
  const updated = new AdvancedIncSubtensor(axis, arrays.length, set).call(target, y, ...arrays);
  let back = updated;
  if (order) {
    const inverse = Array<number>(order.length);
    order.forEach((a, i) => (inverse[a] = i));
    back = dimshuffle(updated, inverse);
  }
  // The slices' region of the base replaced by the updated region (which already holds the sums).
  return sliced === base ? back : basic.setSubtensor(sliced, back);
}

/** A new tensor equal to the x of `view = x.get(...)` with that region (or those elements) set to y. */
export function setSubtensor(view: TensorVariable, y: TensorLike): TensorVariable {
  return update(view, y, true);
}

/** A new tensor equal to the x of `view = x.get(...)` with y added there; repeated indices add repeatedly (np.add.at). */
export function incSubtensor(view: TensorVariable, y: TensorLike): TensorVariable {
  return update(view, y, false);
}
