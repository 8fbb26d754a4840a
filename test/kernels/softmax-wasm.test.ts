// The WebAssembly lanes of softmax, log-softmax and softmax's gradient (kernels/softmax-wasm.ts,
// issue 12): on views in the arena (where they run) against the same views over a plain copy
// (where the JS lanes run), bit for bit, for lanes of every length around the eight partials and
// the four-element stores, ranges of lanes cut anywhere, awkward values, outputs in the arena and
// staged (outside it); and the values against the textbook formula.
import t from 'tap';
import { logSoftmaxInto, softmaxGradInto, softmaxInto } from '../../src/kernels/softmax.js';
import { softmaxLanesFor } from '../../src/kernels/softmax-wasm.js';
import type { TensorView } from '../../src/kernels/view.js';
import { Arena } from '../../src/workers/arena.js';
import { rng, sameNumber } from '../helpers.js';
import { attachedMemoryOf, threadBlockOf } from '../../src/kernels/gemm-wasm.js';

const arena = new Arena(1 << 24);
type FloatDtype = 'float32' | 'float64';
const ARRAY = { float32: Float32Array, float64: Float64Array } as const;

/** The same values in the arena and in plain memory, rows of `n`, with awkward rows mixed in. */
function pair(dtype: FloatDtype, rows: number, n: number, seed: number, awkward: boolean): [TensorView, TensorView] {
  const g = rng(seed).normal([rows * n]).data as Float64Array;
  const inArena = arena.array(dtype, rows * n) as Float32Array | Float64Array;
  inArena.set(Float64Array.from(g, (v, i) => v * 4));
  if (awkward && rows >= 4 && n > 0) {
    inArena[0] = NaN; // row 0: NaN
    inArena[n] = Infinity; // row 1: +inf
    inArena.fill(-Infinity, 2 * n, 3 * n); // row 2: all -inf
    inArena[3 * n] = 1e30; // row 3: one huge value
  }
  const view = { offset: 0, shape: [rows, n], stride: [n, 1] };
  return [{ ...view, data: inArena }, { ...view, data: new ARRAY[dtype](inArena) }];
}

function output(dtype: FloatDtype, like: TensorView, inArena: boolean): TensorView {
  const size = like.shape[0]! * like.shape[1]!;
  return { offset: 0, shape: like.shape, stride: like.stride, data: inArena ? arena.array(dtype, size) : new ARRAY[dtype](size) };
}

function differing(a: TensorView, b: TensorView): number {
  let bad = 0;
  for (let i = 0; i < a.data.length; i++) if (!sameNumber(a.data[i]!, b.data[i]!)) bad++;
  return bad;
}

// The arena's views take the WebAssembly lanes (softmax.ts: an attached memory with a thread
// block), so the comparisons below are of the wasm lanes with the JS ones, not of JS with JS.
t.ok(attachedMemoryOf(arena.memory.buffer) === arena.memory && threadBlockOf(arena.memory) !== undefined, "the arena is attached, with this thread's block");

t.test('lanes of every length, ranges of lanes cut anywhere: the bits of the JS lanes', async (t) => {
  for (const dtype of ['float32', 'float64'] as const) {
    // 20000: a float32 lane longer than the thread's block, whose staged output the JS lanes take.
    for (const n of [...Array(41).keys(), 100, 1000, 1027, 20_000]) {
      const rows = 5;
      const [x, plainX] = pair(dtype, rows, n, 10 + n, true);
      const [dy, plainDy] = pair(dtype, rows, n, 500 + n, false);
      const cuts = [0, 1 + (n % 3), rows];
      const kinds = [
        ['softmax', (a: TensorView[], o: TensorView, r?: { start: number; end: number }) => softmaxInto(a[0]!, 1, o, r)],
        ['logSoftmax', (a: TensorView[], o: TensorView, r?: { start: number; end: number }) => logSoftmaxInto(a[0]!, 1, o, r)],
        ['softmaxGrad', (a: TensorView[], o: TensorView, r?: { start: number; end: number }) => softmaxGradInto(a[1]!, a[0]!, 1, o, r)],
      ] as const;
      for (const [name, run] of kinds) {
        const wasm = output(dtype, x, true);
        const js = output(dtype, x, false);
        // A fresh output outside the arena (a call's): the lanes are staged in the thread's block.
        const staged = output(dtype, x, false);
        for (let c = 0; c + 1 < cuts.length; c++) {
          run([x, dy], wasm, { start: cuts[c]!, end: cuts[c + 1]! });
          run([x, dy], staged, { start: cuts[c]!, end: cuts[c + 1]! });
        }
        run([plainX, plainDy], js);
        t.equal(differing(wasm, js), 0, `${dtype} ${name} of lanes of ${n}`);
        t.equal(differing(staged, js), 0, `${dtype} ${name} of lanes of ${n}, staged output`);
      }
    }
  }
});

t.test('the values: the textbook formulas, and a lane with NaN, +inf, all -inf, a huge value', async (t) => {
  const n = 37;
  const [x] = pair('float64', 6, n, 3, true);
  const sm = output('float64', x, true);
  const lsm = output('float64', x, true);
  softmaxInto(x, 1, sm);
  logSoftmaxInto(x, 1, lsm);
  for (let r = 4; r < 6; r++) {
    const row = Array.from({ length: n }, (_, j) => x.data[r * n + j]!);
    const m = Math.max(...row);
    const z = row.reduce((a, v) => a + Math.exp(v - m), 0);
    let worst = 0;
    for (let j = 0; j < n; j++) {
      worst = Math.max(worst, Math.abs(sm.data[r * n + j]! - Math.exp(row[j]! - m) / z), Math.abs(lsm.data[r * n + j]! - (row[j]! - m - Math.log(z))));
    }
    t.ok(worst < 1e-14, `row ${r}: within 1e-14 of the formulas (${worst})`);
  }
  t.ok(Array.from({ length: n }, (_, j) => sm.data[j]!).every(Number.isNaN), 'a lane with NaN is NaN');
  t.same(Array.from({ length: n }, (_, j) => sm.data[n + j]!).map((v) => (Number.isNaN(v) ? 'NaN' : v)), Array(n).fill('NaN'), 'a lane with +inf is NaN (inf - inf), as NumPy gives');
  t.ok(Array.from({ length: n }, (_, j) => sm.data[2 * n + j]!).every(Number.isNaN), 'a lane of -inf is NaN');
  t.equal(sm.data[3 * n], 1, 'a huge value takes all the weight');
  t.equal(sm.data[3 * n + 1], 0);
});

t.test('the WebAssembly lanes called directly: the bits of the JS lanes (so the comparisons above test them)', async (t) => {
  for (const dtype of ['float32', 'float64'] as const) {
    const n = 45;
    const [x, plainX] = pair(dtype, 1, n, 77, false);
    const out = output(dtype, x, true);
    const scratch = arena.array('float64', n);
    softmaxLanesFor(arena.memory, dtype).softmax(x.data.byteOffset, n, out.data.byteOffset, scratch.byteOffset);
    const js = output(dtype, x, false);
    softmaxInto(plainX, 1, js);
    t.equal(differing(out, js), 0, `${dtype} softmax`);
    const log = output(dtype, x, true);
    softmaxLanesFor(arena.memory, dtype).logSoftmax(x.data.byteOffset, n, log.data.byteOffset);
    logSoftmaxInto(plainX, 1, js);
    t.equal(differing(log, js), 0, `${dtype} log-softmax`);
  }
});
