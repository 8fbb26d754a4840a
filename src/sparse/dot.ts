// Matrix products with sparse operands. structuredDot(s, d) (sparse times dense, dense out) has
// PyTensor's structured gradient for s (only at s's stored positions); dot(a, b) takes sparse and
// dense operands in any mix (sparse times sparse is sparse) and has true gradients; samplingDot
// computes a dense product only where a sparse matrix stores values.
import { Apply } from '../graph/apply.js';
import { gradNotImplemented } from '../graph/gradient.js';
import { Op, type SymbolicShape } from '../graph/op.js';
import type { Variable } from '../graph/variable.js';
import type { NdArray } from '../tensor/core/ndarray.js';
import { lazy } from '../tensor/core/op.js';
import type { TensorVariable } from '../tensor/core/variable.js';
import { dot as denseDot } from '../tensor/linalg/linalg.js';
import { transpose as denseTranspose } from '../tensor/shape/dimshuffle.js';
import { denseTimesSparse, productsAt, sparseTimesDense, sparseTimesSparse, withData } from './compute.js';
import { addSparse, mulSparse } from './arith.js';
import { add as denseAdd } from '../tensor/elemwise/math.js';
import { asSparse, toFormat } from './convert.js';
import { denseMatrix, denseOutput, floatResult, inputLengths, outputDtype, sparseOutput } from './op-args.js';
import { sparseOnesLike, transpose } from './structure.js';
import { asSparseVariable, isSparseVariable, type SparseLike, type SparseVariable } from './type.js';
import type { SparseDtype, SparseValue } from './value.js';

function checkAligned(where: string, a: readonly number[], b: readonly number[]): void {
  if (a[1] !== b[0]) {
    throw new RangeError(`${where}: shapes [${a.join(', ')}] and [${b.join(', ')}] are not aligned: input 0 has ${a[1]} columns, input 1 has ${b[0]} rows`);
  }
}

/** [rows of input 0, columns of input 1]. */
function productShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
  return [[inputLengths(node, shapes, 0)[0]!, inputLengths(node, shapes, 1)[1]!]];
}

/** s (sparse, m x k) times d (dense, k x n): dense m x n. Gradient for s: structured (StructuredDotGrad). */
export class StructuredDot extends Op<Variable> {
  override makeNode(s: unknown, d: unknown): Apply {
    const x = asSparseVariable(s, 'structuredDot: input 0');
    const y = denseMatrix(d, 'structuredDot: input 1');
    return new Apply(this, [x, y], [denseOutput(floatResult('structuredDot', x.dtype, y.dtype), 2)]);
  }

  override perform(node: Apply, [s, d]: readonly unknown[]): unknown[] {
    checkAligned('structuredDot', (s as SparseValue).shape, (d as NdArray).shape);
    return [sparseTimesDense(s as SparseValue, d as NdArray, outputDtype(node))];
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    return productShape(node, shapes);
  }

  override grad([s, d]: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    return [structuredDotGradOp().call(s, d, gz) as Variable, structuredDot(transpose(s), gz)];
  }

  /** Bilinear: es d + s ed. */
  override rop([s, d]: readonly Variable[], [es, ed]: readonly Variable[]): Variable[] {
    return [denseAdd(structuredDot(es, d), structuredDot(s, ed))];
  }
}

/**
 * The gradient of structuredDot(s, d) with respect to s, at s's stored positions only: at (r, c),
 * the sum over j of gz[r, j] * d[c, j] (the entries of gz d^T that s stores). In s's dtype.
 */
export class StructuredDotGrad extends Op<Variable> {
  override makeNode(s: unknown, d: unknown, gz: unknown): Apply {
    const x = asSparseVariable(s, 'StructuredDotGrad: input 0');
    const y = denseMatrix(d, 'StructuredDotGrad: input 1');
    const g = denseMatrix(gz, 'StructuredDotGrad: input 2');
    return new Apply(this, [x, y, g], [sparseOutput(x.format, x.dtype)]);
  }

  override perform(node: Apply, [s, d, gz]: readonly unknown[]): unknown[] {
    const x = s as SparseValue;
    return [withData(x, productsAt(x, gz as NdArray, d as NdArray, false, outputDtype(node)))];
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    return [inputLengths(node, shapes, 0)];
  }

  override grad(inputs: readonly Variable[]): Variable[] {
    return inputs.map((_, i) => gradNotImplemented(this, i, 'second derivatives of structuredDot'));
  }
}

type Kinds = 'sparse-dense' | 'dense-sparse' | 'sparse-sparse';

/** a times b with at least one sparse operand: dense unless both are sparse (then a's format). True gradients. */
export class SparseDot extends Op<Variable> {
  override makeNode(a: unknown, b: unknown): Apply {
    const [sa, sb] = [isSparseVariable(a), isSparseVariable(b)];
    if (!sa && !sb) throw new TypeError(`sparse.dot: at least one operand must be sparse, got ${String(a)} and ${String(b)} (use pt.dot for dense ones)`);
    const x = sa ? asSparseVariable(a, 'sparse.dot: input 0') : denseMatrix(a, 'sparse.dot: input 0');
    const y = sb ? asSparseVariable(b, 'sparse.dot: input 1') : denseMatrix(b, 'sparse.dot: input 1');
    const dtype = floatResult('sparse.dot', (x as { dtype: SparseDtype }).dtype, (y as { dtype: SparseDtype }).dtype);
    const out = sa && sb ? sparseOutput((x as SparseLike).format, dtype) : denseOutput(dtype, 2);
    return new Apply(this, [x, y], [out]);
  }

  #kinds(node: Apply): Kinds {
    const [sa, sb] = node.inputs.map(isSparseVariable);
    return sa && sb ? 'sparse-sparse' : sa ? 'sparse-dense' : 'dense-sparse';
  }

  override perform(node: Apply, [a, b]: readonly unknown[]): unknown[] {
    const dtype = outputDtype(node);
    const shapes = [a, b].map((v) => (v as { shape: readonly number[] }).shape);
    checkAligned('sparse.dot', shapes[0]!, shapes[1]!);
    switch (this.#kinds(node)) {
      case 'sparse-dense':
        return [sparseTimesDense(a as SparseValue, b as NdArray, dtype)];
      case 'dense-sparse':
        return [denseTimesSparse(a as NdArray, b as SparseValue, dtype)];
      case 'sparse-sparse':
        return [sparseTimesSparse(a as SparseValue, b as SparseValue, dtype)];
    }
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    return productShape(node, shapes);
  }

  /** d(a b) = gz b^T for a, a^T gz for b; a sparse operand's gradient as a sparse matrix of its format. */
  override grad([a, b]: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    const aT = isSparseVariable(a) ? transpose(a) : denseTranspose(a as TensorVariable);
    const bT = isSparseVariable(b) ? transpose(b) : denseTranspose(b as TensorVariable);
    const product = (x: Variable, y: Variable): Variable =>
      isSparseVariable(x) || isSparseVariable(y) ? dot(x, y) : denseDot(x as TensorVariable, y as TensorVariable);
    const asKindOf = (g: Variable, v: Variable): Variable => {
      if (!isSparseVariable(v)) return g;
      return isSparseVariable(g) ? toFormat(g, v.format) : asSparse(g, v.format);
    };
    return [asKindOf(product(gz!, bT), a!), asKindOf(product(aT, gz!), b!)];
  }

  /** Bilinear: ea b + a eb (sparse when both operands are). */
  override rop([a, b]: readonly Variable[], [ea, eb]: readonly Variable[]): Variable[] {
    const [x, y] = [dot(ea, b), dot(a, eb)];
    return [isSparseVariable(x) ? addSparse(x, y) : denseAdd(x, y as TensorVariable)];
  }
}

/**
 * PyTensor's SamplingDot: x (dense, m x k) times y^T (y dense, n x k), computed only at p's
 * stored positions and multiplied by p there: sparse, with p's pattern and format. Gradients:
 * true for x and y, structured for p.
 */
export class SamplingDot extends Op<Variable> {
  override makeNode(x: unknown, y: unknown, p: unknown): Apply {
    const xv = denseMatrix(x, 'samplingDot: input 0');
    const yv = denseMatrix(y, 'samplingDot: input 1');
    const pv = asSparseVariable(p, 'samplingDot: input 2');
    return new Apply(this, [xv, yv, pv], [sparseOutput(pv.format, floatResult('samplingDot', xv.dtype, yv.dtype, pv.dtype))]);
  }

  override perform(node: Apply, [x, y, p]: readonly unknown[]): unknown[] {
    const [xs, ys, ps] = [(x as NdArray).shape, (y as NdArray).shape, (p as SparseValue).shape];
    if (xs[1] !== ys[1] || xs[0] !== ps[0] || ys[0] !== ps[1]) {
      throw new RangeError(`samplingDot: x [${xs.join(', ')}] times y^T ([${ys.join(', ')}] transposed) does not have p's shape [${ps.join(', ')}]`);
    }
    return [withData(p as SparseValue, productsAt(p as SparseValue, x as NdArray, y as NdArray, true, outputDtype(node)))];
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    return [inputLengths(node, shapes, 2)];
  }

  override grad([x, y, p]: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    const pg = mulSparse(p, gz);
    return [structuredDot(pg, y), structuredDot(transpose(pg), x), mulSparse(gz, samplingDotOp().call(x, y, sparseOnesLike(p)) as Variable)];
  }

  /** Trilinear: each operand's tangent in turn (ep's own pattern for the last). */
  override rop([x, y, p]: readonly Variable[], [ex, ey, ep]: readonly Variable[]): Variable[] {
    return [addSparse(addSparse(samplingDot(ex, y, p), samplingDot(x, ey, p)), samplingDot(x, y, ep))];
  }
}

const structuredDotOp = lazy(() => new StructuredDot());
const samplingDotOp = lazy(() => new SamplingDot());

/** `weft.sparse.samplingDot(x, y, p)`: (x y^T) * p at p's stored positions only (sparse). */
export function samplingDot(x: unknown, y: unknown, p: unknown): SparseVariable {
  return samplingDotOp().call(x, y, p) as SparseVariable;
}

const structuredDotGradOp = lazy(() => new StructuredDotGrad());
const dotOp = lazy(() => new SparseDot());

/** `weft.sparse.structuredDot(s, d)`: sparse times dense, with the structured gradient for s. */
export function structuredDot(s: unknown, d: unknown): TensorVariable {
  return structuredDotOp().call(s, d) as TensorVariable;
}

/** `weft.sparse.dot(a, b)`: sparse times dense, dense times sparse (dense out), sparse times sparse (sparse out). */
export function dot(a: unknown, b: unknown): SparseVariable | TensorVariable {
  return dotOp().call(a, b) as SparseVariable | TensorVariable;
}
