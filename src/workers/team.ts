// The team loop: what every participant of a call runs, in a worker or on the calling thread.
// It takes ready tasks from the region's queue (region.ts, with Atomics), runs their kernels,
// and releases the tasks that were waiting for them; no message is exchanged per task. Idle
// members spin briefly, then sleep until a task is queued or the call ends. Tasks of ops
// without a worker kernel go to a second queue that only the calling thread serves.
import { bytesPerElement, STORAGE, type Dtype, type TypedArray } from '../kernels/dtype.js';
import { getKernel, registerKernel, type Kernel } from '../kernels/registry.js';
import { rowOf, type TensorView } from '../kernels/view.js';
import { BARRIER_KERNEL, slabBounds, type OutputMemory, type PlanDescriptor, type TeamResult } from './protocol.js';
import { RegionState } from './region.js';

registerKernel(BARRIER_KERNEL, () => undefined);

/** Part of `v` along `axis`: indices [start, end). */
function slabOf(v: TensorView, axis: number, [start, end]: readonly [number, number]): TensorView {
  return { data: v.data, offset: v.offset + start * v.stride[axis]!, shape: v.shape.map((d, a) => (a === axis ? end - start : d)), stride: v.stride };
}

/**
 * Runs task `t` of `plan` over `views` with its call's kernel: a task over a range gets it; a
 * slab task gets its slab of input 0 and its row of output 0 (see CallSplit), and no range.
 */
export function runPlanTask(plan: PlanDescriptor, t: number, views: readonly TensorView[], kernel: Kernel): void {
  const task = plan.tasks[t]!;
  const call = plan.calls[task.call]!;
  const ins = call.inputs.map((i) => views[i]!);
  const outs = call.outputs.map((i) => views[i]!);
  const split = call.split;
  if (task.start < 0) kernel(ins, outs, call.params);
  else if (split?.by === 'slabs') {
    ins[0] = slabOf(ins[0]!, split.axis, slabBounds(ins[0]!.shape[split.axis]!, split.count, task.start));
    outs[0] = rowOf(outs[0]!, task.start);
    kernel(ins, outs, call.params);
  } else kernel(ins, outs, call.params, { start: task.start, end: task.end });
}

/** Typed-array views over the whole shared memory, one per dtype (re-made when it grows). */
export class MemoryViews {
  #buffer: ArrayBufferLike | undefined;
  readonly #arrays = new Map<Dtype, TypedArray>();
  #i32: Int32Array = new Int32Array(0);

  constructor(readonly memory: WebAssembly.Memory) {
    this.refresh();
  }

  /** Re-creates the views if the memory grew since they were made. */
  refresh(): void {
    const buffer = this.memory.buffer;
    if (buffer.byteLength === this.#buffer?.byteLength) return;
    this.#buffer = buffer;
    this.#arrays.clear();
    this.#i32 = new Int32Array(buffer);
  }

  get i32(): Int32Array {
    return this.#i32;
  }

  of(dtype: Dtype): TypedArray {
    let a = this.#arrays.get(dtype);
    if (!a) {
      a = new STORAGE[dtype](this.memory.buffer);
      this.#arrays.set(dtype, a);
    }
    return a;
  }
}

const notOnWorkers: Kernel = () => {
  throw new Error('a calling-thread task reached a worker');
};

/** A plan made ready to run at one region: its views and kernels resolved. */
export class BoundPlan {
  readonly views: TensorView[];
  /** Kernels by call, resolved on first use (a thread resolves only the kernels it runs). */
  readonly #kernels: Array<Kernel | undefined>;
  readonly #mainKernels: ReadonlyMap<number, Kernel> | undefined;

  /**
   * `mainKernels` gives the calling thread's implementation of the plan's main calls (by call
   * index); workers have none.
   */
  constructor(
    readonly plan: PlanDescriptor,
    readonly region: number,
    memory: MemoryViews,
    mainKernels?: ReadonlyMap<number, Kernel>,
  ) {
    this.views = plan.views.map((v) => ({
      data: memory.of(v.dtype),
      offset: (region + v.offset) / bytesPerElement(v.dtype),
      shape: v.shape,
      stride: v.stride,
    }));
    this.#kernels = plan.calls.map(() => undefined);
    this.#mainKernels = mainKernels;
  }

  #kernel(i: number): Kernel {
    let k = this.#kernels[i];
    if (!k) {
      const c = this.plan.calls[i]!;
      k = c.main ? (this.#mainKernels?.get(i) ?? notOnWorkers) : getKernel(c.kernel);
      this.#kernels[i] = k;
    }
    return k;
  }

  /**
   * The views of one call whose inputs in `external` ([input, byte offset] pairs) are read in
   * place and whose outputs in `outputMemory` are written into buffers of their own: the views
   * into those inputs' and outputs' buffers move there; the others are this plan's.
   */
  viewsFor(external: readonly number[] | undefined, outputMemory?: OutputMemory): readonly TensorView[] {
    if (!external?.length && !outputMemory?.length) return this.views;
    const views = this.views.slice();
    for (let k = 0; k < (external?.length ?? 0); k += 2) {
      const moved = this.plan.relocatable.find((r) => r.input === external![k]);
      if (!moved) throw new Error(`input ${external![k]} cannot be read in place by this plan`);
      for (const v of moved.views) {
        const d = this.plan.views[v]!;
        views[v] = { ...this.views[v]!, offset: (external![k + 1]! + d.offset - moved.base) / bytesPerElement(d.dtype) };
      }
    }
    for (const [output, buffer] of outputMemory ?? []) {
      const moved = this.plan.movableOutputs.find((m) => m.output === output);
      if (!moved) throw new Error(`output ${output} cannot be written into memory of its own by this plan`);
      if (buffer.byteLength < moved.bytes) throw new Error(`output ${output} needs ${moved.bytes} bytes, its buffer has ${buffer.byteLength}`);
      const arrays = new Map<Dtype, TypedArray>();
      for (const v of moved.views) {
        const d = this.plan.views[v]!;
        let data = arrays.get(d.dtype);
        if (!data) arrays.set(d.dtype, (data = new STORAGE[d.dtype](buffer as ArrayBuffer)));
        views[v] = { ...this.views[v]!, data, offset: (d.offset - moved.base) / bytesPerElement(d.dtype) };
      }
    }
    return views;
  }

  runTask(t: number, views: readonly TensorView[] = this.views): void {
    runPlanTask(this.plan, t, views, this.#kernel(this.plan.tasks[t]!.call));
  }
}

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

function run(bound: BoundPlan, state: RegionState, views: readonly TensorView[], task: number, trace: Array<[number, number, number]> | undefined): unknown {
  const started = trace ? performance.timeOrigin + performance.now() : 0;
  try {
    bound.runTask(task, views);
  } catch (e) {
    state.fail(task);
    return e;
  }
  if (trace) trace.push([task, started, performance.timeOrigin + performance.now()]);
  state.finish(task);
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
  const state = new RegionState(memory.i32, bound.region, bound.plan);
  const views = bound.viewsFor(options.external, options.outputMemory);
  const thread = options.thread ?? 0;
  const spin = options.spin ?? 20000;
  const trace: Array<[number, number, number]> | undefined = options.trace ? [] : undefined;
  // Its record says what it does, for the calling thread to read should this thread die.
  const member = options.member;
  if (member !== undefined) state.checkMember(member);
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
        const error = run(bound, state, views, task, trace);
        state.mark(member, 'idle');
        if (error !== undefined) return { tasks: ran, thread, trace, error: failure(task, error) };
        ran += 1;
        idle = 0;
        continue;
      }
      if (idle < spin) {
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
  const state = new RegionState(memory.i32, bound.region, bound.plan);
  const views = bound.viewsFor(options.external, options.outputMemory);
  const trace: Array<[number, number, number]> | undefined = options.trace ? [] : undefined;
  let ran = 0;
  while (!state.over) {
    const task = state.take(true);
    if (task >= 0) {
      const error = run(bound, state, views, task, trace);
      if (error !== undefined) return { tasks: ran, thread: 0, trace, error: failure(task, error) };
      ran += 1;
      continue;
    }
    await state.sleepMain(20);
  }
  return trace ? { tasks: ran, thread: 0, trace } : { tasks: ran, thread: 0 };
}
