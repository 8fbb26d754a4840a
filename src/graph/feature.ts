// Features observe a FunctionGraph: they hear every import, prune and input change as it
// happens, may veto a change (validate throws), and may add ordering constraints that the
// scheduler must respect (the destroy handler's "destroyers run after readers").
import type { Apply } from './apply.js';
import type { FunctionGraph } from './fgraph.js';
import type { Variable } from './variable.js';

/** A use of a variable: input `index` of `node`, or output `index` of the graph. */
export type Client =
  | { readonly kind: 'apply'; readonly node: Apply; readonly index: number }
  | { readonly kind: 'output'; readonly index: number };

export interface Feature {
  /** Called when attached; may throw to refuse the graph. */
  onAttach?(fg: FunctionGraph): void;
  onDetach?(fg: FunctionGraph): void;
  /** A node entered the graph. */
  onImport?(fg: FunctionGraph, node: Apply, reason: string): void;
  /** A node left the graph (nothing used its outputs any more). */
  onPrune?(fg: FunctionGraph, node: Apply, reason: string): void;
  /** `client` now reads `newVar` where it read `oldVar`. */
  onChangeInput?(fg: FunctionGraph, client: Client, oldVar: Variable, newVar: Variable, reason: string): void;
  /** Throws an InconsistencyError when the graph as it now stands is not acceptable. */
  validate?(fg: FunctionGraph): void;
  /** node -> the nodes that must run before it, beyond data dependencies. */
  orderings?(fg: FunctionGraph): ReadonlyMap<Apply, Iterable<Apply>>;
}

/** A feature's refusal of a graph or of a change to it; `replace` undoes the change. */
export class InconsistencyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InconsistencyError';
  }
}
