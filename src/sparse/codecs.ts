// The sparse ops' names in documents (weft.serialize / deserialize): each class by its name,
// rebuilt from its props. SparseTensorType registers itself where it is defined (type.ts).
import { registerOpCodec } from '../graph/op-codecs.js';
import type { PropsOpClass } from '../graph/prop-codec.js';
import { GetBlock, PadBlock, Stack } from './blocks.js';
import { AddSD, AddSS, MulSD, MulSS, Neg } from './arith.js';
import { CSM, CSMGrad, DenseFromSparse, SparseFromDense, SparseToFormat } from './convert.js';
import { CompressedSwitch, CompressedTimesDense, CompressedToDense, FusedTimesDense, ProductsAt, ValuesAt } from './compressed.js';
import { DeserializeError } from '../graph/json-reader.js';
import type { OpPlan } from '../graph/op-codecs.js';
import { Elemwise } from '../tensor/elemwise/elemwise.js';
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

/** A fused product holds two ops: written as nested ops, checked to be a product and an element-wise op when built. */
registerOpCodec<FusedTimesDense, { readonly product: OpPlan; readonly epilogue: OpPlan; readonly position: number; readonly path: string }>({
  name: 'sparse.FusedTimesDense',
  opClass: FusedTimesDense,
  props: ['product', 'epilogue', 'position'],
  encode: (op, encoder) => ({ product: encoder.op(op.product), epilogue: encoder.op(op.epilogue), position: op.position }),
  decode: (r, decoder) => {
    r.object(['product', 'epilogue', 'position']);
    return { product: decoder.op(r.field('product')), epilogue: decoder.op(r.field('epilogue')), position: r.field('position').int(0, 1 << 16), path: r.path };
  },
  build: (p, context) => {
    const [product, epilogue] = [context.op(p.product), context.op(p.epilogue)];
    if (!(product instanceof CompressedTimesDense)) throw new DeserializeError(`${p.path}.product`, `expected a sparse.CompressedTimesDense, got ${product}`);
    if (!(epilogue instanceof Elemwise)) throw new DeserializeError(`${p.path}.epilogue`, `expected an Elemwise, got ${epilogue}`);
    return new FusedTimesDense(product, epilogue, p.position);
  },
});
