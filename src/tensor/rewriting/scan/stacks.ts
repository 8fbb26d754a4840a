// What the push-out rewrites know of a step's values outside the loop: a value that is the same at
// every step (its one outer value), or one that changes (its stack over the steps: a sequence's
// rows, a stacked output, work on them moved out), and how the step's own values become new
// stacked outputs (nit-sots) when work outside needs their stacks.
import type { Apply } from '../../../graph/apply.js';
import { cloneReplace } from '../../../graph/clone.js';
import { ancestors } from '../../../graph/traversal.js';
import { isConstant, type Variable } from '../../../graph/variable.js';
import { slice } from '../../core/slice.js';
import { TensorType } from '../../core/type.js';
import type { TensorVariable } from '../../core/variable.js';
import { Elemwise } from '../../elemwise/elemwise.js';
import { rebuildScan, type NitsotPart, type ScanParts } from '../../inner/scan-parts.js';
import type { ScanOp } from '../../inner/scan-op.js';
import { Dot } from '../../linalg/linalg.js';
import { DimShuffle, dimshuffle } from '../../shape/dimshuffle.js';
import { constantScalar, ShapeI } from '../../shape/shape.js';
import { Subtensor } from '../../shape/subtensor.js';
import * as S from '../../scalar/catalog.js';
import { ownerIs } from '../match.js';
import { dotOverSteps } from './stacked-dot.js';

/** An inner variable's counterpart outside: the same value (invariant), or its rows over the steps (stacked). */
export interface Outside {
  readonly outer: TensorVariable;
  readonly stacked: boolean;
  /** Computed from constants only: the step may keep computing it (constant folding does it once). */
  readonly constant?: boolean;
}

/** Builds a node's outer counterpart from its inputs' (constants come as invariant), or refuses (undefined). */
export type Lift = (node: Apply, inputs: readonly Outside[]) => readonly Outside[] | undefined;

/** A node that may run anywhere: it overwrites nothing. */
const movable = (node: Apply): boolean => Object.keys(node.op.destroyMap ?? {}).length === 0;

/** The same node outside, over constants and what was computed from them (a constant `3` broadcast, say). */
const liftConstant: Lift = (nd, ins) => nd.op.makeNode(...ins.map((i) => i.outer)).outputs.map((o) => ({ outer: o as TensorVariable, stacked: false, constant: true }));

/**
 * Walks the step graph inputs first from `start` (inner inputs and their outer counterparts) and
 * moves out every node whose inputs are all outside (or constants) and that `lift` accepts.
 */
export function moveOut(op: ScanOp, start: ReadonlyMap<Variable, Outside>, lift: Lift): Map<Variable, Outside> {
  const outside = new Map(start);
  for (const node of op.inner.toposort()) {
    if (node.outputs.some((o) => outside.has(o))) continue;
    if (!movable(node) || !node.inputs.every((v) => outside.has(v) || isConstant(v))) continue;
    const ins = node.inputs.map((v): Outside => outside.get(v) ?? { outer: v as TensorVariable, stacked: false, constant: true });
    const lifted = ins.every((i) => i.constant) ? liftConstant(node, ins) : lift(node, ins);
    lifted?.forEach((o, i) => outside.set(node.outputs[i]!, o));
  }
  return outside;
}

/**
 * An element-wise node, a DimShuffle, or a product of a row with a value the same at every step,
 * as the same work over the whole stacks (one product for the product: stacked-dot.ts).
 */
export const liftOverSteps: Lift = (nd, ins) => {
  if (!ins.some((i) => i.stacked)) return undefined;
  if (nd.op instanceof Elemwise) {
    // Invariant inputs have the rows' number of axes: Elemwise broadcasts them over the steps.
    return [{ outer: nd.op.call(...ins.map((i) => i.outer)) as TensorVariable, stacked: true }];
  }
  if (nd.op instanceof DimShuffle) {
    const order = nd.op.newOrder.map((a) => (a === 'x' ? a : a + 1));
    return [{ outer: dimshuffle(ins[0]!.outer, [0, ...order]), stacked: true }];
  }
  if (nd.op instanceof Dot && ins.length === 2 && ins[0]!.stacked !== ins[1]!.stacked) {
    // Two rows that both change would be a batch of small products: they stay.
    const rowFirst = ins[0]!.stacked;
    const [rows, fixed] = rowFirst ? [ins[0]!, ins[1]!] : [ins[1]!, ins[0]!];
    return [{ outer: dotOverSteps(rows.outer, fixed.outer, rowFirst), stacked: true }];
  }
  return undefined;
};

/** The sequences' rows that the loop reads (the first nSteps: a sequence may be longer), and the non-sequences. */
export function stepRows(parts: ScanParts): Map<Variable, Outside> {
  const n = parts.nSteps;
  return new Map<Variable, Outside>([
    ...parts.seqs.map((s): [Variable, Outside] => [s.inner, { outer: s.outer.get(slice(0, n)), stacked: true }]),
    ...parts.nonSeqs.map((m): [Variable, Outside] => [m.inner, { outer: m.outer, stacked: false }]),
  ]);
}

/** The variables whose first axis is at least `n` long by how `n` is computed: the shortest of several lengths (scan's default nSteps). */
function boundedBy(n: Variable): Set<Variable> {
  const node = n.owner;
  if (node?.op instanceof ShapeI && node.op.i === 0) return new Set([node.inputs[0]!]);
  if (node && ownerIs(n, S.minimum)) return new Set(node.inputs.flatMap((v) => [...boundedBy(v)]));
  return new Set();
}

/** Is `v` the cut [0:n] of a sequence with at least n rows? */
const isFullCut = (n: TensorVariable, v: Variable): boolean => {
  const cut = v.owner;
  return cut?.op instanceof Subtensor && cut.inputs[2] === n && constantScalar(cut.inputs[1]!) === 0 && longEnough(n, cut.inputs[0] as TensorVariable);
};

/**
 * Has `seq` at least `n` rows whatever the inputs? When its length is one of those n is the
 * least of, or when it is work on the stacked rows of such a sequence (what PushOutSeqScan adds
 * as sequences: its length is the cut's, n); a static length does too.
 */
function longEnough(n: TensorVariable, seq: TensorVariable): boolean {
  const steps = constantScalar(n);
  if (steps !== undefined && (seq.type.shape[0] ?? -1) >= steps) return true;
  if (boundedBy(n).has(seq)) return true;
  return ancestors([seq]).some((v) => isFullCut(n, v));
}

/**
 * Has every sequence nSteps rows whatever the inputs? The loop checks that when it runs; a rewrite
 * that leaves no loop may drop the check only then.
 */
export function stepsFit(parts: ScanParts): boolean {
  return parts.seqs.every((s) => longEnough(parts.nSteps, s.outer));
}

/** Can `v` stand where inputs of type `want` are expected? */
export const fits = (want: TensorType, v: TensorVariable): boolean => want.equals(v.type) || want.isSupertypeOf(v.type);

/**
 * The stacks of a loop's step values, for rewrites that move work on them after the loop: the
 * sequences' rows and element-wise work on them (PushOutSeqScan's), the stacked outputs (a
 * recurrent output's stack holds its new states, a nit-sot's its rows), and step values that
 * become new nit-sots when asked for. Outer work is built over placeholders of the new outputs;
 * `rebuild` makes the new node and puts its outputs in.
 */
export class StepStacks {
  readonly #known: Map<Variable, Outside>;
  readonly #added: NitsotPart[] = [];
  /** The cuts [0:nSteps] of the sequences that stacks of their rows are built on. */
  readonly #cuts: ReadonlySet<Variable>;

  /** @param skip step outputs whose stacks must not be used (the output being moved out itself) */
  constructor(
    op: ScanOp,
    readonly parts: ScanParts,
    skip: ReadonlySet<Variable> = new Set(),
  ) {
    const rows = stepRows(parts);
    this.#cuts = new Set(parts.seqs.map((q) => rows.get(q.inner)!.outer));
    this.#known = moveOut(op, rows, liftOverSteps);
    for (const p of [...parts.recs, ...parts.nitsots]) {
      if (!skip.has(p.step) && !this.#known.has(p.step) && p.stacked.length > 0) this.#known.set(p.step, { outer: p.stacked[0]!, stacked: true });
    }
  }

  /** `v` outside, if it is known there (invariant or stacked). */
  outside(v: Variable): Outside | undefined {
    const t = v as TensorVariable;
    return this.#known.get(v) ?? (isConstant(t) ? { outer: t, stacked: false, constant: true } : undefined);
  }

  /**
   * The stack of `v` over the steps; with `add`, a value the step computes becomes a new nit-sot
   * (not an inner input: a past state has no stack of its own, and a value the same at every
   * step has none either).
   */
  stack(v: Variable, add: boolean): TensorVariable | undefined {
    const known = this.outside(v);
    if (known) return known.stacked ? known.outer : undefined;
    if (!add || !v.owner) return undefined;
    const row = v.type as TensorType;
    const placeholder = new TensorType(row.dtype, [constantScalar(this.parts.nSteps) ?? null, ...row.shape]).makeVariable() as TensorVariable;
    this.#added.push({ step: v as TensorVariable, stacked: [placeholder], keep: null });
    this.#known.set(v, { outer: placeholder, stacked: true });
    return placeholder;
  }

  /**
   * The node rebuilt from `parts` (the constructor's, edited) with the new nit-sots, and the
   * replacements: the old outputs by the new node's, then `outer` (old outer variable -> work
   * built over stacks) with the placeholders and old outputs it reads put in.
   */
  rebuild(parts: ScanParts, outer: ReadonlyMap<Variable, TensorVariable>): Map<Variable, Variable> | undefined {
    // The loop checks that the sequences have nSteps rows; work outside on cuts of them would
    // not (a cut is shorter, silently), and the loop may drop a sequence it no longer reads.
    if (ancestors([...outer.values()]).some((v) => this.#cuts.has(v)) && !stepsFit(parts)) return undefined;
    const replaced = rebuildScan({ ...parts, nitsots: [...parts.nitsots, ...this.#added] });
    const olds = [...outer.keys()];
    const news = cloneReplace([...outer.values()], [...replaced]) as TensorVariable[];
    for (const p of this.#added) replaced.delete(p.stacked[0]!);
    for (let i = 0; i < olds.length; i++) {
      if (!fits(olds[i]!.type as TensorType, news[i]!)) return undefined;
      replaced.set(olds[i]!, news[i]!);
    }
    return replaced;
  }
}
