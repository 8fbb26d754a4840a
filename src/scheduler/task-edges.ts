// The edges between a plan's tasks. Calls run as if in their order (a topological order of the
// graph, orderings included): a call depends on the earlier calls whose bytes it reads after they
// wrote them, or overwrites after they read or wrote them (data, the destroy handler's orderings
// and buffer reuse alike), found by walking the region's byte ranges. Between two such calls
// only the tasks whose ranges conflict are linked, so aligned chunks depend one to one; when
// that would take more edges than a barrier (every chunk reading everything), one barrier task
// stands between the two calls. Tasks and edges then grow linearly with the data.
import type { CallDescriptor, ViewDescriptor } from '../workers/protocol.js';
import { viewExtent, visitTaskExtents, type Extent } from './task-extents.js';

export interface TaskSpan {
  readonly call: number;
  readonly start: number;
  readonly end: number;
}

export interface TaskGraph {
  /** Successors of every task, the barriers' (numbered after the given tasks) included. */
  readonly successors: ReadonlyArray<ReadonlySet<number>>;
  /** Barrier k is task (tasks given + k): after every task of `before`, before every task of `after`. */
  readonly barriers: ReadonlyArray<{ readonly before: number; readonly after: number }>;
}

/** What touched a byte range last: the call that wrote it, and the calls that read it since. */
interface Segment {
  lo: number;
  hi: number;
  writer: number;
  readers: number[];
}

/** The region's byte ranges, cut where calls' views begin and end (sorted, disjoint). */
class Segments {
  readonly #list: Segment[] = [];

  /** The segments that exactly cover [lo, hi), cutting and adding segments as needed. */
  cover([lo, hi]: Extent): Segment[] {
    const list = this.#list;
    let i = this.#firstEnding(lo);
    const out: Segment[] = [];
    let at = lo;
    while (at < hi) {
      const s = list[i];
      if (s === undefined || s.lo >= hi || s.lo > at) {
        const gap: Segment = { lo: at, hi: s === undefined || s.lo >= hi ? hi : s.lo, writer: -1, readers: [] };
        list.splice(i, 0, gap);
        out.push(gap);
      } else if (s.lo < at) {
        list.splice(i + 1, 0, { lo: at, hi: s.hi, writer: s.writer, readers: s.readers.slice() });
        s.hi = at;
        i += 1;
        continue;
      } else {
        if (s.hi > hi) {
          list.splice(i + 1, 0, { lo: hi, hi: s.hi, writer: s.writer, readers: s.readers.slice() });
          s.hi = hi;
        }
        out.push(s);
      }
      at = list[i]!.hi;
      i += 1;
    }
    return out;
  }

  /** The index of the first segment that ends after `x`. */
  #firstEnding(x: number): number {
    let lo = 0;
    let hi = this.#list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#list[mid]!.hi > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** Byte ranges of tasks, sorted by start: lo, hi and task of range i. */
interface Intervals {
  readonly lo: Float64Array;
  readonly hi: Float64Array;
  readonly task: Int32Array;
}

function sortedIntervals([lo, hi, task]: readonly [number[], number[], number[]]): Intervals {
  const n = lo.length;
  let sorted = true;
  for (let i = 1; i < n && sorted; i++) sorted = lo[i - 1]! <= lo[i]!;
  const out = { lo: new Float64Array(n), hi: new Float64Array(n), task: new Int32Array(n) };
  const order = Array.from({ length: n }, (_, i) => i);
  if (!sorted) order.sort((x, y) => lo[x]! - lo[y]!);
  for (let i = 0; i < n; i++) {
    out.lo[i] = lo[order[i]!]!;
    out.hi[i] = hi[order[i]!]!;
    out.task[i] = task[order[i]!]!;
  }
  return out;
}

/**
 * Appends to `out` the pairs [l, r] of tasks whose ranges overlap (l from `left`), by a sweep in
 * order of start. Gives up (false) past `budget` pairs: only pairs found cost work (besides one
 * step per range), so a many-to-many case costs no more than the budget.
 */
function overlapping(left: Intervals, right: Intervals, budget: number, out: number[]): boolean {
  const active: [number[], number[]] = [[], []];
  const lists = [left, right] as const;
  let i = 0;
  let j = 0;
  while (i < left.lo.length || j < right.lo.length) {
    const side = j >= right.lo.length || (i < left.lo.length && left.lo[i]! <= right.lo[j]!) ? 0 : 1;
    const k = side === 0 ? i++ : j++;
    const from = lists[side].lo[k]!;
    const other = lists[1 - side]!;
    const live = active[1 - side]!;
    let kept = 0;
    for (const y of live) {
      if (other.hi[y]! <= from) continue;
      live[kept++] = y;
      if (side === 0) out.push(left.task[k]!, other.task[y]!);
      else out.push(other.task[y]!, right.task[k]!);
    }
    live.length = kept;
    if (out.length > 2 * budget) return false;
    active[side]!.push(k);
  }
  return true;
}

/**
 * The edges of a plan whose `views` have their byte offsets in the region resolved. `ordered`
 * lists pairs of calls [before, after] that must run in that order whatever they touch (every
 * task of one before every task of the other).
 */
export function taskEdges(
  views: readonly ViewDescriptor[],
  calls: readonly CallDescriptor[],
  tasks: readonly TaskSpan[],
  tasksOfCall: readonly (readonly number[])[],
  ordered: ReadonlyArray<readonly [number, number]>,
): TaskGraph {
  const successors: Array<Set<number>> = tasks.map(() => new Set());
  const barriers: Array<{ before: number; after: number }> = [];
  /** Per call: the ranges its tasks read and write (made on first use). */
  const byCall: Array<{ reads: Intervals; writes: Intervals } | undefined> = [];
  const intervals = (call: number, kind: 'reads' | 'writes'): Intervals => {
    let known = byCall[call];
    if (!known) {
      const reads: [number[], number[], number[]] = [[], [], []];
      const writes: [number[], number[], number[]] = [[], [], []];
      for (const t of tasksOfCall[call]!) {
        visitTaskExtents(views, calls[call]!, tasks[t]!, (write, lo, hi) => {
          const list = write ? writes : reads;
          list[0].push(lo);
          list[1].push(hi);
          list[2].push(t);
        });
      }
      known = byCall[call] = { reads: sortedIntervals(reads), writes: sortedIntervals(writes) };
    }
    return known[kind];
  };

  /** Every task of `before` ahead of every task of `after`: directly, or through a barrier. */
  const linkAll = (before: number, after: number): void => {
    const a = tasksOfCall[before]!;
    const c = tasksOfCall[after]!;
    if (a.length * c.length <= 2 * (a.length + c.length)) {
      for (const x of a) for (const y of c) successors[x]!.add(y);
      return;
    }
    const barrier = new Set(c);
    barriers.push({ before, after });
    successors.push(barrier);
    const index = successors.length - 1;
    for (const x of a) successors[x]!.add(index);
  };

  /** The tasks of `after` behind the tasks of `before` whose bytes they conflict with. */
  const linkConflicts = (before: number, after: number): void => {
    const budget = 2 * (tasksOfCall[before]!.length + tasksOfCall[after]!.length);
    const pairs: number[] = [];
    const few =
      overlapping(intervals(before, 'writes'), intervals(after, 'reads'), budget, pairs) &&
      overlapping(intervals(before, 'writes'), intervals(after, 'writes'), budget, pairs) &&
      overlapping(intervals(before, 'reads'), intervals(after, 'writes'), budget, pairs);
    if (!few) return linkAll(before, after);
    for (let k = 0; k < pairs.length; k += 2) successors[pairs[k]!]!.add(pairs[k + 1]!);
  };

  const segments = new Segments();
  const wholeExtents = (list: readonly number[]): Extent[] =>
    list.flatMap((v) => {
      const e = viewExtent(views[v]!);
      return e ? [e] : [];
    });
  calls.forEach((call, ci) => {
    const reads = wholeExtents(call.inputs);
    const writes = wholeExtents(call.outputs);
    const after = new Set<number>();
    for (const r of reads) for (const s of segments.cover(r)) if (s.writer >= 0) after.add(s.writer);
    for (const w of writes) {
      for (const s of segments.cover(w)) {
        if (s.writer >= 0) after.add(s.writer);
        for (const r of s.readers) after.add(r);
      }
    }
    after.delete(ci);
    for (const before of [...after].sort((x, y) => x - y)) linkConflicts(before, ci);
    for (const r of reads) {
      for (const s of segments.cover(r)) if (s.readers[s.readers.length - 1] !== ci) s.readers.push(ci);
    }
    for (const w of writes) {
      for (const s of segments.cover(w)) {
        s.writer = ci;
        s.readers = [];
      }
    }
  });
  for (const [before, after] of ordered) if (before !== after) linkAll(before, after);
  return { successors, barriers };
}
