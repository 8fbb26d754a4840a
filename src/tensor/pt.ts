// `weft.pt`: the tensor namespace users build graphs with, as PyTensor's `pytensor.tensor`.
import './methods.js';

export { scalar, vector, matrix, tensor3, tensor4, tensor } from './constructors.js';
export { constant, asTensorVariable } from './as-tensor.js';
export {
  add, sub, mul, trueDiv, intDiv, mod, pow, neg, abs, sign, exp, expm1, log, log1p, log2, log10, sqrt, sqr,
  sin, cos, tan, arcsin, arccos, arctan, arctan2, sinh, cosh, tanh, sigmoid, softplus, erf, erfc, floor, ceil,
  round, clip, maximum, minimum, where, eq, neq, lt, le, gt, ge, and, or, xor, not, cast,
} from './math.js';
export { sum, prod, mean, max, min, argmax, argmin, all, any, variance as var, std } from './reduce.js';
export { reshape, flatten } from './reshape.js';
export { dimshuffle, transpose } from './dimshuffle.js';
export { concatenate, stack, split } from './join.js';
export { alloc, zeros, ones, zerosLike, onesLike } from './alloc.js';
export { arange, eye } from './creation.js';
export { shape } from './shape.js';
export { get, setSubtensor, incSubtensor } from './subtensor.js';
export { dot, matmul, outer } from './linalg.js';
export { softmax, logSoftmax, relu } from './nnet.js';
export { TensorType } from './type.js';
export { TensorVariable, TensorConstant, TensorSharedVariable } from './variable.js';
