// `weft.pt`: the tensor namespace users build graphs with, as PyTensor's `pytensor.tensor`.
import './methods.js';

export { scalar, vector, matrix, tensor3, tensor4, tensor } from './core/constructors.js';
export { constant, asTensorVariable } from './core/as-tensor.js';
export {
  add, sub, mul, trueDiv, intDiv, mod, pow, neg, abs, sign, exp, expm1, log, log1p, log2, log10, sqrt, sqr,
  sin, cos, tan, arcsin, arccos, arctan, arctan2, sinh, cosh, tanh, sigmoid, softplus, erf, erfc, floor, ceil,
  round, clip, maximum, minimum, where, eq, neq, lt, le, gt, ge, and, or, xor, not, cast,
  arcsinh, arccosh, arctanh, reciprocal, exp2, trunc, isnan, isinf, logaddexp, log1mexp, logit, xlogx, xlogy0,
} from './elemwise/math.js';
export { sum, prod, mean, max, min, argmax, argmin, all, any, variance as var, std, logsumexp } from './elemwise/reduce.js';
export { reshape, flatten } from './shape/reshape.js';
export { dimshuffle, transpose } from './shape/dimshuffle.js';
export { concatenate, stack, split } from './shape/join.js';
export { alloc, zeros, ones, zerosLike, onesLike, broadcastTo } from './shape/alloc.js';
export { arange, eye, full, linspace } from './shape/creation.js';
export { squeeze, expandDims, swapaxes, flip } from './shape/axes.js';
export { roll, tile, repeat, pad, diff } from './shape/rearrange.js';
export { tril, triu, oneHot, diagonal, trace, diag } from './shape/masks.js';
export { shape } from './shape/shape.js';
export { get, setSubtensor, incSubtensor, take } from './shape/indexing.js';
export { nonzero } from './shape/nonzero.js';
export { dot, matmul, outer } from './linalg/linalg.js';
import { cholesky, choSolve, det, inv, slogdet, solve, solveTriangular } from './linalg/dense.js';
import { eigh, expm, lu, qr, svd } from './linalg/decompositions.js';
import { kron, lstsq, matrixPower, norm, pinv } from './linalg/matrix-functions.js';
/** pt.linalg: the functions only (their op classes stay in tensor/linalg/dense.ts, decompositions.ts and matrix-functions.ts). */
export const linalg = Object.freeze({ inv, det, slogdet, solve, solveTriangular, cholesky, choSolve, eigh, svd, qr, lu, pinv, lstsq, norm, matrixPower, expm, kron });
export type { SolveOptions, SolveTriangularOptions } from './linalg/dense.js';
export type { QrMode, QrOptions, SvdOptions } from './linalg/decompositions.js';
export type { NormOptions } from './linalg/matrix-functions.js';
export { softmax, logSoftmax, relu } from './nnet/nnet.js';
export { categoricalCrossentropy, binaryCrossentropy } from './nnet/crossentropy.js';
export { conv2d, type Conv2dOptions } from './nnet/conv.js';
export { pool2d, type Pool2dOptions } from './nnet/pool.js';
export { cumsum, cumprod } from './extra/cumulative.js';
export { sort, argsort, topk, argtopk, searchsorted } from './extra/sorting.js';
export { bincount, unique } from './extra/counting.js';
export * as special from './special/special.js';
export { TensorType } from './core/type.js';
export { TensorVariable, TensorConstant, TensorSharedVariable } from './core/variable.js';
