// TensorOp: the base of every tensor op (and `weft.Op`, the class users extend). Its outputs are
// tensor variables unless its type parameter says otherwise (`weft.Op<weft.Variable>` for an op
// over a Type of one's own), and its default perform runs the op's kernel on ndarrays.
//
// Import rule of the tensor layer: op modules import each other freely (grads need other ops),
// so no module may touch another module's bindings while it is being evaluated, except to
// `extend` a base class from a module that imports no op module (this one, variable.ts, type.ts).
// Module-level op instances are therefore made lazily, on first use.
import type { Apply } from '../../graph/apply.js';
import type { Variable } from '../../graph/variable.js';
import { Op } from '../../graph/op.js';
import '../../kernels/builtin.js';
import { getKernel } from '../../kernels/registry.js';
import { isContiguous } from '../../kernels/view.js';
import { copyArray, empty, makeNdArray, type NdArray } from './ndarray.js';
import type { TensorType } from './type.js';
import type { TensorVariable } from './variable.js';

export abstract class TensorOp<Out extends Variable | Variable[] = TensorVariable> extends Op<Out> {
  /**
   * The reference implementation, from the op's own parts, so that the calling thread and the
   * workers compute with the same code: a view op returns its views; a kernel op allocates its
   * outputs (outputShapes, which checks the inputs) and runs its registered kernel.
   */
  override perform(node: Apply, values: readonly unknown[]): unknown[] {
    const inputs = values as readonly NdArray[];
    const views = this.view?.(node, inputs);
    if (views) {
      return views.map((v, j) => makeNdArray(inputs[this.viewMap[j]?.[0] ?? 0]!.data, v.shape, v.stride, v.offset));
    }
    const call = this.kernel?.(node);
    if (!call || !this.outputShapes) throw new Error(`${node.op} has no perform implementation`);
    const outputs = this.outputShapes(node, inputs).map((shape, j) => empty((node.outputs[j]!.type as TensorType).dtype, shape));
    const args = call.contiguousInputs ? inputs.map((x) => (isContiguous(x) ? x : copyArray(x))) : inputs;
    getKernel(call.name)(args, outputs, call.params);
    return outputs;
  }
}

/** A lazily made singleton (see the import rule above). */
export function lazy<T>(make: () => T): () => T {
  let value: T | undefined;
  let made = false;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value as T;
  };
}
