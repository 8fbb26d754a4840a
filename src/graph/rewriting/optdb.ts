// The standard rewrite pipeline (Theano's optdb), by position: merge, canonicalize (to a fixed
// point), merge, stabilize, specialize, uncanonicalize, fusion, inplace, merge. Modes select
// from it by tag: FAST_RUN takes 'fast_run', FAST_COMPILE takes 'fast_compile' (merge and
// canonicalize). Rewrites register here with the helpers below, users' rewrites included.
import type { FunctionGraph } from '../fgraph.js';
import { constantFolding } from './constant-folding.js';
import { RewriteContext } from './context.js';
import { EquilibriumDB, SequenceDB, type RewriteQuery } from './db.js';
import { MergeRewriter } from './merge.js';
import { applyGraphRewriter, type Rewriter } from './rewriter.js';
import { walkOnce } from './walk.js';

export const optdb = new SequenceDB('optdb');

export const canonicalizeDB = new EquilibriumDB('canonicalize');
export const stabilizeDB = new EquilibriumDB('stabilize');
export const specializeDB = new EquilibriumDB('specialize');
export const uncanonicalizeDB = new EquilibriumDB('uncanonicalize');
export const fusionDB = new SequenceDB('elemwise_fusion');
export const inplaceDB = new SequenceDB('inplace');

optdb.register('merge1', new MergeRewriter('merge1'), { tags: ['fast_run', 'fast_compile', 'merge'], position: 0 });
optdb.register('canonicalize', canonicalizeDB, { tags: ['fast_run', 'fast_compile', 'canonicalize_db'], position: 1 });
optdb.register('merge1.2', new MergeRewriter('merge1.2'), { tags: ['fast_run', 'fast_compile', 'merge'], position: 1.2 });
optdb.register('stabilize', stabilizeDB, { tags: ['fast_run'], position: 1.5 });
optdb.register('specialize', specializeDB, { tags: ['fast_run'], position: 2 });
optdb.register('uncanonicalize', uncanonicalizeDB, { tags: ['fast_run'], position: 3 });
optdb.register('merge2', new MergeRewriter('merge2'), { tags: ['fast_run', 'merge'], position: 48 });
optdb.register('elemwise_fusion', fusionDB, { tags: ['fast_run', 'fusion'], position: 49 });
optdb.register('inplace', inplaceDB, { tags: ['fast_run', 'inplace'], position: 75 });
optdb.register('merge3', new MergeRewriter('merge3'), { tags: ['fast_run', 'merge'], position: 100 });

/** What FAST_RUN selects: inner graphs (OpFromGraph's, a Scan's step) are rewritten with it too. */
export const FAST_RUN_QUERY: RewriteQuery = { include: ['fast_run'] };

/** Applies the rewrites of the pipeline that `query` selects to `fg`, in order; returns the context. */
export function rewriteWith(fg: FunctionGraph, query: RewriteQuery, ctx: RewriteContext = new RewriteContext()): RewriteContext {
  const started = performance.now();
  for (const r of optdb.query(query)) {
    if (r.kind === 'graph') applyGraphRewriter(fg, r, ctx);
    else walkOnce(fg, [r], 'in2out', ctx);
  }
  ctx.profile.total = performance.now() - started;
  return ctx;
}

function registerIn(db: EquilibriumDB | SequenceDB, base: readonly string[], rewriter: Rewriter, tags: readonly string[]): Rewriter {
  db.register(rewriter.name, rewriter, { tags: [...base, ...tags] });
  return rewriter;
}

/** Registers a rewrite that brings graphs to canonical form (FAST_RUN and FAST_COMPILE). */
export function registerCanonicalize<R extends Rewriter>(rewriter: R, ...tags: string[]): R {
  return registerIn(canonicalizeDB, ['fast_run', 'fast_compile'], rewriter, tags) as R;
}

/** Registers a rewrite that makes computations numerically stable (FAST_RUN). */
export function registerStabilize<R extends Rewriter>(rewriter: R, ...tags: string[]): R {
  return registerIn(stabilizeDB, ['fast_run'], rewriter, tags) as R;
}

/** Registers a rewrite that replaces general ops by faster special cases (FAST_RUN). */
export function registerSpecialize<R extends Rewriter>(rewriter: R, ...tags: string[]): R {
  return registerIn(specializeDB, ['fast_run'], rewriter, tags) as R;
}

/** Registers a rewrite that undoes canonical forms that are slow to run (FAST_RUN). */
export function registerUncanonicalize<R extends Rewriter>(rewriter: R, ...tags: string[]): R {
  return registerIn(uncanonicalizeDB, ['fast_run'], rewriter, tags) as R;
}

registerCanonicalize({ ...constantFolding, name: 'constant_folding' });
registerStabilize({ ...constantFolding, name: 'constant_folding' });
registerSpecialize({ ...constantFolding, name: 'constant_folding' });
