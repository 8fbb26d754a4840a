// Pass 5 of the planner: the descriptor that workers read. The region of a call is laid out
// (header, member slots, pending counts, the two ready queues, then the data), every view gets
// its offset in the region, and the plan says which inputs may be read where they already are
// and which outputs may be written straight into memory the caller then owns.
import { bytesPerElement } from '../../kernels/dtype.js';
import { contiguousStrides, sizeOf } from '../../kernels/view.js';
import { ArenaFullError, arenaCanHold } from '../../workers/arena.js';
import { ARGUMENT_COPY_KERNEL, MAX_MEMBERS, type CallDescriptor, type MovableOutput, type PlanDescriptor, type TaskDescriptor, type ViewDescriptor } from '../../workers/protocol.js';
import { teamHelps } from '../../workers/nested-team.js';
import { HEADER_BYTES } from '../../workers/region.js';
import type { TaskSpan } from '../task-edges.js';
import { align } from './buffer-layout.js';
import type { PlanDraft } from './draft.js';

export interface DescribedPlan {
  readonly descriptor: PlanDescriptor;
  /** Tasks that may run at once at best (the widest level of the task graph). */
  readonly width: number;
}

/**
 * The most tasks in one level of the task graph (a task's level: the longest path to it), not
 * counting the tasks `counted` leaves out (the calling thread's copies, which need no member).
 */
function widestLevel(n: number, successorsOf: (t: number) => ReadonlySet<number>, pending: readonly number[], counted: (t: number) => boolean): number {
  const level = new Int32Array(n);
  const perLevel = new Int32Array(n + 1);
  const left = Int32Array.from(pending);
  const ready = pending.flatMap((p, t) => (p === 0 ? [t] : []));
  while (ready.length > 0) {
    const t = ready.pop()!;
    if (counted(t)) perLevel[level[t]!]! += 1;
    for (const s of successorsOf(t)) {
      if (level[t]! + 1 > level[s]!) level[s] = level[t]! + 1;
      if (--left[s]! === 0) ready.push(s);
    }
  }
  return Math.max(1, ...perLevel);
}

/**
 * The descriptor of plan `id`: `placed` are the views with offsets from the start of the data
 * (`dataBytes` long), `calls` and `tasks` with their `successors` the task graph.
 */
export function describePlan(
  id: number,
  draft: Pick<PlanDraft, 'order' | 'buffers' | 'viewBuffer' | 'overwritten' | 'inputViews' | 'outputs' | 'callsOfNode' | 'kernelCalls'>,
  placed: readonly ViewDescriptor[],
  dataBytes: number,
  calls: readonly CallDescriptor[],
  tasks: readonly TaskSpan[],
  successors: ReadonlyArray<ReadonlySet<number>>,
): DescribedPlan {
  const { order, buffers, viewBuffer, overwritten, inputViews, outputs, callsOfNode, kernelCalls } = draft;
  /** Does node `writer`'s fast path need its output in the region (KernelCall.outputsInArena)? */
  const keptInArena = (writer: number): boolean => (callsOfNode.get(writer) ?? []).some((c) => kernelCalls[c]!.outputsInArena === true);
  const successorsOf = (t: number): ReadonlySet<number> => successors[t]!;
  const pendingCount = new Array<number>(tasks.length).fill(0);
  tasks.forEach((_, t) => successorsOf(t).forEach((s) => (pendingCount[s] = pendingCount[s]! + 1)));
  const isMain = (t: number): boolean => calls[tasks[t]!.call]!.main === true;
  const initialReady = pendingCount.flatMap((p, i) => (p === 0 && !isMain(i) ? [i] : []));
  const initialMainReady = pendingCount.flatMap((p, i) => (p === 0 && isMain(i) ? [i] : []));
  // A task that shares its inner plan's runs with the team (a Scan's steps) can keep that many busy.
  const innerWidths = kernelCalls.map((kc) => (kc.innerTeam && teamHelps(kc.innerTeam.width, kc.innerTeam.work) ? kc.innerTeam.width : 1));
  const isCopy = (t: number): boolean => calls[tasks[t]!.call]!.kernel === ARGUMENT_COPY_KERNEL;
  const width = Math.max(widestLevel(tasks.length, successorsOf, pendingCount, (t) => !isCopy(t)), ...innerWidths);

  const memberOffset = HEADER_BYTES;
  const memberSlots = Math.max(1, Math.min(width, MAX_MEMBERS));
  const pendingOffset = align(memberOffset + 4 * memberSlots);
  const queueOffset = align(pendingOffset + 4 * tasks.length);
  const mainQueueOffset = align(queueOffset + 4 * Math.max(tasks.length, 1));
  const dataOffset = align(mainQueueOffset + 4 * Math.max(tasks.length, 1));
  const regionBytes = dataOffset + dataBytes;
  if (!arenaCanHold(regionBytes)) {
    const largest = buffers.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    const what = largest.writer >= 0 ? `node ${largest.writer} (${order[largest.writer]})` : 'an input or constant';
    throw new ArenaFullError(regionBytes, `the region of a call (its largest value: ${largest.bytes} bytes, from ${what})`);
  }
  const finalViews: ViewDescriptor[] = placed.map((v) => ({ ...v, offset: v.offset + dataOffset }));
  /** The views into the same buffer as view `view`, which move with it. */
  const movingWith = (view: number): number[] => finalViews.flatMap((_, v) => (viewBuffer[v] === viewBuffer[view] ? [v] : []));

  /** Outputs that are the whole of a buffer a node writes, contiguous, shared with no other output (and that node). */
  const movable: Array<{ readonly moved: MovableOutput; readonly writer: number }> = outputs.flatMap((o, output) => {
    if (o.kind !== 'view') return [];
    const buffer = viewBuffer[o.view]!;
    const d = finalViews[o.view]!;
    const whole =
      buffer.writer >= 0 &&
      d.offset === dataOffset + buffer.offset &&
      sizeOf(d.shape) * bytesPerElement(d.dtype) === buffer.bytes &&
      d.stride.every((s, a) => d.shape[a]! <= 1 || s === contiguousStrides(d.shape)[a]);
    const shared = outputs.some((p, q) => q !== output && p.kind === 'view' && viewBuffer[p.view] === buffer);
    return whole && !shared ? [{ moved: { output, base: d.offset, bytes: buffer.bytes, views: movingWith(o.view) }, writer: buffer.writer }] : [];
  });

  const descriptor: PlanDescriptor = {
    id,
    regionBytes,
    memberOffset,
    memberSlots,
    pendingOffset,
    queueOffset,
    mainQueueOffset,
    views: finalViews,
    calls: [...calls],
    tasks: tasks.map((t, i): TaskDescriptor => ({ call: t.call, start: t.start, end: t.end, successors: [...successorsOf(i)] })),
    initialPending: pendingCount,
    initialReady,
    initialMainReady,
    relocatable: inputViews.flatMap((view, input) => {
      if (view < 0 || overwritten.has(viewBuffer[view]!)) return [];
      return [{ input, base: finalViews[view]!.offset, views: movingWith(view) }];
    }),
    movableOutputs: movable.flatMap((m) => (keptInArena(m.writer) ? [] : [m.moved])),
    arenaMovableOutputs: movable.map((m) => m.moved),
  };
  return { descriptor, width };
}
