// The base of the ops from one sparse matrix to another of its shape, format and dtype (neg,
// ones-like, zeros-like, the structured element-wise functions). Its own module, importing no op
// module, so that op classes can extend it while the sparse modules are still being evaluated.
import { Apply } from '../graph/apply.js';
import { Op, type SymbolicShape } from '../graph/op.js';
import type { Variable } from '../graph/variable.js';
import { lengthsOf } from './length.js';
import { asSparseVariable, isSparseVariable } from './type.js';

export abstract class SparseUnaryOp extends Op<Variable> {
  /** The name errors give the op ("sparse.neg"). */
  protected abstract readonly label: string;

  override makeNode(s: unknown): Apply {
    const v = asSparseVariable(s, `${this.label}: input 0`);
    return new Apply(this, [v], [v.type.makeVariable()]);
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    // Shape features give sparse inputs no shapes: the input's own lengths then.
    const v = node.inputs[0]!;
    return [isSparseVariable(v) && shapes[0]!.length === 0 ? lengthsOf(v) : shapes[0]!];
  }
}
