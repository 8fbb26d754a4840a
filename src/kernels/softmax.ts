// Softmax kernels along one axis, lane by lane (a lane is the run of elements along the axis at
// one position of the other axes): softmax, log-softmax and the gradient of softmax. Each lane
// subtracts its maximum before exp, so large inputs neither overflow nor lose their largest term;
// sums accumulate in float64 in row-partials.ts's order, exp and log are weft's own (vmath; a
// float32 softmax takes x - max and its exp in float32), and every element is rounded once, on
// store. Contiguous lanes in the arena run in WebAssembly
// (softmax-wasm.ts) with the same bits. Registered as 'softmax', 'logSoftmax' and 'softmaxGrad'
// (params: { axis }), chunked by lanes along the axis.
import { attachedMemoryOf, threadBlockOf } from './gemm-wasm.js';
import { forEachLane } from './lanes.js';
import { registerKernel } from './registry.js';
import { sumRow } from './row-partials.js';
import { scalarLib } from './scalar-lib.js';
import { softmaxLanesFor, type SoftmaxLanes } from './softmax-wasm.js';
import { exp32 } from './vmath/float32.js';
import { exp } from './vmath/functions.js';
import type { Range, TensorView } from './view.js';

/** exp(x - max) of the current lane, kept in float64 between the two passes. */
let laneBuffer: Float64Array = new Float64Array(256);

function laneScratch(n: number): Float64Array {
  if (laneBuffer.length < n) laneBuffer = new Float64Array(Math.max(n, laneBuffer.length * 2));
  return laneBuffer;
}

/** The lane's maximum: IEEE's (NaN wins, +0 above -0), which does not depend on the order. */
function laneMax(d: TensorView['data'], p: number, s: number, n: number): number {
  let m = -Infinity;
  for (let j = 0; j < n; j++, p += s) m = Math.max(m, d[p]!);
  return m;
}

/**
 * What the WebAssembly lanes need: views of one float dtype with contiguous lanes, the inputs in
 * an attached memory, and the output there too or staged through this thread's block (a call's
 * fresh output): `scratch` bytes of the block are free for a lane function's float64 scratch.
 * `out(po, write)` runs `write` with the address a lane at output offset po is written to, and
 * copies a staged lane out.
 */
const addressOf = (v: TensorView, p: number): number => v.data.byteOffset + p * v.data.BYTES_PER_ELEMENT;

interface WasmLanes {
  readonly lanes: SoftmaxLanes;
  readonly scratch: number;
  readonly capacity: number;
  readonly out: (po: number, write: (address: number) => void) => void;
}

function wasmLanes(inputs: readonly TensorView[], out: TensorView, axis: number): WasmLanes | undefined {
  const first = inputs[0]!.data;
  const dtype = first instanceof Float64Array ? 'float64' : first instanceof Float32Array ? 'float32' : undefined;
  const views = [...inputs, out];
  if (!dtype || !views.every((v) => v.data.constructor === first.constructor && v.stride[axis] === 1)) return undefined;
  const memory = attachedMemoryOf(first.buffer);
  if (!memory || !inputs.every((v) => attachedMemoryOf(v.data.buffer) === memory)) return undefined;
  const block = threadBlockOf(memory);
  if (!block) return undefined;
  const lanes = softmaxLanesFor(memory, dtype);
  if (attachedMemoryOf(out.data.buffer) === memory) {
    return { lanes, scratch: block.address, capacity: block.bytes >>> 3, out: (po, write) => write(addressOf(out, po)) };
  }
  // Staged: the lane goes to the end of the block, the scratch before it.
  const n = out.shape[axis]!;
  const bytes = n * first.BYTES_PER_ELEMENT;
  // A lane longer than the block stays in the JS lanes.
  if (bytes > block.bytes) return undefined;
  const staging = block.address + block.bytes - bytes;
  const view = dtype === 'float64' ? new Float64Array(memory.buffer, staging, n) : new Float32Array(memory.buffer, staging, n);
  const capacity = Math.floor((block.bytes - bytes) / 8);
  return {
    lanes,
    scratch: block.address,
    capacity,
    out: (po, write) => {
      write(staging);
      out.data.set(view, po);
    },
  };
}

/** out = exp(x - max) / sum(exp(x - max)) along `axis`; `out` has x's shape. */
export function softmaxInto(x: TensorView, axis: number, out: TensorView, range?: Range): void {
  const n = x.shape[axis]!;
  const wasm = wasmLanes([x], out, axis);
  if (wasm && n <= wasm.capacity) {
    forEachLane([x, out], axis, range, (px, po) => wasm.out(po, (o) => wasm.lanes.softmax(addressOf(x, px), n, o, wasm.scratch)));
    return;
  }
  const xs = x.stride[axis]!;
  const os = out.stride[axis]!;
  const xd = x.data;
  const od = out.data;
  const buf = laneScratch(n);
  // float32 lanes: x - m and its exp in float32 arithmetic (as the WebAssembly lanes, four at a time).
  const float32 = xd instanceof Float32Array;
  forEachLane([x, out], axis, range, (px, po) => {
    const m = laneMax(xd, px, xs, n);
    if (float32) for (let j = 0, p = px; j < n; j++, p += xs) buf[j] = exp32(Math.fround(xd[p]! - m));
    else for (let j = 0, p = px; j < n; j++, p += xs) buf[j] = exp(xd[p]! - m);
    const sum = sumRow(0, buf, 0, n);
    for (let j = 0, q = po; j < n; j++, q += os) od[q] = buf[j]! / sum;
  });
}

/** out = x - max - log(sum(exp(x - max))) along `axis`; `out` has x's shape. */
export function logSoftmaxInto(x: TensorView, axis: number, out: TensorView, range?: Range): void {
  const n = x.shape[axis]!;
  const wasm = wasmLanes([x], out, axis);
  if (wasm) {
    forEachLane([x, out], axis, range, (px, po) => wasm.out(po, (o) => wasm.lanes.logSoftmax(addressOf(x, px), n, o)));
    return;
  }
  const xs = x.stride[axis]!;
  const os = out.stride[axis]!;
  const xd = x.data;
  const od = out.data;
  const buf = laneScratch(n);
  forEachLane([x, out], axis, range, (px, po) => {
    const m = laneMax(xd, px, xs, n);
    for (let j = 0, p = px; j < n; j++, p += xs) buf[j] = exp(xd[p]! - m);
    const logSum = scalarLib.log(sumRow(0, buf, 0, n));
    for (let j = 0, p = px, q = po; j < n; j++, p += xs, q += os) od[q] = xd[p]! - m - logSum;
  });
}

/** The gradient of softmax: out = (dy - sum(dy * sm)) * sm along `axis`; all three share one shape. */
export function softmaxGradInto(dy: TensorView, sm: TensorView, axis: number, out: TensorView, range?: Range): void {
  const n = dy.shape[axis]!;
  const wasm = wasmLanes([dy, sm], out, axis);
  if (wasm) {
    forEachLane([dy, sm, out], axis, range, (pg, ps, po) => wasm.out(po, (o) => wasm.lanes.softmaxGrad(addressOf(dy, pg), addressOf(sm, ps), n, o)));
    return;
  }
  const gs = dy.stride[axis]!;
  const ss = sm.stride[axis]!;
  const os = out.stride[axis]!;
  const gd = dy.data;
  const sd = sm.data;
  const od = out.data;
  const buf = laneScratch(n);
  forEachLane([dy, sm, out], axis, range, (pg, ps, po) => {
    for (let j = 0, p = pg, q = ps; j < n; j++, p += gs, q += ss) buf[j] = gd[p]! * sd[q]!;
    const dotSum = sumRow(0, buf, 0, n);
    for (let j = 0, p = pg, q = ps, r = po; j < n; j++, p += gs, q += ss, r += os) od[r] = (gd[p]! - dotSum) * sd[q]!;
  });
}

registerKernel('softmax', (ins, outs, params, range) => softmaxInto(ins[0]!, params['axis'] as number, outs[0]!, range));
registerKernel('logSoftmax', (ins, outs, params, range) => logSoftmaxInto(ins[0]!, params['axis'] as number, outs[0]!, range));
registerKernel('softmaxGrad', (ins, outs, params, range) =>
  softmaxGradInto(ins[0]!, ins[1]!, params['axis'] as number, outs[0]!, range),
);
