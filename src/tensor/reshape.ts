// PLACEHOLDER (filled in this session): Reshape and flatten.
import type { ShapeLike, TensorLike, TensorVariable } from './variable.js';

export function reshape(_x: TensorLike, _shape: ShapeLike): TensorVariable {
  throw new Error('reshape: not implemented yet');
}
export function flatten(_x: TensorLike, _ndim = 1): TensorVariable {
  throw new Error('flatten: not implemented yet');
}
