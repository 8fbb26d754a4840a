// The destroy handler (Theano's): the feature that makes inplace operations safe. It follows
// views (viewMap) to the value they show, and for every op that overwrites an input (destroyMap)
// it checks that nothing still needs that value afterwards, and gives the orderings that make
// the destroyer run after every other reader of the value and of its views. The scheduler turns
// those orderings into edges, so threads never overwrite what another task still reads.
import type { Apply } from './apply.js';
import { InconsistencyError, type Feature } from './feature.js';
import type { FunctionGraph } from './fgraph.js';
import { SharedVariable } from './shared.js';
import { CycleError, ioToposort } from './traversal.js';
import { isConstant, type Variable } from './variable.js';

export interface DestroyHandlerOptions {
  /** Graph inputs that may be overwritten (mutable inputs, shared variables this function updates). */
  readonly destroyable?: Iterable<Variable>;
}

interface Analysis {
  /** Each variable's view root: the value it shows (itself when it is no view). */
  readonly root: Map<Variable, Variable>;
  /** Root -> every variable that shows it (itself included). */
  readonly views: Map<Variable, Variable[]>;
  /** Root -> the node that overwrites it, if one does. */
  readonly destroyer: Map<Variable, Apply>;
  readonly orderings: Map<Apply, Apply[]>;
}

function describeNode(node: Apply): string {
  return `${node.op}(${node.inputs.map(String).join(', ')})`;
}

function destroys(node: Apply): boolean {
  for (const k in node.op.destroyMap) if ((node.op.destroyMap[Number(k)]?.length ?? 0) > 0) return true;
  return false;
}

/** Each variable of `order`'s nodes that is a view -> the value it shows (chains followed). */
function viewRoots(order: readonly Apply[]): Map<Variable, Variable> {
  const root = new Map<Variable, Variable>();
  for (const node of order) {
    // Only views follow a value: an output written over an input holds a new value (whose own
    // readers come after the overwrite), so chained inplace ops each overwrite a different value.
    for (const [o, ins] of Object.entries(node.op.viewMap)) {
      const i = ins[0];
      const out = node.outputs[Number(o)];
      if (i === undefined || out === undefined) continue;
      const v = node.inputs[i]!;
      root.set(out, root.get(v) ?? v);
    }
  }
  return root;
}

/** The views (and views of views) whose elements share memory (op.repeatsElements): not to be overwritten. */
function repeatedViews(order: readonly Apply[]): Set<Variable> {
  const repeated = new Set<Variable>();
  for (const node of order) {
    for (const [o, ins] of Object.entries(node.op.viewMap)) {
      const v = ins[0] === undefined ? undefined : node.inputs[ins[0]];
      const out = node.outputs[Number(o)];
      if (v && out && (node.op.repeatsElements || repeated.has(v))) repeated.add(out);
    }
  }
  return repeated;
}

/**
 * The inputs of `fg` whose memory some node overwrites (directly or through a view): an
 * executor that works on the caller's values must copy these before it runs the graph.
 */
export function destroyedInputs(fg: FunctionGraph): Set<Variable> {
  const out = new Set<Variable>();
  if (![...fg.applyNodes].some(destroys)) return out;
  const order = ioToposort(fg.inputs, fg.outputs);
  const root = viewRoots(order);
  for (const node of order) {
    for (const ins of Object.values(node.op.destroyMap)) {
      for (const i of ins) {
        const v = node.inputs[i]!;
        const r = root.get(v) ?? v;
        if (fg.isInput(r)) out.add(r);
      }
    }
  }
  return out;
}

export class DestroyHandler implements Feature {
  readonly destroyable: Set<Variable>;
  #fg: FunctionGraph | undefined;
  #cache: Analysis | undefined;
  /** The nodes of the graph that overwrite an input, kept up to date by the graph's events. */
  readonly #destroyers = new Set<Apply>();

  constructor(options: DestroyHandlerOptions = {}) {
    this.destroyable = new Set(options.destroyable ?? []);
  }

  onAttach(fg: FunctionGraph): void {
    if (this.#fg && this.#fg !== fg) throw new Error('a DestroyHandler serves one FunctionGraph');
    this.#fg = fg;
    this.#cache = undefined;
    this.#destroyers.clear();
    for (const n of fg.applyNodes) if (destroys(n)) this.#destroyers.add(n);
    this.validate(fg);
  }

  onDetach(): void {
    this.#fg = undefined;
    this.#cache = undefined;
    this.#destroyers.clear();
  }

  onImport(_fg: FunctionGraph, node: Apply): void {
    this.#cache = undefined;
    if (destroys(node)) this.#destroyers.add(node);
  }

  onPrune(_fg: FunctionGraph, node: Apply): void {
    this.#cache = undefined;
    this.#destroyers.delete(node);
  }

  onChangeInput(): void {
    this.#cache = undefined;
  }

  /** Does any node of the graph overwrite an input? */
  static hasDestroyers(fg: FunctionGraph): boolean {
    for (const n of fg.applyNodes) if (destroys(n)) return true;
    return false;
  }

  /** Does a node of the graph this handler serves overwrite an input? (Kept by events: O(1).) */
  #hasDestroyers(fg: FunctionGraph): boolean {
    if (fg !== this.#fg) return DestroyHandler.hasDestroyers(fg);
    for (const n of this.#destroyers) if (fg.applyNodes.has(n)) return true;
    return false;
  }

  /** What `r`, a graph input, may not be overwritten for (undefined: it may be). */
  #inputRefusal(fg: FunctionGraph, r: Variable): string | undefined {
    if (!fg.isInput(r) || this.destroyable.has(r)) return undefined;
    if (r instanceof SharedVariable) return `the value of the shared variable ${r}, which this function does not update`;
    return 'an input of the graph that is not mutable (give it as In(x, { mutable: true }) to allow this)';
  }

  #analyse(fg: FunctionGraph): Analysis {
    if (this.#cache) return this.#cache;
    const views = new Map<Variable, Variable[]>();
    const destroyer = new Map<Variable, Apply>();
    const orderings = new Map<Apply, Apply[]>();
    const order = ioToposort(fg.inputs, fg.outputs);
    const root = viewRoots(order);
    const repeated = repeatedViews(order);
    const rootOf = (v: Variable): Variable => root.get(v) ?? v;
    for (const v of fg.variables) {
      const r = rootOf(v);
      const list = views.get(r);
      if (list) list.push(v);
      else views.set(r, [v]);
    }
    for (const node of order) {
      if (!destroys(node)) continue;
      const destroyed = new Map<Variable, number>();
      for (const ins of Object.values(node.op.destroyMap)) {
        for (const i of ins) {
          const v = node.inputs[i]!;
          const r = rootOf(v);
          const what = r === v ? `${v}` : `${v}, a view of ${r}`;
          if (isConstant(r)) throw new InconsistencyError(`${describeNode(node)} would overwrite ${what}, which is a constant`);
          if (repeated.has(v)) throw new InconsistencyError(`${describeNode(node)} would overwrite ${what}, through a broadcast view whose elements share memory`);
          const refusal = this.#inputRefusal(fg, r);
          if (refusal) throw new InconsistencyError(`${describeNode(node)} would overwrite ${what}, ${refusal}`);
          if (destroyed.has(r)) throw new InconsistencyError(`${describeNode(node)} would overwrite ${r} twice, through two of its inputs`);
          destroyed.set(r, i);
          const other = destroyer.get(r);
          if (other && other !== node) {
            throw new InconsistencyError(`${describeNode(node)} and ${describeNode(other)} would both overwrite ${r}`);
          }
          destroyer.set(r, node);
        }
      }
      // A node must not read what it overwrites through another input: its kernel would read
      // elements it has already written (or write them twice).
      node.inputs.forEach((v, j) => {
        const r = rootOf(v);
        const i = destroyed.get(r);
        if (i === undefined || i === j) return;
        throw new InconsistencyError(
          `${describeNode(node)} would overwrite ${node.inputs[i]} (input ${i}) while it also reads ${r} through input ${j} (${v})`,
        );
      });
    }
    for (const [r, d] of destroyer) {
      const readers = new Set<Apply>();
      for (const v of views.get(r) ?? [r]) {
        for (const c of fg.clients(v)) {
          if (c.kind === 'apply' && c.node !== d) readers.add(c.node);
          if (c.kind === 'output') {
            throw new InconsistencyError(`${describeNode(d)} would overwrite ${r}, whose value the graph also returns (as ${v})`);
          }
        }
      }
      const list = orderings.get(d);
      if (list) for (const x of readers) list.push(x);
      else orderings.set(d, [...readers]);
    }
    this.#cache = { root, views, destroyer, orderings };
    return this.#cache;
  }

  /** Throws an InconsistencyError when an overwrite would lose a value something still needs. */
  validate(fg: FunctionGraph): void {
    if (!this.#hasDestroyers(fg)) {
      this.#cache = undefined;
      return;
    }
    const analysis = this.#analyse(fg);
    try {
      ioToposort(fg.inputs, fg.outputs, analysis.orderings);
    } catch (e) {
      if (!(e instanceof CycleError)) throw e;
      // A reader that depends on the overwrite's result would have to run both before and
      // after it: name the pair (the search runs only for a graph that is refused).
      for (const [d, readers] of analysis.orderings) {
        const late = readers.length > 0 ? firstDescendant(fg, d, new Set(readers)) : undefined;
        if (late) {
          throw new InconsistencyError(
            `${describeNode(d)} overwrites its input, but ${describeNode(late)} reads that value after it (it depends on the overwrite's result)`,
          );
        }
      }
      throw new InconsistencyError(`the overwrites of this graph cannot be ordered: ${e.message}`);
    }
  }

  /** Each destroyer after every other reader of what it overwrites (and of that value's views). */
  orderings(fg: FunctionGraph): ReadonlyMap<Apply, Iterable<Apply>> {
    if (!this.#hasDestroyers(fg)) return new Map();
    return this.#analyse(fg).orderings;
  }

  /** The value `v` shows (the end of its chain of views), for planners and checks. */
  rootOf(fg: FunctionGraph, v: Variable): Variable {
    return this.#analyse(fg).root.get(v) ?? v;
  }

  /** The nodes that read the value `v` shows, through `v` or any other view of it. */
  readersOf(fg: FunctionGraph, v: Variable): Apply[] {
    const analysis = this.#analyse(fg);
    const r = analysis.root.get(v) ?? v;
    const readers = new Set<Apply>();
    for (const w of analysis.views.get(r) ?? [r]) for (const c of fg.clients(w)) if (c.kind === 'apply') readers.add(c.node);
    return [...readers];
  }

  /** Does the graph return the value `v` shows (as `v` or as another view of it)? */
  isReturned(fg: FunctionGraph, v: Variable): boolean {
    const analysis = this.#analyse(fg);
    const r = analysis.root.get(v) ?? v;
    return (analysis.views.get(r) ?? [r]).some((w) => fg.clients(w).some((c) => c.kind === 'output'));
  }

  /** The node that overwrites the value `v` shows, if one does. */
  destroyerOf(fg: FunctionGraph, v: Variable): Apply | undefined {
    if (!this.#hasDestroyers(fg)) return undefined;
    const analysis = this.#analyse(fg);
    return analysis.destroyer.get(analysis.root.get(v) ?? v);
  }
}

/** The first node of `targets` that depends on `node`'s outputs (a walk over the clients). */
function firstDescendant(fg: FunctionGraph, node: Apply, targets: ReadonlySet<Apply>): Apply | undefined {
  const seen = new Set<Apply>([node]);
  const stack = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    for (const o of n.outputs) {
      for (const c of fg.clients(o)) {
        if (c.kind !== 'apply' || seen.has(c.node)) continue;
        if (targets.has(c.node)) return c.node;
        seen.add(c.node);
        stack.push(c.node);
      }
    }
  }
  return undefined;
}
