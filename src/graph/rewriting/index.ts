// The rewriting framework as users see it: what it takes to write a rewrite (node and graph
// rewriters, OpSub, OpRemove, PatternSub, walkers, equilibrium, merge, constant folding), to
// register it (the databases, optdb and its helpers) and to see what happened (context, profile).
export {
  nodeRewriter,
  rewriteNode,
  applyGraphRewriter,
  matches,
  tracksNode,
  type NodeRewriter,
  type GraphRewriter,
  type Rewriter,
  type Replacement,
  type OpMatcher,
  type OpClass,
  type OpPredicate,
} from './rewriter.js';
export { opSub, opRemove } from './op-sub.js';
export { patternSub, type InPattern, type OutPattern, type PatternSubOptions } from './pattern.js';
export { in2out, out2in, walkingRewriter, walkOnce, type WalkOrder } from './walk.js';
export { EquilibriumRewriter, RewriteCycleError, type EquilibriumOptions } from './equilibrium.js';
export { MergeRewriter } from './merge.js';
export { constantFolding } from './constant-folding.js';
export { RewriteDatabase, SequenceDB, EquilibriumDB, LocalGroupDB, type RewriteQuery, type RegisterOptions } from './db.js';
export {
  optdb,
  canonicalizeDB,
  stabilizeDB,
  specializeDB,
  uncanonicalizeDB,
  fusionDB,
  inplaceDB,
  registerCanonicalize,
  registerStabilize,
  registerSpecialize,
  registerUncanonicalize,
} from './optdb.js';
export { RewriteContext, RewriteProfile, type RewriterStats } from './context.js';
