// PLACEHOLDER (filled in this session): Dot, MatMul and outer.
import type { TensorLike, TensorVariable } from './variable.js';

export function dot(_x: TensorLike, _y: TensorLike): TensorVariable {
  throw new Error('dot: not implemented yet');
}
export function matmul(_x: TensorLike, _y: TensorLike): TensorVariable {
  throw new Error('matmul: not implemented yet');
}
export function outer(_x: TensorLike, _y: TensorLike): TensorVariable {
  throw new Error('outer: not implemented yet');
}
