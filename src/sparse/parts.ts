// A sparse matrix and its parts as tensors, both ways: CSMProperties (PyTensor's) takes a matrix
// apart into data, indices, indptr and shape, views of its arrays; SparseFromParts makes one of
// parts that weft computed (unchecked, unlike CSM, which checks a user's). The lowering rewrites
// (lowering.ts) write sparse ops as tensor ops between the two, and planners, which hold a sparse
// value as exactly these parts (SparseTensorType.partsLayout), map one to the other (Op.partsRole).
import { Apply } from '../graph/apply.js';
import { Op, type SymbolicShape } from '../graph/op.js';
import type { Variable } from '../graph/variable.js';
import { flatValues, makeNdArray, type NdArray } from '../tensor/core/ndarray.js';
import { lazy } from '../tensor/core/op.js';
import { TensorType } from '../tensor/core/type.js';
import type { TensorVariable } from '../tensor/core/variable.js';
import { stack } from '../tensor/shape/join.js';
import { FormatOp, perFormat } from './format-op.js';
import { sparseOutput } from './op-args.js';
import { asSparseVariable, type SparseLike, type SparseVariable } from './type.js';
import { trustedSparse, type SparseData, type SparseDtype, type SparseFormat, type SparseValue } from './value.js';

/** A sparse matrix's data, indices, indptr and shape (int32 [rows, columns]) as tensors. */
export class CSMProperties extends Op<Variable[]> {
  override readonly partsRole = 'split';
  override readonly viewMap = { 0: [0], 1: [0], 2: [0] };

  override makeNode(s: unknown): Apply {
    const v = asSparseVariable(s, 'CSMProperties: input 0');
    const vector = (dtype: SparseDtype | 'int32'): Variable => new TensorType(dtype, [null]).makeVariable();
    return new Apply(this, [v], [vector(v.dtype), vector('int32'), vector('int32'), new TensorType('int32', [2]).makeVariable()]);
  }

  override perform(_node: Apply, [s]: readonly unknown[]): unknown[] {
    const v = s as SparseValue;
    return [makeNdArray(v.data, [v.data.length]), makeNdArray(v.indices, [v.indices.length]), makeNdArray(v.indptr, [v.indptr.length]), makeNdArray(Int32Array.of(v.shape[0], v.shape[1]), [2])];
  }

  override connectionPattern(): boolean[][] {
    return [[false, false, false, false]];
  }
}

/** A matrix of `format` from parts weft computed (canonical already): its data is a view of input 0. */
export class SparseFromParts extends FormatOp {
  override readonly partsRole = 'join';
  override readonly viewMap = { 0: [0] };

  override makeNode(data: unknown, indices: unknown, indptr: unknown, shape: unknown): Apply {
    const d = data as TensorVariable;
    return new Apply(this, [d, indices as Variable, indptr as Variable, shape as Variable], [sparseOutput(this.format, d.dtype as SparseDtype)]);
  }

  override perform(_node: Apply, [data, indices, indptr, shape]: readonly unknown[]): unknown[] {
    const s = flatValues(shape as NdArray);
    return [trustedSparse(this.format, [s[0]!, s[1]!], flatValues(data as NdArray) as SparseData, flatValues(indices as NdArray).slice() as Int32Array, flatValues(indptr as NdArray).slice() as Int32Array)];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    const shape = node.inputs[3] as TensorVariable;
    return [[shape.get(0), shape.get(1)]];
  }
}

const csmPropertiesOp = lazy(() => new CSMProperties());
const fromPartsOps = perFormat((f) => new SparseFromParts(f));

/** The parts of a sparse matrix: [data, indices, indptr, shape]. */
export type Parts = readonly [data: TensorVariable, indices: TensorVariable, indptr: TensorVariable, shape: TensorVariable];

export function partsOf(s: SparseLike): Parts {
  return csmPropertiesOp().call(s) as unknown as Parts;
}

export function fromParts(format: SparseFormat, [data, indices, indptr, shape]: Parts): SparseVariable {
  return fromPartsOps[format]().call(data, indices, indptr, shape) as SparseVariable;
}

/** The parts of the transpose (the other format over the same arrays): only the shape turns. */
export function transposedParts([data, indices, indptr, shape]: Parts): Parts {
  return [data, indices, indptr, stack([shape.get(1), shape.get(0)])];
}

export const otherFormat = (f: SparseFormat): SparseFormat => (f === 'csr' ? 'csc' : 'csr');
