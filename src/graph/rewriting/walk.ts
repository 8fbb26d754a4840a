// Walking rewriters (Theano's in2out and out2in): visit every node once, inputs first or
// outputs first, and offer it to each node rewriter that tracks its op. Nodes that rewrites
// create are visited too; nodes that rewrites remove are skipped.
import type { Apply } from '../apply.js';
import type { Feature } from '../feature.js';
import type { FunctionGraph } from '../fgraph.js';
import type { Op } from '../op.js';
import type { RewriteContext } from './context.js';
import { rewriteNode, tracksNode, type GraphRewriter, type NodeRewriter } from './rewriter.js';

export type WalkOrder = 'in2out' | 'out2in';

/**
 * Offers every node of `fg` to `rewriters` in `order`; returns the number of rewrites applied.
 * `onApplied` hears which rewriter changed the graph each time.
 */
export function walkOnce(
  fg: FunctionGraph,
  rewriters: readonly NodeRewriter[],
  order: WalkOrder,
  ctx: RewriteContext,
  onApplied?: (rewriter: NodeRewriter) => void,
): number {
  const sorted = fg.toposort();
  const queue: readonly Apply[] = order === 'in2out' ? sorted : sorted.reverse();
  const fresh: Apply[] = [];
  // Nodes that an undone (vetoed) change brings back were here before: offering them again would loop.
  const watcher: Feature = { onImport: (_fg, node, reason) => void (reason.startsWith('undo ') || fresh.push(node)) };
  let applied = 0;
  // Which rewriters track an op depends on the op alone: worked out once per op of the graph.
  const tracking = new Map<Op, readonly NodeRewriter[]>();
  const rewritersOf = (node: Apply): readonly NodeRewriter[] => {
    let list = tracking.get(node.op);
    if (list === undefined) {
      list = rewriters.filter((r) => tracksNode(r, node));
      tracking.set(node.op, list);
    }
    return list;
  };
  const visit = (node: Apply): void => {
    for (const r of rewritersOf(node)) {
      if (!fg.applyNodes.has(node)) return;
      if (rewriteNode(fg, r, node, ctx)) {
        applied += 1;
        onApplied?.(r);
        return;
      }
    }
  };
  fg.attachFeature(watcher);
  try {
    for (const node of queue) {
      visit(node);
      // Nodes that rewrites created are offered right away, in import order (inputs first).
      while (fresh.length > 0) {
        const batch = fresh.splice(0);
        for (const n of order === 'in2out' ? batch : batch.reverse()) visit(n);
      }
    }
  } finally {
    fg.removeFeature(watcher);
  }
  return applied;
}

/** A graph rewriter that walks the graph once with `rewriters`. */
export function walkingRewriter(name: string, rewriters: readonly NodeRewriter[], order: WalkOrder = 'in2out'): GraphRewriter {
  return {
    kind: 'graph',
    name,
    composite: true,
    apply: (fg, ctx) => walkOnce(fg, rewriters, order, ctx),
  };
}

export function in2out(name: string, ...rewriters: NodeRewriter[]): GraphRewriter {
  return walkingRewriter(name, rewriters, 'in2out');
}

export function out2in(name: string, ...rewriters: NodeRewriter[]): GraphRewriter {
  return walkingRewriter(name, rewriters, 'out2in');
}
