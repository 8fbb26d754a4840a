// The lengths of a sparse matrix as int32 scalars (its rows and columns): what shape inference
// of sparse ops is made of. Its own module, importing no op module (see unary-op.ts).
import { Apply } from '../graph/apply.js';
import { disconnected } from '../graph/gradient.js';
import { Op, type SymbolicShape } from '../graph/op.js';
import { propKinds } from '../graph/prop-kinds.js';
import type { Variable } from '../graph/variable.js';
import { empty } from '../tensor/core/ndarray.js';
import { lazy } from '../tensor/core/op.js';
import { TensorType } from '../tensor/core/type.js';
import type { TensorVariable } from '../tensor/core/variable.js';
import { asSparseVariable } from './type.js';
import type { SparseValue } from './value.js';

/** One length of a sparse matrix (axis 0: rows, 1: columns), an int32 scalar. */
export class SparseLength extends Op<Variable> {
  static override readonly props = ['axis'] as const;
  static override readonly propKinds = { axis: propKinds.int(0, 1) };

  constructor(readonly axis: 0 | 1) {
    super();
    if (axis !== 0 && axis !== 1) throw new RangeError(`SparseLength: axis must be 0 or 1, got ${String(axis)}`);
  }

  override makeNode(s: unknown): Apply {
    return new Apply(this, [asSparseVariable(s, 'SparseLength: input 0')], [new TensorType('int32', []).makeVariable()]);
  }

  override perform(_node: Apply, [s]: readonly unknown[]): unknown[] {
    const out = empty('int32', []);
    out.data[0] = (s as SparseValue).shape[this.axis];
    return [out];
  }

  override inferShape(): SymbolicShape[] {
    return [[]];
  }

  override grad(): Variable[] {
    return [disconnected()];
  }

  override connectionPattern(): boolean[][] {
    return [[false]];
  }
}

const lengthOps = [lazy(() => new SparseLength(0)), lazy(() => new SparseLength(1))] as const;

/** The number of rows (axis 0) or columns (axis 1) of `s`. */
export function sparseLength(s: Variable, axis: 0 | 1): TensorVariable {
  return lengthOps[axis]().call(s) as TensorVariable;
}

/** `weft.sparse.shape(s)`: [rows, columns] of a sparse matrix, as int32 scalars. */
export function shape(s: unknown): [TensorVariable, TensorVariable] {
  const v = asSparseVariable(s, 'sparse.shape');
  return [sparseLength(v, 0), sparseLength(v, 1)];
}

/** The symbolic [rows, columns] of a sparse variable. */
export function lengthsOf(s: Variable): SymbolicShape {
  return [sparseLength(s, 0), sparseLength(s, 1)];
}
