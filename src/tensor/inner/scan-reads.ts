// Where a step graph ends: which computed variables the step reads from outside, to be outer
// inputs of the Scan (computed once, before the loop) rather than computations copied into it
// (run, and random draws drawn again, at every step).
import { ioToposort } from '../../graph/traversal.js';
import { isConstant, type Variable } from '../../graph/variable.js';

export interface StepBoundary {
  /** The step's own inputs (rows, past states): what the step computes from starts here. */
  readonly placeholders: ReadonlySet<Variable>;
  /** The declared non-sequences: outer inputs whatever computes them. */
  readonly declared: ReadonlySet<Variable>;
  /** Variables with a smaller id existed before the step function ran. */
  readonly madeBefore: number;
  /** Shared variables the step updates: what reads them must follow their state at each step. */
  readonly states: ReadonlySet<Variable>;
}

/**
 * The computed variables among the ancestors of `roots` that are outer inputs of the loop: the
 * declared non-sequences, and what the step captured from outside (made before it ran), unless
 * that reads a state the step updates. Leaves (inputs, shared variables, constants) are not
 * listed; they are never copied.
 */
export function outerReads(roots: readonly Variable[], boundary: StepBoundary): Set<Variable> {
  const { placeholders, declared, madeBefore, states } = boundary;
  const readsState = new Set<Variable>(states);
  const outer = new Set<Variable>();
  // In topological order a variable's inputs are classified before it.
  for (const node of ioToposort(placeholders, roots)) {
    const stateful = node.inputs.some((v) => readsState.has(v));
    for (const v of node.outputs) {
      if (stateful) readsState.add(v);
      if (isConstant(v)) continue;
      if (declared.has(v) || (v.id < madeBefore && !stateful)) outer.add(v);
    }
  }
  return outer;
}
