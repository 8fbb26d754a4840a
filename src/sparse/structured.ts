// The structured element-wise functions (PyTensor's structured_sigmoid, _exp, _log, _pow,
// _minimum, _maximum, _add_s_v with a scalar): a function of each stored value only, the absent
// entries left absent (so f(0) is never taken). Gradient: structured, gz times f' at s's pattern.
import type { Apply } from '../graph/apply.js';
import { gradNotImplemented } from '../graph/gradient.js';
import { propKinds } from '../graph/prop-kinds.js';
import type { Variable } from '../graph/variable.js';
import { mulSparse } from './arith.js';
import { withData } from './compute.js';
import { outputDtype } from './op-args.js';
import type { SparseVariable } from './type.js';
import { SparseUnaryOp } from './unary-op.js';
import { DATA_CLASS, type SparseValue } from './value.js';

export const STRUCTURED_FUNCTIONS = ['sigmoid', 'exp', 'log', 'pow', 'minimum', 'maximum', 'addS'] as const;
export type StructuredFunction = (typeof STRUCTURED_FUNCTIONS)[number];

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

/** Each function of a stored value x and the op's scalar p, and its derivative in x. */
const FUNCTIONS: Readonly<Record<StructuredFunction, { readonly f: (x: number, p: number) => number; readonly df: (x: number, p: number) => number }>> = {
  sigmoid: { f: sigmoid, df: (x) => sigmoid(x) * (1 - sigmoid(x)) },
  exp: { f: Math.exp, df: Math.exp },
  log: { f: Math.log, df: (x) => 1 / x },
  pow: { f: (x, p) => x ** p, df: (x, p) => p * x ** (p - 1) },
  // Ties go to x, as where(x <= p, x, p) does.
  minimum: { f: (x, p) => Math.min(x, p), df: (x, p) => (x <= p ? 1 : 0) },
  maximum: { f: (x, p) => Math.max(x, p), df: (x, p) => (x >= p ? 1 : 0) },
  addS: { f: (x, p) => x + p, df: () => 1 },
};

/**
 * f (or, with `derivative`, f') applied to each stored value of a sparse matrix; `p` is the
 * scalar of pow, minimum, maximum and addS (0 for the others).
 */
export class StructuredMap extends SparseUnaryOp {
  static override readonly props = ['fn', 'p', 'derivative'] as const;
  static override readonly propKinds = { fn: propKinds.oneOf(STRUCTURED_FUNCTIONS), p: propKinds.number(), derivative: propKinds.boolean() };
  protected readonly label: string;

  constructor(
    readonly fn: StructuredFunction,
    readonly p: number = 0,
    readonly derivative: boolean = false,
  ) {
    super();
    if (!STRUCTURED_FUNCTIONS.includes(fn)) throw new TypeError(`StructuredMap: unknown function ${JSON.stringify(fn)}; expected one of ${STRUCTURED_FUNCTIONS.join(', ')}`);
    if (typeof p !== 'number') throw new TypeError(`structured ${fn}: the scalar must be a number, got ${typeof p}`);
    this.label = `structured${fn[0]!.toUpperCase()}${fn.slice(1)}`;
  }

  override perform(node: Apply, [s]: readonly unknown[]): unknown[] {
    const v = s as SparseValue;
    const { f, df } = FUNCTIONS[this.fn];
    const g = this.derivative ? df : f;
    const data = new DATA_CLASS[outputDtype(node)](v.data.length);
    for (let k = 0; k < data.length; k++) data[k] = g(v.data[k]!, this.p);
    return [withData(v, data)];
  }

  override grad([s]: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    if (this.derivative) return [gradNotImplemented(this, 0, 'second derivatives of structured functions')];
    return [mulSparse(gz!, new StructuredMap(this.fn, this.p, true).call(s) as Variable)];
  }

  /** Structured: f' at s's stored values times the tangent there (its entries elsewhere do not move f). */
  override rop([s]: readonly Variable[], [es]: readonly Variable[]): Variable[] {
    if (this.derivative) return [gradNotImplemented(this, 0, 'second derivatives of structured functions')];
    return [mulSparse(es!, new StructuredMap(this.fn, this.p, true).call(s) as Variable)];
  }

  override toString(): string {
    return `${this.derivative ? 'd' : ''}${this.label}${this.p !== 0 || ['pow', 'minimum', 'maximum', 'addS'].includes(this.fn) ? `{${this.p}}` : ''}`;
  }
}

const map = (fn: StructuredFunction, s: unknown, p = 0): SparseVariable => new StructuredMap(fn, p).call(s) as SparseVariable;

/** `weft.sparse.structuredSigmoid(s)`: sigmoid of each stored value. */
export const structuredSigmoid = (s: unknown): SparseVariable => map('sigmoid', s);
/** `weft.sparse.structuredExp(s)`: exp of each stored value (absent entries stay absent, not 1). */
export const structuredExp = (s: unknown): SparseVariable => map('exp', s);
/** `weft.sparse.structuredLog(s)`: log of each stored value. */
export const structuredLog = (s: unknown): SparseVariable => map('log', s);
/** `weft.sparse.structuredPow(s, p)`: each stored value to the power p (a number). */
export const structuredPow = (s: unknown, p: number): SparseVariable => map('pow', s, p);
/** `weft.sparse.structuredMinimum(s, p)`: min(x, p) of each stored value x. */
export const structuredMinimum = (s: unknown, p: number): SparseVariable => map('minimum', s, p);
/** `weft.sparse.structuredMaximum(s, p)`: max(x, p) of each stored value x. */
export const structuredMaximum = (s: unknown, p: number): SparseVariable => map('maximum', s, p);
/** `weft.sparse.structuredAddS(s, p)`: x + p for each stored value x (PyTensor's structured_add_s_v with a scalar). */
export const structuredAddS = (s: unknown, p: number): SparseVariable => map('addS', s, p);
