// The structure of a graph as canonical text: equal for graphs that compute the same thing by
// the same ops (inputs by type and position, constants by value, shared variables by identity),
// whatever their variables are called. OpFromGraph uses it as its identity, so equal
// encapsulated graphs merge.
import type { FunctionGraph } from './fgraph.js';
import { SharedVariable } from './shared.js';
import { isConstant, type Variable } from './variable.js';

export function graphStructure(fg: FunctionGraph): string {
  const ref = new Map<Variable, string>();
  fg.inputs.forEach((v, i) => ref.set(v, v instanceof SharedVariable ? `s${v.id}` : `i${i}:${v.type.key}`));
  const lines: string[] = [];
  fg.toposort().forEach((node, k) => {
    const args = node.inputs.map((v) => {
      const r = ref.get(v);
      if (r !== undefined) return r;
      if (isConstant(v)) return `c(${v.signature})`;
      if (v instanceof SharedVariable) return `s${v.id}`;
      throw new Error(`graphStructure: ${v} is neither an input, a constant nor computed before ${node}`);
    });
    node.outputs.forEach((o, j) => ref.set(o, `n${k}.${j}`));
    lines.push(`${node.op.key}(${args.join(',')})`);
  });
  const outs = fg.outputs.map((v) => ref.get(v) ?? (isConstant(v) ? `c(${v.signature})` : '?'));
  return `[${fg.inputs.map((v) => ref.get(v)).join(',')}]{${lines.join(';')}}->[${outs.join(',')}]`;
}
