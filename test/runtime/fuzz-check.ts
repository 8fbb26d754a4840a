// Comparisons for the differential fuzzer: bitwise equality between runs on different numbers
// of workers, and closeness to the reference executor within a dtype-aware tolerance. Each
// returns undefined when the arrays agree, else a sentence that locates the first difference.
import { isContiguous } from '../../src/kernels/view.js';
import { copyArray, flatValues, makeNdArray } from '../../src/tensor/core/ndarray.js';
import { weft } from '../helpers.js';

/** Relative tolerance (against max(1, |reference|)) per dtype; integers and bools are exact. */
export const TOLERANCE: Readonly<Record<weft.Dtype, number>> = {
  float32: 1e-4,
  float64: 1e-9,
  int8: 0,
  int16: 0,
  int32: 0,
  uint8: 0,
  uint16: 0,
  uint32: 0,
  bool: 0,
};

function sameShape(a: weft.NdArray, b: weft.NdArray): string | undefined {
  if (a.shape.length === b.shape.length && a.shape.every((d, i) => d === b.shape[i])) return undefined;
  return `shape [${a.shape.join(',')}] where [${b.shape.join(',')}] was expected`;
}

/** The bits of `x` as unsigned words (the widest that divide its element size, up to 32 bits). */
function wordsOf(x: weft.TypedArray): Uint8Array | Uint16Array | Uint32Array {
  const size = x.BYTES_PER_ELEMENT;
  if (size >= 4) return new Uint32Array(x.buffer, x.byteOffset, x.byteLength / 4);
  if (size === 2) return new Uint16Array(x.buffer, x.byteOffset, x.length);
  return new Uint8Array(x.buffer, x.byteOffset, x.length);
}

/** Same shape, same storage class and the same bytes (NaN payloads included). */
export function bitsDiffer(actual: weft.NdArray, expected: weft.NdArray): string | undefined {
  const shape = sameShape(actual, expected);
  if (shape) return shape;
  if (actual.data.constructor !== expected.data.constructor) {
    return `storage ${actual.data.constructor.name} where ${expected.data.constructor.name} was expected`;
  }
  const a = flatValues(actual);
  const b = flatValues(expected);
  const x = wordsOf(a);
  const y = wordsOf(b);
  for (let i = 0; i < x.length; i++) {
    if (x[i] !== y[i]) {
      const k = Math.floor((i * x.BYTES_PER_ELEMENT) / a.BYTES_PER_ELEMENT);
      return `element ${k} is ${a[k]} where ${b[k]} was expected (bits differ)`;
    }
  }
  return undefined;
}

/** Within `TOLERANCE[dtype]` of `reference` (NaN matches NaN, infinities match exactly). */
export function farFrom(actual: weft.NdArray, reference: weft.NdArray, dtype: weft.Dtype): string | undefined {
  const shape = sameShape(actual, reference);
  if (shape) return shape;
  const tol = TOLERANCE[dtype];
  const a = flatValues(actual);
  const b = flatValues(reference);
  let bad = 0;
  let first = -1;
  let worst = 0;
  for (let i = 0; i < b.length; i++) {
    const g = a[i]!;
    const w = b[i]!;
    if (g === w) continue;
    const ok = Number.isNaN(w) ? Number.isNaN(g) : Number.isFinite(w) && Math.abs(g - w) <= tol * Math.max(1, Math.abs(w));
    if (!ok) {
      if (first < 0) first = i;
      bad += 1;
      worst = Math.max(worst, Math.abs(g - w) / Math.max(1, Math.abs(w)));
    }
  }
  if (bad === 0) return undefined;
  return `${bad} of ${b.length} elements differ from the reference beyond ${tol} (first: element ${first} is ${a[first]} where ${b[first]} was expected; worst relative error ${worst.toPrecision(3)})`;
}

/** A contiguous copy of `x` (one block copy when `x` is contiguous: the general copy is slow). */
export function copyOf(x: weft.NdArray): weft.NdArray {
  if (!isContiguous(x)) return copyArray(x);
  const n = x.shape.reduce((a, b) => a * b, 1);
  return makeNdArray(x.data.slice(x.offset, x.offset + n), x.shape);
}
