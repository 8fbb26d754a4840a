// A Scan node taken apart by kind of variable (PyTensor's ScanArgs): sequences, recurrent outputs
// (sit-sot and mit-sot, the states of shared variables among them), outputs not fed back
// (nit-sot) and non-sequences, each with its outer and inner variables. Scan rewrites edit these
// lists (drop, merge, add parts) and rebuild a node from them with rebuildScan.
import type { Apply } from '../../graph/apply.js';
import { cloneReplace } from '../../graph/clone.js';
import { FunctionGraph } from '../../graph/fgraph.js';
import type { Variable } from '../../graph/variable.js';
import { ScanOp, type ScanSpec } from './scan-op.js';
import type { TensorVariable } from '../core/variable.js';

/** An input of the loop: its outer variable and the inner one the step reads. */
export interface InputPart {
  readonly outer: TensorVariable;
  readonly inner: TensorVariable;
}

/** A sequence (one per tap of the user's): the outer tensor iterated over, the inner row. */
export type SeqPart = InputPart;
/** A non-sequence: the outer value, the inner variable every step sees. */
export type NonSeqPart = InputPart;

/** A recurrent output (Theano's sit-sot for taps [-1], mit-sot otherwise). */
export interface RecurrentPart {
  /** The outer initial state (rows of past states for a mit-sot). */
  readonly init: TensorVariable;
  readonly taps: readonly number[];
  /** The inner inputs, one per tap. */
  readonly inner: readonly TensorVariable[];
  /** The inner output: the next state. */
  readonly step: TensorVariable;
  /** Outer stacked outputs of the old node(s) that this part's stacked output replaces. */
  readonly stacked: readonly TensorVariable[];
  /** Outer final-state outputs that this part's final state replaces (a final state exists when there is one). */
  readonly finals: readonly TensorVariable[];
  /** The last rows its stacked output keeps (null: all). */
  readonly keep: number | null;
}

/** An output that is not fed back (Theano's nit-sot). */
export interface NitsotPart {
  readonly step: TensorVariable;
  readonly stacked: readonly TensorVariable[];
  readonly keep: number | null;
}

export interface ScanParts {
  readonly nSteps: TensorVariable;
  readonly seqs: readonly SeqPart[];
  readonly recs: readonly RecurrentPart[];
  readonly nitsots: readonly NitsotPart[];
  readonly nonSeqs: readonly NonSeqPart[];
  /** The until condition (an inner output), when the loop has one. */
  readonly condition: TensorVariable | undefined;
  readonly truncateGradient: number;
  readonly name: string;
}

export function isScanNode(node: Apply): node is Apply & { op: ScanOp } {
  return node.op instanceof ScanOp;
}

/** The parts of a Scan node, over its op's inner graph and the node's outer variables. */
export function scanParts(node: Apply): ScanParts {
  const op = node.op as ScanOp;
  const { nSeqs, taps, nNitsot, finals } = op.spec;
  const ins = op.inner.inputs as TensorVariable[];
  const outerIns = node.inputs as TensorVariable[];
  const outs = node.outputs as TensorVariable[];
  const steps = op.stepOutputs;
  const nRec = taps.length;
  const firstNonSeq = 1 + nSeqs + nRec;
  return {
    nSteps: outerIns[0]!,
    seqs: ins.slice(0, nSeqs).map((inner, i) => ({ outer: outerIns[1 + i]!, inner })),
    recs: taps.map((t, k) => {
      const f = finals.indexOf(k);
      return {
        init: outerIns[1 + nSeqs + k]!,
        taps: t,
        inner: ins.slice(op.tapInput(k), op.tapInput(k) + t.length),
        step: steps[k]!,
        stacked: [outs[k]!],
        finals: f < 0 ? [] : [outs[nRec + nNitsot + f]!],
        keep: op.keepOf(k),
      };
    }),
    nitsots: steps.slice(nRec).map((step, j) => ({ step, stacked: [outs[nRec + j]!], keep: op.keepOf(nRec + j) })),
    nonSeqs: ins.slice(op.firstNonSeq).map((inner, m) => ({ outer: outerIns[firstNonSeq + m]!, inner })),
    condition: op.condition,
    truncateGradient: op.spec.truncateGradient,
    name: op.name,
  };
}

/**
 * A new Scan node from `parts`; `substitutions` replace inner variables in the step outputs
 * (an input merged into another, a constant for a dropped input). Returns the replacement of
 * every old outer output the parts name (stacked and final outputs).
 */
export function rebuildScan(parts: ScanParts, substitutions: Iterable<readonly [Variable, Variable]> = []): Map<Variable, Variable> {
  const { seqs, recs, nitsots, nonSeqs, condition } = parts;
  const innerOuts = cloneReplace([...recs.map((r) => r.step), ...nitsots.map((z) => z.step), ...(condition ? [condition] : [])], substitutions);
  const innerIns = [...seqs.map((s) => s.inner), ...recs.flatMap((r) => r.inner), ...nonSeqs.map((m) => m.inner)];
  const keep = [...recs, ...nitsots].map((p) => p.keep);
  const withFinal = recs.flatMap((r, k) => (r.finals.length > 0 ? [k] : []));
  const spec: ScanSpec = {
    nSeqs: seqs.length,
    taps: recs.map((r) => r.taps),
    nNitsot: nitsots.length,
    finals: withFinal,
    nNonSeqs: nonSeqs.length,
    truncateGradient: parts.truncateGradient,
    ...(condition ? { until: true } : {}),
    ...(keep.some((k) => k !== null) ? { keep } : {}),
  };
  const op = new ScanOp(new FunctionGraph(innerIns, innerOuts), spec, parts.name);
  const node = op.makeNode(parts.nSteps, ...seqs.map((s) => s.outer), ...recs.map((r) => r.init), ...nonSeqs.map((m) => m.outer));
  const outs = node.outputs as TensorVariable[];
  const replaced = new Map<Variable, Variable>();
  const stackedParts = [...recs, ...nitsots];
  stackedParts.forEach((p, j) => p.stacked.forEach((old) => replaced.set(old, outs[j]!)));
  withFinal.forEach((k, f) => recs[k]!.finals.forEach((old) => replaced.set(old, outs[stackedParts.length + f]!)));
  return replaced;
}
