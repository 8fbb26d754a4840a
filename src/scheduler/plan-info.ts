// What a compiled function's plan for one input signature looks like from outside (fn.planInfo):
// the size of a call's region of shared memory, its tasks, how wide the task graph is and whether
// a call runs on the calling thread. Tests and benchmarks read it to check memory and parallelism.
import type { Plan } from './plan.js';
import { BARRIER_KERNEL } from '../workers/protocol.js';

export interface PlanInfo {
  /** Bytes of shared memory a call's region takes: its header, task queues and every value the plan places. */
  readonly regionBytes: number;
  /** Tasks of the plan: the chunks of its nodes' work, barriers and the calling thread's copies of large arguments and results included. */
  readonly tasks: number;
  /** Tasks that may run at once at best (the widest level of the task graph). */
  readonly width: number;
  /** The estimated work of a call (elements touched), which the cost model weighs. */
  readonly work: number;
  /** Whether a call with this signature runs on the calling thread rather than on the workers. */
  readonly inline: boolean;
  /**
   * False when the graph is staged (a node's output shapes wait for values): the numbers are then
   * those of the first stage, and the rest is planned from the values that stage computes.
   */
  readonly complete: boolean;
}

/** The plan's numbers; `inline` and `complete` come from the executor that holds it. */
export function planInfoOf(plan: Plan, inline: boolean, complete: boolean): PlanInfo {
  const d = plan.descriptor;
  return { regionBytes: d.regionBytes, tasks: d.tasks.length, width: plan.width, work: plan.work, inline, complete };
}

/** Does the plan have tasks that the workers run (not only calling-thread tasks and barriers)? */
export function hasWorkerTasks(plan: Plan): boolean {
  return plan.descriptor.calls.some((c) => !c.main && c.kernel !== BARRIER_KERNEL);
}
