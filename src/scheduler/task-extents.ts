// The bytes a task of a plan may touch: for each view its call reads or writes, the bounding
// byte range of the part the task touches. A chunk narrows what its call's split promises (its
// elements, rows or slab); everything else counts whole. The planner orders tasks whose ranges
// conflict, and the plan check verifies that no unordered pair does.
import { bytesPerElement } from '../kernels/dtype.js';
import { isContiguous } from '../kernels/view.js';
import { slabBounds, type CallDescriptor, type TaskDescriptor, type ViewDescriptor } from '../workers/protocol.js';

/** A half-open byte range [lo, hi). */
export type Extent = readonly [number, number];

export interface TaskExtents {
  readonly reads: readonly Extent[];
  readonly writes: readonly Extent[];
}

/** The bounding byte range of a view's elements, or undefined when it has none. */
export function viewExtent(v: ViewDescriptor): Extent | undefined {
  let extent: Extent | undefined;
  visitPart(v, -1, 0, 0, (lo, hi) => (extent = [lo, hi]));
  return extent;
}

/**
 * Hands `visit` the bounding byte range [lo, hi) of the elements of `v` whose index on `axis` is
 * in [start, end) (all of them for axis -1); nothing when there are none.
 */
function visitPart(v: ViewDescriptor, axis: number, start: number, end: number, visit: (lo: number, hi: number) => void): void {
  let lo = 0;
  let hi = 0;
  for (let a = 0; a < v.shape.length; a++) {
    const n = a === axis ? end - start : v.shape[a]!;
    if (n <= 0) return;
    const step = (n - 1) * v.stride[a]!;
    if (step < 0) lo += step;
    else hi += step;
  }
  const size = bytesPerElement(v.dtype);
  const base = v.offset + (axis >= 0 ? start * v.stride[axis]! * size : 0);
  visit(base + lo * size, base + (hi + 1) * size);
}

const sameShape = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((d, i) => d === b[i]);

/**
 * Hands `visit` what task `task` of `call` may touch, by the contract of its split: a chunk of
 * elements touches only its flat elements [start, end) of every view shaped like the view it
 * cuts (output 0, unless the split names another output or an input), when that view is
 * contiguous, else all of it; a chunk of rows writes only its rows of each output
 * (outputs of a call chunked by rows share their first axis: a batch's); a
 * slab task reads only its slab of input 0 and writes only its row of output 0. Tasks of a call
 * never conflict with each other (their writes are disjoint by the same contract).
 */
export function visitTaskExtents(
  views: readonly ViewDescriptor[],
  call: CallDescriptor,
  task: Pick<TaskDescriptor, 'start' | 'end'>,
  visit: (write: boolean, lo: number, hi: number) => void,
): void {
  const split = task.start < 0 ? undefined : call.split;
  // The view whose flat elements an element split cuts (an output, or the input a copy out reads).
  const out0 =
    split?.by === 'elements' && split.input !== undefined ? views[call.inputs[split.input] ?? -1] : views[call.outputs[split?.by === 'elements' ? (split.output ?? 0) : 0] ?? -1];
  const one = (view: number, write: boolean, index: number): void => {
    const v = views[view]!;
    const to = (lo: number, hi: number): void => visit(write, lo, hi);
    switch (split?.by) {
      case 'elements':
        if (out0 && sameShape(v.shape, out0.shape) && isContiguous(v)) {
          const size = bytesPerElement(v.dtype);
          if (task.end > task.start) visit(write, v.offset + task.start * size, v.offset + task.end * size);
          return;
        }
        return visitPart(v, -1, 0, 0, to);
      case 'rows':
        return write && v.shape.length > 0 ? visitPart(v, 0, task.start, task.end, to) : visitPart(v, -1, 0, 0, to);
      case 'slabs': {
        if (index !== 0) return visitPart(v, -1, 0, 0, to);
        if (write) return visitPart(v, 0, task.start, task.start + 1, to);
        const [start, end] = slabBounds(v.shape[split.axis]!, split.count, task.start);
        return visitPart(v, split.axis, start, end, to);
      }
      default:
        return visitPart(v, -1, 0, 0, to);
    }
  };
  call.inputs.forEach((view, i) => one(view, false, i));
  call.outputs.forEach((view, i) => one(view, true, i));
}

/** What task `task` of `call` may touch (see visitTaskExtents). */
export function taskExtents(views: readonly ViewDescriptor[], call: CallDescriptor, task: Pick<TaskDescriptor, 'start' | 'end'>): TaskExtents {
  const reads: Extent[] = [];
  const writes: Extent[] = [];
  visitTaskExtents(views, call, task, (write, lo, hi) => (write ? writes : reads).push([lo, hi]));
  return { reads, writes };
}
