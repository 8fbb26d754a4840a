// SharedVariable: a variable with a value that lives between calls. Functions read it as an
// implicit input and may update it; the value is set through its Type's filter, so it always
// holds a valid value of the variable's type. A `defaultUpdate` (Theano's default_update) is the
// new value that compiled functions reading the variable give it when not told otherwise.
import type { FilterOptions, Type } from './type.js';
import { Variable } from './variable.js';

/**
 * Values handed out by getValue({ borrow: true }), and their `data` (a tensor value's array, which
 * may come back inside another wrapper): whoever holds one may read it at any time.
 */
const lent = new WeakSet<object>();

const isObject = (x: unknown): x is object => typeof x === 'object' && x !== null;
const dataOf = (x: object): unknown => (x as { readonly data?: unknown }).data;

/** Whether `value`, or the array it wraps, was handed out by a shared variable's getValue({ borrow: true }). */
export function wasLent(value: unknown): boolean {
  if (!isObject(value)) return false;
  const data = dataOf(value);
  return lent.has(value) || (isObject(data) && lent.has(data));
}

/** Reads a variable's value itself (for currentValue below). */
let valueOf: <V>(s: SharedVariable<Type, V>) => V;

/**
 * The value of `s` itself, as compiled functions read it at the start of a call; unlike
 * getValue({ borrow: true }), not counted as lent out (see wasLent). Not part of the public API.
 */
export function currentValue<V>(s: SharedVariable<Type, V>): V {
  return valueOf(s);
}

export class SharedVariable<T extends Type = Type, V = unknown> extends Variable<T> {
  #value: V;
  #defaultUpdate: Variable | undefined;

  constructor(type: T, value: V, name?: string) {
    super(type, name);
    this.#value = value;
  }

  static {
    valueOf = (s) => s.#value;
  }

  /** The current value: a copy, unless `borrow` is true. */
  getValue(options: { borrow?: boolean } = {}): V {
    if (!options.borrow) return this.type.copyValue(this.#value) as V;
    const value = this.#value;
    if (isObject(value)) {
      lent.add(value);
      const data = dataOf(value);
      if (isObject(data)) lent.add(data);
    }
    return value;
  }

  /** Replaces the value (checked and converted by the type; copied unless `borrow` is true). */
  setValue(value: unknown, options: { borrow?: boolean } & FilterOptions = {}): void {
    const filtered = this.type.filter(value, { allowDowncast: options.allowDowncast, what: options.what ?? `shared variable ${this}` }) as V;
    this.#value = options.borrow ? filtered : (this.type.ownValue(filtered, value) as V);
  }

  /**
   * The update that compile() applies after each call of a function that reads this variable,
   * unless the function updates it explicitly (or is compiled with `noDefaultUpdates`). Random
   * streams set it on their states, so that each call draws new numbers.
   */
  get defaultUpdate(): Variable | undefined {
    return this.#defaultUpdate;
  }

  set defaultUpdate(update: Variable | undefined) {
    if (update !== undefined) {
      if (!(update instanceof Variable)) {
        throw new TypeError(`shared variable ${this}: the default update must be a variable, got ${String(update)}`);
      }
      if (!this.type.equals(update.type) && !this.type.convertVariable(update)) {
        throw new TypeError(`shared variable ${this}: the default update ${update} has type ${update.type}, the variable has type ${this.type}`);
      }
    }
    this.#defaultUpdate = update;
  }

  /** A shared variable is its own value holder: cloning a graph keeps it, as a constant would. */
  override clone(): SharedVariable<T, V> {
    return this;
  }
}
