// Nested regions: the team's second level. A task whose kernel runs a plan of its own many times
// (a Scan's step, once per step) hosts that plan in a region inside its scratch memory and offers
// it in the outer region's header; members with no outer task to take join the nested call and
// take its tasks, while the host runs them too and waits for the end of each run. The runs stay in
// order and each task's bits are the same whoever runs it, so results do not depend on the team.
import type { KernelParams } from '../kernels/registry.js';
import type { TensorView } from '../kernels/view.js';
import { BoundPlan, type MemoryViews } from './bound-plan.js';
import type { CallDescriptor, PlanDescriptor } from './protocol.js';
import { offerTask, RegionState } from './region.js';

/**
 * Work (elements touched or multiply-adds, as a plan counts it) of one run of a nested plan
 * below which the team does not help: a run then costs less than twice a task's least work
 * (TASK_WORK, 2^17 elements, some 50-100 us), and its chunks could not share two members.
 * Above it a run pays one synchronization (a few microseconds: the members spin between runs).
 */
export const NESTED_TEAM_WORK = 2 ** 18;

/** Whether the team helps with the runs of a nested plan this wide with this much work per run. */
export function teamHelps(width: number, work: number): boolean {
  return width >= 2 && work >= NESTED_TEAM_WORK;
}

/** What a kernel that hosts a nested plan tells the members that help: the plan, and each use's views. */
export interface NestedPlanHost {
  /** The nested plan, from the kernel's params. */
  readonly plan: (params: KernelParams) => PlanDescriptor;
  /**
   * The views of use `step` of the plan, from the host task's inputs and outputs and the plan's
   * own views in the scratch memory (`base`); without it, every use runs on `base`.
   */
  readonly views?: (params: KernelParams, inputs: readonly TensorView[], outputs: readonly TensorView[], base: readonly TensorView[], step: number) => readonly TensorView[];
}

/** Kernels that host nested plans. */
const nestedPlans = new Map<string, NestedPlanHost>();

/** Registers kernel `name` as one that may host a plan of its params in a nested region. */
export function registerNestedPlan(name: string, host: NestedPlanHost): void {
  nestedPlans.set(name, host);
}

/** Where a team member runs a call's tasks: its plan, region, memory, views and record. */
export interface Seat {
  readonly bound: BoundPlan;
  readonly state: RegionState;
  readonly memory: MemoryViews;
  readonly views: readonly TensorView[];
  readonly member: number | undefined;
}

/** The outer task running on this thread now, as the team loop ran it (no allocation per task). */
let running: Seat | undefined;
let runningTask = -1;

/** Runs outer task `task` at `seat` (a kernel it calls may host a nested plan). */
export function runOuterTask(seat: Seat, task: number): void {
  const before = running;
  const beforeTask = runningTask;
  running = seat;
  runningTask = task;
  try {
    seat.bound.runTask(task, seat.views);
  } finally {
    running = before;
    runningTask = beforeTask;
  }
}

/** Thrown out of a host kernel whose call was stopped from outside (it is no failure of its own). */
export class CallStopped extends Error {
  constructor() {
    super('the call was stopped while a nested plan ran');
    this.name = 'CallStopped';
  }
}

/** The host side of a nested region: one `run` per use of the plan (a step), by the team when it helps. */
export interface NestedTeam {
  /** Runs every task of the plan once as use `step` over `views` (its inputs written already), with the team's help. */
  run(step: number, views: readonly TensorView[]): void;
  /** Withdraws the offer: the host kernel is done with its plan. */
  end(): void;
}

/**
 * The nested team for `plan` laid out at `scratch` (the host kernel's scratch memory), when the
 * kernel runs as an outer task of a team with params `params` (not inside another inner plan,
 * where no member could find it); undefined otherwise, and the kernel runs its plan alone.
 */
export function nestedTeam(params: KernelParams, plan: PlanDescriptor, scratch: TensorView): NestedTeam | undefined {
  const outer = running;
  const task = runningTask;
  if (!outer) return undefined;
  const call = outer.bound.plan.calls[outer.bound.plan.tasks[task]!.call]!;
  if (call.params !== params || !nestedPlans.has(call.kernel)) return undefined;
  if (scratch.offset % 4 !== 0 || scratch.data.buffer !== outer.memory.i32.buffer) return undefined;
  const region = scratch.offset;
  const state = new RegionState(outer.memory.i32, region, plan);
  const bound = new BoundPlan(plan, region, outer.memory);
  state.reset();
  const offered = outer.state.offerNested(task);
  const stopped = (): boolean => outer.state.over;
  return {
    run(step: number, views: readonly TensorView[]): void {
      state.step = step;
      state.open(state.nextCall());
      let error: unknown;
      while (!state.over) {
        if (stopped()) break;
        const t = state.take(false);
        if (t < 0) continue;
        try {
          bound.runTask(t, views);
        } catch (e) {
          state.fail(t);
          error = e;
          break;
        }
        state.finish(t);
      }
      state.close();
      // A member inside still reads (or is about to leave): the next run rewrites the queues.
      state.waitEmpty(stopped);
      if (error !== undefined) throw error;
      if (!state.completed) throw new CallStopped();
    },
    end(): void {
      if (offered) outer.state.withdrawNested(task, stopped);
    },
  };
}

/** A helper's view of host task t's nested region: its plan bound there, its state, and the host's call. */
interface HelperRegion {
  readonly bound: BoundPlan;
  readonly state: RegionState;
  readonly host: NestedPlanHost;
  readonly call: CallDescriptor;
}

/** A helper's nested regions, made once per plan and host task. */
const helperRegions = new WeakMap<BoundPlan, Map<number, HelperRegion>>();

function helperRegion(outer: Seat, t: number): HelperRegion | undefined {
  let byTask = helperRegions.get(outer.bound);
  if (!byTask) helperRegions.set(outer.bound, (byTask = new Map()));
  let found = byTask.get(t);
  if (!found) {
    const call = outer.bound.plan.calls[outer.bound.plan.tasks[t]!.call]!;
    const host = nestedPlans.get(call.kernel);
    if (!host) return undefined;
    const plan = host.plan(call.params);
    // The host's scratch memory, its last output, holds the nested region (never moved by a call).
    const region = outer.bound.views[call.outputs[call.outputs.length - 1]!]!.offset;
    found = { bound: new BoundPlan(plan, region, outer.memory), state: new RegionState(outer.memory.i32, region, plan), host, call };
    byTask.set(t, found);
  }
  return found;
}

/**
 * Use `step`'s views of the nested plan, from the host task's inputs and outputs in this call:
 * a call's views differ from the last one's where it reads inputs in place or writes outputs
 * into buffers of their own.
 */
function stepViewsOf(outer: Seat, { bound, host, call }: HelperRegion, step: number): readonly TensorView[] {
  if (!host.views) return bound.views;
  const inputs = call.inputs.map((v) => outer.views[v]!);
  const outputs = call.outputs.map((v) => outer.views[v]!);
  return host.views(call.params, inputs, outputs, bound.views, step);
}

/**
 * An idle member helps with the nested call of `offer`'s host task t (see RegionState.nestedOffer),
 * if one is open: it takes that call's tasks until none is ready for `spin` checks or the call is
 * over. From before its visit until after it, its record says it runs task t, so that its death
 * fails the call naming the host's node (and never leaves a visit counted); with `trace` it
 * records each task it ran there as a span of task t. Returns the error of a task that failed
 * here (the outer call has been failed in the host task's name).
 */
export function helpNested(outer: Seat, offer: number, spin: number, trace?: Array<[number, number, number]>): unknown {
  const t = offerTask(offer);
  outer.state.mark(outer.member, { task: t });
  try {
    // Task t may have ended since this member read its offer, and its scratch memory hold other
    // buffers: nothing there is read before the visit is counted (the host waits for it to end).
    if (!outer.state.visitNested(offer)) return undefined;
    try {
      return helpVisited(outer, t, spin, trace);
    } finally {
      outer.state.leaveNested(offer);
    }
  } finally {
    outer.state.mark(outer.member, 'idle');
  }
}

function helpVisited(outer: Seat, t: number, spin: number, trace: Array<[number, number, number]> | undefined): unknown {
  const nested = helperRegion(outer, t);
  if (!nested) return undefined;
  const { bound, state } = nested;
  const id = state.call;
  // Closed, or finished and about to close: entering would only delay the host's wait for leavers.
  if (id === 0 || state.over) return undefined;
  try {
    if (!state.enter(id)) return undefined;
    // The use of the plan this call is: the host set it before it opened the call.
    let views: readonly TensorView[] | undefined;
    for (let idle = 0; idle < spin && !state.over && !outer.state.over; ) {
      const task = state.take(false);
      if (task < 0) {
        idle += 1;
        continue;
      }
      const started = trace ? performance.timeOrigin + performance.now() : 0;
      try {
        views ??= stepViewsOf(outer, nested, state.step);
        bound.runTask(task, views);
      } catch (e) {
        // The outer call fails first, so that the host, seeing the nested failure, finds it stopped.
        outer.state.fail(t);
        state.fail(task);
        return e;
      }
      if (trace) trace.push([t, started, performance.timeOrigin + performance.now()]);
      state.finish(task);
      idle = 0;
    }
    return undefined;
  } finally {
    state.exit();
  }
}
