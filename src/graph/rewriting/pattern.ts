// PatternSub (Theano's): a node rewriter given as an input pattern and an output pattern.
// In a pattern, a string is a variable (bound on first use, the same variable afterwards), a
// number is a constant of that value, and [op, ...inputs] is a node of that op (op being any
// OpMatcher: an op, an op class or a predicate). An object form adds a constraint or a binding.
//   patternSub([mulOp, 'x', 1], 'x')                  x * 1      -> x
//   patternSub([negOp, [negOp, 'x']], 'x')            -(-x)      -> x
import type { FunctionGraph } from '../fgraph.js';
import type { Op } from '../op.js';
import { Constant, type Variable } from '../variable.js';
import { matches, type NodeRewriter, type OpMatcher } from './rewriter.js';

export type InPattern =
  | string
  | number
  | readonly [OpMatcher, ...InPattern[]]
  | {
      /** Name to bind the matched variable to. */
      readonly bind?: string;
      /** What it must match (anything when omitted). */
      readonly pattern?: InPattern;
      readonly constraint?: (v: Variable, fg: FunctionGraph) => boolean;
    };

export type OutPattern = string | number | readonly [Op | ((...args: never[]) => Variable), ...OutPattern[]];

export interface PatternSubOptions {
  readonly name?: string;
  /** Match inner nodes even when other nodes also use their outputs (default false). */
  readonly allowMultipleClients?: boolean;
  /**
   * The value of a variable that is a constant with all elements equal, or undefined. Without
   * it a number in the pattern matches a Constant whose type holds that number and whose value
   * equals it (e.g. a 0-d tensor); tensor rewrites pass one that also sees through broadcasts.
   */
  readonly constantValue?: (v: Variable) => number | undefined;
}

type Bindings = Map<string, Variable>;

/** How a pattern's head reads: an op as its name, a class or function by name, a predicate by its name. */
function headName(head: unknown): string {
  if (typeof head === 'function') return head.name || 'function';
  if (typeof head === 'object' && head !== null && 'test' in head) return (head as { name?: string }).name ?? 'predicate';
  return String(head);
}

function describe(p: InPattern | OutPattern): string {
  if (typeof p === 'string' || typeof p === 'number') return String(p);
  if (Array.isArray(p)) return `(${p.map((x, i) => (i === 0 ? headName(x) : describe(x as InPattern))).join(' ')})`;
  return `{${(p as { bind?: string }).bind ?? '?'}}`;
}

/** Does constant `v` hold exactly the number `p` (in its own type)? */
function constantEquals(v: Variable, p: number): boolean {
  if (!(v instanceof Constant)) return false;
  let expected: unknown;
  try {
    expected = v.type.filter(p, { allowDowncast: false });
  } catch {
    return false;
  }
  return v.type.valuesEq(v.data, expected);
}

/** The variable names an input pattern binds. */
function boundNames(p: InPattern, into: Set<string>): Set<string> {
  if (typeof p === 'string') into.add(p);
  else if (Array.isArray(p)) for (const q of p.slice(1)) boundNames(q as InPattern, into);
  else if (typeof p === 'object') {
    const spec = p as { bind?: string; pattern?: InPattern };
    if (spec.bind !== undefined) into.add(spec.bind);
    if (spec.pattern !== undefined) boundNames(spec.pattern, into);
  }
  return into;
}

/** The variable names an output pattern uses. */
function usedNames(p: OutPattern, into: Set<string>): Set<string> {
  if (typeof p === 'string') into.add(p);
  else if (Array.isArray(p)) for (const q of p.slice(1)) usedNames(q as OutPattern, into);
  return into;
}

export function patternSub(inPattern: InPattern, outPattern: OutPattern, options: PatternSubOptions = {}): NodeRewriter {
  if (!Array.isArray(inPattern)) throw new TypeError('patternSub: the input pattern must be [op, ...inputs]');
  const root = inPattern[0] as OpMatcher;
  const bound = boundNames(inPattern, new Set());
  for (const name of usedNames(outPattern, new Set())) {
    if (!bound.has(name)) {
      throw new Error(`patternSub ${describe(inPattern)} -> ${describe(outPattern)}: the output pattern uses '${name}', which the input pattern does not bind`);
    }
  }
  const isConstant = options.constantValue ? (v: Variable, p: number) => options.constantValue!(v) === p : constantEquals;

  const match = (p: InPattern, v: Variable, b: Bindings, fg: FunctionGraph, isRoot: boolean): boolean => {
    if (typeof p === 'string') {
      const prev = b.get(p);
      if (prev === undefined) {
        b.set(p, v);
        return true;
      }
      return prev === v;
    }
    if (typeof p === 'number') return isConstant(v, p);
    if (Array.isArray(p)) {
      const node = v.owner;
      if (!node || v.index !== 0 || !matches(p[0] as OpMatcher, node.op) || node.inputs.length !== p.length - 1) return false;
      if (!isRoot && !options.allowMultipleClients && fg.clients(v).length > 1) return false;
      return node.inputs.every((inp, i) => match(p[i + 1] as InPattern, inp, b, fg, false));
    }
    const spec = p as { bind?: string; pattern?: InPattern; constraint?: (v: Variable, fg: FunctionGraph) => boolean };
    if (spec.pattern !== undefined && !match(spec.pattern, v, b, fg, isRoot)) return false;
    if (spec.constraint && !spec.constraint(v, fg)) return false;
    if (spec.bind !== undefined) return match(spec.bind, v, b, fg, isRoot);
    return true;
  };

  const build = (p: OutPattern, b: Bindings): unknown => {
    if (typeof p === 'string') {
      const v = b.get(p);
      if (v === undefined) throw new Error(`patternSub ${describe(outPattern)}: '${p}' is not bound by the input pattern`);
      return v;
    }
    if (typeof p === 'number') return p;
    const [head, ...args] = p;
    const values = args.map((a) => build(a, b));
    if (typeof head === 'function') return (head as (...args: unknown[]) => Variable)(...values);
    const out = head.call(...values);
    return Array.isArray(out) ? out[0] : out;
  };

  return {
    kind: 'node',
    name: options.name ?? `PatternSub ${describe(inPattern)} -> ${describe(outPattern)}`,
    tracks: [root],
    transform: (fg, node) => {
      if (node.outputs.length !== 1) return false;
      const b: Bindings = new Map();
      if (!match(inPattern, node.outputs[0]!, b, fg, true)) return false;
      return [build(outPattern, b) as Variable];
    },
  };
}
