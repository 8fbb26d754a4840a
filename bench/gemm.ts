// The matrix kernel on its own, one thread: GFLOP/s of C = A·B for square float32 and float64
// matrices (1024 by default; `npx tsx bench/gemm.ts [n] [repeats]`), contiguous and with A or B
// transposed, checked against a naive sum on sampled elements before timing: in plain arrays
// (the JS kernel), then float32 in an attached shared WebAssembly memory (the SIMD kernel).
import { gemm } from '../src/kernels/gemm.js';
import { attachWasmMemory, WASM_PACK_BYTES } from '../src/kernels/gemm-wasm.js';
import type { TensorView } from '../src/kernels/view.js';
import { Prng } from '../src/kernels/prng.js';

const n = Number(process.argv[2] ?? 1024);
const repeats = Number(process.argv[3] ?? 7);

/** A shared memory the SIMD kernel may run on (scratch tile at byte 0, packing scratch, then the matrices). */
const memory = new WebAssembly.Memory({ initial: Math.ceil((3 * n * n * 4 + 4096 + WASM_PACK_BYTES) / 65536), maximum: 65536, shared: true });
attachWasmMemory(memory, 0, 4096);
let memoryTop = 4096 + WASM_PACK_BYTES;

function inMemory(length: number): Float32Array {
  const data = new Float32Array(memory.buffer, memoryTop, length);
  memoryTop += length * 4;
  return data;
}

function matrix(ctor: Float32ArrayConstructor | Float64ArrayConstructor | 'shared', rows: number, cols: number, seed: number): TensorView {
  const prng = new Prng(seed);
  const data = ctor === 'shared' ? inMemory(rows * cols) : new ctor(rows * cols);
  for (let i = 0; i < data.length; i++) data[i] = prng.nextFloat() * 2 - 1;
  return { data, offset: 0, shape: [rows, cols], stride: [cols, 1] };
}

function transposed(v: TensorView): TensorView {
  return { data: v.data, offset: v.offset, shape: [v.shape[1]!, v.shape[0]!], stride: [v.stride[1]!, v.stride[0]!] };
}

function at(v: TensorView, i: number, j: number): number {
  return v.data[v.offset + i * v.stride[0]! + j * v.stride[1]!]!;
}

function check(a: TensorView, b: TensorView, c: TensorView, tol: number): void {
  const prng = new Prng(99);
  for (let t = 0; t < 50; t++) {
    const i = Math.floor(prng.nextFloat() * n);
    const j = Math.floor(prng.nextFloat() * n);
    let s = 0;
    for (let p = 0; p < n; p++) s += at(a, i, p) * at(b, p, j);
    if (Math.abs(at(c, i, j) - s) > tol * Math.max(1, Math.abs(s))) {
      throw new Error(`gemm check failed at (${i}, ${j}): got ${at(c, i, j)}, expected ${s}`);
    }
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((p, q) => p - q);
  return s[Math.floor(s.length / 2)]!;
}

function bench(label: string, a: TensorView, b: TensorView, c: TensorView, tol: number): void {
  gemm(a, b, c);
  check(a, b, c, tol);
  const times: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    gemm(a, b, c);
    times.push(performance.now() - t0);
  }
  const ms = median(times);
  const gflops = (2 * n * n * n) / (ms * 1e6);
  console.log(`${label.padEnd(36)} ${ms.toFixed(1).padStart(8)} ms  ${gflops.toFixed(2).padStart(6)} GFLOP/s  (median of ${repeats})`);
}

console.log(`gemm ${n}x${n}x${n}, one thread, Node ${process.version}`);
for (const [name, ctor, tol] of [
  ['float32', Float32Array, 1e-5],
  ['float64', Float64Array, 1e-12],
  ['float32 shared (SIMD)', 'shared', 1e-5],
] as const) {
  const a = matrix(ctor, n, n, 1);
  const b = matrix(ctor, n, n, 2);
  const c = matrix(ctor, n, n, 3);
  bench(`${name} A·B`, a, b, c, tol);
  bench(`${name} A^T·B`, transposed(a), b, c, tol);
  bench(`${name} A·B^T`, a, transposed(b), c, tol);
}
