// 2-d convolution of NCHW inputs with OIHW filters (PyTensor's conv2d: padding, strides,
// dilation, groups, flipped or not), and its two gradients. Each kernel computes every element of
// its output on its own, as a sum in a fixed order: 'conv2d' over the input channels of the
// filter's group and the filter's taps; 'conv2dGradInputs' (the gradient with respect to the
// input) over the outputs whose windows cover the element; 'conv2dGradFilters' over the batch
// and the output positions. Chunked by elements, so the same bits come on any number of workers.
import { convDirect } from './conv-wasm.js';
import { registerKernel } from './registry.js';
import { sizeOf, type TensorView } from './view.js';

export interface ConvParams {
  /** PyTensor's border modes: no padding, (k - 1) d, ((k - 1) d + 1) // 2, or `pad`. */
  readonly border: 'valid' | 'full' | 'half' | 'explicit';
  /** Zeros added before and after the rows and the columns (explicit border). */
  readonly pad: readonly [number, number];
  readonly stride: readonly [number, number];
  readonly dilation: readonly [number, number];
  readonly groups: number;
  /** Convolution (the filter flipped, PyTensor's default) rather than cross-correlation. */
  readonly flip: boolean;
}

/** The zeros added before and after the rows and the columns, for filters of kh x kw taps. */
export function convPadding(p: ConvParams, kh: number, kw: number): [number, number] {
  const span = (k: number, d: number): number => (k - 1) * d + 1;
  switch (p.border) {
    case 'valid': return [0, 0];
    case 'full': return [span(kh, p.dilation[0]) - 1, span(kw, p.dilation[1]) - 1];
    case 'half': return [Math.floor(span(kh, p.dilation[0]) / 2), Math.floor(span(kw, p.dilation[1]) / 2)];
    case 'explicit': return [p.pad[0], p.pad[1]];
  }
}

/** The output rows (or columns) of a convolution: floor((n + 2 pad - span) / stride) + 1, span = (k - 1) d + 1. */
export function convLength(n: number, k: number, pad: number, stride: number, dilation: number): number {
  return Math.floor((n + 2 * pad - ((k - 1) * dilation + 1)) / stride) + 1;
}

/** Whether the convolution reads its image as the WebAssembly kernel does: unit strides and dilation, no padding. */
export function isDirect(p: ConvParams, kh: number, kw: number): boolean {
  const [ph, pw] = convPadding(p, kh, kw);
  return p.stride[0] === 1 && p.stride[1] === 1 && p.dilation[0] === 1 && p.dilation[1] === 1 && ph === 0 && pw === 0;
}

/** Element [a, b, c, d] of a 4-d view. */
function at4(v: TensorView): (a: number, b: number, c: number, d: number) => number {
  const [s0, s1, s2, s3] = v.stride as [number, number, number, number];
  const data = v.data;
  const o = v.offset;
  return (a, b, c, d) => data[o + a * s0 + b * s1 + c * s2 + d * s3]!;
}

/** Calls `f(e, i0, i1, i2, i3)` for the elements e in [start, end) of a new contiguous 4-d output. */
function eachElement(out: TensorView, start: number, end: number, f: (e: number, i0: number, i1: number, i2: number, i3: number) => number): void {
  const [, n1, n2, n3] = out.shape as [number, number, number, number];
  for (let e = start; e < end; e++) {
    const i3 = e % n3;
    const i2 = Math.floor(e / n3) % n2;
    const i1 = Math.floor(e / (n3 * n2)) % n1;
    const i0 = Math.floor(e / (n3 * n2 * n1));
    out.data[out.offset + e] = f(e, i0, i1, i2, i3);
  }
}

registerKernel('conv2d', ([x, w], [out], params, range) => {
  const p = params as unknown as ConvParams;
  const [, , H, W] = x!.shape as [number, number, number, number];
  const [O, Cg, KH, KW] = w!.shape as [number, number, number, number];
  const perGroup = O / p.groups;
  const X = at4(x!);
  const F = at4(w!);
  const [ph, pw] = convPadding(p, KH, KW);
  const [sh, sw] = p.stride;
  const [dh, dw] = p.dilation;
  const start = range?.start ?? 0;
  const end = range?.end ?? sizeOf(out!.shape);
  if (isDirect(p, KH, KW) && convDirect(x!, w!, out!, p.groups, p.flip, start, end)) return;
  // The taps in the filters' order; for float32 each product and sum rounded as the WebAssembly
  // kernel rounds them (conv-wasm.ts), so that a thread that cannot run it gives the same bits.
  const round = out!.data instanceof Float32Array ? Math.fround : (v: number): number => v;
  eachElement(out!, start, end, (_e, n, o, i, j) => {
    const c0 = Math.floor(o / perGroup) * Cg;
    let acc = 0;
    for (let c = 0; c < Cg; c++) {
      for (let fa = 0; fa < KH; fa++) {
        const y = i * sh + (p.flip ? KH - 1 - fa : fa) * dh - ph;
        if (y < 0 || y >= H) continue;
        for (let fb = 0; fb < KW; fb++) {
          const z = j * sw + (p.flip ? KW - 1 - fb : fb) * dw - pw;
          if (z < 0 || z >= W) continue;
          acc = round(acc + round(X(n, c0 + c, y, z) * F(o, c, fa, fb)));
        }
      }
    }
    return acc;
  });
});

registerKernel('conv2dGradInputs', ([w, gz], [out], params, range) => {
  const p = params as unknown as ConvParams;
  const [O, Cg, KH, KW] = w!.shape as [number, number, number, number];
  const [, , HO, WO] = gz!.shape as [number, number, number, number];
  const perGroup = O / p.groups;
  const F = at4(w!);
  const G = at4(gz!);
  const [ph, pw] = convPadding(p, KH, KW);
  const [sh, sw] = p.stride;
  const [dh, dw] = p.dilation;
  eachElement(out!, range?.start ?? 0, range?.end ?? sizeOf(out!.shape), (_e, n, ch, y, z) => {
    const g = Math.floor(ch / Cg);
    const c = ch - g * Cg;
    let acc = 0;
    for (let o = g * perGroup; o < (g + 1) * perGroup; o++) {
      for (let a = 0; a < KH; a++) {
        const ti = y + ph - a * dh;
        if (ti < 0 || ti % sh !== 0 || ti / sh >= HO) continue;
        const i = ti / sh;
        const fa = p.flip ? KH - 1 - a : a;
        for (let b = 0; b < KW; b++) {
          const tj = z + pw - b * dw;
          if (tj < 0 || tj % sw !== 0 || tj / sw >= WO) continue;
          acc += G(n, o, i, tj / sw) * F(o, c, fa, p.flip ? KW - 1 - b : b);
        }
      }
    }
    return acc;
  });
});

registerKernel('conv2dGradFilters', ([x, gz], [out], params, range) => {
  const p = params as unknown as ConvParams;
  const [N, , H, W] = x!.shape as [number, number, number, number];
  const [, O, HO, WO] = gz!.shape as [number, number, number, number];
  const [, Cg, KH, KW] = out!.shape as [number, number, number, number];
  const perGroup = O / p.groups;
  const X = at4(x!);
  const G = at4(gz!);
  const [ph, pw] = convPadding(p, KH, KW);
  const [sh, sw] = p.stride;
  const [dh, dw] = p.dilation;
  eachElement(out!, range?.start ?? 0, range?.end ?? sizeOf(out!.shape), (_e, o, c, fa, fb) => {
    const ch = Math.floor(o / perGroup) * Cg + c;
    // The tap (a, b) of the window this filter element multiplies.
    const a = p.flip ? KH - 1 - fa : fa;
    const b = p.flip ? KW - 1 - fb : fb;
    let acc = 0;
    for (let n = 0; n < N; n++) {
      for (let i = 0; i < HO; i++) {
        const y = i * sh + a * dh - ph;
        if (y < 0 || y >= H) continue;
        for (let j = 0; j < WO; j++) {
          const z = j * sw + b * dw - pw;
          if (z < 0 || z >= W) continue;
          acc += G(n, o, i, j) * X(n, ch, y, z);
        }
      }
    }
    return acc;
  });
});
