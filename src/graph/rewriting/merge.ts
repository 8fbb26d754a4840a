// The merge rewriter: equal constants become one constant, and nodes that apply equal ops
// (same props) to the same inputs become one node. One pass in topological order finds every
// merge, because a node's inputs are compared by what they will be merged into; the merges are
// then made as one replaceAll (linear in the graph), or one by one if a feature vetoes the batch.
import type { Apply } from '../apply.js';
import { InconsistencyError } from '../feature.js';
import type { FunctionGraph } from '../fgraph.js';
import { Constant, type Variable } from '../variable.js';
import type { RewriteContext } from './context.js';
import type { GraphRewriter } from './rewriter.js';

function tryReplace(fg: FunctionGraph, pairs: ReadonlyArray<readonly [Variable, Variable]>, ctx: RewriteContext, what: string): boolean {
  try {
    fg.replaceAll(pairs, { reason: 'merge' });
    return true;
  } catch (e) {
    if (e instanceof InconsistencyError) {
      ctx.log(`merge of ${what} vetoed: ${e.message}`);
      return false;
    }
    throw e;
  }
}

/** One merge: the variables of a duplicate (a constant, or a node's outputs) and their keepers. */
interface Merge {
  readonly pairs: ReadonlyArray<readonly [Variable, Variable]>;
  readonly node?: Apply;
  readonly into?: Apply;
}

/**
 * Every merge the graph allows as it stands: constants by signature, then nodes in topological
 * order, each compared through `keeper` (what its inputs will become), so chains of duplicates
 * are found in one pass.
 */
function findMerges(fg: FunctionGraph): Merge[] {
  const merges: Merge[] = [];
  const keeper = new Map<Variable, Variable>();
  const constants = new Map<string, Constant>();
  for (const v of fg.variables) {
    if (!(v instanceof Constant)) continue;
    const first = constants.get(v.signature);
    if (first === undefined) constants.set(v.signature, v);
    else if (first.type.equals(v.type)) {
      keeper.set(v, first);
      merges.push({ pairs: [[v, first]] });
    }
  }
  // Nodes are bucketed by a number hashed from the op and the inputs' keepers (numbers hash
  // much faster than strings); candidates in a bucket are then compared exactly.
  const opIndex = new Map<string, number>();
  // A bucket holds one node, or a list when hashes collide (rare: most buckets stay single).
  const buckets = new Map<number, Apply | Apply[]>();
  const keep = (v: Variable): Variable => keeper.get(v) ?? v;
  for (const node of fg.toposort()) {
    if (node.outputs.length === 0) continue;
    const opKey = node.op.key;
    let h = opIndex.get(opKey);
    if (h === undefined) {
      h = opIndex.size;
      opIndex.set(opKey, h);
    }
    for (const v of node.inputs) h = (Math.imul(h, 0x01000193) ^ keep(v).id) & 0x3fffffff;
    const same = (b: Apply): boolean =>
      b.op.equals(node.op) &&
      b.outputs.length === node.outputs.length &&
      b.inputs.length === node.inputs.length &&
      b.inputs.every((v, i) => keep(v) === keep(node.inputs[i]!));
    const bucket = buckets.get(h);
    const twin = bucket === undefined ? undefined : Array.isArray(bucket) ? bucket.find(same) : same(bucket) ? bucket : undefined;
    if (twin === undefined) {
      if (bucket === undefined) buckets.set(h, node);
      else if (Array.isArray(bucket)) bucket.push(node);
      else buckets.set(h, [bucket, node]);
      continue;
    }
    const pairs = node.outputs.map((o, i): [Variable, Variable] => [o, twin.outputs[i]!]);
    for (const [o, t] of pairs) keeper.set(o, t);
    merges.push({ pairs, node, into: twin });
  }
  return merges;
}

export class MergeRewriter implements GraphRewriter {
  readonly kind = 'graph';
  constructor(readonly name = 'merge') {}

  apply(fg: FunctionGraph, ctx: RewriteContext): number {
    const merges = findMerges(fg);
    if (merges.length === 0) return 0;
    if (tryReplace(fg, merges.flatMap((m) => m.pairs), ctx, `${merges.length} duplicates`)) {
      if (ctx.verbose) for (const m of merges) if (m.node) ctx.log(`merge: ${m.node} into ${m.into}`);
      return merges.length;
    }
    // A feature refused the batch: merge one duplicate at a time, skipping those it refuses.
    let merged = 0;
    for (const m of merges) {
      if (!m.pairs.every(([o, t]) => fg.variables.has(o) && fg.variables.has(t))) continue;
      if (m.node && !(fg.applyNodes.has(m.node) && fg.applyNodes.has(m.into!))) continue;
      if (m.node && !m.node.inputs.every((v, i) => v === m.into!.inputs[i])) continue;
      if (!tryReplace(fg, m.pairs, ctx, m.node ? String(m.node) : String(m.pairs[0]![0]))) continue;
      merged += 1;
      if (ctx.verbose && m.node) ctx.log(`merge: ${m.node} into ${m.into}`);
    }
    return merged;
  }
}
