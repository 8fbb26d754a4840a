// Out(variable, options): how a compiled function returns one output. `borrow` lets it return
// memory it keeps and reuses (as Theano's Out(borrow=True)): no copy and no fresh pages per call,
// but the value is overwritten by a later call of the same function; copy it to keep it.
import { Variable } from '../graph/variable.js';

export interface OutOptions {
  readonly borrow?: boolean;
}

/** One output: `V` is its variable's class, which says what a call gives for it. */
export class FunctionOutput<V extends Variable = Variable> {
  readonly borrow: boolean;

  constructor(
    readonly variable: V,
    options: OutOptions = {},
  ) {
    if (!(variable instanceof Variable)) throw new TypeError(`Out: expected a variable, got ${String(variable)}`);
    this.borrow = options.borrow ?? false;
  }
}

/** Describes one output of a function (`weft.Out(y, { borrow: true })`). */
export function Out<V extends Variable>(variable: V, options: OutOptions = {}): FunctionOutput<V> {
  return new FunctionOutput(variable, options);
}
