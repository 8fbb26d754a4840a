// Constant folding: a node whose inputs are all constants is computed once, at compile time,
// and its outputs become constants, unless the op declines (doConstantFolding), e.g. because the
// result would be a large allocation better made at run time.
import { isConstant, type Constant } from '../variable.js';
import type { NodeRewriter } from './rewriter.js';

export const constantFolding: NodeRewriter = {
  kind: 'node',
  name: 'constant_folding',
  transform: (_fg, node) => {
    if (node.inputs.length === 0 && node.outputs.length === 0) return false;
    if (!node.inputs.every(isConstant)) return false;
    if (!node.op.doConstantFolding(node)) return false;
    const values = node.op.perform(node, node.inputs.map((c) => (c as Constant).data));
    return node.outputs.map((o, i) => o.type.makeConstant(o.type.filter(values[i], { what: `constant folding of ${node.op}` })));
  },
};
