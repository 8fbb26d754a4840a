// PushOutNonSeqScan and PushOutSeqScan (Theano's scan rewrites): work of the step that is the
// same at every step, or element-wise over rows of the sequences only, leaves the loop. The first
// computes once, before the loop, what depends only on non-sequences and constants; the second
// computes element-wise work and products with non-sequences on the whole sequences at once. What
// the step still reads of the moved work becomes a new non-sequence, or a new sequence; a loop
// without recurrences whose outputs all moved out is gone (its outputs are the work outside).
import type { FunctionGraph } from '../../../graph/fgraph.js';
import { nodeRewriter } from '../../../graph/rewriting/rewriter.js';
import type { Variable } from '../../../graph/variable.js';
import { TensorType } from '../../core/type.js';
import type { TensorVariable } from '../../core/variable.js';
import { rebuildScan, scanParts, type NonSeqPart, type ScanParts, type SeqPart } from '../../inner/scan-parts.js';
import { ScanOp } from '../../inner/scan-op.js';
import { alloc } from '../../shape/alloc.js';
import { shapeOf } from '../../shape/shape.js';
import { asTypeOf } from '../like.js';
import { fits, liftOverSteps, moveOut, stepRows, stepsFit, type Lift, type Outside } from './stacks.js';

/**
 * The moved variables the step still reads (inputs of nodes that stayed, and inner outputs),
 * except those computed from constants only, which stay.
 */
function stillRead(op: ScanOp, moved: ReadonlyMap<Variable, Outside>, start: ReadonlyMap<Variable, Outside>): Variable[] {
  const read = new Set<Variable>();
  const wanted = (v: Variable): boolean => moved.has(v) && !start.has(v) && !moved.get(v)!.constant;
  for (const node of op.inner.toposort()) {
    if (node.outputs.some((o) => moved.has(o))) continue;
    for (const v of node.inputs) if (wanted(v)) read.add(v);
  }
  for (const v of op.inner.outputs) if (wanted(v)) read.add(v);
  return [...read];
}

/** A fresh inner input for moved variable `y` (the step reads it there instead). */
const innerFor = (y: Variable): TensorVariable => y.type.makeVariable(y.name) as TensorVariable;

/** Computations of the step that depend only on non-sequences and constants leave the loop. */
export const pushOutNonSeqScan = nodeRewriter('PushOutNonSeqScan', [ScanOp], (node) => {
  const op = node.op as ScanOp;
  const parts = scanParts(node);
  const start = new Map<Variable, Outside>(parts.nonSeqs.map((m) => [m.inner, { outer: m.outer, stacked: false }]));
  const lift: Lift = (nd, ins) => nd.op.makeNode(...ins.map((i) => i.outer)).outputs.map((o) => ({ outer: o as TensorVariable, stacked: false }));
  const moved = moveOut(op, start, lift);
  const added: NonSeqPart[] = [];
  const substitutions: Array<[Variable, Variable]> = [];
  for (const y of stillRead(op, moved, start)) {
    const { outer } = moved.get(y)!;
    if (!fits(y.type as TensorType, outer)) continue;
    const inner = innerFor(y);
    added.push({ outer, inner });
    substitutions.push([y, inner]);
  }
  if (added.length === 0) return false;
  return rebuildScan({ ...parts, nonSeqs: [...parts.nonSeqs, ...added] }, substitutions);
});

/**
 * A loop with no recurrence (and no until, no kept rows) all of whose outputs moved out: each
 * stacked output is the work outside (a value the same at every step repeated nSteps times), so
 * the loop is gone. Zero steps give the outside work on zero rows: empty outputs of the row's shape.
 */
function withoutLoop(parts: ScanParts, op: ScanOp, moved: ReadonlyMap<Variable, Outside>, fg: FunctionGraph): Map<Variable, Variable> | undefined {
  if (parts.recs.length > 0 || parts.condition || op.spec.keep) return undefined;
  // The loop checks nSteps against the sequences when it runs; work on cuts of them would not.
  if (!stepsFit(parts)) return undefined;
  const replaced = new Map<Variable, Variable>();
  for (const z of parts.nitsots) {
    const o = moved.get(z.step) ?? (z.step.owner ? undefined : { outer: z.step, stacked: false });
    if (!o) return undefined;
    const whole = o.stacked ? o.outer : alloc(o.outer, parts.nSteps, ...shapeOf(o.outer));
    for (const old of z.stacked) {
      const r = asTypeOf(whole, old, fg);
      if (!r) return undefined;
      replaced.set(old, r);
    }
  }
  return replaced;
}

/** Element-wise work and products with non-sequences on sequence rows are done once, on the whole sequences. */
export const pushOutSeqScan = nodeRewriter('PushOutSeqScan', [ScanOp], (node, fg) => {
  const op = node.op as ScanOp;
  const parts = scanParts(node);
  const start = stepRows(parts);
  const moved = moveOut(op, start, liftOverSteps);
  const whole = withoutLoop(parts, op, moved, fg);
  if (whole) return whole;
  const added: SeqPart[] = [];
  const substitutions: Array<[Variable, Variable]> = [];
  for (const y of stillRead(op, moved, start)) {
    const { outer, stacked } = moved.get(y)!;
    const row = y.type as TensorType;
    if (!stacked || !fits(new TensorType(row.dtype, [outer.type.shape[0] ?? null, ...row.shape]), outer)) continue;
    const inner = innerFor(y);
    added.push({ outer, inner });
    substitutions.push([y, inner]);
  }
  if (added.length === 0) return false;
  return rebuildScan({ ...parts, seqs: [...parts.seqs, ...added] }, substitutions);
});
