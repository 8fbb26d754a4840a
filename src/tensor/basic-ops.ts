// DeepCopyOp and ViewOp. DeepCopyOp gives the caller memory that weft will never write again
// (compile puts one on outputs that alias inputs, shared storage or each other); ViewOp is the
// identity as a view, a stable place for rewrites to hang a variable on.
import { Apply } from '../graph/apply.js';
import type { IndexMap, SymbolicShape } from '../graph/op.js';
import type { Variable } from '../graph/variable.js';
import { asTensorVariable } from './as-tensor.js';
import { copyArray, makeNdArray, type NdArray } from './ndarray.js';
import { TensorOp } from './op.js';
import type { TensorLike, TensorVariable } from './variable.js';

abstract class IdentityOp extends TensorOp {
  override makeNode(x: unknown): Apply {
    const v = asTensorVariable(x as TensorLike);
    return new Apply(this, [v], [v.type.makeVariable()]);
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [xs!];
  }

  override grad(_inputs: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    return [gz!];
  }

  override rop(_inputs: readonly TensorVariable[], [ev]: readonly TensorVariable[]): Variable[] {
    return [ev!];
  }
}

export class DeepCopyOp extends IdentityOp {
  override perform(_node: Apply, [x]: readonly NdArray[]): NdArray[] {
    return [copyArray(x!)];
  }

  override doConstantFolding(): boolean {
    return false;
  }

  override toString(): string {
    return 'DeepCopyOp';
  }
}

export class ViewOp extends IdentityOp {
  override readonly viewMap: IndexMap = { 0: [0] };

  override perform(_node: Apply, [x]: readonly NdArray[]): NdArray[] {
    return [makeNdArray(x!.data, x!.shape, x!.stride, x!.offset)];
  }

  override toString(): string {
    return 'ViewOp';
  }
}

let deepCopyOp: DeepCopyOp | undefined;
let viewOp: ViewOp | undefined;

/** A copy of `x` that shares no memory with it. */
export function deepCopy(x: TensorLike): TensorVariable {
  return (deepCopyOp ??= new DeepCopyOp()).call(x);
}

/** `x` itself, as a view node. */
export function viewOf(x: TensorLike): TensorVariable {
  return (viewOp ??= new ViewOp()).call(x);
}
