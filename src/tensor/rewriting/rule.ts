// Tensor rewrites written as patterns (graph/rewriting/pattern.ts, Theano's PatternSub): one
// form a line, so the algebra reads at a glance. A number in a pattern matches a constant with
// every element equal to it, broadcasts included (match.ts's scalarConstantValue); the result
// is fitted to the replaced output's type (like.ts's asTypeOf) or the rule does not apply.
import { patternSub, type InPattern, type OutPattern } from '../../graph/rewriting/pattern.js';
import type { NodeRewriter, OpMatcher } from '../../graph/rewriting/rewriter.js';
import type { TensorVariable } from '../core/variable.js';
import { asTypeOf } from './like.js';
import { scalarConstantValue } from './match.js';

/** One form of a rule: what it matches, and what replaces it. */
export type Form = readonly [from: readonly [OpMatcher, ...InPattern[]], to: OutPattern];

/**
 * The rewrite `name` that replaces any of `forms` (tried in order). Inner nodes may have other
 * uses (a rule only drops the matched root): -(-x) is x even where -x is also used elsewhere.
 */
export function rule(name: string, ...forms: readonly Form[]): NodeRewriter {
  const subs = forms.map(([from, to]) => patternSub(from, to, { name, constantValue: scalarConstantValue, allowMultipleClients: true }));
  return {
    kind: 'node',
    name,
    tracks: forms.map(([from]) => from[0]),
    transform: (fg, node) => {
      for (const sub of subs) {
        const r = sub.transform(fg, node);
        if (!r || !Array.isArray(r)) continue;
        const fitted = asTypeOf(r[0] as TensorVariable, node.outputs[0] as TensorVariable, fg);
        if (fitted) return [fitted];
      }
      return false;
    },
  };
}
