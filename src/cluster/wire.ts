// How call values travel through the queue: one binary frame per call's arguments or results
// (typed-array bytes, dtype and shape; never JSON number lists), carried as base64 text because
// BullMQ's job data and results are JSON. JS literals (numbers, booleans, nested arrays) keep that
// kind, so the worker's input filter treats them as it does locally (weak literals).
import { DTYPES, STORAGE, dtypeOfTypedArray, type Dtype, type TypedArray } from '../kernels/dtype.js';
import { sizeOf } from '../kernels/view.js';
import { composedView, contiguous, flattenNested, isNdArray, makeNdArray, nestedShape, storageDtype, tolist, ValueTypeError, type NdArray, type NestedArray } from '../tensor/core/ndarray.js';

/** The largest frame (arguments or results of one call) that goes through Redis: 64 MiB. */
export const MAX_FRAME_BYTES = 64 * 2 ** 20;

const MAGIC = 0x31544657; // 'WFT1' little-endian
const HEADER = 8;
/** Per value: kind, dtype, ndim, reserved (4 bytes), element count (8), then ndim lengths (4 each). */
const VALUE_HEADER = 16;

/** A value as it crosses the wire: an array of a dtype, or a JS literal (numbers or booleans, any nesting). */
export type WireValue =
  | { readonly kind: 'array'; readonly array: NdArray }
  | { readonly kind: 'literal'; readonly shape: readonly number[]; readonly values: readonly (number | boolean)[]; readonly bool: boolean };

const KIND_ARRAY = 0;
const KIND_NUMBERS = 1;
const KIND_BOOLEANS = 2;

function align8(n: number): number {
  return (n + 7) & ~7;
}

/** What a caller's argument becomes on the wire; `where` names it in errors. */
export function toWireValue(value: unknown, where: string): WireValue {
  if (isNdArray(value)) {
    // An ndarray over a plain JS array is a literal to the filter, as it is locally; one over
    // another ndarray is the typed array underneath, as it is locally.
    const view = composedView(value, where) ?? value;
    return dtypeOfTypedArray(view.data) === undefined ? toWireValue(tolist(view), where) : { kind: 'array', array: view };
  }
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    const data = value as unknown as TypedArray;
    if (dtypeOfTypedArray(data) === undefined) throw new ValueTypeError(`${where}: typed arrays of ${value.constructor.name} are not supported`);
    return { kind: 'array', array: makeNdArray(data, [data.length]) };
  }
  if (typeof value === 'number' || typeof value === 'boolean' || Array.isArray(value)) {
    const shape = nestedShape(value, where);
    const values = flattenNested(value);
    const bool = values.length > 0 && values.every((v) => typeof v === 'boolean');
    return { kind: 'literal', shape, values, bool };
  }
  throw new TypeError(`${where}: ${value === null ? 'null' : typeof value} cannot be a call's value; give an ndarray, a typed array, a nested array or a number`);
}

/** The value a function's filter takes: the array itself, or the literal rebuilt as nested arrays. */
export function fromWireValue(v: WireValue): unknown {
  if (v.kind === 'array') return v.array;
  if (v.shape.length === 0) return v.values[0];
  let k = 0;
  const build = (axis: number): NestedArray => {
    const out: Array<number | boolean | NestedArray> = [];
    for (let i = 0; i < v.shape[axis]!; i++) out.push(axis === v.shape.length - 1 ? v.values[k++]! : build(axis + 1));
    return out;
  };
  return build(0);
}

function bytesOf(v: WireValue): number {
  const ndim = v.kind === 'array' ? v.array.shape.length : v.shape.length;
  const data = v.kind === 'array' ? sizeOf(v.array.shape) * STORAGE[storageDtype(v.array)!].BYTES_PER_ELEMENT : v.values.length * 8;
  return VALUE_HEADER + align8(4 * ndim) + align8(data);
}

/** The frame of `values`; `what` names them in the size error ("the arguments of remote f"). */
export function encodeFrame(values: readonly WireValue[], what: string): Buffer {
  const total = HEADER + values.reduce((s, v) => s + bytesOf(v), 0);
  if (total > MAX_FRAME_BYTES) {
    throw new RangeError(`${what} take ${(total / 2 ** 20).toFixed(1)} MiB; values that travel through Redis are limited to ${MAX_FRAME_BYTES / 2 ** 20} MiB a call`);
  }
  const frame = Buffer.alloc(total);
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, values.length, true);
  let at = HEADER;
  for (const v of values) {
    const shape = v.kind === 'array' ? v.array.shape : v.shape;
    const count = sizeOf(shape);
    view.setUint8(at, v.kind === 'array' ? KIND_ARRAY : v.bool ? KIND_BOOLEANS : KIND_NUMBERS);
    view.setUint8(at + 1, v.kind === 'array' ? DTYPES.indexOf(storageDtype(v.array)!) : DTYPES.indexOf('float64'));
    view.setUint8(at + 2, shape.length);
    view.setFloat64(at + 8, count, true);
    at += VALUE_HEADER;
    shape.forEach((n, a) => view.setUint32(at + 4 * a, n, true));
    at += align8(4 * shape.length);
    if (v.kind === 'array') {
      const data = contiguous(v.array).data;
      const bytes = new Uint8Array(data.buffer, data.byteOffset, count * data.BYTES_PER_ELEMENT);
      frame.set(bytes, at);
      at += align8(bytes.byteLength);
    } else {
      v.values.forEach((x, i) => view.setFloat64(at + 8 * i, Number(x), true));
      at += align8(8 * count);
    }
  }
  return frame;
}

/** The values of a frame; a malformed frame is a TypeError naming `what` and the value. */
export function decodeFrame(frame: Uint8Array, what: string): WireValue[] {
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const fail = (why: string): never => {
    throw new TypeError(`${what}: not a weft value frame (${why})`);
  };
  if (frame.byteLength < HEADER || view.getUint32(0, true) !== MAGIC) fail('no WFT1 header');
  const n = view.getUint32(4, true);
  const values: WireValue[] = [];
  let at = HEADER;
  for (let i = 0; i < n; i++) {
    if (at + VALUE_HEADER > frame.byteLength) fail(`value ${i} is cut short`);
    const kind = view.getUint8(at);
    const dtype: Dtype | undefined = DTYPES[view.getUint8(at + 1)];
    const ndim = view.getUint8(at + 2);
    const count = view.getFloat64(at + 8, true);
    if (kind > KIND_BOOLEANS || dtype === undefined) fail(`value ${i} has kind ${kind}, dtype code ${view.getUint8(at + 1)}`);
    at += VALUE_HEADER;
    const shape = Array.from({ length: ndim }, (_, a) => view.getUint32(at + 4 * a, true));
    at += align8(4 * ndim);
    if (sizeOf(shape) !== count) fail(`value ${i} has shape [${shape.join(', ')}] but ${count} elements`);
    const width = kind === KIND_ARRAY ? STORAGE[dtype!].BYTES_PER_ELEMENT : 8;
    if (at + count * width > frame.byteLength) fail(`value ${i} is cut short`);
    if (kind === KIND_ARRAY) {
      // A fresh, aligned array the receiver owns (the frame's bytes may sit at any offset).
      const data = new STORAGE[dtype!](count);
      new Uint8Array(data.buffer).set(frame.subarray(at, at + count * width));
      values.push({ kind: 'array', array: makeNdArray(data, shape) });
    } else {
      const numbers = Array.from({ length: count }, (_, k) => view.getFloat64(at + 8 * k, true));
      values.push({ kind: 'literal', shape, values: kind === KIND_BOOLEANS ? numbers.map((x) => x !== 0) : numbers, bool: kind === KIND_BOOLEANS });
    }
    at += align8(count * width);
  }
  return values;
}

/** Base64 text of a frame, for JSON. */
export function frameText(values: readonly WireValue[], what: string): string {
  return encodeFrame(values, what).toString('base64');
}

/** The values of a frame's base64 text. */
export function valuesOfText(text: unknown, what: string): WireValue[] {
  if (typeof text !== 'string') throw new TypeError(`${what}: expected base64 text of a value frame, got ${typeof text}`);
  return decodeFrame(Buffer.from(text, 'base64'), what);
}
