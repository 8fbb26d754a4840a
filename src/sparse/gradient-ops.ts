// The sparse ops that SparseTensorType's gradient support makes (ones at a pattern, zeros, sums),
// bound when their modules load. The type module thereby imports no op module, so op base
// classes may import it without an import cycle that would evaluate a subclass before its base.
import type { Variable } from '../graph/variable.js';

export interface SparseGradientOps {
  onesLike(like: Variable): Variable;
  zerosLike(like: Variable): Variable;
  add(a: Variable, b: Variable): Variable;
}

const bound: Partial<SparseGradientOps> = {};

export function bindGradientOps(ops: Partial<SparseGradientOps>): void {
  Object.assign(bound, ops);
}

export function gradientOp<K extends keyof SparseGradientOps>(name: K): SparseGradientOps[K] {
  const op = bound[name];
  if (!op) throw new Error(`sparse gradients: the ${name} op is not loaded (import weft, or weft's sparse/index.js)`);
  return op;
}
