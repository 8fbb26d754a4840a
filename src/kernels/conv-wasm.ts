// The float32 convolution with unit strides and dilation and no padding, in WebAssembly SIMD,
// read straight from the image: no patches matrix. Blocks of 4 filters x 8 output columns (or 1
// filter x 16; then 4 columns, the last ones overlapping) are summed in f32x4 accumulators, one
// product at a time over the taps in the filters' stored order (channel, row, column), a multiply
// rounded and then an add: the order and the roundings of the SIMD gemm over im2col's patches, so
// both paths give the same bits. Padded convolutions reach it padded (rewriting/conv-direct.ts).
import { Body, F32, I32, ModuleBuilder, V128 } from './wasm-emit.js';
import { attachedMemoryOf, threadBlockOf } from './gemm-wasm.js';
import { isContiguous, type TensorView } from './view.js';
import { instanceFor } from './wasm-instances.js';

/**
 * rect(x, w, out, channels, i0, i1, j0, j1, filterBytes, outPlaneBytes, xRowBytes, xPlaneBytes,
 * outRowBytes): outputs [i0, i1) x [j0, j1) of `rows` filters (4 or 1), where x is the byte
 * address of the image's first channel (its rows xRowBytes apart, its channels xPlaneBytes), w of
 * the first filter (the next ones filterBytes apart) and out of the first filter's output plane
 * (its rows outRowBytes apart, the next filters' planes outPlaneBytes).
 */
export type ConvRect = (
  x: number, w: number, out: number, channels: number, i0: number, i1: number, j0: number, j1: number,
  filterBytes: number, outPlaneBytes: number, xRowBytes: number, xPlaneBytes: number, outRowBytes: number,
) => void;

/** What a module is generated for: the filters' taps and the flip (the rest are arguments). */
export interface ConvShape {
  readonly KH: number;
  readonly KW: number;
  readonly flip: boolean;
}

const [PX, PW, POUT, PCH, PI0, PI1, PJ0, PJ1, PFB, POB, PXROW, PXPLANE, POROW] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] as const;

/** The rect function for `rows` filters: per output row, blocks of 16 columns (one filter), 8, 4, then the last columns. */
function rectBody(s: ConvShape, rows: number): Body {
  const f = new Body(Array<typeof I32>(13).fill(I32));
  const taps = s.KH * s.KW;
  const [i, j, xRow, xp, wp, c, op, xTap, fa, xb, fbLeft] = [...Array(11)].map(() => f.local(I32));
  const wRow = Array.from({ length: rows }, () => f.local(I32));
  // One block: acc[r][v] over every channel and tap, then stored into the rows' outputs.
  const block = (width: 16 | 8 | 4 | 1): void => {
    const simd = width > 1;
    const vecs = simd ? width / 4 : 1;
    const acc = Array.from({ length: rows }, () => Array.from({ length: vecs }, () => f.local(simd ? V128 : F32)));
    const xv = Array.from({ length: vecs }, () => f.local(simd ? V128 : F32));
    const wv = f.local(simd ? V128 : F32);
    for (const row of acc) for (const a of row) {
      if (simd) f.f32x4(0);
      else f.f32(0);
      f.set(a);
    }
    // xp: the image at (i, j) of channel c; wp[r]: filter r's channel c.
    f.get(xRow).get(j).i32(2).op('i32.shl').i32Add().set(xp);
    f.get(PW).set(wp);
    f.get(PCH).set(c);
    f.loop();
    for (let r = 0; r < rows; r++) {
      f.get(wp);
      if (r > 0) f.get(PFB).i32(r).op('i32.mul').i32Add();
      f.set(wRow[r]!);
    }
    // The filter rows fa in a loop (the image row a = fa, or KH - 1 - fa flipped), their taps unrolled.
    f.get(xp);
    if (s.flip) f.get(PXROW).i32(s.KH - 1).op('i32.mul').i32Add();
    f.set(xTap).i32(s.KH).set(fa);
    f.loop();
    f.get(xTap);
    if (s.flip) f.i32((s.KW - 1) * 4).i32Add();
    f.set(xb).i32(s.KW).set(fbLeft);
    f.loop();
    for (let v = 0; v < vecs; v++) {
      f.get(xb);
      if (simd) f.v128Load(16 * v);
      else f.f32Load(0);
      f.set(xv[v]!);
    }
    for (let r = 0; r < rows; r++) {
      f.get(wRow[r]!);
      if (simd) f.load32Splat(0);
      else f.f32Load(0);
      f.set(wv);
      for (let v = 0; v < vecs; v++) {
        f.get(acc[r]![v]!).get(wv).get(xv[v]!).op(simd ? 'f32x4.mul' : 'f32.mul').op(simd ? 'f32x4.add' : 'f32.add').set(acc[r]![v]!);
      }
      f.get(wRow[r]!).i32(4).i32Add().set(wRow[r]!);
    }
    f.get(xb).i32(s.flip ? -4 : 4).i32Add().set(xb);
    f.get(fbLeft).i32(1).i32Sub().tee(fbLeft).brIf(0);
    f.end();
    f.get(xTap).get(PXROW).op(s.flip ? 'i32.sub' : 'i32.add').set(xTap);
    f.get(fa).i32(1).i32Sub().tee(fa).brIf(0);
    f.end();
    f.get(xp).get(PXPLANE).i32Add().set(xp);
    f.get(wp).i32(taps * 4).i32Add().set(wp);
    f.get(c).i32(1).i32Sub().tee(c).brIf(0);
    f.end();
    // op: output (i, j) of the first filter.
    f.get(POUT).get(i).get(POROW).op('i32.mul').i32Add().get(j).i32(2).op('i32.shl').i32Add().set(op);
    for (let r = 0; r < rows; r++) {
      for (let v = 0; v < vecs; v++) {
        f.get(op).get(acc[r]![v]!);
        if (simd) f.v128Store(16 * v);
        else f.f32Store(0);
      }
      if (r + 1 < rows) f.get(op).get(POB).i32Add().set(op);
    }
    f.get(j).i32(width).i32Add().set(j);
  };
  // Blocks while `width` more columns fit before j1.
  const blocks = (width: 16 | 8 | 4 | 1): void => {
    f.block().loop();
    f.get(j).i32(width).i32Add().get(PJ1).op('i32.gt_s').brIf(1);
    block(width);
    f.br(0);
    f.end().end();
  };
  f.block().get(PCH).i32Eqz().brIf(0);
  f.get(PI0).set(i);
  f.block().loop();
  f.get(i).get(PI1).op('i32.ge_s').brIf(1);
  f.get(PX).get(i).get(PXROW).op('i32.mul').i32Add().set(xRow);
  f.get(PJ0).set(j);
  // One filter has 16 columns a block, so that four accumulators, not two, hide the adds' latency.
  if (rows === 1) blocks(16);
  blocks(8);
  blocks(4);
  // The last 1-3 columns: a block of 4 ending at j1, which computes 1-3 columns again (the same
  // sums, the same bits) inside this rect, when it is 4 wide; one column at a time otherwise.
  f.get(j).get(PJ1).op('i32.lt_s').if();
  f.get(PJ1).get(PJ0).i32Sub().i32(4).op('i32.ge_s').if();
  f.get(PJ1).i32(4).i32Sub().set(j);
  block(4);
  f.else();
  blocks(1);
  f.end();
  f.end();
  f.get(i).i32(1).i32Add().set(i).br(0);
  f.end().end();
  f.end();
  return f;
}

/** The rect functions for 4 filters and for 1, over `memory`, for images and filters of shape `s`. */
export function convRectsFor(memory: WebAssembly.Memory, s: ConvShape): { readonly four: ConvRect; readonly one: ConvRect } {
  const key = `conv:${s.KH}x${s.KW}:${s.flip ? 'flip' : 'corr'}`;
  return instanceFor(
    memory,
    key,
    () => {
      const m = new ModuleBuilder();
      m.export('four', m.add(rectBody(s, 4)));
      m.export('one', m.add(rectBody(s, 1)));
      return m.bytes();
    },
    (e) => ({ four: e['four'] as ConvRect, one: e['one'] as ConvRect }),
  );
}

/** The bytes a kernel writes to, when the output lives outside the memory: this thread's scratch. */
interface Stage {
  readonly address: number;
  readonly bytes: number;
  readonly memoryBuffer: ArrayBufferLike;
}

/**
 * Elements [start, end) of conv2d's output [N, O, HO, WO] from the image x [N, C, H, W] and the
 * filters w [O, C / groups, KH, KW], when x (rows of consecutive elements) and w (in C order) are
 * float32 in one attached memory and the convolution has unit strides and dilation and no
 * padding; false (nothing written) otherwise. Whole planes of 4 filters of one group go in one
 * call, the rest filter by filter. An output outside the memory is computed in this thread's
 * scratch, a band of rows at a time, and copied out.
 */
export function convDirect(x: TensorView, w: TensorView, out: TensorView, groups: number, flip: boolean, start: number, end: number): boolean {
  if (!(x.data instanceof Float32Array && w.data instanceof Float32Array && out.data instanceof Float32Array)) return false;
  // The image may be any view whose rows are runs (its row and channel strides are arguments).
  if ((x.stride[3] !== 1 && x.shape[3]! > 1) || !isContiguous(w) || !isContiguous(out)) return false;
  const memory = attachedMemoryOf(x.data.buffer);
  if (!memory || attachedMemoryOf(w.data.buffer) !== memory) return false;
  const [sx0, sx1, sx2] = x.stride as [number, number, number];
  const [O, Cg, KH, KW] = w.shape as [number, number, number, number];
  const [, , HO, WO] = out.shape as [number, number, number, number];
  const P = HO * WO;
  // No channels: every sum is empty, and the JS loop writes the zeros.
  if (Cg === 0) return false;
  let stage: Stage | undefined;
  if (attachedMemoryOf(out.data.buffer) !== memory) {
    const block = threadBlockOf(memory);
    if (!block || WO * 4 * 4 > block.bytes) return false;
    stage = { ...block, memoryBuffer: x.data.buffer };
  }
  if (P === 0 || end <= start) return true;
  const { four, one } = convRectsFor(memory, { KH, KW, flip });
  const [xRowBytes, xPlaneBytes, outRowBytes] = [sx2 * 4, sx1 * 4, WO * 4];
  const perGroup = O / groups;
  const filterBytes = Cg * KH * KW * 4;
  const planeBytes = P * 4;
  const data = out.data;
  /** Rows [i0, i1) x columns [j0, j1) of `rows` filters from plane q on. */
  const rect = (fn: ConvRect, rows: number, xAt: number, wAt: number, q: number, i0: number, i1: number, j0: number, j1: number): void => {
    if (!stage) {
      fn(xAt, wAt, data.byteOffset + (out.offset + q * P) * 4, Cg, i0, i1, j0, j1, filterBytes, planeBytes, xRowBytes, xPlaneBytes, outRowBytes);
      return;
    }
    const band = Math.floor(stage.bytes / (rows * WO * 4));
    for (let b0 = i0; b0 < i1; b0 += band) {
      const b1 = Math.min(i1, b0 + band);
      const bandBytes = (b1 - b0) * WO * 4;
      // Element (i, j) of filter r lands at address + r bandBytes + ((i - b0) WO + j) 4.
      fn(xAt, wAt, stage.address - b0 * WO * 4, Cg, b0, b1, j0, j1, filterBytes, bandBytes, xRowBytes, xPlaneBytes, outRowBytes);
      for (let r = 0; r < rows; r++) {
        const staged = new Float32Array(stage.memoryBuffer, stage.address + r * bandBytes, (b1 - b0) * WO);
        const at = out.offset + (q + r) * P + b0 * WO;
        if (j0 === 0 && j1 === WO) data.set(staged, at);
        else for (let i = 0; i < b1 - b0; i++) data.set(staged.subarray(i * WO + j0, i * WO + j1), at + i * WO + j0);
      }
    }
  };
  for (let q = Math.floor(start / P); q * P < end; q++) {
    const n = Math.floor(q / O);
    const o = q % O;
    const g = Math.floor(o / perGroup);
    const xAt = x.data.byteOffset + (x.offset + n * sx0 + g * Cg * sx1) * 4;
    const wAt = w.data.byteOffset + (w.offset + o * Cg * KH * KW) * 4;
    const s = Math.max(start, q * P) - q * P;
    const e = Math.min(end, (q + 1) * P) - q * P;
    if (s === 0 && (q + 4) * P <= end && o % perGroup <= perGroup - 4) {
      rect(four, 4, xAt, wAt, q, 0, HO, 0, WO);
      q += 3;
      continue;
    }
    // Part of one plane: a partial first row, whole rows, a partial last row.
    let i = Math.floor(s / WO);
    const j = s % WO;
    if (j > 0) {
      rect(one, 1, xAt, wAt, q, i, i + 1, j, Math.min(WO, j + e - s));
      i++;
    }
    const last = Math.floor(e / WO);
    if (last > i) rect(one, 1, xAt, wAt, q, i, last, 0, WO);
    if (e % WO > 0 && last >= i) rect(one, 1, xAt, wAt, q, last, last + 1, 0, e % WO);
  }
  return true;
}
