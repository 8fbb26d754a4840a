// The reference executor (Theano's linker at its simplest): runs the nodes of a FunctionGraph in
// toposort order (orderings included) on the calling thread with each op's perform, and drops
// every intermediate value after its last reader. It defines what a graph computes: the worker
// runtime is tested against it, and ops with inner graphs (Map, OpFromGraph) run them with it.
// Inputs that inplace nodes overwrite are copied first: the caller's values never change.
import type { Apply } from './apply.js';
import { destroyedInputs } from './destroy-handler.js';
import type { FunctionGraph } from './fgraph.js';
import { performNode } from './node-error.js';
import { isConstant, type Variable } from './variable.js';

/** Hears when each node runs (for profiles). */
export interface NodeObserver {
  now(): number;
  node(node: Apply, start: number, end: number): void;
}

export class ReferenceExecutor {
  readonly order: readonly Apply[];
  /** Variables whose value can be dropped once node k has run. */
  readonly #freeAfter: ReadonlyArray<readonly Variable[]>;
  /** Indices of the inputs that some node overwrites (through any view): copied at each run. */
  readonly #copied: ReadonlySet<number>;

  constructor(readonly fgraph: FunctionGraph) {
    this.order = fgraph.toposort();
    const destroyed = destroyedInputs(fgraph);
    this.#copied = new Set(fgraph.inputs.flatMap((v, i) => (destroyed.has(v) ? [i] : [])));
    const lastUse = new Map<Variable, number>();
    this.order.forEach((node, k) => node.inputs.forEach((v) => lastUse.set(v, k)));
    const kept = new Set([...fgraph.outputs, ...fgraph.inputs]);
    const freeAfter: Variable[][] = this.order.map(() => []);
    for (const [v, k] of lastUse) if (!kept.has(v) && !isConstant(v)) freeAfter[k]!.push(v);
    this.#freeAfter = freeAfter;
  }

  /**
   * Runs the graph on one value per graph input; returns one value per graph output.
   * `observer.node` hears each node's start and end (on the clock `observer.now`).
   */
  run(inputs: readonly unknown[], observer?: NodeObserver): unknown[] {
    const fg = this.fgraph;
    if (inputs.length !== fg.inputs.length) {
      throw new Error(`ReferenceExecutor: expected ${fg.inputs.length} input values, got ${inputs.length}`);
    }
    const values = new Map<Variable, unknown>();
    fg.inputs.forEach((v, i) => values.set(v, this.#copied.has(i) ? v.type.copyValue(inputs[i]) : inputs[i]));
    const valueOf = (v: Variable): unknown => {
      if (values.has(v)) return values.get(v);
      if (isConstant(v)) return v.data;
      throw new Error(`ReferenceExecutor: no value for ${v}`);
    };
    this.order.forEach((node, k) => {
      const args = node.inputs.map(valueOf);
      const start = observer?.now();
      const outs = performNode(node, k, args);
      if (observer) observer.node(node, start!, observer.now());
      node.outputs.forEach((o, j) => values.set(o, outs[j]));
      for (const v of this.#freeAfter[k]!) values.delete(v);
    });
    return fg.outputs.map(valueOf);
  }
}
