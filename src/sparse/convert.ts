// Conversions between dense and sparse matrices: asSparse (dense -> sparse, the entries that are
// not 0), dense (sparse -> dense), and csrFromData / cscFromData (PyTensor's CSM: a matrix from
// its parts as tensors), whose gradient with respect to the data vector is CSMGrad's.
import { Apply } from '../graph/apply.js';
import { disconnected } from '../graph/gradient.js';
import { Op, type SymbolicShape } from '../graph/op.js';
import { propKinds } from '../graph/prop-kinds.js';
import type { Variable } from '../graph/variable.js';
import { asTensorVariable } from '../tensor/core/as-tensor.js';
import { flatValues, makeNdArray, type NdArray } from '../tensor/core/ndarray.js';
import { lazy } from '../tensor/core/op.js';
import type { TensorLike, TensorVariable } from '../tensor/core/variable.js';
import { isFloatDtype, isIntDtype } from '../kernels/dtype.js';
import { asFormat, entryAt, fromDense, toDense, withData } from './compute.js';
import { mulSparseDense } from './arith.js';
import { denseMatrix, denseOutput, floatResult, inputLengths, outputDtype, sparseOutput } from './op-args.js';
import { FormatOp, perFormat } from './format-op.js';
import { bindOps } from './bound-ops.js';
import { sparseOnesLike } from './structure.js';
import { asSparseVariable, type SparseVariable } from './type.js';
import { DATA_CLASS, makeSparse, outerInner, type SparseDtype, type SparseFormat, type SparseValue } from './value.js';

/** A dense float matrix as a sparse one of `format`: its entries that are not 0 (NaNs are kept). */
export class SparseFromDense extends FormatOp {
  override makeNode(x: unknown): Apply {
    const v = denseMatrix(x, 'asSparse: input 0');
    return new Apply(this, [v], [sparseOutput(this.format, floatResult('asSparse', v.dtype))]);
  }

  override perform(node: Apply, [x]: readonly unknown[]): unknown[] {
    return [fromDense(x as NdArray, this.format, outputDtype(node))];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [xs!];
  }

  /** The true gradient: the sparse gradient as a dense matrix. */
  override grad(_inputs: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    return [dense(gz!)];
  }

  /** The matrix moves as x does: its tangent is the tangent's entries (x's zeros included). */
  override rop(_inputs: readonly Variable[], [ex]: readonly Variable[]): Variable[] {
    return [asSparse(ex!, this.format)];
  }
}

/**
 * A sparse matrix as a dense one. Its gradient with respect to the sparse input is structured by
 * default (PyTensor's sparse_grad=True: the output gradient at the input's stored positions
 * only); with `sparseGrad: false`, the true gradient (every entry of the output gradient).
 */
export class DenseFromSparse extends Op<Variable> {
  static override readonly props = ['sparseGrad'] as const;
  static override readonly propKinds = { sparseGrad: propKinds.boolean() };

  constructor(readonly sparseGrad: boolean = true) {
    super();
  }

  override makeNode(s: unknown): Apply {
    const v = asSparseVariable(s, 'dense: input 0');
    return new Apply(this, [v], [denseOutput(v.dtype, 2)]);
  }

  override perform(_node: Apply, [s]: readonly unknown[]): unknown[] {
    return [toDense(s as SparseValue)];
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    return [inputLengths(node, shapes, 0)];
  }

  override grad([s]: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    const v = s as SparseVariable;
    return [this.sparseGrad ? mulSparseDense(sparseOnesLike(v), gz!) : asSparse(gz!, v.format)];
  }

  override rop(_inputs: readonly Variable[], [es]: readonly Variable[]): Variable[] {
    return [dense(es!)];
  }
}

const denseOps = [lazy(() => new DenseFromSparse(true)), lazy(() => new DenseFromSparse(false))] as const;
const fromDenseOps = perFormat((f) => new SparseFromDense(f));

/** `weft.sparse.asSparse(x, format)`: a dense matrix's entries that are not 0, as csr or csc. */
export function asSparse(x: unknown, format: SparseFormat = 'csr'): SparseVariable {
  const make = fromDenseOps[format];
  if (!make) throw new TypeError(`asSparse: format must be "csr" or "csc", got ${JSON.stringify(format)}`);
  return make().call(x) as SparseVariable;
}

/** `weft.sparse.dense(s, { sparseGrad? })`: the dense matrix (gradient structured unless sparseGrad is false). */
export function dense(s: unknown, options: { readonly sparseGrad?: boolean } = {}): TensorVariable {
  return denseOps[options.sparseGrad === false ? 1 : 0]().call(s) as TensorVariable;
}

function intVector(x: unknown, where: string): TensorVariable {
  const v = asTensorVariable(x as TensorLike);
  if (v.ndim !== 1 || !isIntDtype(v.dtype)) throw new TypeError(`${where}: expected an integer vector, got ${v} (${v.type})`);
  return v;
}

/**
 * A sparse matrix of `format` from its parts as tensors (PyTensor's CSM): data (a float vector),
 * indices, indptr and shape (integer vectors). The parts are checked as `weft.sparse.csr` checks
 * them, when the node runs. Gradient: with respect to data only (CSMGrad).
 */
export class CSM extends FormatOp {
  override makeNode(data: unknown, indices: unknown, indptr: unknown, shape: unknown): Apply {
    const where = `${this.format}FromData`;
    const d = asTensorVariable(data as TensorLike);
    if (d.ndim !== 1 || !isFloatDtype(d.dtype)) throw new TypeError(`${where}: input 0 (data) must be a float vector, got ${d} (${d.type})`);
    const parts = [d, intVector(indices, `${where}: input 1 (indices)`), intVector(indptr, `${where}: input 2 (indptr)`), intVector(shape, `${where}: input 3 (shape)`)];
    return new Apply(this, parts, [sparseOutput(this.format, d.dtype as SparseDtype)]);
  }

  override perform(node: Apply, [data, indices, indptr, shape]: readonly unknown[]): unknown[] {
    const value = makeSparse(
      this.format,
      // Copies: the value must not alias the node's input tensors.
      { data: flatValues(data as NdArray).slice(), indices: flatValues(indices as NdArray).slice(), indptr: flatValues(indptr as NdArray).slice(), shape: Array.from(flatValues(shape as NdArray)) },
      { what: `${this.format}FromData`, dtype: outputDtype(node) },
    );
    return [value];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    const shape = node.inputs[3] as TensorVariable;
    return [[shape.get(0), shape.get(1)]];
  }

  override connectionPattern(): boolean[][] {
    return [[true], [false], [false], [false]];
  }

  override grad([data, indices, indptr]: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    return [csmGradOps[this.format]().call(gz, data, indices, indptr) as Variable, disconnected(), disconnected(), disconnected()];
  }

  /** Linear in data: the matrix of the tangent's data on the same pattern. */
  override rop([, indices, indptr, shape]: readonly Variable[], [edata]: readonly Variable[]): Variable[] {
    return [csmOps[this.format]().call(edata, indices, indptr, shape) as Variable];
  }
}

/**
 * The gradient of CSM with respect to data: for each k, the output gradient at the position that
 * data[k] was given (its row, or column, and indices[k]), 0 where the gradient stores nothing.
 * Duplicated positions all receive it, since their values were summed.
 */
export class CSMGrad extends FormatOp {
  override makeNode(gz: unknown, data: unknown, indices: unknown, indptr: unknown): Apply {
    const g = asSparseVariable(gz, 'CSMGrad: input 0');
    const d = asTensorVariable(data as TensorLike);
    return new Apply(this, [g, d, asTensorVariable(indices as TensorLike), asTensorVariable(indptr as TensorLike)], [denseOutput(d.dtype as SparseDtype, 1)]);
  }

  override perform(node: Apply, [gz, , indices, indptr]: readonly unknown[]): unknown[] {
    const g = gz as SparseValue;
    const idx = flatValues(indices as NdArray);
    const ptr = flatValues(indptr as NdArray);
    const h = asFormat(g, this.format);
    const out = new DATA_CLASS[outputDtype(node)](idx.length);
    const [outer] = outerInner(this.format, h.shape);
    for (let o = 0; o < outer; o++) {
      for (let k = ptr[o]!; k < ptr[o + 1]!; k++) out[k] = entryAt(h, o, idx[k]!);
    }
    return [makeNdArray(out, [idx.length])];
  }

  override inferShape(_node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    return [shapes[1]!];
  }
}

const csmOps = perFormat((f) => new CSM(f));
const csmGradOps = perFormat((f) => new CSMGrad(f));

/** `weft.sparse.csrFromData(data, indices, indptr, shape)`: a csr matrix from tensors (checked when it runs). */
export function csrFromData(data: unknown, indices: unknown, indptr: unknown, shape: unknown): SparseVariable {
  return csmOps.csr().call(data, indices, indptr, shape) as SparseVariable;
}

/** `weft.sparse.cscFromData(data, indices, indptr, shape)`: the same for csc. */
export function cscFromData(data: unknown, indices: unknown, indptr: unknown, shape: unknown): SparseVariable {
  return csmOps.csc().call(data, indices, indptr, shape) as SparseVariable;
}

/** The same matrix in the other format (csr <-> csc: the entries re-sorted). Gradient: back to the input's format. */
export class SparseToFormat extends FormatOp {
  override makeNode(s: unknown): Apply {
    const v = asSparseVariable(s, 'toFormat: input 0');
    return new Apply(this, [v], [sparseOutput(this.format, v.dtype)]);
  }

  override perform(_node: Apply, [s]: readonly unknown[]): unknown[] {
    const v = s as SparseValue;
    return [v.format === this.format ? withData(v, v.data.slice()) : asFormat(v, this.format)];
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    return [inputLengths(node, shapes, 0)];
  }

  override grad([s]: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    return [toFormat(gz!, (s as SparseVariable).format)];
  }

  override rop(_inputs: readonly Variable[], [es]: readonly Variable[]): Variable[] {
    return [toFormat(es!, this.format)];
  }
}

const toFormatOps = perFormat((f) => new SparseToFormat(f));

/** `weft.sparse.toFormat(s, format)`: s in `format` (s itself when it already is). */
export function toFormat(s: unknown, format: SparseFormat): SparseVariable {
  const v = asSparseVariable(s, 'toFormat: input 0');
  if (v.format === format) return v as SparseVariable;
  const make = toFormatOps[format];
  if (!make) throw new TypeError(`toFormat: format must be "csr" or "csc", got ${JSON.stringify(format)}`);
  return make().call(v) as SparseVariable;
}

bindOps({ dense: (s) => dense(s) });
