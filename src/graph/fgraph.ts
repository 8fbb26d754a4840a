// FunctionGraph: a graph with designated inputs and outputs that owns the bookkeeping of who
// uses what (clients), so that rewrites can replace variables safely. Every change goes through
// `replace`/`replaceAll`, which check types and let features veto; a vetoed change is undone.
import type { Apply } from './apply.js';
import { cloneGraph } from './clone.js';
import { InconsistencyError, type Client, type Feature } from './feature.js';
import { ioToposort, postorder } from './traversal.js';
import { isConstant, type Variable } from './variable.js';

export class MissingInputError extends Error {
  constructor(readonly variable: Variable, where: string) {
    super(
      `${variable} is needed to compute the outputs (${where}) but is neither an input of the graph nor a constant; ` +
        'pass it as an input or give it a value with givens',
    );
    this.name = 'MissingInputError';
  }
}

export interface FunctionGraphOptions {
  readonly features?: readonly Feature[];
  /** Copy the graph first (the default), so that changes never touch the caller's variables. */
  readonly clone?: boolean;
}

export interface ReplaceOptions {
  readonly reason?: string;
}

function sameClient(a: Client, b: Client): boolean {
  if (a.kind === 'output') return b.kind === 'output' && a.index === b.index;
  return b.kind === 'apply' && a.node === b.node && a.index === b.index;
}

export class FunctionGraph {
  readonly inputs: Variable[] = [];
  readonly outputs: Variable[] = [];
  readonly applyNodes = new Set<Apply>();
  readonly variables = new Set<Variable>();
  /** When the graph was cloned at construction: each original variable -> its copy here. */
  readonly equiv: ReadonlyMap<Variable, Variable>;
  readonly #inputSet = new Set<Variable>();
  readonly #clients = new Map<Variable, Client[]>();
  readonly #features: Feature[] = [];
  /** While a replaceAll runs: each client list it touched, as it was before, to undo exactly. */
  #journal: Map<Variable, Client[]> | null = null;

  constructor(inputs: readonly Variable[], outputs: readonly Variable[], options: FunctionGraphOptions = {}) {
    let ins = inputs;
    let outs = outputs;
    if (options.clone ?? true) {
      const c = cloneGraph(inputs, outputs);
      ins = c.inputs;
      outs = c.outputs;
      this.equiv = c.equiv;
    } else {
      this.equiv = new Map(inputs.concat(outputs).map((v) => [v, v]));
    }
    for (const v of ins) this.addInput(v);
    for (const v of outs) this.addOutput(v, 'init');
    for (const f of options.features ?? []) this.attachFeature(f);
  }

  get features(): readonly Feature[] {
    return this.#features;
  }

  clients(v: Variable): readonly Client[] {
    return this.#clients.get(v) ?? [];
  }

  isInput(v: Variable): boolean {
    return this.#inputSet.has(v);
  }

  addInput(v: Variable): void {
    if (v.owner) throw new Error(`FunctionGraph: ${v} cannot be an input, it is computed by ${v.owner.op}`);
    if (isConstant(v)) throw new Error(`FunctionGraph: the constant ${v} cannot be an input`);
    if (this.#inputSet.has(v)) throw new Error(`FunctionGraph: ${v} is given twice as an input`);
    this.inputs.push(v);
    this.#inputSet.add(v);
    this.#track(v);
  }

  addOutput(v: Variable, reason = 'addOutput'): void {
    this.importVar(v, reason);
    this.outputs.push(v);
    this.#clients.get(v)!.push({ kind: 'output', index: this.outputs.length - 1 });
  }

  /** Saves `v`'s client list before its first change in the running replaceAll. */
  #touch(v: Variable): void {
    if (this.#journal && !this.#journal.has(v)) this.#journal.set(v, [...(this.#clients.get(v) ?? [])]);
  }

  #track(v: Variable): void {
    if (!this.variables.has(v)) {
      this.variables.add(v);
      this.#clients.set(v, []);
    }
  }

  /** Brings `v` and the nodes that compute it into the graph. */
  importVar(v: Variable, reason = 'importVar'): void {
    if (v.owner) {
      if (!this.applyNodes.has(v.owner)) this.importNode(v.owner, reason);
    } else if (!isConstant(v) && !this.#inputSet.has(v)) {
      throw new MissingInputError(v, reason);
    }
    this.#track(v);
  }

  /** Brings `node` and the nodes it depends on (those not yet here) into the graph. */
  importNode(node: Apply, reason = 'importNode'): void {
    const fresh = postorder([node], (n) => {
      const deps: Apply[] = [];
      for (const v of n.inputs) if (v.owner && !this.applyNodes.has(v.owner)) deps.push(v.owner);
      return deps;
    });
    for (const n of fresh) {
      for (const v of n.inputs) {
        if (!v.owner && !isConstant(v) && !this.#inputSet.has(v)) throw new MissingInputError(v, `${n}`);
      }
    }
    for (const n of fresh) {
      this.applyNodes.add(n);
      for (const o of n.outputs) this.#track(o);
      n.inputs.forEach((v, i) => {
        this.#track(v);
        this.#touch(v);
        this.#clients.get(v)!.push({ kind: 'apply', node: n, index: i });
      });
      for (const f of this.#features) f.onImport?.(this, n, reason);
    }
  }

  /** Removes one use of `v`; nodes whose outputs are no longer used leave the graph. */
  #removeClient(v: Variable, client: Client, reason: string): void {
    const work: Array<[Variable, Client]> = [[v, client]];
    while (work.length > 0) {
      const [variable, c] = work.pop()!;
      const list = this.#clients.get(variable);
      if (!list) continue;
      this.#touch(variable);
      const at = list.findIndex((x) => sameClient(x, c));
      if (at >= 0) list.splice(at, 1);
      if (list.length > 0) continue;
      const owner = variable.owner;
      if (owner === null) {
        if (!this.#inputSet.has(variable)) {
          this.variables.delete(variable);
          this.#clients.delete(variable);
        }
        continue;
      }
      if (!this.applyNodes.has(owner)) continue;
      if (owner.outputs.some((o) => (this.#clients.get(o)?.length ?? 0) > 0)) continue;
      this.applyNodes.delete(owner);
      for (const o of owner.outputs) {
        this.variables.delete(o);
        this.#clients.delete(o);
      }
      for (const f of this.#features) f.onPrune?.(this, owner, reason);
      owner.inputs.forEach((inp, i) => work.push([inp, { kind: 'apply', node: owner, index: i }]));
    }
  }

  #checkReplaceable(oldVar: Variable, newVar: Variable, reason: string): Variable {
    if (oldVar.type.equals(newVar.type)) return newVar;
    const converted = oldVar.type.convertVariable(newVar);
    if (!converted) {
      throw new TypeError(
        `cannot replace ${oldVar} (${oldVar.type}) with ${newVar} (${newVar.type})` +
          `${reason ? ` for ${reason}` : ''}: the types are not compatible`,
      );
    }
    return converted;
  }

  /** Makes `client` read `newVar` instead of what it reads now. No validation. */
  changeInput(client: Client, newVar: Variable, reason = 'changeInput'): void {
    this.#rewire(client, newVar, reason, true);
  }

  /**
   * `checked` is false only when undoing: the old variable may then be less specific than the
   * replacement it takes back from, which is no reason to refuse the undo.
   */
  #rewire(client: Client, newVar: Variable, reason: string, checked: boolean): void {
    const oldVar = client.kind === 'output' ? this.outputs[client.index]! : client.node.inputs[client.index]!;
    if (oldVar === newVar) return;
    const r = checked ? this.#checkReplaceable(oldVar, newVar, reason) : newVar;
    this.importVar(r, reason);
    if (client.kind === 'output') this.outputs[client.index] = r;
    else client.node.inputs[client.index] = r;
    this.#touch(r);
    this.#clients.get(r)!.push(client);
    for (const f of this.#features) f.onChangeInput?.(this, client, oldVar, r, reason);
    this.#removeClient(oldVar, client, reason);
  }

  /** Replaces every use of `oldVar` by `newVar`, then validates; a veto undoes the change. */
  replace(oldVar: Variable, newVar: Variable, options: ReplaceOptions = {}): void {
    this.replaceAll([[oldVar, newVar]], options);
  }

  /** Several replacements as one change: validated once at the end, undone together on a veto. */
  replaceAll(pairs: Iterable<readonly [Variable, Variable]>, options: ReplaceOptions = {}): void {
    const reason = options.reason ?? 'replace';
    const done: Array<[Client, Variable]> = [];
    const todo = [...pairs];
    for (const [oldVar, newVar] of todo) {
      if (!this.variables.has(oldVar)) throw new Error(`replace (${reason}): ${oldVar} is not in this graph`);
      this.#checkReplaceable(oldVar, newVar, reason);
    }
    const outerJournal = this.#journal;
    const journal = new Map<Variable, Client[]>();
    this.#journal = journal;
    try {
      for (const [oldVar, newVar] of todo) {
        // An earlier pair may have pruned this variable's node (e.g. an unused output of a
        // multi-output node): then nothing uses it any more, and there is nothing to replace.
        if (!this.variables.has(oldVar)) continue;
        for (const client of [...this.clients(oldVar)]) {
          this.changeInput(client, newVar, reason);
          done.push([client, oldVar]);
        }
      }
      this.validate();
    } catch (e) {
      this.#journal = null;
      for (let i = done.length - 1; i >= 0; i--) {
        const [client, oldVar] = done[i]!;
        this.#rewire(client, oldVar, `undo ${reason}`, false);
      }
      // The undo restored every use; this restores the order of each client list as well.
      for (const [v, list] of journal) if (this.#clients.has(v)) this.#clients.set(v, list);
      throw e;
    } finally {
      this.#journal = outerJournal;
    }
  }

  /** Asks every feature whether the graph is acceptable; throws the first refusal. */
  validate(): void {
    for (const f of this.#features) f.validate?.(this);
  }

  attachFeature(f: Feature): void {
    if (this.#features.includes(f)) return;
    this.#features.push(f);
    try {
      f.onAttach?.(this);
    } catch (e) {
      this.#features.splice(this.#features.indexOf(f), 1);
      throw e;
    }
  }

  removeFeature(f: Feature): void {
    const at = this.#features.indexOf(f);
    if (at < 0) return;
    this.#features.splice(at, 1);
    f.onDetach?.(this);
  }

  /** node -> the nodes that must run before it, merged from every feature. */
  orderings(): Map<Apply, Apply[]> {
    const all = new Map<Apply, Apply[]>();
    for (const f of this.#features) {
      const o = f.orderings?.(this);
      if (!o) continue;
      for (const [node, before] of o) {
        const list = all.get(node) ?? [];
        for (const b of before) if (!list.includes(b)) list.push(b);
        all.set(node, list);
      }
    }
    return all;
  }

  /** The nodes in an order where each follows its inputs and every feature's orderings. */
  toposort(): Apply[] {
    return ioToposort(this.inputs, this.outputs, this.orderings());
  }

  /** Throws if the bookkeeping disagrees with the graph (for tests and debugging). */
  checkIntegrity(): void {
    const reachable = new Set(ioToposort(this.inputs, this.outputs));
    for (const n of this.applyNodes) {
      if (!reachable.has(n)) throw new InconsistencyError(`${n} is in applyNodes but computes no output`);
    }
    for (const n of reachable) {
      if (!this.applyNodes.has(n)) throw new InconsistencyError(`${n} computes an output but is not in applyNodes`);
      n.inputs.forEach((v, i) => {
        if (!this.clients(v).some((c) => c.kind === 'apply' && c.node === n && c.index === i)) {
          throw new InconsistencyError(`${n} reads ${v} (input ${i}) but is not among its clients`);
        }
      });
    }
    for (const [v, list] of this.#clients) {
      if (!this.variables.has(v)) throw new InconsistencyError(`${v} has clients but is not in variables`);
      for (const c of list) {
        const read = c.kind === 'output' ? this.outputs[c.index] : this.applyNodes.has(c.node) ? c.node.inputs[c.index] : undefined;
        if (read !== v) throw new InconsistencyError(`a client of ${v} does not read it`);
      }
    }
  }

  /** A copy of this graph (without features) and the map from its variables to the copies. */
  clone(): { fgraph: FunctionGraph; equiv: ReadonlyMap<Variable, Variable> } {
    const fgraph = new FunctionGraph(this.inputs, this.outputs, { clone: true });
    return { fgraph, equiv: fgraph.equiv };
  }

  toString(): string {
    return `FunctionGraph(${this.outputs.map(String).join(', ')})`;
  }
}
