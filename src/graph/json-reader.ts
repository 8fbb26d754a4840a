// Reading untrusted JSON: a JsonReader holds one value and its path in the document
// ("nodes[3].op.props.axis"), and each accessor checks that the value has the expected kind or
// throws a DeserializeError that names the path, what was expected and what was found. Fields
// are read as own properties only and unknown fields are refused, so keys such as `__proto__`
// or `constructor` are never looked up through a prototype, nor copied anywhere.

/** A JSON value as JSON.parse produces it. */
export type Json = null | boolean | number | string | readonly Json[] | JsonObject;
export interface JsonObject {
  readonly [key: string]: Json;
}

/** A serialized graph that cannot be loaded: where in the document, and what was expected there. */
export class DeserializeError extends Error {
  constructor(
    /** Where in the document, e.g. `nodes[3].op.props.axis` (empty for the document itself). */
    readonly path: string,
    /** What was wrong there. */
    readonly problem: string,
  ) {
    super(`${path === '' ? 'document' : path}: ${problem}`);
    this.name = 'DeserializeError';
  }
}

/** A short description of a found value for error messages: `"x"`, `3`, `an array`, `an object`. */
export function describeJson(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return `an array of ${x.length}`;
  switch (typeof x) {
    case 'string': {
      const s = JSON.stringify(x.length > 40 ? `${x.slice(0, 40)}...` : x);
      return s;
    }
    case 'number':
    case 'boolean':
      return String(x);
    case 'object':
      return 'an object';
    default:
      return typeof x;
  }
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

export class JsonReader {
  constructor(
    readonly value: unknown,
    readonly path: string,
  ) {}

  /** Throws a DeserializeError here: `expected ..., got ...`. */
  fail(expected: string): never {
    throw new DeserializeError(this.path, `expected ${expected}, got ${describeJson(this.value)}`);
  }

  /** Throws a DeserializeError here with this problem text. */
  error(problem: string): never {
    throw new DeserializeError(this.path, problem);
  }

  #child(key: string): string {
    return this.path === '' ? key : `${this.path}.${key}`;
  }

  /**
   * Checks that this is an object whose fields are all among `allowed` and that it has every
   * field of `required`; returns this reader for chaining.
   */
  object(allowed: readonly string[], required: readonly string[] = allowed): this {
    if (!isPlainObject(this.value)) this.fail('an object');
    for (const key of Object.keys(this.value)) {
      if (!allowed.includes(key)) {
        const known = allowed.length > 0 ? `; expected only ${allowed.join(', ')}` : '; expected no fields';
        throw new DeserializeError(this.path, `unexpected field ${JSON.stringify(key)}${known}`);
      }
    }
    for (const key of required) {
      if (!Object.hasOwn(this.value, key)) throw new DeserializeError(this.path, `missing field "${key}"`);
    }
    return this;
  }

  /** Checks that this is an object (any fields); returns this reader. */
  anyObject(): this {
    if (!isPlainObject(this.value)) this.fail('an object');
    return this;
  }

  /** Does this object have its own field `key`? */
  has(key: string): boolean {
    return isPlainObject(this.value) && Object.hasOwn(this.value, key);
  }

  /** The field `key` of this object (checked with `object` first); missing fields read as undefined. */
  field(key: string): JsonReader {
    const v = isPlainObject(this.value) && Object.hasOwn(this.value, key) ? this.value[key] : undefined;
    return new JsonReader(v, this.#child(key));
  }

  /** The field `key`, or undefined when this object does not have it. */
  optional(key: string): JsonReader | undefined {
    return this.has(key) ? this.field(key) : undefined;
  }

  /** The elements of this array (at most `maxLength` of them). */
  array(maxLength = Number.MAX_SAFE_INTEGER): JsonReader[] {
    const a = this.rawArray(maxLength);
    return a.map((v, i) => new JsonReader(v, `${this.path}[${i}]`));
  }

  /** This array itself, for readers that check many elements in one loop (value data). */
  rawArray(maxLength = Number.MAX_SAFE_INTEGER): readonly unknown[] {
    if (!Array.isArray(this.value)) this.fail('an array');
    if (this.value.length > maxLength) this.error(`expected at most ${maxLength} elements, got ${this.value.length}`);
    return this.value;
  }

  /** The path of element `i` of this array. */
  at(i: number): string {
    return `${this.path}[${i}]`;
  }

  string(): string {
    if (typeof this.value !== 'string') this.fail('a string');
    return this.value;
  }

  boolean(): boolean {
    if (typeof this.value !== 'boolean') this.fail('true or false');
    return this.value;
  }

  /** A finite number. */
  number(): number {
    if (typeof this.value !== 'number' || !Number.isFinite(this.value)) this.fail('a finite number');
    return this.value;
  }

  /** An integer in [min, max]. */
  int(min = -(2 ** 31), max = 2 ** 31 - 1): number {
    const v = this.value;
    if (typeof v !== 'number' || !Number.isInteger(v)) this.fail('an integer');
    if (v < min || v > max) this.fail(`an integer from ${min} to ${max}`);
    return v;
  }

  /** One of these strings. */
  oneOf<S extends string>(choices: readonly S[]): S {
    if (typeof this.value !== 'string' || !(choices as readonly string[]).includes(this.value)) {
      this.fail(`one of ${choices.map((c) => JSON.stringify(c)).join(', ')}`);
    }
    return this.value as S;
  }

  /** A string, or null (or a missing field) for none. */
  optionalString(): string | undefined {
    return this.value === null || this.value === undefined ? undefined : this.string();
  }

  /** An array of integers in [min, max]. */
  ints(min?: number, max?: number, maxLength?: number): number[] {
    return this.array(maxLength).map((r) => r.int(min, max));
  }
}

/**
 * Checks that `value` is plain JSON (what an op codec's `encode` must produce): null, booleans,
 * finite numbers other than -0, strings, arrays and plain objects, at most `maxDepth` deep.
 * Returns the reason it is not, or undefined.
 */
export function jsonProblem(value: unknown, where: string, maxDepth = 64): string | undefined {
  const visit = (x: unknown, at: string, depth: number): string | undefined => {
    if (depth > maxDepth) return `${at}: nested more than ${maxDepth} deep`;
    if (x === null || typeof x === 'boolean' || typeof x === 'string') return undefined;
    if (typeof x === 'number') {
      if (!Number.isFinite(x)) return `${at}: ${x} is not a JSON number`;
      if (Object.is(x, -0)) return `${at}: -0 does not survive JSON (it reads back as 0)`;
      return undefined;
    }
    if (Array.isArray(x)) {
      for (let i = 0; i < x.length; i++) {
        const p = visit(x[i], `${at}[${i}]`, depth + 1);
        if (p) return p;
      }
      return undefined;
    }
    if (isPlainObject(x)) {
      for (const k of Object.keys(x)) {
        const p = visit(x[k], `${at}.${k}`, depth + 1);
        if (p) return p;
      }
      return undefined;
    }
    return `${at}: ${x === undefined ? 'undefined' : typeof x === 'object' ? Object.prototype.toString.call(x) : typeof x} is not JSON`;
  };
  return visit(value, where, 0);
}
