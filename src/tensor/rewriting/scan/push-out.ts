// PushOutNonSeqScan and PushOutSeqScan (Theano's scan rewrites): work of the step that is the
// same at every step, or element-wise over rows of the sequences only, leaves the loop. The first
// computes once, before the loop, what depends only on non-sequences and constants; the second
// computes element-wise work on sequence rows on the whole sequences at once. What the step still
// reads of the moved work becomes a new non-sequence, or a new sequence.
import type { Apply } from '../../../graph/apply.js';
import { nodeRewriter } from '../../../graph/rewriting/rewriter.js';
import { isConstant, type Variable } from '../../../graph/variable.js';
import { slice } from '../../core/slice.js';
import { TensorType } from '../../core/type.js';
import type { TensorVariable } from '../../core/variable.js';
import { Elemwise } from '../../elemwise/elemwise.js';
import { rebuildScan, scanParts, type NonSeqPart, type ScanParts, type SeqPart } from '../../inner/scan-parts.js';
import { ScanOp } from '../../inner/scan-op.js';
import { DimShuffle, dimshuffle } from '../../shape/dimshuffle.js';

/** An inner variable's counterpart outside: the same value (invariant), or its rows over the steps (stacked). */
interface Outside {
  readonly outer: TensorVariable;
  readonly stacked: boolean;
  /** Computed from constants only: the step may keep computing it (constant folding does it once). */
  readonly constant?: boolean;
}

/** Builds a node's outer counterpart from its inputs' (constants come as invariant), or refuses (undefined). */
type Lift = (node: Apply, inputs: readonly Outside[]) => readonly Outside[] | undefined;

/** A node that may run anywhere: it overwrites nothing. */
const movable = (node: Apply): boolean => Object.keys(node.op.destroyMap ?? {}).length === 0;

/** The same node outside, over constants and what was computed from them (a constant `3` broadcast, say). */
const liftConstant: Lift = (nd, ins) => nd.op.makeNode(...ins.map((i) => i.outer)).outputs.map((o) => ({ outer: o as TensorVariable, stacked: false, constant: true }));

/**
 * Walks the step graph inputs first from `start` (inner inputs and their outer counterparts) and
 * moves out every node whose inputs are all outside (or constants) and that `lift` accepts.
 */
function moveOut(op: ScanOp, start: ReadonlyMap<Variable, Outside>, lift: Lift): Map<Variable, Outside> {
  const outside = new Map(start);
  for (const node of op.inner.toposort()) {
    if (!movable(node) || !node.inputs.every((v) => outside.has(v) || isConstant(v))) continue;
    const ins = node.inputs.map((v): Outside => outside.get(v) ?? { outer: v as TensorVariable, stacked: false, constant: true });
    const lifted = ins.every((i) => i.constant) ? liftConstant(node, ins) : lift(node, ins);
    lifted?.forEach((o, i) => outside.set(node.outputs[i]!, o));
  }
  return outside;
}

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

/** Can `v` stand where inputs of type `want` are expected? */
const fits = (want: TensorType, v: TensorVariable): boolean => want.equals(v.type) || want.isSupertypeOf(v.type);

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

/** An element-wise node or a DimShuffle over stacked rows, as the same op over the whole sequences. */
const liftOverSteps: Lift = (nd, ins) => {
  if (!ins.some((i) => i.stacked)) return undefined;
  if (nd.op instanceof Elemwise) {
    // Invariant inputs have the rows' number of axes: Elemwise broadcasts them over the steps.
    return [{ outer: nd.op.call(...ins.map((i) => i.outer)) as TensorVariable, stacked: true }];
  }
  if (nd.op instanceof DimShuffle) {
    const order = nd.op.newOrder.map((a) => (a === 'x' ? a : a + 1));
    return [{ outer: dimshuffle(ins[0]!.outer, [0, ...order]), stacked: true }];
  }
  return undefined;
};

/** The sequences' rows that the loop reads: the first nSteps (a sequence may be longer). */
function stepRows(parts: ScanParts): Map<Variable, Outside> {
  const n = parts.nSteps;
  return new Map<Variable, Outside>([
    ...parts.seqs.map((s): [Variable, Outside] => [s.inner, { outer: s.outer.get(slice(0, n)), stacked: true }]),
    ...parts.nonSeqs.map((m): [Variable, Outside] => [m.inner, { outer: m.outer, stacked: false }]),
  ]);
}

/** Element-wise work on sequence rows (with non-sequences and constants) is done once, on the whole sequences. */
export const pushOutSeqScan = nodeRewriter('PushOutSeqScan', [ScanOp], (node) => {
  const op = node.op as ScanOp;
  const parts = scanParts(node);
  const start = stepRows(parts);
  const moved = moveOut(op, start, liftOverSteps);
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
