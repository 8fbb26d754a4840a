// The planned executor: runs a FunctionGraph's calls through plans. Per call it finds (or makes)
// the plan for the inputs' signature, takes a region of shared memory, copies the inputs in (large
// ones by the plan's copy tasks, beside the first tasks), runs the tasks (inline on the calling
// thread when the call is small or workers is 0, else as a team of pool workers), copies the
// outputs out (large ones by copy tasks too) and gives the region back. A failing kernel or a dead
// worker rejects the call with the node's name; the pool stays usable.
import type { Apply } from '../graph/apply.js';
import type { FunctionGraph } from '../graph/fgraph.js';
import { AbortError, abortedBy } from '../graph/abort.js';
import { copiedArguments, NodeError } from '../graph/node-error.js';
import { bytesPerElement, STORAGE, type Dtype, type TypedArray } from '../kernels/dtype.js';
import { copyView } from '../kernels/copy.js';
import '../kernels/builtin.js';
import { innerPlanning } from './inner-planner.js';
import { isContiguous, sizeOf, type TensorView } from '../kernels/view.js';
import { makeNdArray, type NdArray } from '../tensor/core/ndarray.js';
import { inlineArena, type Arena, type IdleHolder } from '../workers/arena.js';
import { MAX_BATCH } from '../workers/job-queue.js';
import type { WorkerPool } from '../workers/pool.js';
import { BARRIER_KERNEL, planToText, type OutputMemory, type PlanDescriptor, type TeamJob, type TeamResult, type ViewDescriptor } from '../workers/protocol.js';
import { RegionState } from '../workers/region.js';
import { freshSharedBuffer } from '../workers/shared-memory.js';
import { givenBack, unzeroedArray, zeroedBuffer } from '../workers/given-back.js';
import { BoundPlan, type MemoryViews } from '../workers/bound-plan.js';
import { runMainTasks, runTeam } from '../workers/team.js';
import type { Kernel } from '../kernels/registry.js';
import { HostValues } from './host-values.js';
import { residentArray } from './resident-values.js';
import { buildPlan, type Plan } from './plan.js';
import { hasWorkerTasks, planInfoOf, type PlanInfo } from './plan-info.js';

/** Below this much work (elements touched) a call runs on the calling thread. */
export const INLINE_WORK = 1 << 15;

/**
 * The cost model's threshold in force: INLINE_WORK, unless a benchmark or test sets it (0 sends
 * every call that has worker tasks to the workers, to measure what inlining saves).
 */
export const costModel: { inlineWork: number } = { inlineWork: INLINE_WORK };

/**
 * Outputs of at least this many bytes are written by the tasks straight into memory the caller
 * then owns, rather than copied out of the region after the call: the copy, and the first touch
 * of fresh pages (about 0.35 ms per MiB here), leave the calling thread for the workers. Smaller
 * outputs are copied: a copy is cheaper than a new SharedArrayBuffer there.
 */
export const OWN_OUTPUT_BYTES = 1 << 20;

export { AbortError, abortedBy };

/** A team member whose thread died while it ran task `task` of the call. */
class MemberDied extends Error {
  constructor(
    readonly task: number,
    cause: unknown,
  ) {
    super(`a worker thread died while it ran this node's kernel: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/** Times a member's job is sent again after the thread that held it died before it joined. */
const RESENDS = 2;

/**
 * What a profile hears of each task: a node's (its Apply), or a copy of a large argument or result
 * (the copy's label: it is no node of the graph), with its start and end and the thread that ran it.
 */
export type TaskObserver = (task: Apply | string, start: number, end: number, thread: number) => void;

interface Region {
  readonly block: { offset: number; size: number };
  bound?: BoundPlan;
  /**
   * The call under way's arguments that its copy tasks copy in (by graph input; none for those
   * copied before it began or read in place), and the arrays its copy tasks copy results into
   * (by graph output; none for those written elsewhere). Dropped when the call ends.
   */
  copySources?: ReadonlyArray<NdArray | undefined>;
  copyDestinations?: ReadonlyArray<TypedArray | undefined>;
}

/** A call opened in a region: its id, the inputs read in place and the outputs' own memory. */
interface OpenCall {
  readonly callId: number;
  readonly external: readonly number[];
  readonly outputMemory: OutputMemory;
}

interface StoredPlan {
  readonly plan: Plan;
  readonly text: { offset: number; length: number };
  readonly regions: Region[];
  /** The calling thread runs tasks of nodes (ops without a worker kernel), not only copies. */
  readonly servesNodes: boolean;
  /** Some output is copied out of the region and large enough to be pre-touched (see touchedTargets). */
  readonly touchesOutputs: boolean;
}

let nextPlanId = 0;
let nextCallId = 0;

type Block = { readonly offset: number; readonly size: number };

/** The arena blocks an executor holds (regions, plan texts), given back when it goes away. */
interface Holdings {
  readonly arena: Arena;
  readonly blocks: Set<Block>;
}

function giveBack(holdings: Holdings): void {
  for (const b of holdings.blocks) holdings.arena.release(b);
  holdings.blocks.clear();
}

/**
 * An executor that is collected without dispose gives its blocks back: a program that compiles
 * functions in a loop must not fill the arena. (No call can be running then: a call holds it.)
 */
const collected = new FinalizationRegistry<Holdings>(giveBack);

/**
 * The executor behind each borrowed output, held as long as the output is: a function that is
 * collected gives its regions back, and a borrowed output must not then see other calls' data.
 */
const lenders = new WeakMap<object, PlannedExecutor>();

function viewAt(memory: MemoryViews, region: number, v: ViewDescriptor): TensorView {
  return { data: memory.of(v.dtype), offset: (region + v.offset) / bytesPerElement(v.dtype), shape: v.shape, stride: v.stride };
}

export interface PlannedExecutorOptions {
  /** Workers per call (0: always the calling thread). */
  readonly workers: number;
  /** Record per-task timings (profiling). */
  readonly trace?: boolean;
  /**
   * Per graph output: whether the call may return it as a view of the call's region (Out with
   * borrow): no copy and no fresh memory, overwritten when a later call reuses the region.
   */
  readonly borrowedOutputs?: readonly boolean[];
  /**
   * Per graph output: whether its value goes into a block of the arena of its own (the new value
   * of a shared variable, which the next call reads there in place or copies by tasks) rather
   * than into memory of the caller's (resident-values.ts gives the block back).
   */
  readonly residentOutputs?: readonly boolean[];
  /** The function, as errors name it (e.g. "function 'step'"). */
  readonly label?: string;
}

export class PlannedExecutor implements IdleHolder {
  readonly host: HostValues;
  readonly #plans = new Map<string, StoredPlan>();

  readonly arena: Arena;
  #pool: WorkerPool | undefined;
  readonly #holdings: Holdings;
  /** Calls (and late releases of regions) under way. */
  #running = 0;
  #disposed = false;

  /**
   * `pool` gives the worker pool (made on first need). Without one, plans live in the calling
   * thread's own arena; with workers: 0, calls run on the calling thread (in the pool's arena).
   */
  constructor(
    readonly fgraph: FunctionGraph,
    readonly pool: (() => WorkerPool) | undefined,
    readonly options: PlannedExecutorOptions,
  ) {
    this.#pool = pool?.();
    this.arena = this.#pool?.arena ?? inlineArena();
    this.#notOwnMemory = notOwnMemory(options);
    this.host = new HostValues(fgraph);
    this.#holdings = { arena: this.arena, blocks: new Set() };
    collected.register(this, this.#holdings, this);
    this.arena.addIdleHolder(this);
  }

  /**
   * Gives back the regions no call uses now (the arena asks when its memory is full), unless
   * outputs are borrowed: their values live in those regions until this function's next call.
   */
  releaseIdle(): void {
    if (this.#borrows) return;
    this.#releaseRegions();
  }

  get #borrows(): boolean {
    return this.options.borrowedOutputs?.some(Boolean) ?? false;
  }

  /** Per graph output: borrowed or kept in the arena, so never written into memory of its own (ownOutputMemory) or touched ahead. */
  readonly #notOwnMemory: readonly boolean[] | undefined;

  /** Whether a large argument may be copied by the calling thread's copy tasks (see #begin). */
  #copiedByTasks(x: NdArray): boolean {
    return !(x.data.buffer instanceof SharedArrayBuffer) || this.arena.offsetOf(x.data) !== undefined;
  }

  /** The array output `j`'s value is copied into: a block of the arena for a resident output, else memory the caller owns. */
  #outputArray(dtype: Dtype, n: number, j: number): TypedArray {
    return this.options.residentOutputs?.[j] ? residentArray(this.arena, dtype, n) : unzeroedArray(dtype, n);
  }

  #releaseRegions(): void {
    for (const stored of this.#plans.values()) {
      for (const r of stored.regions) this.#giveBack(r.block);
      stored.regions.length = 0;
    }
  }

  /**
   * Gives the arena blocks of this executor back (idle regions now, the rest when the calls under
   * way end); later calls are refused.
   */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    collected.unregister(this);
    this.#releaseRegions();
    if (this.#running === 0) this.#giveBackAll();
  }

  #giveBack(block: Block): void {
    if (this.#holdings.blocks.delete(block)) this.arena.release(block);
  }

  /** Everything still held (plan texts last: a late worker may still read a plan). */
  #giveBackAll(): void {
    this.#plans.clear();
    giveBack(this.#holdings);
  }

  /** A region whose call has ended (and that no team member still reads). */
  #returnRegion(stored: StoredPlan, region: Region): void {
    if (this.#disposed) this.#giveBack(region.block);
    else stored.regions.push(region);
  }

  #callEnded(): void {
    this.#running -= 1;
    if (this.#disposed && this.#running === 0) this.#giveBackAll();
  }

  #inFlight = 0;
  readonly #waiting: Array<() => void> = [];

  /** Waits until fewer than `limit` worker calls of this executor are in flight. */
  async #enter(limit: number): Promise<void> {
    while (this.#inFlight >= limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#inFlight += 1;
  }

  #leave(): void {
    this.#inFlight -= 1;
    this.#waiting.shift()?.();
  }

  /** The plan for these inputs (made and stored on first use). */
  planFor(inputs: readonly NdArray[]): StoredPlan {
    const key = this.host.signature(inputs);
    let stored = this.#plans.get(key);
    if (!stored) {
      const plan = buildPlan(this.fgraph, inputs, this.host, ++nextPlanId, innerPlanning, { argumentCopies: { borrowedOutputs: this.options.borrowedOutputs } });
      const text = this.arena.storeText(planToText(plan.descriptor));
      this.#holdings.blocks.add(text);
      const d = plan.descriptor;
      stored = {
        plan,
        text,
        regions: [],
        servesNodes: d.calls.some((c, i) => c.main && plan.callNodes[i]),
        touchesOutputs: plan.outputs.some((o) => o.kind === 'view' && sizeOf(d.views[o.view]!.shape) * bytesPerElement(d.views[o.view]!.dtype) >= TOUCH_BYTES),
      };
      this.#plans.set(key, stored);
    }
    return stored;
  }

  /** Whether a call with this plan runs on the calling thread (no pool, workers: 0, too little work). */
  #runsInline(plan: Plan): boolean {
    return !this.#pool || this.options.workers === 0 || plan.work < costModel.inlineWork || !hasWorkerTasks(plan);
  }

  /** The numbers of the plan for these inputs (made and stored, as a call would). */
  planInfo(inputs: readonly NdArray[]): PlanInfo {
    const { plan } = this.planFor(inputs);
    return planInfoOf(plan, this.#runsInline(plan), true);
  }

  #acquire(stored: StoredPlan): Region {
    const free = stored.regions.pop();
    if (free) return free;
    const arena = this.arena;
    const block = arena.allocate(stored.plan.descriptor.regionBytes);
    this.#holdings.blocks.add(block);
    new RegionState(arena.views.i32, block.offset, stored.plan.descriptor).initialize();
    const region: Region = { block };
    for (const { view, value } of stored.plan.regionInit) {
      copyBlock(value, viewAt(arena.views, block.offset, stored.plan.descriptor.views[view]!));
    }
    return region;
  }

  /** The stored plan for a call with these inputs (refused once disposed). */
  #storedFor(inputs: readonly NdArray[]): StoredPlan {
    if (this.#disposed) throw new Error('weft: the function was disposed');
    return this.planFor(inputs);
  }

  /**
   * Runs one call. `onTask` (profiling) hears every task's node, its start and end (milliseconds
   * since the epoch) and the thread that ran it (0: the calling thread).
   */
  async run(inputs: readonly NdArray[], signal?: AbortSignal, onTask?: TaskObserver): Promise<NdArray[]> {
    const stored = this.#storedFor(inputs);
    this.lastRanInline = this.#runsInline(stored.plan);
    if (this.lastRanInline) return this.#runInline(stored, inputs, onTask);
    return this.#runOnWorkers(stored, inputs, this.#pool!, signal, onTask);
  }

  /**
   * Whether the latest call ran on the calling thread (true before the first): the layers above
   * try `runNow` only then, so that a stream of worker calls does not find its plan twice a call.
   */
  lastRanInline = true;

  /**
   * Runs the call now when it runs on the calling thread, and returns its outputs; undefined, having
   * done nothing, when it runs on workers (`run` does that). No promise: a small call's awaits
   * through the layers above cost as much as its work (W6's scalar call).
   */
  runNow(inputs: readonly NdArray[]): NdArray[] | undefined {
    const stored = this.#storedFor(inputs);
    this.lastRanInline = this.#runsInline(stored.plan);
    return this.lastRanInline ? this.#runInline(stored, inputs, undefined) : undefined;
  }

  /**
   * The region's plan, bound on its first call and again after the memory grew (as workers do:
   * views over the smaller memory read what lies beyond it as undefined), and its state (the one
   * the calling thread's team loop uses too).
   */
  #stateOf(region: Region, plan: Plan): RegionState {
    // The arena's views are made again whenever a block lands beyond them (Arena.allocate), so
    // their identity tells a growth, without reading the memory's buffer at every call.
    const views = this.arena.views;
    if (region.bound?.boundTo !== views.i32) region.bound = new BoundPlan(plan.descriptor, region.block.offset, views, this.#mainKernels(plan, region));
    return region.bound.stateIn(views);
  }

  /**
   * Starts a call in `region`: inputs in (read in place where they live in this arena, large ones
   * left to the copy tasks, the others copied now), the outputs' own memory made, and the call
   * opened.
   */
  #begin(stored: StoredPlan, region: Region, state: RegionState, inputs: readonly NdArray[], inline: boolean): OpenCall {
    const { plan } = stored;
    const d = plan.descriptor;
    const memory = this.arena.views;
    const base = region.block.offset;
    const external = inPlaceInputs(this.arena, d, plan.inputViews, inputs);
    const outputMemory = ownOutputMemory(d, inline ? 'local' : 'shared', this.#notOwnMemory);
    const inPlace = external.length === 0 ? undefined : new Set(external.filter((_, k) => k % 2 === 0));
    let copySources: Array<NdArray | undefined> | undefined;
    const inputViews = plan.inputViews;
    for (let i = 0; i < inputViews.length; i++) {
      const view = inputViews[i]!;
      if (view < 0 || inPlace?.has(i)) continue;
      const x = inputs[i]!;
      if (x.data.length === 0 && sizeOf(x.shape) > 0) {
        throw new TypeError(`${this.options.label ?? 'the function'}: argument ${i} was emptied after the call began (given back with weft.release while the call was pending?)`);
      }
      const v = d.views[view]!;
      // A large contiguous argument in memory of its own is copied by the plan's copy tasks,
      // chunk by chunk, while the first tasks already run (plan/argument-copies.ts); the others
      // now. Other shared memory may be a region's (a borrowed output passed back in): this
      // call's tasks, or another call's, could overwrite it before its last chunk is copied. An
      // array of this arena's own (pool.from, a shared variable's value) no task writes. (Only
      // then is `.buffer` read: for a small typed array V8 makes it on the first read, at a cost.)
      if (plan.copies.inputs.has(i) && this.#copiedByTasks(x) && isContiguous(x) && x.data.constructor === STORAGE[v.dtype]) {
        (copySources ??= [])[i] = x;
      } else copyBlock(x, viewAt(memory, base, v));
    }
    region.copySources = copySources;
    region.copyDestinations = copyDestinations(plan, outputMemory, (dtype, n, j) => this.#outputArray(dtype, n, j));
    const callId = ++nextCallId;
    state.open(callId);
    return { callId, external, outputMemory };
  }

  /** A call on the calling thread alone: its tasks in turn, then its outputs. */
  #runInline(stored: StoredPlan, inputs: readonly NdArray[], onTask: TaskObserver | undefined): NdArray[] {
    const region = this.#acquire(stored);
    this.#running += 1;
    const state = this.#stateOf(region, stored.plan);
    try {
      const call = this.#begin(stored, region, state, inputs, true);
      const result = runTeam(region.bound!, this.arena.views, call.callId, { trace: onTask !== undefined, main: true, external: call.external, outputMemory: call.outputMemory });
      return this.#outputs(stored, region, state, call, [result], undefined, undefined, onTask);
    } finally {
      this.#end(stored, region, state, false, true);
    }
  }

  /** A call that a team of pool workers runs (with the calling thread's tasks, if the plan has any). */
  async #runOnWorkers(stored: StoredPlan, inputs: readonly NdArray[], pool: WorkerPool, signal: AbortSignal | undefined, onTask: TaskObserver | undefined): Promise<NdArray[]> {
    const { plan } = stored;
    const d = plan.descriptor;
    const memory = this.arena.views;
    // Calls beyond a batch or two per thread wait their turn here rather than each holding a region.
    await this.#enter(pool.size * (2 * MAX_BATCH + 1));
    const region = this.#acquire(stored);
    this.#running += 1;
    const state = this.#stateOf(region, plan);
    let healthy = true;
    try {
      const call = this.#begin(stored, region, state, inputs, false);
      const { callId, external, outputMemory } = call;
      let results: TeamResult[];
      let touched: ReadonlyArray<TypedArray | undefined> | undefined;
      const team = Math.max(1, Math.min(this.options.workers, pool.size, plan.width, d.memberSlots));
      const job: TeamJob = {
        callId,
        planId: d.id,
        planOffset: stored.text.offset,
        planLength: stored.text.length,
        region: region.block.offset,
        trace: onTask !== undefined,
        ...(external.length > 0 ? { external } : {}),
        ...(outputMemory.length > 0 ? { outputMemory } : {}),
      };
      const onAbort = (): void => state.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      /**
       * Member k's job. When its thread dies (in a batch, possibly while it ran another call's
       * job), its record tells what became of this call: left (its part is done), never joined
       * or idle (the job is sent again), or in a kernel (the call fails, naming the node).
       */
      const member = async (k: number): Promise<TeamResult> => {
        for (let sent = 0; ; sent++) {
          try {
            return await pool.run({ ...job, member: k }, signal);
          } catch (e) {
            const was = state.memberState(k);
            if (was.kind === 'left') return { tasks: 0 };
            if (was.kind === 'running') throw new MemberDied(was.task, e);
            // The dead thread never ran its `finally`: it leaves in its name.
            state.forgetMember(k);
            if (signal?.aborted || sent >= RESENDS || pool.closed) throw e;
          }
        }
      };
      try {
        // A member that fails (a dead worker, a dropped job) stops the others at once: they
        // may be waiting for a task that will now never finish.
        const members = Array.from({ length: team }, (_, k) =>
          member(k).catch((e: unknown) => {
            onAbort();
            throw e;
          }),
        );
        const main = region.bound!.hasMainCalls ? [runMainTasks(region.bound!, memory, { trace: onTask !== undefined, external, outputMemory })] : [];
        const all = Promise.allSettled([...members, ...main]);
        // While the workers run, the calling thread makes the memory the outputs are copied into,
        // when it has a core of its own (with the workers on every core it only slowed them:
        // W9's forward on 2 workers, 2 cores) and no node's tasks to serve (after the copies in,
        // which runMainTasks takes first).
        if (stored.touchesOutputs && !stored.servesNodes && team < pool.cores) touched = await touchedTargets(plan, this.#notOwnMemory, outputMemory);
        const settled = await all;
        const crashed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (crashed) {
          onAbort();
          healthy = false;
          const reason: unknown = crashed.reason;
          if (reason instanceof MemberDied) {
            const failed = d.tasks[reason.task]!.call;
            const node = plan.callNodes[failed];
            const cause = new Error(`${this.options.label ?? 'the function'}: ${reason.message}`, { cause: reason.cause });
            if (!node) throw cause;
            const described = d.calls[failed]!.inputs.map((v) => viewAt(memory, region.block.offset, d.views[v]!));
            throw new NodeError(node, this.fgraph.toposort().indexOf(node), described, cause);
          }
          if (signal?.aborted) throw abortedBy(signal);
          throw new Error(`a worker failed while running the call: ${(reason as Error)?.message ?? reason}`, { cause: reason });
        }
        results = settled.map((r) => (r as PromiseFulfilledResult<TeamResult>).value);
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
      return this.#outputs(stored, region, state, call, results, signal, touched, onTask);
    } finally {
      this.#end(stored, region, state, true, healthy);
    }
  }

  /**
   * After the tasks: what the profile hears, the call's failure (a kernel's, named by its node,
   * or an abort), else its outputs, in memory the caller owns (those written there already are
   * handed over; borrowed ones are views of the region).
   */
  #outputs(
    stored: StoredPlan,
    region: Region,
    state: RegionState,
    call: OpenCall,
    results: readonly TeamResult[],
    signal: AbortSignal | undefined,
    touched: ReadonlyArray<TypedArray | undefined> | undefined,
    onTask: TaskObserver | undefined,
  ): NdArray[] {
    const { plan } = stored;
    const d = plan.descriptor;
    const memory = this.arena.views;
    const base = region.block.offset;
    if (onTask) {
      for (const r of results) {
        for (const [t, a, b] of r.trace ?? []) {
          const c = d.tasks[t]!.call;
          const node = plan.callNodes[c];
          if (!node) onTask(d.calls[c]!.label, a, b, r.thread ?? 0);
          else if (d.calls[c]!.kernel !== BARRIER_KERNEL) onTask(node, a, b, r.thread ?? 0);
        }
      }
    }
    const task = state.failedTask();
    if (task !== undefined) {
      const error = results.find((r) => r.error?.task === task)?.error;
      const node = plan.callNodes[d.tasks[task]!.call];
      // A copy of an argument or result has no node: its message says which copy failed.
      const cause = new Error(node ? (error?.message ?? 'a kernel failed') : `${this.options.label ?? 'the function'}: the ${d.calls[d.tasks[task]!.call]!.label} failed: ${error?.message}`);
      if (error?.stack) cause.stack = error.stack;
      const described = d.calls[d.tasks[task]!.call]!.inputs.map((v) => viewAt(memory, base, d.views[v]!));
      if (node) throw new NodeError(node, this.fgraph.toposort().indexOf(node), described, cause);
      throw cause;
    }
    if (!state.completed) throw abortedBy(signal);
    return plan.outputs.map((o, j) => {
      if (o.kind === 'value') return copyOut(o.value);
      const v = d.views[o.view]!;
      if (this.options.borrowedOutputs?.[j] && isContiguous(v)) {
        const data = new STORAGE[v.dtype](memory.memory.buffer, base + v.offset, sizeOf(v.shape));
        lenders.set(data, this);
        return makeNdArray(data, v.shape);
      }
      const buffer = call.outputMemory.length > 0 ? call.outputMemory.find(([output]) => output === j)?.[1] : undefined;
      if (buffer) return makeNdArray(new STORAGE[v.dtype](buffer as ArrayBuffer, 0, sizeOf(v.shape)), v.shape);
      const copied = region.copyDestinations?.[j];
      if (copied) return makeNdArray(copied, v.shape);
      const out = makeNdArray(touched?.[j] ?? this.#outputArray(v.dtype, sizeOf(v.shape), j), v.shape);
      copyBlock(viewAt(memory, base, v), out);
      return out;
    });
  }

  /** The call is over: its region goes back (once no member is inside; never after a crash). */
  #end(stored: StoredPlan, region: Region, state: RegionState, onWorkers: boolean, healthy: boolean): void {
    region.copySources = undefined;
    region.copyDestinations = undefined;
    if (onWorkers) this.#leave();
    state.close();
    if (!healthy) {
      // A crashed member may have left the region in any state: it is never reused.
      this.#holdings.blocks.delete(region.block);
      this.#callEnded();
    } else if (state.members === 0) {
      this.#returnRegion(stored, region);
      this.#callEnded();
    } else void this.#releaseLater(stored, region, state);
  }

  /**
   * The calling thread's implementation of the plan's calls that have no worker kernel, and of its
   * copies of arguments and results at `region` (what they copy is the region's call's).
   */
  #mainKernels(plan: Plan, region: Region): Map<number, Kernel> {
    const kernels = new Map<number, Kernel>();
    for (const [input, call] of plan.copies.inputs) kernels.set(call, (_, [into], __, range) => copyChunk(region.copySources?.[input], into!, range));
    for (const [output, call] of plan.copies.outputs) kernels.set(call, ([from], _, __, range) => copyChunk(from!, region.copyDestinations?.[output], range));
    plan.descriptor.calls.forEach((c, i) => {
      const node = plan.callNodes[i];
      if (!c.main || !node) return;
      kernels.set(i, (ins, outs) => {
        // perform gets arrays of its own: a closure may keep what it is given.
        // (A failure is the task's: the call reports it as a NodeError.)
        const views = ins.map((v) => makeNdArray(v.data, v.shape, v.stride, v.offset));
        const results = node.op.perform(node, copiedArguments(node, views, 'all')) as NdArray[];
        outs.forEach((o, j) => {
          const r = results[j];
          if (!r || r.shape.length !== o.shape.length || r.shape.some((n, a) => n !== o.shape[a])) {
            throw new Error(
              `${node.op}.perform returned shape [${r?.shape.join(', ')}] for output ${j}; outputShapes said [${o.shape.join(', ')}]`,
            );
          }
          copyBlock(r, o);
        });
      });
    });
    return kernels;
  }

  /** A region some late team member still reads is given back once it has left. */
  async #releaseLater(stored: StoredPlan, region: Region, state: RegionState): Promise<void> {
    await state.emptied();
    this.#returnRegion(stored, region);
    this.#callEnded();
  }
}

/**
 * The inputs of a call that can be read where they are: arrays of `arena` (made by Pool.array or
 * Pool.from) laid out as the plan lays out that input, and not overwritten by any node. Returns
 * [input index, byte offset] pairs, flattened.
 */
function inPlaceInputs(arena: Arena, d: PlanDescriptor, inputViews: readonly number[], inputs: readonly NdArray[]): number[] {
  const external: number[] = [];
  for (const r of d.relocatable) {
    const x = inputs[r.input]!;
    const offset = arena.offsetOf(x.data);
    if (offset === undefined) continue;
    const v = d.views[inputViews[r.input]!]!;
    const sameLayout =
      x.data.constructor === STORAGE[v.dtype] &&
      x.shape.length === v.shape.length &&
      x.shape.every((n, a) => n === v.shape[a] && (n <= 1 || x.stride[a] === v.stride[a]));
    if (sameLayout) external.push(r.input, offset + x.offset * bytesPerElement(v.dtype));
  }
  return external;
}

/**
 * Fresh buffers for the outputs this call's kernels write directly (see OWN_OUTPUT_BYTES): shared
 * when workers write them, plain when only the calling thread does.
 */
function ownOutputMemory(d: PlanDescriptor, kind: 'shared' | 'local', notOwnMemory: readonly boolean[] | undefined): OutputMemory {
  let own: Array<OutputMemory[number]> | undefined;
  for (const m of d.movableOutputs) {
    // An output of a length the caller gives back (weft.release) is copied out instead, into
    // memory the caller gave back. (Memory a kernel writes is zeroed: it may leave elements unwritten.)
    if (m.bytes < OWN_OUTPUT_BYTES || notOwnMemory?.[m.output] || givenBack(m.bytes)) continue;
    (own ??= []).push([m.output, kind === 'shared' ? freshSharedBuffer(m.bytes) : zeroedBuffer(m.bytes)]);
  }
  return own ?? NO_OUTPUT_MEMORY;
}

/**
 * Outputs copied out of the region whose memory is made, and touched, while the workers run: a
 * fresh array's pages are mapped at their first write, which cost the calling thread 0.25 ms per
 * MiB here alone and up to 0.7 beside busy workers (W9's forward output, 1.2 MB: 0.3-0.9 ms of
 * a 1.2-2.5 ms call).
 */
const TOUCH_BYTES = 1 << 18;
const PAGE_BYTES = 4096;

/**
 * The arrays the outputs copied out of the region go into (undefined for the others, and for
 * outputs under TOUCH_BYTES), each page written once. It first lets the microtasks queued so
 * far run: the workers are woken in one of them.
 */
async function touchedTargets(plan: Plan, notOwnMemory: readonly boolean[] | undefined, outputMemory: OutputMemory): Promise<Array<TypedArray | undefined>> {
  await undefined;
  const d = plan.descriptor;
  return plan.outputs.map((o, j) => {
    if (o.kind === 'value' || notOwnMemory?.[j] || outputMemory.some(([output]) => output === j) || plan.copies.outputs.has(j)) return undefined;
    const v = d.views[o.view]!;
    const n = sizeOf(v.shape);
    if (n * bytesPerElement(v.dtype) < TOUCH_BYTES) return undefined;
    const data = unzeroedArray(v.dtype, n);
    const bytes = new Uint8Array(data.buffer);
    for (let b = 0; b < bytes.length; b += PAGE_BYTES) bytes[b] = 0;
    return data;
  });
}

/**
 * The arrays the plan's copy tasks copy results into (plan/argument-copies.ts), made before the
 * call (their first touch then happens in the copy tasks, beside the workers), by graph output;
 * none for the outputs written straight into memory of their own.
 */
function copyDestinations(plan: Plan, outputMemory: OutputMemory, arrayFor: (dtype: Dtype, n: number, output: number) => TypedArray): Array<TypedArray | undefined> | undefined {
  if (plan.copies.outputs.size === 0) return undefined;
  const targets: Array<TypedArray | undefined> = [];
  for (const j of plan.copies.outputs.keys()) {
    const o = plan.outputs[j]!;
    if (o.kind !== 'view' || outputMemory.some(([output]) => output === j)) continue;
    const v = plan.descriptor.views[o.view]!;
    targets[j] = arrayFor(v.dtype, sizeOf(v.shape), j);
  }
  return targets;
}

/** A copy task's chunk: flat elements [start, end) of contiguous `from` into `into` (nothing to copy when either is missing). */
function copyChunk(from: TensorView | undefined, into: TensorView | TypedArray | undefined, range: { readonly start: number; readonly end: number } | undefined): void {
  if (!from || !into) return;
  const start = range?.start ?? 0;
  const end = range?.end ?? sizeOf(from.shape);
  const source = (from.data as Float64Array).subarray(from.offset + start, from.offset + end);
  if (ArrayBuffer.isView(into)) (into as Float64Array).set(source, start);
  else (into.data as Float64Array).set(source, into.offset + start);
}

/** Per graph output: whether it is borrowed or resident (PlannedExecutorOptions); undefined when none is. */
function notOwnMemory(options: PlannedExecutorOptions): readonly boolean[] | undefined {
  const { borrowedOutputs: borrowed, residentOutputs: resident } = options;
  if (!borrowed?.some(Boolean) && !resident?.some(Boolean)) return undefined;
  return Array.from({ length: Math.max(borrowed?.length ?? 0, resident?.length ?? 0) }, (_, j) => Boolean(borrowed?.[j] || resident?.[j]));
}

/** Copies of at most this many elements are element loops (see copyBlock). */
const SMALL_COPY = 16;
const NO_OUTPUT_MEMORY: OutputMemory = [];

/**
 * Copies `src` into `dst` (same shape): one block copy when both are contiguous with the same
 * storage, as inputs and outputs nearly always are (an element loop over every storage class
 * costs ten times more), else the strided copy.
 */
function copyBlock(src: TensorView, dst: TensorView): void {
  if (src.data.constructor === dst.data.constructor && isContiguous(src) && isContiguous(dst)) {
    const n = sizeOf(dst.shape);
    if (n <= SMALL_COPY) {
      // A subarray is an allocation: for a few elements a loop is cheaper (scalar calls).
      const from = src.data as Float64Array;
      const to = dst.data as Float64Array;
      for (let i = 0; i < n; i++) to[dst.offset + i] = from[src.offset + i]!;
    } else (dst.data as Float64Array).set((src.data as Float64Array).subarray(src.offset, src.offset + n), dst.offset);
  } else copyView(src, dst);
}

function copyOut(v: NdArray): NdArray {
  const out = makeNdArray(new (v.data.constructor as new (n: number) => NdArray['data'])(v.shape.reduce((a, b) => a * b, 1)), v.shape);
  copyBlock(v, out);
  return out;
}
