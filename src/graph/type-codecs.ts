// How documents (serialize.ts) write variables of Types other than the base family (tensors):
// a Type class registered by name, its `static props` written with their kinds (prop-kinds.ts)
// and read back into `new TypeClass(...props)`, and each value through the Type's own
// `encodeValue` / `decodeValue`. No name in a document selects anything but a registered class.
import type { JsonObject, JsonReader } from './json-reader.js';
import { checkCodecName } from './op-codecs.js';
import { buildFromProps, encodeProps, readProps, type PropsClass } from './prop-codec.js';
import type { ElementBudget, TypeCodec } from './serialize.js';
import { SharedVariable } from './shared.js';
import type { Type } from './type.js';

/** A Type class whose constructor takes its props in the order of `static props`. */
export type PropsTypeClass<T extends Type = Type> = PropsClass<T>;

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
  checkCodecName('registerTypeCodec', name);
  if (byName.has(name)) throw new TypeError(`registerTypeCodec: a type named "${name}" is already registered`);
  if (byClass.has(typeClass)) throw new TypeError(`registerTypeCodec (${name}): ${typeClass.name} is already registered as "${byClass.get(typeClass)!.name}"`);
  const entry = { name, typeClass };
  byName.set(name, entry);
  byClass.set(typeClass, entry);
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
      return { codec: entry.name, props: encodeProps(entry.typeClass, t, String(t)) };
    },
    readType(r) {
      if (!r.has('codec')) return base.readType(r);
      r.object(['codec', 'props']);
      const nameReader = r.field('codec');
      const entry = byName.get(nameReader.string());
      if (!entry) return nameReader.error(`no type is registered as ${JSON.stringify(nameReader.value)} (weft.registerTypeCodec)`);
      const propsReader = r.field('props');
      const values = readProps(entry.typeClass, propsReader);
      try {
        return buildFromProps(entry.typeClass, values);
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
