// The two kinds of rewriter (Theano's local and global optimizers): a NodeRewriter looks at one
// node and may return replacements for its outputs; a GraphRewriter transforms a whole graph.
// Both report to a RewriteContext, which keeps the profile and the verbose log.
import type { Apply } from '../apply.js';
import type { FunctionGraph } from '../fgraph.js';
import type { Op } from '../op.js';
import type { Variable } from '../variable.js';
import { InconsistencyError } from '../feature.js';
import { RewriteContext } from './context.js';

/** New variables for a node's outputs: one per output (in order), or a map old -> new. */
export type Replacement = ReadonlyArray<Variable | undefined> | ReadonlyMap<Variable, Variable>;

/** What a rewriter watches: an op (equal ops match), an op class (its instances), or a predicate. */
export type OpMatcher = Op | OpClass | OpPredicate;
export type OpClass = abstract new (...args: never[]) => Op;
export interface OpPredicate {
  readonly test: (op: Op) => boolean;
  readonly name?: string;
}

export interface NodeRewriter {
  readonly kind: 'node';
  readonly name: string;
  /** The ops this rewriter can change; undefined means it must see every node. */
  readonly tracks?: readonly OpMatcher[];
  /** Replacements for the node's outputs, or false/undefined to leave the node alone. */
  transform(fg: FunctionGraph, node: Apply): Replacement | false | undefined;
}

export interface GraphRewriter {
  readonly kind: 'graph';
  readonly name: string;
  /**
   * True for rewriters that only run others (databases, equilibrium and walking rewriters):
   * the profile lists them as stages, since the rewriters they run record their own time.
   */
  readonly composite?: boolean;
  /** Rewrites `fg` in place; returns how many changes it made. */
  apply(fg: FunctionGraph, ctx: RewriteContext): number;
}

export type Rewriter = NodeRewriter | GraphRewriter;

export function matches(matcher: OpMatcher, op: Op): boolean {
  if (typeof matcher === 'function') return op instanceof matcher;
  if ('test' in matcher && typeof matcher.test === 'function') return matcher.test(op);
  return (matcher as Op).equals(op);
}

/** Does `rewriter` want to look at `node`? */
export function tracksNode(rewriter: NodeRewriter, node: Apply): boolean {
  return rewriter.tracks === undefined || rewriter.tracks.some((m) => matches(m, node.op));
}

/** A NodeRewriter from a name, the ops it tracks and a transform function. */
export function nodeRewriter(
  name: string,
  tracks: readonly OpMatcher[] | undefined,
  transform: (node: Apply, fg: FunctionGraph) => Replacement | false | undefined,
): NodeRewriter {
  return { kind: 'node', name, tracks, transform: (fg, node) => transform(node, fg) };
}

/**
 * Runs `rewriter` on `node` and applies what it returns. A replacement that a feature vetoes
 * (InconsistencyError) is dropped and counts as no change. Returns whether the graph changed.
 * The profile counts one call, and the time of the transform and of the replacement.
 */
export function rewriteNode(fg: FunctionGraph, rewriter: NodeRewriter, node: Apply, ctx: RewriteContext): boolean {
  const started = performance.now();
  let applied = false;
  try {
    applied = applyReplacement(fg, rewriter, node, rewriter.transform(fg, node), ctx);
  } finally {
    ctx.profile.record(rewriter.name, performance.now() - started, applied);
  }
  return applied;
}

function applyReplacement(fg: FunctionGraph, rewriter: NodeRewriter, node: Apply, result: Replacement | false | undefined, ctx: RewriteContext): boolean {
  if (!result) return false;
  const pairs: Array<[Variable, Variable]> = [];
  if (result instanceof Map) {
    for (const [o, n] of result) if (o !== n) pairs.push([o, n]);
  } else {
    const list = result as ReadonlyArray<Variable | undefined>;
    if (list.length !== node.outputs.length) {
      throw new Error(`rewrite ${rewriter.name} returned ${list.length} replacements for ${node.op}, which has ${node.outputs.length} outputs`);
    }
    list.forEach((n, i) => {
      if (n !== undefined && n !== node.outputs[i]) pairs.push([node.outputs[i]!, n]);
    });
  }
  if (pairs.length === 0) return false;
  const live = pairs.filter(([o]) => fg.variables.has(o));
  if (live.length === 0) return false;
  const before = ctx.verbose ? ctx.describe(live.map(([o]) => o)) : '';
  try {
    fg.replaceAll(live, { reason: rewriter.name });
  } catch (e) {
    if (e instanceof InconsistencyError) {
      ctx.log(`rewrite ${rewriter.name} vetoed: ${e.message}`);
      return false;
    }
    throw e;
  }
  if (ctx.verbose) ctx.log(`rewrite ${rewriter.name}:\n${before}\n  ->\n${ctx.describe(live.map(([, n]) => n))}`);
  return true;
}

/**
 * Runs a graph rewriter and records one call of it: as a stage when it is composite, else as a
 * rewriter. What it recorded under its own name while it ran (some count their applications as
 * they go) is folded into that one call, so each application is counted once.
 */
export function applyGraphRewriter(fg: FunctionGraph, rewriter: GraphRewriter, ctx: RewriteContext): number {
  const table = rewriter.composite ? ctx.profile.byStage : ctx.profile.byRewriter;
  const before = { ...(table.get(rewriter.name) ?? { time: 0, calls: 0, applied: 0 }) };
  const started = performance.now();
  let n = 0;
  try {
    n = rewriter.apply(fg, ctx);
  } finally {
    const ms = performance.now() - started;
    const reported = (table.get(rewriter.name)?.applied ?? 0) - before.applied;
    table.set(rewriter.name, { time: before.time + ms, calls: before.calls + 1, applied: before.applied + Math.max(n, reported) });
  }
  return n;
}
