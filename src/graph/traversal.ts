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

/** Where a node stands in a depth-first walk. */
const ON_STACK = 1;
const DONE = 2;

/**
 * Postorder over `roots` and their dependencies: every node comes after all of `deps(node)`.
 * Throws CycleError on a cycle. Arrays returned by `deps` are walked by index, without iterators:
 * this runs on every node of every graph that is rewritten or compiled.
 */
export function postorder(roots: Iterable<Apply>, deps: (node: Apply) => Iterable<Apply>): Apply[] {
  const state = new Map<Apply, number>();
  const order: Apply[] = [];
  const stackNodes: Apply[] = [];
  const stackDeps: Array<readonly Apply[]> = [];
  const stackAt: number[] = [];
  const push = (node: Apply): void => {
    const d = deps(node);
    state.set(node, ON_STACK);
    stackNodes.push(node);
    stackDeps.push(Array.isArray(d) ? d : [...d]);
    stackAt.push(0);
  };
  for (const root of roots) {
    if (state.get(root) === DONE) continue;
    push(root);
    while (stackNodes.length > 0) {
      const top = stackNodes.length - 1;
      const list = stackDeps[top]!;
      const at = stackAt[top]!;
      if (at === list.length) {
        const node = stackNodes.pop()!;
        stackDeps.pop();
        stackAt.pop();
        state.set(node, DONE);
        order.push(node);
        continue;
      }
      stackAt[top] = at + 1;
      const dep = list[at]!;
      const s = state.get(dep);
      if (s === DONE) continue;
      if (s === ON_STACK) throw new CycleError(dep);
      push(dep);
    }
  }
  return order;
}

/**
 * The apply nodes needed to compute `outputs` when `inputs` are given (the walk stops at them),
 * in an order where each node follows its dependencies and the nodes `orderings` puts before it.
 * The same walk as `postorder`, specialised: a node's dependencies are the owners of its inputs
 * (then its orderings), read straight from the node, so no list is built per node.
 */
export function ioToposort(
  inputs: Iterable<Variable>,
  outputs: Iterable<Variable>,
  orderings?: Orderings,
): Apply[] {
  const stop = new Set(inputs);
  // The walk only stops at computed variables; when every stop is a root (a FunctionGraph's
  // inputs always are), no edge needs the set lookup.
  let stopsComputed = false;
  for (const v of stop) if (v.owner !== null) stopsComputed = true;
  const extraOf = (n: Apply): readonly Apply[] | undefined => {
    const extra = orderings?.get(n);
    return extra === undefined ? undefined : Array.isArray(extra) ? extra : [...extra];
  };
  const state = new Map<Apply, number>();
  const order: Apply[] = [];
  // The stack holds each node with a cursor over its inputs, then over its extra orderings.
  const stackNodes: Apply[] = [];
  const stackAt: number[] = [];
  const stackExtra: Array<readonly Apply[] | undefined> = [];
  const visit = (dep: Apply): void => {
    const s = state.get(dep);
    if (s === DONE) return;
    if (s === ON_STACK) throw new CycleError(dep);
    state.set(dep, ON_STACK);
    stackNodes.push(dep);
    stackAt.push(0);
    stackExtra.push(orderings ? extraOf(dep) : undefined);
  };
  for (const o of outputs) {
    if (!o.owner || stop.has(o)) continue;
    visit(o.owner);
    while (stackNodes.length > 0) {
      const top = stackNodes.length - 1;
      const node = stackNodes[top]!;
      const at = stackAt[top]!;
      const nIn = node.inputs.length;
      if (at < nIn) {
        stackAt[top] = at + 1;
        const v = node.inputs[at]!;
        if (v.owner !== null && !(stopsComputed && stop.has(v))) visit(v.owner);
        continue;
      }
      const extra = stackExtra[top];
      if (extra !== undefined && at < nIn + extra.length) {
        stackAt[top] = at + 1;
        visit(extra[at - nIn]!);
        continue;
      }
      stackNodes.pop();
      stackAt.pop();
      stackExtra.pop();
      state.set(node, DONE);
      order.push(node);
    }
  }
  return order;
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
