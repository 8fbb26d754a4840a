// WebAssembly SIMD loops of the sparse products (sparse.ts), for contiguous parts and dense
// operands in the pool's memory: the same sums (float64, or a float32 scatter's float32) in the
// same order as the JS loops (each product rounded, then added; no fused multiply-add), so the
// bits are the same either way.
// - rows: rows [r0, r1) of s d for csr s, eight output columns at a time in f64x2 registers.
// - scatter: a run of the stored entries of csc s, each adding its value times its row of d into
//   its row of an accumulator of the product's dtype.
// - regular: where a value's check (sparse/value.ts) must look closer, for parts already in the
//   pool's memory (a pool.from value, checked at every call).
import { attachedMemoryOf } from './gemm-wasm.js';
import { Body, I32, LOW_HALVES, ModuleBuilder, V128 } from './wasm-emit.js';
import { instanceFor } from './wasm-instances.js';
import { isContiguous, type TensorView } from './view.js';

type FloatDtype = 'float32' | 'float64';
/** rows(data, indices, indptr, d, out, r0, r1, n): byte addresses, then counts. */
type Rows = (data: number, indices: number, indptr: number, d: number, out: number, r0: number, r1: number, n: number) => void;
type Scatter = (data: number, indices: number, indptr: number, d: number, acc: number, p0: number, p1: number, c0: number, n: number) => void;

const size = (t: FloatDtype): number => (t === 'float32' ? 4 : 8);
const shift = (t: FloatDtype): number => (t === 'float32' ? 2 : 3);

/** Pushes the element at the address on the stack as an f64. */
function loadOne(b: Body, t: FloatDtype, offset = 0): void {
  if (t === 'float64') b.mem('f64.load', offset);
  else b.mem('f32.load', offset).op('f64.promote_f32');
}

/** Pushes the two elements at the address on the stack as an f64x2. */
function loadPair(b: Body, t: FloatDtype, offset = 0): void {
  if (t === 'float64') b.mem('v128.load', offset);
  else b.mem('v128.load64_zero', offset).op('f64x2.promote_low_f32x4');
}

/** address + index * 2^k, on the stack. */
function at(b: Body, address: number, index: number, k: number): void {
  b.get(address).get(index).i32(k).op('i32.shl').i32Add();
}

/** A counted loop: for (i = from; i < to; i += step) body(), where the caller pushes nothing. */
function forRange(b: Body, i: number, from: () => void, to: number, step: number, body: () => void): void {
  from();
  b.set(i);
  b.block().loop();
  b.get(i).i32(step - 1).i32Add().get(to).op('i32.ge_s').brIf(1);
  body();
  b.get(i).i32(step).i32Add().set(i).br(0);
  b.end().end();
}

function rowsBody(data: FloatDtype, dense: FloatDtype, out: FloatDtype): Body {
  const b = new Body([I32, I32, I32, I32, I32, I32, I32, I32]).hoistConstants();
  const [DATA, IDX, PTR, D, OUT, R0, R1, N] = [0, 1, 2, 3, 4, 5, 6, 7];
  const [r, p, pStart, pEnd, j, row, outRow] = [b.local(I32), b.local(I32), b.local(I32), b.local(I32), b.local(I32), b.local(I32), b.local(I32)];
  const v = b.local(V128);
  const acc = [b.local(V128), b.local(V128), b.local(V128), b.local(V128)];
  const ds = size(dense);
  /** For each stored entry of row r: v = its value (both lanes), row = the address of d[its column, j]. */
  const entries = (body: () => void): void => {
    forRange(b, p, () => b.get(pStart), pEnd, 1, () => {
      at(b, DATA, p, shift(data));
      loadOne(b, data);
      b.op('f64x2.splat').set(v);
      at(b, IDX, p, 2);
      b.mem('i32.load').get(N).op('i32.mul').get(j).i32Add().i32(shift(dense)).op('i32.shl').get(D).i32Add().set(row);
      body();
    });
  };
  const addPair = (a: number, k: number): void => {
    b.get(a).get(v).get(row);
    loadPair(b, dense, k * 2 * ds);
    b.op('f64x2.mul', 'f64x2.add').set(a);
  };
  /** Stores acc[0..count) (pairs) at out[r, j]. */
  const storePairs = (count: number): void => {
    if (out === 'float64') {
      for (let k = 0; k < count; k++) {
        at(b, outRow, j, 3);
        b.get(acc[k]!).mem('v128.store', k * 16);
      }
      return;
    }
    for (let k = 0; k + 1 < count; k += 2) {
      at(b, outRow, j, 2);
      b.get(acc[k]!).op('f32x4.demote_f64x2_zero').get(acc[k + 1]!).op('f32x4.demote_f64x2_zero').shuffle(LOW_HALVES).mem('v128.store', k * 8);
    }
    if (count % 2 === 1) {
      const k = count - 1;
      for (const lane of [0, 1]) {
        at(b, outRow, j, 2);
        b.get(acc[k]!).lane('f64x2.extract_lane', lane).op('f32.demote_f64').mem('f32.store', k * 8 + lane * 4);
      }
    }
  };
  forRange(b, r, () => b.get(R0), R1, 1, () => {
    at(b, PTR, r, 2);
    b.mem('i32.load').set(pStart);
    at(b, PTR, r, 2);
    b.mem('i32.load', 4).set(pEnd);
    b.get(r).get(N).op('i32.mul').i32(shift(out)).op('i32.shl').get(OUT).i32Add().set(outRow);
    b.i32(0).set(j);
    // Eight columns at a time, then two, then one.
    for (const pairs of [4, 1]) {
      b.block().loop();
      b.get(j).i32(2 * pairs).i32Add().get(N).op('i32.gt_s').brIf(1);
      for (let k = 0; k < pairs; k++) b.f64x2(0).set(acc[k]!);
      entries(() => {
        for (let k = 0; k < pairs; k++) addPair(acc[k]!, k);
      });
      storePairs(pairs);
      b.get(j).i32(2 * pairs).i32Add().set(j).br(0);
      b.end().end();
    }
    b.get(j).get(N).op('i32.lt_s').if();
    b.f64x2(0).set(acc[0]!);
    entries(() => {
      b.get(acc[0]!).get(v).get(row);
      loadOne(b, dense);
      b.op('f64x2.splat', 'f64x2.mul', 'f64x2.add').set(acc[0]!);
    });
    at(b, outRow, j, shift(out));
    b.get(acc[0]!).lane('f64x2.extract_lane', 0);
    if (out === 'float32') b.op('f32.demote_f64').mem('f32.store');
    else b.mem('f64.store');
    b.end();
  });
  return b;
}

/**
 * scatter(data, indices, indptr, d, acc, p0, p1, c0, n): for the stored entries [p0, p1) of csc s
 * (entry p0 in outer position c0), each entry (r, c) adds s[r, c] d[c, :] into row r of the
 * accumulator acc (rows of n elements). A float64 acc adds float64 products (f64x2 lanes); a
 * float32 one (all three float32) float32 products (f32x4 lanes), as the JS loop rounds them.
 */
function scatterBody(data: FloatDtype, dense: FloatDtype, acc: FloatDtype): Body {
  const b = new Body([I32, I32, I32, I32, I32, I32, I32, I32, I32]).hoistConstants();
  const [DATA, IDX, PTR, D, ACC, P0, P1, C0, N] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const [p, c, cEnd, j, row, accRow] = [b.local(I32), b.local(I32), b.local(I32), b.local(I32), b.local(I32), b.local(I32)];
  const v = b.local(V128);
  const single = acc === 'float32';
  const lanes = single ? 4 : 2;
  const [vmul, vadd] = single ? (['f32x4.mul', 'f32x4.add'] as const) : (['f64x2.mul', 'f64x2.add'] as const);
  const nextEnd = (): void => {
    at(b, PTR, c, 2);
    b.mem('i32.load', 4).set(cEnd);
  };
  b.get(C0).set(c);
  nextEnd();
  forRange(b, p, () => b.get(P0), P1, 1, () => {
    // The outer position (column of s) of entry p.
    b.block().loop();
    b.get(cEnd).get(p).op('i32.gt_s').brIf(1);
    b.get(c).i32(1).i32Add().set(c);
    nextEnd();
    b.br(0);
    b.end().end();
    at(b, DATA, p, shift(data));
    if (single) b.mem('f32.load').op('f32x4.splat').set(v);
    else {
      loadOne(b, data);
      b.op('f64x2.splat').set(v);
    }
    b.get(c).get(N).op('i32.mul').i32(shift(dense)).op('i32.shl').get(D).i32Add().set(row);
    at(b, IDX, p, 2);
    b.mem('i32.load').get(N).op('i32.mul').i32(shift(acc)).op('i32.shl').get(ACC).i32Add().set(accRow);
    // Four vectors at a time, then one, then the columns left one by one.
    b.i32(0).set(j);
    for (const vectors of [4, 1]) {
      b.block().loop();
      b.get(j).i32(lanes * vectors).i32Add().get(N).op('i32.gt_s').brIf(1);
      for (let k = 0; k < vectors; k++) {
        at(b, accRow, j, shift(acc));
        at(b, accRow, j, shift(acc));
        b.mem('v128.load', k * 16).get(v);
        at(b, row, j, shift(dense));
        if (single) b.mem('v128.load', k * 16);
        else loadPair(b, dense, k * 2 * size(dense));
        b.op(vmul, vadd).mem('v128.store', k * 16);
      }
      b.get(j).i32(lanes * vectors).i32Add().set(j).br(0);
      b.end().end();
    }
    b.block().loop();
    b.get(j).get(N).op('i32.ge_s').brIf(1);
    at(b, accRow, j, shift(acc));
    at(b, accRow, j, shift(acc));
    if (single) b.mem('f32.load').get(v).lane('f32x4.extract_lane', 0);
    else b.mem('f64.load').get(v).lane('f64x2.extract_lane', 0);
    at(b, row, j, shift(dense));
    if (single) b.mem('f32.load').op('f32.mul', 'f32.add').mem('f32.store');
    else {
      loadOne(b, dense);
      b.op('f64.mul', 'f64.add').mem('f64.store');
    }
    b.get(j).i32(1).i32Add().set(j).br(0);
    b.end().end();
  });
  return b;
}

/**
 * regular(indices, indptr, outer, inner, nnz): the first outer position r whose run of entries
 * is not regular, or outer when all are. Regular: indptr[r] <= indptr[r + 1] <= nnz, and the
 * run's indices strictly increasing from 0 or more to less than inner (so in range). Four
 * neighbouring pairs are compared at a time; a run is read only once its bounds are known good.
 */
function regularBody(): Body {
  const b = new Body([I32, I32, I32, I32, I32], [I32]).hoistConstants();
  const [IDX, PTR, OUTER, INNER, NNZ] = [0, 1, 2, 3, 4];
  const [r, start, end, last, k] = [b.local(I32), b.local(I32), b.local(I32), b.local(I32), b.local(I32)];
  const bad = b.local(V128);
  const fail = (): void => {
    b.if();
    b.get(r).op('return');
    b.end();
  };
  forRange(b, r, () => b.i32(0), OUTER, 1, () => {
    at(b, PTR, r, 2);
    b.mem('i32.load').set(start);
    at(b, PTR, r, 2);
    b.mem('i32.load', 4).set(end);
    b.get(end).get(start).op('i32.lt_s').get(end).get(NNZ).op('i32.gt_s').op('i32.or');
    fail();
    b.get(end).get(start).op('i32.gt_s').if();
    b.get(end).i32(1).op('i32.sub').set(last);
    at(b, IDX, start, 2);
    b.mem('i32.load').i32(0).op('i32.lt_s');
    at(b, IDX, last, 2);
    b.mem('i32.load').get(INNER).op('i32.ge_s').op('i32.or');
    fail();
    b.i32x4(0).set(bad);
    forRange(b, k, () => b.get(start), last, 4, () => {
      at(b, IDX, k, 2);
      b.mem('v128.load');
      at(b, IDX, k, 2);
      b.mem('v128.load', 4).op('i32x4.ge_s').get(bad).op('v128.or').set(bad);
    });
    b.get(bad).op('v128.any_true');
    fail();
    b.block().loop();
    b.get(k).get(last).op('i32.ge_s').brIf(1);
    at(b, IDX, k, 2);
    b.mem('i32.load');
    at(b, IDX, k, 2);
    b.mem('i32.load', 4).op('i32.ge_s');
    fail();
    b.get(k).i32(1).i32Add().set(k).br(0);
    b.end().end();
    b.end();
  });
  b.get(OUTER);
  return b;
}

type Regular = (indices: number, indptr: number, outer: number, inner: number, nnz: number) => number;

function regularModuleBytes(): Uint8Array<ArrayBuffer> {
  const module = new ModuleBuilder();
  return module.export('regular', module.function('regular', regularBody)).bytes();
}

/**
 * The first outer position from which a compressed matrix's parts need the entry-by-entry check
 * (sparse/value.ts's), outer when none does; undefined when indices and indptr are not both in
 * a memory this thread attached (the caller checks them all itself).
 */
export function firstIrregularWasm(indices: Int32Array, indptr: Int32Array, inner: number): number | undefined {
  const memory = attachedMemoryOf(indices.buffer);
  if (!memory || attachedMemoryOf(indptr.buffer) !== memory) return undefined;
  const regular = instanceFor(memory, 'sparse-regular', regularModuleBytes, (e) => e['regular'] as Regular);
  return regular(indices.byteOffset, indptr.byteOffset, indptr.length - 1, inner, indices.length);
}

interface SparseLoops {
  readonly rows: Rows;
  readonly scatter: Scatter;
}

/** The module of the loops for these dtypes (data, dense operand, output), exported as `rows` and `scatter`. */
export function sparseModuleBytes(data: FloatDtype, dense: FloatDtype, out: FloatDtype): Uint8Array<ArrayBuffer> {
  const module = new ModuleBuilder();
  module.export('rows', module.function('rows', () => rowsBody(data, dense, out)));
  module.export('scatter', module.function('scatter', () => scatterBody(data, dense, out)));
  return module.bytes();
}

const floatDtype = (a: TensorView['data']): FloatDtype | undefined => (a instanceof Float32Array ? 'float32' : a instanceof Float64Array ? 'float64' : undefined);
const address = (v: TensorView): number => v.data.byteOffset + v.offset * v.data.BYTES_PER_ELEMENT;

/** The loops for these views, when every one is contiguous, of float (and int32) data, in one attached memory. */
function loopsFor(views: readonly TensorView[], data: TensorView, d: TensorView, out: TensorView): SparseLoops | undefined {
  const memory = attachedMemoryOf(data.data.buffer);
  if (!memory || !views.every((x) => attachedMemoryOf(x.data.buffer) === memory && isContiguous(x))) return undefined;
  const [dt, dd, od] = [floatDtype(data.data), floatDtype(d.data), floatDtype(out.data)];
  if (!dt || !dd || !od) return undefined;
  return instanceFor(memory, `sparse|${dt}|${dd}|${od}`, () => sparseModuleBytes(dt, dd, od), (e) => ({ rows: e['rows'] as Rows, scatter: e['scatter'] as Scatter }));
}

/** Rows [r0, r1) of s d (csr s: data, indices, indptr; d; out) in WebAssembly; false, having done nothing, when they are not all in the pool's memory. */
export function csrRowsWasm(data: TensorView, indices: TensorView, indptr: TensorView, d: TensorView, out: TensorView, r0: number, r1: number): boolean {
  const loops = loopsFor([data, indices, indptr, d, out], data, d, out);
  if (!loops) return false;
  loops.rows(address(data), address(indices), address(indptr), address(d), address(out), r0, r1, out.shape[1]!);
  return true;
}

/**
 * Entries [p0, p1) of csc s (entry p0 in outer position c0) scattered into the rows of n elements
 * of `acc`'s array from element `at`, in WebAssembly; false, having done nothing, when the views
 * are not all in the pool's memory, or acc is float32 and an operand is not.
 */
export function cscScatterWasm(data: TensorView, indices: TensorView, indptr: TensorView, d: TensorView, acc: TensorView, at: number, p0: number, p1: number, c0: number, n: number): boolean {
  const single = acc.data instanceof Float32Array;
  if (single && !(data.data instanceof Float32Array && d.data instanceof Float32Array)) return false;
  const loops = loopsFor([data, indices, indptr, d, acc], data, d, acc);
  if (!loops) return false;
  loops.scatter(address(data), address(indices), address(indptr), address(d), acc.data.byteOffset + at * acc.data.BYTES_PER_ELEMENT, p0, p1, c0, n);
  return true;
}
