// PLACEHOLDER (filled in this session): ARange and Eye.
import type { Dtype } from '../kernels/dtype.js';
import type { TensorVariable } from './variable.js';

export function arange(
  _startOrStop: number | TensorVariable,
  _stop?: number | TensorVariable | null,
  _step?: number | TensorVariable | null,
  _dtype?: Dtype,
): TensorVariable {
  throw new Error('arange: not implemented yet');
}
export function eye(_n: number | TensorVariable, _m?: number | TensorVariable | null, _k = 0, _dtype?: Dtype): TensorVariable {
  throw new Error('eye: not implemented yet');
}
