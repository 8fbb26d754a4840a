// A plan made ready to run at one region of the shared memory: its views over the memory and its
// kernels resolved, and how one of its tasks runs (a range of its call's work, or a slab). The
// team loop (team.ts), nested regions (nested-team.ts) and inner plans (inner-plan.ts) run tasks so.
import { bytesPerElement, STORAGE, type Dtype, type TypedArray } from '../kernels/dtype.js';
import { bufferOf } from '../kernels/gemm-wasm.js';
import { getKernel, type Kernel } from '../kernels/registry.js';
import { rowOf, type TensorView } from '../kernels/view.js';
import { slabBounds, type OutputMemory, type PlanDescriptor } from './protocol.js';
import { RegionState } from './region.js';

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
    // Recorded as the memory's: arrays made on it keep it after the memory grows again.
    const buffer = bufferOf(this.memory);
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
      a = new STORAGE[dtype](bufferOf(this.memory));
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
  /**
   * The views of the memory the plan was bound over (MemoryViews.i32 then): its views reach no
   * further than their buffer, while arguments read in place (arrays of pool.from, kept update
   * values) may lie beyond once the memory grew. A thread binds its plans again when it did.
   */
  readonly boundTo: Int32Array;
  /** Kernels by call, resolved on first use (a thread resolves only the kernels it runs). */
  readonly #kernels: Array<Kernel | undefined>;
  readonly #mainKernels: ReadonlyMap<number, Kernel> | undefined;
  /** The plan has calls only the calling thread runs (ops without a worker kernel, copies of arguments). */
  readonly hasMainCalls: boolean;

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
    this.boundTo = memory.i32;
    this.views = plan.views.map((v) => ({
      data: memory.of(v.dtype),
      offset: (region + v.offset) / bytesPerElement(v.dtype),
      shape: v.shape,
      stride: v.stride,
    }));
    this.#kernels = plan.calls.map(() => undefined);
    this.#mainKernels = mainKernels;
    this.hasMainCalls = plan.calls.some((c) => c.main);
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
      moveBuffer(views, this.plan, moved, external![k + 1]!, (v) => this.views[v]!.data);
    }
    for (const [output, buffer] of outputMemory ?? []) {
      const moved = this.plan.movableOutputs.find((m) => m.output === output);
      if (!moved) throw new Error(`output ${output} cannot be written into memory of its own by this plan`);
      if (buffer.byteLength < moved.bytes) throw new Error(`output ${output} needs ${moved.bytes} bytes, its buffer has ${buffer.byteLength}`);
      const arrays = new Map<Dtype, TypedArray>();
      moveBuffer(views, this.plan, moved, 0, (_, dtype) => {
        let data = arrays.get(dtype);
        if (!data) arrays.set(dtype, (data = new STORAGE[dtype](buffer as ArrayBuffer)));
        return data;
      });
    }
    return views;
  }

  #state: RegionState | undefined;

  /** The region's state over `memory` (made once, and again if the memory's views were remade). */
  stateIn(memory: MemoryViews): RegionState {
    if (this.#state?.h !== memory.i32) this.#state = new RegionState(memory.i32, this.region, this.plan);
    return this.#state;
  }

  runTask(t: number, views: readonly TensorView[] = this.views): void {
    runPlanTask(this.plan, t, views, this.#kernel(this.plan.tasks[t]!.call));
  }
}

/**
 * Moves the views into one buffer of `plan` (`moved`: the buffer's byte offset in the region and
 * its views) so that the buffer starts at byte `at` of the array `arrayOf` gives each view: an
 * input read where it is, an output written into memory of its own or into a row elsewhere.
 */
export function moveBuffer(
  views: TensorView[],
  plan: PlanDescriptor,
  moved: { readonly base: number; readonly views: readonly number[] },
  at: number,
  arrayOf: (view: number, dtype: Dtype) => TypedArray,
): void {
  for (const v of moved.views) {
    const d = plan.views[v]!;
    views[v] = { data: arrayOf(v, d.dtype), offset: (at + d.offset - moved.base) / bytesPerElement(d.dtype), shape: d.shape, stride: d.stride };
  }
}
