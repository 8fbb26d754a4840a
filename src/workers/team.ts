// The team loop: what every participant of a call runs, in a worker or on the calling thread.
// It takes ready tasks from the region's queue (region.ts, with Atomics), runs their kernels,
// and releases the tasks that were waiting for them; no message is exchanged per task. Idle
// members spin briefly, then sleep until a task is queued or the call ends. Tasks of ops
// without a worker kernel go to a second queue that only the calling thread serves.
import { registerKernel } from '../kernels/registry.js';
import type { TensorView } from '../kernels/view.js';
import type { BoundPlan, MemoryViews } from './bound-plan.js';
import { BARRIER_KERNEL, type OutputMemory, type TeamResult } from './protocol.js';
import { CallStopped, helpNested, runOuterTask, type Seat } from './nested-team.js';
import { offerTask } from './region.js';

registerKernel(BARRIER_KERNEL, () => undefined);

export interface TeamOptions {
  /** Spin-checks before sleeping when no task is ready (OpenMP's wait policy). */
  readonly spin?: number;
  /** Record [task, start, end] for every task run. */
  readonly trace?: boolean;
  /** The id this member reports as its thread. */
  readonly thread?: number;
  /** This member is the calling thread: it also runs the calling-thread queue. */
  readonly main?: boolean;
  /** A worker member's index, for its record (see MEMBER). */
  readonly member?: number;
  /** Inputs read in place: [input index, byte offset] pairs (see BoundPlan.viewsFor). */
  readonly external?: readonly number[];
  /** Outputs written into buffers of their own (see BoundPlan.viewsFor). */
  readonly outputMemory?: OutputMemory;
}

function run(seat: Seat, task: number, trace: Array<[number, number, number]> | undefined): unknown {
  const started = trace ? performance.timeOrigin + performance.now() : 0;
  try {
    runOuterTask(seat, task);
  } catch (e) {
    // Stopped from outside while it hosted a nested plan: the call's outcome says why.
    if (e instanceof CallStopped) return undefined;
    seat.state.fail(task);
    return e;
  }
  if (trace) trace.push([task, started, performance.timeOrigin + performance.now()]);
  seat.state.finish(task);
  return undefined;
}

function failure(task: number, e: unknown): TeamResult['error'] {
  const err = e as Error;
  return { task, message: err?.message ?? String(e), stack: err?.stack };
}

/**
 * Joins call `callId` in `bound`'s region and runs tasks until the call is finished, failed or
 * aborted. Safe to call late: a member that arrives after the call ended leaves at once. A
 * worker member never takes calling-thread tasks; the calling thread runs them with
 * `runMainTasks` (or here, with `main: true`, when it runs the whole call alone).
 */
export function runTeam(bound: BoundPlan, memory: MemoryViews, callId: number, options: TeamOptions = {}): TeamResult {
  const state = bound.stateIn(memory);
  state.alone = options.main === true;
  const views = bound.viewsFor(options.external, options.outputMemory);
  const thread = options.thread ?? 0;
  const spin = options.spin ?? 20000;
  const trace: Array<[number, number, number]> | undefined = options.trace ? [] : undefined;
  // Its record says what it does, for the calling thread to read should this thread die.
  const member = options.member;
  if (member !== undefined) state.checkMember(member);
  const seat: Seat = { bound, state, memory, views, member };
  // While the calling thread has tasks queued (copies of arguments, mostly), a spinning worker
  // would take the core it needs to release the tasks this member waits for.
  const yieldsToMain = !options.main && bound.hasMainCalls;
  let joined = false;
  let ran = 0;
  try {
    if (!state.enter(callId)) return { tasks: 0, thread };
    joined = true;
    state.mark(member, 'idle');
    let idle = 0;
    while (!state.over) {
      let task = options.main ? state.take(true) : -1;
      if (task < 0) task = state.take(false);
      if (task >= 0) {
        state.mark(member, { task });
        const error = run(seat, task, trace);
        state.mark(member, 'idle');
        if (error !== undefined) return { tasks: ran, thread, trace, error: failure(task, error) };
        ran += 1;
        idle = 0;
        continue;
      }
      // No task of the call is ready: a task running elsewhere may offer its nested plan's.
      const offer = state.nestedOffer();
      if (offer !== 0) {
        const error = helpNested(seat, offer, spin, trace);
        if (error !== undefined) return { tasks: ran, thread, trace, error: failure(offerTask(offer), error) };
        idle = 0;
        continue;
      }
      if (idle < spin && !(yieldsToMain && state.mainQueued)) {
        idle += 1;
        continue;
      }
      state.sleep(2);
    }
    return trace ? { tasks: ran, thread, trace } : { tasks: ran, thread };
  } finally {
    if (joined) state.mark(member, 'left');
    state.exit();
  }
}

/**
 * The calling thread's part of a call that workers run: it serves the calling-thread queue,
 * sleeping (without blocking the event loop) until such a task is queued or the call ends.
 */
export async function runMainTasks(bound: BoundPlan, memory: MemoryViews, options: TeamOptions = {}): Promise<TeamResult> {
  const state = bound.stateIn(memory);
  state.alone = false;
  const views = bound.viewsFor(options.external, options.outputMemory);
  const trace: Array<[number, number, number]> | undefined = options.trace ? [] : undefined;
  let ran = 0;
  // The microtasks queued so far run first: the workers are woken in one of them, and the first
  // tasks here (copies of arguments) release theirs.
  await undefined;
  while (!state.over) {
    const task = state.take(true);
    if (task >= 0) {
      const error = run({ bound, state, memory, views, member: undefined }, task, trace);
      if (error !== undefined) return { tasks: ran, thread: 0, trace, error: failure(task, error) };
      ran += 1;
      continue;
    }
    await state.sleepMain(20);
  }
  return trace ? { tasks: ran, thread: 0, trace } : { tasks: ran, thread: 0 };
}
