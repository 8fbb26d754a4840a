// Dtype arithmetic of the tensor layer: NumPy's promotion rules for weft's dtypes, the dtype a
// plain JS literal takes (weak next to typed operands, as in NumPy 2; floatX alone), and the
// float dtype that transcendental functions compute in.
import { intRange, isFloatDtype, isUnsignedDtype, type Dtype } from '../../kernels/dtype.js';
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

/**
 * The smallest integer dtype that holds all of these integers (booleans as 0 and 1): int8, int16,
 * int32, then uint32; float64 beyond (weft has no int64). Undefined when one is not an integer.
 */
export function integerDtypeOf(values: Iterable<number | boolean>): Dtype | undefined {
  let lo = 0;
  let hi = 0;
  for (const b of values) {
    const v = +b;
    if (!Number.isInteger(v)) return undefined;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  for (const d of ['int8', 'int16', 'int32'] as const) {
    const [min, max] = intRange(d);
    if (lo >= min && hi <= max) return d;
  }
  return hi <= 4294967295 && lo >= 0 ? 'uint32' : 'float64';
}

/**
 * The dtype of a JS literal (a number, a boolean or a nested array of them) used next to operands
 * of dtype `strong` (undefined: none). JS has no float literals (1.0 === 1), so literals are weak,
 * as Python scalars are in NumPy 2: next to numeric operands a literal takes their dtype where its
 * values fit that kind (`x_float32.mul(2)` stays float32, `i_int32.add(1)` int32; 0.5 next to
 * integers gives floatX, 300 next to int8 int16). Next to bools, booleans stay bool and whole
 * numbers take the smallest integer dtype that holds them (`x_bool + 1` is int8, as bool sits
 * below every integer in NumPy's order). Alone, booleans are bool and numbers `config.floatX`
 * (so `pt.constant(1)` is a float, as `1.0` would be). Indices, lengths and shapes do not come here: they are
 * integers (asIntScalar). The rule is documented in docs/numbers-and-dtypes.md.
 */
export function literalDtype(values: readonly (number | boolean)[], strong: Dtype | undefined): Dtype {
  if (strong === undefined || strong === 'bool') {
    if (values.length > 0 && values.every((v) => typeof v === 'boolean')) return 'bool';
    return strong === 'bool' ? (integerDtypeOf(values) ?? config.floatX) : config.floatX;
  }
  if (isFloatDtype(strong)) return strong;
  const own = integerDtypeOf(values);
  if (own === undefined) return config.floatX;
  const [min, max] = intRange(strong);
  const fits = values.every((v) => typeof v === 'boolean' || (v >= min && v <= max));
  return fits ? strong : upcast(strong, own);
}
