// Inlining: an OpFromGraph made with `inline: true` is replaced by its inner graph early in
// compilation (before merge and canonicalize), so the outer rewrites see inside it.
import { optdb } from '../../graph/rewriting/optdb.js';
import { nodeRewriter } from '../../graph/rewriting/rewriter.js';
import { in2out } from '../../graph/rewriting/walk.js';
import { OpFromGraph } from '../inner/op-from-graph.js';

export const inlineOpFromGraph = nodeRewriter('inline_op_from_graph', [OpFromGraph], (node) => {
  const op = node.op as OpFromGraph;
  return op.inline ? op.expand(node.inputs) : false;
});

optdb.register('inline_op_from_graph', in2out('inline_op_from_graph', inlineOpFromGraph), {
  tags: ['fast_run', 'fast_compile', 'inline'],
  position: -1,
});
