// Ops on a sparse matrix's structure rather than its numbers: its transpose (csr <-> csc over
// the same arrays), and the ones and zeros that gradients are made of.
import { Apply } from '../graph/apply.js';
import { Op, type SymbolicShape } from '../graph/op.js';
import type { Variable } from '../graph/variable.js';
import { lazy } from '../tensor/core/op.js';
import { bindOps } from './bound-ops.js';
import { SparseUnaryOp } from './unary-op.js';
import { transposeValue, withData } from './compute.js';
import { inputLengths, outputDtype, sparseOutput } from './op-args.js';
import { asSparseVariable, type SparseVariable } from './type.js';
import { DATA_CLASS, trustedSparse, type SparseValue } from './value.js';

/** The transpose: csr becomes csc and csc csr, over the same arrays (no data moves). */
export class Transpose extends Op<Variable> {
  override readonly viewMap = { 0: [0] };

  override makeNode(s: unknown): Apply {
    const v = asSparseVariable(s, 'sparse.transpose: input 0');
    return new Apply(this, [v], [sparseOutput(v.format === 'csr' ? 'csc' : 'csr', v.dtype)]);
  }

  override perform(_node: Apply, [s]: readonly unknown[]): unknown[] {
    return [transposeValue(s as SparseValue)];
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    const [rows, cols] = inputLengths(node, shapes, 0);
    return [[cols!, rows!]];
  }

  override grad(_inputs: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    return [transpose(gz!)];
  }

  override rop(_inputs: readonly Variable[], [es]: readonly Variable[]): Variable[] {
    return [transpose(es!)];
  }
}

const transposeOp = lazy(() => new Transpose());

export function transpose(s: unknown): SparseVariable {
  return transposeOp().call(s) as SparseVariable;
}

/** Ones at s's stored positions (PyTensor's sp_ones_like): the pattern of structured gradients. */
export class SparseOnesLike extends SparseUnaryOp {
  protected readonly label = 'SparseOnesLike';

  override perform(_node: Apply, [s]: readonly unknown[]): unknown[] {
    const v = s as SparseValue;
    return [withData(v, new (v.data.constructor as typeof Float64Array)(v.data.length).fill(1))];
  }

  override connectionPattern(): boolean[][] {
    return [[false]];
  }
}

/** A matrix of s's shape, format and dtype that stores nothing: a zero gradient. */
export class SparseZerosLike extends SparseUnaryOp {
  protected readonly label = 'SparseZerosLike';

  override perform(node: Apply, [s]: readonly unknown[]): unknown[] {
    const v = s as SparseValue;
    const outer = v.indptr.length;
    return [trustedSparse(v.format, v.shape, new DATA_CLASS[outputDtype(node)](0), new Int32Array(0), new Int32Array(outer))];
  }

  override connectionPattern(): boolean[][] {
    return [[false]];
  }
}

const onesLikeOp = lazy(() => new SparseOnesLike());
const zerosLikeOp = lazy(() => new SparseZerosLike());

export function sparseOnesLike(s: unknown): SparseVariable {
  return onesLikeOp().call(s) as SparseVariable;
}

export function sparseZerosLike(s: unknown): SparseVariable {
  return zerosLikeOp().call(s) as SparseVariable;
}

bindOps({ onesLike: sparseOnesLike, zerosLike: sparseZerosLike, transpose });
