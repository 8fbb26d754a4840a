// Sparse rewrites (PyTensor's): the transpose of a transpose is the matrix itself, and a dense
// product with a densified sparse operand (or its transpose) is the sparse product, which never
// builds the dense matrix (dot(dense(s), d) -> structuredDot(s, d), dot(d, dense(s)) ->
// sparse.dot(d, s)). Values are the same; gradients were taken before rewrites run.
import { registerCanonicalize, registerSpecialize } from '../graph/rewriting/optdb.js';
import { nodeRewriter } from '../graph/rewriting/rewriter.js';
import type { Variable } from '../graph/variable.js';
import type { TensorVariable } from '../tensor/core/variable.js';
import { DimShuffle } from '../tensor/shape/dimshuffle.js';
import { Dot } from '../tensor/linalg/linalg.js';
import { asTypeOf } from '../tensor/rewriting/like.js';
import { DenseFromSparse } from './convert.js';
import { dot, structuredDot } from './dot.js';
import { transpose, Transpose } from './structure.js';

/** transpose(transpose(s)) -> s (the same format, shape and arrays). */
registerCanonicalize(
  nodeRewriter('sparse_transpose_transpose', [Transpose], (node) => {
    const inner = node.inputs[0]!;
    if (!(inner.owner?.op instanceof Transpose)) return false;
    const s = inner.owner.inputs[0]!;
    return s.type.equals(node.outputs[0]!.type) ? [s] : false;
  }),
  'sparse',
);

/** The sparse matrix whose dense form `v` is: s if v is dense(s), s^T if v is dense(s) transposed (as gradients write it). */
function densified(v: TensorVariable): Variable | undefined {
  const op = v.owner?.op;
  if (op instanceof DenseFromSparse) return v.owner!.inputs[0]!;
  if (op instanceof DimShuffle && op.newOrder.length === 2 && op.newOrder[0] === 1 && op.newOrder[1] === 0) {
    const s = densified(v.owner!.inputs[0] as TensorVariable);
    return s && transpose(s);
  }
  return undefined;
}

/** dot(dense(s), d) -> structuredDot(s, d) and dot(d, dense(s)) -> sparse.dot(d, s), for matrices d. */
registerSpecialize(
  nodeRewriter('sparse_dot_of_dense', [Dot], (node, fg) => {
    const [l, r] = node.inputs as TensorVariable[];
    if (l!.ndim !== 2 || r!.ndim !== 2) return false;
    const sl = densified(l!);
    const sr = densified(r!);
    const v = sl ? structuredDot(sl, r) : sr ? (dot(l, sr) as TensorVariable) : undefined;
    if (!v) return false;
    const fitted = asTypeOf(v, node.outputs[0] as TensorVariable, fg);
    return fitted ? [fitted] : false;
  }),
  'sparse',
);
