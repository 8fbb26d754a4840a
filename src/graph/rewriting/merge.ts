// The merge rewriter: equal constants become one constant, and nodes that apply equal ops
// (same props) to the same inputs become one node. One pass in topological order suffices,
// because a node's inputs are merged before the node itself is compared.
import type { Apply } from '../apply.js';
import { InconsistencyError } from '../feature.js';
import type { FunctionGraph } from '../fgraph.js';
import { Constant, type Variable } from '../variable.js';
import type { RewriteContext } from './context.js';
import type { GraphRewriter } from './rewriter.js';

function tryReplace(fg: FunctionGraph, pairs: Array<[Variable, Variable]>, ctx: RewriteContext): boolean {
  try {
    fg.replaceAll(pairs, { reason: 'merge' });
    return true;
  } catch (e) {
    if (e instanceof InconsistencyError) {
      ctx.log(`merge vetoed: ${e.message}`);
      return false;
    }
    throw e;
  }
}

export class MergeRewriter implements GraphRewriter {
  readonly kind = 'graph';
  constructor(readonly name = 'merge') {}

  apply(fg: FunctionGraph, ctx: RewriteContext): number {
    let merged = 0;
    const constants = new Map<string, Constant>();
    for (const v of [...fg.variables]) {
      if (!(v instanceof Constant) || !fg.variables.has(v)) continue;
      const first = constants.get(v.signature);
      if (first === undefined) constants.set(v.signature, v);
      else if (first !== v && first.type.equals(v.type) && tryReplace(fg, [[v, first]], ctx)) merged += 1;
    }
    const seen = new Map<string, Apply>();
    for (const node of fg.toposort()) {
      if (!fg.applyNodes.has(node)) continue;
      const key = `${node.op.key}|${node.inputs.map((v) => v.id).join(',')}`;
      const twin = seen.get(key);
      if (twin === undefined || !fg.applyNodes.has(twin)) {
        seen.set(key, node);
        continue;
      }
      if (!twin.op.equals(node.op) || twin.inputs.some((v, i) => v !== node.inputs[i])) continue;
      const pairs = node.outputs.map((o, i): [Variable, Variable] => [o, twin.outputs[i]!]);
      if (tryReplace(fg, pairs, ctx)) {
        merged += 1;
        if (ctx.verbose) ctx.log(`merge: ${node} into ${twin}`);
      }
    }
    return merged;
  }
}
