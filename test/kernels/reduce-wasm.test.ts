// The WebAssembly blocks of sum, prod, max, min, all and any over float32, float64, int32 and
// uint8 (bool) values (kernels/reduce-wasm.ts, issue 12): on views in
// the arena (where they run) against the same views over a plain copy (where the JS blocks run),
// bit for bit, over contiguous, transposed, reversed, strided, offset and broadcast layouts, every
// set of axes, rows of every length around the eight partials, ranges cut at random points, more
// outputs than the thread's block holds, and NaN, infinities and signed zeros.
import t from 'tap';
import { argReduceInto, reduceInto, type ReduceKind } from '../../src/kernels/reduce.js';
import { reduceBlocksFor } from '../../src/kernels/reduce-wasm.js';
import { sumRow } from '../../src/kernels/row-partials.js';
import type { TensorView } from '../../src/kernels/view.js';
import { contiguousStrides, sizeOf } from '../../src/kernels/view.js';
import { Arena } from '../../src/workers/arena.js';
import { rng, sameNumber } from '../helpers.js';
import { attachedMemoryOf, threadBlockOf } from '../../src/kernels/gemm-wasm.js';

const arena = new Arena(1 << 26);
const KINDS: readonly ReduceKind[] = ['sum', 'prod', 'max', 'min', 'all', 'any'];
type Dtype = 'float32' | 'float64' | 'int32' | 'uint8';
const DTYPES: readonly Dtype[] = ['float32', 'float64', 'int32', 'uint8'];
type Data = Float32Array | Float64Array | Int32Array | Uint8Array;
const ARRAY = { float32: Float32Array, float64: Float64Array, int32: Int32Array, uint8: Uint8Array } as const;

/** `n` seeded values in the arena (and the same in plain memory), with awkward values mixed in. */
function storage(dtype: Dtype, n: number, seed: number, special: boolean): [Data, Data] {
  const g = rng(seed).normal([n]).data as Float64Array;
  const awkward = dtype === 'int32' ? [0, 2147483647, -2147483648, -1] : dtype === 'uint8' ? [0, 255, 2] : [NaN, Infinity, -Infinity, 0, -0, 1e300, -1e-310];
  const inArena = arena.array(dtype, n) as Data;
  // Products of many values near 1 stay finite; sums see the full spread; all and any see zeros
  // (a sixth of the integers are 0, and bools are mostly 1).
  const plainValue = (v: number): number => (dtype === 'int32' ? Math.round(v * 2) : dtype === 'uint8' ? (v > -1 ? 1 : 0) : 1 + v / 8);
  inArena.set(Float64Array.from(g, (v, i) => (special && i % 37 === 5 ? awkward[(i / 37) % awkward.length | 0]! : plainValue(v))));
  return [inArena, new ARRAY[dtype](inArena)];
}

function reduceBoth(kind: ReduceKind, x: TensorView, plain: TensorView, reduced: readonly boolean[], cuts: readonly number[]): [Float64Array, Float64Array] {
  const outShape = x.shape.filter((_, a) => !reduced[a]);
  const size = sizeOf(outShape);
  const out = (): TensorView => ({ data: new Float64Array(size), offset: 0, shape: outShape, stride: contiguousStrides(outShape) });
  const wasm = out();
  const js = out();
  for (let c = 0; c + 1 < cuts.length; c++) reduceInto(kind, x, reduced, wasm, { start: cuts[c]!, end: cuts[c + 1]! });
  reduceInto(kind, plain, reduced, js);
  return [wasm.data as Float64Array, js.data as Float64Array];
}

/** How many elements of `a` and `b` are not the same float (see sameNumber). */
function differing(a: Float64Array, b: Float64Array): number {
  let bad = 0;
  for (let i = 0; i < a.length; i++) if (!sameNumber(a[i]!, b[i]!)) bad++;
  return bad;
}

// The arena's views take the WebAssembly blocks (reduce.ts: an attached memory with a thread
// block), so the comparisons below are of the wasm blocks with the JS ones, not of JS with JS.
t.ok(attachedMemoryOf(arena.memory.buffer) === arena.memory && threadBlockOf(arena.memory) !== undefined, "the arena is attached, with this thread's block");

/** Every subset of the axes of an `nd`-axis shape, as masks. */
function axisSets(nd: number): boolean[][] {
  return Array.from({ length: 1 << nd }, (_, m) => Array.from({ length: nd }, (_, a) => ((m >> a) & 1) === 1));
}

/** Random cut points of [0, size): the blocks run chunk by chunk and must give one call's bits. */
function cutsOf(size: number, seed: number): number[] {
  const u = rng(seed).uniform([3], { low: 0, high: size }).data as Float64Array;
  return [0, ...[...u].map(Math.floor).sort((a, b) => a - b), size];
}

t.test('layouts, axes, row lengths and chunks: the bits of the JS blocks', async (t) => {
  let seed = 1;
  for (const dtype of DTYPES) {
    for (const [rows, cols, depth] of [[5, 3, 7], [3, 8, 2], [4, 17, 9], [2, 100, 3], [31, 1, 16]] as const) {
      const n = rows * cols * depth;
      const [inArena, plain] = storage(dtype, 2 * n + 5, seed++, true);
      // Views of one buffer: contiguous, transposed, reversed along an axis, strided, offset, broadcast.
      const layouts: Array<[string, Omit<TensorView, 'data'>]> = [
        ['contiguous', { offset: 0, shape: [rows, cols, depth], stride: [cols * depth, depth, 1] }],
        ['transposed', { offset: 0, shape: [depth, rows, cols], stride: [1, cols * depth, depth] }],
        ['reversed', { offset: n - 1, shape: [rows, cols, depth], stride: [-cols * depth, -depth, -1] }],
        ['strided', { offset: 3, shape: [rows, cols, depth], stride: [2 * cols * depth, 2 * depth, 2] }],
        ['broadcast', { offset: 5, shape: [rows, cols, depth], stride: [0, depth, 1] }],
      ];
      for (const [name, layout] of layouts) {
        for (const reduced of axisSets(3)) {
          const size = layout.shape.filter((_, a) => !reduced[a]).reduce((p, q) => p * q, 1);
          const cuts = cutsOf(size, seed++);
          for (const kind of KINDS) {
            const [wasm, js] = reduceBoth(kind, { ...layout, data: inArena }, { ...layout, data: plain }, reduced, cuts);
            const bad = differing(wasm, js);
            if (bad > 0) t.fail(`${dtype} ${kind} over ${JSON.stringify(reduced)} of a ${name} [${layout.shape}] view, cut at ${cuts}: ${bad} of ${size} differ`);
            else t.pass(`${dtype} ${kind} ${name} [${layout.shape}] ${JSON.stringify(reduced)}`);
          }
        }
      }
    }
  }
});

t.test('rows of every length from 0 to 40 (the eight partials and their tails)', async (t) => {
  for (const dtype of DTYPES) {
    for (let n = 0; n <= 40; n++) {
      const [inArena, plain] = storage(dtype, 3 * n + 1, 100 + n, n % 3 === 0);
      const layout = { offset: 1, shape: [3, n], stride: [n, 1] };
      for (const kind of KINDS) {
        const [wasm, js] = reduceBoth(kind, { ...layout, data: inArena }, { ...layout, data: plain }, [false, true], [0, 1, 3]);
        t.equal(differing(wasm, js), 0, `${dtype} ${kind} of rows of ${n}`);
      }
    }
  }
});

t.test('more outputs than the thread block holds (8192 float64 accumulators): pieces, the same bits', async (t) => {
  for (const dtype of ['float32', 'float64'] as const) {
    const [rows, cols] = [20_000, 6];
    const [inArena, plain] = storage(dtype, rows * cols, 7, false);
    for (const [what, layout, reduced] of [
      ['sum over the short rows', { offset: 0, shape: [rows, cols], stride: [cols, 1] }, [false, true]],
      ['sum over the long columns of a transposed view', { offset: 0, shape: [cols, rows], stride: [1, cols] }, [true, false]],
    ] as const) {
      const [wasm, js] = reduceBoth('sum', { ...layout, data: inArena }, { ...layout, data: plain }, reduced, [0, 5000, 20_000]);
      t.equal(differing(wasm, js), 0, `${dtype} ${what}`);
    }
  }
});

t.test('max and min: NaN wins, +0 is above -0, infinities', async (t) => {
  const cases: Array<[number[], number, number]> = [
    [[1, NaN, 3, 2, 5, 6, 7, 8, 9], NaN, NaN],
    [[-0, 0, -0, 0, -0, 0, -0, 0, -0, 0], 0, -0],
    [[0, -0], 0, -0],
    [[-Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity], -Infinity, -Infinity],
    [[3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, Infinity, 8], Infinity, 1],
  ];
  for (const [values, max, min] of cases) {
    const data = arena.array('float64', values.length) as Float64Array;
    data.set(values);
    const x: TensorView = { data, offset: 0, shape: [values.length], stride: [1] };
    for (const [kind, want] of [['max', max], ['min', min]] as const) {
      const out: TensorView = { data: new Float64Array(1), offset: 0, shape: [], stride: [] };
      reduceInto(kind, x, [true], out);
      t.ok(Object.is(out.data[0], want) || (Number.isNaN(want) && Number.isNaN(out.data[0]!)), `${kind}(${values}) = ${out.data[0]} (${want})`);
    }
  }
});

/** argmax or argmin of `x` (in the arena: the WebAssembly rows) and of `plain` (the JS block), over `reduced`, cut at `cuts`. */
function argBoth(kind: 'max' | 'min', x: TensorView, plain: TensorView, reduced: readonly boolean[], cuts: readonly number[]): [Float64Array, Float64Array] {
  const outShape = x.shape.filter((_, a) => !reduced[a]);
  const size = sizeOf(outShape);
  const out = (): TensorView => ({ data: new Float64Array(size), offset: 0, shape: outShape, stride: contiguousStrides(outShape) });
  const [wasm, js] = [out(), out()];
  for (let c = 0; c + 1 < cuts.length; c++) argReduceInto(kind, x, reduced, wasm, { start: cuts[c]!, end: cuts[c + 1]! });
  argReduceInto(kind, plain, reduced, js);
  return [wasm.data as Float64Array, js.data as Float64Array];
}

t.test('argmax and argmin: the positions of the JS block (first NaN, first extremum, ties), layouts, axes, chunks', async (t) => {
  let seed = 400;
  for (const dtype of DTYPES) {
    for (const [rows, cols, depth] of [[5, 3, 7], [3, 8, 2], [4, 17, 9], [2, 100, 3]] as const) {
      const n = rows * cols * depth;
      const [inArena, plain] = storage(dtype, 2 * n + 5, seed++, true);
      // Ties: a third of the values rounded to a few levels; rows of -inf and +inf.
      for (const a of [inArena, plain]) for (let i = 0; i < a.length; i += 3) a[i] = dtype === 'uint8' ? a[i]! : Math.round(a[i]! * 2) / 2;
      if (dtype === 'float64' || dtype === 'float32') for (const a of [inArena, plain]) a.fill(-Infinity, 0, Math.min(cols * depth, 40));
      const layouts: Array<[string, Omit<TensorView, 'data'>]> = [
        ['contiguous', { offset: 0, shape: [rows, cols, depth], stride: [cols * depth, depth, 1] }],
        ['transposed', { offset: 0, shape: [depth, rows, cols], stride: [1, cols * depth, depth] }],
        ['strided', { offset: 3, shape: [rows, cols, depth], stride: [2 * cols * depth, 2 * depth, 2] }],
        ['broadcast', { offset: 5, shape: [rows, cols, depth], stride: [0, depth, 1] }],
      ];
      for (const [name, layout] of layouts) {
        for (const reduced of axisSets(3).filter((r) => r.some(Boolean))) {
          const size = layout.shape.filter((_, a) => !reduced[a]).reduce((p, q) => p * q, 1);
          const cuts = cutsOf(size, seed++);
          for (const kind of ['max', 'min'] as const) {
            const [wasm, js] = argBoth(kind, { ...layout, data: inArena }, { ...layout, data: plain }, reduced, cuts);
            const bad = differing(wasm, js);
            if (bad > 0) t.fail(`${dtype} arg${kind} over ${JSON.stringify(reduced)} of a ${name} [${layout.shape}] view: ${bad} of ${size} differ (${[...wasm.slice(0, 8)]} vs ${[...js.slice(0, 8)]})`);
            else t.pass(`${dtype} arg${kind} ${name} [${layout.shape}] ${JSON.stringify(reduced)}`);
          }
        }
      }
    }
  }
  // Known answers: the first NaN, the first of equal maxima, a row of -inf (position 0).
  const cases: Array<[number[], number, number]> = [
    [[1, 5, 3, 5, NaN, 2, NaN, 9, 9], 4, 4],
    [[2, 7, 7, 1, 1, 7, 0, 0, 1, 7, 1], 1, 6],
    [[-Infinity, -Infinity, -Infinity, -Infinity, -Infinity], 0, 0],
    [[3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4], 16, 0],
  ];
  for (const [values, argmax, argmin] of cases) {
    const data = arena.array('float64', values.length) as Float64Array;
    data.set(values);
    for (const [kind, want] of [['max', argmax], ['min', argmin]] as const) {
      const out: TensorView = { data: new Int32Array(1), offset: 0, shape: [], stride: [] };
      argReduceInto(kind, { data, offset: 0, shape: [values.length], stride: [1] }, [true], out);
      t.equal(out.data[0], want, `arg${kind}(${values}) = ${out.data[0]}`);
    }
  }
});

t.test('all and any: NaN is true, -0 is false, bools and bytes', async (t) => {
  const cases: Array<[Dtype, number[], number, number]> = [
    ['float64', [1, NaN, 3, 2, 5, 6, 7, 8, 9], 1, 1],
    ['float64', [1, 2, -0, 4, 5, 6, 7, 8, 9, 10], 0, 1],
    ['float32', [-0, 0, -0, 0, -0, 0, -0, 0, -0, 0], 0, 0],
    ['uint8', [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], 1, 1],
    ['uint8', [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2], 0, 1],
    ['int32', [5, -3, 7, 0], 0, 1],
  ];
  for (const [dtype, values, all, any] of cases) {
    const data = arena.array(dtype, values.length) as Data;
    data.set(values);
    const x: TensorView = { data, offset: 0, shape: [values.length], stride: [1] };
    for (const [kind, want] of [['all', all], ['any', any]] as const) {
      const out: TensorView = { data: new Float64Array(1), offset: 0, shape: [], stride: [] };
      reduceInto(kind, x, [true], out);
      t.equal(out.data[0], want, `${kind}(${dtype} ${values}) = ${out.data[0]}`);
    }
  }
});

t.test('the WebAssembly blocks called directly: the bits of the JS order (so the comparisons above test them)', async (t) => {
  for (const dtype of ['float32', 'float64'] as const) {
    const bytes = dtype === 'float32' ? 4 : 8;
    const [rows, n] = [3, 37];
    const [x, plain] = storage(dtype, rows * n, 300, true);
    const acc = arena.array('float64', n) as Float64Array;
    const blocks = reduceBlocksFor(arena.memory, 'sum', dtype);
    // Reduced rows: acc[r] = sumRow(acc[r], row r).
    acc.fill(0);
    blocks.rows(x.byteOffset, rows, n * bytes, n, acc.byteOffset, 8);
    const want = Array.from({ length: rows }, (_, r) => sumRow(0, plain, r * n, n));
    t.equal(differing(acc.subarray(0, rows), Float64Array.from(want)), 0, `${dtype} rows`);
    // Kept rows: acc[j] gets each row's element j in row order.
    acc.fill(0);
    blocks.columns(x.byteOffset, rows, n * bytes, n, acc.byteOffset);
    const columns = Array.from({ length: n }, (_, j) => {
      let s = 0;
      for (let r = 0; r < rows; r++) s += plain[r * n + j]!;
      return s;
    });
    t.equal(differing(acc, Float64Array.from(columns)), 0, `${dtype} columns`);
  }
});

t.test('all and any over byte rows of every length to 200, a lone zero or one at each place: the wide steps (64 bytes) and the tail', async (t) => {
  const x = arena.array('uint8', 200) as Uint8Array;
  const acc = arena.array('float64', 1) as Float64Array;
  let wrong = 0;
  let checked = 0;
  for (const kind of ['all', 'any'] as const) {
    const { rows } = reduceBlocksFor(arena.memory, kind, 'uint8');
    for (let n = 0; n <= 200; n++) {
      for (let at = -1; at < n; at++) {
        for (const background of [0, 1]) {
          x.fill(background, 0, n);
          if (at >= 0) x[at] = background === 1 ? 0 : 7;
          const truths = Array.from(x.subarray(0, n), (b) => b !== 0);
          const want = kind === 'all' ? truths.every(Boolean) : truths.some(Boolean);
          acc[0] = kind === 'all' ? 1 : 0;
          rows(x.byteOffset, 1, n, n, acc.byteOffset, 8);
          if (acc[0] !== (want ? 1 : 0)) wrong++;
          checked++;
        }
      }
    }
  }
  t.equal(wrong, 0, `${checked} rows, each the truth of its bytes`);
});

t.test('all and any over byte columns (kept rows): up to 40 columns and 33 rows, a lone zero or one at each place', async (t) => {
  const x = arena.array('uint8', 33 * 40) as Uint8Array;
  const acc = arena.array('float64', 40) as Float64Array;
  let wrong = 0;
  let checked = 0;
  for (const kind of ['all', 'any'] as const) {
    const { columns } = reduceBlocksFor(arena.memory, kind, 'uint8');
    for (let n = 0; n <= 40; n++) {
      for (const rows of [1, 5, 16, 17, 33]) {
        for (let at = -1; at < rows * n; at++) {
          for (const background of [0, 1]) {
            x.fill(background, 0, rows * n);
            if (at >= 0) x[at] = background === 1 ? 0 : 7;
            acc.fill(kind === 'all' ? 1 : 0);
            columns(x.byteOffset, rows, n, n, acc.byteOffset);
            for (let c = 0; c < n; c++) {
              const truths = Array.from({ length: rows }, (_, r) => x[r * n + c] !== 0);
              const want = kind === 'all' ? truths.every(Boolean) : truths.some(Boolean);
              if (acc[c] !== (want ? 1 : 0)) wrong++;
              checked++;
            }
          }
        }
      }
    }
  }
  t.equal(wrong, 0, `${checked} columns, each the truth of its bytes`);
});
