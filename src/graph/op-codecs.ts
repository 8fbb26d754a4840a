// Op codecs: how each op class is written into a serialized graph and read back. A codec
// turns an op into JSON props, checks props read from an untrusted document (decode: kinds
// and ranges only, nothing built), and rebuilds the op through its constructor (build). Ops
// are found by their exact class on the way out and by the registered name on the way in; no
// name in a document ever selects anything but a registered codec.
import type { Apply } from './apply.js';
import type { FunctionGraph } from './fgraph.js';
import type { JsonObject, JsonReader } from './json-reader.js';
import type { Op } from './op.js';
import { propsCodec, type PropsOpClass } from './prop-codec.js';
import type { SharedVariable } from './shared.js';
import type { Type } from './type.js';
import type { Variable } from './variable.js';

/** What a codec's `encode` may ask of the document being written. */
export interface OpEncoder {
  /**
   * The index of an inner graph in the document's graph table (each graph is written once).
   * `defaultUpdates` names variables of `fg` that compute default updates of shared variables
   * (an OpFromGraph's hidden outputs): the document may name them as those variables' default
   * updates, which a reader sets before it builds the ops that use the graph.
   */
  graph(fg: FunctionGraph, defaultUpdates?: ReadonlyArray<readonly [SharedVariable, Variable]>): number;
  /** A nested op (an op-valued prop, e.g. an override) as `{ type, props }`. */
  op(op: Op): JsonObject;
  /** A type as JSON. */
  type(t: Type): JsonObject;
}

/** A reference to a checked inner graph, to be built later. */
export interface GraphRef {
  readonly graphIndex: number;
}

/** A checked nested op, to be built later. */
export interface OpPlan {
  readonly type: string;
  readonly path: string;
}

/** What a codec's `decode` may ask of the document being read (checks only; nothing is built). */
export interface OpDecoder {
  /** Checks a reference to an inner graph: the index of a graph defined earlier in the table. */
  graph(r: JsonReader): GraphRef;
  /** Checks a nested op `{ type, props }` (depth-limited). */
  op(r: JsonReader): OpPlan;
  /** Reads a type. */
  type(r: JsonReader): Type;
}

/** What a codec's `build` gets: the inner graphs and nested ops, built. */
export interface OpBuildContext {
  /** The inner graph's variables (fresh for this document; built once per graph). */
  graph(ref: GraphRef): { readonly inputs: readonly Variable[]; readonly outputs: readonly Variable[] };
  op(plan: OpPlan): Op;
}

export interface OpCodec<O extends Op = Op, P = unknown> {
  /** The op's type name in documents (`nodes[i].op.type`). */
  readonly name: string;
  /** The exact class this codec writes (subclasses need their own codec). */
  readonly opClass: abstract new (...args: never[]) => O;
  /**
   * The class's static `props` that the encoding covers. An op whose props differ is refused
   * when written, so that a codec that fell behind its op fails loudly instead of losing a prop.
   */
  readonly props: readonly string[];
  /** The op's props as JSON (plain objects, arrays, strings, finite numbers, booleans, null). */
  encode(op: O, encoder: OpEncoder): JsonObject;
  /** Checks untrusted props (every field, its kind and range) and returns what `build` needs. */
  decode(props: JsonReader, decoder: OpDecoder): P;
  /** The op, through its constructor. */
  build(params: P, context: OpBuildContext): O;
  /** The node on these inputs (default: `op.makeNode(...inputs)`), for ops with implicit inputs. */
  apply?(op: O, inputs: readonly Variable[]): Apply;
}

const byName = new Map<string, OpCodec>();
const byClass = new Map<abstract new (...args: never[]) => Op, OpCodec>();

/** Names that may not name an op type (they would read as something else to a careless reader). */
const RESERVED = new Set(['__proto__', 'constructor', 'prototype']);

/** Refuses a name documents could not use safely (`where` names the registering function). */
export function checkCodecName(where: string, name: unknown): void {
  if (typeof name !== 'string' || !/^[A-Za-z_][\w.-]*$/.test(name) || RESERVED.has(name)) {
    throw new TypeError(`${where}: the name must be an identifier-like string (letters, digits, _ . -), got ${JSON.stringify(name)}`);
  }
}

/**
 * Registers how a class of ops is serialized: a codec, or the op class itself, whose codec is
 * then derived from its `static props` and `static propKinds` (prop-codec.ts) and named
 * `options.name` (default: the class's name). Names and classes are registered once: a second
 * codec for either is refused.
 */
export function registerOpCodec<O extends Op, P>(codecOrClass: OpCodec<O, P> | PropsOpClass<O>, options: { readonly name?: string } = {}): void {
  const codec = typeof codecOrClass === 'function' ? (propsCodec(codecOrClass, options.name) as unknown as OpCodec<O, P>) : codecOrClass;
  const { name, opClass } = codec;
  checkCodecName('registerOpCodec', name);
  if (typeof opClass !== 'function') throw new TypeError(`registerOpCodec (${name}): opClass must be the op's class`);
  for (const m of ['encode', 'decode', 'build'] as const) {
    if (typeof codec[m] !== 'function') throw new TypeError(`registerOpCodec (${name}): ${m} must be a function`);
  }
  if (!Array.isArray(codec.props)) throw new TypeError(`registerOpCodec (${name}): props must list the op class's props`);
  if (byName.has(name)) throw new TypeError(`registerOpCodec: an op codec named "${name}" is already registered`);
  if (byClass.has(opClass)) {
    throw new TypeError(`registerOpCodec (${name}): ${opClass.name} already has a codec ("${byClass.get(opClass)!.name}")`);
  }
  byName.set(name, codec as unknown as OpCodec);
  byClass.set(opClass, codec as unknown as OpCodec);
}

/** Every registered codec, in the order of registration. */
export function registeredOpCodecs(): readonly OpCodec[] {
  return [...byName.values()];
}

/** The codec registered under this name, or undefined. */
export function opCodecNamed(name: string): OpCodec | undefined {
  return byName.get(name);
}

/** The codec of this op's exact class, or undefined. */
export function opCodecFor(op: Op): OpCodec | undefined {
  return byClass.get(op.constructor as abstract new (...args: never[]) => Op);
}
