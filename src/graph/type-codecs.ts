// How documents (serialize.ts) write variables of Types other than the base family (tensors):
// a Type class registered by name, its `static props` written with their kinds (prop-kinds.ts)
// and read back into `new TypeClass(...props)`, and each value through the Type's own
// `encodeValue` / `decodeValue`. No name in a document selects anything but a registered class.
import type { Json, JsonObject, JsonReader } from './json-reader.js';
import { propKinds, type PropKind, type PropKindsOf } from './prop-kinds.js';
import type { ElementBudget, TypeCodec } from './serialize.js';
import { SharedVariable } from './shared.js';
import type { Type } from './type.js';

/** A Type class whose constructor takes its props in the order of `static props`. */
export interface PropsTypeClass<T extends Type = Type> {
  new (...props: never[]): T;
  readonly name: string;
  readonly props?: readonly string[];
  readonly propKinds?: PropKindsOf;
}

interface Registered {
  readonly name: string;
  readonly typeClass: PropsTypeClass;
}

const byName = new Map<string, Registered>();
const byClass = new Map<PropsTypeClass, Registered>();

/**
 * Registers a Type class for documents, named `options.name` (default: the class's name). The
 * reading process registers it too. Names and classes are registered once.
 */
export function registerTypeCodec(typeClass: PropsTypeClass, options: { readonly name?: string } = {}): void {
  const name = options.name ?? typeClass.name;
  if (typeof typeClass !== 'function') throw new TypeError('registerTypeCodec: expected a Type class');
  if (!/^[A-Za-z_][\w.-]*$/.test(name) || name === '__proto__' || name === 'constructor' || name === 'prototype') {
    throw new TypeError(`registerTypeCodec: the name must be an identifier-like string (letters, digits, _ . -), got ${JSON.stringify(name)}`);
  }
  if (byName.has(name)) throw new TypeError(`registerTypeCodec: a type named "${name}" is already registered`);
  if (byClass.has(typeClass)) throw new TypeError(`registerTypeCodec (${name}): ${typeClass.name} is already registered as "${byClass.get(typeClass)!.name}"`);
  const entry = { name, typeClass };
  byName.set(name, entry);
  byClass.set(typeClass, entry);
}

function kindsOf(c: PropsTypeClass): Array<[string, PropKind<unknown>]> {
  return (c.props ?? []).map((p) => [p, (c.propKinds?.[p] ?? propKinds.json()) as PropKind<unknown>]);
}

/** `base` (the tensor codec) for the types `isBase` accepts, and the registered Type classes for the others. */
export function withRegisteredTypes(base: TypeCodec, isBase: (t: Type) => boolean): TypeCodec {
  const entryOf = (t: Type): Registered => {
    const entry = byClass.get(t.constructor as PropsTypeClass);
    if (!entry) {
      const cls = t.constructor.name;
      throw new TypeError(`serialize: the type ${t} (class ${cls}) is not registered; call weft.registerTypeCodec(${cls}) in the writing and the reading process`);
    }
    return entry;
  };
  return {
    encodeType(t) {
      if (isBase(t)) return base.encodeType(t);
      const entry = entryOf(t);
      const props: Record<string, Json> = {};
      for (const [p, kind] of kindsOf(entry.typeClass)) props[p] = kind.encode((t as unknown as Record<string, unknown>)[p]);
      return { codec: entry.name, props };
    },
    readType(r) {
      if (!r.has('codec')) return base.readType(r);
      r.object(['codec', 'props']);
      const nameReader = r.field('codec');
      const entry = byName.get(nameReader.string());
      if (!entry) return nameReader.error(`no type is registered as ${JSON.stringify(nameReader.value)} (weft.registerTypeCodec)`);
      const propsReader = r.field('props');
      const kinds = kindsOf(entry.typeClass);
      propsReader.object(kinds.map(([p]) => p));
      const values = kinds.map(([p, kind]) => kind.read(propsReader.field(p)));
      try {
        return new (entry.typeClass as unknown as new (...a: unknown[]) => Type)(...values);
      } catch (e) {
        return propsReader.error(`cannot rebuild a ${entry.name} type from these props: ${(e as Error).message}`);
      }
    },
    encodeValue(t, value): JsonObject {
      if (isBase(t)) return base.encodeValue(t, value);
      entryOf(t);
      return { json: t.encodeValue(value) };
    },
    readValue(r: JsonReader, t: Type, budget: ElementBudget): unknown {
      if (isBase(t)) return base.readValue(r, t, budget);
      r.object(['json']);
      budget.take(1, r, `a value of ${t}`);
      const v = r.field('json');
      return t.decodeValue(v);
    },
    makeShared(t, value, name) {
      return isBase(t) ? base.makeShared(t, value, name) : new SharedVariable(t, value, name);
    },
  };
}
