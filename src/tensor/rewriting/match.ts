// Small predicates that tensor rewrites are written with: which scalar op an Elemwise node
// applies, and the value of a variable that is a constant with all elements equal (looking
// through broadcasts of constants, as Theano's get_scalar_constant_value does).
import type { Apply } from '../../graph/apply.js';
import type { OpPredicate } from '../../graph/rewriting/rewriter.js';
import type { Variable } from '../../graph/variable.js';
import { Alloc } from '../shape/alloc.js';
import { DimShuffle } from '../shape/dimshuffle.js';
import { Elemwise } from '../elemwise/elemwise.js';
import { flatValues } from '../core/ndarray.js';
import type { ScalarOp } from '../scalar/scalar-op.js';
import { TensorConstant, type TensorVariable } from '../core/variable.js';

/** Matches Elemwise ops that apply `scalar` (inplace versions included). */
export function elemwiseOf(scalar: ScalarOp): OpPredicate {
  return { name: `Elemwise{${scalar}}`, test: (op) => op instanceof Elemwise && op.scalarOp === scalar };
}

/** Is `v` computed by an Elemwise of `scalar`? Then its node. */
export function ownerIs(v: Variable, scalar: ScalarOp): Apply<Elemwise> | undefined {
  const node = v.owner;
  return node && node.op instanceof Elemwise && node.op.scalarOp === scalar ? (node as Apply<Elemwise>) : undefined;
}

/**
 * The value of `v` when it is a constant whose elements are all equal (a 0-d constant, or a
 * broadcast of one), else undefined.
 */
export function scalarConstantValue(v: Variable): number | undefined {
  let cur: Variable = v;
  for (;;) {
    if (cur instanceof TensorConstant) {
      const values = flatValues(cur.data);
      if (values.length === 0) return undefined;
      const first = values[0]!;
      for (let i = 1; i < values.length; i++) if (!Object.is(values[i], first)) return undefined;
      return first;
    }
    const node = cur.owner;
    if (node && (node.op instanceof DimShuffle || node.op instanceof Alloc)) {
      cur = node.inputs[0]!;
      continue;
    }
    return undefined;
  }
}

export function isConstantValue(v: Variable, value: number): boolean {
  return scalarConstantValue(v) === value;
}

export function asTensor(v: Variable): TensorVariable {
  return v as TensorVariable;
}
