// remove_constants_and_unused_inputs_scan (Theano's): a Scan's constant inputs go into its step
// (a constant non-sequence, a constant sequence whose rows are all the same), its outputs that
// nothing reads are dropped (with the recurrences only they needed), and then the inputs its step
// no longer reads. It runs again after the other scan rewrites, which leave inputs unused.
import type { Apply } from '../../../graph/apply.js';
import type { FunctionGraph } from '../../../graph/fgraph.js';
import { nodeRewriter } from '../../../graph/rewriting/rewriter.js';
import { ancestors } from '../../../graph/traversal.js';
import { isConstant, type Variable } from '../../../graph/variable.js';
import { rowOf } from '../../../kernels/view.js';
import { constant } from '../../core/as-tensor.js';
import { flatValues, makeNdArray, type NdArray } from '../../core/ndarray.js';
import { TensorConstant, type TensorVariable } from '../../core/variable.js';
import { rebuildScan, scanParts, type RecurrentPart, type ScanParts } from '../../inner/scan-parts.js';
import { ScanOp } from '../../inner/scan-op.js';

/** The row every step reads of a constant sequence whose rows are all equal, as a constant. */
function uniformRow(outer: TensorVariable, inner: TensorVariable): TensorConstant | undefined {
  if (!(outer instanceof TensorConstant)) return undefined;
  const value = outer.data as NdArray;
  if (value.shape[0] === 0) return undefined;
  const values = flatValues(value);
  if (!values.every((x) => Object.is(x, values[0]))) return undefined;
  const row = rowOf(value, 0);
  const c = constant(makeNdArray(value.data, row.shape, row.stride, row.offset), { dtype: inner.dtype });
  return inner.type.equals(c.type) || inner.type.isSupertypeOf(c.type) ? c : undefined;
}

/** The outer outputs among `vars` that something reads. */
const read = (fg: FunctionGraph, vars: readonly TensorVariable[]): TensorVariable[] => vars.filter((v) => fg.clients(v).length > 0);

/**
 * The recurrent outputs to keep: those read outside, and those whose past states the kept
 * outputs (or the until condition) read, through any number of steps.
 */
function neededRecurrences(parts: ScanParts, isRead: (r: RecurrentPart) => boolean): Set<RecurrentPart> {
  const needed = new Set(parts.recs.filter(isRead));
  const roots = (): Variable[] => [...[...needed].map((r) => r.step), ...parts.nitsots.map((z) => z.step), ...(parts.condition ? [parts.condition] : [])];
  for (let grew = true; grew; ) {
    grew = false;
    const reached = new Set(ancestors(roots()));
    for (const r of parts.recs) {
      if (!needed.has(r) && r.inner.some((v) => reached.has(v))) {
        needed.add(r);
        grew = true;
      }
    }
  }
  return needed;
}

export const removeConstantsAndUnusedInputsScan = nodeRewriter('remove_constants_and_unused_inputs_scan', [ScanOp], (node: Apply, fg) => {
  const parts = scanParts(node);
  // Constants go into the step: each such inner input is substituted by its value.
  const substitutions: Array<[Variable, Variable]> = [
    ...parts.nonSeqs.flatMap((m): Array<[Variable, Variable]> => (isConstant(m.outer) && m.inner.type.isSupertypeOf(m.outer.type) ? [[m.inner, m.outer]] : [])),
    ...parts.seqs.flatMap((s): Array<[Variable, Variable]> => {
      const row = uniformRow(s.outer, s.inner);
      return row ? [[s.inner, row]] : [];
    }),
  ];
  const substituted = new Map(substitutions);
  // Outputs nothing reads go, and the recurrences only they needed.
  const nitsots = parts.nitsots.map((z) => ({ ...z, stacked: read(fg, z.stacked) })).filter((z) => z.stacked.length > 0);
  const recsRead = parts.recs.map((r) => ({ ...r, stacked: read(fg, r.stacked), finals: read(fg, r.finals) }));
  const liveParts = { ...parts, nitsots, recs: recsRead };
  const needed = neededRecurrences(liveParts, (r) => r.stacked.length > 0 || r.finals.length > 0);
  const recs = recsRead.filter((r) => needed.has(r));
  if (recs.length + nitsots.length === 0) return false;
  // Inputs the kept step outputs no longer read go too (a substituted one is not read any more).
  const reached = new Set(ancestors([...recs.map((r) => r.step), ...nitsots.map((z) => z.step), ...(parts.condition ? [parts.condition] : [])]));
  const used = (v: Variable): boolean => reached.has(v) && !substituted.has(v);
  const kept = { ...liveParts, recs, seqs: parts.seqs.filter((s) => used(s.inner)), nonSeqs: parts.nonSeqs.filter((m) => used(m.inner)) };
  const unchanged =
    substitutions.length === 0 &&
    kept.seqs.length === parts.seqs.length &&
    kept.nonSeqs.length === parts.nonSeqs.length &&
    recs.length === parts.recs.length &&
    nitsots.length === parts.nitsots.length &&
    recs.every((r, k) => r.finals.length === parts.recs[k]!.finals.length);
  return unchanged ? false : rebuildScan(kept, substitutions);
});
