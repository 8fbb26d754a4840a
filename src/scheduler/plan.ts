// Planning a call (Theano's linker, for threads): for one input signature, every variable gets a
// place in the call's region (inputs and intermediates in buffers, views as offset arithmetic
// over their base), every kernel node becomes one or more tasks (chunks of its work above a
// size threshold; chunk boundaries depend on shapes only, never on the number of workers), and
// tasks get edges: data dependencies and the graph's ordering constraints (the destroy handler's).
// A buffer is reused only by a node that already runs after every reader of its previous value,
// so reuse adds no edge and costs no parallelism.
// The passes, each a file of plan/ over the typed draft of plan/draft.ts: placing the nodes,
// the buffer layout, the tasks of each call (and of the calling thread's copies of large arguments
// and results), their edges (data and orderings), the descriptor.
import type { Apply } from '../graph/apply.js';
import type { FunctionGraph } from '../graph/fgraph.js';
import type { NdArray } from '../tensor/core/ndarray.js';
import { BARRIER_KERNEL, type PlanDescriptor } from '../workers/protocol.js';
import type { HostValues } from './host-values.js';
import { layOutBuffers, nodeAncestry, placedViews } from './plan/buffer-layout.js';
import { callOrderings } from './plan/call-orderings.js';
import { describePlan } from './plan/descriptor.js';
import type { InnerPlanning, OutputSource } from './plan/draft.js';
import { placeNodes } from './plan/place-nodes.js';
import { chunkTasks } from './plan/tasks.js';
import { withArgumentCopies, type ArgumentCopies } from './plan/argument-copies.js';
import { taskEdges } from './task-edges.js';

export { PlanError, StageBoundary } from './plan/errors.js';
export { PRODUCT_TASK_WORK, TASK_WORK } from './plan/tasks.js';
export type { InnerPlanning, OutputSource } from './plan/draft.js';
export { COPY_IN_TASK_BYTES, COPY_OUT_TASK_BYTES, type ArgumentCopies } from './plan/argument-copies.js';

export interface Plan {
  readonly descriptor: PlanDescriptor;
  /** Graph input i: the view its value is copied into at each call, or -1 when no task reads it. */
  readonly inputViews: readonly number[];
  readonly outputs: readonly OutputSource[];
  /** Written into every new region once: constants and host-computed values that tasks read. */
  readonly regionInit: ReadonlyArray<{ readonly view: number; readonly value: NdArray }>;
  /** Estimated work of one call, for the choice between inline and workers. */
  readonly work: number;
  /** Tasks that may run at once at best (the widest level of the task graph). */
  readonly width: number;
  /** The node of each call of the descriptor (none for the copies of arguments and results). */
  readonly callNodes: ReadonlyArray<Apply | undefined>;
  /** The arguments and results that tasks of the calling thread copy (plan/argument-copies.ts). */
  readonly copies: ArgumentCopies;
}

/** What a plan is for, beyond its inputs' signature. */
export interface PlanOptions {
  /**
   * Copy large arguments in and large results out by tasks of the calling thread (a call's own
   * plan; inner plans read and write their host's region). Borrowed outputs are not copied.
   */
  readonly argumentCopies?: { readonly borrowedOutputs?: readonly boolean[] };
}

const NO_COPIES: ArgumentCopies = { inputs: new Map(), outputs: new Map() };

/**
 * The plan of `fg` for calls with these inputs' signature. Placing the nodes computes host values
 * (by perform), views (by view), and the output shapes of kernel nodes (by outputShapes), which
 * check the inputs: an invalid call fails there with the node's NodeError, before any task runs.
 */
export function buildPlan(fg: FunctionGraph, inputs: readonly NdArray[], host: HostValues, id: number, inner: InnerPlanning, options: PlanOptions = {}): Plan {
  const draft = placeNodes(fg, inputs, host, inner);
  const dataBytes = layOutBuffers(draft.buffers, nodeAncestry(draft));
  const placed = placedViews(draft);
  const chunked = chunkTasks(draft.calls, draft.kernelCalls, draft.views);
  const copying = options.argumentCopies ? withArgumentCopies(draft, chunked, options.argumentCopies.borrowedOutputs) : undefined;
  const { tasks, tasksOfCall, work } = copying ?? chunked;
  const shift = copying?.shift ?? 0;
  // Edges from what the tasks touch (offsets within the data part of the region suffice), and
  // the graph's orderings; a barrier task stands for an ordering that would take too many edges.
  const calls = [...(copying?.calls ?? draft.calls)];
  const callNodes = [...(copying?.callNodes ?? draft.callNodes)];
  const orderings = callOrderings(fg, draft).map(([before, after]): [number, number] => [before + shift, after + shift]);
  const graph = taskEdges(placed, calls, tasks, tasksOfCall, orderings);
  for (const { before, after } of graph.barriers) {
    calls.push({ kernel: BARRIER_KERNEL, params: {}, inputs: [], outputs: [], label: `barrier after ${calls[before]!.label}` });
    callNodes.push(callNodes[after]);
    tasks.push({ call: calls.length - 1, start: -1, end: -1 });
  }
  const { descriptor, width } = describePlan(id, draft, placed, dataBytes, calls, tasks, graph.successors);
  return { descriptor, inputViews: draft.inputViews, outputs: draft.outputs, regionInit: draft.regionInit, work, width, callNodes, copies: copying?.copies ?? NO_COPIES };
}
