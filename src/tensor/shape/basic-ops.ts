// DeepCopyOp and ViewOp. DeepCopyOp gives the caller memory that weft will never write again
// (compile puts one on outputs that alias inputs, shared storage or each other); ViewOp is the
// identity as a view, a stable place for rewrites to hang a variable on.
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import type { IndexMap, KernelCall, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { asTensorArgs } from '../core/as-tensor.js';
import { TensorOp } from '../core/op.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';

abstract class IdentityOp extends TensorOp {
  override makeNode(x: unknown): Apply {
    const [v] = asTensorArgs([x as TensorLike], String(this)) as [TensorVariable];
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
  override kernel(): KernelCall {
    return { name: 'copy', params: {}, chunking: { by: 'elements' } };
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
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

  override view(_node: Apply, [x]: readonly TensorView[]): TensorView[] {
    return [{ data: x!.data, offset: x!.offset, shape: x!.shape, stride: x!.stride }];
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

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(DeepCopyOp);
registerOpCodec(ViewOp);
