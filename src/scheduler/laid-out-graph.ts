// Graphs with values of other Types than tensors, planned anyway. A Type says how its values live
// in shared memory: as one array (Type.memoryLayout: a double is a 0-d float64 array) or as
// several whose lengths depend on the value (Type.partsLayout: a sparse matrix's data, indices,
// indptr and shape). The executor plans the same graph over tensors of those layouts, converting
// values on the way in and out, so that worker kernels read them in place. A node over a one-array
// layout needs a kernel; ops between a value and its parts (Op.partsRole) vanish into the mapping;
// any other node over parts runs its perform on the calling thread between stages (assembled-node.ts).
// (The guide's "double in C": c_extract and c_sync are toArray and fromArray here.)
import { Apply } from '../graph/apply.js';
import { DestroyHandler } from '../graph/destroy-handler.js';
import { FunctionGraph } from '../graph/fgraph.js';
import type { Type } from '../graph/type.js';
import { isConstant, type Variable } from '../graph/variable.js';
import { copyArray, type NdArray } from '../tensor/core/ndarray.js';
import { TensorType } from '../tensor/core/type.js';
import { AssembledNode, assemble, takeApart, widthOf, type Held } from './assembled-node.js';

export interface LaidOutGraph {
  /** The same graph over tensors: what plans place. */
  readonly fgraph: FunctionGraph;
  /** The call's input values as arrays of their layouts (tensors pass as they are). */
  toArrays(values: readonly unknown[]): NdArray[];
  /** The outputs back as values of their Types. */
  fromArrays(values: readonly NdArray[]): unknown[];
}

function heldOf(t: Type): Held | undefined {
  if (t instanceof TensorType) return { kind: 'tensor' };
  if (t.partsLayout) return { kind: 'parts', layout: t.partsLayout };
  if (t.memoryLayout) return { kind: 'array', layout: t.memoryLayout };
  return undefined;
}

/** The tensor types that hold a variable of type `t`. */
function tensorTypesOf(t: Type, h: Held): TensorType[] {
  switch (h.kind) {
    case 'tensor':
      return [t as TensorType];
    case 'array':
      return [new TensorType(h.layout.dtype, h.layout.shape)];
    case 'parts':
      return h.layout.parts.map((p) => new TensorType(p.dtype, p.shape));
  }
}

/**
 * The graph laid out over tensors; undefined when it holds tensors only (plans take it as it is);
 * or the reason it cannot be laid out (it then runs on the calling thread).
 */
export function layOut(fg: FunctionGraph): LaidOutGraph | string | undefined {
  const nodes = fg.toposort();
  const vars = [...fg.inputs, ...nodes.flatMap((n) => [...n.inputs, ...n.outputs])];
  if (vars.every((v) => v.type instanceof TensorType)) return undefined;
  const missing = vars.find((v) => !heldOf(v.type));
  if (missing) return `the graph holds values of the type ${missing.type}, which does not say how its values live in shared memory (Type.memoryLayout)`;
  const held = (v: Variable): Held => heldOf(v.type)!;
  const host = nodes.find((n) => {
    const kinds = [...n.inputs, ...n.outputs].map((v) => held(v).kind);
    return kinds.includes('array') && !kinds.includes('parts') && !(n.op.kernel?.(n) && n.op.outputShapes);
  });
  if (host) return `${host.op} reads or makes values of another type than tensors and has no worker kernel (kernel and outputShapes)`;

  // Each variable of fg -> the tensors that hold it in the copy.
  const mapped = new Map<Variable, Variable[]>();
  const fresh = (v: Variable): Variable[] => tensorTypesOf(v.type, held(v)).map((t, i, all) => t.makeVariable(v.name && all.length > 1 ? `${v.name}.${i}` : v.name));
  const map = (v: Variable): Variable[] => {
    let m = mapped.get(v);
    if (!m) {
      const h = held(v);
      if (h.kind === 'tensor') m = [isConstant(v) ? v : v.type.makeVariable(v.name)];
      else if (isConstant(v)) {
        const arrays = takeApart(h, v.data);
        m = tensorTypesOf(v.type, h).map((t, i) => t.makeConstant(arrays[i]!, v.name));
      }
      else m = fresh(v);
      mapped.set(v, m);
    }
    return m;
  };
  const inputs = fg.inputs.flatMap(map);
  for (const n of nodes) {
    const role = n.op.partsRole;
    if (role === 'split') {
      const parts = map(n.inputs[0]!);
      n.outputs.forEach((o, j) => mapped.set(o, [parts[j]!]));
    } else if (role === 'join') {
      mapped.set(n.outputs[0]!, n.inputs.map((v) => map(v)[0]!));
    } else if ([...n.inputs, ...n.outputs].some((v) => held(v).kind === 'parts')) {
      const outs = n.outputs.map(fresh);
      new Apply(new AssembledNode(n, n.inputs.map(held), n.outputs.map(held)), n.inputs.flatMap(map), outs.flat());
      n.outputs.forEach((o, j) => mapped.set(o, outs[j]!));
    } else {
      const outs = n.outputs.map((o) => fresh(o)[0]!);
      new Apply(n.op, n.inputs.map((v) => map(v)[0]!), outs);
      n.outputs.forEach((o, j) => mapped.set(o, [outs[j]!]));
    }
  }
  const copy = new FunctionGraph(inputs, fg.outputs.flatMap(map));
  const dh = fg.features.find((f): f is DestroyHandler => f instanceof DestroyHandler);
  const destroyable = dh ? [...dh.destroyable].flatMap((v) => (mapped.get(v) ?? []).map((m) => copy.equiv.get(m))).filter((v): v is Variable => v !== undefined) : [];
  copy.attachFeature(new DestroyHandler({ destroyable }));
  const outputsHeld = fg.outputs.map(held);
  return {
    fgraph: copy,
    toArrays: (values) => values.flatMap((v, i) => takeApart(held(fg.inputs[i]!), v)),
    fromArrays: (values) => {
      // Two outputs held by one array (an output and its transpose: the same parts) get copies.
      const seen = new Set<NdArray>();
      const owned = values.map((a) => (seen.has(a) ? copyArray(a) : (seen.add(a), a)));
      let at = 0;
      return outputsHeld.map((h) => {
        const w = widthOf(h);
        const v = assemble(h, owned.slice(at, at + w));
        at += w;
        return v;
      });
    },
  };
}
