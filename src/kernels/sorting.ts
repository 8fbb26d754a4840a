// Sorting and searching along an axis, lane by lane: 'sort' (ascending, NaN last as NumPy's),
// 'argsort' (the stable order: ties keep their index order; ascending or descending, NaN last
// either way), and 'searchsorted' (for each value, where it would go in a sorted vector: the
// first such place ('left') or the last ('right'), chunked over the values).
import { forEachLane } from './lanes.js';
import { registerKernel } from './registry.js';
import { positionOf, sizeOf, type Range, type TensorView } from './view.js';

export interface SortParams {
  readonly axis: number;
  readonly descending?: boolean;
}

export interface SearchParams {
  readonly side: 'left' | 'right';
}

/** a before b (negative), after (positive), or tied (0): ascending or descending, NaN after every number. */
function compare(a: number, b: number, descending: boolean): number {
  const na = a !== a;
  const nb = b !== b;
  if (na || nb) return na === nb ? 0 : na ? 1 : -1;
  return descending ? b - a : a - b;
}

let lane = new Float64Array(64);
let order = new Int32Array(64);

function scratch(n: number): void {
  if (lane.length < n) lane = new Float64Array(Math.max(n, lane.length * 2));
  if (order.length < n) order = new Int32Array(Math.max(n, order.length * 2));
}

/** The lane's stable order (indices sorted by value, ties by index). */
function laneOrder(n: number, descending: boolean): Int32Array {
  const idx = Array.from({ length: n }, (_, i) => i);
  idx.sort((i, j) => compare(lane[i]!, lane[j]!, descending) || i - j);
  for (let i = 0; i < n; i++) order[i] = idx[i]!;
  return order;
}

/** Visits each lane of x in `range` with its stable order; `write(q, so, order, n)` stores the result at the output's lane. */
function sortLanes(x: TensorView, out: TensorView, params: SortParams, range: Range | undefined, write: (q: number, so: number, order: Int32Array, n: number) => void): void {
  const { axis, descending = false } = params;
  const n = x.shape[axis]!;
  scratch(n);
  const [sx, so] = [x.stride[axis]!, out.stride[axis]!];
  forEachLane([x, out], axis, range, (p, q) => {
    for (let i = 0; i < n; i++) lane[i] = x.data[p + i * sx]!;
    write(q, so, laneOrder(n, descending), n);
  });
}

registerKernel('sort', ([x], [out], params, range) => {
  sortLanes(x!, out!, params as unknown as SortParams, range, (q, so, o, n) => {
    for (let i = 0; i < n; i++) out!.data[q + i * so] = lane[o[i]!]!;
  });
});

registerKernel('argsort', ([x], [out], params, range) => {
  sortLanes(x!, out!, params as unknown as SortParams, range, (q, so, o, n) => {
    for (let i = 0; i < n; i++) out!.data[q + i * so] = o[i]!;
  });
});

registerKernel('searchsorted', ([sorted, values], [out], params, range) => {
  const { side } = params as unknown as SearchParams;
  const s = sorted!;
  const n = s.shape[0]!;
  const at = (i: number): number => s.data[s.offset + i * s.stride[0]!]!;
  const v = values!;
  const o = out!;
  const total = sizeOf(o.shape);
  const [start, end] = [range?.start ?? 0, range?.end ?? total];
  for (let k = start; k < end; k++) {
    // Element k of values (and of the output, a new contiguous buffer), in C order.
    const x = v.data[positionOf(v.shape, v.stride, v.offset, k)]!;
    // The first i with sorted[i] >= x (left) or > x (right); NaN goes after every number.
    let [lo, hi] = [0, n];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compare(at(mid), x, false);
      if (c < 0 || (side === 'right' && c === 0)) lo = mid + 1;
      else hi = mid;
    }
    o.data[o.offset + k] = lo;
  }
});
