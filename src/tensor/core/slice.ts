// Slice: the `start:stop:step` of basic indexing (`x.get(weft.slice(1, null))`). Each bound is
// a number, a scalar int variable, or null/undefined for the default.
import type { TensorVariable } from './variable.js';

export type SliceBound = number | TensorVariable | null | undefined;

export class Slice {
  constructor(
    readonly start: SliceBound = null,
    readonly stop: SliceBound = null,
    readonly step: SliceBound = null,
  ) {}

  toString(): string {
    const b = (x: SliceBound): string => (x === null || x === undefined ? '' : String(x));
    return `${b(this.start)}:${b(this.stop)}${this.step === null || this.step === undefined ? '' : `:${b(this.step)}`}`;
  }
}

/** `slice(start, stop, step)` as in Python: `slice(2)` is `:2`, `slice(1, null)` is `1:`. */
export function slice(startOrStop?: SliceBound, stop?: SliceBound, step?: SliceBound): Slice {
  if (arguments.length <= 1) return new Slice(null, startOrStop ?? null, null);
  return new Slice(startOrStop ?? null, stop ?? null, step ?? null);
}
