// Making symbolic tensors: pt.scalar, vector, matrix, tensor3, tensor4 (unknown lengths) and
// pt.tensor with a static shape.
import type { Dtype } from '../../kernels/dtype.js';
import { config } from './config.js';
import { TensorType, type StaticShape } from './type.js';
import type { TensorVariable } from './variable.js';

function ofRank(ndim: number, name?: string, dtype?: Dtype): TensorVariable {
  return new TensorType(dtype ?? config.floatX, Array<null>(ndim).fill(null)).makeVariable(name);
}

export function scalar(name?: string, dtype?: Dtype): TensorVariable {
  return ofRank(0, name, dtype);
}
export function vector(name?: string, dtype?: Dtype): TensorVariable {
  return ofRank(1, name, dtype);
}
export function matrix(name?: string, dtype?: Dtype): TensorVariable {
  return ofRank(2, name, dtype);
}
export function tensor3(name?: string, dtype?: Dtype): TensorVariable {
  return ofRank(3, name, dtype);
}
export function tensor4(name?: string, dtype?: Dtype): TensorVariable {
  return ofRank(4, name, dtype);
}

/** A tensor with a static shape: a number for a known length, null for unknown (1 broadcasts). */
export function tensor(options: { readonly shape: StaticShape; readonly dtype?: Dtype; readonly name?: string }): TensorVariable {
  return new TensorType(options.dtype ?? config.floatX, options.shape).makeVariable(options.name);
}
