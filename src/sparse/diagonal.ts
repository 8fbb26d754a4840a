// Diagonals (PyTensor's Diag and SquareDiagonal): the diagonal of a square sparse matrix as a
// dense vector, and a dense vector as a square sparse diagonal matrix. Each is the other's
// gradient, and both gradients are true (the vector side is dense).
import { Apply } from '../graph/apply.js';
import { Op, type SymbolicShape } from '../graph/op.js';
import type { Variable } from '../graph/variable.js';
import { asTensorVariable } from '../tensor/core/as-tensor.js';
import { empty, flatValues, type NdArray } from '../tensor/core/ndarray.js';
import { lazy } from '../tensor/core/op.js';
import type { TensorLike, TensorVariable } from '../tensor/core/variable.js';
import { entryAt } from './compute.js';
import { FormatOp, perFormat } from './format-op.js';
import { denseOutput, floatResult, outputDtype, sparseOutput } from './op-args.js';
import { sparseLength } from './length.js';
import { asSparseVariable, type SparseVariable } from './type.js';
import { DATA_CLASS, trustedSparse, type SparseFormat, type SparseValue } from './value.js';

/** The diagonal of a square sparse matrix: a dense vector (0 where nothing is stored). */
export class Diag extends Op<Variable> {
  override makeNode(s: unknown): Apply {
    const v = asSparseVariable(s, 'sparse.diag: input 0');
    return new Apply(this, [v], [denseOutput(v.dtype, 1)]);
  }

  override perform(node: Apply, [s]: readonly unknown[]): unknown[] {
    const v = s as SparseValue;
    if (v.shape[0] !== v.shape[1]) throw new RangeError(`sparse.diag: expected a square matrix, got shape [${v.shape.join(', ')}]`);
    const out = empty(outputDtype(node), [v.shape[0]]);
    // (i, i) is at outer i, inner i in either format.
    for (let i = 0; i < v.shape[0]; i++) out.data[i] = entryAt(v, i, i);
    return [out];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    return [[sparseLength(node.inputs[0]!, 0)]];
  }

  override grad([s]: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    return [squareDiagonal(gz!, (s as SparseVariable).format)];
  }

  override rop(_inputs: readonly Variable[], [es]: readonly Variable[]): Variable[] {
    return [diag(es!)];
  }
}

/** A dense vector as the diagonal of a square sparse matrix of `format` (every entry stored, zeros too). */
export class SquareDiagonal extends FormatOp {
  override makeNode(d: unknown): Apply {
    const v = asTensorVariable(d as TensorLike);
    if (v.ndim !== 1) throw new TypeError(`sparse.squareDiagonal: input 0: expected a vector, got ${v} (${v.type})`);
    return new Apply(this, [v], [sparseOutput(this.format, floatResult('sparse.squareDiagonal', v.dtype))]);
  }

  override perform(node: Apply, [d]: readonly unknown[]): unknown[] {
    const values = flatValues(d as NdArray);
    const n = values.length;
    const ramp = Int32Array.from({ length: n + 1 }, (_, i) => i);
    return [trustedSparse(this.format, [n, n], DATA_CLASS[outputDtype(node)].from(values), ramp.slice(0, n), ramp)];
  }

  override inferShape(_node: Apply, [ds]: readonly SymbolicShape[]): SymbolicShape[] {
    return [[ds![0]!, ds![0]!]];
  }

  override grad(_inputs: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    return [diag(gz!)];
  }

  override rop(_inputs: readonly Variable[], [ed]: readonly Variable[]): Variable[] {
    return [squareDiagonal(ed!, this.format)];
  }
}

const diagOp = lazy(() => new Diag());
const squareDiagonalOps = perFormat((f) => new SquareDiagonal(f));

/** `weft.sparse.diag(s)`: the diagonal of a square sparse matrix, dense. */
export function diag(s: unknown): TensorVariable {
  return diagOp().call(s) as TensorVariable;
}

/** `weft.sparse.squareDiagonal(d, format = 'csc')`: the square sparse matrix with diagonal d. */
export function squareDiagonal(d: unknown, format: SparseFormat = 'csc'): SparseVariable {
  const make = squareDiagonalOps[format];
  if (!make) throw new TypeError(`sparse.squareDiagonal: format must be "csr" or "csc", got ${JSON.stringify(format)}`);
  return make().call(d) as SparseVariable;
}
