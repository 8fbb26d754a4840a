// The patches of a convolution as a matrix, and back: 'im2col' lays out each image's windows so
// that a convolution is one matrix product per image (cols[n, g, (c, a, b), (i, j)] is the input
// element that filter tap (a, b) of channel c of group g meets at output position (i, j), zero in
// the padding), and 'col2im' is its transpose (each image element the sum, in tap order, of the
// entries that copied it). Chunked by elements; every element is computed on its own, so the
// same bits come on any number of workers. Inputs after the first are read for their shapes.
// In the arena, im2col's rows are WebAssembly's (im2col-wasm.ts: bulk copies), elsewhere JS loops.
import { convLength, convPadding, type ConvParams } from './conv.js';
import { attachedMemoryOf } from './gemm-wasm.js';
import { im2colRowFor } from './im2col-wasm.js';
import { registerKernel } from './registry.js';
import { sizeOf } from './view.js';

/** What both kernels need of the image [N, C, H, W], the filters and the patches [N, G, K, P]. */
function geometryOf(p: ConvParams, image: readonly number[], filters: readonly number[], cols: readonly number[]) {
  const [, C, H, W] = image as [number, number, number, number];
  const [, , KH, KW] = filters as [number, number, number, number];
  const [, G, K, P] = cols as [number, number, number, number];
  const [ph, pw] = convPadding(p, KH, KW);
  const [sh, sw] = p.stride;
  const [dh, dw] = p.dilation;
  return { C, H, W, KH, KW, G, K, P, Cg: C / G, ph, pw, sh, sw, dh, dw, wo: convLength(W, KW, pw, sw, dw) };
}

registerKernel('im2col', ([x, w], [out], params, range) => {
  const p = params as unknown as ConvParams;
  const { H, W, KH, KW, G, K, P, Cg, ph, pw, sh, sw, dh, dw, wo } = geometryOf(p, x!.shape, w!.shape, out!.shape);
  const [sx0, sx1, sx2, sx3] = x!.stride as [number, number, number, number];
  const src = x!.data;
  const dst = out!.data;
  const start = range?.start ?? 0;
  const end = range?.end ?? sizeOf(out!.shape);
  const memory = attachedMemoryOf(src.buffer);
  const size = src.BYTES_PER_ELEMENT;
  const row4or8 = memory && attachedMemoryOf(dst.buffer) === memory && (size === 4 || size === 8) ? im2colRowFor(memory, size) : undefined;
  // One row of cols (one tap of one channel of one image) at a time, the part of it in the chunk.
  for (let row = Math.floor(start / P); row * P < end; row++) {
    const k = row % K;
    const g = Math.floor(row / K) % G;
    const n = Math.floor(row / (K * G));
    const fb = k % KW;
    const fa = Math.floor(k / KW) % KH;
    const c = Math.floor(k / (KW * KH));
    const a = p.flip ? KH - 1 - fa : fa;
    const b = p.flip ? KW - 1 - fb : fb;
    const plane = x!.offset + n * sx0 + (g * Cg + c) * sx1;
    const rowStart = out!.offset + row * P;
    const from = Math.max(start, row * P) - row * P;
    const to = Math.min(end, (row + 1) * P) - row * P;
    // The columns j whose z = j * sw + shift falls inside the image row: [inside0, inside1).
    const shift = b * dw - pw;
    const inside0 = Math.min(wo, Math.max(0, Math.ceil(-shift / sw)));
    const inside1 = Math.max(inside0, Math.min(wo, Math.floor((W - 1 - shift) / sw) + 1));
    if (row4or8) {
      const bytes = (elements: number): number => elements * size;
      row4or8(src.byteOffset + bytes(plane), dst.byteOffset + bytes(rowStart), from, to, Math.floor(from / wo), wo, H, a * dh - ph, sh, inside0, inside1, bytes(sx2), bytes(shift * sx3), bytes(sw * sx3));
      continue;
    }
    for (let i = Math.floor(from / wo), q = from; q < to; i++) {
      const y = i * sh + a * dh - ph;
      const j0 = q - i * wo;
      const j1 = Math.min(wo, j0 + to - q);
      const at = rowStart + q - j0;
      q += j1 - j0;
      if (y < 0 || y >= H) {
        dst.fill(0, at + j0, at + j1);
        continue;
      }
      const in0 = Math.min(j1, Math.max(j0, inside0));
      const in1 = Math.max(in0, Math.min(j1, inside1));
      if (in0 > j0) dst.fill(0, at + j0, at + in0);
      if (in1 < j1) dst.fill(0, at + in1, at + j1);
      // A loop: rows are short (the output's width), where a subarray per row costs more than it copies.
      const line = plane + y * sx2 + shift * sx3;
      const step = sw * sx3;
      for (let j = in0, from = line + in0 * step; j < in1; j++, from += step) dst[at + j] = src[from]!;
    }
  }
});

// Per scratch row of the image: sums in float64, rounded once into the output.
let rowSums = new Float64Array(0);

registerKernel('col2im', ([cols, , w], [out], params, range) => {
  const p = params as unknown as ConvParams;
  const { C, H, W, KH, KW, P, Cg, ph, pw, sh, sw, dh, dw, wo } = geometryOf(p, out!.shape, w!.shape, cols!.shape);
  const [sc0, sc1, sc2, sc3] = cols!.stride as [number, number, number, number];
  const ho = P / wo;
  const src = cols!.data;
  const dst = out!.data;
  if (rowSums.length < W) rowSums = new Float64Array(W);
  const sums = rowSums;
  const start = range?.start ?? 0;
  const end = range?.end ?? sizeOf(out!.shape);
  // Each image row (n, channel, y) in the chunk: every tap's contributions added in tap order,
  // the order in which a sum per element would take them.
  for (let row = Math.floor(start / W); row * W < end; row++) {
    const y = row % H;
    const ch = Math.floor(row / H) % C;
    const n = Math.floor(row / (H * C));
    const g = Math.floor(ch / Cg);
    const c = ch - g * Cg;
    const z0 = Math.max(start, row * W) - row * W;
    const z1 = Math.min(end, (row + 1) * W) - row * W;
    sums.fill(0, z0, z1);
    const base = cols!.offset + n * sc0 + g * sc1;
    for (let fa = 0; fa < KH; fa++) {
      const ti = y + ph - (p.flip ? KH - 1 - fa : fa) * dh;
      if (ti < 0 || ti % sh !== 0 || ti / sh >= ho) continue;
      for (let fb = 0; fb < KW; fb++) {
        const shift = pw - (p.flip ? KW - 1 - fb : fb) * dw;
        const line = base + ((c * KH + fa) * KW + fb) * sc2 + (ti / sh) * wo * sc3;
        if (sw === 1) {
          // Output column j = z + shift: the elements z with 0 <= j < wo, one run.
          for (let z = Math.max(z0, -shift), zEnd = Math.min(z1, wo - shift), from = line + (z + shift) * sc3; z < zEnd; z++, from += sc3) sums[z] = sums[z]! + src[from]!;
          continue;
        }
        for (let z = z0; z < z1; z++) {
          const tj = z + shift;
          if (tj < 0 || tj % sw !== 0 || tj / sw >= wo) continue;
          sums[z] = sums[z]! + src[line + (tj / sw) * sc3]!;
        }
      }
    }
    const o = out!.offset + row * W;
    for (let z = z0; z < z1; z++) dst[o + z] = sums[z]!;
  }
});
