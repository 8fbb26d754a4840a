// 2-d pooling over the last two axes (PyTensor's Pool and its gradients): windows of ws rows and
// columns every `stride`, on the input padded by `pad` zeros; max, sum, and the averages that
// count the padding (average_inc_pad) or not (average_exc_pad). Windows are PyTensor's: in padded
// coordinates from r * stride, cut at the padded edge, and (but for average_inc_pad) to the real
// elements. 'pool2d' computes each output element; 'pool2dGrad' each input element's gradient, a
// sum over the windows that hold it in a fixed order (max: every element equal to its window's
// maximum gets the window's gradient, as PyTensor's MaxPoolGrad); 'maxPool2dRop' the eval point at
// each window's first maximum; 'maxPool2dGradGrad' the transpose of the max gradient (per window,
// the sum over its elements equal to the maximum). Chunked by elements.
import { registerKernel } from './registry.js';
import { positionOf, sizeOf, type TensorView } from './view.js';

export type PoolMode = 'max' | 'sum' | 'average_inc_pad' | 'average_exc_pad';

export interface PoolParams {
  readonly ws: readonly [number, number];
  readonly stride: readonly [number, number];
  readonly pad: readonly [number, number];
  readonly ignoreBorder: boolean;
  readonly mode: PoolMode;
}

/** The output length along one axis of length n (PyTensor's Pool.out_shape). */
export function poolLength(n: number, ws: number, stride: number, pad: number, ignoreBorder: boolean): number {
  if (ignoreBorder) return Math.floor((n + 2 * pad - ws) / stride) + 1;
  if (stride >= ws) return Math.floor((n - 1) / stride) + 1;
  return Math.max(0, Math.floor((n - 1 - ws + stride) / stride)) + 1;
}

/** Window r's [start, end) along an axis of length n, in padded coordinates. */
function windowOf(r: number, n: number, p: PoolParams, a: 0 | 1): [number, number] {
  const padded = n + 2 * p.pad[a];
  let start = r * p.stride[a];
  let end = Math.min(start + p.ws[a], padded);
  if (p.mode !== 'average_inc_pad') {
    start = Math.max(start, p.pad[a]);
    end = Math.min(end, n + p.pad[a]);
  }
  return [start, end];
}

/** Where plane k (in C order of the leading axes) of a view's last two axes starts. */
function planeOffset(v: TensorView, k: number): number {
  return positionOf(v.shape, v.stride, v.offset, k, v.shape.length - 2);
}

registerKernel('pool2d', ([x], [out], params, range) => {
  const p = params as unknown as PoolParams;
  const nd = x!.shape.length;
  const [H, W] = [x!.shape[nd - 2]!, x!.shape[nd - 1]!];
  const [HO, WO] = [out!.shape[nd - 2]!, out!.shape[nd - 1]!];
  const [s0, s1] = [x!.stride[nd - 2]!, x!.stride[nd - 1]!];
  const [ph, pw] = p.pad;
  const o = out!;
  const data = x!.data;
  for (let e = range?.start ?? 0, end = range?.end ?? sizeOf(o.shape); e < end; e++) {
    const j = e % WO;
    const i = Math.floor(e / WO) % HO;
    const base = planeOffset(x!, Math.floor(e / (WO * HO)));
    const [r0, r1] = windowOf(i, H, p, 0);
    const [c0, c1] = windowOf(j, W, p, 1);
    let acc = p.mode === 'max' ? -Infinity : 0;
    for (let y = r0; y < r1; y++) {
      for (let z = c0; z < c1; z++) {
        // Padding is zeros (only average_inc_pad windows reach it).
        const inside = y >= ph && y < H + ph && z >= pw && z < W + pw;
        const v = inside ? data[base + (y - ph) * s0 + (z - pw) * s1]! : 0;
        acc = p.mode === 'max' ? (v > acc || v !== v ? v : acc) : acc + v;
      }
    }
    const count = (r1 - r0) * (c1 - c0);
    o.data[o.offset + e] = p.mode === 'average_inc_pad' || p.mode === 'average_exc_pad' ? acc / count : acc;
  }
});

registerKernel('pool2dGrad', ([x, maxout, gz], [out], params, range) => {
  const p = params as unknown as PoolParams;
  const nd = x!.shape.length;
  const [H, W] = [x!.shape[nd - 2]!, x!.shape[nd - 1]!];
  const [HO, WO] = [gz!.shape[nd - 2]!, gz!.shape[nd - 1]!];
  const [ph, pw] = p.pad;
  const o = out!;
  const g = gz!;
  const m = maxout!;
  const [gs0, gs1] = [g.stride[nd - 2]!, g.stride[nd - 1]!];
  const [ms0, ms1] = [m.stride[nd - 2]!, m.stride[nd - 1]!];
  const [xs0, xs1] = [x!.stride[nd - 2]!, x!.stride[nd - 1]!];
  // The windows along an axis that may hold padded coordinate q: r with r * stride <= q < r * stride + ws.
  const windows = (q: number, a: 0 | 1, count: number): [number, number] => [Math.max(0, Math.ceil((q - p.ws[a] + 1) / p.stride[a])), Math.min(count - 1, Math.floor(q / p.stride[a]))];
  for (let e = range?.start ?? 0, end = range?.end ?? sizeOf(o.shape); e < end; e++) {
    const z = e % W;
    const y = Math.floor(e / W) % H;
    const plane = Math.floor(e / (W * H));
    const [gb, mb, xb] = [planeOffset(g, plane), planeOffset(m, plane), planeOffset(x!, plane)];
    const v = x!.data[xb + y * xs0 + z * xs1]!;
    const [py, pz] = [y + ph, z + pw];
    const [i0, i1] = windows(py, 0, HO);
    const [j0, j1] = windows(pz, 1, WO);
    let acc = 0;
    for (let i = i0; i <= i1; i++) {
      const [r0, r1] = windowOf(i, H, p, 0);
      if (py < r0 || py >= r1) continue;
      for (let j = j0; j <= j1; j++) {
        const [c0, c1] = windowOf(j, W, p, 1);
        if (pz < c0 || pz >= c1) continue;
        const gv = g.data[gb + i * gs0 + j * gs1]!;
        if (p.mode === 'max') {
          if (m.data[mb + i * ms0 + j * ms1] === v) acc += gv;
        } else if (p.mode === 'sum') acc += gv;
        else acc += gv / ((r1 - r0) * (c1 - c0));
      }
    }
    o.data[o.offset + e] = acc;
  }
});

/**
 * For each output element e in range of a max pooling of x (out has the pooled shape), calls
 * `value(e, i, j, plane, visit)`, whose `visit(f)` calls f(xValue, y, z) for the window's real
 * elements in order (y, z: their row and column in x), and stores what `value` returns.
 */
function eachWindow(
  x: TensorView,
  out: TensorView,
  p: PoolParams,
  range: { readonly start?: number; readonly end?: number } | undefined,
  value: (i: number, j: number, plane: number, visit: (f: (v: number, y: number, z: number) => void) => void) => number,
): void {
  const nd = x.shape.length;
  const [H, W] = [x.shape[nd - 2]!, x.shape[nd - 1]!];
  const [HO, WO] = [out.shape[nd - 2]!, out.shape[nd - 1]!];
  const [s0, s1] = [x.stride[nd - 2]!, x.stride[nd - 1]!];
  const [ph, pw] = p.pad;
  for (let e = range?.start ?? 0, end = range?.end ?? sizeOf(out.shape); e < end; e++) {
    const j = e % WO;
    const i = Math.floor(e / WO) % HO;
    const plane = Math.floor(e / (WO * HO));
    const base = planeOffset(x, plane);
    const [r0, r1] = windowOf(i, H, p, 0);
    const [c0, c1] = windowOf(j, W, p, 1);
    // Max windows hold only real elements (no padding).
    out.data[out.offset + e] = value(i, j, plane, (f) => {
      for (let y = r0 - ph; y < r1 - ph; y++) for (let z = c0 - pw; z < c1 - pw; z++) f(x.data[base + y * s0 + z * s1]!, y, z);
    });
  }
}

registerKernel('maxPool2dRop', ([x, ev], [out], params, range) => {
  const nd = x!.shape.length;
  const [e0, e1] = [ev!.stride[nd - 2]!, ev!.stride[nd - 1]!];
  eachWindow(x!, out!, params as unknown as PoolParams, range, (_i, _j, plane, visit) => {
    // The eval point at the window's first maximum.
    let [best, at] = [-Infinity, -1];
    visit((v, y, z) => {
      if (v > best || (at < 0 && v !== v)) [best, at] = [v, y * e0 + z * e1];
    });
    return at < 0 ? 0 : ev!.data[planeOffset(ev!, plane) + at]!;
  });
});

registerKernel('maxPool2dGradGrad', ([x, maxout, h], [out], params, range) => {
  const nd = x!.shape.length;
  const [h0, h1] = [h!.stride[nd - 2]!, h!.stride[nd - 1]!];
  const [m0, m1] = [maxout!.stride[nd - 2]!, maxout!.stride[nd - 1]!];
  eachWindow(x!, out!, params as unknown as PoolParams, range, (i, j, plane, visit) => {
    // The transpose of pool2dGrad's max case: h summed over the window's elements equal to its maximum.
    const m = maxout!.data[planeOffset(maxout!, plane) + i * m0 + j * m1]!;
    const hb = planeOffset(h!, plane);
    let acc = 0;
    visit((v, y, z) => {
      if (v === m) acc += h!.data[hb + y * h0 + z * h1]!;
    });
    return acc;
  });
});
