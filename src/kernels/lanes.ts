// Lanes: the runs of elements along one axis, one at each position of the other axes. Kernels
// that work along an axis (softmax, cumulative sums, sorting) visit the lanes of a call's range.
import type { Range, TensorView } from './view.js';

/** The number of lanes: the product of the lengths of the other axes. */
export function laneCount(shape: readonly number[], axis: number): number {
  let n = 1;
  shape.forEach((d, a) => {
    if (a !== axis) n *= d;
  });
  return n;
}

/**
 * Calls `lane(p0, p1, p2, p3)` with the offset of the first element of every lane in `range` (all
 * lanes by default, in C order of the other axes) in each of up to four views of one shape.
 */
export function forEachLane(
  views: readonly TensorView[],
  axis: number,
  range: Range | undefined,
  lane: (p0: number, p1: number, p2: number, p3: number) => void,
): void {
  const shape = views[0]!.shape;
  if (shape[axis] === 0) return;
  const outer = shape.flatMap((d, a) => (a === axis ? [] : [d]));
  const strides = views.map((v) => v.stride.filter((_, a) => a !== axis));
  const total = laneCount(shape, axis);
  const start = Math.max(0, range?.start ?? 0);
  const end = Math.min(total, range?.end ?? total);
  if (start >= end) return;
  const nd = outer.length;
  const idx = new Array<number>(nd).fill(0);
  const p = views.map((v) => v.offset);
  for (let a = nd - 1, rem = start; a >= 0; a--) {
    const i = rem % outer[a]!;
    rem = (rem - i) / outer[a]!;
    idx[a] = i;
    for (let k = 0; k < p.length; k++) p[k] = p[k]! + i * strides[k]![a]!;
  }
  for (let l = start; l < end; l++) {
    lane(p[0]!, p[1] ?? 0, p[2] ?? 0, p[3] ?? 0);
    for (let a = nd - 1; a >= 0; a--) {
      idx[a] = idx[a]! + 1;
      for (let k = 0; k < p.length; k++) p[k] = p[k]! + strides[k]![a]!;
      if (idx[a]! < outer[a]!) break;
      idx[a] = 0;
      for (let k = 0; k < p.length; k++) p[k] = p[k]! - outer[a]! * strides[k]![a]!;
    }
  }
}
