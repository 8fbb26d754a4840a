// Out(variable, options): how a compiled function returns one output. `borrow` lets it return
// memory it keeps and reuses (as Theano's Out(borrow=True)): no copy and no fresh pages per call,
// but the value is overwritten by a later call of the same function; copy it to keep it.
import { isTensorVariable, type TensorVariable } from '../tensor/core/variable.js';

export interface OutOptions {
  readonly borrow?: boolean;
}

export class FunctionOutput {
  readonly borrow: boolean;

  constructor(
    readonly variable: TensorVariable,
    options: OutOptions = {},
  ) {
    if (!isTensorVariable(variable)) throw new TypeError(`Out: expected a tensor variable, got ${String(variable)}`);
    this.borrow = options.borrow ?? false;
  }
}

/** Describes one output of a function (`weft.Out(y, { borrow: true })`). */
export function Out(variable: TensorVariable, options: OutOptions = {}): FunctionOutput {
  return new FunctionOutput(variable, options);
}
