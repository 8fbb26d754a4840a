// ScanMerge (Theano's): two loops that run the same number of steps (the same nSteps variable),
// neither reading what the other computes, become one loop whose step does both. Sequences they
// share become one afterwards (scan_merge_inouts), so the shared rows are read once a step.
import type { Apply } from '../../../graph/apply.js';
import type { FunctionGraph } from '../../../graph/fgraph.js';
import { nodeRewriter } from '../../../graph/rewriting/rewriter.js';
import { ancestors } from '../../../graph/traversal.js';
import { rebuildScan, scanParts, type ScanParts } from '../../inner/scan-parts.js';
import { ScanOp } from '../../inner/scan-op.js';

/** Does `node` read (through any number of nodes) an output of `other`? */
function reads(node: Apply, other: Apply): boolean {
  const before = new Set(ancestors(node.inputs));
  return other.outputs.some((o) => before.has(o));
}

/** Loops that may run as one: no until condition (each would stop on its own), the same truncation. */
const mergeable = (a: ScanOp, b: ScanOp): boolean => !a.spec.until && !b.spec.until && a.spec.truncateGradient === b.spec.truncateGradient;

/** The other Scan nodes of `fg` that take `node`'s nSteps as theirs and may merge with it. */
function partners(fg: FunctionGraph, node: Apply): Apply[] {
  return fg.clients(node.inputs[0]!).flatMap((c) => {
    if (c.kind !== 'apply' || c.index !== 0 || c.node === node || !(c.node.op instanceof ScanOp)) return [];
    return mergeable(node.op as ScanOp, c.node.op) && !reads(node, c.node) && !reads(c.node, node) ? [c.node] : [];
  });
}

/** One loop doing both steps: `a`'s parts first, then `b`'s. */
function joined(a: ScanParts, b: ScanParts): ScanParts {
  return {
    ...a,
    seqs: [...a.seqs, ...b.seqs],
    recs: [...a.recs, ...b.recs],
    nitsots: [...a.nitsots, ...b.nitsots],
    nonSeqs: [...a.nonSeqs, ...b.nonSeqs],
    name: a.name === b.name ? a.name : `${a.name}&${b.name}`,
  };
}

export const scanMerge = nodeRewriter('ScanMerge', [ScanOp], (node, fg) => {
  const other = partners(fg, node)[0];
  return other ? rebuildScan(joined(scanParts(node), scanParts(other))) : false;
});
