// The Type contract (Theano's Type): what values a variable may hold, how values are checked and
// converted on the way in, compared, copied and signed. The graph layer never looks inside values;
// every value question is a question to a Type.
import type { Dtype, TypedArray } from '../kernels/dtype.js';
import { jsonProblem, type Json, type JsonReader } from './json-reader.js';
import type { PropKindsOf } from './prop-kinds.js';
import type { Variable, Constant } from './variable.js';

export interface FilterOptions {
  /** Accept only values already of exactly this type's storage (no conversion at all). */
  readonly strict?: boolean;
  /** Accept lossy conversions (float64 into float32, non-integers into ints). */
  readonly allowDowncast?: boolean;
  /** Who is filtering, for error messages ("input 2 (x) of function f"). */
  readonly what?: string;
}

/**
 * What differentiation (grad, Lop, Rop) needs of a Type other than tensors, whose variables have
 * gradients: the seed of a cost, zeros, and the sum of a variable's gradient terms, each made
 * with the Type's own ops. A Type without it is discrete: no gradient flows through its variables.
 */
export interface GradientSupport {
  /** The gradient of a cost of this type with respect to itself: one. */
  ones(like: Variable): Variable;
  /** A zero gradient for `like`. */
  zeros(like: Variable): Variable;
  /** The sum of several gradient terms of one variable (two or more). */
  sum(terms: readonly Variable[]): Variable;
}

/**
 * How values of a Type other than tensors live in shared memory (the guide's c_extract and
 * c_sync): as an array of `dtype` and `shape` (a double: float64, []). With it, and worker
 * kernels for its ops, graphs of the Type are planned and run on the workers.
 */
export interface MemoryLayout<V = unknown> {
  readonly dtype: Dtype;
  readonly shape: readonly number[];
  /** The value's elements, in C order. */
  toArray(value: V): ArrayLike<number>;
  /** The value from its elements. */
  fromArray(elements: TypedArray): V;
}

/** One part of a value laid out in parts: an array of `dtype`, with `shape` (null: a length known only from a value). */
export interface PartSpec {
  readonly dtype: Dtype;
  readonly shape: readonly (number | null)[];
}

/** A part of a value in memory: its elements in C order and its shape. */
export interface PartArray {
  readonly data: TypedArray;
  readonly shape: readonly number[];
}

/**
 * How values of a Type live in shared memory as several arrays whose lengths depend on the value
 * (a sparse matrix: data, indices, indptr and shape). Planners lay each variable of the Type out
 * as one tensor per part; ops between a value and its parts say so (Op.partsRole), and every
 * other node over such values runs on the calling thread between planned stages.
 */
export interface PartsLayout<V = unknown> {
  readonly parts: readonly PartSpec[];
  /** The value's parts, in the order of `parts` (they may share the value's memory). */
  toParts(value: V): PartArray[];
  /** The value made of its parts (they may be kept: planners hand over arrays they no longer use). */
  fromParts(parts: readonly PartArray[]): V;
}

export abstract class Type<V = unknown> {
  /** A string that is equal for equal types: used for equality, hashing and merging. */
  abstract readonly key: string;

  /** How gradients of this type's variables are made; undefined for discrete types (see GradientSupport). */
  readonly gradient?: GradientSupport;

  /** How its values live in shared memory; undefined: its graphs run on the calling thread. */
  readonly memoryLayout?: MemoryLayout<V>;

  /** How its values live in shared memory as several arrays (instead of memoryLayout's one). */
  readonly partsLayout?: PartsLayout<V>;

  /**
   * The constructor arguments that make this type, for documents (registerTypeCodec): read back
   * into `new TheType(...props)`, each with its kind in `propKinds` (plain JSON without one).
   */
  static readonly props: readonly string[] = [];
  static readonly propKinds: PropKindsOf = {};

  /** A value as JSON, for documents (default: the value itself, when it is plain JSON). */
  encodeValue(value: V): Json {
    const problem = jsonProblem(value, `a value of ${this}`);
    if (problem) throw new TypeError(`serialize: ${problem}; give ${this.constructor.name} an encodeValue that writes it`);
    return value as Json;
  }

  /** A value read from an untrusted document (default: the JSON through `filter`, strictly). */
  decodeValue(r: JsonReader): V {
    try {
      return this.filter(r.value, { strict: true, what: r.path });
    } catch (e) {
      return r.error((e as Error).message);
    }
  }

  /** Returns `value` as a valid value of this type (converted if allowed), or throws a TypeError. */
  abstract filter(value: unknown, options?: FilterOptions): V;

  isValidValue(value: unknown): boolean {
    try {
      this.filter(value, { strict: true });
      return true;
    } catch {
      return false;
    }
  }

  abstract valuesEq(a: V, b: V): boolean;

  /** Approximate equality, with tolerances chosen by the type (e.g. by dtype). */
  valuesEqApprox(a: V, b: V): boolean {
    return this.valuesEq(a, b);
  }

  /** A copy of a value that shares no memory with it. */
  abstract copyValue(v: V): V;

  /**
   * `filtered` (what filter made of `source`) as a value that shares no memory with `source`:
   * copied when it may alias it. What a variable keeps must not change when its caller's array does.
   */
  ownValue(filtered: V, source: unknown): V {
    return filtered === source ? this.copyValue(filtered) : filtered;
  }

  /** A string identifying a value, for constant merging: equal values give equal signatures. */
  abstract valueSignature(v: V): string;

  /** Could these two values share memory (so that writing one may change the other)? */
  mayShareMemory(_a: V, _b: V): boolean {
    return false;
  }

  /**
   * A variable of this type that stands for `v`, if `v`'s type is compatible (a more specific
   * version of this type), or undefined when it is not.
   */
  convertVariable(v: Variable): Variable | undefined {
    return this.isSupertypeOf(v.type) ? v : undefined;
  }

  /**
   * Is `other` this type or a more specific version of it, so that its variables stand where this
   * type is expected as they are (PyTensor's `is_super`)? Decided from the types alone.
   */
  isSupertypeOf(other: Type): boolean {
    return this.equals(other);
  }

  abstract makeVariable(name?: string): Variable;
  abstract makeConstant(value: V, name?: string): Constant;

  equals(other: Type): boolean {
    return this === other || (this.constructor === other.constructor && this.key === other.key);
  }

  toString(): string {
    return this.key;
  }
}
