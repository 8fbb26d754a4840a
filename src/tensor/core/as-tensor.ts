// Turning what users pass (variables, numbers, booleans, nested arrays, ndarrays, typed
// arrays) into tensor variables. Plain JS literals are "weak": next to typed operands they take
// the operands' dtype where their values fit (so x_float32.mul(2) stays float32); alone they are
// floatX (bool for booleans), since JS cannot write 1.0 apart from 1 (see literalDtype).
import { dtypeOfTypedArray, intRange, isIntDtype, type Dtype } from '../../kernels/dtype.js';
import { Variable } from '../../graph/variable.js';
import { literalDtype, upcast } from './dtype.js';
import { flattenNested, isNdArray, ndarrayDtype, nestedShape, type NdArray } from './ndarray.js';
import { TensorType } from './type.js';
import { isTensorVariable, TensorConstant, type TensorLike, type TensorVariable } from './variable.js';

export interface ConstantOptions {
  readonly name?: string;
  readonly dtype?: Dtype;
}

function isLiteral(x: unknown): x is number | boolean | readonly unknown[] {
  return typeof x === 'number' || typeof x === 'boolean' || Array.isArray(x);
}

/** A constant holding a copy of `value`; its static shape is the value's shape. */
export function constant(value: TensorLike, options: ConstantOptions = {}): TensorConstant {
  if (isTensorVariable(value)) throw new TypeError('constant: expected a value, got a variable');
  let dtype = options.dtype;
  if (dtype === undefined) {
    if (isNdArray(value)) dtype = ndarrayDtype(value, 'constant') ?? 'float64';
    else if (ArrayBuffer.isView(value)) dtype = dtypeOfTypedArray(value);
    else if (isLiteral(value)) {
      nestedShape(value, 'constant');
      dtype = literalDtype(flattenNested(value), undefined);
    }
    if (dtype === undefined) throw new TypeError(`constant: cannot make a constant from ${typeof value}`);
  }
  const shape = isNdArray(value)
    ? value.shape
    : ArrayBuffer.isView(value)
      ? [(value as NdArray['data']).length]
      : nestedShape(value, 'constant');
  const type = new TensorType(dtype, shape);
  if (options.dtype !== undefined && isIntDtype(dtype) && isLiteral(value)) {
    // An explicit integer dtype truncates fractions (as NumPy's astype), but a value out of its
    // range is an error, not a silent wrap.
    const [lo, hi] = intRange(dtype);
    const bad = flattenNested(value).find((v) => typeof v === 'number' && Number.isFinite(v) && (Math.trunc(v) < lo || Math.trunc(v) > hi));
    if (bad !== undefined) throw new RangeError(`constant: ${bad} does not fit ${dtype} (integers from ${lo} to ${hi})`);
  }
  const filtered = type.filter(value, { allowDowncast: options.dtype !== undefined, what: 'constant' });
  const owned = type.ownValue(filtered, value);
  return type.makeConstant(owned, options.name);
}

/** `x` as a tensor variable: variables pass through, values become constants. */
export function asTensorVariable(x: TensorLike | Variable, options: ConstantOptions = {}): TensorVariable {
  if (isTensorVariable(x)) return x;
  if (x instanceof Variable) {
    throw new TypeError(`expected a tensor variable, got ${x} of type ${x.type}`);
  }
  if (x === null || x === undefined) throw new TypeError(`expected a tensor or a value, got ${x}`);
  return constant(x as TensorLike, options);
}

/**
 * Several operands of one op: variables and ndarrays keep their dtypes, and JS literals take a
 * dtype that fits them next to the others (`where` names the op for errors).
 */
export function asTensorArgs(args: readonly (TensorLike | Variable)[], where: string): TensorVariable[] {
  const strong: Dtype[] = [];
  args.forEach((a, i) => {
    if (a === null || a === undefined) throw new TypeError(`${where}: argument ${i} is ${a}; expected a tensor or a value`);
    if (isTensorVariable(a)) strong.push(a.dtype);
    else if (isNdArray(a)) strong.push(ndarrayDtype(a, `${where}: argument ${i}`) ?? 'float64');
    else if (ArrayBuffer.isView(a)) strong.push(dtypeOfTypedArray(a) ?? 'float64');
  });
  const strongDtype = strong.length > 0 ? upcast(...strong) : undefined;
  return args.map((a, i) => {
    if (isLiteral(a)) {
      nestedShape(a, `${where}: argument ${i}`);
      return constant(a as TensorLike, { dtype: literalDtype(flattenNested(a), strongDtype) });
    }
    try {
      return asTensorVariable(a);
    } catch (e) {
      throw new TypeError(`${where}: argument ${i}: ${(e as Error).message}`);
    }
  });
}

/**
 * An argument for an input of a declared type (asOp's itypes): a JS literal takes that dtype,
 * as a weak literal takes its operand's, and is refused when its values do not fit it; anything
 * else is converted as asTensorVariable does. `where` names the input for errors.
 */
export function asTensorOfDtype(a: TensorLike | Variable, dtype: Dtype, where: string): TensorVariable {
  if (isLiteral(a)) {
    nestedShape(a, where);
    const values = flattenNested(a);
    const fits = dtype === 'bool' ? values.every((v) => typeof v === 'boolean' || v === 0 || v === 1) : literalDtype(values, dtype) === dtype;
    if (!fits) throw new TypeError(`${where}: ${JSON.stringify(a)} is not a value of ${dtype}`);
    return constant(a as TensorLike, { dtype });
  }
  try {
    return asTensorVariable(a);
  } catch (e) {
    throw new TypeError(`${where}: ${(e as Error).message}`);
  }
}
