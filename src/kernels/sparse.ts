// Kernels over sparse matrices held as their compressed parts (data, indices, indptr, shape), as
// scipy lays them out: a csr matrix compresses rows (outer index = row), a csc matrix columns.
// Each output element is summed in one fixed order (stored entries in storage order), whatever
// the chunk, so results have the same bits on any worker count:
// - 'sparse.timesDense': s (m x k, csr) times d (k x n): chunks of output rows, each row a walk of
//   its entries, summed in float64 and rounded once. 'sparse.cscTimesDense' (csc s): each entry
//   scatters into its row, in slabs of entries whose partial products (of the output's dtype)
//   are summed in float64 in slab order ('sparse.scatterSlabs', 'sparse.sumSlabs': the steps
//   planners run as tasks; the whole kernel runs the same steps).
// - 'sparse.switchFormat': the other format's parts of the same matrix (a counting sort).
// - 'sparse.productsAt': at each stored position (r, c), the sum over j of x[r, j] y[c, j]
//   (times the stored value when scaled), chunked over the stored entries; 'sparse.valuesAt': a
//   dense matrix's elements at the stored positions, chunked the same way.
// - 'sparse.toDense': the dense matrix, chunked by output rows (csr) or columns (csc);
//   'sparse.addToDense': a dense matrix plus the stored values, chunked the same way.
// The products may end with an epilogue: an element-wise program over their rows once written
// (a fused element-wise op of the product), with its own inputs broadcast to the product's shape.
// Inputs are contiguous (the ops ask for it); outputs are walked by their strides. In the pool's
// memory the two products run as WebAssembly SIMD loops (sparse-wasm.ts) with the same bits.
import { bytesPerElement, STORAGE } from './dtype.js';
import type { ElemwiseSource } from './elemwise.js';
import { getKernel, registerKernel, type KernelParams } from './registry.js';
import { csrRowsWasm, cscScatterWasm } from './sparse-wasm.js';
import { broadcastView, type Range, type TensorView } from './view.js';

/** Which index the compression is over: rows (csr) or columns (csc). */
export type Outer = 'rows' | 'columns';

export interface SparseKernelParams {
  readonly outer: Outer;
}

/** A float64 accumulator of at least `n` elements, reused by this thread's kernels (one runs at a time). */
let accumulator = new Float64Array(1024);
function zeroedAccumulator(n: number): Float64Array {
  if (accumulator.length < n) accumulator = new Float64Array(Math.max(n, 2 * accumulator.length));
  accumulator.fill(0, 0, n);
  return accumulator;
}

/**
 * An element-wise program run over a product's rows as soon as they are written (the fused
 * element-wise op after a sparse product): its input `position` is the product, the others are
 * the kernel's inputs from `first` on, broadcast to the product's shape.
 */
export interface Epilogue {
  readonly source: ElemwiseSource;
  readonly position: number;
  readonly first: number;
}

/** Rows `rows` of `out` through the epilogue, in place. */
function applyEpilogue(epilogue: Epilogue | undefined, ins: readonly TensorView[], out: TensorView, rows: Range): void {
  if (!epilogue || rows.start >= rows.end) return;
  const slice = (v: TensorView): TensorView => {
    const b = broadcastView(v, out.shape);
    return { data: b.data, offset: b.offset + rows.start * b.stride[0]!, shape: [rows.end - rows.start, out.shape[1]!], stride: b.stride };
  };
  const part = slice(out);
  const others = ins.slice(epilogue.first).map(slice);
  const args = [...others.slice(0, epilogue.position), part, ...others.slice(epilogue.position)];
  getKernel('elemwise')(args, [part], { source: epilogue.source });
}

/** The first outer index whose entries reach past `p` (its entries hold p): a binary search of indptr. */
function outerOf(indptr: TensorView, outerLength: number, p: number): number {
  const ptr = indptr.data;
  const base = indptr.offset;
  let lo = 0;
  let hi = outerLength - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ptr[base + mid]! <= p) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Rows `range` of s d for csr s: each row of entries walked once, in storage order. */
function csrTimesDense([data, indices, indptr, , d]: readonly TensorView[], out: TensorView, range: Range): void {
  if (csrRowsWasm(data!, indices!, indptr!, d!, out, range.start, range.end)) return;
  const n = out.shape[1]!;
  const [vals, idx, ptr, dd] = [data!.data, indices!.data, indptr!.data, d!.data];
  const [vo, io, po, dOff] = [data!.offset, indices!.offset, indptr!.offset, d!.offset];
  const [rs, cs] = [out.stride[0]!, out.stride[1]!];
  const acc = zeroedAccumulator(n);
  for (let r = range.start; r < range.end; r++) {
    acc.fill(0, 0, n);
    for (let p = ptr[po + r]!; p < ptr[po + r + 1]!; p++) {
      const v = vals[vo + p]!;
      const row = dOff + idx[io + p]! * n;
      for (let j = 0; j < n; j++) acc[j] += v * dd[row + j]!;
    }
    const at = out.offset + r * rs;
    for (let j = 0; j < n; j++) out.data[at + j * cs] = acc[j]!;
  }
}

/**
 * The same matrix in the other format (csr <-> csc: the transpose's csr is the matrix's csc): a
 * counting sort of the entries by their inner index, stable, so each new outer run comes out in
 * increasing order. Inputs: data, indices, indptr, shape; outputs: data, indices, indptr. One task.
 */
registerKernel('sparse.switchFormat', ([data, indices, indptr], [outData, outIndices, outIndptr]) => {
  const nnz = data!.shape[0]!;
  const outerLength = indptr!.shape[0]! - 1;
  const innerLength = outIndptr!.shape[0]! - 1;
  const [vals, idx, ptr] = [data!.data, indices!.data, indptr!.data];
  const [vo, io, po] = [data!.offset, indices!.offset, indptr!.offset];
  const [od, oi, op] = [outData!, outIndices!, outIndptr!];
  const at = new Int32Array(innerLength + 1);
  for (let p = 0; p < nnz; p++) at[idx[io + p]! + 1]!++;
  for (let i = 0; i < innerLength; i++) at[i + 1]! += at[i]!;
  for (let i = 0; i <= innerLength; i++) op.data[op.offset + i * op.stride[0]!] = at[i]!;
  for (let o = 0; o < outerLength; o++) {
    for (let p = ptr[po + o]!; p < ptr[po + o + 1]!; p++) {
      const to = at[idx[io + p]!]!++;
      oi.data[oi.offset + to * oi.stride[0]!] = o;
      od.data[od.offset + to * od.stride[0]!] = vals[vo + p]!;
    }
  }
});

/** Inputs: data, indices, indptr, shape (of a csr matrix), d, and the epilogue's; chunks of output rows. */
registerKernel('sparse.timesDense', (ins, [out], params, range) => {
  const rows = range ?? { start: 0, end: out!.shape[0]! };
  csrTimesDense(ins, out!, rows);
  applyEpilogue(params['epilogue'] as Epilogue | undefined, ins, out!, rows);
});

/** Multiply-adds (entries x columns of d) one slab of a csc product should carry at least. */
const SLAB_WORK = 1 << 21;
/** The most memory the slabs' partial products may take, and the most slabs (12: even shares for 2, 3, 4 or 6 workers). */
const SLAB_BYTES = 64 << 20;
const MAX_SLABS = 12;

/**
 * How many slabs a csc product s d (nnz stored entries, an m x n result) is cut into: that many
 * consecutive runs of its entries, each scattered by one task into a partial product of its own
 * (so tasks share no memory they write; of the product's dtype, see scatterEntries), the partials
 * then summed in slab order. From the shapes only: every run, on any number of workers, cuts the
 * same slabs.
 */
export function scatterSlabs(nnz: number, m: number, n: number, dtype: 'float32' | 'float64'): number {
  const bySize = Math.floor(SLAB_BYTES / Math.max(1, bytesPerElement(dtype) * m * n));
  return Math.max(1, Math.min(MAX_SLABS, bySize, Math.round((nnz * n) / SLAB_WORK)));
}

/** The stored entries slab `slab` of `slabs` scatters. */
function slabEntries(nnz: number, slab: number, slabs: number): Range {
  return { start: Math.floor((slab * nnz) / slabs), end: Math.floor(((slab + 1) * nnz) / slabs) };
}

/**
 * Adds entries `entries` of csc s, times their rows of d, into the matrix `into` (m x n,
 * row-major from element `at`): entry (r, c) adds s[r, c] d[c, :] to row r. In storage order.
 * `into` (a slab's partial) has the product's dtype. A float32 one adds float32 products (each
 * rounded, then added and rounded: WebAssembly's f32x4.mul and f32x4.add), as scipy accumulates
 * a float32 product. It halves the memory a scatter walks at random: two slabs at once in
 * float64 would not fit a shared 8 MiB L3 at W13's sizes, in float32 they do. Each element of a
 * slab sums 1/slabs of its terms, and the slabs are summed in float64.
 */
function scatterEntries([data, indices, indptr, , d]: readonly TensorView[], entries: Range, into: TensorView, at: number, n: number): void {
  if (entries.start >= entries.end) return;
  const c0 = outerOf(indptr!, indptr!.shape[0]! - 1, entries.start);
  if (cscScatterWasm(data!, indices!, indptr!, d!, into, at, entries.start, entries.end, c0, n)) return;
  const acc = into.data;
  const single = acc instanceof Float32Array;
  const [vals, idx, ptr, dd] = [data!.data, indices!.data, indptr!.data, d!.data];
  const [vo, io, po, dOff] = [data!.offset, indices!.offset, indptr!.offset, d!.offset];
  let c = c0;
  for (let p = entries.start; p < entries.end; p++) {
    while (ptr[po + c + 1]! <= p) c++;
    const v = vals[vo + p]!;
    const row = dOff + c * n;
    const to = at + idx[io + p]! * n;
    // A float32 sum of two float32 numbers computed in float64 and stored rounds as f32.add does.
    if (single) for (let j = 0; j < n; j++) acc[to + j] += Math.fround(v * dd[row + j]!);
    else for (let j = 0; j < n; j++) acc[to + j] += v * dd[row + j]!;
  }
}

/** The whole csc product on one thread: the same slabs, summed in the same order, as a plan's tasks. */
registerKernel('sparse.cscTimesDense', (ins, [out], params) => {
  const [m, n] = [out!.shape[0]!, out!.shape[1]!];
  const nnz = ins[0]!.shape[0]!;
  const dtype = out!.data instanceof Float32Array ? 'float32' : 'float64';
  const slabs = scatterSlabs(nnz, m, n, dtype);
  const partial: TensorView = { data: new STORAGE[dtype](m * n), offset: 0, shape: [m, n], stride: [n, 1] };
  const total = new Float64Array(m * n);
  for (let s = 0; s < slabs; s++) {
    partial.data.fill(0);
    scatterEntries(ins, slabEntries(nnz, s, slabs), partial, 0, n);
    for (let i = 0; i < m * n; i++) total[i] += partial.data[i]!;
  }
  const [rs, cs] = [out!.stride[0]!, out!.stride[1]!];
  for (let r = 0; r < m; r++) for (let j = 0; j < n; j++) out!.data[out!.offset + r * rs + j * cs] = total[r * n + j]!;
  applyEpilogue(params['epilogue'] as Epilogue | undefined, ins, out!, { start: 0, end: m });
});

/** Slabs `range` of a csc product (inputs as 'sparse.cscTimesDense') into their partials: output 0 is [slabs, m, n] of the product's dtype. */
registerKernel('sparse.scatterSlabs', (ins, [partials], _params, range) => {
  const [slabs, m, n] = partials!.shape as [number, number, number];
  const nnz = ins[0]!.shape[0]!;
  const { start, end } = range ?? { start: 0, end: slabs };
  for (let s = start; s < end; s++) {
    const at = partials!.offset + s * m * n;
    partials!.data.fill(0, at, at + m * n);
    scatterEntries(ins, slabEntries(nnz, s, slabs), partials!, at, n);
  }
});

/** The partials [slabs, m, n] summed in slab order (from 0) into the m x n output, chunked by its rows; then the epilogue's (inputs from 1 on). */
registerKernel('sparse.sumSlabs', (ins, [out], params, range) => {
  const partials = ins[0];
  const [slabs, m, n] = partials!.shape as [number, number, number];
  const rows = range ?? { start: 0, end: m };
  const p = partials!.data;
  const sum = zeroedAccumulator(n);
  const [rs, cs] = [out!.stride[0]!, out!.stride[1]!];
  for (let r = rows.start; r < rows.end; r++) {
    sum.fill(0, 0, n);
    for (let s = 0; s < slabs; s++) {
      const at = partials!.offset + (s * m + r) * n;
      for (let j = 0; j < n; j++) sum[j] += p[at + j]!;
    }
    const to = out!.offset + r * rs;
    for (let j = 0; j < n; j++) out!.data[to + j * cs] = sum[j]!;
  }
  applyEpilogue(params['epilogue'] as Epilogue | undefined, ins, out!, rows);
});

export interface ProductsAtParams extends SparseKernelParams {
  /** Multiplied by the stored values (input 4): SamplingDot; else StructuredDot's gradient. */
  readonly scaled: boolean;
}

/** Inputs: indices, indptr, shape, x (rows x K), y (columns x K), and with `scaled` the stored values. */
registerKernel('sparse.productsAt', ([indices, indptr, , x, y, values], [out], params, range) => {
  const { outer, scaled } = params as unknown as ProductsAtParams;
  const nnz = out!.shape[0]!;
  const { start, end } = range ?? { start: 0, end: nnz };
  if (start >= end) return;
  const K = x!.shape[1]!;
  const outerLength = indptr!.shape[0]! - 1;
  const [idx, ptr, xx, yy] = [indices!.data, indptr!.data, x!.data, y!.data];
  const [io, po, xo, yo] = [indices!.offset, indptr!.offset, x!.offset, y!.offset];
  let o = outerOf(indptr!, outerLength, start);
  for (let p = start; p < end; p++) {
    while (ptr[po + o + 1]! <= p) o++;
    const i = idx[io + p]!;
    const [r, c] = outer === 'rows' ? [o, i] : [i, o];
    let acc = 0;
    for (let j = 0; j < K; j++) acc += xx[xo + r * K + j]! * yy[yo + c * K + j]!;
    out!.data[out!.offset + p * out!.stride[0]!] = scaled ? values!.data[values!.offset + p]! * acc : acc;
  }
});

/** Inputs: indices, indptr, shape, d (any strides): d at each stored position, chunked by the entries. */
registerKernel('sparse.valuesAt', ([indices, indptr, , d], [out], params, range) => {
  const { outer } = params as unknown as SparseKernelParams;
  const nnz = out!.shape[0]!;
  const { start, end } = range ?? { start: 0, end: nnz };
  if (start >= end) return;
  const [idx, ptr, dd] = [indices!.data, indptr!.data, d!.data];
  const [is, ps] = [indices!.stride[0]!, indptr!.stride[0]!];
  const [rs, cs] = outer === 'rows' ? [d!.stride[0]!, d!.stride[1]!] : [d!.stride[1]!, d!.stride[0]!];
  const outerLength = indptr!.shape[0]! - 1;
  // The outer position of entry `start`: the last whose run starts at or before it.
  let lo = 0;
  let hi = outerLength - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ptr[indptr!.offset + mid * ps]! <= start) lo = mid;
    else hi = mid - 1;
  }
  let o = lo;
  for (let p = start; p < end; p++) {
    while (ptr[indptr!.offset + (o + 1) * ps]! <= p) o++;
    out!.data[out!.offset + p * out!.stride[0]!] = dd[d!.offset + o * rs + idx[indices!.offset + p * is]! * cs]!;
  }
});

/**
 * Inputs: data, indices, indptr, shape and, for 'sparse.addToDense', a dense d (any strides):
 * the dense matrix, or d plus the stored values (d's elements elsewhere as they are); chunks of
 * output rows (csr) or columns (csc).
 */
function toDense([data, indices, indptr, , d]: readonly TensorView[], [out]: readonly TensorView[], params: KernelParams, range: Range | undefined): void {
  const { outer } = params as unknown as SparseKernelParams;
  const o = out!;
  const [rs, cs] = [o.stride[0]!, o.stride[1]!];
  // Along the outer index (a row of csr): the step between outer positions and between inner ones.
  const [outerStep, innerStep, innerLength] = outer === 'rows' ? [rs, cs, o.shape[1]!] : [cs, rs, o.shape[0]!];
  const { start, end } = range ?? { start: 0, end: outer === 'rows' ? o.shape[0]! : o.shape[1]! };
  const [vals, idx, ptr] = [data!.data, indices!.data, indptr!.data];
  const [vo, io, po] = [data!.offset, indices!.offset, indptr!.offset];
  // d's steps along the same two directions.
  const [dOuter, dInner] = d ? (outer === 'rows' ? [d.stride[0]!, d.stride[1]!] : [d.stride[1]!, d.stride[0]!]) : [0, 0];
  for (let q = start; q < end; q++) {
    const at = o.offset + q * outerStep;
    if (d) {
      const from = d.offset + q * dOuter;
      for (let i = 0; i < innerLength; i++) o.data[at + i * innerStep] = d.data[from + i * dInner]!;
      for (let p = ptr[po + q]!; p < ptr[po + q + 1]!; p++) o.data[at + idx[io + p]! * innerStep] += vals[vo + p]!;
    } else {
      for (let i = 0; i < innerLength; i++) o.data[at + i * innerStep] = 0;
      for (let p = ptr[po + q]!; p < ptr[po + q + 1]!; p++) o.data[at + idx[io + p]! * innerStep] = vals[vo + p]!;
    }
  }
}

registerKernel('sparse.toDense', toDense);
registerKernel('sparse.addToDense', toDense);
