// Element-wise arithmetic with sparse operands, as PyTensor defines it: neg; add of two sparse
// matrices (sparse, the union of their patterns) and of sparse and dense (dense); mul of two
// sparse matrices (the intersection) and of sparse and dense (structured: s's pattern); sub.
import { Apply } from '../graph/apply.js';
import { Op, type SymbolicShape } from '../graph/op.js';
import type { Variable } from '../graph/variable.js';
import { copyArray, type NdArray } from '../tensor/core/ndarray.js';
import { lazy } from '../tensor/core/op.js';
import { neg as denseNeg } from '../tensor/elemwise/math.js';
import type { TensorVariable } from '../tensor/core/variable.js';
import { forEachEntry, merge, withData } from './compute.js';
import { toFormat, dense } from './convert.js';
import { denseMatrix, denseOutput, floatResult, inputLengths, outputDtype, sparseOutput } from './op-args.js';
import { sparseOnesLike } from './structure.js';
import { asSparseVariable, isSparseVariable, type SparseLike, type SparseVariable } from './type.js';
import { DATA_CLASS, type SparseValue } from './value.js';
import { bindOps } from './bound-ops.js';
import { SparseUnaryOp } from './unary-op.js';

function checkSameShape(where: string, a: readonly number[], b: readonly number[]): void {
  if (a[0] !== b[0] || a[1] !== b[1]) throw new RangeError(`${where}: the operands' shapes [${a.join(', ')}] and [${b.join(', ')}] differ`);
}

/** -s, on the stored values. */
export class Neg extends SparseUnaryOp {
  protected readonly label = 'sparse.neg';

  override perform(_node: Apply, [s]: readonly unknown[]): unknown[] {
    const v = s as SparseValue;
    return [withData(v, v.data.map((x) => -x))];
  }

  override grad(_inputs: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    return [neg(gz!)];
  }

  override rop(_inputs: readonly Variable[], [es]: readonly Variable[]): Variable[] {
    return [neg(es!)];
  }
}

/** Two sparse matrices of one shape combined entry by entry into a sparse one (in a's format). */
abstract class SparseSparse extends Op<Variable> {
  abstract readonly name: 'add' | 'mul';

  override makeNode(a: unknown, b: unknown): Apply {
    const x = asSparseVariable(a, `sparse.${this.name}: input 0`);
    const y = toFormat(asSparseVariable(b, `sparse.${this.name}: input 1`), x.format);
    return new Apply(this, [x, y], [sparseOutput(x.format, floatResult(`sparse.${this.name}`, x.dtype, y.dtype))]);
  }

  override perform(node: Apply, [a, b]: readonly unknown[]): unknown[] {
    const [x, y] = [a as SparseValue, b as SparseValue];
    checkSameShape(`sparse.${this.name}`, x.shape, y.shape);
    return this.name === 'add'
      ? [merge(x, y, 'union', (p, q) => p + q, outputDtype(node))]
      : [merge(x, y, 'intersection', (p, q) => p * q, outputDtype(node))];
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    return [inputLengths(node, shapes, 0)];
  }
}

/** a + b, both sparse: sparse, storing the union of their patterns. Gradient: gz to both. */
export class AddSS extends SparseSparse {
  readonly name = 'add' as const;

  override grad([_a, b]: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    return [gz!, toFormat(gz as SparseLike, (b as SparseLike).format)];
  }

  override rop(_inputs: readonly Variable[], [ea, eb]: readonly Variable[]): Variable[] {
    return [addSparse(ea!, eb!)];
  }
}

/** a * b, both sparse: sparse, storing the intersection of their patterns. Gradient: gz * b, gz * a. */
export class MulSS extends SparseSparse {
  readonly name = 'mul' as const;

  override grad([a, b]: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    return [mulSparse(gz!, b!), toFormat(mulSparse(gz!, a!), (b as SparseLike).format)];
  }

  /** The product rule: ea * b + a * eb. */
  override rop([a, b]: readonly Variable[], [ea, eb]: readonly Variable[]): Variable[] {
    return [addSparse(mulSparse(ea!, b!), mulSparse(a!, eb!))];
  }
}

/** s + d, sparse plus dense: a dense matrix. Gradient: structured for s (gz at s's pattern), gz for d. */
export class AddSD extends Op<Variable> {
  override makeNode(s: unknown, d: unknown): Apply {
    const x = asSparseVariable(s, 'sparse.add: input 0');
    const y = denseMatrix(d, 'sparse.add: input 1');
    return new Apply(this, [x, y], [denseOutput(floatResult('sparse.add', x.dtype, y.dtype), 2)]);
  }

  override perform(node: Apply, [s, d]: readonly unknown[]): unknown[] {
    const x = s as SparseValue;
    const y = d as NdArray;
    checkSameShape('sparse.add', x.shape, y.shape);
    const out = copyArray(y, outputDtype(node));
    const n = x.shape[1];
    forEachEntry(x, (r, c, value) => {
      out.data[r * n + c] += value;
    });
    return [out];
  }

  override inferShape(_node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    return [shapes[1]!];
  }

  override grad([s]: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    return [mulSparseDense(sparseOnesLike(s), gz!), gz!];
  }

  override rop(_inputs: readonly Variable[], [es, ed]: readonly Variable[]): Variable[] {
    return [addSDOp().call(es, ed) as Variable];
  }
}

/**
 * s * d, sparse times dense entry by entry: sparse, with s's pattern (structured: an entry of s
 * that is stored stays stored, even where d is 0). Gradient: gz * d for s, dense(s * gz) for d.
 */
export class MulSD extends Op<Variable> {
  override makeNode(s: unknown, d: unknown): Apply {
    const x = asSparseVariable(s, 'sparse.mul: input 0');
    const y = denseMatrix(d, 'sparse.mul: input 1');
    return new Apply(this, [x, y], [sparseOutput(x.format, floatResult('sparse.mul', x.dtype, y.dtype))]);
  }

  override perform(node: Apply, [s, d]: readonly unknown[]): unknown[] {
    const x = s as SparseValue;
    const y = d as NdArray;
    checkSameShape('sparse.mul', x.shape, y.shape);
    const data = new DATA_CLASS[outputDtype(node)](x.data.length);
    const [s0, s1] = y.stride;
    forEachEntry(x, (r, c, value, k) => {
      data[k] = value * y.data[y.offset + r * s0! + c * s1!]!;
    });
    return [withData(x, data)];
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    return [inputLengths(node, shapes, 0)];
  }

  override grad([s, d]: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    return [toFormat(mulSparseDense(gz!, d!), (s as SparseLike).format), dense(mulSparse(s!, gz!))];
  }

  /** The product rule: es * d + s * ed, each at its sparse operand's pattern. */
  override rop([s, d]: readonly Variable[], [es, ed]: readonly Variable[]): Variable[] {
    return [addSparse(mulSparseDense(es!, d!), mulSparseDense(s!, ed!))];
  }
}

const negOp = lazy(() => new Neg());
const addSSOp = lazy(() => new AddSS());
const mulSSOp = lazy(() => new MulSS());
const addSDOp = lazy(() => new AddSD());
const mulSDOp = lazy(() => new MulSD());

export function neg(s: unknown): SparseVariable {
  return negOp().call(s) as SparseVariable;
}

export function addSparse(a: unknown, b: unknown): SparseVariable {
  return addSSOp().call(a, b) as SparseVariable;
}

export function mulSparse(a: unknown, b: unknown): SparseVariable {
  return mulSSOp().call(a, b) as SparseVariable;
}

export function mulSparseDense(s: unknown, d: unknown): SparseVariable {
  return mulSDOp().call(s, d) as SparseVariable;
}

/** `weft.sparse.add(a, b)`: sparse + sparse is sparse; sparse + dense (either order) is dense. */
export function add(a: unknown, b: unknown): SparseVariable | TensorVariable {
  if (isSparseVariable(a) && isSparseVariable(b)) return addSparse(a, b);
  if (isSparseVariable(a)) return addSDOp().call(a, b) as TensorVariable;
  if (isSparseVariable(b)) return addSDOp().call(b, a) as TensorVariable;
  throw new TypeError(`sparse.add: at least one operand must be sparse, got ${String(a)} and ${String(b)} (use pt.add for dense ones)`);
}

/** `weft.sparse.sub(a, b)`: a + (-b), with add's result kinds. */
export function sub(a: unknown, b: unknown): SparseVariable | TensorVariable {
  if (isSparseVariable(b)) return add(a, neg(b));
  if (isSparseVariable(a)) return add(a, denseNeg(denseMatrix(b, 'sparse.sub: input 1')));
  throw new TypeError(`sparse.sub: at least one operand must be sparse, got ${String(a)} and ${String(b)} (use pt.sub for dense ones)`);
}

/** `weft.sparse.mul(a, b)`: sparse * sparse (intersection) and sparse * dense (structured) are sparse. */
export function mul(a: unknown, b: unknown): SparseVariable {
  if (isSparseVariable(a) && isSparseVariable(b)) return mulSparse(a, b);
  if (isSparseVariable(a)) return mulSparseDense(a, b);
  if (isSparseVariable(b)) return mulSparseDense(b, a);
  throw new TypeError(`sparse.mul: at least one operand must be sparse, got ${String(a)} and ${String(b)} (use pt.mul for dense ones)`);
}

bindOps({ add: addSparse });
