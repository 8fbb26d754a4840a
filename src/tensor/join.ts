// PLACEHOLDER (filled in this session): Join (concatenate, stack) and Split.
import type { TensorLike, TensorVariable } from './variable.js';

export function concatenate(_xs: readonly TensorLike[], _axis = 0): TensorVariable {
  throw new Error('concatenate: not implemented yet');
}
export function stack(_xs: readonly TensorLike[], _axis = 0): TensorVariable {
  throw new Error('stack: not implemented yet');
}
export function split(_x: TensorLike, _sizes: ReadonlyArray<number | TensorVariable> | TensorVariable, _axis = 0): TensorVariable[] {
  throw new Error('split: not implemented yet');
}
