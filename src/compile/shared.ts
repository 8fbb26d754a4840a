// weft.shared(value): a tensor whose value lives between calls. JS numbers and arrays become
// floatX (bool for booleans); typed arrays and ndarrays keep their dtype. Axes are of unknown
// length unless `shape` says otherwise.
import { dtypeOfTypedArray, type Dtype } from '../kernels/dtype.js';
import { config } from '../tensor/core/config.js';
import { flattenNested, isNdArray, ndarrayDtype, nestedShape } from '../tensor/core/ndarray.js';
import { TensorType, type StaticShape } from '../tensor/core/type.js';
import { TensorSharedVariable, type TensorLike } from '../tensor/core/variable.js';

export interface SharedOptions {
  readonly name?: string;
  readonly dtype?: Dtype;
  /** Static shape: a number fixes an axis' length (1 makes it broadcastable), null leaves it free. */
  readonly shape?: StaticShape;
}

function valueDtype(value: unknown): Dtype {
  if (isNdArray(value)) return ndarrayDtype(value, 'shared') ?? config.floatX;
  if (ArrayBuffer.isView(value)) return dtypeOfTypedArray(value) ?? config.floatX;
  const flat = flattenNested(value);
  return flat.length > 0 && flat.every((v) => typeof v === 'boolean') ? 'bool' : config.floatX;
}

function valueNdim(value: unknown): number {
  if (isNdArray(value)) return value.shape.length;
  if (ArrayBuffer.isView(value)) return 1;
  return nestedShape(value, 'shared').length;
}

export function shared(value: TensorLike, options: SharedOptions = {}): TensorSharedVariable {
  const dtype = options.dtype ?? valueDtype(value);
  const ndim = valueNdim(value);
  const shape = options.shape ?? Array<null>(ndim).fill(null);
  const type = new TensorType(dtype, shape);
  const what = `shared(${options.name ?? ''})`;
  const filtered = type.filter(value, { allowDowncast: options.dtype !== undefined, what });
  const owned = type.ownValue(filtered, value);
  return new TensorSharedVariable(type, owned, options.name);
}
