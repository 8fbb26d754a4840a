// scan_merge_inouts (Theano's): equal inputs and equal outputs of one Scan are merged. The same
// outer variable given twice as a sequence (or a non-sequence) becomes one input; recurrent
// outputs with the same initial state and taps whose steps compute the same from the same past
// states are one recurrence; outputs not fed back whose steps are equal are one output.
import { cloneReplace } from '../../../graph/clone.js';
import { FunctionGraph } from '../../../graph/fgraph.js';
import { RewriteContext } from '../../../graph/rewriting/context.js';
import { MergeRewriter } from '../../../graph/rewriting/merge.js';
import { nodeRewriter } from '../../../graph/rewriting/rewriter.js';
import type { Variable } from '../../../graph/variable.js';
import type { TensorVariable } from '../../core/variable.js';
import { rebuildScan, scanParts, type NitsotPart, type RecurrentPart, type ScanParts } from '../../inner/scan-parts.js';
import { ScanOp } from '../../inner/scan-op.js';

type Pair = readonly [Variable, Variable];

/** Inputs given twice (the same outer variable, the same inner type): later ones read the first's inner input. */
function mergeInputs<P extends { readonly outer: Variable; readonly inner: TensorVariable }>(list: readonly P[], into: Pair[]): P[] {
  const first = new Map<Variable, P>();
  return list.filter((p) => {
    const f = first.get(p.outer);
    if (f && f.inner.type.equals(p.inner.type)) {
      into.push([p.inner, f.inner]);
      return false;
    }
    if (!f) first.set(p.outer, p);
    return true;
  });
}

/** The step outputs with `substitutions` made, merged (Theano's merge feature), so equal computations are one variable. */
function mergedSteps(parts: ScanParts, substitutions: readonly Pair[]): Variable[] {
  const steps = [...parts.recs.map((r) => r.step), ...parts.nitsots.map((z) => z.step)];
  const inputs = [...parts.seqs.map((s) => s.inner), ...parts.recs.flatMap((r) => r.inner), ...parts.nonSeqs.map((m) => m.inner)];
  const fg = new FunctionGraph(inputs, cloneReplace(steps, substitutions));
  new MergeRewriter('scan_merge_inouts.step').apply(fg, new RewriteContext());
  return [...fg.outputs];
}

/** `into` taking over `other`'s outer outputs; it keeps every row either kept. */
function absorb<P extends RecurrentPart | NitsotPart>(into: P, other: P): P {
  const keep = into.keep === null || other.keep === null ? null : Math.max(into.keep, other.keep);
  const finals = 'finals' in into ? { finals: [...into.finals, ...(other as RecurrentPart).finals] } : {};
  return { ...into, ...finals, stacked: [...into.stacked, ...other.stacked], keep };
}

const sameRecurrence = (a: RecurrentPart, b: RecurrentPart): boolean =>
  a.init === b.init && a.step.type.equals(b.step.type) && a.taps.length === b.taps.length && a.taps.every((t, i) => t === b.taps[i]);

/** Groups of `items` (by index, the first first) whose merged steps are one variable and that `alike` accepts. */
function equalGroups<T>(items: readonly T[], stepOf: (i: number) => Variable, alike: (a: T, b: T) => boolean): number[][] {
  const groups: number[][] = [];
  items.forEach((item, i) => {
    const g = groups.find((members) => stepOf(members[0]!) === stepOf(i) && alike(items[members[0]!]!, item));
    if (g) g.push(i);
    else groups.push([i]);
  });
  return groups;
}

export const scanMergeInouts = nodeRewriter('scan_merge_inouts', [ScanOp], (node) => {
  const parts = scanParts(node);
  const substitutions: Pair[] = [];
  const seqs = mergeInputs(parts.seqs, substitutions);
  const nonSeqs = mergeInputs(parts.nonSeqs, substitutions);
  // Recurrences that look alike read the first one's past states in their steps; those whose
  // steps then equal the first's merge with it. Dropping one that does not may change what the
  // others compute: the comparison is made again until the set holds (it only shrinks).
  let accepted = parts.recs.flatMap((r, k) => {
    const first = parts.recs.findIndex((q) => sameRecurrence(q, r));
    return first < k ? [[k, first] as const] : [];
  });
  const readingFirst = (list: typeof accepted): Pair[] => list.flatMap(([k, first]) => parts.recs[k]!.inner.map((v, i): Pair => [v, parts.recs[first]!.inner[i]!]));
  let steps = mergedSteps(parts, [...substitutions, ...readingFirst(accepted)]);
  for (;;) {
    const kept = accepted.filter(([k, first]) => steps[k] === steps[first]);
    if (kept.length === accepted.length) break;
    accepted = kept;
    steps = mergedSteps(parts, [...substitutions, ...readingFirst(accepted)]);
  }
  substitutions.push(...readingFirst(accepted));
  const nRec = parts.recs.length;
  const absorbed = new Set(accepted.map(([k]) => k));
  const recs = parts.recs.flatMap((r, k) => (absorbed.has(k) ? [] : [accepted.filter(([, first]) => first === k).reduce((a, [m]) => absorb(a, parts.recs[m]!), r)]));
  const nitsotGroups = equalGroups(parts.nitsots, (j) => steps[nRec + j]!, (a, b) => a.step.type.equals(b.step.type));
  const nitsots = nitsotGroups.map((g) => g.slice(1).reduce((a, j) => absorb(a, parts.nitsots[j]!), parts.nitsots[g[0]!]!));
  const unchanged = seqs.length === parts.seqs.length && nonSeqs.length === parts.nonSeqs.length && recs.length === nRec && nitsots.length === parts.nitsots.length;
  return unchanged ? false : rebuildScan({ ...parts, seqs, nonSeqs, recs, nitsots }, substitutions);
});
