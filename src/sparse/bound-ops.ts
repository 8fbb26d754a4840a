// The sparse ops that the type module's own code makes (its gradient support: ones at a
// pattern, zeros, sums; the variables' methods: get, T, toDense), bound when their modules load.
// The type module thereby imports no op module, so op base classes may import it without an
// import cycle that would evaluate a subclass before its base.
import type { Variable } from '../graph/variable.js';
import type { Slice } from '../tensor/core/slice.js';
import type { TensorVariable } from '../tensor/core/variable.js';

export interface BoundOps {
  onesLike(like: Variable): Variable;
  zerosLike(like: Variable): Variable;
  add(a: Variable, b: Variable): Variable;
  get(s: Variable, rows: Slice, cols?: Slice): Variable;
  transpose(s: Variable): Variable;
  dense(s: Variable): TensorVariable;
}

const bound: Partial<BoundOps> = {};

export function bindOps(ops: Partial<BoundOps>): void {
  Object.assign(bound, ops);
}

export function boundOp<K extends keyof BoundOps>(name: K): BoundOps[K] {
  const op = bound[name];
  if (!op) throw new Error(`weft.sparse: the ${name} op is not loaded (import weft, or weft's sparse/index.js)`);
  return op;
}
