// Walking graphs: ancestors, graph inputs, and the topological order of the nodes between some
// inputs and some outputs, with extra ordering constraints. Iterative, so graphs of any depth
// walk without exhausting the stack.
import type { Apply } from './apply.js';
import type { Variable } from './variable.js';

/** node -> the nodes that must run before it, beyond its data dependencies. */
export type Orderings = ReadonlyMap<Apply, Iterable<Apply>>;

export class CycleError extends Error {
  constructor(readonly node: Apply) {
    super(`the graph has a cycle through ${node} (data edges and orderings together)`);
    this.name = 'CycleError';
  }
}

/**
 * Postorder over `roots` and their dependencies: every node comes after all of `deps(node)`.
 * Throws CycleError on a cycle.
 */
export function postorder(roots: Iterable<Apply>, deps: (node: Apply) => Iterable<Apply>): Apply[] {
  const done = new Set<Apply>();
  const onStack = new Set<Apply>();
  const order: Apply[] = [];
  for (const root of roots) {
    if (done.has(root)) continue;
    const stack: Array<{ node: Apply; it: Iterator<Apply> }> = [{ node: root, it: deps(root)[Symbol.iterator]() }];
    onStack.add(root);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const next = top.it.next();
      if (next.done) {
        stack.pop();
        onStack.delete(top.node);
        done.add(top.node);
        order.push(top.node);
        continue;
      }
      const dep = next.value;
      if (done.has(dep)) continue;
      if (onStack.has(dep)) throw new CycleError(dep);
      onStack.add(dep);
      stack.push({ node: dep, it: deps(dep)[Symbol.iterator]() });
    }
  }
  return order;
}

function* ownersOf(inputs: readonly Variable[], stop: ReadonlySet<Variable>): Iterable<Apply> {
  for (const v of inputs) if (v.owner && !stop.has(v)) yield v.owner;
}

/**
 * The apply nodes needed to compute `outputs` when `inputs` are given (the walk stops at them),
 * in an order where each node follows its dependencies and the nodes `orderings` puts before it.
 */
export function ioToposort(
  inputs: Iterable<Variable>,
  outputs: Iterable<Variable>,
  orderings?: Orderings,
): Apply[] {
  const stop = new Set(inputs);
  const roots: Apply[] = [];
  for (const o of outputs) if (o.owner && !stop.has(o)) roots.push(o.owner);
  const deps = orderings
    ? function* (n: Apply): Iterable<Apply> {
        yield* ownersOf(n.inputs, stop);
        const extra = orderings.get(n);
        if (extra) yield* extra;
      }
    : (n: Apply) => ownersOf(n.inputs, stop);
  return postorder(roots, deps);
}

/** Every variable that `vars` depend on (themselves included), not walking past `blockers`. */
export function ancestors(vars: Iterable<Variable>, blockers?: ReadonlySet<Variable>): Variable[] {
  const seen = new Set<Variable>();
  const order: Variable[] = [];
  const stack = [...vars].reverse();
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (seen.has(v)) continue;
    seen.add(v);
    order.push(v);
    if (v.owner && !blockers?.has(v)) {
      for (let i = v.owner.inputs.length - 1; i >= 0; i--) stack.push(v.owner.inputs[i]!);
    }
  }
  return order;
}

/** The root variables (no owner, constants included) that `vars` depend on. */
export function graphInputs(vars: Iterable<Variable>, blockers?: ReadonlySet<Variable>): Variable[] {
  return ancestors(vars, blockers).filter((v) => v.owner === null || blockers?.has(v));
}

/** Does `target` depend on any variable of `sources`? */
export function dependsOn(target: Variable, sources: Iterable<Variable>): boolean {
  const set = new Set(sources);
  return ancestors([target]).some((v) => set.has(v));
}
