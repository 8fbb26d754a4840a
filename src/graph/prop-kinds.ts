// How one prop of an op is written into a document and checked when read from an untrusted one:
// a kind per prop (an int in a range, a boolean, one name of a list, a list of a kind, plain
// JSON). An op class names its props' kinds in `static propKinds`; the codec derived from its
// `static props` (prop-codec.ts) reads every prop with its kind, and props without one as JSON.
import { jsonProblem, type Json, type JsonReader } from './json-reader.js';

export interface PropKind<T = unknown> {
  /** The prop's value as JSON. */
  encode(value: T): Json;
  /** Checks an untrusted value (its kind and range) and returns the prop's value. */
  read(r: JsonReader): T;
}

/** Depth of plain-JSON props (props without a kind) that a document may hold. */
const JSON_DEPTH = 16;

export const propKinds = {
  int: (min = -(2 ** 31), max = 2 ** 31 - 1): PropKind<number> => ({ encode: (v) => v, read: (r) => r.int(min, max) }),
  number: (): PropKind<number> => ({ encode: (v) => v, read: (r) => r.number() }),
  boolean: (): PropKind<boolean> => ({ encode: (v) => v, read: (r) => r.boolean() }),
  string: (): PropKind<string> => ({ encode: (v) => v, read: (r) => r.string() }),
  /** A string or nothing (written as null). */
  optionalString: (): PropKind<string | undefined> => ({ encode: (v) => v ?? null, read: (r) => r.optionalString() }),
  oneOf: <S extends string>(choices: readonly S[]): PropKind<S> => ({ encode: (v) => v, read: (r) => r.oneOf(choices) }),
  /** Integers in [min, max], at most `maxLength` of them. */
  ints: (min: number, max: number, maxLength: number): PropKind<readonly number[]> => ({ encode: (v) => [...v], read: (r) => r.ints(min, max, maxLength) }),
  /** A list of values of one kind, at most `maxLength` of them. */
  list: <T>(item: PropKind<T>, maxLength: number): PropKind<readonly T[]> => ({
    encode: (v) => v.map((x) => item.encode(x)),
    read: (r) => r.array(maxLength).map((x) => item.read(x)),
  }),
  /** Plain JSON (a prop without a kind): what its op's constructor receives, so it must check it. */
  json: (): PropKind<Json> => ({
    encode: (v) => v,
    read: (r) => {
      const problem = jsonProblem(r.value, 'the value', JSON_DEPTH);
      if (problem) r.error(problem);
      return r.value as Json;
    },
  }),
} as const;

/** What `static propKinds` holds: a kind for some or all of `static props`. */
export type PropKindsOf = Readonly<Record<string, PropKind<unknown>>>;
