// MakeVector: a vector built from scalars (shapes lifted to their inputs' lengths are such
// vectors). Its gradient hands each scalar its element of the output gradient.
import { Apply } from '../../graph/apply.js';
import type { SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { STORAGE } from '../../kernels/dtype.js';
import { asTensorArgs } from '../core/as-tensor.js';
import { upcast } from '../core/dtype.js';
import { cast } from '../elemwise/math.js';
import { makeNdArray, type NdArray } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { intConstant } from './shape.js';
import { get } from './subtensor.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';

export class MakeVector extends TensorOp {
  override makeNode(...args: unknown[]): Apply {
    const inputs = asTensorArgs(args as TensorLike[], 'MakeVector');
    inputs.forEach((x, i) => {
      if (x.ndim !== 0) throw new TypeError(`MakeVector: input ${i} (${x}) must be a scalar, got ${x.type}`);
    });
    const dtype = inputs.length > 0 ? upcast(...inputs.map((x) => x.dtype)) : 'int32';
    const operands = inputs.map((x) => cast(x, dtype));
    return new Apply(this, operands, [new TensorType(dtype, [inputs.length]).makeVariable()]);
  }

  override outputShapes(node: Apply): number[][] {
    return [[node.inputs.length]];
  }

  /** Runs on the calling thread: a few scalars, not worth a kernel task. */
  override perform(node: Apply, inputs: readonly NdArray[]): NdArray[] {
    const dtype = (node.outputs[0]!.type as TensorType).dtype;
    const data = new STORAGE[dtype](inputs.length);
    inputs.forEach((x, i) => {
      data[i] = x.data[x.offset]!;
    });
    return [makeNdArray(data, [inputs.length])];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    return [[intConstant(node.inputs.length)]];
  }

  override grad(inputs: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    return inputs.map((_, i) => get(gz!, i));
  }

  override rop(_inputs: readonly TensorVariable[], evalPoints: readonly TensorVariable[]): Variable[] {
    return [this.call(...evalPoints)];
  }

  override toString(): string {
    return 'MakeVector';
  }
}

let makeVectorOp: MakeVector | undefined;

/** A vector of these scalars (upcast to a common dtype). */
export function makeVector(...xs: TensorLike[]): TensorVariable {
  return (makeVectorOp ??= new MakeVector()).call(...xs);
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(MakeVector);
