// The 'incSubtensor' kernel: out = x with the region that a basic index selects set to y, or
// increased by y (y broadcast onto the region). It runs by rows of out: a chunk copies its rows of
// x, then sets or adds the part of the region that lies in those rows. 'incSubtensorInplace' is
// the same without the copy: its output is x itself (any layout), written where the region is.
import { copyView } from './copy.js';
import { registerKernel } from './registry.js';
import { addIntoView, broadcastOnto, exactInts, selectView, sliceRange, type IndexSpec } from './subtensor.js';
import { sizeOf, type Range, type TensorView } from './view.js';

/** How the index selects along axis 0 of x: one row, or a slice that is axis `axis` of the region. */
type FirstAxisSelection =
  | { readonly kind: 'row'; readonly row: number }
  | { readonly kind: 'slice'; readonly axis: number; readonly first: number; readonly step: number; readonly length: number };

function firstAxisSelection(spec: readonly IndexSpec[], values: readonly number[], len: number): FirstAxisSelection {
  let newAxes = 0;
  for (const e of spec) {
    if (e === 'newaxis') {
      newAxes++;
      continue;
    }
    if (e === 'int') {
      const i = values[0]!;
      return { kind: 'row', row: i < 0 ? i + len : i };
    }
    let v = 0;
    const start = e.start ? values[v++] : undefined;
    const stop = e.stop ? values[v++] : undefined;
    const step = e.step ? values[v++] : undefined;
    const r = sliceRange(exactInts, len, start, stop, step);
    return { kind: 'slice', axis: newAxes, first: r.start, step: r.step, length: r.length };
  }
  // axis 0 is not indexed: it is kept whole, after the new axes
  return { kind: 'slice', axis: newAxes, first: 0, step: 1, length: len };
}

/** The indices t of a slice (row first + t * step) whose rows lie in [start, end). */
function slicePart(first: number, step: number, length: number, start: number, end: number): [number, number] {
  if (step > 0) {
    return [Math.max(0, Math.ceil((start - first) / step)), Math.min(length, Math.ceil((end - first) / step))];
  }
  const back = -step;
  return [Math.max(0, Math.floor((first - end) / back) + 1), Math.min(length, Math.floor((first - start) / back) + 1)];
}

/** `v` restricted to [t0, t1) along `axis`. */
function narrowed(v: TensorView, axis: number, t0: number, t1: number): TensorView {
  const shape = [...v.shape];
  shape[axis] = t1 - t0;
  return { data: v.data, offset: v.offset + t0 * v.stride[axis]!, shape, stride: v.stride };
}

export interface IncSubtensorParams {
  /** The index structure (Subtensor's idxList). */
  readonly idxList: readonly IndexSpec[];
  readonly setInstead: boolean;
  /** Which axes of y are statically broadcastable. */
  readonly yBroadcastable: readonly boolean[];
  /** The output is bool: an add is a logical or. */
  readonly asBool: boolean;
}

/**
 * out = x with x[index] set to (or increased by) y, for the rows of out in `rows` (all by
 * default). `values` are the index values; the op has checked them and y's shape. out is a new
 * C-contiguous array, so the region never holds an element twice and chunks are independent.
 */
export function incSubtensorInto(
  x: TensorView,
  y: TensorView,
  values: readonly number[],
  out: TensorView,
  p: IncSubtensorParams,
  rows?: Range,
): void {
  const nd = out.shape.length;
  const rowCount = nd === 0 ? 1 : out.shape[0]!;
  const start = Math.max(0, rows?.start ?? 0);
  const end = Math.min(rowCount, rows?.end ?? rowCount);
  if (start >= end) return;
  const rowSize = nd === 0 ? 1 : sizeOf(out.shape.slice(1));
  copyView(x, out, { start: start * rowSize, end: end * rowSize });
  writeRegion(out, y, values, p, start, end);
}

/**
 * Sets or adds y into the region of `out` that the index selects, for the part of it that lies
 * in rows [start, end) of out. out may have any layout without repeated elements (no stride 0
 * on an axis longer than 1): it is x itself when the op is inplace.
 */
export function writeRegion(out: TensorView, y: TensorView, values: readonly number[], p: IncSubtensorParams, start: number, end: number): void {
  const nd = out.shape.length;
  const rowCount = nd === 0 ? 1 : out.shape[0]!;
  const r = selectView(out, p.idxList, values, 'IncSubtensor');
  const fit = broadcastOnto(y, r.shape, p.yBroadcastable);
  if ('problem' in fit) throw new RangeError(`IncSubtensor: y does not fit the indexed region: ${fit.problem}`);
  let region: TensorView = { data: out.data, offset: r.offset, shape: r.shape, stride: r.stride };
  let src = fit.view;
  if (nd > 0 && (start > 0 || end < rowCount)) {
    const sel = firstAxisSelection(p.idxList, values, rowCount);
    if (sel.kind === 'row') {
      if (sel.row < start || sel.row >= end) return;
    } else {
      const [t0, t1] = slicePart(sel.first, sel.step, sel.length, start, end);
      if (t0 >= t1) return;
      region = narrowed(region, sel.axis, t0, t1);
      src = narrowed(src, sel.axis, t0, t1);
    }
  }
  if (p.setInstead) copyView(src, region);
  else addIntoView(src, region, p.asBool);
}

/** Inputs (x, y, ...index values as 0-d arrays); params: IncSubtensorParams; by rows of out. */
registerKernel('incSubtensor', (ins, outs, params, range) => {
  const values = ins.slice(2).map((v) => v.data[v.offset]!);
  incSubtensorInto(ins[0]!, ins[1]!, values, outs[0]!, params as unknown as IncSubtensorParams, range);
});

/** As 'incSubtensor', with out being x's own memory: only the region is written. By rows of out. */
registerKernel('incSubtensorInplace', (ins, outs, params, range) => {
  const values = ins.slice(2).map((v) => v.data[v.offset]!);
  const out = outs[0]!;
  const rowCount = out.shape.length === 0 ? 1 : out.shape[0]!;
  const start = Math.max(0, range?.start ?? 0);
  const end = Math.min(rowCount, range?.end ?? rowCount);
  if (start < end) writeRegion(out, ins[1]!, values, params as unknown as IncSubtensorParams, start, end);
});
