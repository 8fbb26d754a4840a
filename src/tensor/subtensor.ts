// PLACEHOLDER (filled in this session): Subtensor (basic indexing, a view) and IncSubtensor.
import type { IndexEntry, TensorLike, TensorVariable } from './variable.js';

export function get(_x: TensorLike, ..._index: IndexEntry[]): TensorVariable {
  throw new Error('get: not implemented yet');
}
export function setSubtensor(_view: TensorVariable, _y: TensorLike): TensorVariable {
  throw new Error('setSubtensor: not implemented yet');
}
export function incSubtensor(_view: TensorVariable, _y: TensorLike): TensorVariable {
  throw new Error('incSubtensor: not implemented yet');
}
