// Sparse matrix values: scipy's compressed layouts (csr: rows compressed, csc: columns) as plain
// objects of typed arrays, and the one checked way to make them (`makeSparse`), which refuses
// malformed layouts and brings valid ones into scipy's canonical form (sorted, no duplicates).
import { firstIrregularWasm } from '../kernels/sparse-wasm.js';
import { ValueTypeError } from '../tensor/core/ndarray.js';

export type SparseFormat = 'csr' | 'csc';
export const SPARSE_FORMATS: readonly SparseFormat[] = ['csr', 'csc'];
export type SparseDtype = 'float32' | 'float64';
export const SPARSE_DTYPES: readonly SparseDtype[] = ['float32', 'float64'];
export type SparseData = Float32Array | Float64Array;

/**
 * A 2-d sparse matrix in scipy's layout. csr: row r's entries are at positions indptr[r] to
 * indptr[r + 1] - 1 of `data`, their columns in `indices`; csc the same with rows and columns
 * swapped. Values that weft makes are canonical: indices sorted within a row (column), no
 * duplicates. Explicit zeros may be stored (structured ops keep them).
 */
export interface SparseValue {
  readonly format: SparseFormat;
  readonly shape: readonly [number, number];
  readonly data: SparseData;
  readonly indices: Int32Array;
  readonly indptr: Int32Array;
}

/** What `weft.sparse.csr(...)` / `csc(...)` take: any numeric arrays, checked and converted. */
export interface SparseParts {
  readonly data: ArrayLike<number>;
  readonly indices: ArrayLike<number>;
  readonly indptr: ArrayLike<number>;
  readonly shape: readonly [number, number] | readonly number[];
}

export const DATA_CLASS = { float32: Float32Array, float64: Float64Array } as const;

export function dtypeOfData(data: SparseData): SparseDtype {
  return data instanceof Float32Array ? 'float32' : 'float64';
}

/** The compressed axis's length (rows of csr, columns of csc) and the other axis's. */
export function outerInner(format: SparseFormat, shape: readonly [number, number]): [number, number] {
  return format === 'csr' ? [shape[0], shape[1]] : [shape[1], shape[0]];
}

/** Words for errors: what the compressed axis and the index axis are called in this format. */
function axisWords(format: SparseFormat): { outer: string; inner: string } {
  return format === 'csr' ? { outer: 'rows', inner: 'columns' } : { outer: 'columns', inner: 'rows' };
}

export function isSparseValue(x: unknown): x is SparseValue {
  if (typeof x !== 'object' || x === null) return false;
  const v = x as Partial<SparseValue>;
  return (
    (v.format === 'csr' || v.format === 'csc') &&
    Array.isArray(v.shape) &&
    (v.data instanceof Float32Array || v.data instanceof Float64Array) &&
    v.indices instanceof Int32Array &&
    v.indptr instanceof Int32Array
  );
}

export interface MakeSparseOptions {
  /** Who is checking, for errors ("input 0 (s) of the function"). */
  readonly what?: string;
  /** The dtype of the data (default: float32 for Float32Array data, float64 otherwise). */
  readonly dtype?: SparseDtype;
  /** Accept float64 data for a float32 matrix (rounded). */
  readonly allowDowncast?: boolean;
  /** Accept only Int32Array indices and indptr and data already of the dtype (no conversion). */
  readonly strict?: boolean;
}

function isArrayLike(x: unknown): x is ArrayLike<number> {
  return Array.isArray(x) || (ArrayBuffer.isView(x) && !(x instanceof DataView));
}

function describe(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'an array';
  if (ArrayBuffer.isView(x)) return `a ${x.constructor.name}`;
  return typeof x;
}

/** `raw` as an Int32Array of integers, each checked (a copy unless it already is one). */
function int32s(raw: unknown, field: string, where: string, strict: boolean): Int32Array {
  if (raw instanceof Int32Array) return raw;
  if (strict) throw new ValueTypeError(`${where}: ${field} must be an Int32Array (strict), got ${describe(raw)}`);
  if (!isArrayLike(raw)) throw new ValueTypeError(`${where}: ${field} must be an array of integers, got ${describe(raw)}`);
  const out = new Int32Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const x = raw[i];
    if (typeof x !== 'number' || !Number.isInteger(x) || x < -(2 ** 31) || x >= 2 ** 31) {
      throw new ValueTypeError(`${where}: ${field}[${i}] must be an int32 integer, got ${String(x)}`);
    }
    out[i] = x;
  }
  return out;
}

function dataOf(raw: unknown, dtype: SparseDtype, where: string, options: MakeSparseOptions): SparseData {
  const cls = DATA_CLASS[dtype];
  if (raw instanceof cls) return raw;
  if (options.strict) throw new ValueTypeError(`${where}: data must be a ${cls.name} for a ${dtype} matrix (strict), got ${describe(raw)}`);
  if (!isArrayLike(raw)) throw new ValueTypeError(`${where}: data must be an array of numbers, got ${describe(raw)}`);
  if (dtype === 'float32' && raw instanceof Float64Array && !options.allowDowncast) {
    throw new ValueTypeError(`${where}: float64 data cannot be converted to float32 without loss; convert it first, or pass allowInputDowncast: true`);
  }
  const out = new cls(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const x = raw[i];
    if (typeof x !== 'number') throw new ValueTypeError(`${where}: data[${i}] must be a number, got ${typeof x}`);
    out[i] = x;
  }
  return out;
}

function shapeOf(raw: unknown, where: string): [number, number] {
  const ok = (d: unknown): d is number => typeof d === 'number' && Number.isInteger(d) && d >= 0 && d < 2 ** 31;
  if (!Array.isArray(raw) || raw.length !== 2 || !ok(raw[0]) || !ok(raw[1])) {
    const text = Array.isArray(raw) ? `[${raw.map(String).join(', ')}]` : describe(raw);
    throw new ValueTypeError(`${where}: shape must be two non-negative integers [rows, columns], got ${text}`);
  }
  return [raw[0], raw[1]];
}

/**
 * A checked sparse matrix of `format` from its parts: indptr has one entry per row (column) and
 * one more, starts at 0, never decreases and ends at nnz; indices are in range; data and indices
 * have nnz entries. Unsorted indices are sorted and duplicates summed (scipy's canonical form).
 * Returns `parts` itself when it is already such a value with arrays of the right classes.
 */
export function makeSparse(format: SparseFormat, parts: unknown, options: MakeSparseOptions = {}): SparseValue {
  const where = options.what ?? `a ${format} matrix`;
  if (typeof parts !== 'object' || parts === null) {
    throw new ValueTypeError(`${where}: expected a sparse matrix { data, indices, indptr, shape }, got ${describe(parts)}`);
  }
  const p = parts as Partial<SparseParts> & { format?: unknown };
  if (p.format !== undefined && p.format !== format) {
    throw new ValueTypeError(`${where}: expected a ${format} matrix, got format ${JSON.stringify(p.format)}`);
  }
  const shape = shapeOf(p.shape, where);
  const dtype = options.dtype ?? (p.data instanceof Float32Array ? 'float32' : 'float64');
  const data = dataOf(p.data, dtype, where, options);
  const indices = int32s(p.indices, 'indices', where, options.strict ?? false);
  const indptr = int32s(p.indptr, 'indptr', where, options.strict ?? false);
  const [outer, inner] = outerInner(format, shape);
  const words = axisWords(format);
  const { length: nnz } = data;
  if (indices.length !== nnz) {
    const index = words.inner === 'columns' ? 'column' : 'row';
    throw new ValueTypeError(`${where}: data has ${nnz} entries but indices has ${indices.length}; they must have the same length (one ${index} index per stored value)`);
  }
  if (indptr.length !== outer + 1) {
    throw new ValueTypeError(`${where}: indptr must have ${words.outer} + 1 = ${outer + 1} entries for a ${format} matrix of shape [${shape.join(', ')}], got ${indptr.length}`);
  }
  if (indptr[0] !== 0) throw new ValueTypeError(`${where}: indptr[0] must be 0, got ${indptr[0]}`);
  let sorted = true;
  // Parts in the pool's memory (a pool.from value, checked at every call) are first read by a
  // WebAssembly SIMD loop, which finds the first row that needs the closer look below.
  for (let r = firstIrregularWasm(indices, indptr, inner) ?? 0; r < outer; r++) {
    const start = indptr[r]!;
    const end = indptr[r + 1]!;
    if (end < start) throw new ValueTypeError(`${where}: indptr must not decrease, but indptr[${r + 1}] = ${end} < indptr[${r}] = ${start}`);
    if (end > nnz) throw new ValueTypeError(`${where}: indptr[${r + 1}] = ${end} exceeds nnz = ${nnz} (the length of data)`);
    // One comparison an entry: a row in increasing order from 0 up is in range when its last
    // index is; any other row (unsorted, or with an index out of range) is checked entry by entry.
    let last = -1;
    let increasing = true;
    for (let k = start; k < end; k++) {
      const j = indices[k]!;
      if (j <= last) increasing = false;
      last = j;
    }
    if (increasing && last < inner) continue;
    if (!increasing) sorted = false;
    for (let k = start; k < end; k++) {
      const j = indices[k]!;
      if (j < 0 || j >= inner) {
        const range = inner === 0 ? 'there are none' : `0 to ${inner - 1}`;
        throw new ValueTypeError(`${where}: indices[${k}] = ${j} is out of range for ${inner} ${words.inner} (${range})`);
      }
    }
  }
  if (indptr[outer] !== nnz) throw new ValueTypeError(`${where}: indptr[${outer}] (its last entry) must equal nnz = ${nnz} (the length of data), got ${indptr[outer]}`);
  if (!sorted) return canonical(format, shape, data, indices, indptr);
  // A value weft made (its shape frozen) passes as it is; a caller's object gets a frozen shape of its own.
  if (isSparseValue(parts) && Object.isFrozen(parts.shape) && parts.format === format && p.data === data && p.indices === indices && p.indptr === indptr) return parts;
  return freezeValue({ format, shape, data, indices, indptr });
}

/** The value with its shape frozen: values are never written after they are made. */
export function freezeValue(v: SparseValue): SparseValue {
  return { ...v, shape: Object.freeze([v.shape[0], v.shape[1]]) as unknown as readonly [number, number] };
}

/** Sorts each row's (column's) indices and sums duplicates, into new arrays. */
function canonical(format: SparseFormat, shape: [number, number], data: SparseData, indices: Int32Array, indptr: Int32Array): SparseValue {
  const [outer] = outerInner(format, shape);
  const outData = new (data.constructor as typeof Float64Array)(data.length) as SparseData;
  const outIndices = new Int32Array(indices.length);
  const outIndptr = new Int32Array(outer + 1);
  let n = 0;
  for (let r = 0; r < outer; r++) {
    const start = indptr[r]!;
    const order = Array.from({ length: indptr[r + 1]! - start }, (_, i) => start + i);
    // Stable: duplicates are summed in the order they were given.
    order.sort((a, b) => indices[a]! - indices[b]! || a - b);
    for (const k of order) {
      if (n > outIndptr[r]! && outIndices[n - 1] === indices[k]) outData[n - 1] += data[k]!;
      else {
        outIndices[n] = indices[k]!;
        outData[n++] = data[k]!;
      }
    }
    outIndptr[r + 1] = n;
  }
  return freezeValue({ format, shape, data: outData.slice(0, n), indices: outIndices.slice(0, n), indptr: outIndptr });
}

/** A value that weft's own code computed (already canonical): no checks. */
export function trustedSparse(format: SparseFormat, shape: readonly [number, number], data: SparseData, indices: Int32Array, indptr: Int32Array): SparseValue {
  return freezeValue({ format, shape: [shape[0], shape[1]], data, indices, indptr });
}

/** `weft.sparse.csr({ data, indices, indptr, shape })`: a checked, canonical csr matrix. */
export function csr(parts: SparseParts, options: { readonly dtype?: SparseDtype } = {}): SparseValue {
  return makeSparse('csr', parts, { what: 'sparse.csr', dtype: options.dtype });
}

/** `weft.sparse.csc({ data, indices, indptr, shape })`: a checked, canonical csc matrix. */
export function csc(parts: SparseParts, options: { readonly dtype?: SparseDtype } = {}): SparseValue {
  return makeSparse('csc', parts, { what: 'sparse.csc', dtype: options.dtype });
}
