// The sparse ops' names in documents (weft.serialize / deserialize): each class by its name,
// rebuilt from its props. SparseTensorType registers itself where it is defined (type.ts).
import { registerOpCodec } from '../graph/op-codecs.js';
import type { PropsOpClass } from '../graph/prop-codec.js';
import { GetBlock, PadBlock, Stack } from './blocks.js';
import { AddSD, AddSS, MulSD, MulSS, Neg } from './arith.js';
import { CSM, CSMGrad, DenseFromSparse, SparseFromDense, SparseToFormat } from './convert.js';
import { CompressedSwitch, CompressedTimesDense, CompressedToDense, ProductsAt, ValuesAt } from './compressed.js';
import { Diag, SquareDiagonal } from './diagonal.js';
import { CSMProperties, SparseFromParts } from './parts.js';
import { SamplingDot, SparseDot, StructuredDot, StructuredDotGrad } from './dot.js';
import { SparseLength } from './length.js';
import { SparseOnesLike, SparseZerosLike, Transpose } from './structure.js';
import { StructuredMap } from './structured.js';
import { SparseSum } from './sum.js';

const classes: readonly PropsOpClass[] = [
  AddSD, AddSS, MulSD, MulSS, Neg,
  CSM, CSMGrad, DenseFromSparse, SparseFromDense, SparseToFormat,
  SparseDot, StructuredDot, StructuredDotGrad, SamplingDot,
  SparseLength, SparseOnesLike, SparseZerosLike, Transpose,
  SparseSum, StructuredMap,
  GetBlock, PadBlock, Stack,
  Diag, SquareDiagonal,
  // The lowered forms (a rewritten graph's): the parts and the tensor ops over them.
  CSMProperties, SparseFromParts,
  CompressedTimesDense, CompressedSwitch, ProductsAt, ValuesAt, CompressedToDense,
];
for (const c of classes) registerOpCodec(c, { name: `sparse.${c.name}` });
