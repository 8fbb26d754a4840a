// The reference executor (Theano's linker at its simplest, PyTensor's one VM): runs the nodes of a
// FunctionGraph in toposort order (orderings included) on the calling thread with each op's
// perform, and drops every intermediate value after its last reader. It defines what a graph
// computes: the worker runtime is tested against it, ops with inner graphs run them with it, and
// the checking modes (NanGuardMode, DebugMode) and profiles are hooks over it (RunHooks).
// Inputs that inplace nodes overwrite are copied first: the caller's values never change.
import { abortedBy } from './abort.js';
import type { Apply } from './apply.js';
import { destroyedInputs } from './destroy-handler.js';
import type { FunctionGraph } from './fgraph.js';
import { performNode } from './node-error.js';
import { isConstant, type Variable } from './variable.js';

/** What a hook hears of one node's run. */
export interface NodeStep {
  /** The node's input values as the run holds them. */
  readonly values: readonly unknown[];
  /** What perform was given (`values`, or the hook's `arguments`). */
  readonly given: readonly unknown[];
  readonly outputs: readonly unknown[];
  /** The values alive after the node ran (its inputs and outputs among them), before any is dropped. */
  readonly live: ReadonlyMap<Variable, unknown>;
  /** On the clock `now`, when the hooks have one. */
  readonly start: number;
  readonly end: number;
}

/** Ways into a run, each optional: what a checking mode or a profile adds to the one interpreter. */
export interface RunHooks {
  /** Stops the run before the next node once it aborts; the error is `aborted(signal)`'s (default: an AbortError). */
  readonly signal?: AbortSignal;
  readonly aborted?: (signal: AbortSignal) => Error;
  /** The clock of NodeStep's start and end (none: both are 0). */
  readonly now?: () => number;
  /** The caller's values are its own copies (a mode's runtime gets those): the run copies no input. */
  readonly inputsAreCopies?: boolean;
  /** Hears each graph input's value as the run takes it (after the copy of an overwritten input). */
  readonly input?: (index: number, variable: Variable, value: unknown) => void;
  /** perform's arguments for a node (default: the values themselves), e.g. private copies. */
  readonly arguments?: (node: Apply, position: number, values: readonly unknown[]) => readonly unknown[];
  /** Hears each node after it ran; a throw stops the run. */
  readonly after?: (node: Apply, position: number, step: NodeStep) => void;
}

const abortError = (signal: AbortSignal): Error => abortedBy(signal, 'the run was aborted');

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

  /** Runs the graph on one value per graph input; returns one value per graph output. */
  run(inputs: readonly unknown[], hooks: RunHooks = {}): unknown[] {
    const fg = this.fgraph;
    if (inputs.length !== fg.inputs.length) {
      throw new Error(`ReferenceExecutor: expected ${fg.inputs.length} input values, got ${inputs.length}`);
    }
    const { signal, now, after } = hooks;
    const values = new Map<Variable, unknown>();
    fg.inputs.forEach((v, i) => {
      const value = this.#copied.has(i) && !hooks.inputsAreCopies ? v.type.copyValue(inputs[i]) : inputs[i];
      hooks.input?.(i, v, value);
      values.set(v, value);
    });
    const valueOf = (v: Variable): unknown => {
      if (values.has(v)) return values.get(v);
      if (isConstant(v)) return v.data;
      throw new Error(`ReferenceExecutor: no value for ${v}`);
    };
    this.order.forEach((node, k) => {
      if (signal?.aborted) throw (hooks.aborted ?? abortError)(signal);
      const args = node.inputs.map(valueOf);
      const given = hooks.arguments?.(node, k, args) ?? args;
      const start = now?.() ?? 0;
      const outs = performNode(node, k, given, args);
      const end = now?.() ?? 0;
      node.outputs.forEach((o, j) => values.set(o, outs[j]));
      after?.(node, k, { values: args, given, outputs: outs, live: values, start, end });
      for (const v of this.#freeAfter[k]!) values.delete(v);
    });
    return fg.outputs.map(valueOf);
  }
}
