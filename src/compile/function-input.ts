// In(variable, options): how a compiled function receives one input. `mutable` lets the function
// overwrite the value it is given (inplace ops may then destroy it); `borrow` lets it keep
// using the caller's memory instead of a copy.
import { Variable } from '../graph/variable.js';

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
    readonly variable: Variable,
    options: InOptions = {},
  ) {
    if (!(variable instanceof Variable)) throw new TypeError(`In: expected a variable, got ${String(variable)}`);
    this.mutable = options.mutable ?? false;
    this.borrow = options.borrow ?? false;
    this.name = options.name ?? variable.name;
  }
}

/** Describes one input of a function (`weft.In(x, { mutable: true })`). */
export function In(variable: Variable, options: InOptions = {}): FunctionInput {
  return new FunctionInput(variable, options);
}
