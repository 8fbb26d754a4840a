// W3: the matrix product of two 1024 x 1024 float32 matrices, in GFLOP/s (2 n^3 operations per
// product), end to end like W1 (weft copies both factors in and the product out at each call).
// The reference row is tfjs wasm, the goal's yardstick, and the 2-worker row is timed in turns
// with it (Suite.measureAlongside).
import ndarray from 'ndarray';
import { compareProduct } from '../lib/check.js';
import { uniform } from '../lib/data.js';
import type { Measurement, Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { loadJax } from '../peers/jax.js';
import { onnxRow } from '../peers/onnx.js';
import { loadTfjs } from '../peers/tfjs.js';
import { float32Data, pt, weft, workersLabel } from '../peers/weft.js';

const N = 1024;
const FLOPS = 2 * N ** 3;
const GROUP = 'W3 matmul 1024';
const TFJS_WASM = { group: GROUP, system: 'tfjs wasm', config: 'eager, 1 thread' };
/** BENCH.md: WebAssembly SIMD without FMA, 2 cores x 2 ports x 4 lanes x 3.8 GHz. */
const SIMD_CEILING = 61;

async function run(suite: Suite): Promise<void> {
  const a = uniform(N * N, 31);
  const b = uniform(N * N, 32);
  const common = {
    group: GROUP,
    unit: 'GFLOP/s' as const,
    figure: (ms: number) => FLOPS / (ms * 1e6),
    check: (got: Float32Array) => compareProduct('a·b', got, a, b, N, 64, 1e-5),
  };

  const tfjs = (backend: 'cpu' | 'wasm'): Measurement<Float32Array> => ({
    ...common,
    system: `tfjs ${backend}`,
    config: 'eager, 1 thread',
    reference: backend === 'wasm',
    // About 0.8 GFLOP/s: 2.7 s a product.
    counts: backend === 'cpu' ? { warmup: 1, runs: 2, minRuns: 2, budgetMs: 0 } : undefined,
    setup: async () => {
      const tf = await (await loadTfjs()).use(backend);
      const ta = tf.tensor2d(a, [N, N]);
      const tb = tf.tensor2d(b, [N, N]);
      return {
        run: () => {
          const out = tf.matMul(ta, tb);
          const data = out.dataSync() as Float32Array;
          out.dispose();
          return data;
        },
        dispose: () => tf.dispose([ta, tb]),
      };
    },
  });

  const pool = weft.createPool({ workers: 2 });
  try {
    const as = pt.matrix('a', 'float32');
    const bs = pt.matrix('b', 'float32');
    const c = pt.dot(as, bs);
    const rows = [0, 1, 2].map((workers): Measurement<Float32Array> => ({
      ...common,
      system: 'weft',
      config: workersLabel(workers),
      goals:
        workers === 2
          ? [
              { kind: 'value', label: '50 GFLOP/s', atLeast: 50 },
              { kind: 'speedup', label: '2x tfjs wasm', vs: TFJS_WASM, atLeast: 2 },
              { kind: 'value', label: `80% of the ${SIMD_CEILING} GFLOP/s SIMD ceiling`, atLeast: 0.8 * SIMD_CEILING },
            ]
          : undefined,
      setup: async () => {
        const fn = await weft.compile([as, bs], c, { pool, workers });
        const [na, nb] = [ndarray(a, [N, N]), ndarray(b, [N, N])];
        return { run: async () => float32Data(await fn(na, nb)), dispose: () => fn.dispose(), info: { nodes: fn.fgraph.toposort().map((n) => String(n.op)) } };
      },
    }));
    await suite.measureAlongside(rows, [tfjs('wasm')]);
  } finally {
    await pool.close();
  }
  await suite.measure(tfjs('cpu'));

  await suite.measure({
    ...common,
    system: 'jax-js wasm',
    config: 'jit, 1 thread',
    setup: async () => {
      const jax = await loadJax();
      const np = jax.numpy;
      const f = jax.jit((x: InstanceType<typeof jax.Array>, y: InstanceType<typeof jax.Array>) => np.matmul(x, y));
      const ja = np.array(a).reshape([N, N]);
      const jb = np.array(b).reshape([N, N]);
      return {
        run: () => f(ja.ref, jb.ref).dataSync() as Float32Array,
        dispose: () => {
          ja.dispose();
          jb.dispose();
          f.dispose();
        },
      };
    },
  });

  const shape = [N, N];
  const graph = {
    name: 'w3',
    inputs: [{ name: 'a', shape }, { name: 'b', shape }],
    outputs: [{ name: 'c', shape }],
    nodes: [{ op: 'MatMul', inputs: ['a', 'b'], outputs: ['c'] }],
  };
  for (const threads of [1, 2]) await suite.measure({ ...common, ...onnxRow(graph, [[a, shape], [b, shape]], threads) });
}

export const w3: Workload = { id: 'W3', title: 'matrix product 1024 x 1024 float32 (GFLOP/s)', run };
