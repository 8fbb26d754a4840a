// The WebAssembly SIMD gemm (float32, and float64 with the JS kernel's bits): the emitter's encodings, the kernel against float64 sums on
// odd shapes, strides and alpha/beta; row ranges in any split equal one call bit for bit (the
// property that makes products identical for any number of workers); C outside the memory goes
// through the scratch tile with the same bits; and a compiled product on 2 workers equals the
// calling thread's.
import t, { type Test } from 'tap';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gemm } from '../../src/kernels/gemm.js';
import { attachWasmMemory, bufferOf, gemmModuleBytes, gemmWasm, gemmWasm64, WASM_PACK_A_BYTES, WASM_PACK_BYTES } from '../../src/kernels/gemm-wasm.js';
import type { TensorView } from '../../src/kernels/view.js';
import { sleb, uleb } from '../../src/kernels/wasm-emit.js';
import { pt, rng, weft } from '../helpers.js';

const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
const SCRATCH = 64;
const PACKED = 4096;
const PACKED_A = PACKED + WASM_PACK_BYTES;
attachWasmMemory(memory, SCRATCH, PACKED, PACKED_A);
let top = PACKED_A + WASM_PACK_A_BYTES;

/** A [rows, cols] float32 matrix in the attached memory with row stride `ld` (>= cols), seeded values. */
function matrix(rows: number, cols: number, seed: number, ld = cols): TensorView {
  const n = Math.max(1, rows * ld);
  top = (top + n * 4 + 63) & ~63;
  if (top > memory.buffer.byteLength) {
    memory.grow(Math.ceil((top - memory.buffer.byteLength) / 65536));
    bufferOf(memory); // recorded, as the arena's views are: arrays made before the growth stay recognized
  }
  const data = new Float32Array(memory.buffer);
  const offset = (top - n * 4) / 4;
  const values = rng(seed).normal([n], { dtype: 'float32' }).data;
  data.set(values, offset);
  return { data, offset, shape: [rows, cols], stride: [ld, 1] };
}

function at(v: TensorView, i: number, j: number): number {
  return v.data[v.offset + i * v.stride[0]! + j * v.stride[1]!]!;
}

function elements(v: TensorView): number[] {
  const out: number[] = [];
  for (let i = 0; i < v.shape[0]!; i++) for (let j = 0; j < v.shape[1]!; j++) out.push(at(v, i, j));
  return out;
}

/**
 * Checks C (computed) against alpha * A·B + beta * C0 in float64, within a float32 bound: each
 * product and partial sum rounds with relative error 2^-24, so the error is at most about
 * (k + 2) * 2^-24 times the sum of absolute terms.
 */
function checkNear(t: Test, a: TensorView, b: TensorView, c: TensorView, c0: number[], alpha: number, beta: number): void {
  const [m, k] = a.shape as [number, number];
  const n = b.shape[1]!;
  let worst = 0;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      let abs = 0;
      for (let p = 0; p < k; p++) {
        s += at(a, i, p) * at(b, p, j);
        abs += Math.abs(at(a, i, p) * at(b, p, j));
      }
      const prior = beta === 0 ? 0 : beta * c0[i * n + j]!;
      const want = alpha * s + prior;
      const bound = (k + 3) * 2 ** -24 * (Math.abs(alpha) * abs + Math.abs(prior)) + 1e-30;
      worst = Math.max(worst, Math.abs(at(c, i, j) - want) / bound);
    }
  }
  t.ok(worst <= 1, `within the float32 bound (worst ${worst.toFixed(3)} of it)`);
}

t.test('LEB128 encodings and a module that validates', async (t) => {
  t.same(uleb(0), [0]);
  t.same(uleb(127), [0x7f]);
  t.same(uleb(128), [0x80, 0x01]);
  t.same(uleb(65536), [0x80, 0x80, 0x04]);
  t.same(sleb(-1), [0x7f]);
  t.same(sleb(63), [0x3f]);
  t.same(sleb(64), [0xc0, 0x00]);
  t.same(sleb(-64), [0x40]);
  t.same(sleb(-65), [0xbf, 0x7f]);
  const bytes = gemmModuleBytes();
  t.ok(WebAssembly.validate(bytes), 'the emitted module validates');
  const names = WebAssembly.Module.exports(new WebAssembly.Module(bytes)).map((e) => e.name);
  t.same(names, [
    'pack',
    'packT8',
    'packT4',
    ...[1, 2, 3, 4].flatMap((r) => [`r${r}w8`, `r${r}w4`, `r${r}w1`, `d${r}w4`, `d${r}w2`, `d${r}w1`]),
    'scale8',
    'scale4',
    'scale1',
    ...[1, 2, 3, 4, 5].flatMap((r) => [`p${r}w8`, `p${r}w4`, `p${r}w1`, `packA${r}`]),
    'packT64w4',
    'packT64w2',
  ]);
  t.same(WebAssembly.Module.imports(new WebAssembly.Module(bytes)), [{ module: 'env', name: 'memory', kind: 'memory' }]);
});

const SHAPES: ReadonlyArray<readonly [number, number, number]> = [
  [1, 1, 1],
  [3, 5, 7],
  [17, 33, 65],
  [64, 64, 64],
  [130, 70, 257],
  [9, 11, 3],
  [6, 1, 2],
  [5, 0, 6],
];

t.test('the kernel against float64 sums on odd shapes', async (t) => {
  SHAPES.forEach(([m, k, n], s) => {
    const a = matrix(m, k, 10 + s);
    const b = matrix(k, n, 20 + s);
    const c = matrix(m, n, 30 + s);
    const c0 = elements(c);
    if (k > 0) t.ok(gemmWasm(a, b, c, 1, 0, 0, m), `${m}x${k}x${n} runs in WebAssembly`);
    else gemm(a, b, c);
    checkNear(t, a, b, c, c0, 1, 0);
    if (k === 0) t.ok(elements(c).every((v) => v === 0), 'k = 0 gives zeros');
  });
});

/** A [rows, cols] float64 matrix in the attached memory (row stride ld), seeded values; and the same values in ordinary memory. */
function matrix64(rows: number, cols: number, seed: number, ld = cols): [TensorView, TensorView] {
  const n = Math.max(1, rows * ld);
  top = (top + n * 8 + 63) & ~63;
  if (top > memory.buffer.byteLength) {
    memory.grow(Math.ceil((top - memory.buffer.byteLength) / 65536));
    bufferOf(memory); // recorded, as the arena's views are: arrays made before the growth stay recognized
  }
  const data = new Float64Array(memory.buffer);
  const offset = (top - n * 8) / 8;
  const values = rng(seed).normal([n]).data as Float64Array;
  data.set(values, offset);
  return [{ data, offset, shape: [rows, cols], stride: [ld, 1] }, { data: Float64Array.from(values), offset: 0, shape: [rows, cols], stride: [ld, 1] }];
}

const transposed = (v: TensorView): TensorView => ({ ...v, shape: [v.shape[1]!, v.shape[0]!], stride: [v.stride[1]!, v.stride[0]!] });

t.test('float64: the f64x2 kernels give the JS kernel\'s bits (k in passes of 1024 too), any layout, alpha and beta, any row split', async (t) => {
  const cases: Array<[number, number, number, boolean, boolean, number, number]> = [
    [1, 1, 1, false, false, 1, 0], [3, 5, 7, false, false, 1, 0], [17, 33, 65, true, false, -1, 1], [64, 64, 64, false, true, 2.5, -0.5],
    [130, 70, 257, true, true, 1, 0], [9, 1500, 6, false, false, 1, 1], [6, 2100, 5, false, true, -1, 1],
  ];
  for (const [m, k, n, ta, tb, alpha, beta] of cases) {
    const [aw, aj] = ta ? matrix64(k, m, 1).map(transposed) as [TensorView, TensorView] : matrix64(m, k, 1);
    const [bw, bj] = tb ? matrix64(n, k, 2).map(transposed) as [TensorView, TensorView] : matrix64(k, n, 2);
    const [cw, cj] = matrix64(m, n, 3);
    t.ok(gemmWasm64(aw, bw, cw, alpha, beta, 0, m), `${m}x${k}x${n}${ta ? ' A^T' : ''}${tb ? ' B^T' : ''}: runs in WebAssembly`);
    gemm(aj, bj, cj, alpha, beta);
    const [got, want] = [elements(cw), elements(cj)];
    t.ok(got.every((v, i) => Object.is(v, want[i])), `${m}x${k}x${n}: the JS kernel's bits`);
    const [pw] = matrix64(m, n, 3);
    const cut = Math.floor(m / 3);
    gemmWasm64(aw, bw, pw, alpha, beta, 0, cut);
    gemmWasm64(aw, bw, pw, alpha, beta, cut, m);
    t.ok(elements(pw).every((v, i) => Object.is(v, got[i])), `${m}x${k}x${n}: split rows, the same bits`);
  }
  const [plain] = [matrix64(4, 4, 5)[1]];
  t.notOk(gemmWasm64(plain, plain, plain, 1, 0, 0, 4), 'outside the memory: not taken (the JS kernel runs)');
});

t.test('row ranges split anywhere equal one call bit for bit', async (t) => {
  const [m, k, n] = [130, 70, 257];
  const a = matrix(m, k, 1);
  const b = matrix(k, n, 2);
  const whole = matrix(m, n, 3);
  gemm(a, b, whole);
  const r = rng(7);
  for (let trial = 0; trial < 4; trial++) {
    const parts = matrix(m, n, 4);
    const cuts = [0, ...Array.from(r.integers([trial + 2], 0, m, 'int32').data).sort((x, y) => x - y), m];
    for (let q = 0; q + 1 < cuts.length; q++) gemm(a, b, parts, 1, 0, { start: cuts[q]!, end: cuts[q + 1]! });
    t.same(elements(parts), elements(whole), `cuts ${cuts.join(', ')}`);
  }
});

t.test('B packed into scratch or read in place: the same bits', async (t) => {
  const [m, k, n] = [70, 90, 45];
  const a = matrix(m, k, 51);
  const b = matrix(k, n, 52);
  const c = matrix(m, n, 53);
  t.ok(gemmWasm(a, b, c, 1, 0, 0, m));
  const strip = new Float32Array(memory.buffer, PACKED, k * 8);
  t.ok(strip.every((v, q) => v === at(b, Math.floor(q / 8), 32 + (q % 8))), 'the last strip of B was packed');
  const plain = new WebAssembly.Memory({ initial: 4, maximum: 65536, shared: true });
  attachWasmMemory(plain, 0);
  const data = new Float32Array(plain.buffer);
  const copy = (v: TensorView, offset: number): TensorView => {
    data.set(elements(v), offset);
    return { data, offset, shape: v.shape, stride: [v.shape[1]!, 1] };
  };
  const c2 = copy(c, 64 + m * k + k * n);
  t.ok(gemmWasm(copy(a, 64), copy(b, 64 + m * k), c2, 1, 0, 0, m));
  t.same(elements(c2), elements(c));
});

t.test('A packed into panels of 5 rows or read in place: the same bits, any layout, depth, row range and alpha/beta', async (t) => {
  // A second memory whose thread has no scratch for A's panels: there A is always read in place.
  const inPlace = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  attachWasmMemory(inPlace, 0, 1024);
  let at2 = 1024 + WASM_PACK_BYTES;
  const copy = (v: TensorView): TensorView => {
    const values = elements(v);
    at2 = (at2 + values.length * 4 + 63) & ~63;
    if (at2 > inPlace.buffer.byteLength) inPlace.grow(Math.ceil((at2 - inPlace.buffer.byteLength) / 65536));
    // Through bufferOf, as the arena makes arrays: V8 gives a shared memory a new buffer object
    // when another one grows (the matrices' memory here), and arrays made on an object never
    // recorded before the next one are not recognized.
    const data = new Float32Array(bufferOf(inPlace));
    const offset = (at2 - values.length * 4) / 4;
    data.set(values, offset);
    return { data, offset, shape: v.shape, stride: [v.shape[1]!, 1] };
  };
  // [m, k, n, A transposed, C outside the memory, alpha, beta, B transposed]
  const cases: Array<[number, number, number, boolean, boolean, number, number, boolean?]> = [
    [130, 70, 257, false, false, 1, 0], // 26 panels; strips of 8, 4 and 1 column
    [83, 784, 64, false, false, 1, 0], // W4's depth; the last panel 3 rows
    [83, 784, 64, true, false, 1, 0], // A transposed (W4's gradient of the first weights)
    [262, 2100, 40, false, false, -0.5, 1.5], // two passes over k (2048 + 52), blocks of 60 rows (the last 22)
    [12, 9, 32, true, true, 2, -1], // C outside the memory: the scratch tile holds 5 rows
    [6, 33, 35, false, true, 1, 0],
    [40, 50, 45, false, false, 1, 0.5], // alpha 1 but beta not 0: the tile and scaleTile, strips of 8, 4 and 1
    [23, 30, 37, false, false, 0.75, -0], // beta -0: C is not read
    [11, 2100, 33, false, false, 1, 0], // the first pass stores sums in C, the second adds to them
    [20, 30, 40, false, false, 1, 0, true], // B transposed: gathered strips, packed A
  ];
  for (const [m, k, n, ta, outside, alpha, beta, tb] of cases) {
    const label = `${m}x${k}x${n}${ta ? ' A^T' : ''}${tb ? ' B^T' : ''}${outside ? ', C outside' : ''}, alpha ${alpha}, beta ${Object.is(beta, -0) ? '-0' : beta}`;
    const a = ta ? transposed(matrix(k, m, 61)) : matrix(m, k, 61);
    const b = tb ? transposed(matrix(n, k, 62)) : matrix(k, n, 62);
    const c0 = matrix(m, n, 63);
    const c = outside ? { data: Float32Array.from(elements(c0)), offset: 0, shape: [m, n], stride: [n, 1] } : c0;
    const want = copy(c0);
    t.ok(gemmWasm(copy(a), copy(b), want, alpha, beta, 0, m), `${label}: in place runs in WebAssembly`);
    t.ok(gemmWasm(a, b, c, alpha, beta, 0, m), `${label}: packed runs in WebAssembly`);
    const bits = elements(want);
    t.ok(elements(c).every((v, i) => Object.is(v, bits[i])), `${label}: the same bits`);
    if (!outside) {
      const panel = new Float32Array(memory.buffer, PACKED_A, 5 * Math.min(k, 2048));
      // The last block of rows (mc rows each, a multiple of 5) was packed last, its first panel first.
      const mc = 5 * Math.floor(WASM_PACK_A_BYTES / (Math.min(k, 2048) * 20));
      const first = Math.floor((m - 1) / mc) * mc;
      const rows = Math.min(5, m - first);
      const pass = k > 2048 ? 2048 : 0;
      const kc = k - pass;
      t.ok(Array.from({ length: rows * kc }, (_, q) => panel[q] === at(a, first + (q % rows), pass + Math.floor(q / rows))).every(Boolean), `${label}: the last block's first panel was packed`);
    }
    const parts = outside ? { ...c, data: Float32Array.from(elements(c0)) } : matrix(m, n, 63);
    const cuts = [0, 1, Math.floor(m / 3), Math.floor(m / 3) + 4, m].filter((x, i, all) => i === 0 || x > all[i - 1]!);
    for (let q = 0; q + 1 < cuts.length; q++) gemm(a, b, parts, alpha, beta, { start: cuts[q]!, end: cuts[q + 1]! });
    t.ok(elements(parts).every((v, i) => Object.is(v, bits[i])), `${label}: rows ${cuts.join(', ')}: the same bits`);
  }
});

t.test('packed A with beta 0 (or -0) never reads C: NaN in C stays out', async (t) => {
  const [m, k, n] = [17, 40, 36];
  const a = matrix(m, k, 81);
  const b = matrix(k, n, 82);
  for (const [alpha, beta] of [[1, 0], [1, -0], [2.5, 0], [-1, -0]] as const) {
    const c = matrix(m, n, 83);
    c.data.fill(NaN, c.offset, c.offset + m * n);
    t.ok(gemmWasm(a, b, c, alpha, beta, 0, m));
    checkNear(t, a, b, c, [], alpha, 0);
    t.notOk(elements(c).some(Number.isNaN), `alpha ${alpha}, beta ${Object.is(beta, -0) ? '-0' : beta}: no NaN`);
  }
});

t.test('C narrower than 32 columns or of 4 rows and fewer: A is read in place', async (t) => {
  for (const [m, n] of [[40, 31], [4, 64]] as const) {
    const k = 50;
    const a = matrix(m, k, 71);
    const b = matrix(k, n, 72);
    const c = matrix(m, n, 73);
    const panel = new Float32Array(memory.buffer, PACKED_A, 8);
    panel.fill(-7);
    t.ok(gemmWasm(a, b, c, 1, 0, 0, m));
    t.ok(panel.every((v) => v === -7), `${m}x${k}x${n}: A's panels untouched`);
    checkNear(t, a, b, c, [], 1, 0);
  }
});

t.test('row strides beyond the width (lda > k, ldb > n, ldc > n)', async (t) => {
  const [m, k, n] = [19, 23, 29];
  const a = matrix(m, k, 5, k + 3);
  const b = matrix(k, n, 6, n + 5);
  const c = matrix(m, n, 7, n + 1);
  const c0 = elements(c);
  t.ok(gemmWasm(a, b, c, 1, 0, 0, m));
  checkNear(t, a, b, c, c0, 1, 0);
  const dense = matrix(m, n, 8);
  gemm(a, b, dense);
  t.same(elements(dense), elements(c), 'the same bits as a contiguous C');
});

t.test('a transposed A (contiguous columns) runs in WebAssembly: the same bits as a copy with contiguous rows', async (t) => {
  const [m, k, n] = [21, 35, 19];
  const stored = matrix(k, m, 31, m + 2);
  const a: TensorView = { ...stored, shape: [m, k], stride: [1, stored.stride[0]!] };
  const b = matrix(k, n, 32);
  const c = matrix(m, n, 33);
  t.ok(gemmWasm(a, b, c, 1, 0, 0, m));
  checkNear(t, a, b, c, [], 1, 0);
  const rows = matrix(m, k, 34);
  for (let i = 0; i < m; i++) for (let p = 0; p < k; p++) rows.data[rows.offset + i * k + p] = at(a, i, p);
  const c2 = matrix(m, n, 35);
  gemm(rows, b, c2);
  t.same(elements(c), elements(c2));
  const parts = matrix(m, n, 36);
  for (const [start, end] of [[0, 5], [5, 6], [6, 21]] as const) gemm(a, b, parts, 1, 0, { start, end });
  t.same(elements(parts), elements(c), 'row ranges');
});

t.test('a transposed B (contiguous columns) is packed by a gather: the same bits as a copy with contiguous rows', async (t) => {
  for (const [m, k, n] of [[21, 35, 19], [9, 1, 13], [6, 40, 3]] as const) {
    const stored = matrix(n, k, 41, k + 1);
    const b: TensorView = { ...stored, shape: [k, n], stride: [1, stored.stride[0]!] };
    const a = matrix(m, k, 42);
    const c = matrix(m, n, 43);
    t.ok(gemmWasm(a, b, c, 1, 0, 0, m), `${m}x${k}x${n}`);
    checkNear(t, a, b, c, [], 1, 0);
    const rows = matrix(k, n, 44);
    for (let p = 0; p < k; p++) for (let j = 0; j < n; j++) rows.data[rows.offset + p * n + j] = at(b, p, j);
    const c2 = matrix(m, n, 45);
    gemm(a, rows, c2);
    t.same(elements(c), elements(c2), 'the same bits');
    const parts = matrix(m, n, 46);
    for (const [start, end] of [[0, 2], [2, 7], [7, m]] as const) gemm(a, b, parts, 1, 0, { start, end });
    t.same(elements(parts), elements(c), 'row ranges');
  }
});

t.test('alpha and beta; beta = 0 never reads C (NaN stays out)', async (t) => {
  const [m, k, n] = [13, 31, 21];
  const a = matrix(m, k, 11);
  const b = matrix(k, n, 12);
  for (const [alpha, beta] of [[2, 0], [0.5, -1.5], [1, 1], [-3, 0.25]] as const) {
    const c = matrix(m, n, 13);
    if (beta === 0) for (let i = 0; i < m * n; i++) c.data[c.offset + i] = NaN;
    const c0 = elements(c);
    gemm(a, b, c, alpha, beta);
    checkNear(t, a, b, c, c0, alpha, beta);
    t.notOk(elements(c).some(Number.isNaN), `alpha ${alpha}, beta ${beta}: no NaN`);
  }
});

t.test('C outside the memory: the scratch tile gives the same bits; no scratch or plain arrays: JS', async (t) => {
  const [m, k, n] = [37, 45, 53];
  const a = matrix(m, k, 21);
  const b = matrix(k, n, 22);
  for (const [alpha, beta] of [[1, 0], [0.75, -2]] as const) {
    const inside = matrix(m, n, 23);
    const outside: TensorView = { data: Float32Array.from(elements(inside)), offset: 0, shape: [m, n], stride: [n, 1] };
    gemm(a, b, inside, alpha, beta);
    t.ok(gemmWasm(a, b, outside, alpha, beta, 0, m));
    t.same(Array.from(outside.data), elements(inside), `alpha ${alpha}, beta ${beta}`);
  }
  const plain = (v: TensorView): TensorView => ({ ...v, data: Float32Array.from(elements(v)), offset: 0, stride: [v.shape[1]!, 1] });
  const c = matrix(m, n, 24);
  t.notOk(gemmWasm(plain(a), plain(b), c, 1, 0, 0, m), 'A and B in plain arrays');
  const other = new WebAssembly.Memory({ initial: 1, maximum: 65536, shared: true });
  attachWasmMemory(other);
  const view = (v: TensorView): TensorView => {
    const data = new Float32Array(other.buffer);
    data.set(elements(v), 0);
    return { data, offset: 0, shape: v.shape, stride: [v.shape[1]!, 1] };
  };
  t.notOk(gemmWasm(view(a), view(a), { data: new Float32Array(m * m), offset: 0, shape: [m, m], stride: [m, 1] }, 1, 0, 0, m), 'no scratch: JS');
  const va = view(a);
  const transposed: TensorView = { ...va, shape: [k, m], stride: [1, k] };
  t.notOk(gemmWasm(va, transposed, { ...va, offset: m * k, shape: [m, m], stride: [m, 1] }, 1, 0, 0, m), 'a transposed B without packing scratch: JS');
  // Growing the memory leaves older views valid: their buffer is still recognized.
  const before = matrix(4, 4, 25);
  memory.grow(1);
  const c2 = matrix(4, 4, 26);
  t.ok(gemmWasm(before, before, c2, 1, 0, 0, 4), 'after growth');
});

t.test('a grown memory whose first buffer was collected is still recognized', async (t) => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const grown = new WebAssembly.Memory({ initial: 1, maximum: 65536, shared: true });
  attachWasmMemory(grown, 0);
  grown.grow(1);
  gc();
  await new Promise((resolve) => setTimeout(resolve, 10));
  gc();
  const data = new Float32Array(grown.buffer);
  data.fill(1, 64, 64 + 3 * 16);
  const v = (offset: number): TensorView => ({ data, offset, shape: [4, 4], stride: [4, 1] });
  t.ok(gemmWasm(v(64), v(80), v(96), 1, 0, 0, 4));
  t.same(Array.from(data.subarray(96, 112)), new Array(16).fill(4));
});

t.test('a compiled float32 product on 2 workers equals the calling thread bit for bit', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.matrix('x', 'float32');
  const y = pt.matrix('y', 'float32');
  const z = x.dot(y);
  const xs = rng(41).normal([150, 90], { dtype: 'float32' });
  const ys = rng(42).normal([90, 77], { dtype: 'float32' });
  const onPool = await weft.compile([x, y], z, { pool, workers: 2 });
  const inline = await weft.compile([x, y], z, { workers: 0 });
  const got = await onPool(xs, ys);
  const want = await inline(xs, ys);
  t.same(Array.from(got.data), Array.from(want.data), 'the same bits');
  // Inputs already in the pool's memory are read in place: the same bits again.
  const again = await onPool(pool.from(xs), pool.from(ys));
  t.same(Array.from(again.data), Array.from(want.data), 'inputs in shared memory');
  const a: TensorView = { data: xs.data, offset: 0, shape: [150, 90], stride: [90, 1] };
  const b: TensorView = { data: ys.data, offset: 0, shape: [90, 77], stride: [77, 1] };
  checkNear(t, a, b, { data: got.data, offset: 0, shape: [150, 77], stride: [77, 1] }, [], 1, 0);
  let differs = 0;
  const f64 = new Float32Array(150 * 77);
  gemm(a, b, { data: f64, offset: 0, shape: [150, 77], stride: [77, 1] });
  for (let i = 0; i < f64.length; i++) if (f64[i] !== got.data[i]) differs++;
  t.ok(differs > 0, `float32 accumulation, not the JS kernel's float64 (${differs} elements differ in the last bits)`);
});

t.test('deep products (k > 2048) run in passes of 2048: within the float32 bound, alpha and beta once, any row split and any layout the same bits', async (t) => {
  const [m, k, n] = [13, 5000, 19];
  const a = matrix(m, k, 61);
  const b = matrix(k, n, 62);
  const c = matrix(m, n, 63);
  const c0 = elements(c);
  t.ok(gemmWasm(a, b, c, 0.5, 2, 0, m), 'WebAssembly runs it');
  checkNear(t, a, b, c, c0, 0.5, 2);
  // Transposed factors: the same passes over the same values give the same bits.
  const storedA = matrix(k, m, 64);
  for (let i = 0; i < m; i++) for (let p = 0; p < k; p++) storedA.data[storedA.offset + p * m + i] = at(a, i, p);
  const aT: TensorView = { ...storedA, shape: [m, k], stride: [1, m] };
  const storedB = matrix(n, k, 65);
  for (let p = 0; p < k; p++) for (let j = 0; j < n; j++) storedB.data[storedB.offset + j * k + p] = at(b, p, j);
  const bT: TensorView = { ...storedB, shape: [k, n], stride: [1, k] };
  const whole = matrix(m, n, 66);
  gemm(a, b, whole);
  for (const [what, x, y] of [['A transposed', aT, b], ['B transposed', a, bT], ['both', aT, bT]] as const) {
    const other = matrix(m, n, 67);
    t.ok(gemmWasm(x, y, other, 1, 0, 0, m), `${what}: WebAssembly`);
    t.same(elements(other), elements(whole), `${what}: the same bits`);
  }
  const parts = matrix(m, n, 68);
  for (const [start, end] of [[0, 4], [4, 5], [5, m]] as const) gemm(a, b, parts, 1, 0, { start, end });
  t.same(elements(parts), elements(whole), 'row ranges');
  // C outside the memory (the scratch tile): the same bits, with beta applied once.
  const outside: TensorView = { data: new Float32Array(c0), offset: 0, shape: [m, n], stride: [n, 1] };
  const inside = matrix(m, n, 69);
  inside.data.set(c0, inside.offset);
  t.ok(gemmWasm(a, b, outside, 0.5, 2, 0, m) && gemmWasm(a, b, inside, 0.5, 2, 0, m));
  t.same(elements(outside), elements(inside), 'the scratch tile: the same bits');
});
