// Library-wide settings (Theano's config): the dtype of float variables made without one.
import { isFloatDtype, isDtype, type Dtype } from '../../kernels/dtype.js';

let floatX: 'float32' | 'float64' = 'float64';

export const config = {
  /** The dtype of float variables and literals made without an explicit dtype. */
  get floatX(): 'float32' | 'float64' {
    return floatX;
  },
  set floatX(value: Dtype) {
    if (!isDtype(value) || !isFloatDtype(value)) {
      throw new TypeError(`config.floatX must be 'float32' or 'float64', got ${JSON.stringify(value)}`);
    }
    floatX = value;
  },
};
