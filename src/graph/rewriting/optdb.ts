// The standard rewrite pipeline (Theano's optdb), by position: merge, canonicalize (to a fixed
// point), merge, stabilize, specialize, uncanonicalize, fusion, inplace, merge. Modes select
// from it by tag: FAST_RUN takes 'fast_run', FAST_COMPILE takes 'fast_compile' (merge and
// canonicalize). Rewrites register here with the helpers below, users' rewrites included.
import { constantFolding } from './constant-folding.js';
import { EquilibriumDB, SequenceDB } from './db.js';
import { MergeRewriter } from './merge.js';
import type { Rewriter } from './rewriter.js';

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
