// `Variable.eval` needs a compiler, which lives in a higher layer. The compile layer registers
// its evaluator here when it loads, so the graph layer keeps pointing down only.
import type { Variable } from './variable.js';

export type Evaluator = (v: Variable, givens: ReadonlyMap<Variable, unknown>) => Promise<unknown>;

let evaluator: Evaluator | undefined;

export function registerEvaluator(e: Evaluator): void {
  evaluator = e;
}

export function evaluate(v: Variable, givens: ReadonlyMap<Variable, unknown>): Promise<unknown> {
  if (!evaluator) {
    return Promise.reject(new Error('Variable.eval: no evaluator is registered; import weft from its package root'));
  }
  return evaluator(v, givens);
}
