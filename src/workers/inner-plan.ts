// The 'innerPlan' kernel: an encapsulated graph (OpFromGraph) runs as one task. Its own plan,
// made for the call's input shapes, executes sequentially inside the scratch memory the outer
// plan gave the task: constants and host values written in, inputs copied in, the inner tasks
// run in order, outputs copied out. Values travel as exact JSON (NaN, infinities, -0 kept).
import { copyView } from '../kernels/copy.js';
import { bytesPerElement, STORAGE, type Dtype, type TypedArray } from '../kernels/dtype.js';
import { getKernel, registerKernel, type KernelParams } from '../kernels/registry.js';
import type { TensorView } from '../kernels/view.js';
import type { PlanDescriptor } from './protocol.js';
import { runPlanTask } from './bound-plan.js';

/** A value as plain JSON: special numbers as strings, so that it survives JSON.stringify. */
export interface EncodedValue {
  readonly dtype: Dtype;
  readonly shape: readonly number[];
  readonly data: ReadonlyArray<number | string>;
}

export function encodeValue(v: TensorView, dtype: Dtype): EncodedValue {
  const n = v.shape.reduce((a, b) => a * b, 1);
  const out: Array<number | string> = [];
  const idx = new Array<number>(v.shape.length).fill(0);
  for (let k = 0; k < n; k++) {
    let p = v.offset;
    idx.forEach((i, a) => (p += i * v.stride[a]!));
    const x = v.data[p]!;
    out.push(Number.isNaN(x) ? 'NaN' : x === Infinity ? 'Infinity' : x === -Infinity ? '-Infinity' : Object.is(x, -0) ? '-0' : x);
    for (let a = idx.length - 1; a >= 0; a--) if (++idx[a]! < v.shape[a]!) break; else idx[a] = 0;
  }
  return { dtype, shape: [...v.shape], data: out };
}

function decodeInto(e: EncodedValue, view: TensorView): void {
  e.data.forEach((x, i) => {
    view.data[view.offset + i] = typeof x === 'number' ? x : x === 'NaN' ? NaN : x === 'Infinity' ? Infinity : x === '-Infinity' ? -Infinity : -0;
  });
}

export interface InnerPlanParams {
  readonly plan: PlanDescriptor;
  /** Tasks of the plan that may run at once at best, and its work (as a plan's: elements or multiply-adds). */
  readonly width: number;
  readonly work: number;
  /** Inner view of each input of the op (-1: unused). */
  readonly inputs: readonly number[];
  /** Where each output comes from: an inner view, or a value known when planning. */
  readonly outputs: ReadonlyArray<{ readonly view: number } | { readonly value: EncodedValue }>;
  /** Constants and host values the inner tasks read, written at each run. */
  readonly init: ReadonlyArray<{ readonly view: number; readonly value: EncodedValue }>;
}

const arrays = new WeakMap<ArrayBufferLike, Map<Dtype, TypedArray>>();

/** A typed array of `dtype` over all of `buffer` (one per buffer and dtype). */
export function arrayOf(buffer: ArrayBufferLike, dtype: Dtype): TypedArray {
  let byDtype = arrays.get(buffer);
  if (!byDtype) arrays.set(buffer, (byDtype = new Map()));
  let a = byDtype.get(dtype);
  if (!a) byDtype.set(dtype, (a = new STORAGE[dtype](buffer as ArrayBuffer)));
  return a;
}

/** The inner plan's views, inside the scratch memory the outer plan gave the task. */
export function innerViews(plan: PlanDescriptor, scratch: TensorView): TensorView[] {
  const base = scratch.offset;
  const buffer = scratch.data.buffer;
  return plan.views.map((v) => ({
    data: arrayOf(buffer, v.dtype),
    offset: (base + v.offset) / bytesPerElement(v.dtype),
    shape: v.shape,
    stride: v.stride,
  }));
}

/**
 * Before a run of an inner plan: its constants written and its inputs copied into `views`, but
 * for those in `kept` (inputs whose values are there from an earlier run: see untouchedInputs).
 */
export function writeInnerInputs(params: InnerPlanParams, views: readonly TensorView[], inputs: readonly TensorView[], kept?: ReadonlySet<number>): void {
  for (const { view, value } of params.init) decodeInto(value, views[view]!);
  params.inputs.forEach((view, i) => {
    if (view >= 0 && !kept?.has(i)) copyView(inputs[i]!, views[view]!);
  });
}

/** The inputs of an inner plan that no task overwrites: their copies stay valid from run to run. */
export function untouchedInputs(params: InnerPlanParams): Set<number> {
  return new Set(params.plan.relocatable.map((r) => r.input));
}

/** An inner plan's tasks, in order, on this thread (its inputs written already; outputs stay in `views`). */
export function runInnerTasks(params: InnerPlanParams, views: readonly TensorView[]): void {
  const { plan } = params;
  for (let t = 0; t < plan.tasks.length; t++) runPlanTask(plan, t, views, getKernel(plan.calls[plan.tasks[t]!.call]!.kernel));
}

/** One run of an inner plan: constants written, inputs copied in, tasks in order (outputs stay in `views`). */
export function runInnerPlan(params: InnerPlanParams, views: readonly TensorView[], inputs: readonly TensorView[]): void {
  writeInnerInputs(params, views, inputs);
  runInnerTasks(params, views);
}

/** Copies output j of an inner plan's run into `dst`. */
export function copyInnerOutput(params: InnerPlanParams, views: readonly TensorView[], j: number, dst: TensorView): void {
  const o = params.outputs[j]!;
  if ('view' in o) copyView(views[o.view]!, dst);
  else decodeInto(o.value, dst);
}

registerKernel('innerPlan', (inputs, outputs, raw: KernelParams) => {
  const params = raw as unknown as InnerPlanParams;
  const views = innerViews(params.plan, outputs[outputs.length - 1]!);
  runInnerPlan(params, views, inputs);
  params.outputs.forEach((_, j) => copyInnerOutput(params, views, j, outputs[j]!));
});
