// Dtype arithmetic of the tensor layer: NumPy's promotion rules for weft's dtypes, the dtype a
// plain JS literal takes next to typed operands (literals are "weak", as in NumPy 2), and the
// float dtype that transcendental functions compute in.
import { intRange, isFloatDtype, isUnsignedDtype, type Dtype } from '../kernels/dtype.js';
import { config } from './config.js';

const BITS: Record<Dtype, number> = {
  bool: 1, int8: 8, uint8: 8, int16: 16, uint16: 16, int32: 32, uint32: 32, float32: 32, float64: 64,
};

function signedOfBits(bits: number): Dtype {
  return bits <= 8 ? 'int8' : bits <= 16 ? 'int16' : bits <= 32 ? 'int32' : 'float64';
}

function upcast2(a: Dtype, b: Dtype): Dtype {
  if (a === b) return a;
  if (a === 'bool') return b;
  if (b === 'bool') return a;
  const fa = isFloatDtype(a);
  const fb = isFloatDtype(b);
  if (fa && fb) return a === 'float64' || b === 'float64' ? 'float64' : 'float32';
  if (fa || fb) {
    const f = fa ? a : b;
    const i = fa ? b : a;
    return f === 'float64' || BITS[i] > 16 ? 'float64' : 'float32';
  }
  const ua = isUnsignedDtype(a);
  const ub = isUnsignedDtype(b);
  if (ua === ub) return BITS[a] >= BITS[b] ? a : b;
  const [u, s] = ua ? [a, b] : [b, a];
  return BITS[u] < BITS[s] ? s : signedOfBits(BITS[u] * 2);
}

/** NumPy's result dtype for operands of these dtypes (uint32 with a signed int gives float64). */
export function upcast(...dtypes: readonly Dtype[]): Dtype {
  if (dtypes.length === 0) throw new Error('upcast needs at least one dtype');
  return dtypes.reduce(upcast2);
}

/** Can every value of `from` be represented exactly in `to`? */
export function canCastSafely(from: Dtype, to: Dtype): boolean {
  return upcast2(from, to) === to;
}

/** The float dtype that a function of a value of this dtype computes in (Theano's upgrade_to_float). */
export function upgradeToFloat(d: Dtype): Dtype {
  if (isFloatDtype(d)) return d;
  return BITS[d] <= 16 ? 'float32' : 'float64';
}

/** The smallest dtype that holds every one of these numbers (booleans give bool). */
export function dtypeOfValues(values: Iterable<number | boolean>): Dtype {
  let allBool = true;
  let allInt = true;
  let any = false;
  let lo = 0;
  let hi = 0;
  for (const v of values) {
    any = true;
    if (typeof v === 'boolean') continue;
    allBool = false;
    if (!Number.isInteger(v)) {
      allInt = false;
      break;
    }
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (!any) return config.floatX;
  if (allBool) return 'bool';
  if (!allInt) return config.floatX;
  for (const d of ['int8', 'int16', 'int32'] as const) {
    const [min, max] = intRange(d);
    if (lo >= min && hi <= max) return d;
  }
  return hi <= 4294967295 && lo >= 0 ? 'uint32' : 'float64';
}

/**
 * The dtype of a JS literal (number, boolean or plain array) used next to operands of dtype
 * `strong`: it takes the operand's dtype when its values fit that kind, as NumPy 2 does with
 * Python scalars, so `x_float32.mul(2)` stays float32.
 */
export function literalDtype(values: readonly (number | boolean)[], strong: Dtype | undefined): Dtype {
  const own = dtypeOfValues(values);
  if (strong === undefined) return own;
  if (isFloatDtype(strong)) return strong;
  if (isFloatDtype(own)) return own;
  if (own === 'bool') return strong;
  if (strong === 'bool') return own;
  const [min, max] = intRange(strong);
  const fits = values.every((v) => typeof v === 'boolean' || (v >= min && v <= max));
  return fits ? strong : upcast(strong, own);
}
