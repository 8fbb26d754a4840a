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

/**
 * The uses of one variable in the order they were added. A removed use leaves a hole (null)
 * until the list is compacted, so that removing a use of a variable with thousands of clients
 * (a merged constant, an input) costs O(1) instead of a search and a shift.
 */
interface ClientList {
  items: Array<Client | null>;
  /** How many items are not holes. */
  live: number;
}

/** One change to the client lists, logged while a replaceAll runs so that a veto can undo it exactly. */
type ListChange =
  | { readonly op: 'push'; readonly list: ClientList }
  | { readonly op: 'remove'; readonly list: ClientList; readonly at: number; readonly client: Client }
  | { readonly op: 'compact'; readonly list: ClientList; readonly items: Array<Client | null> }
  | { readonly op: 'create'; readonly v: Variable }
  | { readonly op: 'delete'; readonly v: Variable; readonly list: ClientList };

/** Lists with at least this many holes, and more holes than uses, are compacted when changed. */
const COMPACT_MIN_HOLES = 32;

export class FunctionGraph {
  readonly inputs: Variable[] = [];
  readonly outputs: Variable[] = [];
  readonly applyNodes = new Set<Apply>();
  readonly variables = new Set<Variable>();
  /** When the graph was cloned at construction: each original variable -> its copy here. */
  readonly equiv: ReadonlyMap<Variable, Variable>;
  readonly #inputSet = new Set<Variable>();
  readonly #clients = new Map<Variable, ClientList>();
  /** Where each client sits in its variable's list (checked against the list before use). */
  readonly #slot = new Map<Client, number>();
  /** The one Client object that stands for each input of a node, and each graph output. */
  readonly #nodeClients = new Map<Apply, readonly Client[]>();
  /** Nodes pruned while a replaceAll runs: an undo needs their Clients until it is over. */
  #prunedDuring: Apply[] = [];
  readonly #outputClients: Client[] = [];
  readonly #features: Feature[] = [];
  /** While a replaceAll runs: every change to the client lists, in order, to undo exactly. */
  #journal: ListChange[] | null = null;
  /** Counts changes to the nodes and their wiring; a toposort is reused while it stays the same. */
  #version = 0;
  #sorted: { readonly version: number; readonly order: readonly Apply[] } | null = null;

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

  /**
   * The uses of `v`, in the order they were added. The array is the graph's own and changes
   * with the graph: copy it before changing the graph while iterating.
   */
  clients(v: Variable): readonly Client[] {
    const list = this.#clients.get(v);
    if (list === undefined) return [];
    if (list.live < list.items.length) this.#compact(list);
    return list.items as Client[];
  }

  /** The canonical Client for input `index` of `node`, or output `index` of the graph. */
  #canonical(c: Client): Client {
    if (c.kind === 'output') {
      let out = this.#outputClients[c.index];
      if (out === undefined) {
        out = { kind: 'output', index: c.index };
        this.#outputClients[c.index] = out;
      }
      return out;
    }
    return this.#clientsOfNode(c.node)[c.index] ?? c;
  }

  #clientsOfNode(node: Apply): readonly Client[] {
    let cs = this.#nodeClients.get(node);
    if (cs === undefined) {
      cs = node.inputs.map((_, index): Client => ({ kind: 'apply', node, index }));
      this.#nodeClients.set(node, cs);
    }
    return cs;
  }

  #pushClient(v: Variable, client: Client): void {
    const list = this.#clients.get(v)!;
    this.#slot.set(client, list.items.length);
    list.items.push(client);
    list.live += 1;
    this.#journal?.push({ op: 'push', list });
  }

  /** Takes `client` out of `v`'s list (looked up at `at`, or where the slot says); false if absent. */
  #dropClient(list: ClientList, client: Client, at = this.#slot.get(client)): boolean {
    if (at === undefined || list.items[at] !== client) return false;
    list.items[at] = null;
    list.live -= 1;
    this.#journal?.push({ op: 'remove', list, at, client });
    const holes = list.items.length - list.live;
    if (holes >= COMPACT_MIN_HOLES && holes > list.live) this.#compact(list);
    return true;
  }

  #compact(list: ClientList): void {
    const old = list.items;
    const items: Client[] = [];
    for (const c of old) {
      if (c === null) continue;
      this.#slot.set(c, items.length);
      items.push(c);
    }
    list.items = items;
    this.#journal?.push({ op: 'compact', list, items: old });
  }

  /** Reverses one logged change (the log is undone from its end). */
  #revert(change: ListChange): void {
    switch (change.op) {
      case 'push':
        change.list.items.pop();
        change.list.live -= 1;
        break;
      case 'remove':
        change.list.items[change.at] = change.client;
        change.list.live += 1;
        this.#slot.set(change.client, change.at);
        break;
      case 'compact':
        change.list.items = change.items;
        change.items.forEach((c, i) => {
          if (c !== null) this.#slot.set(c, i);
        });
        break;
      case 'create':
        this.#clients.delete(change.v);
        break;
      case 'delete':
        this.#clients.set(change.v, change.list);
        break;
    }
  }

  isInput(v: Variable): boolean {
    return this.#inputSet.has(v);
  }

  addInput(v: Variable): void {
    if (v.owner) throw new Error(`FunctionGraph: ${v} cannot be an input, it is computed by ${v.owner.op}`);
    if (isConstant(v)) throw new Error(`FunctionGraph: the constant ${v} cannot be an input`);
    if (this.#inputSet.has(v)) throw new Error(`FunctionGraph: ${v} is given twice as an input`);
    this.inputs.push(v);
    this.#version += 1;
    this.#inputSet.add(v);
    this.#track(v);
  }

  addOutput(v: Variable, reason = 'addOutput'): void {
    this.importVar(v, reason);
    this.outputs.push(v);
    this.#version += 1;
    this.#pushClient(v, this.#canonical({ kind: 'output', index: this.outputs.length - 1 }));
  }

  #track(v: Variable): void {
    if (!this.variables.has(v)) {
      this.variables.add(v);
      this.#clients.set(v, { items: [], live: 0 });
      this.#journal?.push({ op: 'create', v });
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
    if (fresh.length > 0) this.#version += 1;
    for (const n of fresh) {
      this.applyNodes.add(n);
      for (const o of n.outputs) this.#track(o);
      const cs = this.#clientsOfNode(n);
      n.inputs.forEach((v, i) => {
        this.#track(v);
        this.#pushClient(v, cs[i]!);
      });
      for (const f of this.#features) f.onImport?.(this, n, reason);
    }
  }

  /**
   * Removes one use of `v` (found at `at` when given); nodes whose outputs are no longer used
   * leave the graph.
   */
  #removeClient(v: Variable, client: Client, reason: string, at?: number): void {
    const work: Array<[Variable, Client, number | undefined]> = [[v, client, at]];
    while (work.length > 0) {
      const [variable, c, where] = work.pop()!;
      const list = this.#clients.get(variable);
      if (!list) continue;
      this.#dropClient(list, c, where ?? this.#slot.get(c));
      // The uses of a pruned node need no slot any more (an undo gives them theirs back).
      if (c.kind === 'apply' && !this.applyNodes.has(c.node)) this.#slot.delete(c);
      if (list.live > 0) continue;
      const owner = variable.owner;
      if (owner === null) {
        if (!this.#inputSet.has(variable)) this.#forget(variable, list);
        continue;
      }
      if (!this.applyNodes.has(owner)) continue;
      if (owner.outputs.some((o) => (this.#clients.get(o)?.live ?? 0) > 0)) continue;
      this.applyNodes.delete(owner);
      this.#version += 1;
      for (const o of owner.outputs) {
        const ol = this.#clients.get(o);
        if (ol) this.#forget(o, ol);
        else this.variables.delete(o);
      }
      for (const f of this.#features) f.onPrune?.(this, owner, reason);
      const cs = this.#clientsOfNode(owner);
      owner.inputs.forEach((inp, i) => work.push([inp, cs[i]!, undefined]));
      if (this.#journal) this.#prunedDuring.push(owner);
      else this.#nodeClients.delete(owner);
    }
  }

  /** `v` leaves the graph with its (empty) client list. */
  #forget(v: Variable, list: ClientList): void {
    this.variables.delete(v);
    this.#clients.delete(v);
    this.#journal?.push({ op: 'delete', v, list });
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
  #rewire(given: Client, newVar: Variable, reason: string, checked: boolean): void {
    const client = this.#canonical(given);
    const oldVar = client.kind === 'output' ? this.outputs[client.index]! : client.node.inputs[client.index]!;
    if (oldVar === newVar) return;
    const r = checked ? this.#checkReplaceable(oldVar, newVar, reason) : newVar;
    this.importVar(r, reason);
    // Where the client sits in oldVar's list, before the push below moves its slot to r's list.
    const oldAt = this.#slot.get(client);
    if (client.kind === 'output') this.outputs[client.index] = r;
    else client.node.inputs[client.index] = r;
    this.#version += 1;
    this.#pushClient(r, client);
    for (const f of this.#features) f.onChangeInput?.(this, client, oldVar, r, reason);
    this.#removeClient(oldVar, client, reason, oldAt);
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
    const journal: ListChange[] = [];
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
      // Undo the rewiring the ordinary way, so that features hear it, then revert every change to
      // the client lists (those of the undo too), which restores each list and its order exactly.
      for (let i = done.length - 1; i >= 0; i--) {
        const [client, oldVar] = done[i]!;
        this.#rewire(client, oldVar, `undo ${reason}`, false);
      }
      this.#journal = null;
      for (let i = journal.length - 1; i >= 0; i--) this.#revert(journal[i]!);
      throw e;
    } finally {
      this.#journal = outerJournal;
      if (!outerJournal) this.#forgetPruned();
    }
    // Inside an outer replaceAll, its undo must be able to revert this one's changes too.
    if (outerJournal) for (const change of journal) outerJournal.push(change);
  }

  /** Drops the Clients of the nodes that the last replaceAll pruned (and its undo did not bring back). */
  #forgetPruned(): void {
    for (const n of this.#prunedDuring) {
      if (this.applyNodes.has(n)) continue;
      for (const c of this.#nodeClients.get(n) ?? []) this.#slot.delete(c);
      this.#nodeClients.delete(n);
    }
    this.#prunedDuring = [];
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
    const orderings = this.orderings();
    if (orderings.size > 0) return ioToposort(this.inputs, this.outputs, orderings);
    // Rewriters sort the graph before each pass; a pass that changed nothing leaves the order valid.
    if (this.#sorted?.version !== this.#version) this.#sorted = { version: this.#version, order: ioToposort(this.inputs, this.outputs) };
    return this.#sorted.order.slice();
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
      for (const c of list.items) {
        if (c === null) continue;
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
