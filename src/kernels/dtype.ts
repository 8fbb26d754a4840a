// The dtypes weft computes in, and how each is stored. This is the lowest layer: the tensor
// types, the kernels and the workers all agree on these names, storage classes and ranges.

export const DTYPES = ['float32', 'float64', 'int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32', 'bool'] as const;
export type Dtype = (typeof DTYPES)[number];

export type TypedArray =
  | Float32Array
  | Float64Array
  | Int8Array
  | Int16Array
  | Int32Array
  | Uint8Array
  | Uint16Array
  | Uint32Array;

export type TypedArrayConstructor =
  | Float32ArrayConstructor
  | Float64ArrayConstructor
  | Int8ArrayConstructor
  | Int16ArrayConstructor
  | Int32ArrayConstructor
  | Uint8ArrayConstructor
  | Uint16ArrayConstructor
  | Uint32ArrayConstructor;

/** The storage class of each dtype; bool is stored as one byte holding 0 or 1. */
export const STORAGE: Readonly<Record<Dtype, TypedArrayConstructor>> = {
  float32: Float32Array,
  float64: Float64Array,
  int8: Int8Array,
  int16: Int16Array,
  int32: Int32Array,
  uint8: Uint8Array,
  uint16: Uint16Array,
  uint32: Uint32Array,
  bool: Uint8Array,
};

export function isDtype(x: unknown): x is Dtype {
  return typeof x === 'string' && (DTYPES as readonly string[]).includes(x);
}

export function isFloatDtype(d: Dtype): d is 'float32' | 'float64' {
  return d === 'float32' || d === 'float64';
}

export function isIntDtype(d: Dtype): boolean {
  return !isFloatDtype(d) && d !== 'bool';
}

export function isUnsignedDtype(d: Dtype): boolean {
  return d === 'uint8' || d === 'uint16' || d === 'uint32' || d === 'bool';
}

/** Is this dtype discrete (no gradient flows through values of it)? */
export function isDiscreteDtype(d: Dtype): boolean {
  return !isFloatDtype(d);
}

export function bytesPerElement(d: Dtype): number {
  return STORAGE[d].BYTES_PER_ELEMENT;
}

/** The inclusive range of an integer dtype. */
export function intRange(d: Dtype): readonly [number, number] {
  switch (d) {
    case 'bool': return [0, 1];
    case 'int8': return [-128, 127];
    case 'uint8': return [0, 255];
    case 'int16': return [-32768, 32767];
    case 'uint16': return [0, 65535];
    case 'int32': return [-2147483648, 2147483647];
    case 'uint32': return [0, 4294967295];
    default: throw new RangeError(`intRange: ${d} is not an integer dtype`);
  }
}

/** The dtype whose storage class this typed array is, or undefined for other arrays. */
export function dtypeOfTypedArray(a: unknown): Dtype | undefined {
  if (a instanceof Float64Array) return 'float64';
  if (a instanceof Float32Array) return 'float32';
  if (a instanceof Int32Array) return 'int32';
  if (a instanceof Int16Array) return 'int16';
  if (a instanceof Int8Array) return 'int8';
  if (a instanceof Uint32Array) return 'uint32';
  if (a instanceof Uint16Array) return 'uint16';
  if (a instanceof Uint8Array) return 'uint8';
  return undefined;
}
