// An expanded kernel call: one node computed as a sequence of kernel calls (steps) over parts of
// its inputs, outputs and scratch arrays, as a blocked factorization is: a panel, then a trailing
// update cut into row chunks. Planners make each step a call of the plan (its chunks tasks, the
// order between steps edges found from the bytes they touch); `runSteps` runs the same steps in
// order on one thread, so a node computes the same bits however it is run.
import type { Dtype } from './dtype.js';
import { STORAGE } from './dtype.js';
import { getKernel, type KernelParams } from './registry.js';
import { contiguousStrides, sizeOf, type TensorView } from './view.js';

/** An array of a step: the node's input or output `index` (whole), or a part of scratch array `index`. */
export type StepView =
  | { readonly kind: 'input'; readonly index: number }
  | { readonly kind: 'output'; readonly index: number }
  | { readonly kind: 'scratch'; readonly index: number; readonly offset: number; readonly shape: readonly number[]; readonly stride: readonly number[] };

export interface ExpansionStep {
  readonly name: string;
  readonly params: KernelParams;
  readonly inputs: readonly StepView[];
  readonly outputs: readonly StepView[];
  /** Cut into chunks of output 0's rows (each a task), or one task. */
  readonly chunking: 'rows' | 'none';
  /** Multiply-adds (or elements touched) of the whole step, for the planner's cuts. */
  readonly work: number;
  /** What the step does, for timelines ('panel 3'). */
  readonly label: string;
  /** A product (gemm): planners cut it into the larger tasks of products. */
  readonly product?: boolean;
}

export interface Expansion {
  /** Arrays only the steps use (contiguous, of these dtypes and shapes). */
  readonly scratch: readonly { readonly dtype: Dtype; readonly shape: readonly number[] }[];
  readonly steps: readonly ExpansionStep[];
}

/** A part of a contiguous scratch array of `shape`: `offset` elements in, with its own shape and strides. */
export function scratchPart(index: number, offset: number, shape: readonly number[], stride: readonly number[]): StepView {
  return { kind: 'scratch', index, offset, shape, stride };
}

/** Runs the steps in order on this thread, over scratch arrays of its own. */
export function runSteps(expansion: Expansion, inputs: readonly TensorView[], outputs: readonly TensorView[]): void {
  const scratch = expansion.scratch.map((s) => ({ data: new STORAGE[s.dtype](sizeOf(s.shape)), offset: 0, shape: s.shape, stride: contiguousStrides(s.shape) }) as TensorView);
  const resolve = (v: StepView): TensorView => {
    if (v.kind === 'input') return inputs[v.index]!;
    if (v.kind === 'output') return outputs[v.index]!;
    return { data: scratch[v.index]!.data, offset: v.offset, shape: v.shape, stride: v.stride };
  };
  for (const step of expansion.steps) getKernel(step.name)(step.inputs.map(resolve), step.outputs.map(resolve), step.params);
}
