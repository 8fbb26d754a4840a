// TensorType: a dtype and a static shape (a number per axis where the length is known, null
// where not; a static 1 marks a broadcastable axis). `filter` is the single gate through which
// user values (ndarrays, nested arrays, numbers, typed arrays) become tensor values.
import { dtypeOfTypedArray, intRange, isDtype, isFloatDtype, isIntDtype, type Dtype } from '../../kernels/dtype.js';
import { sizeOf } from '../../kernels/view.js';
import { Type, type FilterOptions } from '../../graph/type.js';
import type { Variable } from '../../graph/variable.js';
import { canCastSafely } from './dtype.js';
import {
  composedView,
  copyArray,
  empty,
  flatValues,
  flattenNested,
  isNdArray,
  makeNdArray,
  nestedShape,
  shapeText,
  type NdArray,
  ValueTypeError,
} from './ndarray.js';
import { TensorConstant, TensorVariable } from './variable.js';

export type StaticShape = readonly (number | null)[];

export { ValueTypeError };

const TOLERANCES: Partial<Record<Dtype, { atol: number; rtol: number }>> = {
  float32: { atol: 1e-5, rtol: 1e-5 },
  float64: { atol: 1e-8, rtol: 1e-5 },
};

function fnv1a(bytes: Uint8Array): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i]!;
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16);
}

export class TensorType extends Type<NdArray> {
  readonly shape: StaticShape;

  constructor(
    readonly dtype: Dtype,
    shape: StaticShape,
  ) {
    super();
    if (!isDtype(dtype)) throw new TypeError(`TensorType: unknown dtype ${JSON.stringify(dtype)}`);
    for (const d of shape) {
      if (d !== null && !(Number.isInteger(d) && d >= 0)) {
        throw new TypeError(`TensorType: static lengths must be non-negative integers or null, got [${shape.map(String).join(', ')}]`);
      }
    }
    this.shape = Object.freeze([...shape]);
  }

  get ndim(): number {
    return this.shape.length;
  }

  /** Axes of static length 1, which broadcast against any length. */
  get broadcastable(): readonly boolean[] {
    return this.shape.map((d) => d === 1);
  }

  get key(): string {
    return `TensorType(${this.dtype}, (${this.shape.map((d) => (d === null ? '?' : d)).join(', ')}${this.shape.length === 1 ? ',' : ''}))`;
  }

  /** This type with another dtype or static shape. */
  clone(options: { dtype?: Dtype; shape?: StaticShape } = {}): TensorType {
    return new TensorType(options.dtype ?? this.dtype, options.shape ?? this.shape);
  }

  filter(value: unknown, options: FilterOptions = {}): NdArray {
    // A JS number for a float scalar, the commonest argument of small calls: no shape to walk.
    if (typeof value === 'number' && this.shape.length === 0 && !options.strict && isFloatDtype(this.dtype)) {
      const out = empty(this.dtype, []);
      out.data[0] = value;
      return out;
    }
    const where = options.what ?? 'value';
    let nd: NdArray | undefined;
    let source: Dtype | 'literal';
    let literal: Array<number | boolean> | undefined;
    let shape: number[];
    if (isNdArray(value)) {
      const view = composedView(value, where) ?? value;
      const d = dtypeOfTypedArray(view.data);
      if (d === undefined) {
        literal = [];
        const n = sizeOf(view.shape);
        const get = (view as unknown as { get(...i: number[]): number }).get.bind(view);
        const idx = new Array<number>(view.shape.length).fill(0);
        for (let k = 0; k < n; k++) {
          literal.push(get(...idx));
          for (let a = idx.length - 1; a >= 0; a--) if (++idx[a]! < view.shape[a]!) break; else idx[a] = 0;
        }
        source = 'literal';
      } else {
        nd = view;
        source = d;
        checkReach(view, where);
      }
      shape = [...view.shape];
    } else if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
      const d = dtypeOfTypedArray(value);
      if (d === undefined) throw new ValueTypeError(`${where}: typed arrays of ${value.constructor.name} are not supported`);
      nd = makeNdArray(value as NdArray['data'], [(value as NdArray['data']).length]);
      source = d;
      shape = [...nd.shape];
    } else if (typeof value === 'number' || typeof value === 'boolean' || Array.isArray(value)) {
      shape = nestedShape(value, where);
      literal = flattenNested(value);
      source = 'literal';
    } else {
      throw new ValueTypeError(
        `${where}: expected an ndarray, a nested array, a number or a typed array for ${this}, got ${value === null ? 'null' : typeof value}`,
      );
    }

    if (shape.length !== this.ndim) {
      throw new ValueTypeError(
        `${where}: expected a ${this.ndim}-d value (${this}), got a ${shape.length}-d value of shape ${shapeText(shape)}`,
      );
    }
    this.shape.forEach((d, i) => {
      if (d !== null && shape[i] !== d) {
        throw new ValueTypeError(`${where}: expected length ${d} on axis ${i} (${this}), got shape ${shapeText(shape)}`);
      }
    });

    if (options.strict) {
      if (!nd || !(source === this.dtype || (this.dtype === 'bool' && source === 'uint8'))) {
        throw new ValueTypeError(`${where}: expected an ndarray of ${this.dtype} (strict), got ${source === 'literal' ? 'a JS value' : source}`);
      }
      if (this.dtype === 'bool') this.#checkBool(flatValues(nd), where);
      return nd;
    }

    if (literal) return this.#fromLiteral(literal, shape, where, options.allowDowncast ?? false);
    const src = source as Dtype;
    if (src === this.dtype) return nd!;
    if (this.dtype === 'bool') {
      if (!options.allowDowncast) this.#checkBool(flatValues(nd!), where);
      const out = empty('bool', shape);
      const flat = flatValues(nd!);
      for (let i = 0; i < flat.length; i++) out.data[i] = flat[i] ? 1 : 0;
      return out;
    }
    if (!options.allowDowncast && !canCastSafely(src, this.dtype)) {
      throw new ValueTypeError(
        `${where}: ${src.startsWith('int') ? 'an' : 'a'} ${src} value cannot be converted to ${this.dtype} without loss; ` +
          'convert it first, or pass allowInputDowncast: true to accept the conversion',
      );
    }
    if (!isFloatDtype(this.dtype) && isFloatDtype(src)) return this.#fromLiteral(Array.from(flatValues(nd!)), shape, where, true);
    return copyArray(nd!, this.dtype);
  }

  #checkBool(values: ArrayLike<number>, where: string): void {
    for (let i = 0; i < values.length; i++) {
      if (values[i] !== 0 && values[i] !== 1) {
        throw new ValueTypeError(`${where}: a bool value holds only 0 and 1, found ${values[i]}`);
      }
    }
  }

  #fromLiteral(values: ReadonlyArray<number | boolean>, shape: number[], where: string, allowDowncast: boolean): NdArray {
    const out = empty(this.dtype, shape);
    const data = out.data;
    if (isFloatDtype(this.dtype)) {
      for (let i = 0; i < values.length; i++) data[i] = +values[i]!;
      return out;
    }
    const [lo, hi] = intRange(this.dtype);
    for (let i = 0; i < values.length; i++) {
      const raw = values[i]!;
      const v = typeof raw === 'boolean' ? +raw : raw;
      if (this.dtype === 'bool') {
        if (v !== 0 && v !== 1 && !allowDowncast) {
          throw new ValueTypeError(`${where}: a bool value holds only 0, 1, true and false, found ${v}`);
        }
        data[i] = v ? 1 : 0;
        continue;
      }
      if (!Number.isInteger(v) || v < lo || v > hi) {
        if (!allowDowncast || !Number.isFinite(v)) {
          throw new ValueTypeError(
            `${where}: ${v} is not a value of ${this.dtype} (integers from ${lo} to ${hi})` +
              (Number.isFinite(v) ? '; pass allowInputDowncast: true to truncate it' : ''),
          );
        }
        data[i] = Math.trunc(v);
        continue;
      }
      data[i] = v;
    }
    return out;
  }

  valuesEq(a: NdArray, b: NdArray): boolean {
    return this.#compare(a, b, 0, 0);
  }

  /** Equal within the dtype's tolerances (float32: 1e-5 abs and rel; float64: 1e-8 abs, 1e-5 rel). NaNs must match. */
  override valuesEqApprox(a: NdArray, b: NdArray, tolerance?: { atol?: number; rtol?: number }): boolean {
    const t = TOLERANCES[this.dtype] ?? { atol: 0, rtol: 0 };
    return this.#compare(a, b, tolerance?.atol ?? t.atol, tolerance?.rtol ?? t.rtol);
  }

  #compare(a: NdArray, b: NdArray, atol: number, rtol: number): boolean {
    if (a.shape.length !== b.shape.length || a.shape.some((d, i) => d !== b.shape[i])) return false;
    const x = flatValues(a);
    const y = flatValues(b);
    for (let i = 0; i < x.length; i++) {
      const p = x[i]!;
      const q = y[i]!;
      if (p === q) continue;
      if (Number.isNaN(p) && Number.isNaN(q)) continue;
      if (!Number.isFinite(q) || !(Math.abs(p - q) <= atol + rtol * Math.abs(q))) return false;
    }
    return true;
  }

  copyValue(v: NdArray): NdArray {
    return copyArray(v);
  }

  /** Copies when `filtered` uses the memory of `source` (an ndarray or typed array of the caller's). */
  override ownValue(filtered: NdArray, source: unknown): NdArray {
    const buffer = isNdArray(source) ? ((composedView(source) ?? source).data as { buffer?: unknown }).buffer : ArrayBuffer.isView(source) ? source.buffer : undefined;
    return filtered === source || (buffer !== undefined && filtered.data.buffer === buffer) ? copyArray(filtered) : filtered;
  }

  valueSignature(v: NdArray): string {
    const flat = flatValues(v);
    const head = `${shapeText(v.shape)}`;
    if (flat.length <= 16) return `${head}${Array.from(flat, (x) => (Object.is(x, -0) ? '-0' : String(x))).join(',')}`;
    const bytes = new Uint8Array(flat.buffer, flat.byteOffset, flat.byteLength);
    return `${head}#${flat.length}:${fnv1a(bytes)}`;
  }

  override mayShareMemory(a: NdArray, b: NdArray): boolean {
    return a.data.buffer === b.data.buffer;
  }

  /** A tensor type of the same dtype and rank whose static lengths include this one's. */
  override isSupertypeOf(t: Type): boolean {
    if (!(t instanceof TensorType) || t.dtype !== this.dtype || t.ndim !== this.ndim) return false;
    return this.shape.every((d, i) => d === null || d === t.shape[i]);
  }

  makeVariable(name?: string): TensorVariable {
    return new TensorVariable(this, name);
  }

  makeConstant(value: NdArray, name?: string): TensorConstant {
    return new TensorConstant(this, value, name);
  }
}

/** Largest integer tensor (elements) that plans compute on the calling thread, as a host value. */
export const HOST_VALUE_ELEMENTS = 64;

/**
 * Is `v` a small integer or bool tensor of static shape (a length, an index, a shape)? Plans
 * compute such values on the calling thread, and they live in every region from its creation.
 */
export function isHostValueType(v: Variable): boolean {
  const t = v.type;
  return t instanceof TensorType && (isIntDtype(t.dtype) || t.dtype === 'bool') && isSmallTensor(v);
}

/** Is `v` a tensor of static shape with at most HOST_VALUE_ELEMENTS elements, of any dtype? */
export function isSmallTensor(v: Variable): boolean {
  const t = v.type;
  if (!(t instanceof TensorType)) return false;
  let n = 1;
  for (const d of t.shape) {
    if (d === null) return false;
    n *= d;
  }
  return n <= HOST_VALUE_ELEMENTS;
}

/**
 * Refuses an ndarray whose shape, strides and offset reach outside its data (the elements a call
 * would read are not there): a hand-made view, or an output given back with weft.release, whose
 * data is then empty.
 */
function checkReach(value: NdArray, where: string): void {
  if (sizeOf(value.shape) === 0) return;
  // A loop, not forEach: this runs for every ndarray argument of every call.
  let low = value.offset;
  let high = value.offset;
  for (let a = 0; a < value.shape.length; a++) {
    const step = (value.shape[a]! - 1) * value.stride[a]!;
    if (step < 0) low += step;
    else high += step;
  }
  const length = value.data.length;
  if (low < 0 || high >= length) {
    const emptied = length === 0 ? ' (an array given back with weft.release is empty)' : '';
    throw new ValueTypeError(`${where}: its shape [${value.shape.join(', ')}] reaches element ${low < 0 ? low : high} of data holding ${length}${emptied}`);
  }
}
