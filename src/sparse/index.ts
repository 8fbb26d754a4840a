// weft.sparse: sparse matrix types, values and ops (see docs/sparse.md). Re-exports only.
import './codecs.js';
import './rewrites.js';
import './lowering.js';
import './epilogue.js';
export { SparseTensorType, SparseVariable, SparseConstant, csrMatrix, cscMatrix, isSparseVariable, asSparseVariable, type SparseLike } from './type.js';
export { csr, csc, type SparseValue, type SparseParts, type SparseFormat, type SparseDtype } from './value.js';
export { asSparse, dense, toFormat, csrFromData, cscFromData, SparseFromDense, DenseFromSparse, SparseToFormat, CSM, CSMGrad } from './convert.js';
export { transpose, Transpose, SparseOnesLike, SparseZerosLike } from './structure.js';
export { shape, SparseLength } from './length.js';
export { add, sub, mul, neg, Neg, AddSS, AddSD, MulSS, MulSD } from './arith.js';
export { dot, structuredDot, samplingDot, SparseDot, StructuredDot, StructuredDotGrad, SamplingDot } from './dot.js';
export { sum, SparseSum, type SumOptions, type SumAxis } from './sum.js';
export {
  structuredSigmoid,
  structuredExp,
  structuredLog,
  structuredPow,
  structuredMinimum,
  structuredMaximum,
  structuredAddS,
  StructuredMap,
  STRUCTURED_FUNCTIONS,
  type StructuredFunction,
} from './structured.js';
export { get, getBlock, padBlock, vstack, hstack, GetBlock, PadBlock, Stack } from './blocks.js';
export { diag, squareDiagonal, Diag, SquareDiagonal } from './diagonal.js';
