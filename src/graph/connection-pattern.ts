// Connection patterns: which outputs of a node (or of a subgraph) depend on which of its inputs,
// as the ops declare it. Differentiation uses them to know where gradients can flow, and an
// inner graph (OpFromGraph) composes its nodes' patterns into its own (Theano's io_connection_pattern).
import type { Apply } from './apply.js';
import { ioToposort } from './traversal.js';
import type { Variable } from './variable.js';

/** pattern[i][j]: does output j of the node depend on input i? All true when the op does not say. */
export function connectionPatternOf(node: Apply): boolean[][] {
  return node.op.connectionPattern?.(node) ?? node.inputs.map(() => node.outputs.map(() => true));
}

/**
 * pattern[i][j]: does `outputs[j]` depend on `inputs[i]` through connected inputs and outputs of
 * the nodes between them? A node passes on only the connections its own pattern declares, so an
 * input that only sets a length (or only reaches an output the node does not connect it to) is
 * not connected, even though it is an ancestor.
 */
export function ioConnectionPattern(inputs: readonly Variable[], outputs: readonly Variable[]): boolean[][] {
  // For each variable, the set of inputs (by index) it is connected to.
  const reach = new Map<Variable, ReadonlySet<number>>();
  inputs.forEach((v, i) => reach.set(v, new Set([i])));
  for (const node of ioToposort(inputs, outputs)) {
    const pattern = connectionPatternOf(node);
    node.outputs.forEach((out, j) => {
      const from = new Set<number>();
      node.inputs.forEach((inp, i) => {
        if (pattern[i]![j]) for (const k of reach.get(inp) ?? []) from.add(k);
      });
      reach.set(out, from);
    });
  }
  return inputs.map((_, i) => outputs.map((o) => reach.get(o)?.has(i) ?? false));
}
