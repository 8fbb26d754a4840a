// Graph documents: a graph (or a compiled function's graph) as versioned JSON text, and back.
// Reading never evaluates anything the document carries: the whole document is checked first,
// and only then are variables, ops (constructors) and nodes (`op.makeNode`) rebuilt.
import type { Apply } from './apply.js';
import type { FunctionGraph } from './fgraph.js';
import { DeserializeError, JsonReader, jsonProblem, type Json, type JsonObject } from './json-reader.js';
import type { Op } from './op.js';
import { opCodecFor, opCodecNamed, type GraphRef, type OpBuildContext, type OpCodec, type OpDecoder, type OpEncoder, type OpPlan } from './op-codecs.js';
import { currentValue, SharedVariable } from './shared.js';
import { ioToposort } from './traversal.js';
import type { Type } from './type.js';
import { isConstant, type Variable } from './variable.js';

// The document (version 1). Ops are `{ type, props }` through their registered codecs; inner
// graphs (OpFromGraph, Map) and shared variables (with their values) are tables of the whole
// document, so each is written once however many ops use it.
//   { format: "weft-graph", version: 1, kind: "variables" | "function",
//     shared:    [{ name?, type, value, defaultUpdate? }]   shared variables, their values, default updates
//     graphs:    [graph]                                inner graphs of ops; graph k may use graphs < k
//     variables, nodes, inputs, outputs                 the main graph (the fields of a graph)
//     name, inputOptions: [{ mutable, borrow, name }], updates: [{ shared, value }]   (functions) }
//   graph:    { variables: [variable], nodes: [{ op: { type, props }, inputs: [variable id] }],
//               inputs: [variable id], outputs: [variable id] }
//   variable: { kind: "input", type, name? } | { kind: "constant", type, value, name? }
//           | { kind: "shared", shared: index } | { kind: "output", node, index, type, name? }
//   defaultUpdate: { graph?, variable }               a variable of graphs[graph], or of the main graph
// A variable id is its position in `variables`; a node reads only inputs, constants, shared
// variables and outputs of nodes before it (so no document describes a cycle). A default update
// is set as soon as its graph is built, before the graphs after it (whose OpFromGraph ops look
// for it); the main graph may compute default updates after its outputs. Types and values are
// the type codec's (tensors: tensor/serialize/value-codec.ts); props are the op codec's.

export const DOCUMENT_FORMAT = 'weft-graph';
export const DOCUMENT_VERSION = 1;

/** Nested op props (an override that is itself an op) deeper than this are refused. */
const MAX_OP_NESTING = 16;
/** By default a document may hold this many value elements in all (constants and shared values). */
export const DEFAULT_MAX_ELEMENTS = 2 ** 27;

/** Counts the value elements a document may still hold. */
export class ElementBudget {
  constructor(public left: number) {}

  /** Takes `n` elements for the value at `r`, or throws when the document holds too many. */
  take(n: number, r: JsonReader, what: string): void {
    if (n > this.left) r.error(`${what} would exceed the document's limit on value elements (${this.left} left); raise maxElements to load it`);
    this.left -= n;
  }
}

/** How the types and values of one family of variables (tensors) are written and read. */
export interface TypeCodec {
  encodeType(type: Type): JsonObject;
  /** Reads and checks a type. */
  readType(r: JsonReader): Type;
  encodeValue(type: Type, value: unknown): JsonObject;
  /** Reads and checks a value of `type`, taking its elements from the budget. */
  readValue(r: JsonReader, type: Type, budget: ElementBudget): unknown;
  makeShared(type: Type, value: unknown, name: string | undefined): SharedVariable;
}

/** What a function document adds to its graph. */
export interface FunctionSpec {
  readonly name: string | undefined;
  readonly inputOptions: readonly InputOptions[];
  readonly updates: ReadonlyArray<readonly [SharedVariable, Variable]>;
  /**
   * The variables the function was compiled from, each with the input of its graph that stands
   * for it: default updates of its shared variables may read them.
   */
  readonly originalInputs?: ReadonlyArray<readonly [Variable, Variable]>;
}

export interface InputOptions {
  readonly mutable: boolean;
  readonly borrow: boolean;
  readonly name: string | undefined;
}

// ---------------------------------------------------------------------------------------------
// Writing

/** A graph being written: its variables and nodes so far. More outputs extend it (default updates). */
class GraphWriter {
  readonly ids = new Map<Variable, number>();
  readonly variables: JsonObject[] = [];
  readonly nodes: JsonObject[] = [];
  readonly inputs: readonly number[];
  readonly #inputSet: ReadonlySet<Variable>;

  /**
   * The graph over `inputs` (root variables). `aliases` are variables outside it that stand for
   * some of its inputs (a function's original inputs for the inputs of its graph).
   */
  constructor(
    readonly writer: Writer,
    inputs: readonly Variable[],
    readonly what: string,
    aliases: ReadonlyArray<readonly [Variable, Variable]> = [],
  ) {
    this.#inputSet = new Set(inputs);
    inputs.forEach((v) => {
      if (this.ids.has(v)) throw new TypeError(`serialize: ${v} is given twice as an input of ${what}`);
      if (v.owner !== null) throw new TypeError(`serialize: the input ${v} of ${what} is computed by ${v.owner.op}; inputs must be root variables`);
      this.#leaf(v, what);
    });
    this.inputs = inputs.map((v) => this.ids.get(v)!);
    for (const [outside, input] of aliases) if (!this.ids.has(outside)) this.ids.set(outside, this.ids.get(input)!);
  }

  #add(v: Variable, entry: Record<string, Json>): number {
    if (v.name !== undefined && !(v instanceof SharedVariable)) entry.name = v.name;
    this.ids.set(v, this.variables.length);
    this.variables.push(entry);
    return this.variables.length - 1;
  }

  #leaf(v: Variable, what: string): number {
    const known = this.ids.get(v);
    if (known !== undefined) return known;
    const w = this.writer;
    if (v instanceof SharedVariable) return this.#add(v, { kind: 'shared', shared: w.sharedIndex(v) });
    if (isConstant(v)) return this.#add(v, { kind: 'constant', type: w.type(v.type), value: w.types.encodeValue(v.type, v.data) });
    if (!this.#inputSet.has(v)) {
      throw new TypeError(`serialize: ${what} needs ${v} (${v.type}), which is neither an input of ${this.what}, a constant nor a shared variable`);
    }
    return this.#add(v, { kind: 'input', type: w.type(v.type) });
  }

  /** The ids of `outputs`, after writing the nodes that compute them (those not written yet). */
  write(outputs: readonly Variable[], what = this.what): number[] {
    const start = this.nodes.length;
    ioToposort([...this.ids.keys()], outputs).forEach((node: Apply, k) => {
      const ins = node.inputs.map((v) => this.#leaf(v, what));
      this.nodes.push({ op: this.writer.op(node.op), inputs: ins });
      node.outputs.forEach((o, j) => this.#add(o, { kind: 'output', node: start + k, index: j, type: this.writer.type(o.type) }));
    });
    return outputs.map((v) => this.#leaf(v, what));
  }

  /** The graph's fields in a document. */
  json(outputs: readonly number[]): Record<string, Json> {
    return { variables: this.variables, nodes: this.nodes, inputs: [...this.inputs], outputs: [...outputs] };
  }
}

/** A graph of the table as written, and where default updates may be found in it. */
interface WrittenGraph {
  readonly ids: ReadonlyMap<Variable, number>;
  /** Variables of it that compute these shared variables' default updates (OpFromGraph's hidden outputs). */
  readonly defaultUpdates: ReadonlyMap<SharedVariable, Variable>;
}

class Writer implements OpEncoder {
  readonly shared: SharedVariable[] = [];
  readonly graphs: JsonObject[] = [];
  readonly #sharedIds = new Map<SharedVariable, number>();
  readonly #graphIds = new Map<FunctionGraph, number>();
  /** The graphs of the table, by index. */
  readonly #written: WrittenGraph[] = [];

  constructor(readonly types: TypeCodec) {}

  sharedIndex(s: SharedVariable): number {
    let k = this.#sharedIds.get(s);
    if (k === undefined) {
      k = this.shared.length;
      this.shared.push(s);
      this.#sharedIds.set(s, k);
    }
    return k;
  }

  graph(fg: FunctionGraph, defaultUpdates: ReadonlyArray<readonly [SharedVariable, Variable]> = []): number {
    let k = this.#graphIds.get(fg);
    if (k === undefined) {
      const g = new GraphWriter(this, fg.inputs, 'an inner graph');
      const outputs = g.write(fg.outputs);
      // Inner graphs that this one uses were added while it was written: they come before it.
      k = this.graphs.length;
      this.graphs.push(g.json(outputs));
      this.#written.push({ ids: g.ids, defaultUpdates: new Map(defaultUpdates) });
      this.#graphIds.set(fg, k);
    }
    return k;
  }

  /**
   * Where the document finds `update`, the default update of `s`: the variable itself or one
   * that computes it in the first graph of the table that has it (a reader sets it once that
   * graph is built, before the ops that look for it), else in the main graph, which is extended
   * to compute it when it does not yet.
   */
  defaultUpdate(s: SharedVariable, update: Variable, main: GraphWriter): JsonObject {
    for (const [k, g] of this.#written.entries()) {
      const id = g.ids.get(update) ?? g.ids.get(g.defaultUpdates.get(s)!);
      if (id !== undefined) return { graph: k, variable: id };
    }
    return { variable: main.write([update], `the default update of shared variable ${s}`)[0]! };
  }

  op(op: Op): JsonObject {
    const codec = opCodecFor(op);
    const cls = op.constructor.name;
    if (!codec) {
      throw new TypeError(`serialize: ${op} (class ${cls}) has no op codec; register the class with weft.registerOpCodec(${cls}) (its props are then written with their static propKinds, as plain JSON without one) or give a codec`);
    }
    const props = op.props;
    if (props.length !== codec.props.length || props.some((p, i) => p !== codec.props[i])) {
      throw new TypeError(
        `serialize: the op codec "${codec.name}" writes the props [${codec.props.join(', ')}] but ${cls} has [${props.join(', ')}]; the codec is out of date`,
      );
    }
    const encoded = codec.encode(op, this);
    const problem = jsonProblem(encoded, 'props');
    if (problem) throw new TypeError(`serialize: the op codec "${codec.name}" gave props that are not JSON for ${op}: ${problem}`);
    return { type: codec.name, props: encoded };
  }

  type(t: Type): JsonObject {
    return this.types.encodeType(t);
  }
}

/**
 * The document of the graph from `inputs` (root variables) to `outputs`; with `fn`, a function
 * document whose update values are part of the graph.
 */
export function encodeDocument(types: TypeCodec, inputs: readonly Variable[], outputs: readonly Variable[], fn?: FunctionSpec): string {
  const w = new Writer(types);
  const updateValues = fn?.updates.map(([, v]) => v) ?? [];
  // Updated shared variables are part of a function even when its graph does not read them.
  fn?.updates.forEach(([s]) => w.sharedIndex(s));
  const main = new GraphWriter(w, inputs, 'the graph', fn?.originalInputs);
  const ids = main.write([...outputs, ...updateValues]);
  // Default updates, also of the shared variables that writing them meets.
  const defaults: Array<JsonObject | undefined> = [];
  for (let k = 0; k < w.shared.length; k++) {
    const s = w.shared[k]!;
    const update = s.defaultUpdate;
    defaults[k] = update === undefined ? undefined : w.defaultUpdate(s, update, main);
  }
  const shared = w.shared.map((s, k): JsonObject => {
    const entry: Record<string, Json> = { type: types.encodeType(s.type), value: types.encodeValue(s.type, currentValue(s)) };
    if (s.name !== undefined) entry.name = s.name;
    if (defaults[k] !== undefined) entry.defaultUpdate = defaults[k];
    return entry;
  });
  const doc: Record<string, Json> = {
    format: DOCUMENT_FORMAT,
    version: DOCUMENT_VERSION,
    kind: fn ? 'function' : 'variables',
    shared,
    graphs: w.graphs,
    ...main.json(ids.slice(0, outputs.length)),
  };
  if (fn) {
    doc.name = fn.name ?? null;
    doc.inputOptions = fn.inputOptions.map((o) => ({ mutable: o.mutable, borrow: o.borrow, name: o.name ?? null }));
    doc.updates = fn.updates.map(([s], k) => ({ shared: w.sharedIndex(s), value: ids[outputs.length + k]! }));
  }
  return JSON.stringify(doc);
}

// ---------------------------------------------------------------------------------------------
// Reading, step 1: check everything

type VarPlan =
  | { readonly kind: 'input'; readonly type: Type; readonly name: string | undefined }
  | { readonly kind: 'constant'; readonly type: Type; readonly value: unknown; readonly name: string | undefined }
  | { readonly kind: 'shared'; readonly shared: number }
  | { readonly kind: 'output'; readonly node: number; readonly index: number; readonly type: Type; readonly name: string | undefined };

interface OpPlanImpl extends OpPlan {
  readonly codec: OpCodec;
  readonly params: unknown;
  /** Equal for equal op entries, which build one op (as the op the writer met twice was one). */
  readonly key: string | undefined;
}

/** The text of a checked op entry, or undefined when it is too deep to stringify. */
function entryKey(type: string, props: unknown): string | undefined {
  try {
    return `${type}:${JSON.stringify(props)}`;
  } catch {
    return undefined;
  }
}

interface NodePlan {
  readonly path: string;
  readonly op: OpPlanImpl;
  readonly inputs: readonly number[];
  /** The variable id of each output, by output index. */
  readonly outputs: readonly number[];
}

interface GraphPlan {
  readonly path: string;
  readonly vars: readonly VarPlan[];
  readonly nodes: readonly NodePlan[];
  readonly inputs: readonly number[];
  readonly outputs: readonly number[];
}

interface SharedPlan {
  readonly type: Type;
  readonly value: unknown;
  readonly name: string | undefined;
  /** The `defaultUpdate` field, checked once the graphs it refers to are read. */
  readonly defaultUpdate: JsonReader | undefined;
}

/** Shared variable `shared` gets variable `variable` of graphs[graph] (or of the main graph) as its default update. */
interface DefaultUpdatePlan {
  readonly path: string;
  readonly shared: number;
  readonly graph: number | undefined;
  readonly variable: number;
}

const GRAPH_FIELDS = ['variables', 'nodes', 'inputs', 'outputs'] as const;
const VARIABLES_FIELDS = ['format', 'version', 'kind', 'shared', 'graphs', ...GRAPH_FIELDS];
const FUNCTION_FIELDS = [...VARIABLES_FIELDS, 'name', 'inputOptions', 'updates'];

class Checker implements OpDecoder {
  shared: SharedPlan[] = [];
  /** Inner graphs that ops may refer to from the graph being read: those before it. */
  graphLimit = 0;
  #opDepth = 0;

  constructor(
    readonly types: TypeCodec,
    readonly budget: ElementBudget,
  ) {}

  graph(r: JsonReader): GraphRef {
    if (this.graphLimit === 0) r.error('refers to an inner graph, but no graph comes before this one in the document\'s "graphs"');
    return { graphIndex: r.int(0, this.graphLimit - 1) };
  }

  op(r: JsonReader): OpPlanImpl {
    if (this.#opDepth >= MAX_OP_NESTING) r.error(`ops nested more than ${MAX_OP_NESTING} deep`);
    this.#opDepth += 1;
    try {
      r.object(['type', 'props']);
      const typeReader = r.field('type');
      const type = typeReader.string();
      const codec = opCodecNamed(type);
      if (!codec) return typeReader.error(`unknown op type ${JSON.stringify(type)}; only registered op codecs can be read`);
      const props = r.field('props').anyObject();
      let params: unknown;
      try {
        params = codec.decode(props, this);
      } catch (e) {
        if (e instanceof DeserializeError) throw e;
        throw new DeserializeError(props.path, `the "${type}" op codec refused these props: ${causeOf(e)}`);
      }
      return { type, path: r.path, codec, params, key: entryKey(type, props.value) };
    } finally {
      this.#opDepth -= 1;
    }
  }

  type(r: JsonReader): Type {
    return this.types.readType(r);
  }

  name(r: JsonReader | undefined): string | undefined {
    return r?.optionalString();
  }

  readShared(r: JsonReader): SharedPlan {
    r.object(['name', 'type', 'value', 'defaultUpdate'], ['type', 'value']);
    const type = this.type(r.field('type'));
    const value = this.types.readValue(r.field('value'), type, this.budget);
    return { type, value, name: this.name(r.optional('name')), defaultUpdate: r.optional('defaultUpdate') };
  }

  /** Checks the default update of shared variable `s` (`{ graph?, variable }`) against the graphs read. */
  readDefaultUpdate(r: JsonReader, s: number, graphs: readonly GraphPlan[], main: GraphPlan): DefaultUpdatePlan {
    r.object(['graph', 'variable'], ['variable']);
    const gr = r.optional('graph');
    let graph: number | undefined;
    if (gr !== undefined) {
      if (graphs.length === 0) gr.error('refers to an inner graph, but the document\'s "graphs" is empty');
      graph = gr.int(0, graphs.length - 1);
    }
    const variable = this.valueOf(r.field('variable'), graph === undefined ? main : graphs[graph]!, s);
    return { path: r.path, shared: s, graph, variable };
  }

  /** A variable of `g` that becomes a value of shared variable `s` (an update, a default update): of its type. */
  valueOf(r: JsonReader, g: GraphPlan, s: number): number {
    if (g.vars.length === 0) r.error('refers to a variable, but the graph has no variables');
    const id = r.int(0, g.vars.length - 1);
    const want = this.shared[s]!.type;
    const got = this.typeOfVar(g, id);
    if (!want.isSupertypeOf(got)) r.error(`variable ${id} has type ${got}, but shared variable ${s} has type ${want}`);
    return id;
  }

  readVar(r: JsonReader, nNodes: number): VarPlan {
    r.object(['kind', 'type', 'value', 'shared', 'node', 'index', 'name'], ['kind']);
    const kind = r.field('kind').oneOf(['input', 'constant', 'shared', 'output'] as const);
    switch (kind) {
      case 'input':
        r.object(['kind', 'type', 'name'], ['kind', 'type']);
        return { kind, type: this.type(r.field('type')), name: this.name(r.optional('name')) };
      case 'constant': {
        r.object(['kind', 'type', 'value', 'name'], ['kind', 'type', 'value']);
        const type = this.type(r.field('type'));
        return { kind, type, value: this.types.readValue(r.field('value'), type, this.budget), name: this.name(r.optional('name')) };
      }
      case 'shared': {
        r.object(['kind', 'shared'], ['kind', 'shared']);
        const f = r.field('shared');
        if (this.shared.length === 0) f.error('refers to a shared variable, but the document\'s "shared" is empty');
        return { kind, shared: f.int(0, this.shared.length - 1) };
      }
      case 'output': {
        r.object(['kind', 'node', 'index', 'type', 'name'], ['kind', 'node', 'index', 'type']);
        const f = r.field('node');
        if (nNodes === 0) f.error('refers to a node, but the graph has no nodes');
        return {
          kind,
          node: f.int(0, nNodes - 1),
          index: r.field('index').int(0),
          type: this.type(r.field('type')),
          name: this.name(r.optional('name')),
        };
      }
    }
  }

  /** The fields `variables`, `nodes`, `inputs` and `outputs` of `r`. */
  readGraph(r: JsonReader): GraphPlan {
    const nodeReaders = r.field('nodes').array();
    const varReaders = r.field('variables').array();
    const vars = varReaders.map((v) => this.readVar(v, nodeReaders.length));
    const at = (id: number): string => `${r.path === '' ? '' : `${r.path}.`}variables[${id}]`;

    // Each node's outputs: exactly indices 0..n-1, once each.
    const outputsOf = nodeReaders.map(() => new Map<number, number>());
    const sharedSeen = new Map<number, number>();
    vars.forEach((v, id) => {
      if (v.kind === 'shared') {
        const before = sharedSeen.get(v.shared);
        if (before !== undefined) throw new DeserializeError(at(id), `shared variable ${v.shared} is already variable ${before}`);
        sharedSeen.set(v.shared, id);
      }
      if (v.kind !== 'output') return;
      const slots = outputsOf[v.node]!;
      const before = slots.get(v.index);
      if (before !== undefined) throw new DeserializeError(`${at(id)}.index`, `output ${v.index} of node ${v.node} is already variable ${before}`);
      slots.set(v.index, id);
    });

    const ref = (reader: JsonReader): number => {
      if (vars.length === 0) reader.error('refers to a variable, but the graph has no variables');
      return reader.int(0, vars.length - 1);
    };

    const nodes = nodeReaders.map((nr, k): NodePlan => {
      nr.object(['op', 'inputs']);
      const slots = outputsOf[k]!;
      if (slots.size === 0) nr.error('no variable is an output of this node');
      // Indices are distinct, so they are 0..n-1 exactly when every index is below n.
      const outs: number[] = [];
      for (let j = 0; j < slots.size; j++) {
        const id = slots.get(j);
        if (id === undefined) return nr.error(`output ${j} of this node is missing from the variables (${slots.size} variables are its outputs)`);
        outs.push(id);
      }
      const op = this.op(nr.field('op'));
      const inputs = nr.field('inputs').array().map((ir) => {
        const id = ref(ir);
        const v = vars[id]!;
        if (v.kind === 'output' && v.node >= k) {
          ir.error(`variable ${id} is an output of node ${v.node}, which does not come before this node (${k}); nodes must follow the nodes they read`);
        }
        return id;
      });
      return { path: nr.path, op, inputs, outputs: outs };
    });

    const inputsReader = r.field('inputs');
    const inputs = inputsReader.array().map((ir) => {
      const id = ref(ir);
      const kind = vars[id]!.kind;
      if (kind !== 'input' && kind !== 'shared') ir.error(`variable ${id} is ${kind === 'output' ? 'a node output' : 'a constant'}; graph inputs are inputs or shared variables`);
      return id;
    });
    const listed = new Set<number>();
    inputs.forEach((id, i) => {
      if (listed.has(id)) throw new DeserializeError(inputsReader.at(i), `variable ${id} is listed twice`);
      listed.add(id);
    });
    vars.forEach((v, id) => {
      if (v.kind === 'input' && !listed.has(id)) throw new DeserializeError(at(id), `input variable ${id} is not listed in the graph's inputs`);
    });
    const outputs = r.field('outputs').array().map(ref);
    return { path: r.path, vars, nodes, inputs, outputs };
  }

  typeOfVar(g: GraphPlan, id: number): Type {
    const v = g.vars[id]!;
    return v.kind === 'shared' ? this.shared[v.shared]!.type : v.type;
  }
}

interface CheckedDocument {
  readonly kind: 'variables' | 'function';
  readonly shared: readonly SharedPlan[];
  readonly defaultUpdates: readonly DefaultUpdatePlan[];
  readonly graphs: readonly GraphPlan[];
  readonly main: GraphPlan;
  readonly name: string | undefined;
  readonly inputOptions: readonly InputOptions[];
  readonly updates: ReadonlyArray<readonly [number, number]>;
}

function check(types: TypeCodec, text: unknown, maxElements: number): CheckedDocument {
  if (typeof text !== 'string') new JsonReader(text, '').fail('a JSON string');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text as string);
  } catch (e) {
    throw new DeserializeError('', `not valid JSON (${(e as Error).message})`);
  }
  const root = new JsonReader(parsed, '');
  root.object(FUNCTION_FIELDS, ['format', 'version', 'kind']);
  const format = root.field('format');
  if (format.value !== DOCUMENT_FORMAT) format.fail(JSON.stringify(DOCUMENT_FORMAT));
  const version = root.field('version').int(1);
  if (version !== DOCUMENT_VERSION) root.field('version').error(`version ${version} is not supported; this weft reads version ${DOCUMENT_VERSION}`);
  const kind = root.field('kind').oneOf(['variables', 'function'] as const);
  root.object(kind === 'function' ? FUNCTION_FIELDS : VARIABLES_FIELDS);

  const c = new Checker(types, new ElementBudget(maxElements));
  c.shared = root.field('shared').array().map((r) => c.readShared(r));
  const graphs: GraphPlan[] = [];
  root.field('graphs').array().forEach((gr, k) => {
    gr.object([...GRAPH_FIELDS]);
    c.graphLimit = k;
    graphs.push(c.readGraph(gr));
  });
  c.graphLimit = graphs.length;
  const main = c.readGraph(root);
  const defaultUpdates = c.shared.flatMap((s, k) => (s.defaultUpdate ? [c.readDefaultUpdate(s.defaultUpdate, k, graphs, main)] : []));

  let inputOptions: InputOptions[] = [];
  let updates: Array<readonly [number, number]> = [];
  let name: string | undefined;
  if (kind === 'function') {
    name = root.field('name').optionalString();
    const optsReader = root.field('inputOptions');
    const opts = optsReader.array();
    if (opts.length !== main.inputs.length) optsReader.error(`expected one entry per input (${main.inputs.length}), got ${opts.length}`);
    inputOptions = opts.map((o) => {
      o.object(['mutable', 'borrow', 'name']);
      return { mutable: o.field('mutable').boolean(), borrow: o.field('borrow').boolean(), name: o.field('name').optionalString() };
    });
    const seen = new Set<number>();
    updates = root.field('updates').array().map((u) => {
      u.object(['shared', 'value']);
      const sr = u.field('shared');
      if (c.shared.length === 0) sr.error('refers to a shared variable, but the document\'s "shared" is empty');
      const s = sr.int(0, c.shared.length - 1);
      if (seen.has(s)) sr.error(`shared variable ${s} is updated twice`);
      seen.add(s);
      return [s, c.valueOf(u.field('value'), main, s)] as const;
    });
  }
  return { kind, shared: c.shared, defaultUpdates, graphs, main, name, inputOptions, updates };
}

// ---------------------------------------------------------------------------------------------
// Reading, step 2: build

interface BuiltGraph {
  readonly vars: readonly Variable[];
  readonly inputs: readonly Variable[];
  readonly outputs: readonly Variable[];
}

function causeOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

class Builder implements OpBuildContext {
  readonly shared: SharedVariable[];
  readonly #graphs: BuiltGraph[] = [];
  readonly #ops = new Map<string, Op>();

  readonly #defaultUpdates: readonly DefaultUpdatePlan[];

  constructor(
    readonly types: TypeCodec,
    doc: CheckedDocument,
  ) {
    this.shared = doc.shared.map((s) => types.makeShared(s.type, s.value, s.name));
    this.#defaultUpdates = doc.defaultUpdates;
    doc.graphs.forEach((g, k) => {
      const built = this.buildGraph(g);
      this.#graphs.push(built);
      this.setDefaultUpdates(k, built);
    });
  }

  /** Gives the shared variables their default updates in `graph` (undefined: the main graph), once it is built. */
  setDefaultUpdates(graph: number | undefined, built: BuiltGraph): void {
    for (const d of this.#defaultUpdates) {
      if (d.graph !== graph) continue;
      try {
        this.shared[d.shared]!.defaultUpdate = built.vars[d.variable];
      } catch (e) {
        throw new DeserializeError(d.path, `cannot be the default update of shared variable ${d.shared}: ${causeOf(e)}`);
      }
    }
  }

  graph(ref: GraphRef): { inputs: readonly Variable[]; outputs: readonly Variable[] } {
    return this.#graphs[ref.graphIndex]!;
  }

  op(plan: OpPlan): Op {
    const p = plan as OpPlanImpl;
    const known = p.key === undefined ? undefined : this.#ops.get(p.key);
    if (known) return known;
    try {
      const op = p.codec.build(p.params, this);
      if (p.key !== undefined) this.#ops.set(p.key, op);
      return op;
    } catch (e) {
      if (e instanceof DeserializeError) throw e;
      throw new DeserializeError(`${p.path}.props`, `cannot rebuild a ${p.type} op from these props: ${causeOf(e)}`);
    }
  }

  buildGraph(g: GraphPlan): BuiltGraph {
    const vars: Variable[] = new Array(g.vars.length);
    g.vars.forEach((v, id) => {
      switch (v.kind) {
        case 'input':
          vars[id] = v.type.makeVariable(v.name);
          break;
        case 'constant':
          vars[id] = v.type.makeConstant(v.value, v.name);
          break;
        case 'shared':
          vars[id] = this.shared[v.shared]!;
          break;
        case 'output':
          break;
      }
    });
    for (const n of g.nodes) {
      const op = this.op(n.op);
      const inputs = n.inputs.map((id) => vars[id]!);
      let node: Apply;
      try {
        node = n.op.codec.apply ? n.op.codec.apply(op, inputs) : op.makeNode(...inputs);
      } catch (e) {
        throw new DeserializeError(n.path, `${op} does not accept the inputs the document gives it: ${causeOf(e)}`);
      }
      const k = node.inputs.findIndex((v, i) => v !== inputs[i]);
      if (k >= 0 || node.inputs.length !== inputs.length) {
        const i = k >= 0 ? k : Math.min(node.inputs.length, inputs.length);
        throw new DeserializeError(
          n.path,
          `${op} made a node whose input ${i} is ${node.inputs[i] ?? 'missing'} where the document gives ${inputs[i] ?? 'nothing'}; the node must take its inputs as they are`,
        );
      }
      if (node.outputs.length !== n.outputs.length) {
        throw new DeserializeError(n.path, `${op} makes ${node.outputs.length} output(s), the document has ${n.outputs.length}`);
      }
      node.outputs.forEach((o, j) => {
        const id = n.outputs[j]!;
        const want = g.vars[id] as Extract<VarPlan, { kind: 'output' }>;
        if (!want.type.equals(o.type)) {
          throw new DeserializeError(
            `${g.path === '' ? '' : `${g.path}.`}variables[${id}].type`,
            `output ${j} of ${op} has type ${o.type} on these inputs, the document says ${want.type}`,
          );
        }
        if (want.name !== undefined) o.name = want.name;
        vars[id] = o;
      });
    }
    return { vars, inputs: g.inputs.map((id) => vars[id]!), outputs: g.outputs.map((id) => vars[id]!) };
  }
}

export type DecodedDocument =
  | {
      readonly kind: 'variables';
      readonly inputs: Variable[];
      readonly outputs: Variable[];
      readonly shared: SharedVariable[];
    }
  | {
      readonly kind: 'function';
      readonly inputs: Variable[];
      readonly outputs: Variable[];
      readonly shared: SharedVariable[];
      readonly name: string | undefined;
      readonly inputOptions: InputOptions[];
      readonly updates: Array<[SharedVariable, Variable]>;
    };

export interface DecodeOptions {
  /** The most value elements (constants and shared values together) a document may hold. */
  readonly maxElements?: number;
}

/** Reads a document: checks all of it, then rebuilds it. Throws a DeserializeError for any fault. */
export function decodeDocument(types: TypeCodec, text: string, options: DecodeOptions = {}): DecodedDocument {
  const maxElements = options.maxElements ?? DEFAULT_MAX_ELEMENTS;
  if (!(Number.isSafeInteger(maxElements) && maxElements >= 0)) {
    throw new RangeError(`deserialize: maxElements must be a non-negative integer, got ${maxElements}`);
  }
  const doc = check(types, text, maxElements);
  const b = new Builder(types, doc);
  const main = b.buildGraph(doc.main);
  b.setDefaultUpdates(undefined, main);
  if (doc.kind === 'variables') {
    return { kind: 'variables', inputs: [...main.inputs], outputs: [...main.outputs], shared: b.shared };
  }
  return {
    kind: 'function',
    inputs: [...main.inputs],
    outputs: [...main.outputs],
    shared: b.shared,
    name: doc.name,
    inputOptions: [...doc.inputOptions],
    updates: doc.updates.map(([s, id]) => [b.shared[s]!, main.vars[id]!]),
  };
}
