// Host values: the small integer variables of a graph (lengths, indices, shapes) that the
// calling thread computes while it plans, rather than tasks while they run. A graph input is
// one when it is a small integer array (of static shape); a node's outputs are when they are
// small values computed from other host values and constants, or the shape of anything. A call's plan depends on the inputs'
// shapes and on the values of its host inputs: together they are its signature.
import type { FunctionGraph } from '../graph/fgraph.js';
import { isConstant, type Variable } from '../graph/variable.js';
import { flatValues, type NdArray } from '../tensor/core/ndarray.js';
import { Shape, ShapeI } from '../tensor/shape/shape.js';
import { isHostValueType, isSmallTensor } from '../tensor/core/type.js';

/** Small integer tensors of static shape (lengths, indices, shapes). */
export const isSmallInt = isHostValueType;

export class HostValues {
  /** Variables the calling thread computes while planning. */
  readonly known: ReadonlySet<Variable>;
  /** Graph inputs whose values (not only shapes) enter the signature. */
  readonly valueInputs: readonly number[];

  constructor(fg: FunctionGraph) {
    const known = new Set<Variable>();
    const valueInputs: number[] = [];
    fg.inputs.forEach((v, i) => {
      if (isSmallInt(v)) {
        known.add(v);
        valueInputs.push(i);
      }
    });
    for (const node of fg.toposort()) {
      const shapeOnly = node.op instanceof Shape || node.op instanceof ShapeI;
      // Arithmetic on known values may pass through floats (a length's ceil, a mean's count):
      // small values of any dtype computed from known ones and constants are known too.
      const fromKnown = node.inputs.every((v) => known.has(v) || (isConstant(v) && isSmallTensor(v)));
      if ((shapeOnly && node.outputs.every(isSmallInt)) || (fromKnown && node.outputs.every(isSmallTensor))) for (const o of node.outputs) known.add(o);
    }
    this.known = known;
    this.valueInputs = valueInputs;
  }

  /** The key of a call's plan: input shapes and the values of host inputs. */
  signature(inputs: readonly NdArray[]): string {
    let key = '';
    for (const x of inputs) key += `${x.shape.join(',')};`;
    for (const i of this.valueInputs) key += `=${Array.from(flatValues(inputs[i]!)).join(',')};`;
    return key;
  }
}
