// The WebAssembly SIMD float32 matrix product: C = alpha * A·B + beta * C for rows of C, when A
// and B (contiguous rows or columns each) are float32 views of a WebAssembly.Memory
// that this thread has attached (the pool's arena). Register-blocked micro-kernels (up to 5 rows
// x 8 columns in f32x4 accumulators) read 8-column strips of B packed contiguously in scratch,
// and rows of A packed into panels when C is wide enough to repay it; they are emitted at load
// time by wasm-emit.ts; gemm.ts falls back to JS for everything else.
//
// Numerics: each element of C is summed in float32, one product at a time in increasing k (a
// multiply rounded, then an add rounded: no fused multiply-add), in passes of KC_32 deep: C =
// alpha * sum + beta * C in float32 after the first, C = alpha * sum + C after each next one. The order does not depend on the tile, the row range or the thread, so a product
// split across any number of workers is bitwise identical to one call. The JS kernel of gemm.ts
// accumulates in float64 instead; both are within float32's usual error bounds of the exact sum.
import { Body, emitModule, F32, F64, I32, V128, type ExportedFunction, type ValType } from './wasm-emit.js';
import type { TensorView } from './view.js';

/** Rows of C per micro-kernel call when A is read in place (a pointer per row). */
const MR = 4;
/**
 * Rows of C per micro-kernel call when A is packed into panels (one pointer, constant offsets):
 * 10 accumulators, 2 vectors of B and A's broadcasts fit V8's vector registers, where five row
 * pointers did not (the kernel spilled). Measured on a 240x784 by 784x480 product, one thread:
 * 42 GFLOP/s with 4 rows in place, 48 with 5 packed rows; 6 rows spill (26).
 */
const MR_PACKED = 5;
/** Column widths of the micro-kernels: two vectors, one vector, one scalar column (float32; float64 has half the lanes). */
const WIDTHS = [8, 4, 1] as const;
const WIDTHS_64 = [4, 2, 1] as const;
/** float64 products sum k in passes of this many (gemm.ts's KC), so that their bits are the JS kernel's. */
const KC_64 = 1024;
/**
 * float32 products sum k in passes of this many: a pass's strips of B (k x 8) fit the packing
 * scratch, where deeper products read B in place (4 KiB apart, in the same L1 sets) and ran at
 * half the speed. The passes depend on k only, never on the rows or columns a task computes.
 */
const KC_32 = 2048;
/**
 * Bytes of a block of A's rows per pass over B's strips when A is read in place: each strip is
 * packed once per block, so larger blocks pack less (256 rows of depth 1024 measured best, with A
 * streaming from L3). Packed A goes in blocks of WASM_PACK_A_BYTES.
 */
const A_BLOCK_BYTES = 1 << 20;
/** Bytes of per-thread scratch the kernel needs in the memory: one tile of C (MR_PACKED x 8 float32). */
export const WASM_SCRATCH_BYTES = 256;
/**
 * Bytes of per-thread scratch for a block of A's rows packed into panels of MR_PACKED rows: the
 * block is packed once per pass and read by every strip of B, and each strip is packed once per
 * block, so larger blocks pack B less (165 rows of depth 784, 125 of depth 1024). One thread, a
 * 1024-cubed product: 40 GFLOP/s with 256 KiB blocks, 43-44 with 512 KiB or 1 MiB.
 */
export const WASM_PACK_A_BYTES = 512 << 10;
/**
 * C at least this wide packs A: packing reads and writes each element of the block once, which
 * one strip of 8 columns does not repay (W4's products with 10 columns read A in place).
 */
const PACK_A_MIN_COLUMNS = 32;
/**
 * Bytes of per-thread scratch for a packed strip of B (k rows of 8 float32: k up to 2048).
 * Packing only moves B's values (a strip read in place gives the same bits), so a thread without
 * it, or a deeper product, reads B in place: more slowly, as B's rows are often 4 KiB apart and
 * fall into the same L1 sets.
 */
export const WASM_PACK_BYTES = 64 << 10;

type Pack = (src: number, dst: number, k: number, ld: number) => void;
type PackA = (src: number, dst: number, k: number, lda: number, ak: number) => void;
/** alpha and beta: float64 values for the float64 kernels, float32 bits (float32Bits) for the float32 ones. */
type MicroKernel = (a: number, b: number, c: number, k: number, lda: number, ak: number, ldb: number, ldc: number, alpha: number, beta: number) => void;

// ---------------------------------------------------------------------------------------------
// Code generation: one micro-kernel per (rows, width). Parameters are byte addresses and byte
// strides: a, b, c, k, lda (A's step from row to row; for the packed-A kernels, the address of
// the scratch tile instead), ak (A's step along k: 4 for row-major A, lda of the stored matrix for
// a transposed one; unused by the packed-A kernels), ldb, ldc, alpha, beta (float32 bits for the
// float32 kernels).

/** The element type a micro-kernel computes in: float32 (f32x4 lanes) or float64 (f64x2 lanes). */
interface Num {
  readonly name: 'f32' | 'f64';
  readonly bytes: 4 | 8;
  readonly scalar: ValType;
  /** Elements per v128. */
  readonly lanes: 4 | 2;
}
const F32_NUM: Num = { name: 'f32', bytes: 4, scalar: F32, lanes: 4 };
const F64_NUM: Num = { name: 'f64', bytes: 8, scalar: F64, lanes: 2 };
const [PA, PB, PC, PK, PLDA, PAK, PLDB, PLDC, PALPHA, PBETA] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] as const;

/**
 * A micro-kernel for `rows` rows of C by `width` columns. With `packed` (the float32 packed-A
 * kernels: { scale: the index of scaleTile for this width }), A is a panel of `rows` elements
 * per k (packA's layout): one pointer read at constant offsets, stepped by a panel's row; the
 * lda parameter is then the address of this thread's scratch tile and ak is unused. Each
 * element's sum is the same either way.
 */
function microKernel(rows: number, width: number, num: Num = F32_NUM, packed?: { readonly scale: number }): Body {
  const f64 = num.name === 'f64';
  // float32 alpha and beta come as their bits in i32 parameters: float parameters would hold two
  // vector registers through the loop, which the 5-row kernel needs all of.
  const f = new Body([I32, I32, I32, I32, I32, I32, I32, I32, f64 ? F64 : I32, f64 ? F64 : I32]);
  const simd = width >= num.lanes;
  const vecs = simd ? width / num.lanes : 1;
  const lane: ValType = simd ? V128 : num.scalar;
  const step = simd ? 16 : num.bytes;
  const aPtr = packed ? [PA] : [PA, ...Array.from({ length: rows - 1 }, () => f.local(I32))];
  const acc = Array.from({ length: rows }, () => Array.from({ length: vecs }, () => f.local(lane)));
  const bv = Array.from({ length: vecs }, () => f.local(lane));
  const av = f.local(lane);
  const mul = (): Body => (simd ? f.op(f64 ? 'f64x2.mul' : 'f32x4.mul') : f.op(f64 ? 'f64.mul' : 'f32.mul'));
  const add = (): Body => (simd ? f.op(f64 ? 'f64x2.add' : 'f32x4.add') : f.op(f64 ? 'f64.add' : 'f32.add'));
  const load = (offset: number): Body => (simd ? f.v128Load(offset) : f.mem(f64 ? 'f64.load' : 'f32.load', offset));
  const store = (offset: number): Body => (simd ? f.v128Store(offset) : f.mem(f64 ? 'f64.store' : 'f32.store', offset));
  const splat = (): Body => f.op(f64 ? 'f64x2.splat' : 'f32x4.splat');

  if (!packed) for (let r = 1; r < rows; r++) f.get(aPtr[r - 1]!).get(PLDA).i32Add().set(aPtr[r]!);
  // Accumulators start at zero (locals are zero-initialized). The loop runs k times.
  f.block().get(PK).i32Eqz().brIf(0).loop();
  for (let v = 0; v < vecs; v++) {
    f.get(PB);
    load(v * step);
    f.set(bv[v]!);
  }
  for (let r = 0; r < rows; r++) {
    const offset = packed ? r * num.bytes : 0;
    f.get(packed ? PA : aPtr[r]!);
    if (simd && !f64) f.load32Splat(offset);
    else f.mem(f64 ? 'f64.load' : 'f32.load', offset);
    if (simd && f64) splat();
    f.set(av);
    for (let v = 0; v < vecs; v++) {
      f.get(acc[r]![v]!).get(av).get(bv[v]!);
      mul();
      add();
      f.set(acc[r]![v]!);
    }
  }
  if (packed) f.get(PA).i32(rows * num.bytes).i32Add().set(PA);
  else for (let r = 0; r < rows; r++) f.get(aPtr[r]!).get(PAK).i32Add().set(aPtr[r]!);
  f.get(PB).get(PLDB).i32Add().set(PB);
  f.get(PK).i32(1).i32Sub().set(PK).get(PK).brIf(0).end().end();

  if (packed) {
    // The sums are stored as they are: into C when alpha is 1 and beta 0, else into the scratch
    // tile, which scaleTile then combines with C. Any arithmetic on the accumulators here made
    // V8 spill two of them for the whole loop (21 instead of 35 GFLOP/s).
    const general = f.local(I32);
    const ld = f.local(I32);
    f.get(PALPHA).i32(0x3f800000).op('i32.ne').get(PBETA).i32(0x7fffffff).op('i32.and').op('i32.or').set(general);
    f.get(PLDA).get(PC).get(general).op('select').set(PA);
    f.i32(32).get(PLDC).get(general).op('select').set(ld);
    for (let r = 0; r < rows; r++) {
      for (let v = 0; v < vecs; v++) {
        f.get(PA).get(acc[r]![v]!);
        store(v * step);
      }
      if (r + 1 < rows) f.get(PA).get(ld).i32Add().set(PA);
    }
    f.get(general).if();
    f.get(PLDA).get(PC).get(PLDC).get(PALPHA).get(PBETA).i32(rows).call(packed.scale);
    f.end();
    return f;
  }
  // Epilogue: C = alpha * acc (C not read when beta is 0: it may hold NaN), else + beta * C.
  const alpha = f.local(lane);
  const beta = f.local(lane);
  const scalarParam = (p: number): Body => (f64 ? f.get(p) : f.get(p).op('f32.reinterpret_i32'));
  scalarParam(PALPHA);
  if (simd) splat();
  f.set(alpha);
  scalarParam(PBETA);
  if (simd) splat();
  f.set(beta);
  const writeRows = (withBeta: boolean): void => {
    for (let r = 0; r < rows; r++) {
      for (let v = 0; v < vecs; v++) {
        f.get(PC).get(alpha).get(acc[r]![v]!);
        mul();
        if (withBeta) {
          f.get(beta).get(PC);
          load(v * step);
          mul();
          add();
        }
        store(v * step);
      }
      if (r + 1 < rows) f.get(PC).get(PLDC).i32Add().set(PC);
    }
  };
  scalarParam(PBETA);
  if (f64) f.f64(0).op('f64.eq');
  else f.f32(0).f32Eq();
  f.if();
  writeRows(false);
  f.else();
  writeRows(true);
  f.end();
  return f;
}

/**
 * scaleTile(tile, c, ldc, alphaBits, betaBits, rows): `rows` rows of `width` float32 sums in the
 * scratch tile (rows 32 bytes apart) into C: C = alpha * sum, plus beta * C unless beta is 0
 * (C then is not read: it may hold NaN). The operations and their order are the in-place
 * kernels' epilogue's, so the bits are too.
 */
function scaleTile(width: number): Body {
  const f = new Body([I32, I32, I32, I32, I32, I32]);
  const [tile, c, ldc, alphaBits, betaBits, rows] = [0, 1, 2, 3, 4, 5];
  const simd = width >= 4;
  const vecs = simd ? width / 4 : 1;
  const lane: ValType = simd ? V128 : F32;
  const [alpha, beta] = [f.local(lane), f.local(lane)];
  const load = (offset: number): Body => (simd ? f.v128Load(offset) : f.f32Load(offset));
  const store = (offset: number): Body => (simd ? f.v128Store(offset) : f.f32Store(offset));
  const [mul, add] = simd ? (['f32x4.mul', 'f32x4.add'] as const) : (['f32.mul', 'f32.add'] as const);
  f.get(alphaBits).op('f32.reinterpret_i32');
  if (simd) f.f32x4Splat();
  f.set(alpha).get(betaBits).op('f32.reinterpret_i32');
  if (simd) f.f32x4Splat();
  f.set(beta);
  const rowsLoop = (withBeta: boolean): void => {
    f.loop();
    for (let v = 0; v < vecs; v++) {
      f.get(c).get(alpha).get(tile);
      load(v * 16).op(mul);
      if (withBeta) {
        f.get(beta).get(c);
        load(v * 16).op(mul).op(add);
      }
      store(v * 16);
    }
    f.get(tile).i32(32).i32Add().set(tile).get(c).get(ldc).i32Add().set(c);
    f.get(rows).i32(1).i32Sub().tee(rows).brIf(0).end();
  };
  f.get(betaBits).op('f32.reinterpret_i32').f32(0).f32Eq().if();
  rowsLoop(false);
  f.else();
  rowsLoop(true);
  f.end();
  return f;
}

/** pack(src, dst, k, ldb): copies k rows of 32 bytes, ldb bytes apart, to dst contiguously. */
function packStrip(): Body {
  const f = new Body([I32, I32, I32, I32]);
  const [src, dst, k, ldb] = [0, 1, 2, 3];
  f.block().get(k).i32Eqz().brIf(0).loop();
  f.get(dst).get(src).v128Load(0).v128Store(0);
  f.get(dst).get(src).v128Load(16).v128Store(16);
  f.get(src).get(ldb).i32Add().set(src);
  f.get(dst).i32(32).i32Add().set(dst);
  f.get(k).i32(1).i32Sub().set(k).get(k).brIf(0).end().end();
  return f;
}

/**
 * packA(src, dst, k, lda, ak): `rows` rows of float32 A (lda bytes apart, ak bytes from one k to
 * the next: row-major or transposed) into a panel of `rows` elements per k at dst, the layout
 * of the packed-A micro-kernels.
 */
function packPanel(rows: number): Body {
  const f = new Body([I32, I32, I32, I32, I32]);
  const [src, dst, k, lda, ak] = [0, 1, 2, 3, 4];
  const row = [src, ...Array.from({ length: rows - 1 }, () => f.local(I32))];
  for (let r = 1; r < rows; r++) f.get(row[r - 1]!).get(lda).i32Add().set(row[r]!);
  f.block().get(k).i32Eqz().brIf(0).loop();
  for (let r = 0; r < rows; r++) {
    f.get(dst).get(row[r]!).f32Load().f32Store(r * 4);
    f.get(row[r]!).get(ak).i32Add().set(row[r]!);
  }
  f.get(dst).i32(rows * 4).i32Add().set(dst);
  f.get(k).i32(1).i32Sub().set(k).get(k).brIf(0).end().end();
  return f;
}

/**
 * packT(src, dst, k, ld): gathers `width` columns of B stored transposed (each column contiguous,
 * ld bytes apart) into k rows of `width` elements at dst, the layout packStrip gives.
 */
function packTransposed(width: number, num: Num = F32_NUM): Body {
  const f = new Body([I32, I32, I32, I32]);
  const [src, dst, k, ld] = [0, 1, 2, 3];
  const [from, to, left] = [f.local(I32), f.local(I32), f.local(I32)];
  const [loadOp, storeOp] = num.name === 'f64' ? (['f64.load', 'f64.store'] as const) : (['f32.load', 'f32.store'] as const);
  f.block().get(k).i32Eqz().brIf(0);
  for (let s = 0; s < width; s++) {
    f.get(src).set(from).get(dst).i32(num.bytes * s).i32Add().set(to).get(k).set(left);
    f.loop();
    f.get(to).get(from).mem(loadOp).mem(storeOp);
    f.get(from).i32(num.bytes).i32Add().set(from);
    f.get(to).i32(num.bytes * width).i32Add().set(to);
    f.get(left).i32(1).i32Sub().set(left).get(left).brIf(0).end();
    f.get(src).get(ld).i32Add().set(src);
  }
  f.end();
  return f;
}

/**
 * The module's bytes: micro-kernels named `r{rows}w{width}` (float32), `p{rows}w{width}` (float32,
 * A packed) and `d{rows}w{width}` (float64), `pack`, `packA{rows}`, `scale{width}`, and `packT8`,
 * `packT4`, `packT64w4`, `packT64w2`.
 */
export function gemmModuleBytes(): Uint8Array<ArrayBuffer> {
  const functions: ExportedFunction[] = [
    { name: 'pack', body: packStrip() },
    { name: 'packT8', body: packTransposed(8) },
    { name: 'packT4', body: packTransposed(4) },
  ];
  for (let rows = 1; rows <= MR; rows++) {
    for (const width of WIDTHS) functions.push({ name: `r${rows}w${width}`, body: microKernel(rows, width) });
    for (const width of WIDTHS_64) functions.push({ name: `d${rows}w${width}`, body: microKernel(rows, width, F64_NUM) });
  }
  // The packed kernels call scaleTile by its index: its place in this list.
  const scale = new Map(WIDTHS.map((width) => [width, functions.push({ name: `scale${width}`, body: scaleTile(width) }) - 1]));
  for (let rows = 1; rows <= MR_PACKED; rows++) {
    for (const width of WIDTHS) functions.push({ name: `p${rows}w${width}`, body: microKernel(rows, width, F32_NUM, { scale: scale.get(width)! }) });
    functions.push({ name: `packA${rows}`, body: packPanel(rows) });
  }
  functions.push({ name: 'packT64w4', body: packTransposed(4, F64_NUM) }, { name: 'packT64w2', body: packTransposed(2, F64_NUM) });
  return emitModule(functions);
}

// ---------------------------------------------------------------------------------------------
// Memories this thread can run kernels on, found from a typed array's buffer.

interface Attached {
  readonly memory: WebAssembly.Memory;
  /** Kernels by [rows - 1][width index]. */
  readonly kernels: readonly (readonly MicroKernel[])[];
  /** float64 kernels by [rows - 1][width index of WIDTHS_64]. */
  readonly kernels64: readonly (readonly MicroKernel[])[];
  readonly pack: Pack;
  /** Packed-A kernels by [rows - 1][width index], and the packs of A's panels by rows - 1. */
  readonly packedKernels: readonly (readonly MicroKernel[])[];
  readonly packA: readonly PackA[];
  /** Transposing packs by width (8, 4); a single column of a transposed B is contiguous already. */
  readonly packT: ReadonlyMap<number, Pack>;
  /** The same for float64 (widths 4, 2). */
  readonly packT64: ReadonlyMap<number, Pack>;
  /** Byte address of this thread's scratch tile, if it has one. */
  readonly scratch: number | undefined;
  /** Byte address of this thread's WASM_PACK_BYTES for a strip of B, if it has them. */
  readonly packed: number | undefined;
  /** Byte address of this thread's WASM_PACK_A_BYTES for a block of A's panels, if it has them. */
  readonly packedA: number | undefined;
}

let compiled: WebAssembly.Module | undefined;
/** Attached memories (weakly: a pool's memory goes when the pool does); each keeps its entry alive. */
const attachedMemories = new Set<WeakRef<WebAssembly.Memory>>();
const byMemory = new WeakMap<WebAssembly.Memory, Attached>();
/** Every buffer a memory has had (a grown memory's older buffers still address its bytes). */
const byBuffer = new WeakMap<ArrayBufferLike, Attached>();

/**
 * Lets this thread run the WebAssembly kernels on `memory` (the pool's arena). `scratch` is the
 * byte address of WASM_SCRATCH_BYTES reserved for this thread in that memory, needed when C
 * lives outside it; without it such products take the JS path. `packed` is the address of
 * WASM_PACK_BYTES for packing B, `packedA` of WASM_PACK_A_BYTES for packing A (optional: without
 * them B and A are read in place, with the same results).
 */
export function attachWasmMemory(memory: WebAssembly.Memory, scratch?: number, packed?: number, packedA?: number): void {
  compiled ??= new WebAssembly.Module(gemmModuleBytes());
  const exports = new WebAssembly.Instance(compiled, { env: { memory } }).exports;
  const kernels = Array.from({ length: MR }, (_, r) => WIDTHS.map((w) => exports[`r${r + 1}w${w}`] as MicroKernel));
  const pack = exports['pack'] as Pack;
  const packT = new Map([8, 4].map((w) => [w, exports[`packT${w}`] as Pack]));
  const kernels64 = Array.from({ length: MR }, (_, r) => WIDTHS_64.map((w) => exports[`d${r + 1}w${w}`] as MicroKernel));
  const packT64 = new Map([4, 2].map((w) => [w, exports[`packT64w${w}`] as Pack]));
  const packedKernels = Array.from({ length: MR_PACKED }, (_, r) => WIDTHS.map((w) => exports[`p${r + 1}w${w}`] as MicroKernel));
  const packA = Array.from({ length: MR_PACKED }, (_, r) => exports[`packA${r + 1}`] as PackA);
  const entry: Attached = { memory, kernels, kernels64, pack, packedKernels, packA, packT, packT64, scratch, packed, packedA };
  attachedMemories.add(new WeakRef(memory));
  byMemory.set(memory, entry);
  byBuffer.set(memory.buffer, entry);
}

/**
 * `memory.buffer`, recorded as `memory`'s when this thread attached it. Arrays keep the buffer
 * object they were made on when the memory grows, and V8 gives every shared memory a new buffer
 * object whenever any shared memory grows (another pool's, say): each object arrays are made on
 * must be known, or they would silently take the JS loops. Makers of arrays that kernels will
 * see (the arena, MemoryViews) take their buffer from here.
 */
export function bufferOf(memory: WebAssembly.Memory): WebAssembly.Memory['buffer'] {
  const buffer = memory.buffer;
  const entry = byMemory.get(memory);
  if (entry && !byBuffer.has(buffer)) byBuffer.set(buffer, entry);
  return buffer;
}

/** The memory this thread attached whose bytes `buffer` views, if any (other kernels' modules use it). */
export function attachedMemoryOf(buffer: ArrayBufferLike): WebAssembly.Memory | undefined {
  return attachedFor(buffer)?.memory;
}

/**
 * This thread's block of WASM_PACK_BYTES in `memory`, if it has one: kernels run to completion, so
 * any kernel of this thread may use it as scratch between calls (element-wise loops stage their
 * output there when the output lives outside the memory).
 */
export function threadBlockOf(memory: WebAssembly.Memory): { readonly address: number; readonly bytes: number } | undefined {
  const packed = byMemory.get(memory)?.packed;
  return packed === undefined ? undefined : { address: packed, bytes: WASM_PACK_BYTES };
}

function attachedFor(buffer: ArrayBufferLike): Attached | undefined {
  const hit = byBuffer.get(buffer);
  if (hit || !(buffer instanceof SharedArrayBuffer)) return hit;
  // Perhaps a memory grew since: record the current buffers of the attached memories.
  for (const ref of attachedMemories) {
    const memory = ref.deref();
    if (memory === undefined) attachedMemories.delete(ref);
    else byBuffer.set(memory.buffer, byMemory.get(memory)!);
  }
  return byBuffer.get(buffer);
}

// ---------------------------------------------------------------------------------------------
// The driver: blocks of rows, strips of columns, one micro-kernel call per tile.

/** A float32 matrix view's byte address and byte steps along rows (ld) and columns (step). */
interface Layout {
  readonly at: number;
  readonly ld: number;
  readonly step: number;
}

/** The layout of a float32 (or float64) view with contiguous rows, if it is one. */
function rowMajor(v: TensorView, num: Num = F32_NUM): Layout | undefined {
  const d = v.data;
  if (!(num.name === 'f32' ? d instanceof Float32Array : d instanceof Float64Array)) return undefined;
  const [rows, cols] = v.shape as [number, number];
  const [rs, cs] = v.stride as [number, number];
  if ((cs !== 1 && cols > 1) || (rs < 0 && rows > 1)) return undefined;
  return { at: d.byteOffset + v.offset * num.bytes, ld: rows > 1 ? rs * num.bytes : 0, step: num.bytes };
}

/** The layout of a view with contiguous columns (ld one element, step: the stored rows' stride), if it is one. */
function columnMajor(v: TensorView, num: Num = F32_NUM): Layout | undefined {
  const stored = rowMajor({ ...v, shape: [v.shape[1]!, v.shape[0]!], stride: [v.stride[1]!, v.stride[0]!] }, num);
  return stored && { at: stored.at, ld: num.bytes, step: stored.ld };
}

/** The layout of A: contiguous rows, or contiguous columns (a transposed matrix: the kernel steps along k by its row stride). */
function layoutA(a: TensorView, num: Num = F32_NUM): Layout | undefined {
  return rowMajor(a, num) ?? columnMajor(a, num);
}

/** Where one tile of C goes: C itself (in the kernel's memory) or the scratch tile, copied out by JS. */
interface Target {
  readonly direct: boolean;
  readonly c: Layout;
}

/**
 * Rows [start, end) of C = alpha * A·B + beta * C with the WebAssembly kernels, if A, B (and C,
 * or this thread's scratch) are in an attached memory; returns false, having done nothing,
 * otherwise. k must be at least 1 (gemm.ts handles k = 0).
 */
export function gemmWasm(a: TensorView, b: TensorView, c: TensorView, alpha: number, beta: number, start: number, end: number): boolean {
  const ra = layoutA(a);
  const rb = rowMajor(b);
  const bt = rb ? undefined : columnMajor(b);
  const rc = rowMajor(c);
  if (!ra || !(rb ?? bt) || !(c.data instanceof Float32Array) || (c.shape[1]! > 1 && c.stride[1] !== 1)) return false;
  const mem = attachedFor(a.data.buffer);
  if (!mem || attachedFor(b.data.buffer) !== mem) return false;
  const direct = rc !== undefined && attachedFor(c.data.buffer) === mem;
  if (!direct && mem.scratch === undefined) return false;
  const target: Target = direct ? { direct, c: rc } : { direct, c: { at: mem.scratch!, ld: 8 * 4, step: 4 } };
  const tile = direct ? undefined : new Float32Array(mem.memory.buffer, mem.scratch, MR_PACKED * 8);
  const k = a.shape[1]!;
  const n = b.shape[1]!;
  // Deeper products go in passes of KC_32: each pass's strips of B fit the packing scratch.
  const depth = Math.min(k, KC_32);
  const bytes = mem.memory.buffer.byteLength;
  const fits = mem.packed !== undefined && depth * 32 <= WASM_PACK_BYTES && mem.packed + depth * 32 <= bytes;
  const packed = fits ? mem.packed : undefined;
  // A transposed B is always packed (its rows are not contiguous): without scratch, the JS path.
  if (bt && packed === undefined) return false;
  // A wide C reads each block of A once per strip of B: A is then packed into panels of
  // MR_PACKED rows, a block of them at a time in this thread's scratch.
  // (The packed kernels combine C with alpha and beta through the scratch tile.)
  const panelsFit = mem.packedA !== undefined && mem.scratch !== undefined && mem.packedA + WASM_PACK_A_BYTES <= bytes;
  const packedA = panelsFit && n >= PACK_A_MIN_COLUMNS && end - start >= MR_PACKED ? mem.packedA : undefined;
  const mr = packedA === undefined ? MR : MR_PACKED;
  const mc =
    packedA === undefined
      ? Math.max(MR, Math.floor(A_BLOCK_BYTES / (depth * 4 * MR)) * MR)
      : Math.floor(WASM_PACK_A_BYTES / (depth * 4 * MR_PACKED)) * MR_PACKED;
  const kernels = packedA === undefined ? mem.kernels : mem.packedKernels;
  const ldaOrTile = packedA === undefined ? ra.ld : mem.scratch!;
  for (let pc = 0; pc < k; pc += KC_32) {
    const kc = Math.min(KC_32, k - pc);
    // C = alpha * (this pass's sum) + beta * C, then + the next passes' (beta 1).
    const passBeta = pc === 0 ? beta : 1;
    const kAlpha = float32Bits(direct ? alpha : 1);
    const kBeta = float32Bits(direct ? passBeta : 0);
    const aAt = ra.at + pc * ra.step;
    for (let ic = start; ic < end; ic += mc) {
      const icEnd = Math.min(end, ic + mc);
      // Panel p of the block holds rows ic + p * mr on, kc elements deep.
      if (packedA !== undefined) {
        for (let i = ic; i < icEnd; i += mr) mem.packA[Math.min(mr, icEnd - i) - 1]!(aAt + i * ra.ld, packedA + (i - ic) * kc * 4, kc, ra.ld, ra.step);
      }
      let j = 0;
      for (const [wi, width] of WIDTHS.entries()) {
        for (; j + width <= n; j += width) {
          let bAt = rb ? rb.at + pc * rb.ld + j * 4 : bt!.at + j * bt!.step + pc * 4;
          let ldb = rb ? rb.ld : 4;
          const packT = bt && mem.packT.get(width);
          if (packT || (width === 8 && packed !== undefined && icEnd - ic > mr)) {
            (packT ?? mem.pack)(bAt, packed!, kc, rb ? ldb : bt!.step);
            bAt = packed!;
            ldb = width * 4;
          }
          for (let i = ic; i < icEnd; i += mr) {
            const rows = Math.min(mr, icEnd - i);
            const cAt = direct ? target.c.at + i * target.c.ld + j * 4 : target.c.at;
            const rowsAt = packedA === undefined ? aAt + i * ra.ld : packedA + (i - ic) * kc * 4;
            kernels[rows - 1]![wi]!(rowsAt, bAt, cAt, kc, ldaOrTile, ra.step, ldb, target.c.ld, kAlpha, kBeta);
            if (tile) storeTile(tile, c, i, j, rows, width, alpha, passBeta);
          }
        }
      }
    }
  }
  return true;
}

const bitsOf = new Float32Array(1);
const bitsAsInt = new Int32Array(bitsOf.buffer);
/** x rounded to float32, as the bits of an int32 (the float32 kernels' alpha and beta parameters). */
function float32Bits(x: number): number {
  bitsOf[0] = x;
  return bitsAsInt[0]!;
}

/**
 * C's tile at (i, j) = alpha * sums + beta * C, rounded as the kernel's epilogue rounds (each
 * product and the sum to float32: a float64 product or sum of two float32 values rounded once
 * to float32 is the float32 operation's result).
 */
function storeTile(tile: Float32Array, c: TensorView, i: number, j: number, rows: number, width: number, alpha: number, beta: number): void {
  const al = Math.fround(alpha);
  const be = Math.fround(beta);
  const d = c.data;
  const [rs, cs] = c.stride as [number, number];
  for (let r = 0; r < rows; r++) {
    let q = c.offset + (i + r) * rs + j * cs;
    for (let s = 0; s < width; s++, q += cs) {
      const v = Math.fround(al * tile[r * 8 + s]!);
      d[q] = be === 0 ? v : Math.fround(v + Math.fround(be * d[q]!));
    }
  }
}

/**
 * Rows [start, end) of the float64 C = alpha * A·B + beta * C with the f64x2 kernels, when A, B
 * and C are float64 views in an attached memory with contiguous rows (A and B also columns);
 * false, having done nothing, otherwise. k is summed in passes of KC_64 as gemm.ts's kernel sums
 * it, each product and sum rounded in the same order (no fused multiply-add): the bits are the
 * JS kernel's, so a product gives the same bits in or outside the pool's memory.
 */
export function gemmWasm64(a: TensorView, b: TensorView, c: TensorView, alpha: number, beta: number, start: number, end: number): boolean {
  const ra = layoutA(a, F64_NUM);
  const rb = rowMajor(b, F64_NUM);
  const bt = rb ? undefined : columnMajor(b, F64_NUM);
  const rc = rowMajor(c, F64_NUM);
  if (!ra || !(rb ?? bt) || !rc) return false;
  const mem = attachedFor(a.data.buffer);
  if (!mem || attachedFor(b.data.buffer) !== mem || attachedFor(c.data.buffer) !== mem) return false;
  const k = a.shape[1]!;
  const n = b.shape[1]!;
  const packed = mem.packed !== undefined && Math.min(k, KC_64) * 32 <= WASM_PACK_BYTES && mem.packed + Math.min(k, KC_64) * 32 <= mem.memory.buffer.byteLength ? mem.packed : undefined;
  if (bt && packed === undefined) return false;
  const mc = Math.max(MR, Math.floor(A_BLOCK_BYTES / (Math.min(k, KC_64) * 8 * MR)) * MR);
  for (let pc = 0; pc < k; pc += KC_64) {
    const kc = Math.min(KC_64, k - pc);
    const passBeta = pc === 0 ? beta : 1;
    const aAt = ra.at + pc * ra.step;
    for (let ic = start; ic < end; ic += mc) {
      const icEnd = Math.min(end, ic + mc);
      let j = 0;
      for (const [wi, width] of WIDTHS_64.entries()) {
        for (; j + width <= n; j += width) {
          let bAt = rb ? rb.at + pc * rb.ld + j * 8 : bt!.at + j * bt!.step + pc * 8;
          let ldb = rb ? rb.ld : 8;
          const packT = bt && mem.packT64.get(width);
          if (packT || (width === 4 && packed !== undefined && icEnd - ic > MR)) {
            (packT ?? mem.pack)(bAt, packed!, kc, rb ? ldb : bt!.step);
            bAt = packed!;
            ldb = width * 8;
          }
          for (let i = ic; i < icEnd; i += MR) {
            const rows = Math.min(MR, icEnd - i);
            mem.kernels64[rows - 1]![wi]!(aAt + i * ra.ld, bAt, rc.at + i * rc.ld + j * 8, kc, ra.ld, ra.step, ldb, rc.ld, alpha, passBeta);
          }
        }
      }
    }
  }
  return true;
}
