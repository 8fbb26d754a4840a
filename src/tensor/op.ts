// TensorOp: the base of every tensor op (and `weft.Op`, the class users extend). It only
// narrows types: values are ndarrays, variables are tensor variables.
//
// Import rule of the tensor layer: op modules import each other freely (grads need other ops),
// so no module may touch another module's bindings while it is being evaluated, except to
// `extend` a base class from a module that imports no op module (this one, variable.ts, type.ts).
// Module-level op instances are therefore made lazily, on first use.
import type { Apply } from '../graph/apply.js';
import { Op } from '../graph/op.js';
import type { NdArray } from './ndarray.js';
import type { TensorVariable } from './variable.js';

export abstract class TensorOp<Out extends TensorVariable | TensorVariable[] = TensorVariable> extends Op<Out> {
  override perform(node: Apply, _inputs: readonly NdArray[]): NdArray[] {
    throw new Error(`${node.op} has no perform implementation`);
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
