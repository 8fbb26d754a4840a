// The lowering rewrites (PyTensor's local_structured_dot and friends; their own phase after
// specialize, tags 'sparse' and 'sparse_lower'): sparse ops whose results have a pattern known
// from their inputs become tensor ops over the matrices' parts (CSMProperties ... SparseFromParts),
// which plans run on the workers, and whose element-wise parts fuse with the rest of the graph:
//   structuredDot(s, d), sparse.dot(s, d), sparse.dot(d, s) -> CompressedTimesDense
//   toFormat(s, f)                                          -> CompressedSwitch
//   StructuredDotGrad, samplingDot                            -> ProductsAt at s's pattern
//   dense(s), sparse + dense -> CompressedToDense;  transpose(s) -> the same parts, the other format
//   neg, the structured functions, ones-like               -> element-wise ops on the data
//   sparse * dense                                          -> data times ValuesAt (the dense side)
//   sparse.sum                                              -> a sum of data; rows/columns as products with ones
//   sparse.shape(s)                                         -> the shape part's elements
// and CSMProperties(SparseFromParts(parts)) -> parts, so lowered ops pass parts along. Ops whose
// pattern depends on values (sparse + sparse, asSparse, sparse . sparse) stay as they are: plans
// run them on the calling thread between stages, once their inputs are known.
import type { Apply } from '../graph/apply.js';
import { EquilibriumDB } from '../graph/rewriting/db.js';
import { optdb } from '../graph/rewriting/optdb.js';
import { nodeRewriter } from '../graph/rewriting/rewriter.js';
import type { FunctionGraph } from '../graph/fgraph.js';
import type { Variable } from '../graph/variable.js';
import type { TensorVariable } from '../tensor/core/variable.js';
import { add, cast, exp, ge, le, log, maximum, minimum, mul, neg, pow, reciprocal, sigmoid, sub } from '../tensor/elemwise/math.js';
import { alloc, onesLike } from '../tensor/shape/alloc.js';
import { flatten } from '../tensor/shape/reshape.js';
import { sum } from '../tensor/elemwise/reduce.js';
import { transpose as denseTranspose } from '../tensor/shape/dimshuffle.js';
import { asTypeOf } from '../tensor/rewriting/like.js';
import { AddSD, MulSD, Neg } from './arith.js';
import { compressedToDense, outerOf, productsAt, switchedParts, timesDense, valuesAt } from './compressed.js';
import { DenseFromSparse, SparseToFormat } from './convert.js';
import { SamplingDot, SparseDot, StructuredDot, StructuredDotGrad } from './dot.js';
import { SparseLength } from './length.js';
import { CSMProperties, fromParts, otherFormat, partsOf, SparseFromParts, transposedParts, type Parts } from './parts.js';
import { SparseOnesLike, Transpose } from './structure.js';
import { StructuredMap } from './structured.js';
import { SparseSum } from './sum.js';
import { isSparseVariable, type SparseLike } from './type.js';

/** After specialize (whose sparse rewrites look for dense(s) and the sparse ops), before fusion. */
const lowerDB = new EquilibriumDB('sparse_lower');
optdb.register('sparse_lower', lowerDB, { tags: ['fast_run', 'sparse', 'sparse_lower'], position: 2.5 });

const lower = (name: string, tracks: Parameters<typeof nodeRewriter>[1], transform: (node: Apply, fg: FunctionGraph) => Variable | false): void =>
  lowerDB.register(name, nodeRewriter(name, tracks, (node, fg) => {
    const v = transform(node, fg);
    return v ? [v] : false;
  }), { tags: ['fast_run', 'sparse', 'sparse_lower'] });

/** A dense result fitted to the node's output type (dtype, static shape), or false. */
function dense(node: Apply, v: TensorVariable, fg: FunctionGraph): TensorVariable | false {
  return asTypeOf(v, node.outputs[0] as TensorVariable, fg) ?? false;
}

/** A sparse result of the node's output type, or false. */
function sparse(node: Apply, v: Variable): Variable | false {
  return v.type.equals(node.outputs[0]!.type) ? v : false;
}

/** The parts with other data, cast to the dtype of the node's (sparse) output. */
function withData(node: Apply, [, indices, indptr, shape]: Parts, data: TensorVariable): Variable | false {
  const dtype = (node.outputs[0] as SparseLike).dtype;
  const format = (node.outputs[0] as SparseLike).format;
  return sparse(node, fromParts(format, [data.dtype === dtype ? data : cast(data, dtype), indices, indptr, shape]));
}

lowerDB.register(
  'sparse_parts_of_parts',
  nodeRewriter('sparse_parts_of_parts', [CSMProperties], (node) => {
    const made = node.inputs[0]!.owner;
    if (!(made?.op instanceof SparseFromParts)) return false;
    return made.inputs.every((v, j) => v.type.equals(node.outputs[j]!.type)) ? [...made.inputs] : false;
  }),
  { tags: ['fast_run', 'sparse', 'sparse_lower'] },
);

lower('sparse_structured_dot_lower', [StructuredDot], (node, fg) => {
  const [s, d] = node.inputs as [SparseLike, TensorVariable];
  return dense(node, timesDense(outerOf(s.format), 'structuredDot', partsOf(s), d), fg);
});

lower('sparse_dot_lower', [SparseDot], (node, fg) => {
  const [a, b] = node.inputs;
  if (isSparseVariable(a) && !isSparseVariable(b)) return dense(node, timesDense(outerOf(a.format), 'sparse.dot', partsOf(a), b as TensorVariable), fg);
  if (!isSparseVariable(a) && isSparseVariable(b)) {
    // d s = (s^T d^T)^T, s^T being the other format over s's arrays.
    const product = timesDense(outerOf(otherFormat(b.format)), 'sparse.dot', transposedParts(partsOf(b)), denseTranspose(a as TensorVariable), true);
    return dense(node, denseTranspose(product), fg);
  }
  return false;
});

lower('sparse_to_format_lower', [SparseToFormat], (node) => {
  const s = node.inputs[0] as SparseLike;
  const to = (node.op as SparseToFormat).format;
  return sparse(node, s.format === to ? s : fromParts(to, switchedParts(outerOf(s.format), partsOf(s))));
});

lower('sparse_structured_dot_grad_lower', [StructuredDotGrad], (node) => {
  const [s, d, gz] = node.inputs as [SparseLike, TensorVariable, TensorVariable];
  const parts = partsOf(s);
  return withData(node, parts, productsAt(outerOf(s.format), false, 'the gradient of structuredDot', parts, gz, d));
});

lower('sparse_sampling_dot_lower', [SamplingDot], (node) => {
  const [x, y, p] = node.inputs as [TensorVariable, TensorVariable, SparseLike];
  const parts = partsOf(p);
  return withData(node, parts, productsAt(outerOf(p.format), true, 'samplingDot', parts, x, y, parts[0]));
});

lower('sparse_transpose_lower', [Transpose], (node) => {
  const s = node.inputs[0] as SparseLike;
  return sparse(node, fromParts(otherFormat(s.format), transposedParts(partsOf(s))));
});

lower('sparse_dense_lower', [DenseFromSparse], (node, fg) => {
  const s = node.inputs[0] as SparseLike;
  return dense(node, compressedToDense(outerOf(s.format), partsOf(s)), fg);
});

lower('sparse_add_dense_lower', [AddSD], (node, fg) => {
  const [s, d] = node.inputs as [SparseLike, TensorVariable];
  return dense(node, compressedToDense(outerOf(s.format), partsOf(s), d), fg);
});

lower('sparse_length_lower', [SparseLength], (node) => {
  const shape = partsOf(node.inputs[0] as SparseLike)[3];
  return shape.get((node.op as SparseLength).axis);
});

/** f of the stored values (or f', for a structured gradient), as tensor ops. */
function structuredData(op: StructuredMap, x: TensorVariable): TensorVariable {
  const p = op.p;
  if (!op.derivative) {
    switch (op.fn) {
      case 'sigmoid':
        return sigmoid(x);
      case 'exp':
        return exp(x);
      case 'log':
        return log(x);
      case 'pow':
        return pow(x, p);
      case 'minimum':
        return minimum(x, p);
      case 'maximum':
        return maximum(x, p);
      case 'addS':
        return add(x, p);
    }
  }
  switch (op.fn) {
    case 'sigmoid': {
      const s = sigmoid(x);
      return mul(s, sub(1, s));
    }
    case 'exp':
      return exp(x);
    case 'log':
      return reciprocal(x);
    case 'pow':
      return mul(p, pow(x, p - 1));
    case 'minimum':
      return cast(le(x, p), x.dtype);
    case 'maximum':
      return cast(ge(x, p), x.dtype);
    case 'addS':
      return onesLike(x);
  }
}

lower('sparse_structured_map_lower', [StructuredMap], (node) => {
  const parts = partsOf(node.inputs[0] as SparseLike);
  return withData(node, parts, structuredData(node.op as StructuredMap, parts[0]));
});

lower('sparse_mul_dense_lower', [MulSD], (node) => {
  const [s, d] = node.inputs as [SparseLike, TensorVariable];
  const parts = partsOf(s);
  return withData(node, parts, mul(parts[0], valuesAt(outerOf(s.format), 'sparse.mul', parts, d)));
});

/** sum of all stored values; per row or column, as s times a column of ones (s^T for columns): in storage order. */
lower('sparse_sum_lower', [SparseSum], (node, fg) => {
  const s = node.inputs[0] as SparseLike;
  const axis = (node.op as SparseSum).axis;
  const parts = partsOf(s);
  if (axis === 'all') return dense(node, sum(parts[0]), fg);
  // Row sums (axis 1) of s; column sums (axis 0) are the row sums of s^T, the other format over s's arrays.
  const [format, rowsOf] = axis === 1 ? [s.format, parts] : [otherFormat(s.format), transposedParts(parts)];
  const ones = alloc(cast(1, parts[0].dtype), rowsOf[3].get(1), 1);
  return dense(node, flatten(timesDense(outerOf(format), 'sparse.sum', rowsOf, ones)), fg);
});

lower('sparse_neg_lower', [Neg], (node) => {
  const parts = partsOf(node.inputs[0] as SparseLike);
  return withData(node, parts, neg(parts[0]));
});

lower('sparse_ones_like_lower', [SparseOnesLike], (node) => {
  const parts = partsOf(node.inputs[0] as SparseLike);
  return withData(node, parts, onesLike(parts[0]));
});
