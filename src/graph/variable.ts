// Variable and Constant: the edges of the graph. A variable is an input (no owner) or the
// output `index` of the Apply node `owner`; a constant is an input whose value is fixed and
// immutable. Which graph a variable belongs to is the FunctionGraph's business, not the variable's.
import type { Type } from './type.js';
import type { Apply } from './apply.js';
import { evaluate } from './evaluate.js';

let nextId = 0;

export class Variable<T extends Type = Type> {
  /** Creation order; gives printing and hashing a stable order. */
  readonly id: number = nextId++;
  /** The node that computes this variable; set once by the Apply constructor. */
  owner: Apply | null = null;
  /** Which output of `owner` this is. */
  index = 0;

  constructor(
    readonly type: T,
    public name?: string,
  ) {}

  /** A fresh variable of the same type and name, with no owner. */
  clone(): Variable<T> {
    return this.type.makeVariable(this.name) as Variable<T>;
  }

  /**
   * Evaluates this variable on the calling thread (for debugging and tests). `givens` maps the
   * graph's inputs to values.
   */
  eval(givens?: ReadonlyMap<Variable, unknown>): Promise<unknown> {
    return evaluate(this, givens ?? new Map());
  }

  toString(): string {
    if (this.name !== undefined) return this.name;
    if (this.owner) {
      const op = String(this.owner.op);
      return this.owner.outputs.length === 1 ? `${op}.out` : `${op}.${this.index}`;
    }
    return `<${this.type}>`;
  }
}

export class Constant<T extends Type = Type, V = unknown> extends Variable<T> {
  #signature: string | undefined;

  constructor(
    type: T,
    readonly data: V,
    name?: string,
  ) {
    super(type, name);
  }

  /** Equal for constants of equal type and value: what merging compares. */
  get signature(): string {
    return (this.#signature ??= `${this.type.key}:${this.type.valueSignature(this.data)}`);
  }

  /** Constants are immutable, so a clone is the same constant. */
  override clone(): Constant<T, V> {
    return this;
  }

  override toString(): string {
    return this.name ?? `${this.type.constructor.name.replace(/Type$/, '')}Constant{${this.type.valueSignature(this.data)}}`;
  }
}

export function isConstant(v: Variable): v is Constant {
  return v instanceof Constant;
}
