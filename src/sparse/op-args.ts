// What sparse ops share when they build nodes: dense matrix arguments checked by op and position,
// the float result dtype of mixed operands, and the symbolic lengths of any matrix input.
import type { Apply } from '../graph/apply.js';
import type { SymbolicShape } from '../graph/op.js';
import type { Variable } from '../graph/variable.js';
import { asTensorVariable } from '../tensor/core/as-tensor.js';
import { upcast } from '../tensor/core/dtype.js';
import { TensorType } from '../tensor/core/type.js';
import type { TensorLike, TensorVariable } from '../tensor/core/variable.js';
import type { Dtype } from '../kernels/dtype.js';
import { isSparseVariable, SparseTensorType } from './type.js';
import { lengthsOf } from './length.js';
import type { SparseDtype, SparseFormat } from './value.js';

/** `x` as a dense matrix; `where` names the op and the argument ("structuredDot: input 1"). */
export function denseMatrix(x: unknown, where: string): TensorVariable {
  if (isSparseVariable(x)) throw new TypeError(`${where}: expected a dense matrix, got the sparse ${x} (${x.type})`);
  let v: TensorVariable;
  try {
    v = asTensorVariable(x as TensorLike);
  } catch (e) {
    throw new TypeError(`${where}: ${(e as Error).message}`);
  }
  if (v.ndim !== 2) throw new TypeError(`${where}: expected a matrix (2-d), got ${v} (${v.type})`);
  return v;
}

/** The result dtype of operands of these dtypes (NumPy's upcast), which must be float32 or float64. */
export function floatResult(where: string, ...dtypes: readonly Dtype[]): SparseDtype {
  const d = upcast(...dtypes);
  if (d !== 'float32' && d !== 'float64') throw new TypeError(`${where}: sparse ops compute in float32 or float64, but these operands (${dtypes.join(', ')}) give ${d}`);
  return d;
}

export function sparseOutput(format: SparseFormat, dtype: SparseDtype): Variable {
  return new SparseTensorType(format, dtype).makeVariable();
}

export function denseOutput(dtype: SparseDtype, ndim: 0 | 1 | 2): TensorVariable {
  return new TensorType(dtype, new Array<null>(ndim).fill(null)).makeVariable();
}

/**
 * The symbolic lengths of input `i`: a dense input's from `shapes` (what the caller inferred), a
 * sparse input's from its own length ops (shape features give sparse inputs no shapes).
 */
export function inputLengths(node: Apply, shapes: readonly SymbolicShape[], i: number): SymbolicShape {
  const v = node.inputs[i]!;
  return isSparseVariable(v) ? lengthsOf(v) : shapes[i]!;
}

/** The dtype of a sparse op's output j (sparse or dense, always float32 or float64). */
export function outputDtype(node: Apply, j = 0): SparseDtype {
  return (node.outputs[j]!.type as SparseTensorType | TensorType).dtype as SparseDtype;
}
