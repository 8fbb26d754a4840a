// Linear-algebra rewrites (PyTensor's): a product with an inverse is a solve (inv_as_solve), and
// log(det(a)) is slogdet's log|det| where the determinant is not negative (log_det_as_slogdet),
// which stays finite when the determinant itself would overflow or underflow; the determinant of
// a matrix whose Cholesky factor the graph computes anyway is the factor's squared diagonal
// product (local_det_chol).
import { registerStabilize } from '../../graph/rewriting/optdb.js';
import { nodeRewriter } from '../../graph/rewriting/rewriter.js';
import type { TensorVariable } from '../core/variable.js';
import { Elemwise } from '../elemwise/elemwise.js';
import { lt, sqr, where } from '../elemwise/math.js';
import { Cholesky, Det, MatrixInverse, mT, slogdet, solve } from '../linalg/dense.js';
import { prod } from '../elemwise/reduce.js';
import { diagonal } from '../shape/masks.js';
import { Dot, MatMul } from '../linalg/linalg.js';
import * as S from '../scalar/catalog.js';
import { asTypeOf } from './like.js';

const isInverse = (v: TensorVariable): boolean => v.owner?.op instanceof MatrixInverse;

/** inv(a) @ b -> solve(a, b); b @ inv(a) -> solve(a^T, b^T)^T (matrices or batches of them). */
registerStabilize(
  nodeRewriter('inv_as_solve', [Dot, MatMul], (node, fg) => {
    const [l, r] = node.inputs as TensorVariable[];
    const out = node.outputs[0] as TensorVariable;
    let v: TensorVariable | undefined;
    if (isInverse(l!) && l!.ndim >= 2 && r!.ndim >= 1) v = solve(l!.owner!.inputs[0] as TensorVariable, r!);
    else if (isInverse(r!) && r!.ndim >= 2 && l!.ndim >= 2) v = mT(solve(mT(r!.owner!.inputs[0] as TensorVariable), mT(l!)));
    if (!v) return false;
    const fitted = asTypeOf(v, out, fg);
    return fitted ? [fitted] : false;
  }),
  'linalg',
);

/** log(det(a)) -> log|det(a)| from slogdet, NaN where the sign is negative (as log of a negative number). */
registerStabilize(
  nodeRewriter('log_det_as_slogdet', [{ name: 'Elemwise{log}', test: (op) => op instanceof Elemwise && op.scalarOp === S.log }], (node, fg) => {
    const d = node.inputs[0] as TensorVariable;
    if (!(d.owner?.op instanceof Det) || d.owner.op.logarithm) return false;
    const [sign, logAbs] = slogdet(d.owner.inputs[0] as TensorVariable);
    const fitted = asTypeOf(where(lt(sign, 0), NaN, logAbs), node.outputs[0] as TensorVariable, fg);
    return fitted ? [fitted] : false;
  }),
  'linalg',
);

/** det(a) -> prod(diag(L))^2 where the graph also computes L = cholesky(a) (PyTensor's local_det_chol). */
registerStabilize(
  nodeRewriter('local_det_chol', [Det], (node, fg) => {
    if ((node.op as Det).logarithm) return false;
    const a = node.inputs[0]!;
    const chol = fg.clients(a).find((c) => c.kind === 'apply' && c.node.op instanceof Cholesky);
    if (chol === undefined || chol.kind !== 'apply') return false;
    const factor = chol.node.outputs[0] as TensorVariable;
    const fitted = asTypeOf(sqr(prod(diagonal(factor, { axis1: -2, axis2: -1 }), -1)), node.outputs[0] as TensorVariable, fg);
    return fitted ? [fitted] : false;
  }),
  'linalg',
);
