// SparseTensorType: 2-d sparse matrices of one format (csr or csc) and dtype, with the whole Type
// contract (filter into canonical form, equality as matrices, copies, signatures, aliasing,
// documents) and gradients made of sparse ops. In shared memory a value is four tensors
// (partsLayout): data, indices, indptr and the shape [rows, columns] as int32.
import { Type, type FilterOptions, type GradientSupport, type PartsLayout } from '../graph/type.js';
import { Constant, Variable } from '../graph/variable.js';
import { DeserializeError, type Json, type JsonReader } from '../graph/json-reader.js';
import { propKinds } from '../graph/prop-kinds.js';
import { registerTypeCodec } from '../graph/type-codecs.js';
import { encodeNumber } from '../tensor/serialize/value-codec.js';
import { ValueTypeError } from '../tensor/core/ndarray.js';
import type { Slice } from '../tensor/core/slice.js';
import type { TensorVariable } from '../tensor/core/variable.js';
import { merge } from './compute.js';
import { boundOp } from './bound-ops.js';
import {
  DATA_CLASS,
  SPARSE_DTYPES,
  SPARSE_FORMATS,
  isSparseValue,
  makeSparse,
  trustedSparse,
  type SparseData,
  type SparseDtype,
  type SparseFormat,
  type SparseValue,
} from './value.js';

const TOLERANCES: Readonly<Record<SparseDtype, { readonly atol: number; readonly rtol: number }>> = {
  float32: { atol: 1e-5, rtol: 1e-5 },
  float64: { atol: 1e-8, rtol: 1e-5 },
};

function fnv1a(h: number, bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

const bytesOf = (a: ArrayBufferView): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const arraysOf = (v: SparseValue): ArrayBufferView[] => [v.data, v.indices, v.indptr];

/** The buffers a value holds: a sparse value's three arrays, an ndarray's data, or a typed array. */
function buffersOf(v: unknown): ArrayBufferLike[] {
  if (ArrayBuffer.isView(v)) return [v.buffer];
  if (typeof v !== 'object' || v === null) return [];
  const r = v as Record<string, unknown>;
  return [r.data, r.indices, r.indptr].filter((x): x is ArrayBufferView => ArrayBuffer.isView(x)).map((x) => x.buffer);
}

export class SparseTensorType extends Type<SparseValue> {
  static override readonly props = ['format', 'dtype'] as const;
  static override readonly propKinds = { format: propKinds.oneOf(SPARSE_FORMATS), dtype: propKinds.oneOf(SPARSE_DTYPES) };

  constructor(
    readonly format: SparseFormat,
    readonly dtype: SparseDtype = 'float64',
  ) {
    super();
    if (!SPARSE_FORMATS.includes(format)) throw new TypeError(`SparseTensorType: format must be "csr" or "csc", got ${JSON.stringify(format)}`);
    if (!SPARSE_DTYPES.includes(dtype)) throw new TypeError(`SparseTensorType: dtype must be "float32" or "float64", got ${JSON.stringify(dtype)}`);
    this.partsLayout = {
      parts: [
        { dtype: this.dtype, shape: [null] },
        { dtype: 'int32', shape: [null] },
        { dtype: 'int32', shape: [null] },
        { dtype: 'int32', shape: [2] },
      ],
      toParts: (v) => [
        { data: v.data, shape: [v.data.length] },
        { data: v.indices, shape: [v.indices.length] },
        { data: v.indptr, shape: [v.indptr.length] },
        { data: Int32Array.of(v.shape[0], v.shape[1]), shape: [2] },
      ],
      fromParts: ([data, indices, indptr, shape]) =>
        trustedSparse(this.format, [shape!.data[0]!, shape!.data[1]!], data!.data as SparseData, indices!.data as Int32Array, indptr!.data as Int32Array),
    };
  }

  get key(): string {
    return `SparseTensorType(${this.format}, ${this.dtype})`;
  }

  get ndim(): 2 {
    return 2;
  }

  override readonly gradient: GradientSupport = {
    ones: (like) => boundOp('onesLike')(like),
    zeros: (like) => boundOp('zerosLike')(like),
    sum: (terms) => terms.reduce((a, b) => boundOp('add')(a, b)),
  };

  /**
   * data, indices, indptr and shape, as tensors: planned graphs hold a sparse value so, and the
   * sparse ops with worker kernels are rewritten into tensor ops over these parts (lowering.ts).
   */
  override readonly partsLayout: PartsLayout<SparseValue>;

  override filter(value: unknown, options: FilterOptions = {}): SparseValue {
    return makeSparse(this.format, value, {
      what: options.what ?? `a value of ${this}`,
      dtype: this.dtype,
      strict: options.strict,
      allowDowncast: options.allowDowncast,
    });
  }

  /** Equal as matrices (an explicitly stored 0 equals an absent entry); NaNs match NaNs. */
  override valuesEq(a: SparseValue, b: SparseValue): boolean {
    return this.#compare(a, b, 0, 0);
  }

  /** Equal within the dtype's tolerances (float32: 1e-5 abs and rel; float64: 1e-8 abs, 1e-5 rel). */
  override valuesEqApprox(a: SparseValue, b: SparseValue, tolerance?: { atol?: number; rtol?: number }): boolean {
    const t = TOLERANCES[this.dtype];
    return this.#compare(a, b, tolerance?.atol ?? t.atol, tolerance?.rtol ?? t.rtol);
  }

  #compare(a: SparseValue, b: SparseValue, atol: number, rtol: number): boolean {
    if (a.shape[0] !== b.shape[0] || a.shape[1] !== b.shape[1]) return false;
    let equal = true;
    merge(a, b, 'union', (p, q) => {
      const same = p === q || (Number.isNaN(p) && Number.isNaN(q)) || (Number.isFinite(q) && Math.abs(p - q) <= atol + rtol * Math.abs(q));
      if (!same) equal = false;
      return 0;
    }, this.dtype);
    return equal;
  }

  override copyValue(v: SparseValue): SparseValue {
    return { format: v.format, shape: v.shape, data: v.data.slice(), indices: v.indices.slice(), indptr: v.indptr.slice() };
  }

  /** Copies when `filtered` uses any array of `source` (the caller's), which the caller may change. */
  override ownValue(filtered: SparseValue, source: unknown): SparseValue {
    const theirs = buffersOf(source);
    return buffersOf(filtered).some((x) => theirs.includes(x)) ? this.copyValue(filtered) : filtered;
  }

  override valueSignature(v: SparseValue): string {
    const h = arraysOf(v).reduce((acc, a) => fnv1a(acc, bytesOf(a)), 0x811c9dc5);
    return `${v.format}[${v.shape.join(',')}]#${v.data.length}:${h.toString(16)}`;
  }

  /** Either may also be another type's value (DebugMode asks about a node's dense inputs too). */
  override mayShareMemory(a: SparseValue, b: SparseValue): boolean {
    const mine = buffersOf(a);
    return buffersOf(b).some((x) => mine.includes(x));
  }

  override makeVariable(name?: string): SparseVariable {
    return new SparseVariable(this, name);
  }

  override makeConstant(value: SparseValue, name?: string): SparseConstant {
    return new SparseConstant(this, this.filter(value, { what: `the constant ${name ?? ''}`.trimEnd() }), name);
  }

  /** `{ format, shape, data, indices, indptr }`, data spelled as tensor documents spell numbers. */
  override encodeValue(v: SparseValue): Json {
    return { format: v.format, shape: [...v.shape], data: Array.from(v.data, encodeNumber), indices: Array.from(v.indices), indptr: Array.from(v.indptr) };
  }

  override decodeValue(r: JsonReader): SparseValue {
    r.object(['format', 'shape', 'data', 'indices', 'indptr']);
    r.field('format').oneOf([this.format]);
    const shape = r.field('shape').ints(0, 2 ** 31 - 1, 2);
    const data = new DATA_CLASS[this.dtype](
      r.field('data').array().map((x) => {
        const special = typeof x.value === 'string' ? SPECIAL.get(x.value) : undefined;
        if (special !== undefined) return special;
        if (typeof x.value === 'number') return x.value;
        return x.fail('a number or one of "NaN", "Infinity", "-Infinity", "-0"');
      }),
    );
    const indices = Int32Array.from(r.field('indices').ints());
    const indptr = Int32Array.from(r.field('indptr').ints());
    try {
      return makeSparse(this.format, { shape, data, indices, indptr }, { what: r.path, dtype: this.dtype, strict: true });
    } catch (e) {
      const message = (e as Error).message;
      throw new DeserializeError(r.path, message.startsWith(`${r.path}: `) ? message.slice(r.path.length + 2) : message);
    }
  }
}

const SPECIAL = new Map<string, number>([
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
  ['-0', -0],
]);

registerTypeCodec(SparseTensorType);

/** A variable holding a sparse matrix. */
export class SparseVariable extends Variable<SparseTensorType> {
  get format(): SparseFormat {
    return this.type.format;
  }

  get dtype(): SparseDtype {
    return this.type.dtype;
  }

  override eval(givens?: Parameters<Variable['eval']>[0]): Promise<SparseValue> {
    return super.eval(givens) as Promise<SparseValue>;
  }

  /** A block by weft.slice bounds, step 1: `s.get(weft.slice(1, 3))` is rows 1 and 2 (weft.sparse.get). */
  get(rows: Slice, cols?: Slice): SparseVariable {
    return boundOp('get')(this, rows, cols) as SparseVariable;
  }

  /** The transpose, in the other format (weft.sparse.transpose). */
  get T(): SparseVariable {
    return boundOp('transpose')(this) as SparseVariable;
  }

  /** The dense matrix (weft.sparse.dense, structured gradient). */
  toDense(): TensorVariable {
    return boundOp('dense')(this);
  }
}

export class SparseConstant extends Constant<SparseTensorType, SparseValue> {
  get format(): SparseFormat {
    return this.type.format;
  }

  get dtype(): SparseDtype {
    return this.type.dtype;
  }
}

/** Either kind of sparse variable (a constant is a Variable, not a SparseVariable). */
export type SparseLike = SparseVariable | SparseConstant;

export function isSparseVariable(v: unknown): v is SparseLike {
  return v instanceof Variable && v.type instanceof SparseTensorType;
}

/** `x` as a sparse variable (a sparse value becomes a constant); `where` names the op and argument. */
export function asSparseVariable(x: unknown, where: string): SparseLike {
  if (isSparseVariable(x)) return x;
  if (isSparseValue(x)) return new SparseTensorType(x.format, x.data instanceof Float32Array ? 'float32' : 'float64').makeConstant(x);
  const what = x instanceof Variable ? `${x} (${x.type})` : x === null ? 'null' : typeof x;
  throw new ValueTypeError(`${where}: expected a sparse matrix (a csr or csc variable or value), got ${what}`);
}

/** `weft.sparse.csrMatrix(name?, dtype?)`: a csr matrix variable. */
export function csrMatrix(name?: string, dtype: SparseDtype = 'float64'): SparseVariable {
  return new SparseTensorType('csr', dtype).makeVariable(name);
}

/** `weft.sparse.cscMatrix(name?, dtype?)`: a csc matrix variable. */
export function cscMatrix(name?: string, dtype: SparseDtype = 'float64'): SparseVariable {
  return new SparseTensorType('csc', dtype).makeVariable(name);
}
