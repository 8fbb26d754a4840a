// The 'scanLoop' kernel: a whole Scan as one task. The step graph's plan (made once for the
// step's shapes) runs nSteps times in the task's scratch memory; each step copies in its
// sequence rows, past states and non-sequences, and copies its results into row t of the
// stacked outputs, where later steps read their past states (an output that keeps only its last
// rows is a ring of them: kernels/scan-rows.ts). In place (ScanInplaceOptimizer), the step's
// plan reads those rows and writes its results where they are, with no copy, wherever layouts
// allow. A step with work enough (nested-team.ts's teamHelps) runs in a nested region that idle
// members help with; they find each step's views as the host does (stepViews).
import { registerKernel, type KernelParams } from '../kernels/registry.js';
import { copyView } from '../kernels/copy.js';
import { keptRows, stepRow } from '../kernels/scan-rows.js';
import { isContiguous, rowOf, type TensorView } from '../kernels/view.js';
import { moveBuffer } from './bound-plan.js';
import { arrayOf, copyInnerOutput, innerViews, runInnerTasks, untouchedInputs, writeInnerInputs, type InnerPlanParams } from './inner-plan.js';
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
  /** The step reads its rows and writes its results in place where layouts allow. */
  readonly inplace: boolean;
}

/** A step's views: the step plan's, some moved onto rows of the loop's inputs and outputs. */
interface StepViews {
  readonly views: readonly TensorView[];
  /** Step inputs read where they are (not copied in). */
  readonly readInPlace: ReadonlySet<number>;
  /** Stacked outputs whose step result is written into its row directly (not copied out). */
  readonly writtenInPlace: ReadonlySet<number>;
}

/** The loop's parts as the kernel sees them: its steps, the rows each reads and writes. */
export class Loop {
  readonly n: number;
  readonly nRec: number;

  constructor(
    readonly p: ScanLoopParams,
    readonly inputs: readonly TensorView[],
    readonly outputs: readonly TensorView[],
  ) {
    this.n = Number(inputs[0]!.data[inputs[0]!.offset]);
    this.nRec = p.taps.length;
  }

  /** Step t's row of stacked output j: t itself, or its place in the ring of the rows kept. */
  rowAt(j: number, t: number): number {
    const keep = this.p.keep;
    return keep ? stepRow(t, this.n, keptRows(this.n, keep[j] ?? null)) : t;
  }

  /** Recurrent output k's state at step t (t < 0: a row of its initial state). */
  past(k: number, t: number): TensorView {
    if (t >= 0) return rowOf(this.outputs[k]!, this.rowAt(k, t));
    const init = this.inputs[1 + this.p.nSeqs + k]!;
    const taps = this.p.taps[k]!;
    return taps.length === 1 && taps[0] === -1 ? init : rowOf(init, -Math.min(...taps) + t);
  }

  /** Step t's inputs: the sequences' rows, the past states of its taps, the non-sequences. */
  stepInputs(t: number): TensorView[] {
    const { p, inputs } = this;
    const out: TensorView[] = [];
    for (let i = 0; i < p.nSeqs; i++) out.push(rowOf(inputs[1 + i]!, t));
    p.taps.forEach((taps, k) => taps.forEach((tap) => out.push(this.past(k, t + tap))));
    out.push(...inputs.slice(1 + p.nSeqs + this.nRec));
    return out;
  }

  /** The first step input that is a non-sequence. */
  get firstNonSeq(): number {
    return this.p.nSeqs + this.p.taps.reduce((a, taps) => a + taps.length, 0);
  }

  /**
   * Step t's views over `base` (the step plan's own; `sources`: step t's inputs, when the caller
   * has them): in place, an input the step does not overwrite and whose layout is its view's is
   * read where it is, and a result that is the whole of a contiguous buffer is written into its
   * row, unless that row is also read this step.
   */
  stepViews(base: readonly TensorView[], t: number, sources?: readonly TensorView[]): StepViews {
    const none = new Set<number>();
    if (!this.p.inplace) return { views: base, readInPlace: none, writtenInPlace: none };
    const { plan } = this.p.step;
    const views = base.slice();
    const inputs = sources ?? this.stepInputs(t);
    const readInPlace = new Set<number>();
    const rowsRead: TensorView[] = [];
    for (const moved of plan.relocatable) {
      const src = inputs[moved.input]!;
      const own = base[this.p.step.inputs[moved.input]!]!;
      if (!sameLayout(src, own)) continue;
      moveBuffer(views, plan, moved, src.offset * src.data.BYTES_PER_ELEMENT, (_, dtype) => arrayOf(src.data.buffer, dtype));
      readInPlace.add(moved.input);
      rowsRead.push(src);
    }
    const writtenInPlace = new Set<number>();
    for (const moved of plan.arenaMovableOutputs) {
      const j = moved.output;
      if (j >= this.nRec + this.p.nNitsot) continue;
      const row = rowOf(this.outputs[j]!, this.rowAt(j, t));
      const own = base[(this.p.step.outputs[j] as { readonly view: number }).view]!;
      if (!sameLayout(row, own) || !isContiguous(row) || rowsRead.some((r) => overlaps(r, row))) continue;
      moveBuffer(views, plan, moved, row.offset * row.data.BYTES_PER_ELEMENT, (_, dtype) => arrayOf(row.data.buffer, dtype));
      writtenInPlace.add(j);
    }
    return { views, readInPlace, writtenInPlace };
  }
}

const sameLayout = (a: TensorView, b: TensorView): boolean =>
  a.data.buffer === b.data.buffer &&
  a.data.BYTES_PER_ELEMENT === b.data.BYTES_PER_ELEMENT &&
  a.data.constructor === b.data.constructor &&
  a.data.byteOffset === 0 &&
  a.shape.length === b.shape.length &&
  a.shape.every((d, i) => d === b.shape[i] && (d <= 1 || a.stride[i] === b.stride[i]));

/** Whether two views of the same buffer and dtype may share an element (their bounding ranges meet). */
function overlaps(a: TensorView, b: TensorView): boolean {
  if (a.data.buffer !== b.data.buffer) return false;
  const range = (v: TensorView): [number, number] => {
    let lo = v.offset;
    let hi = v.offset;
    v.shape.forEach((d, i) => (v.stride[i]! < 0 ? (lo += (d - 1) * v.stride[i]!) : (hi += (d - 1) * v.stride[i]!)));
    return [lo * v.data.BYTES_PER_ELEMENT, (hi + 1) * v.data.BYTES_PER_ELEMENT];
  };
  const [a0, a1] = range(a);
  const [b0, b1] = range(b);
  return a0 < b1 && b0 < a1;
}

registerNestedPlan('scanLoop', {
  plan: (params) => (params as unknown as ScanLoopParams).step.plan,
  views: (params, inputs, outputs, base, step) => new Loop(params as unknown as ScanLoopParams, inputs, outputs).stepViews(base, step).views,
});

/**
 * Inputs: nSteps, sequences, initial states, non-sequences. Outputs: the stacked recurrent
 * outputs, the stacked others, the final states, then the scratch memory.
 */
registerKernel('scanLoop', (inputs, outputs, raw: KernelParams) => {
  const p = raw as unknown as ScanLoopParams;
  const loop = new Loop(p, inputs, outputs);
  const { n, nRec } = loop;
  const scratch = outputs[outputs.length - 1]!;
  const base = innerViews(p.step.plan, scratch);
  const team: NestedTeam | undefined = n > 1 && teamHelps(p.step.width, p.step.work) ? nestedTeam(raw, p.step.plan, scratch) : undefined;
  // Non-sequences are the same at every step: copied in once, unless the step overwrites them.
  const untouched = untouchedInputs(p.step);
  const nonSeqs = p.step.inputs.map((_, i) => i).filter((i) => i >= loop.firstNonSeq && untouched.has(i));
  try {
    for (let t = 0; t < n; t++) {
      const sources = loop.stepInputs(t);
      const { views, readInPlace, writtenInPlace } = loop.stepViews(base, t, sources);
      const kept = t === 0 ? readInPlace : new Set([...readInPlace, ...nonSeqs]);
      writeInnerInputs(p.step, views, sources, kept);
      if (team) team.run(t, views);
      else runInnerTasks(p.step, views);
      for (let j = 0; j < nRec + p.nNitsot; j++) if (!writtenInPlace.has(j)) copyInnerOutput(p.step, views, j, rowOf(outputs[j]!, loop.rowAt(j, t)));
    }
  } finally {
    team?.end();
  }
  p.finals.forEach((k, f) => copyView(loop.past(k, n - 1), outputs[nRec + p.nNitsot + f]!));
});
