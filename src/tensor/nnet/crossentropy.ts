// Crossentropies as compositions that stay finite for any logits: the logarithm is taken before
// the labels pick from it, so that the rewrites turn log(softmax(x)) into logSoftmax(x); of a
// sigmoid, the binary one is written with softplus of the logits, its gradient finite too.
import { isIntDtype } from '../../kernels/dtype.js';
import { asTensorVariable } from '../core/as-tensor.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { Elemwise } from '../elemwise/elemwise.js';
import { add, log, mul, neg, softplus, sub } from '../elemwise/math.js';
import * as S from '../scalar/catalog.js';
import { sum } from '../elemwise/reduce.js';
import { arange } from '../shape/creation.js';
import { get } from '../shape/indexing.js';
import { reshape } from '../shape/reshape.js';
import { shapeOf } from '../shape/shape.js';

/**
 * -sum(trueDist * log(codingDist)) over the last axis (PyTensor's categorical_crossentropy):
 * trueDist holds probabilities (codingDist's shape) or integer labels (one axis fewer), in
 * which case it is -log(codingDist) at each label.
 */
export function categoricalCrossentropy(codingDist: TensorLike, trueDist: TensorLike): TensorVariable {
  const p = asTensorVariable(codingDist);
  const q = asTensorVariable(trueDist);
  if (p.ndim === 0) throw new TypeError(`categoricalCrossentropy: the coding distribution must have a class axis, got ${p} (${p.type})`);
  if (q.ndim === p.ndim) return neg(sum(mul(q, log(p)), p.ndim - 1));
  if (q.ndim !== p.ndim - 1) {
    throw new TypeError(`categoricalCrossentropy: the true distribution ${q} (${q.type}) must have the ${p.ndim} axes of ${p} or ${p.ndim - 1} (integer labels)`);
  }
  if (!isIntDtype(q.dtype)) throw new TypeError(`categoricalCrossentropy: labels with one axis fewer than ${p} must be integers, got ${q} (${q.type})`);
  const logs = log(p);
  if (p.ndim === 1) return neg(get(logs, q));
  // Rows of classes, one label each: log(p)[arange(rows), labels], in the labels' shape.
  const lengths = shapeOf(p);
  const rows = p.ndim === 2 ? logs : reshape(logs, [-1, lengths[p.ndim - 1]!]);
  const labels = p.ndim === 2 ? q : reshape(q, [-1]);
  const picked = get(rows, arange(shapeOf(rows)[0]!), labels);
  return neg(p.ndim === 2 ? picked : reshape(picked, shapeOf(q)));
}

/**
 * -(target log(output) + (1 - target) log(1 - output)), element-wise (PyTensor's
 * binary_crossentropy). Of a sigmoid(z) it is written in z, t softplus(-z) + (1 - t) softplus(z)
 * (PyTensor's sigmoid_binary_crossentropy): finite, and so is its gradient sigmoid(z) - t,
 * which the formula's 0 / 0 at saturated outputs would make NaN.
 */
export function binaryCrossentropy(output: TensorLike, target: TensorLike): TensorVariable {
  const o = asTensorVariable(output);
  const t = asTensorVariable(target);
  const node = o.owner;
  if (node && node.op instanceof Elemwise && node.op.scalarOp === S.sigmoid) {
    const z = node.inputs[0] as TensorVariable;
    return add(mul(t, softplus(neg(z))), mul(sub(1, t), softplus(z)));
  }
  return neg(add(mul(t, log(o)), mul(sub(1, t), log(sub(1, o)))));
}
