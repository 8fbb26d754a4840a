// The direct conv kernel at the kernel level, in an attached memory whose output starts as NaN:
// the cases a compiled function may not show because fresh arena memory is already zero.
import t from 'tap';
import '../../src/kernels/conv.js';
import { attachWasmMemory } from '../../src/kernels/gemm-wasm.js';
import { getKernel } from '../../src/kernels/registry.js';
import type { TensorView } from '../../src/kernels/view.js';

const memory = new WebAssembly.Memory({ initial: 4, maximum: 16, shared: true });
attachWasmMemory(memory);
const data = new Float32Array(memory.buffer);
const params = { border: 'valid', pad: [0, 0], stride: [1, 1], dilation: [1, 1], groups: 1, flip: true };

/** A C-order float32 view at element `offset` of the memory. */
function view(offset: number, shape: number[]): TensorView {
  const stride = shape.map((_, a) => shape.slice(a + 1).reduce((p, d) => p * d, 1));
  return { data, offset, shape, stride };
}

t.test('no input channels: the output is written with zeros, not left as it was', async (t) => {
  const out = view(64, [1, 4, 3, 3]);
  data.fill(NaN, 64, 64 + 36);
  getKernel('conv2d')([view(0, [1, 0, 5, 5]), view(0, [4, 0, 3, 3])], [out], params);
  t.ok(data.subarray(64, 64 + 36).every((v) => v === 0), 'zeros');
});

t.test('every element of the range written, none outside it: ranges cutting rows and planes, 4 filters a block', async (t) => {
  const x = view(0, [2, 3, 7, 9]);
  const w = view(512, [6, 3, 3, 3]);
  for (let e = 0; e < 2 * 3 * 7 * 9; e++) data[e] = ((e * 37) % 17) - 8;
  for (let e = 0; e < 6 * 3 * 9; e++) data[512 + e] = ((e * 11) % 7) - 3;
  const out = view(1024, [2, 6, 5, 7]);
  const total = 2 * 6 * 5 * 7;
  data.fill(NaN, 1024, 1024 + total + 8);
  getKernel('conv2d')([x, w], [out], params);
  const whole = Float32Array.from(data.subarray(1024, 1024 + total));
  t.ok(whole.every((v) => Number.isFinite(v)), 'all written');
  t.ok(Number.isNaN(data[1024 + total]!), 'nothing past the end');
  for (const [start, end] of [[3, 38], [38, 211], [211, total], [0, 71]] as const) {
    data.fill(NaN, 1024, 1024 + total + 8);
    getKernel('conv2d')([x, w], [out], params, { start, end });
    const part = data.subarray(1024, 1024 + total);
    t.ok(part.every((v, k) => (k >= start && k < end ? Object.is(v, whole[k]) : Number.isNaN(v))), `range [${start}, ${end}): its elements, the same bits, nothing else`);
  }
});
