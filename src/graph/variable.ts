// Variable and Constant: the edges of the graph. A variable is an input (no owner) or the
// output `index` of the Apply node `owner`; a constant is an input whose value is fixed and
// immutable. Which graph a variable belongs to is the FunctionGraph's business, not the variable's.
import type { Type } from './type.js';
import type { Apply } from './apply.js';
import { evaluate } from './evaluate.js';
import { graphInputs } from './traversal.js';

let nextId = 0;

/** What `eval` takes: a Map from input variables to values, or an object keyed by input names. */
export type Givens = ReadonlyMap<Variable, unknown> | Readonly<Record<string, unknown>>;

/**
 * The id the next variable will get: variables with a smaller id existed before this call (scan
 * tells what a step function read from outside from what it computed).
 */
export function nextVariableId(): number {
  return nextId;
}

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
   * Evaluates this variable on the calling thread (for debugging and tests). `givens` gives the
   * graph's inputs their values: a Map from variables, or a plain object keyed by the inputs'
   * names (`x.eval({ x: [1, 2] })`, as PyTensor's `eval({'x': ...})`).
   */
  eval(givens?: Givens): Promise<unknown> {
    try {
      return evaluate(this, givensOf(this, givens));
    } catch (e) {
      return Promise.reject(e);
    }
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

/** The Map form of eval's givens: a Map as it is, a plain object by the names of `v`'s inputs. */
function givensOf(v: Variable, givens: unknown): ReadonlyMap<Variable, unknown> {
  if (givens === undefined) return new Map();
  if (givens instanceof Map) return givens;
  const isPlain = typeof givens === 'object' && givens !== null && [Object.prototype, null].includes(Object.getPrototypeOf(givens));
  if (!isPlain) {
    throw new TypeError(`${v}.eval: givens must be a Map from variables to values or an object keyed by input names ({ x: [1, 2] }), got ${Array.isArray(givens) ? 'an array' : typeof givens}`);
  }
  const inputs = graphInputs([v]).filter((i) => !(i instanceof Constant));
  const out = new Map<Variable, unknown>();
  for (const [name, value] of Object.entries(givens as Record<string, unknown>)) {
    const named = inputs.filter((i) => i.name === name);
    if (named.length !== 1) {
      const names = inputs.map((i) => i.name).filter((n) => n !== undefined);
      const why = named.length === 0 ? 'no input has that name' : `${named.length} inputs have that name (give a Map of variables instead)`;
      throw new TypeError(`${v}.eval: givens key '${name}': ${why}; the named inputs are ${names.length > 0 ? names.join(', ') : 'none'}`);
    }
    out.set(named[0]!, value);
  }
  return out;
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
