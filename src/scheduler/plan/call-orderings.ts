// Pass 4a of the planner: the graph's orderings (the destroy handler's, and any feature's) as
// pairs of calls. A node that must run after another waits for all that other node's calls, or,
// for a node without calls (a view), for the calls that read what it produced.
import type { FunctionGraph } from '../../graph/fgraph.js';
import type { PlanDraft } from './draft.js';

/** [before, after] pairs of calls: every task of `before` precedes every task of `after`. */
export function callOrderings(fg: FunctionGraph, draft: Pick<PlanDraft, 'order' | 'position' | 'orderings' | 'callsOfNode' | 'hostOnly'>): Array<[number, number]> {
  const { order, position, orderings, callsOfNode, hostOnly } = draft;
  // The calls that read what node k produced (directly, or through views of it). Host nodes
  // (shapes, small integers) read nothing while the call runs: the walk does not go through them.
  const readerCalls = (k: number): number[] => {
    const out: number[] = [];
    if (hostOnly(order[k]!)) return out;
    const stack = [k];
    const seen = new Set<number>();
    while (stack.length) {
      const j = stack.pop()!;
      for (const o of order[j]!.outputs) {
        for (const c of fg.clients(o)) {
          if (c.kind !== 'apply' || !position.has(c.node)) continue;
          const r = position.get(c.node)!;
          if (seen.has(r)) continue;
          seen.add(r);
          if (callsOfNode.has(r)) out.push(...callsOfNode.get(r)!);
          else if (!hostOnly(c.node)) stack.push(r);
        }
      }
    }
    return out;
  };
  const ordered: Array<[number, number]> = [];
  order.forEach((node, k) => {
    const own = callsOfNode.get(k);
    if (own === undefined) return;
    for (const before of orderings.get(node) ?? []) {
      const b = position.get(before);
      if (b === undefined) continue;
      for (const p of callsOfNode.get(b) ?? readerCalls(b)) for (const ci of own) ordered.push([p, ci]);
    }
  });
  return ordered;
}
