// PatternSub (Theano's): a node rewriter given as an input pattern and an output pattern.
// In a pattern, a string is a variable (bound on first use, the same variable afterwards), a
// number is a constant of that value, and [op, ...inputs] is a node of that op.
//   patternSub([mulOp, 'x', 1], 'x')                  x * 1      -> x
//   patternSub([negOp, [negOp, 'x']], 'x')            -(-x)      -> x
import type { FunctionGraph } from '../fgraph.js';
import type { Op } from '../op.js';
import type { Variable } from '../variable.js';
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

export type OutPattern = string | number | readonly [Op | ((...args: unknown[]) => Variable), ...OutPattern[]];

export interface PatternSubOptions {
  readonly name?: string;
  /** Match inner nodes even when other nodes also use their outputs (default false). */
  readonly allowMultipleClients?: boolean;
  /** The value of a variable that is a constant with all elements equal, or undefined. */
  readonly constantValue?: (v: Variable) => number | undefined;
}

type Bindings = Map<string, Variable>;

function describe(p: InPattern | OutPattern): string {
  if (typeof p === 'string' || typeof p === 'number') return String(p);
  if (Array.isArray(p)) return `(${p.map((x, i) => (i === 0 ? (typeof x === 'function' ? x.name : String(x)) : describe(x as InPattern))).join(' ')})`;
  return `{${(p as { bind?: string }).bind ?? '?'}}`;
}

export function patternSub(inPattern: InPattern, outPattern: OutPattern, options: PatternSubOptions = {}): NodeRewriter {
  if (!Array.isArray(inPattern)) throw new TypeError('patternSub: the input pattern must be [op, ...inputs]');
  const root = inPattern[0] as OpMatcher;
  const constantValue = options.constantValue ?? (() => undefined);

  const match = (p: InPattern, v: Variable, b: Bindings, fg: FunctionGraph, isRoot: boolean): boolean => {
    if (typeof p === 'string') {
      const prev = b.get(p);
      if (prev === undefined) {
        b.set(p, v);
        return true;
      }
      return prev === v;
    }
    if (typeof p === 'number') return constantValue(v) === p;
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
    if (typeof head === 'function') return head(...values);
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
