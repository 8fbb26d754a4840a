// Classes written as their `static props` (ops, and users' Types): each prop written with its
// kind (`static propKinds`, prop-kinds.ts; plain JSON without one), checked when read, and the
// class rebuilt as `new TheClass(...props)`, in the order of `static props`. Most ops need
// nothing else, so adding an op (weft's or a user's) means no codec to write; ops that hold a
// graph or a scalar program keep hand-written codecs.
import type { JsonObject, JsonReader } from './json-reader.js';
import { jsonProblem } from './json-reader.js';
import type { Op } from './op.js';
import type { OpCodec } from './op-codecs.js';
import { propKinds, type PropKind, type PropKindsOf } from './prop-kinds.js';

/** A class whose constructor takes its props in the order of `static props`. */
export interface PropsClass<T = unknown> {
  new (...props: never[]): T;
  readonly name: string;
  readonly props?: readonly string[];
  readonly propKinds?: PropKindsOf;
}

export interface PropsOpClass<O extends Op = Op> extends PropsClass<O> {
  readonly props: readonly string[];
}

/** Each prop of `cls` with the kind it is written with. */
function kindsOf(cls: PropsClass): Array<readonly [string, PropKind<unknown>, boolean]> {
  return (cls.props ?? []).map((p) => {
    const kind = cls.propKinds?.[p];
    return [p, (kind ?? propKinds.json()) as PropKind<unknown>, kind === undefined] as const;
  });
}

/** `object`'s props as JSON, each with its kind; a plain-JSON prop that is not JSON is refused. */
export function encodeProps(cls: PropsClass, object: object, label: string): JsonObject {
  const out: Record<string, unknown> = {};
  for (const [p, kind, plain] of kindsOf(cls)) {
    const json = kind.encode((object as Record<string, unknown>)[p]);
    const problem = plain ? jsonProblem(json, `${label}.${p}`) : undefined;
    if (problem) throw new TypeError(`serialize: ${problem}; give ${cls.name} a kind for '${p}' in static propKinds, or register a codec that writes it`);
    out[p] = json;
  }
  return out as JsonObject;
}

/** Reads and checks untrusted props (exactly `static props`, each with its kind). */
export function readProps(cls: PropsClass, r: JsonReader): unknown[] {
  const kinds = kindsOf(cls);
  r.object(kinds.map(([p]) => p));
  return kinds.map(([p, kind]) => kind.read(r.field(p)));
}

/** `new cls(...props)`. */
export function buildFromProps<T>(cls: PropsClass<T>, props: readonly unknown[]): T {
  return new (cls as unknown as new (...args: unknown[]) => T)(...props);
}

/** The codec derived from `opClass`'s props, named `name` in documents. */
export function propsCodec<O extends Op>(opClass: PropsOpClass<O>, name: string = opClass.name): OpCodec<O, unknown[]> {
  return {
    name,
    opClass,
    props: [...opClass.props],
    encode: (op) => encodeProps(opClass, op, String(op)),
    decode: (r) => readProps(opClass, r),
    build: (values) => buildFromProps(opClass, values),
  };
}
