// Pass 3b of the planner: the calling thread's copies of large arguments into the region and of
// large results out of it, as tasks chunked as an element-wise call over the same values, so that
// the workers start on the first chunks copied and results leave while later tasks still run.
import type { Apply } from '../../graph/apply.js';
import { bytesPerElement } from '../../kernels/dtype.js';
import { isContiguous, sizeOf, type Range } from '../../kernels/view.js';
import { ARGUMENT_COPY_KERNEL, type CallDescriptor, type ViewDescriptor } from '../../workers/protocol.js';
import { chunkRanges } from '../chunking.js';
import type { TaskSpan } from '../task-edges.js';
import type { CallTasks } from './tasks.js';
import { TASK_WORK } from './tasks.js';
import type { PlanDraft } from './draft.js';

/**
 * Arguments of at least this many bytes are copied in by tasks (about 50 µs of copying here);
 * smaller ones are copied before the call, which costs no task. The calling thread runs the
 * copies in as soon as the call opens, so they cost it no wake-up.
 */
export const COPY_IN_TASK_BYTES = 1 << 20;

/**
 * Results of at least this many bytes are copied out by tasks (about 0.5 ms of copying here);
 * smaller ones after the call. Each chunk released wakes the calling thread through its event
 * loop (0.1-0.2 ms on the machines measured), which only a long copy repays: W9's 1.2 MB output
 * copied out by tasks made its 1.1 ms call 1.5 ms.
 */
export const COPY_OUT_TASK_BYTES = 8 << 20;

/** Which arguments (graph inputs) and results (graph outputs) a plan copies by tasks. */
export interface ArgumentCopies {
  /** Graph input i -> its copy call, for the inputs copied in by tasks. */
  readonly inputs: ReadonlyMap<number, number>;
  /** Graph output j -> its copy call, for the outputs copied out by tasks. */
  readonly outputs: ReadonlyMap<number, number>;
}

/** The plan's calls, tasks and call nodes with the copies added (copies in first, copies out last). */
export interface WithCopies extends CallTasks {
  readonly calls: readonly CallDescriptor[];
  /** The node of each call; none for a copy. */
  readonly callNodes: ReadonlyArray<Apply | undefined>;
  readonly copies: ArgumentCopies;
  /** Call index of the draft's call 0 (the number of copy-in calls). */
  readonly shift: number;
}

/** A view copy tasks can cut into flat chunks: contiguous, and of at least `bytes`. */
function copiedByTasks(v: ViewDescriptor, bytes: number): boolean {
  return sizeOf(v.shape) * bytesPerElement(v.dtype) >= bytes && isContiguous(v);
}

/** The chunks of a copy of `v`: as many as an element-wise call over it would have, and aligned with them. */
function copyChunks(v: ViewDescriptor): Range[] {
  const n = sizeOf(v.shape);
  return chunkRanges(n, Math.max(1, Math.round(n / TASK_WORK)));
}

/**
 * The draft's calls and tasks (`chunked`, from chunkTasks) with the copies of its large arguments
 * and results: inputs some task reads, outputs that are views of the region and not borrowed.
 * Copy-in tasks are queued chunk by chunk across the inputs (chunk 0 of each input first), so that
 * the tasks that read every input's first chunk are the first ones released.
 */
export function withArgumentCopies(
  draft: Pick<PlanDraft, 'views' | 'inputViews' | 'outputs' | 'calls' | 'callNodes'>,
  chunked: CallTasks,
  borrowedOutputs: readonly boolean[] | undefined,
): WithCopies {
  const { views } = draft;
  const copyIn = draft.inputViews.flatMap((view, input) => (view >= 0 && copiedByTasks(views[view]!, COPY_IN_TASK_BYTES) ? [{ input, view }] : []));
  const copyOut = draft.outputs.flatMap((o, output) =>
    o.kind === 'view' && !borrowedOutputs?.[output] && copiedByTasks(views[o.view]!, COPY_OUT_TASK_BYTES) ? [{ output, view: o.view }] : [],
  );
  const shift = copyIn.length;
  const calls: CallDescriptor[] = [
    ...copyIn.map(({ input, view }): CallDescriptor => ({
      kernel: ARGUMENT_COPY_KERNEL,
      params: {},
      inputs: [],
      outputs: [view],
      label: `copy of argument ${input} into the region`,
      main: true,
      split: { by: 'elements' },
    })),
    ...draft.calls,
    ...copyOut.map(({ output, view }): CallDescriptor => ({
      kernel: ARGUMENT_COPY_KERNEL,
      params: {},
      inputs: [view],
      outputs: [],
      label: `copy of output ${output} out of the region`,
      main: true,
      split: { by: 'elements', input: 0 },
    })),
  ];
  const tasks: TaskSpan[] = [];
  const tasksOfCall: number[][] = calls.map(() => []);
  const add = (call: number, start: number, end: number): void => {
    tasksOfCall[call]!.push(tasks.push({ call, start, end }) - 1);
  };
  // Copies in, chunk k of every input in turn (in order of how far into its input a chunk starts).
  const inChunks = copyIn.flatMap(({ view }, c) => copyChunks(views[view]!).map((r) => ({ call: c, r, at: r.start / sizeOf(views[view]!.shape) })));
  inChunks.sort((a, b) => a.at - b.at || a.call - b.call);
  for (const { call, r } of inChunks) add(call, r.start, r.end);
  chunked.tasks.forEach((t) => add(t.call + shift, t.start, t.end));
  copyOut.forEach(({ view }, c) => {
    for (const r of copyChunks(views[view]!)) add(shift + draft.calls.length + c, r.start, r.end);
  });
  const none = (n: number): undefined[] => Array.from({ length: n }, () => undefined);
  return {
    calls,
    callNodes: [...none(shift), ...draft.callNodes, ...none(copyOut.length)],
    tasks,
    tasksOfCall,
    work: chunked.work,
    shift,
    copies: {
      inputs: new Map(copyIn.map(({ input }, c) => [input, c])),
      outputs: new Map(copyOut.map(({ output }, c) => [output, shift + draft.calls.length + c])),
    },
  };
}
