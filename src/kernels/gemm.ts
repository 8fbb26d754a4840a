// Matrix products over strided views: C = alpha * A·B + beta * C for any strides (transposed and
// non-contiguous operands are packed first), computed for a range of C's rows so that one
// product can be split into tasks. Floats run through packed panels and a 4x4 register-blocked
// micro-kernel that accumulates in float64 and rounds once on store; integers wrap modulo 2^32.
// float32 products in an attached WebAssembly memory run gemm-wasm.ts's SIMD kernels.
import { copyView } from './copy.js';
import { gemmWasm, gemmWasm64 } from './gemm-wasm.js';
import type { TypedArray } from './dtype.js';
import { contiguousStrides, sizeOf, type Range, type TensorView } from './view.js';

/** The tile of C that one micro-kernel call computes (rows x columns). */
const MR = 4;
const NR = 4;
/** Rows of A per packed block (it stays in L2 while B's micro-panels stream through L1). */
const MC = 64;
/** Columns of B per packed panel. */
const NC = 512;
/**
 * Depth per pass: beyond it, partial sums of C are accumulated across passes (in a float64
 * buffer when C is float32, so that each element is still rounded once).
 */
const KC = 1024;

// Packing buffers, grown on demand and reused: kernels run to completion on their thread, so one
// set per thread (module instance) is enough, and repeated products of one size allocate none.
let packedA: Float64Array = new Float64Array(0);
let packedB: Float64Array = new Float64Array(0);
let packedX: Float64Array = new Float64Array(0);
let columnSums: Float64Array = new Float64Array(0);
let intRow = new Int32Array(0);
const tile = new Float64Array(MR * NR);

function floatScratch(buf: Float64Array, n: number): Float64Array {
  return buf.length >= n ? buf : new Float64Array(Math.max(n, buf.length * 2));
}

function isFloatStorage(d: TypedArray): boolean {
  return d instanceof Float64Array || d instanceof Float32Array;
}

function rowRange(m: number, rows: Range | undefined): [number, number] {
  const start = Math.max(0, rows?.start ?? 0);
  const end = Math.min(m, rows?.end ?? m);
  return [start, end];
}

function checkShapes(where: string, a: TensorView, b: TensorView, c: TensorView, bVector: boolean): void {
  const [m, k] = a.shape;
  const bk = b.shape[0];
  const n = bVector ? undefined : b.shape[1];
  const ok =
    a.shape.length === 2 &&
    b.shape.length === (bVector ? 1 : 2) &&
    c.shape.length === (bVector ? 1 : 2) &&
    k === bk &&
    c.shape[0] === m &&
    (bVector || c.shape[1] === n);
  if (!ok) {
    throw new RangeError(
      `${where}: shapes [${a.shape.join(', ')}] x [${b.shape.join(', ')}] -> [${c.shape.join(', ')}] do not fit ` +
        `(expected [m, k] x [k${bVector ? '' : ', n'}] -> [m${bVector ? '' : ', n'}])`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Packing: a block of A as MR-row micro-panels, a panel of B as NR-column micro-panels, each laid
// out depth-major (MR or NR consecutive values per step of k) and zero-padded to full tiles.

function packBlockA(a: TensorView, i0: number, mc: number, p0: number, kc: number, dst: Float64Array): void {
  const d = a.data;
  const rs = a.stride[0]!;
  const ks = a.stride[1]!;
  for (let ir = 0; ir < mc; ir += MR) {
    const base = ir * kc;
    for (let r = 0; r < MR; r++) {
      let q = base + r;
      if (ir + r >= mc) {
        for (let p = 0; p < kc; p++, q += MR) dst[q] = 0;
        continue;
      }
      let s = a.offset + (i0 + ir + r) * rs + p0 * ks;
      for (let p = 0; p < kc; p++, q += MR, s += ks) dst[q] = d[s]!;
    }
  }
}

function packPanelB(b: TensorView, p0: number, kc: number, j0: number, nc: number, dst: Float64Array): void {
  const d = b.data;
  const ks = b.stride[0]!;
  const cs = b.stride[1]!;
  for (let jr = 0; jr < nc; jr += NR) {
    const base = jr * kc;
    for (let c = 0; c < NR; c++) {
      let q = base + c;
      if (jr + c >= nc) {
        for (let p = 0; p < kc; p++, q += NR) dst[q] = 0;
        continue;
      }
      let s = b.offset + p0 * ks + (j0 + jr + c) * cs;
      for (let p = 0; p < kc; p++, q += NR, s += ks) dst[q] = d[s]!;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The micro-kernel: a 4x4 tile of A·B over kc steps, sixteen accumulators held in registers.
// It touches only Float64Arrays, so it stays monomorphic whatever the dtypes of A, B and C.

function microKernel(kc: number, pa: Float64Array, ia: number, pb: Float64Array, ib: number, out: Float64Array): void {
  let c00 = 0, c01 = 0, c02 = 0, c03 = 0;
  let c10 = 0, c11 = 0, c12 = 0, c13 = 0;
  let c20 = 0, c21 = 0, c22 = 0, c23 = 0;
  let c30 = 0, c31 = 0, c32 = 0, c33 = 0;
  for (let p = 0; p < kc; p++) {
    const a0 = pa[ia]!, a1 = pa[ia + 1]!, a2 = pa[ia + 2]!, a3 = pa[ia + 3]!;
    const b0 = pb[ib]!, b1 = pb[ib + 1]!, b2 = pb[ib + 2]!, b3 = pb[ib + 3]!;
    c00 += a0 * b0; c01 += a0 * b1; c02 += a0 * b2; c03 += a0 * b3;
    c10 += a1 * b0; c11 += a1 * b1; c12 += a1 * b2; c13 += a1 * b3;
    c20 += a2 * b0; c21 += a2 * b1; c22 += a2 * b2; c23 += a2 * b3;
    c30 += a3 * b0; c31 += a3 * b1; c32 += a3 * b2; c33 += a3 * b3;
    ia += MR;
    ib += NR;
  }
  out[0] = c00; out[1] = c01; out[2] = c02; out[3] = c03;
  out[4] = c10; out[5] = c11; out[6] = c12; out[7] = c13;
  out[8] = c20; out[9] = c21; out[10] = c22; out[11] = c23;
  out[12] = c30; out[13] = c31; out[14] = c32; out[15] = c33;
}

/** Writes the valid mr x nr part of `tile` into C at (i, j): alpha * tile + beta * C. */
function storeTile(c: TensorView, i: number, j: number, mr: number, nr: number, alpha: number, beta: number): void {
  const d = c.data;
  const rs = c.stride[0]!;
  const cs = c.stride[1]!;
  for (let r = 0; r < mr; r++) {
    let q = c.offset + (i + r) * rs + j * cs;
    const t = r * NR;
    if (beta === 0) for (let s = 0; s < nr; s++, q += cs) d[q] = alpha * tile[t + s]!;
    else for (let s = 0; s < nr; s++, q += cs) d[q] = alpha * tile[t + s]! + beta * d[q]!;
  }
}

/** C[start:end] = beta * C[start:end] (zeros when beta is 0, whatever C held, NaN included). */
function scaleRows(c: TensorView, start: number, end: number, beta: number): void {
  const d = c.data;
  const n = c.shape[1]!;
  const rs = c.stride[0]!;
  const cs = c.stride[1]!;
  for (let i = start; i < end; i++) {
    let q = c.offset + i * rs;
    for (let j = 0; j < n; j++, q += cs) d[q] = beta === 0 ? 0 : beta * d[q]!;
  }
}

function gemmFloat(a: TensorView, b: TensorView, c: TensorView, alpha: number, beta: number, start: number, end: number): void {
  const k = a.shape[1]!;
  const n = b.shape[1]!;
  for (let pc = 0; pc < k; pc += KC) {
    const kc = Math.min(KC, k - pc);
    const passBeta = pc === 0 ? beta : 1;
    for (let jc = 0; jc < n; jc += NC) {
      const nc = Math.min(NC, n - jc);
      packedB = floatScratch(packedB, Math.ceil(nc / NR) * NR * kc);
      packPanelB(b, pc, kc, jc, nc, packedB);
      for (let ic = start; ic < end; ic += MC) {
        const mc = Math.min(MC, end - ic);
        packedA = floatScratch(packedA, Math.ceil(mc / MR) * MR * kc);
        packBlockA(a, ic, mc, pc, kc, packedA);
        for (let jr = 0; jr < nc; jr += NR) {
          const nr = Math.min(NR, nc - jr);
          for (let ir = 0; ir < mc; ir += MR) {
            microKernel(kc, packedA, ir * kc, packedB, jr * kc, tile);
            storeTile(c, ic + ir, jc + jr, Math.min(MR, mc - ir), nr, alpha, passBeta);
          }
        }
      }
    }
  }
}

function gemmInt(a: TensorView, b: TensorView, c: TensorView, alpha: number, beta: number, start: number, end: number): void {
  const k = a.shape[1]!;
  const n = b.shape[1]!;
  if (intRow.length < n) intRow = new Int32Array(Math.max(n, intRow.length * 2));
  const acc = intRow;
  const ad = a.data, bd = b.data, cd = c.data;
  const [ars, aks] = a.stride as [number, number];
  const [bks, bcs] = b.stride as [number, number];
  const [crs, ccs] = c.stride as [number, number];
  for (let i = start; i < end; i++) {
    acc.fill(0, 0, n);
    for (let p = 0; p < k; p++) {
      const av = ad[a.offset + i * ars + p * aks]! | 0;
      let q = b.offset + p * bks;
      for (let j = 0; j < n; j++, q += bcs) acc[j] = (acc[j]! + Math.imul(av, bd[q]!)) | 0;
    }
    let q = c.offset + i * crs;
    for (let j = 0; j < n; j++, q += ccs) {
      const v = Math.imul(alpha, acc[j]!);
      cd[q] = beta === 0 ? v : (v + Math.imul(beta, cd[q]!)) | 0;
    }
  }
}

/**
 * C = alpha * A·B + beta * C for the rows of C in `rows` (all by default). A is [m, k], B [k, n],
 * C [m, n], with any strides; C must not overlap A or B. When beta is 0, C is not read. Float
 * outputs accumulate in float64 and are rounded once, except float32 products whose A and B have
 * contiguous rows or columns in an attached WebAssembly memory: those accumulate in float32
 * (gemm-wasm.ts); integer outputs (all operands integer) wrap
 * modulo 2^32 and then to C's width, as NumPy's integer products do; alpha and beta are then
 * integers.
 */
export function gemm(a: TensorView, b: TensorView, c: TensorView, alpha = 1, beta = 0, rows?: Range): void {
  checkShapes('gemm', a, b, c, false);
  const [start, end] = rowRange(a.shape[0]!, rows);
  if (start >= end || c.shape[1] === 0) return;
  if (!isFloatStorage(c.data)) return gemmInt(a, b, c, alpha, beta, start, end);
  const k = a.shape[1]!;
  if (k === 0) return scaleRows(c, start, end, beta);
  if (c.data instanceof Float32Array && gemmWasm(a, b, c, alpha, beta, start, end)) return;
  if (c.data instanceof Float64Array && gemmWasm64(a, b, c, alpha, beta, start, end)) return;
  if (k > KC && !(c.data instanceof Float64Array)) {
    // Several passes over k: accumulate in float64 and round once at the end.
    const n = c.shape[1]!;
    const m = end - start;
    const sum: TensorView = { data: new Float64Array(m * n), offset: 0, shape: [m, n], stride: [n, 1] };
    const aRows: TensorView = { data: a.data, offset: a.offset + start * a.stride[0]!, shape: [m, k], stride: a.stride };
    gemmFloat(aRows, b, sum, 1, 0, 0, m);
    const d = c.data;
    const s = sum.data;
    for (let i = 0; i < m; i++) {
      let q = c.offset + (start + i) * c.stride[0]!;
      for (let j = 0; j < n; j++, q += c.stride[1]!) d[q] = beta === 0 ? alpha * s[i * n + j]! : alpha * s[i * n + j]! + beta * d[q]!;
    }
    return;
  }
  gemmFloat(a, b, c, alpha, beta, start, end);
}

// ---------------------------------------------------------------------------------------------
// Matrix-vector products: a 4x4 tile would waste three quarters of its work on one column, so
// these walk A directly, by rows (dot products) or by columns (axpy), whichever is contiguous.

function gemvFloat(a: TensorView, x: TensorView, y: TensorView, alpha: number, beta: number, start: number, end: number): void {
  const k = a.shape[1]!;
  packedX = floatScratch(packedX, k);
  const xs = packedX;
  for (let p = 0, q = x.offset; p < k; p++, q += x.stride[0]!) xs[p] = x.data[q]!;
  const ad = a.data;
  const [rs, ks] = a.stride as [number, number];
  const yd = y.data;
  const ys = y.stride[0]!;
  const store = (i: number, s: number): void => {
    const q = y.offset + i * ys;
    yd[q] = beta === 0 ? alpha * s : alpha * s + beta * yd[q]!;
  };
  if (Math.abs(ks) <= Math.abs(rs) || k <= 1) {
    // Rows of A are (nearly) contiguous: four dot products at a time share each x value.
    let i = start;
    for (; i + 4 <= end; i += 4) {
      let p0 = a.offset + i * rs;
      let p1 = p0 + rs, p2 = p1 + rs, p3 = p2 + rs;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let p = 0; p < k; p++) {
        const xv = xs[p]!;
        s0 += ad[p0]! * xv; s1 += ad[p1]! * xv; s2 += ad[p2]! * xv; s3 += ad[p3]! * xv;
        p0 += ks; p1 += ks; p2 += ks; p3 += ks;
      }
      store(i, s0); store(i + 1, s1); store(i + 2, s2); store(i + 3, s3);
    }
    for (; i < end; i++) {
      let s = 0;
      for (let p = 0, q = a.offset + i * rs; p < k; p++, q += ks) s += ad[q]! * xs[p]!;
      store(i, s);
    }
    return;
  }
  // Columns of A are contiguous: add x[p] times column p into float64 sums.
  const m = end - start;
  columnSums = floatScratch(columnSums, m);
  const acc = columnSums;
  acc.fill(0, 0, m);
  for (let p = 0; p < k; p++) {
    const xv = xs[p]!;
    let q = a.offset + start * rs + p * ks;
    for (let i = 0; i < m; i++, q += rs) acc[i] = acc[i]! + ad[q]! * xv;
  }
  for (let i = 0; i < m; i++) store(start + i, acc[i]!);
}

function gemvInt(a: TensorView, x: TensorView, y: TensorView, alpha: number, beta: number, start: number, end: number): void {
  const k = a.shape[1]!;
  const [rs, ks] = a.stride as [number, number];
  for (let i = start; i < end; i++) {
    let s = 0;
    for (let p = 0, q = a.offset + i * rs, r = x.offset; p < k; p++, q += ks, r += x.stride[0]!) {
      s = (s + Math.imul(a.data[q]!, x.data[r]!)) | 0;
    }
    const q = y.offset + i * y.stride[0]!;
    const v = Math.imul(alpha, s);
    y.data[q] = beta === 0 ? v : (v + Math.imul(beta, y.data[q]!)) | 0;
  }
}

/** y = alpha * A·x + beta * y for the elements of y in `rows`; A is [m, k], x [k], y [m]. */
export function gemv(a: TensorView, x: TensorView, y: TensorView, alpha = 1, beta = 0, rows?: Range): void {
  checkShapes('gemv', a, x, y, true);
  const [start, end] = rowRange(a.shape[0]!, rows);
  if (start >= end) return;
  if (isFloatStorage(y.data)) gemvFloat(a, x, y, alpha, beta, start, end);
  else gemvInt(a, x, y, alpha, beta, start, end);
}

/**
 * C = A·B for 2-d views (the rows of C in `rows`), choosing the kernel by shape: a matrix-vector
 * product when B or A is a single column or row, else the packed gemm.
 */
export function matmulInto(a: TensorView, b: TensorView, c: TensorView, rows?: Range): void {
  checkShapes('matmul', a, b, c, false);
  const m = a.shape[0]!;
  const n = b.shape[1]!;
  if (n === 1) {
    const x: TensorView = { data: b.data, offset: b.offset, shape: [b.shape[0]!], stride: [b.stride[0]!] };
    const y: TensorView = { data: c.data, offset: c.offset, shape: [m], stride: [c.stride[0]!] };
    gemv(a, x, y, 1, 0, rows);
  } else if (m === 1) {
    const [start, end] = rowRange(1, rows);
    if (start >= end) return;
    // One row of C: C[0, :] = B^T · A[0, :].
    const bt: TensorView = { data: b.data, offset: b.offset, shape: [n, b.shape[0]!], stride: [b.stride[1]!, b.stride[0]!] };
    const x: TensorView = { data: a.data, offset: a.offset, shape: [a.shape[1]!], stride: [a.stride[1]!] };
    const y: TensorView = { data: c.data, offset: c.offset, shape: [n], stride: [c.stride[1]!] };
    gemv(bt, x, y);
  } else {
    gemm(a, b, c, 1, 0, rows);
  }
}

// ---------------------------------------------------------------------------------------------
// Products of tensors of higher rank, reduced to the 2-d kernels above.

/** Axes [from, to) of `v` merged into one (length, stride), if their strides allow it. */
function mergeAxes(v: TensorView, from: number, to: number): { length: number; stride: number } | undefined {
  let length = 1;
  let stride = 0;
  for (let a = to - 1; a >= from; a--) {
    const d = v.shape[a]!;
    if (d === 0) return { length: 0, stride: 0 };
    if (d === 1) continue;
    if (length === 1) stride = v.stride[a]!;
    else if (v.stride[a] !== length * stride) return undefined;
    length *= d;
  }
  return { length, stride };
}

/** `v` as a matrix: axes [0, split) become rows and the rest columns; undefined if that needs a copy. */
export function collapseToMatrix(v: TensorView, split: number): TensorView | undefined {
  const rows = mergeAxes(v, 0, split);
  const cols = mergeAxes(v, split, v.shape.length);
  if (!rows || !cols) return undefined;
  return { data: v.data, offset: v.offset, shape: [rows.length, cols.length], stride: [rows.stride, cols.stride] };
}

function newLike(data: TypedArray, length: number): TypedArray {
  return new (data.constructor as new (n: number) => TypedArray)(length);
}

/**
 * `v` as a matrix (rows: axes [0, split)) that is valid for the rows [start, end): the view
 * itself when its axes merge, else a contiguous copy of those rows only, whose view is offset by
 * -start rows so that row i is found where a full copy would hold it (rows outside the range
 * are never read).
 */
function matrixRows(v: TensorView, split: number, start: number, end: number): TensorView {
  const direct = collapseToMatrix(v, split);
  if (direct) return direct;
  const rows = sizeOf(v.shape.slice(0, split));
  const cols = sizeOf(v.shape.slice(split));
  const data = newLike(v.data, (end - start) * cols);
  const base = -start * cols;
  copyView(v, { data, offset: base, shape: v.shape, stride: contiguousStrides(v.shape) }, { start: start * cols, end: end * cols });
  return { data, offset: base, shape: [rows, cols], stride: [cols, 1] };
}

function permuted(v: TensorView, order: readonly number[]): TensorView {
  return { data: v.data, offset: v.offset, shape: order.map((a) => v.shape[a]!), stride: order.map((a) => v.stride[a]!) };
}

/**
 * NumPy's tensordot: sums a[..] * b[..] over the axis pairs (axesA[i], axesB[i]); `out` has the
 * free axes of a, then those of b, in order. The lengths of paired axes must agree (checked by
 * the caller). `rows` is a range over the flat index of a's free axes (the rows of a seen as a
 * matrix [rows, k]); a chunk copies only its own rows of a when a's axes do not merge.
 */
export function tensordotInto(
  a: TensorView,
  b: TensorView,
  axesA: readonly number[],
  axesB: readonly number[],
  out: TensorView,
  rows?: Range,
): void {
  const freeA = a.shape.map((_, i) => i).filter((i) => !axesA.includes(i));
  const freeB = b.shape.map((_, i) => i).filter((i) => !axesB.includes(i));
  const m = sizeOf(freeA.map((ax) => a.shape[ax]!));
  const [start, end] = rowRange(m, rows);
  if (start >= end) return;
  const a2 = matrixRows(permuted(a, [...freeA, ...axesA]), freeA.length, start, end);
  const pb = permuted(b, [...axesB, ...freeB]);
  const b2 = matrixRows(pb, axesB.length, 0, sizeOf(pb.shape.slice(0, axesB.length)));
  const c2 = collapseToMatrix(out, freeA.length);
  if (c2) return matmulInto(a2, b2, c2, { start, end });
  // An output whose axes do not merge (never a kernel's, which are contiguous): computed into a
  // contiguous temporary, whose rows in the range are copied out.
  const tmp: TensorView = { data: newLike(out.data, sizeOf(out.shape)), offset: 0, shape: out.shape, stride: contiguousStrides(out.shape) };
  matmulInto(a2, b2, collapseToMatrix(tmp, freeA.length)!, { start, end });
  const n = sizeOf(freeB.map((ax) => b.shape[ax]!));
  copyView(tmp, out, { start: start * n, end: end * n });
}

/**
 * Batched matrix products: x is [...batch, m, k], y [...batch, k, n] and out [...batch, m, n],
 * all with out's batch shape (stride 0 on broadcast batch axes). `rows` is a range over the rows
 * of out seen as one [batch * m, n] matrix.
 */
export function batchedMatmulInto(x: TensorView, y: TensorView, out: TensorView, rows?: Range): void {
  const nd = out.shape.length;
  const nb = nd - 2;
  const batchShape = out.shape.slice(0, nb);
  let batches = 1;
  for (const d of batchShape) batches *= d;
  const m = out.shape[nb]!;
  const start = Math.max(0, rows?.start ?? 0);
  const end = Math.min(batches * m, rows?.end ?? batches * m);
  if (start >= end || m === 0) return;
  const matrix = (v: TensorView, offset: number): TensorView => ({
    data: v.data,
    offset,
    shape: [v.shape[nb]!, v.shape[nb + 1]!],
    stride: [v.stride[nb]!, v.stride[nb + 1]!],
  });
  const first = Math.floor(start / m);
  const last = Math.ceil(end / m);
  // Offsets of batch `first`, then stepped through the batch multi-index in C order.
  const idx = new Array<number>(nb).fill(0);
  let px = x.offset, py = y.offset, po = out.offset;
  for (let a = nb - 1, rem = first; a >= 0; a--) {
    const i = rem % batchShape[a]!;
    rem = (rem - i) / batchShape[a]!;
    idx[a] = i;
    px += i * x.stride[a]!;
    py += i * y.stride[a]!;
    po += i * out.stride[a]!;
  }
  for (let bi = first; bi < last; bi++) {
    const local: Range = { start: Math.max(start - bi * m, 0), end: Math.min(end - bi * m, m) };
    matmulInto(matrix(x, px), matrix(y, py), matrix(out, po), local);
    for (let a = nb - 1; a >= 0; a--) {
      idx[a] = idx[a]! + 1;
      px += x.stride[a]!;
      py += y.stride[a]!;
      po += out.stride[a]!;
      if (idx[a]! < batchShape[a]!) break;
      idx[a] = 0;
      px -= batchShape[a]! * x.stride[a]!;
      py -= batchShape[a]! * y.stride[a]!;
      po -= batchShape[a]! * out.stride[a]!;
    }
  }
}
