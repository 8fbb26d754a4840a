// W13 (issue 16): y = structuredDot(s, d) of a 100,000 x 10,000 csr matrix s at 1% density (100
// stored entries a row, 10M in all, float32) by a dense 10,000 x 64 d, and the gradient with
// respect to the dense side, s^T g for a fixed g (cost = sum(y * g)): one call gives y and s^T g,
// in ms per call. weft runs on 1 and 2 workers with s, d and g resident (pool.from; s is still
// checked at every call, as any sparse argument is), with fresh outputs and with borrowed ones.
// Its peers: the same product computed densely
// by weft (pt.dot and its gradient) and by tfjs wasm (matMul, and matMul of B^T and g, 1 thread):
// the dense matrix would take 4 GB, beyond a WebAssembly memory (weft's arena, tfjs wasm's heap),
// so they multiply its first 10,000 rows B (400 MB) and their figure is that block's time x10 (a
// dense product's time is linear in the rows); and a plain JS csr loop (the forward product and
// the scatter of s^T g in one pass) on 1 and 2 threads. Every system's first call is checked
// against a float64 reference (y and s^T g, or the block's rows of y and B^T g). The reference
// row is weft on 1 worker. `--quick` keeps the sizes and takes the suite's fewer runs.
import { all, compare, type CheckResult } from '../lib/check.js';
import { uniform, uniformStream } from '../lib/data.js';
import type { Goal, RowKey, Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { LoopTeam, type Seat } from '../peers/loop-team.js';
import { loadTfjs } from '../peers/tfjs.js';
import { float32Data, pt, weft, workersLabel } from '../peers/weft.js';

type SparseValue = weft.sparse.SparseValue;

const [ROWS, COLS, N] = [100_000, 10_000, 64];
/** Stored entries per row: 1% of the columns, drawn without repeats. */
const PER_ROW = COLS / 100;
const NNZ = ROWS * PER_ROW;
/** Rows of the block the dense products multiply, and what their time is scaled by. */
const BLOCK = 10_000;
const SCALE = ROWS / BLOCK;
const GROUP = 'W13 csr 1% x 64';

const sparseConfig = (workers: number, borrow = false): string => `${workersLabel(workers)}, structuredDot, s, d and g from pool.from${borrow ? ', outputs borrowed' : ''}`;
const BLOCK_LABEL = `${BLOCK.toLocaleString('en-US')}-row block, x${SCALE}`;
const denseConfig = (workers: number): string => `dense pt.dot, ${workersLabel(workers)}, ${BLOCK_LABEL}`;
const WEFT_1: RowKey = { group: GROUP, system: 'weft', config: sparseConfig(1) };
const WEFT_1_BORROWED: RowKey = { group: GROUP, system: 'weft', config: sparseConfig(1, true) };
const denseRow = (workers: number): RowKey => ({ group: GROUP, system: 'weft', config: denseConfig(workers) });
const goalsOf = (workers: number, borrow: boolean): Goal[] => [
  ...(workers === 2 ? [{ kind: 'speedup' as const, label: '1.8x 1 worker', vs: borrow ? WEFT_1_BORROWED : WEFT_1, atLeast: 1.8 }] : []),
  { kind: 'speedup', label: `5x dense weft on ${workersLabel(workers)}`, vs: denseRow(workers), atLeast: 5 },
];

/** What a call yields: y (or the block's rows of it) and the gradient with respect to d. */
interface Result {
  readonly y: Float32Array;
  readonly gd: Float32Array;
}

/** The seeded csr matrix: each row's columns drawn without repeats and sorted, data uniform in [-1, 1). */
function csrMatrix(): SparseValue {
  const next = uniformStream(131);
  const indptr = new Int32Array(ROWS + 1);
  const indices = new Int32Array(NNZ);
  // The last row that took each column.
  const taken = new Int32Array(COLS).fill(-1);
  for (let r = 0; r < ROWS; r++) {
    const at = r * PER_ROW;
    for (let k = 0; k < PER_ROW; ) {
      const c = Math.floor(next() * COLS);
      if (taken[c] !== r) {
        taken[c] = r;
        indices[at + k++] = c;
      }
    }
    indices.subarray(at, at + PER_ROW).sort();
    indptr[r + 1] = at + PER_ROW;
  }
  const data = uniform(NNZ, 132);
  const s = weft.sparse.csr({ data, indices, indptr, shape: [ROWS, COLS] });
  // csr copies only what it had to sort or convert: the same arrays back means the layout was canonical float32.
  if (s.data !== data || s.indices !== indices || s.indptr !== indptr) throw new Error('W13: the generated matrix is not a canonical float32 csr matrix');
  return s;
}

/** y = s d and s^T g in float64, and B^T g for the block B of s's first BLOCK rows. */
function reference(s: SparseValue, d: Float32Array, g: Float32Array): { y: Float64Array; gd: Float64Array; gdBlock: Float64Array } {
  const y = new Float64Array(ROWS * N);
  const gd = new Float64Array(COLS * N);
  let gdBlock = gd;
  for (let r = 0; r < ROWS; r++) {
    if (r === BLOCK) gdBlock = gd.slice();
    for (let k = s.indptr[r]!; k < s.indptr[r + 1]!; k++) {
      const v = s.data[k]!;
      const c = s.indices[k]! * N;
      for (let j = 0; j < N; j++) {
        y[r * N + j]! += v * d[c + j]!;
        gd[c + j]! += v * g[r * N + j]!;
      }
    }
  }
  return { y, gd, gdBlock };
}

/** s's first BLOCK rows as a dense row-major float32 matrix. */
function denseBlock(s: SparseValue): Float32Array {
  const out = new Float32Array(BLOCK * COLS);
  for (let r = 0; r < BLOCK; r++) for (let k = s.indptr[r]!; k < s.indptr[r + 1]!; k++) out[r * COLS + s.indices[k]!] = s.data[k]!;
  return out;
}

/** What a compiled function's plan is for these arguments, or why it has none (the graph runs on the calling thread). */
function planOf(fn: weft.WeftFunction<unknown, unknown[]>, args: unknown[]): Record<string, unknown> {
  try {
    const plan = fn.planInfo(...args);
    return { tasks: plan.tasks, inline: plan.inline, regionBytes: plan.regionBytes };
  } catch (e) {
    return { noPlan: (e as Error).message };
  }
}

/** Rows start to end of the csr matrix for each of `threads` threads, about the same number of entries each. */
function rowRanges(s: SparseValue, threads: number): Array<[number, number]> {
  const ends = Array.from({ length: threads }, (_, t) => {
    if (t === threads - 1) return ROWS;
    const want = Math.round((NNZ * (t + 1)) / threads);
    let r = 0;
    while (s.indptr[r]! < want) r++;
    return r;
  });
  return ends.map((end, t) => [t === 0 ? 0 : ends[t - 1]!, end]);
}

async function run(suite: Suite): Promise<void> {
  const s = csrMatrix();
  const d = uniform(COLS * N, 133);
  const g = uniform(ROWS * N, 134);
  const ref = reference(s, d, g);
  // Float32 sums of 100 products (y) and of about 1,000 (s^T g; B^T g about 100): 1e-4 of each
  // entry, or 1e-5 of the entries' RMS for those that cancel to near 0.
  const tol = { rtol: 1e-4, floor: 1e-5 };
  const check = (got: Result): CheckResult => all([compare('y = s d', got.y, ref.y, tol), compare('s^T g', got.gd, ref.gd, tol)]);
  const checkBlock = (got: Result): CheckResult =>
    all([compare(`y, rows 0 to ${BLOCK - 1}`, got.y, ref.y.subarray(0, BLOCK * N), tol), compare(`B^T g, B = rows 0 to ${BLOCK - 1}`, got.gd, ref.gdBlock, tol)]);
  const common = { group: GROUP, unit: 'ms' as const, figure: (ms: number) => ms };
  const blockCommon = { ...common, figure: (ms: number) => ms * SCALE, check: checkBlock };
  let block: Float32Array | undefined = denseBlock(s);

  const dv = pt.matrix('d', 'float32');
  const sv = weft.sparse.csrMatrix('s', 'float32');
  const gv = pt.matrix('g', 'float32');
  const y = weft.sparse.structuredDot(sv, dv);
  const gradient = weft.grad(pt.sum(y.mul(gv)), dv);
  const bv = pt.matrix('B', 'float32');
  const gbv = pt.matrix('gB', 'float32');
  const yb = pt.dot(bv, dv);
  const gradientB = weft.grad(pt.sum(yb.mul(gbv)), dv);
  const pool = weft.createPool({ workers: 2 });
  try {
    const dr = pool.from(weft.ndarray(d, [COLS, N]));
    const sparseArgs = [pool.from(s), dr, pool.from(weft.ndarray(g, [ROWS, N]))];
    // Borrowed outputs (weft.Out(v, { borrow: true })) stay in the pool's memory: the call copies
    // nothing out and allocates nothing (y alone is 25.6 MB a call otherwise).
    const borrowed = [weft.Out(y, { borrow: true }), weft.Out(gradient, { borrow: true })];
    const cases = [
      { inputs: [sv, dv, gv], outputs: [y, gradient], args: sparseArgs, config: (w: number) => sparseConfig(w), dense: false, borrow: false },
      { inputs: [sv, dv, gv], outputs: borrowed, args: sparseArgs, config: (w: number) => sparseConfig(w, true), dense: false, borrow: true },
      { inputs: [bv, dv, gbv], outputs: [yb, gradientB], args: [pool.from(weft.ndarray(block, [BLOCK, COLS])), dr, pool.from(weft.ndarray(g.subarray(0, BLOCK * N), [BLOCK, N]))], config: denseConfig, dense: true, borrow: false },
    ];
    for (const c of cases) {
      for (const workers of [1, 2]) {
        await suite.measure({
          ...(c.dense ? blockCommon : { ...common, check }),
          system: 'weft',
          config: c.config(workers),
          reference: !c.dense && !c.borrow && workers === 1,
          goals: c.dense ? undefined : goalsOf(workers, c.borrow),
          setup: async () => {
            const fn = await weft.compile(c.inputs, c.outputs, { pool, workers });
            return {
              run: async (): Promise<Result> => {
                const [yo, go] = (await fn(...c.args)) as weft.NdArray[];
                return { y: float32Data(yo!), gd: float32Data(go!) };
              },
              dispose: () => fn.dispose(),
              info: { nodes: fn.fgraph.toposort().map((n) => String(n.op)), plan: planOf(fn, c.args) },
            };
          },
        });
      }
    }
  } finally {
    await pool.close();
  }

  await suite.measure({
    ...blockCommon,
    system: 'tfjs wasm',
    config: `dense matMul, B transposed, 1 thread, ${BLOCK_LABEL}`,
    setup: async () => {
      const tf = await (await loadTfjs()).use('wasm');
      const tb = tf.tensor2d(block!, [BLOCK, COLS]);
      const td = tf.tensor2d(d, [COLS, N]);
      const tg = tf.tensor2d(g.subarray(0, BLOCK * N), [BLOCK, N]);
      return {
        // y = B d, and the gradient of sum(y * g) with respect to d, B^T g: B transposed, then
        // multiplied, 1.0 s on the block here, where tfjs's own gradient of matMul,
        // matMul(B, g, true, false), took 4.3 s (a B^T kept from call to call would be a second B).
        run: (): Result => {
          const [ty, tgd] = tf.tidy(() => [tf.matMul(tb, td), tf.matMul(tf.transpose(tb), tg)]);
          const result = { y: ty!.dataSync() as Float32Array, gd: tgd!.dataSync() as Float32Array };
          tf.dispose([ty!, tgd!]);
          return result;
        },
        dispose: () => tf.dispose([tb, td, tg]),
      };
    },
  });
  block = undefined;

  for (const threads of [1, 2]) {
    await suite.measure({
      ...common,
      check,
      system: 'plain JS csr loop',
      config: `${threads} thread${threads === 1 ? '' : 's'} (SAB), y and s^T g in one pass`,
      setup: async () => {
        // One thread scatters s^T g into gd itself; a team each into a part of its own, then adds the parts.
        const ranges = rowRanges(s, threads);
        const per = Math.ceil((COLS * N) / threads / 16) * 16;
        const seats: Seat[] = ranges.map(([start, end], t) => ({
          phases: [
            { loop: 'csrRows', start, end },
            ...(threads > 1 ? [{ loop: 'sumParts' as const, start: Math.min(COLS * N, t * per), end: Math.min(COLS * N, (t + 1) * per) }] : []),
          ],
          params: { n: N, part: threads > 1 ? t : -1, count: threads },
        }));
        const parts = new Float32Array(threads > 1 ? threads * COLS * N : 0);
        const team = await LoopTeam.startSeats([s.data as Float32Array, s.indices, s.indptr, d, g, parts, new Float32Array(ROWS * N), new Float32Array(COLS * N)], seats);
        const [yo, go] = team.arrays.slice(-2) as Float32Array[];
        return {
          run: async (): Promise<Result> => {
            await team.run();
            return { y: yo!, gd: go! };
          },
          dispose: () => team.close(),
        };
      },
    });
  }
}

export const w13: Workload = { id: 'W13', title: 'csr 100,000 x 10,000 at 1% (float32) times dense 10,000 x 64: y and the gradient for the dense side (ms per call)', run };
