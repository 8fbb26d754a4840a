// Copying graphs: a full clone (fresh variables and nodes, for a FunctionGraph to own) and a
// replacement that rebuilds only the nodes downstream of what was replaced (givens, grads).
import type { Apply } from './apply.js';
import { ioToposort } from './traversal.js';
import type { Variable } from './variable.js';

export interface CloneResult {
  readonly inputs: Variable[];
  readonly outputs: Variable[];
  /** old variable -> its copy */
  readonly equiv: Map<Variable, Variable>;
  /** old node -> its copy */
  readonly nodeEquiv: Map<Apply, Apply>;
}

function rebuildNode(node: Apply, inputs: readonly Variable[]): Apply {
  const copy = node.cloneWithNewInputs(inputs, false);
  copy.outputs.forEach((o, i) => {
    if (o.name === undefined) o.name = node.outputs[i]!.name;
  });
  return copy;
}

/**
 * Copies the graph between `inputs` and `outputs`. Inputs are copied too unless `copyInputs` is
 * false; other root variables (orphans, e.g. constants and shared variables) are kept as they are.
 */
export function cloneGraph(
  inputs: readonly Variable[],
  outputs: readonly Variable[],
  options: { copyInputs?: boolean } = {},
): CloneResult {
  const equiv = new Map<Variable, Variable>();
  const nodeEquiv = new Map<Apply, Apply>();
  for (const v of inputs) equiv.set(v, options.copyInputs === false ? v : v.clone());
  for (const node of ioToposort(inputs, outputs)) {
    const copy = rebuildNode(node, node.inputs.map((v) => equiv.get(v) ?? v));
    nodeEquiv.set(node, copy);
    node.outputs.forEach((o, i) => equiv.set(o, copy.outputs[i]!));
  }
  return {
    inputs: inputs.map((v) => equiv.get(v)!),
    outputs: outputs.map((v) => equiv.get(v) ?? v),
    equiv,
    nodeEquiv,
  };
}

/**
 * `outputs` with each `[old, new]` of `replacements` substituted. Nodes that depend on no replaced
 * variable are shared with the original graph, not copied. A replacement must have the type of
 * what it replaces (or a more specific one).
 */
export function cloneReplace(
  outputs: readonly Variable[],
  replacements: Iterable<readonly [Variable, Variable]>,
): Variable[] {
  const memo = new Map<Variable, Variable>();
  for (const [oldVar, newVar] of replacements) {
    if (!oldVar.type.equals(newVar.type) && !oldVar.type.convertVariable(newVar)) {
      throw new TypeError(
        `cannot replace ${oldVar} (${oldVar.type}) with ${newVar} (${newVar.type}): the types are not compatible`,
      );
    }
    memo.set(oldVar, newVar);
  }
  if (memo.size === 0) return [...outputs];
  for (const node of ioToposort(memo.keys(), outputs)) {
    const inputs = node.inputs.map((v) => memo.get(v) ?? v);
    if (inputs.every((v, i) => v === node.inputs[i])) continue;
    const copy = rebuildNode(node, inputs);
    node.outputs.forEach((o, i) => memo.set(o, copy.outputs[i]!));
  }
  return outputs.map((v) => memo.get(v) ?? v);
}
