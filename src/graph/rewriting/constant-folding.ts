// Constant folding: a node whose inputs are all constants is computed once, at compile time,
// and its outputs become constants, unless the op declines (doConstantFolding), e.g. because the
// result would be a large allocation better made at run time, or its outputs would be large.
import { sizeOf, type TensorView } from '../../kernels/view.js';
import type { Apply } from '../apply.js';
import { copiedArguments } from '../node-error.js';
import { isConstant, type Constant } from '../variable.js';
import type { NodeRewriter } from './rewriter.js';

/**
 * The most elements an output folded at compile time may have. A larger one is computed when the
 * function runs, where the memory's limits are checked before anything is built (a constant is
 * held by the graph and copied into every region, and `zeros(2 ** 30)` must not take minutes and
 * gigabytes to compile). PyTensor keeps allocations out of constants by their clients
 * (Alloc.do_constant_folding); weft bounds every op's folded size instead.
 */
export const FOLD_MAX_ELEMENTS = 1 << 20;

/** Whether an output of `node` would exceed FOLD_MAX_ELEMENTS, as far as its outputShapes tells. */
function foldsTooLarge(node: Apply): boolean {
  if (!node.op.outputShapes) return false;
  try {
    const shapes = node.op.outputShapes(node, node.inputs.map((c) => (c as Constant).data as TensorView));
    return shapes.some((s) => sizeOf(s) > FOLD_MAX_ELEMENTS);
  } catch {
    // Inputs that perform refuses: folding reports that as it did before.
    return false;
  }
}

export const constantFolding: NodeRewriter = {
  kind: 'node',
  name: 'constant_folding',
  transform: (_fg, node) => {
    if (node.inputs.length === 0 && node.outputs.length === 0) return false;
    if (!node.inputs.every(isConstant)) return false;
    if (!node.op.doConstantFolding(node) || foldsTooLarge(node)) return false;
    // A constant's data is shared by every graph that holds it: perform must not overwrite it.
    const values = node.op.perform(node, copiedArguments(node, node.inputs.map((c) => (c as Constant).data), 'destroyed'));
    return node.outputs.map((o, i) => o.type.makeConstant(o.type.filter(values[i], { what: `constant folding of ${node.op}` })));
  },
};
