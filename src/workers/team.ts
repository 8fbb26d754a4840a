// The team loop: what every participant of a call runs, in a worker or on the calling thread.
// It takes ready tasks from the region's queue with Atomics, runs their kernels, and releases
// the tasks that were waiting for them; no message is exchanged per task. Idle members spin
// briefly, then sleep until a task is queued or the call ends.
import { bytesPerElement, STORAGE, type Dtype, type TypedArray } from '../kernels/dtype.js';
import { getKernel, type Kernel } from '../kernels/registry.js';
import type { TensorView } from '../kernels/view.js';
import { H, type PlanDescriptor, type TeamResult } from './protocol.js';

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
    if (buffer === this.#buffer && buffer.byteLength === this.#buffer.byteLength) return;
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

/** A plan made ready to run at one region: its views and kernels resolved. */
export class BoundPlan {
  readonly views: TensorView[];
  readonly kernels: Kernel[];

  constructor(
    readonly plan: PlanDescriptor,
    readonly region: number,
    memory: MemoryViews,
  ) {
    this.views = plan.views.map((v) => ({
      data: memory.of(v.dtype),
      offset: (region + v.offset) / bytesPerElement(v.dtype),
      shape: v.shape,
      stride: v.stride,
    }));
    this.kernels = plan.calls.map((c) => getKernel(c.kernel));
  }

  runTask(t: number): void {
    const task = this.plan.tasks[t]!;
    const call = this.plan.calls[task.call]!;
    const ins = call.inputs.map((i) => this.views[i]!);
    const outs = call.outputs.map((i) => this.views[i]!);
    this.kernels[task.call]!(ins, outs, call.params, task.start < 0 ? undefined : { start: task.start, end: task.end });
  }
}

export interface TeamOptions {
  /** Spin-checks before sleeping when no task is ready (OpenMP's wait policy). */
  readonly spin?: number;
  /** Record [task, start, end] for every task run. */
  readonly trace?: boolean;
  /** The id this member reports as its thread. */
  readonly thread?: number;
}

/**
 * Joins call `callId` in `bound`'s region and runs tasks until the call is finished, failed or
 * aborted. Safe to call late: a member that arrives after the call ended leaves at once.
 */
export function runTeam(bound: BoundPlan, memory: MemoryViews, callId: number, options: TeamOptions = {}): TeamResult {
  const thread = options.thread ?? 0;
  const h = memory.i32;
  const base = bound.region >> 2;
  const at = (slot: number): number => base + slot;
  const pending = (bound.region + bound.plan.pendingOffset) >> 2;
  const queue = (bound.region + bound.plan.queueOffset) >> 2;
  const total = bound.plan.tasks.length;
  const spin = options.spin ?? 20000;
  const trace: Array<[number, number, number]> | undefined = options.trace ? [] : undefined;

  Atomics.add(h, at(H.MEMBERS), 1);
  let ran = 0;
  try {
    if (Atomics.load(h, at(H.CALL)) !== callId) return { tasks: 0 };
    let idle = 0;
    for (;;) {
      if (Atomics.load(h, at(H.ABORT)) !== 0) break;
      const head = Atomics.load(h, at(H.HEAD));
      const tail = Atomics.load(h, at(H.TAIL));
      if (head < tail) {
        if (Atomics.compareExchange(h, at(H.HEAD), head, head + 1) !== head) continue;
        let task = Atomics.load(h, queue + head);
        while (task < 0) task = Atomics.load(h, queue + head);
        const started = trace ? performance.timeOrigin + performance.now() : 0;
        try {
          bound.runTask(task);
        } catch (e) {
          Atomics.compareExchange(h, at(H.ERROR), 0, task + 1);
          Atomics.store(h, at(H.ABORT), 1);
          Atomics.notify(h, at(H.TAIL));
          Atomics.notify(h, at(H.DONE));
          const err = e as Error;
          return { tasks: ran, thread, trace, error: { task, message: err?.message ?? String(e), stack: err?.stack } };
        }
        if (trace) trace.push([task, started, performance.timeOrigin + performance.now()]);
        ran += 1;
        let released = 0;
        for (const s of bound.plan.tasks[task]!.successors) {
          if (Atomics.sub(h, pending + s, 1) === 1) {
            const slot = Atomics.add(h, at(H.TAIL), 1);
            Atomics.store(h, queue + slot, s);
            released += 1;
          }
        }
        if (released > 0) Atomics.notify(h, at(H.TAIL));
        if (Atomics.add(h, at(H.DONE), 1) + 1 === total) {
          Atomics.notify(h, at(H.DONE));
          Atomics.notify(h, at(H.TAIL));
        }
        idle = 0;
        continue;
      }
      if (Atomics.load(h, at(H.DONE)) >= total) break;
      if (idle < spin) {
        idle += 1;
        continue;
      }
      Atomics.wait(h, at(H.TAIL), tail, 2);
    }
    return trace ? { tasks: ran, thread, trace } : { tasks: ran, thread };
  } finally {
    Atomics.sub(h, at(H.MEMBERS), 1);
  }
}
