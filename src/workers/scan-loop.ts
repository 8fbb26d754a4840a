// The 'scanLoop' kernel: a whole Scan as one task. The step graph's plan (made once for the
// step's shapes) runs nSteps times in the task's scratch memory; each step copies in its
// sequence rows, past states and non-sequences, and copies its results into row t of the
// stacked outputs, where later steps read their past states (an output that keeps only its last
// rows is a ring of them: kernels/scan-rows.ts). A step with work enough for several members
// (nested-team.ts's teamHelps) runs in a nested region that idle members help with (nested-team.ts).
import { registerKernel, type KernelParams } from '../kernels/registry.js';
import { copyView } from '../kernels/copy.js';
import { keptRows, stepRow } from '../kernels/scan-rows.js';
import { rowOf, type TensorView } from '../kernels/view.js';
import { copyInnerOutput, innerViews, runInnerTasks, untouchedInputs, writeInnerInputs, type InnerPlanParams } from './inner-plan.js';
import { nestedTeam, registerNestedPlan, teamHelps, type NestedTeam } from './nested-team.js';

export interface ScanLoopParams {
  /** The step graph's plan. */
  readonly step: InnerPlanParams;
  readonly nSeqs: number;
  /** Per recurrent output, its taps; [-1] means the initial state is the state itself. */
  readonly taps: ReadonlyArray<readonly number[]>;
  readonly nNitsot: number;
  /** Recurrent outputs whose last state is one more output. */
  readonly finals: readonly number[];
  /** Per stacked output, the last rows it keeps (null: all); null when every output keeps all. */
  readonly keep: ReadonlyArray<number | null> | null;
}

registerNestedPlan('scanLoop', (params) => (params as unknown as ScanLoopParams).step.plan);

/**
 * Inputs: nSteps, sequences, initial states, non-sequences. Outputs: the stacked recurrent
 * outputs, the stacked others, the final states, then the scratch memory.
 */
registerKernel('scanLoop', (inputs, outputs, raw: KernelParams) => {
  const p = raw as unknown as ScanLoopParams;
  const scratch = outputs[outputs.length - 1]!;
  const views = innerViews(p.step.plan, scratch);
  const n = Number(inputs[0]!.data[inputs[0]!.offset]);
  const nRec = p.taps.length;
  const inits = inputs.slice(1 + p.nSeqs, 1 + p.nSeqs + nRec);
  const nonSeqs = inputs.slice(1 + p.nSeqs + nRec);
  const rowAt = (j: number, t: number): number => (p.keep ? stepRow(t, n, keptRows(n, p.keep[j] ?? null)) : t);
  const past = (k: number, t: number): TensorView => {
    if (t >= 0) return rowOf(outputs[k]!, rowAt(k, t));
    const taps = p.taps[k]!;
    return taps.length === 1 && taps[0] === -1 ? inits[k]! : rowOf(inits[k]!, -Math.min(...taps) + t);
  };
  const stepInputs: TensorView[] = [];
  const team: NestedTeam | undefined = n > 1 && teamHelps(p.step.width, p.step.work) ? nestedTeam(raw, p.step.plan, scratch) : undefined;
  // Non-sequences are the same at every step: copied in once, unless the step overwrites them.
  const firstNonSeq = p.nSeqs + p.taps.reduce((a, taps) => a + taps.length, 0);
  const untouched = untouchedInputs(p.step);
  const keptNonSeqs = new Set(nonSeqs.map((_, m) => firstNonSeq + m).filter((i) => untouched.has(i)));
  try {
    for (let t = 0; t < n; t++) {
      stepInputs.length = 0;
      for (let i = 0; i < p.nSeqs; i++) stepInputs.push(rowOf(inputs[1 + i]!, t));
      p.taps.forEach((taps, k) => taps.forEach((tap) => stepInputs.push(past(k, t + tap))));
      stepInputs.push(...nonSeqs);
      writeInnerInputs(p.step, views, stepInputs, t === 0 ? undefined : keptNonSeqs);
      if (team) team.run();
      else runInnerTasks(p.step, views);
      for (let j = 0; j < nRec + p.nNitsot; j++) copyInnerOutput(p.step, views, j, rowOf(outputs[j]!, rowAt(j, t)));
    }
  } finally {
    team?.end();
  }
  p.finals.forEach((k, f) => copyView(past(k, n - 1), outputs[nRec + p.nNitsot + f]!));
});
