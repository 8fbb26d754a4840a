// A test op whose worker kernel is one of the misbehaving kernels of fault-kernels.mjs. Its
// perform (the calling thread) is an honest copy, so only the workers misbehave.
import { Apply } from '../../src/graph/apply.js';
import type { KernelCall } from '../../src/graph/op.js';
import type { TensorView } from '../../src/kernels/view.js';
import { copyArray } from '../../src/tensor/core/ndarray.js';
import { weft } from '../helpers.js';

export class FaultOp extends weft.Op {
  static override readonly props = ['kernelName', 'ms'] as const;

  constructor(
    readonly kernelName: string,
    readonly ms = 0,
  ) {
    super();
  }

  override makeNode(x: unknown): Apply {
    const v = weft.pt.asTensorVariable(x as weft.pt.TensorVariable);
    return new Apply(this, [v], [v.type.makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: this.kernelName, params: { ms: this.ms }, chunking: { by: 'none' } };
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }

  override perform(_node: Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    return [copyArray(x!)];
  }
}

export const faultKernels = new URL('../fixtures/fault-kernels.mjs', import.meta.url).href;
