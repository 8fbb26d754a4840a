// The fusion of a sparse product with the element-wise op that consumes it (tags 'fusion',
// 'sparse' and 'sparse_epilogue'; after element-wise fusion, so the op is already one Composite): tanh(s d + b), say,
// becomes one FusedTimesDense, whose tasks run the op's program over the product's rows they have
// just written. Only when the product has no other client and the op writes a result of the
// product's dtype and shape (its other inputs broadcast to it). The same bits either way.
import { optdb } from '../graph/rewriting/optdb.js';
import { nodeRewriter } from '../graph/rewriting/rewriter.js';
import type { TensorType } from '../tensor/core/type.js';
import type { TensorVariable } from '../tensor/core/variable.js';
import { Elemwise } from '../tensor/elemwise/elemwise.js';
import { CompressedTimesDense, FusedTimesDense } from './compressed.js';

optdb.register(
  'sparse_product_epilogue',
  nodeRewriter('sparse_product_epilogue', [Elemwise], (node, fg) => {
    const op = node.op as Elemwise;
    const out = node.outputs[0]!.type as TensorType;
    if (Object.keys(op.inplacePattern).length > 0 || out.ndim !== 2) return false;
    const position = node.inputs.findIndex((v) => v.owner?.op instanceof CompressedTimesDense && fg.clients(v).length === 1);
    if (position < 0) return false;
    const product = node.inputs[position]!;
    if ((product.type as TensorType).dtype !== out.dtype || node.inputs.some((v) => (v.type as TensorType).ndim !== 2)) return false;
    const p = product.owner!;
    const fused = new FusedTimesDense(p.op as CompressedTimesDense, op, position).call(...p.inputs, ...node.inputs.filter((_, k) => k !== position)) as TensorVariable;
    const fitted = fused.type.equals(out) ? fused : out.convertVariable(fused);
    return fitted ? [fitted] : false;
  }),
  { tags: ['fast_run', 'fusion', 'sparse', 'sparse_epilogue'], position: 49.5 },
);
