// Graphs with values of other Types than tensors, planned anyway: where each such Type says how
// its values live in shared memory (Type.memoryLayout: a double is a 0-d float64 array) and each
// node that touches them has a kernel, the executor plans the same graph over tensors of those
// layouts, converting values on the way in and out, so that worker kernels read them in place.
// (The guide's "double in C": c_extract and c_sync are toArray and fromArray here.)
import { Apply } from '../graph/apply.js';
import { DestroyHandler } from '../graph/destroy-handler.js';
import { FunctionGraph } from '../graph/fgraph.js';
import type { MemoryLayout, Type } from '../graph/type.js';
import { isConstant, type Variable } from '../graph/variable.js';
import { STORAGE } from '../kernels/dtype.js';
import { sizeOf } from '../kernels/view.js';
import { flatValues, makeNdArray, type NdArray } from '../tensor/core/ndarray.js';
import { TensorType } from '../tensor/core/type.js';

export interface LaidOutGraph {
  /** The same graph over tensors: what plans place. */
  readonly fgraph: FunctionGraph;
  /** The call's input values as arrays of their layouts (tensors pass as they are). */
  toArrays(values: readonly unknown[]): NdArray[];
  /** The outputs back as values of their Types. */
  fromArrays(values: readonly NdArray[]): unknown[];
}

const isTensorType = (t: Type): boolean => t instanceof TensorType;

/**
 * The graph laid out over tensors; undefined when it holds tensors only (plans take it as it is);
 * or the reason it cannot be laid out (it then runs on the calling thread).
 */
export function layOut(fg: FunctionGraph): LaidOutGraph | string | undefined {
  const nodes = fg.toposort();
  const layoutOf = (t: Type): MemoryLayout<unknown> | undefined => t.memoryLayout;
  const vars = [...fg.inputs, ...nodes.flatMap((n) => [...n.inputs, ...n.outputs])];
  if (vars.every((v) => isTensorType(v.type))) return undefined;
  const missing = vars.find((v) => !isTensorType(v.type) && !layoutOf(v.type));
  if (missing) return `the graph holds values of the type ${missing.type}, which does not say how its values live in shared memory (Type.memoryLayout)`;
  const host = nodes.find((n) => [...n.inputs, ...n.outputs].some((v) => !isTensorType(v.type)) && !(n.op.kernel?.(n) && n.op.outputShapes));
  if (host) return `${host.op} reads or makes values of another type than tensors and has no worker kernel (kernel and outputShapes)`;

  const tensorTypeOf = (t: Type): TensorType => {
    if (t instanceof TensorType) return t;
    const layout = layoutOf(t)!;
    return new TensorType(layout.dtype, layout.shape);
  };
  const asArray = (t: Type, value: unknown): NdArray => {
    const layout = layoutOf(t)!;
    const data = new STORAGE[layout.dtype](sizeOf(layout.shape));
    data.set(layout.toArray(value));
    return makeNdArray(data, layout.shape);
  };
  const mapped = new Map<Variable, Variable>();
  const map = (v: Variable): Variable => {
    let m = mapped.get(v);
    if (!m) {
      if (isTensorType(v.type)) m = isConstant(v) ? v : v.type.makeVariable(v.name);
      else m = isConstant(v) ? tensorTypeOf(v.type).makeConstant(asArray(v.type, v.data), v.name) : tensorTypeOf(v.type).makeVariable(v.name);
      mapped.set(v, m);
    }
    return m;
  };
  const inputs = fg.inputs.map(map);
  for (const n of nodes) {
    const outs = n.outputs.map((o) => tensorTypeOf(o.type).makeVariable(o.name));
    new Apply(n.op, n.inputs.map(map), outs);
    n.outputs.forEach((o, j) => mapped.set(o, outs[j]!));
  }
  const copy = new FunctionGraph(inputs, fg.outputs.map(map));
  const dh = fg.features.find((f): f is DestroyHandler => f instanceof DestroyHandler);
  const destroyable = dh ? [...dh.destroyable].map((v) => copy.equiv.get(mapped.get(v)!)).filter((v): v is Variable => v !== undefined) : [];
  copy.attachFeature(new DestroyHandler({ destroyable }));
  return {
    fgraph: copy,
    toArrays: (values) => values.map((v, i) => (isTensorType(fg.inputs[i]!.type) ? (v as NdArray) : asArray(fg.inputs[i]!.type, v))),
    fromArrays: (values) =>
      values.map((v, j) => {
        const t = fg.outputs[j]!.type;
        return isTensorType(t) ? v : layoutOf(t)!.fromArray(flatValues(v));
      }),
  };
}
