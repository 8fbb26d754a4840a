// The Type contract (Theano's Type): what values a variable may hold, how values are checked and
// converted on the way in, compared, copied and signed. The graph layer never looks inside values;
// every value question is a question to a Type.
import type { Variable, Constant } from './variable.js';

export interface FilterOptions {
  /** Accept only values already of exactly this type's storage (no conversion at all). */
  readonly strict?: boolean;
  /** Accept lossy conversions (float64 into float32, non-integers into ints). */
  readonly allowDowncast?: boolean;
  /** Who is filtering, for error messages ("input 2 (x) of function f"). */
  readonly what?: string;
}

export abstract class Type<V = unknown> {
  /** A string that is equal for equal types: used for equality, hashing and merging. */
  abstract readonly key: string;

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
