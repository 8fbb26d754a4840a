// Matrix products of per-step rows written over the whole stack of rows (the push-out rewrites'
// arithmetic): a row times a fixed operand as one product of the stack flattened to a matrix, and
// the sum over the steps of the products of two rows as one product of the two stacks laid side by side.
import { isSliceSpec } from '../../../kernels/subtensor.js';
import type { TensorVariable } from '../../core/variable.js';
import { mul } from '../../elemwise/math.js';
import { dot } from '../../linalg/linalg.js';
import { DimShuffle, dimshuffle, transpose } from '../../shape/dimshuffle.js';
import { flatten, reshape } from '../../shape/reshape.js';
import { shapeOf } from '../../shape/shape.js';
import { Subtensor } from '../../shape/subtensor.js';

type TV = TensorVariable;

/**
 * The stack of `dot(x_t, m)` (`rowFirst`) or `dot(m, x_t)` over the steps, from the stack `xs` of
 * the rows x_t ([n, ...row], a row a vector or a matrix) and the fixed operand `m`: one product.
 */
export function dotOverSteps(xs: TV, m: TV, rowFirst: boolean): TV {
  const [n, ...row] = shapeOf(xs);
  if (xs.ndim === 2) return rowFirst || m.ndim === 1 ? dot(xs, m) : dot(xs, transpose(m));
  if (rowFirst) {
    // [n, b, k] as [n*b, k]: every row of every step meets m in one product.
    const [b, k] = row as [TV, TV];
    return reshape(dot(reshape(xs, [mul(n!, b), k]), m), [n!, b, ...shapeOf(m).slice(1)]);
  }
  // dot(m, x_t) with x_t [k, b]: the steps side by side along x_t's columns, [k, n*b].
  const [k, b] = row as [TV, TV];
  const product = dot(m, reshape(dimshuffle(xs, [1, 0, 2]), [k, mul(n!, b)]));
  if (m.ndim === 1) return reshape(product, [n!, b]);
  return dimshuffle(reshape(product, [shapeOf(m)[0]!, n!, b]), [1, 0, 2]);
}

/**
 * `xs` when it is the stack of transposed rows (x_t = y_t.T): the stack of y_t, else undefined.
 * A cut of the steps (a sequence's first nSteps rows) commutes with the transpose of the rows.
 */
function untransposed(xs: TV): TV | undefined {
  const node = xs.owner;
  if (node?.op instanceof Subtensor && node.op.idxList.length === 1 && isSliceSpec(node.op.idxList[0]!)) {
    const ys = untransposed(node.inputs[0] as TV);
    return ys && (node.op.makeNode(ys, ...node.inputs.slice(1)).outputs[0] as TV);
  }
  if (!(node?.op instanceof DimShuffle)) return undefined;
  const order = node.op.newOrder;
  return order.length === 3 && order[0] === 0 && order[1] === 2 && order[2] === 1 ? (node.inputs[0] as TV) : undefined;
}

/**
 * The sum over the steps of `dot(a_t, b_t)`, from the stacks of a_t and b_t: a_t's last axis
 * meets b_t's first, so laying the steps one after another along that axis makes one product
 * (a_t [p, q], b_t [q, r]: [p, n*q] times [n*q, r]). Rows that are transposed (the gradient of a
 * weight, x_t.T times a delta) are flattened before they are transposed: no copy of the transpose.
 */
export function summedDotOverSteps(as: TV, bs: TV): TV {
  let left: TV;
  if (as.ndim === 2) left = flatten(as);
  else {
    const ys = untransposed(as);
    const [n, p, q] = shapeOf(as) as [TV, TV, TV];
    left = ys ? transpose(reshape(ys, [mul(n, q), p])) : reshape(dimshuffle(as, [1, 0, 2]), [p, mul(n, q)]);
  }
  const [n, q, r] = shapeOf(bs);
  const right = bs.ndim === 2 ? flatten(bs) : reshape(bs, [mul(n!, q!), r!]);
  return dot(left, right);
}
