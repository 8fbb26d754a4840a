// The numbers of the sparse ops, as plain functions over sparse values and ndarrays: format
// changes, dense conversion, element-wise merges, products and sums. Inputs are canonical (the
// type's filter sees to it) and so is every sparse result. Products and the dense conversion run
// the kernels their lowered ops run (kernels/sparse.ts): the same bits either way.
import '../kernels/sparse.js';
import { getKernel } from '../kernels/registry.js';
import type { TensorView } from '../kernels/view.js';
import { contiguous, copyArray, empty, flatValues, makeNdArray, type NdArray } from '../tensor/core/ndarray.js';
import { DATA_CLASS, dtypeOfData, outerInner, trustedSparse, type SparseData, type SparseDtype, type SparseFormat, type SparseValue } from './value.js';

/** Calls `f(row, column, value, k)` for each stored entry, in storage order. */
export function forEachEntry(v: SparseValue, f: (row: number, col: number, value: number, k: number) => void): void {
  const [outer] = outerInner(v.format, v.shape);
  const csr = v.format === 'csr';
  for (let o = 0; o < outer; o++) {
    for (let k = v.indptr[o]!; k < v.indptr[o + 1]!; k++) {
      const i = v.indices[k]!;
      if (csr) f(o, i, v.data[k]!, k);
      else f(i, o, v.data[k]!, k);
    }
  }
}

/** A sparse value's parts as kernel views: data, indices, indptr, shape. */
function partViews(v: SparseValue): TensorView[] {
  const vector = (data: SparseData | Int32Array): TensorView => ({ data, offset: 0, shape: [data.length], stride: [1] });
  return [vector(v.data), vector(v.indices), vector(v.indptr), vector(Int32Array.of(v.shape[0], v.shape[1]))];
}

/** The same matrix in the other format (a counting sort of the entries by their other index: the lowered op's kernel). */
export function switchFormat(v: SparseValue): SparseValue {
  const [, inner] = outerInner(v.format, v.shape);
  const nnz = v.data.length;
  const data = new (v.data.constructor as typeof Float64Array)(nnz) as SparseData;
  const [indices, indptr] = [new Int32Array(nnz), new Int32Array(inner + 1)];
  const view = (a: SparseData | Int32Array): TensorView => ({ data: a, offset: 0, shape: [a.length], stride: [1] });
  getKernel('sparse.switchFormat')(partViews(v), [view(data), view(indices), view(indptr)], {});
  return trustedSparse(v.format === 'csr' ? 'csc' : 'csr', v.shape, data, indices, indptr);
}

export function asFormat(v: SparseValue, format: SparseFormat): SparseValue {
  return v.format === format ? v : switchFormat(v);
}

/** The transpose: csr of shape [m, n] is the csc of its transpose, of shape [n, m], with the same arrays. */
export function transposeValue(v: SparseValue): SparseValue {
  return trustedSparse(v.format === 'csr' ? 'csc' : 'csr', [v.shape[1], v.shape[0]], v.data, v.indices, v.indptr);
}

/** v's pattern with other data; the index arrays are copied, since a node's outputs must not alias its inputs. */
export function withData(v: SparseValue, data: SparseData): SparseValue {
  return trustedSparse(v.format, v.shape, data, v.indices.slice(), v.indptr.slice());
}

export function toDense(v: SparseValue, dtype: SparseDtype = dtypeOfData(v.data)): NdArray {
  const out = empty(dtype, [...v.shape]);
  getKernel('sparse.toDense')(partViews(v), [out], { outer: v.format === 'csr' ? 'rows' : 'columns' });
  return out;
}

/** The entries of a dense matrix that are not zero (NaN included, as scipy keeps them), in `format`. */
export function fromDense(x: NdArray, format: SparseFormat, dtype: SparseDtype): SparseValue {
  const [m, n] = [x.shape[0]!, x.shape[1]!];
  const flat = flatValues(x);
  const [outer, inner] = format === 'csr' ? [m, n] : [n, m];
  const at = (o: number, i: number): number => (format === 'csr' ? flat[o * n + i]! : flat[i * n + o]!);
  let nnz = 0;
  for (let k = 0; k < flat.length; k++) if (flat[k] !== 0) nnz++;
  const data = new DATA_CLASS[dtype](nnz);
  const indices = new Int32Array(nnz);
  const indptr = new Int32Array(outer + 1);
  let k = 0;
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const value = at(o, i);
      if (value !== 0) {
        data[k] = value;
        indices[k++] = i;
      }
    }
    indptr[o + 1] = k;
  }
  return trustedSparse(format, [m, n], data, indices, indptr);
}

/**
 * Two matrices of one shape combined entry by entry, in a's format: `union` keeps every position
 * either stores (the other reading 0), `intersection` only positions both store.
 */
export function merge(a: SparseValue, bAny: SparseValue, kind: 'union' | 'intersection', f: (x: number, y: number) => number, dtype: SparseDtype): SparseValue {
  const b = asFormat(bAny, a.format);
  const [outer] = outerInner(a.format, a.shape);
  const cap = kind === 'union' ? a.data.length + b.data.length : Math.min(a.data.length, b.data.length);
  const data = new DATA_CLASS[dtype](cap);
  const indices = new Int32Array(cap);
  const indptr = new Int32Array(outer + 1);
  let n = 0;
  const put = (i: number, value: number): void => {
    indices[n] = i;
    data[n++] = value;
  };
  for (let o = 0; o < outer; o++) {
    let p = a.indptr[o]!;
    let q = b.indptr[o]!;
    const pe = a.indptr[o + 1]!;
    const qe = b.indptr[o + 1]!;
    while (p < pe || q < qe) {
      const i = p < pe ? a.indices[p]! : Infinity;
      const j = q < qe ? b.indices[q]! : Infinity;
      if (i === j) put(i, f(a.data[p++]!, b.data[q++]!));
      else if (i < j) {
        if (kind === 'union') put(i, f(a.data[p]!, 0));
        p++;
      } else {
        if (kind === 'union') put(j, f(0, b.data[q]!));
        q++;
      }
    }
    indptr[o + 1] = n;
  }
  return trustedSparse(a.format, a.shape, data.slice(0, n), indices.slice(0, n), indptr);
}

/** s (m x k, sparse) times d (k x n, dense): a dense m x n matrix (the lowered op's kernels, so the same bits). */
export function sparseTimesDense(s: SparseValue, d: NdArray, dtype: SparseDtype): NdArray {
  const out = empty(dtype, [s.shape[0], d.shape[1]!]);
  getKernel(s.format === 'csr' ? 'sparse.timesDense' : 'sparse.cscTimesDense')([...partViews(s), contiguous(d)], [out], {});
  return out;
}

/** The transpose of a matrix, as a view. */
const transposed = (a: NdArray): NdArray => makeNdArray(a.data, [a.shape[1]!, a.shape[0]!], [a.stride[1]!, a.stride[0]!], a.offset);

/** d (m x k, dense) times s (k x n, sparse): (s^T d^T)^T, a dense m x n matrix, as the lowered graph computes it. */
export function denseTimesSparse(d: NdArray, s: SparseValue, dtype: SparseDtype): NdArray {
  return copyArray(transposed(sparseTimesDense(transposeValue(s), transposed(d), dtype)));
}

/**
 * a (m x k) times b (k x n), both sparse: Gustavson's row-by-row product into csr, then a's
 * format. A position any product reaches is stored, even when the sum is 0 (as scipy does).
 */
export function sparseTimesSparse(aAny: SparseValue, bAny: SparseValue, dtype: SparseDtype): SparseValue {
  const a = asFormat(aAny, 'csr');
  const b = asFormat(bAny, 'csr');
  const [m, n] = [a.shape[0], b.shape[1]];
  const acc = new Float64Array(n);
  const seen = new Int32Array(n).fill(-1);
  const indptr = new Int32Array(m + 1);
  const cols: number[] = [];
  const vals: number[] = [];
  for (let r = 0; r < m; r++) {
    const row: number[] = [];
    for (let p = a.indptr[r]!; p < a.indptr[r + 1]!; p++) {
      const c = a.indices[p]!;
      const x = a.data[p]!;
      for (let q = b.indptr[c]!; q < b.indptr[c + 1]!; q++) {
        const j = b.indices[q]!;
        if (seen[j] !== r) {
          seen[j] = r;
          acc[j] = 0;
          row.push(j);
        }
        acc[j] += x * b.data[q]!;
      }
    }
    row.sort((x, y) => x - y);
    for (const j of row) {
      cols.push(j);
      vals.push(acc[j]!);
    }
    indptr[r + 1] = cols.length;
  }
  const out = trustedSparse('csr', [m, n], DATA_CLASS[dtype].from(vals), Int32Array.from(cols), indptr);
  return asFormat(out, aAny.format);
}

/** The value stored at (outer o, inner i) of `v` (row and column for csr), 0 when none is: a binary search. */
export function entryAt(v: SparseValue, o: number, i: number): number {
  let lo = v.indptr[o]!;
  let hi = v.indptr[o + 1]!;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (v.indices[mid]! < i) lo = mid + 1;
    else hi = mid;
  }
  return lo < v.indptr[o + 1]! && v.indices[lo] === i ? v.data[lo]! : 0;
}

/**
 * At p's stored positions (r, c): the sum over j of x[r, j] * y[c, j], times p[r, c] when
 * `scaled` (SamplingDot) or not (StructuredDot's gradient: x = gz, y = d). The lowered op's kernel.
 */
export function productsAt(p: SparseValue, x: NdArray, y: NdArray, scaled: boolean, dtype: SparseDtype): SparseData {
  const out = empty(dtype, [p.data.length]);
  const [data, indices, indptr, shape] = partViews(p);
  getKernel('sparse.productsAt')([indices!, indptr!, shape!, contiguous(x), contiguous(y), data!], [out], { outer: p.format === 'csr' ? 'rows' : 'columns', scaled });
  return out.data as SparseData;
}

/** Sums of the stored values: all of them (a 0-d array), or along axis 0 (per column) or 1 (per row). */
export function sumValue(v: SparseValue, axis: 0 | 1 | undefined, dtype: SparseDtype): NdArray {
  if (axis === undefined) {
    const out = empty(dtype, []);
    let acc = 0;
    for (let k = 0; k < v.data.length; k++) acc += v.data[k]!;
    out.data[0] = acc;
    return out;
  }
  const out = empty(dtype, [v.shape[axis === 0 ? 1 : 0]]);
  const acc = new Float64Array(out.data.length);
  forEachEntry(v, (r, c, x) => {
    acc[axis === 0 ? c : r] += x;
  });
  out.data.set(acc);
  return out;
}
