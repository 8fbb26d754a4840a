// In(variable, options): how a compiled function receives one input. `mutable` lets the function
// overwrite the value it is given (inplace ops may then destroy it); `borrow` lets it keep
// using the caller's memory instead of a copy.
import { isTensorVariable, type TensorVariable } from '../tensor/core/variable.js';

export interface InOptions {
  readonly mutable?: boolean;
  readonly borrow?: boolean;
  readonly name?: string;
}

export class FunctionInput {
  readonly mutable: boolean;
  readonly borrow: boolean;
  readonly name: string | undefined;

  constructor(
    readonly variable: TensorVariable,
    options: InOptions = {},
  ) {
    if (!isTensorVariable(variable)) throw new TypeError(`In: expected a tensor variable, got ${String(variable)}`);
    this.mutable = options.mutable ?? false;
    this.borrow = options.borrow ?? false;
    this.name = options.name ?? variable.name;
  }
}

/** Describes one input of a function (`weft.In(x, { mutable: true })`). */
export function In(variable: TensorVariable, options: InOptions = {}): FunctionInput {
  return new FunctionInput(variable, options);
}
