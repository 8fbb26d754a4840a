// Checks a plan's safety, for tests and debugging: any two tasks that may run at the same time
// (neither reaches the other through edges) must not touch overlapping bytes unless both only
// read them, and every task must be reachable from the initial ready set. Byte ranges are the
// bounding extents of what each task touches (task-extents.ts: a chunk's part of its views).
import type { PlanDescriptor } from '../workers/protocol.js';
import { taskExtents, type Extent, type TaskExtents } from './task-extents.js';

export interface PlanHazard {
  readonly first: number;
  readonly second: number;
  readonly message: string;
}

const overlaps = (a: Extent, b: Extent): boolean => a[0] < b[1] && b[0] < a[1];

/**
 * The hazards of `plan`: pairs of unordered tasks where one writes what the other touches.
 * Chunks of one call are exempt from the check against each other (they write disjoint ranges of
 * their outputs by construction; the kernels' chunk tests check that).
 */
export function planHazards(plan: PlanDescriptor): PlanHazard[] {
  const n = plan.tasks.length;
  const words = Math.ceil(n / 32);
  // reach[t]: tasks reachable from t (its descendants).
  const reach = new Uint32Array(n * words);
  const order: number[] = [];
  const pending = [...plan.initialPending];
  // Tasks of the calling thread (ops without a worker kernel) start from their own queue.
  const ready = [...plan.initialReady, ...plan.initialMainReady];
  while (ready.length) {
    const t = ready.pop()!;
    order.push(t);
    for (const s of plan.tasks[t]!.successors) if (--pending[s]! === 0) ready.push(s);
  }
  const hazards: PlanHazard[] = [];
  if (order.length !== n) {
    hazards.push({ first: -1, second: -1, message: `only ${order.length} of ${n} tasks can ever run (a cycle, or missing edges)` });
    return hazards;
  }
  for (let i = order.length - 1; i >= 0; i--) {
    const t = order[i]!;
    for (const s of plan.tasks[t]!.successors) {
      reach[t * words + (s >> 5)]! |= 1 << (s & 31);
      for (let w = 0; w < words; w++) reach[t * words + w]! |= reach[s * words + w]!;
    }
  }
  const ordered = (a: number, b: number): boolean =>
    (reach[a * words + (b >> 5)]! & (1 << (b & 31))) !== 0 || (reach[b * words + (a >> 5)]! & (1 << (a & 31))) !== 0;
  const extents: TaskExtents[] = plan.tasks.map((task) => taskExtents(plan.views, plan.calls[task.call]!, task));
  const clashes = (x: readonly Extent[], y: readonly Extent[]): boolean => x.some((e) => y.some((f) => overlaps(e, f)));
  for (let a = 0; a < n; a++) {
    for (let b = a + 1; b < n; b++) {
      if (plan.tasks[a]!.call === plan.tasks[b]!.call || ordered(a, b)) continue;
      const [ea, eb] = [extents[a]!, extents[b]!];
      if (clashes(ea.writes, eb.writes) || clashes(ea.writes, eb.reads) || clashes(eb.writes, ea.reads)) {
        hazards.push({
          first: a,
          second: b,
          message: `tasks ${a} (${plan.calls[plan.tasks[a]!.call]!.label}) and ${b} (${plan.calls[plan.tasks[b]!.call]!.label}) may run at once and touch the same bytes`,
        });
      }
    }
  }
  return hazards;
}
