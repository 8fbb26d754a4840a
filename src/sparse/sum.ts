// Sums of a sparse matrix's stored values (PyTensor's sp_sum): all of them (a 0-d result), per
// column (axis 0) or per row (axis 1), into dense tensors. The gradient is the true one unless
// `sparseGrad` asks for the structured one (only at the input's stored positions).
import { Apply } from '../graph/apply.js';
import { Op, type SymbolicShape } from '../graph/op.js';
import { propKinds, type PropKind } from '../graph/prop-kinds.js';
import type { Variable } from '../graph/variable.js';
import type { TensorVariable } from '../tensor/core/variable.js';
import { broadcastTo } from '../tensor/shape/alloc.js';
import { dimshuffle } from '../tensor/shape/dimshuffle.js';
import { sumValue } from './compute.js';
import { asSparse } from './convert.js';
import { mulSparseDense } from './arith.js';
import { denseOutput, inputLengths, outputDtype } from './op-args.js';
import { sparseLength } from './length.js';
import { sparseOnesLike } from './structure.js';
import { asSparseVariable, type SparseLike } from './type.js';
import type { SparseValue } from './value.js';

/** The axis summed over; 'all' for every stored value. */
export type SumAxis = 'all' | 0 | 1;

export class SparseSum extends Op<Variable> {
  static override readonly props = ['axis', 'sparseGrad'] as const;
  static override readonly propKinds = {
    axis: { encode: (v) => v, read: (r) => (r.value === 'all' ? 'all' : (r.int(0, 1) as 0 | 1)) } satisfies PropKind<SumAxis>,
    sparseGrad: propKinds.boolean(),
  };

  constructor(
    readonly axis: SumAxis = 'all',
    readonly sparseGrad: boolean = false,
  ) {
    super();
    if (axis !== 'all' && axis !== 0 && axis !== 1) throw new RangeError(`sparse.sum: axis must be 0, 1 or undefined (all), got ${String(axis)}`);
    if (typeof sparseGrad !== 'boolean') throw new TypeError(`sparse.sum: sparseGrad must be a boolean, got ${typeof sparseGrad}`);
  }

  override makeNode(s: unknown): Apply {
    const v = asSparseVariable(s, 'sparse.sum: input 0');
    return new Apply(this, [v], [denseOutput(v.dtype, this.axis === 'all' ? 0 : 1)]);
  }

  override perform(node: Apply, [s]: readonly unknown[]): unknown[] {
    return [sumValue(s as SparseValue, this.axis === 'all' ? undefined : this.axis, outputDtype(node))];
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    if (this.axis === 'all') return [[]];
    const [rows, cols] = inputLengths(node, shapes, 0);
    return [[this.axis === 0 ? cols! : rows!]];
  }

  override grad([s]: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    const x = s as SparseLike;
    const g = gz as TensorVariable;
    // gz spread over x's shape: a view (stride 0 along the summed axis), read as it is by MulSD.
    const spread = this.axis === 'all' ? g : dimshuffle(g, this.axis === 0 ? ['x', 0] : [0, 'x']);
    const full = broadcastTo(spread, [sparseLength(x, 0), sparseLength(x, 1)]);
    return [this.sparseGrad ? mulSparseDense(sparseOnesLike(x), full) : asSparse(full, x.format)];
  }

  override rop(_inputs: readonly Variable[], [es]: readonly Variable[]): Variable[] {
    return [new SparseSum(this.axis, this.sparseGrad).call(es) as Variable];
  }
}

export interface SumOptions {
  /** Sum over axis 0 (one result per column) or 1 (per row); every stored value when left out. */
  readonly axis?: 0 | 1;
  /** The structured gradient (at the input's stored positions only) instead of the true one. */
  readonly sparseGrad?: boolean;
}

/** `weft.sparse.sum(s, { axis?, sparseGrad? })`: a dense sum of the stored values. */
export function sum(s: unknown, options: SumOptions = {}): TensorVariable {
  return new SparseSum(options.axis ?? 'all', options.sparseGrad ?? false).call(s) as TensorVariable;
}
