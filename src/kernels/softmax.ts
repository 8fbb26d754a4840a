// Softmax kernels along one axis, lane by lane (a lane is the run of elements along the axis at
// one position of the other axes): softmax, log-softmax and the gradient of softmax. Each lane
// subtracts its maximum before exp, so large inputs neither overflow nor lose their largest term;
// sums accumulate in float64 and every element is rounded once, on store. Registered as
// 'softmax', 'logSoftmax' and 'softmaxGrad' (params: { axis }), chunked by lanes along the axis.
import { registerKernel } from './registry.js';
import type { Range, TensorView } from './view.js';

/** exp(x - max) of the current lane, kept in float64 between the two passes. */
let laneBuffer: Float64Array = new Float64Array(256);

function laneScratch(n: number): Float64Array {
  if (laneBuffer.length < n) laneBuffer = new Float64Array(Math.max(n, laneBuffer.length * 2));
  return laneBuffer;
}

/** The number of lanes: the product of the lengths of the other axes. */
export function laneCount(shape: readonly number[], axis: number): number {
  let n = 1;
  shape.forEach((d, a) => {
    if (a !== axis) n *= d;
  });
  return n;
}

/**
 * Calls `lane(p0, p1, p2)` with the offset of the first element of every lane in `range` (all
 * lanes by default, in C order of the other axes) in each of up to three views of one shape.
 */
function forEachLane(
  views: readonly TensorView[],
  axis: number,
  range: Range | undefined,
  lane: (p0: number, p1: number, p2: number) => void,
): void {
  const shape = views[0]!.shape;
  if (shape[axis] === 0) return;
  const outer = shape.flatMap((d, a) => (a === axis ? [] : [d]));
  const strides = views.map((v) => v.stride.filter((_, a) => a !== axis));
  const total = laneCount(shape, axis);
  const start = Math.max(0, range?.start ?? 0);
  const end = Math.min(total, range?.end ?? total);
  if (start >= end) return;
  const nd = outer.length;
  const idx = new Array<number>(nd).fill(0);
  const p = views.map((v) => v.offset);
  for (let a = nd - 1, rem = start; a >= 0; a--) {
    const i = rem % outer[a]!;
    rem = (rem - i) / outer[a]!;
    idx[a] = i;
    for (let k = 0; k < p.length; k++) p[k] = p[k]! + i * strides[k]![a]!;
  }
  for (let l = start; l < end; l++) {
    lane(p[0]!, p[1] ?? 0, p[2] ?? 0);
    for (let a = nd - 1; a >= 0; a--) {
      idx[a] = idx[a]! + 1;
      for (let k = 0; k < p.length; k++) p[k] = p[k]! + strides[k]![a]!;
      if (idx[a]! < outer[a]!) break;
      idx[a] = 0;
      for (let k = 0; k < p.length; k++) p[k] = p[k]! - outer[a]! * strides[k]![a]!;
    }
  }
}

function laneMax(d: TensorView['data'], p: number, s: number, n: number): number {
  let m = -Infinity;
  for (let j = 0; j < n; j++, p += s) {
    const v = d[p]!;
    if (v > m) m = v;
  }
  return m;
}

/** out = exp(x - max) / sum(exp(x - max)) along `axis`; `out` has x's shape. */
export function softmaxInto(x: TensorView, axis: number, out: TensorView, range?: Range): void {
  const n = x.shape[axis]!;
  const xs = x.stride[axis]!;
  const os = out.stride[axis]!;
  const xd = x.data;
  const od = out.data;
  const buf = laneScratch(n);
  forEachLane([x, out], axis, range, (px, po) => {
    const m = laneMax(xd, px, xs, n);
    let sum = 0;
    for (let j = 0, p = px; j < n; j++, p += xs) {
      const e = Math.exp(xd[p]! - m);
      buf[j] = e;
      sum += e;
    }
    for (let j = 0, q = po; j < n; j++, q += os) od[q] = buf[j]! / sum;
  });
}

/** out = x - max - log(sum(exp(x - max))) along `axis`; `out` has x's shape. */
export function logSoftmaxInto(x: TensorView, axis: number, out: TensorView, range?: Range): void {
  const n = x.shape[axis]!;
  const xs = x.stride[axis]!;
  const os = out.stride[axis]!;
  const xd = x.data;
  const od = out.data;
  forEachLane([x, out], axis, range, (px, po) => {
    const m = laneMax(xd, px, xs, n);
    let sum = 0;
    for (let j = 0, p = px; j < n; j++, p += xs) sum += Math.exp(xd[p]! - m);
    const logSum = Math.log(sum);
    for (let j = 0, p = px, q = po; j < n; j++, p += xs, q += os) od[q] = xd[p]! - m - logSum;
  });
}

/** The gradient of softmax: out = (dy - sum(dy * sm)) * sm along `axis`; all three share one shape. */
export function softmaxGradInto(dy: TensorView, sm: TensorView, axis: number, out: TensorView, range?: Range): void {
  const n = dy.shape[axis]!;
  const gs = dy.stride[axis]!;
  const ss = sm.stride[axis]!;
  const os = out.stride[axis]!;
  const gd = dy.data;
  const sd = sm.data;
  const od = out.data;
  forEachLane([dy, sm, out], axis, range, (pg, ps, po) => {
    let dotSum = 0;
    for (let j = 0, p = pg, q = ps; j < n; j++, p += gs, q += ss) dotSum += gd[p]! * sd[q]!;
    for (let j = 0, p = pg, q = ps, r = po; j < n; j++, p += gs, q += ss, r += os) od[r] = (gd[p]! - dotSum) * sd[q]!;
  });
}

registerKernel('softmax', (ins, outs, params, range) => softmaxInto(ins[0]!, params['axis'] as number, outs[0]!, range));
registerKernel('logSoftmax', (ins, outs, params, range) => logSoftmaxInto(ins[0]!, params['axis'] as number, outs[0]!, range));
registerKernel('softmaxGrad', (ins, outs, params, range) =>
  softmaxGradInto(ins[0]!, ins[1]!, params['axis'] as number, outs[0]!, range),
);
