// W2r: bandwidth of reductions and softmax over float32 matrices, in GB/s counting the bytes each
// must move: sum over axis 0 and over axis 1 of a 4096x4096 matrix (64 MiB read, 16 KiB written),
// and softmax along the rows of a 4096x1024 matrix (16 MiB read, 16 MiB written). Inputs are
// resident in each system's own form (weft: pool.from arrays, read in place). The reference row
// of each group is onnxruntime-node on 2 threads, and the weft rows whose goals name it are timed
// in turns with it (Suite.measureAlongside).
import { compare } from '../lib/check.js';
import { uniform } from '../lib/data.js';
import type { Measurement, Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { loadJax } from '../peers/jax.js';
import { onnxRow, type OnnxGraph } from '../peers/onnx.js';
import { loadTfjs } from '../peers/tfjs.js';
import { outputRun, pt, weft, workersLabel } from '../peers/weft.js';

type Tf = Awaited<ReturnType<Awaited<ReturnType<typeof loadTfjs>>['use']>>;
type Jax = Awaited<ReturnType<typeof loadJax>>;
type JaxArray = InstanceType<Jax['Array']>;
type TfTensor = ReturnType<Tf['tensor2d']>;

/** One reduction or softmax case, as each system spells it. */
interface Case {
  readonly group: string;
  readonly rows: number;
  readonly cols: number;
  /** Bytes read and written by one call. */
  readonly bytes: number;
  /** Whether its output is as large as its input (softmax), so worth giving back (weft.release). */
  readonly largeOutput?: boolean;
  readonly reference: (x: Float32Array) => Float64Array;
  readonly weft: (x: weft.TensorVariable) => weft.TensorVariable;
  readonly tfjs: (tf: Tf, x: TfTensor) => TfTensor;
  readonly jax: (jax: Jax, x: JaxArray) => JaxArray;
  readonly onnx: (shape: readonly number[]) => Pick<OnnxGraph, 'nodes' | 'outputs' | 'initializers'>;
}

function sumAxis(x: Float32Array, rows: number, cols: number, axis: 0 | 1): Float64Array {
  const out = new Float64Array(axis === 0 ? cols : rows);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[axis === 0 ? j : i]! += x[i * cols + j]!;
  return out;
}

function softmaxRows(x: Float32Array, rows: number, cols: number): Float64Array {
  const out = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    let max = -Infinity;
    for (let j = 0; j < cols; j++) max = Math.max(max, x[i * cols + j]!);
    let total = 0;
    for (let j = 0; j < cols; j++) total += out[i * cols + j] = Math.exp(x[i * cols + j]! - max);
    for (let j = 0; j < cols; j++) out[i * cols + j]! /= total;
  }
  return out;
}

function sumCase(axis: 0 | 1): Case {
  const [rows, cols] = [4096, 4096];
  return {
    group: `W2r sum axis ${axis} 4096x4096`,
    rows,
    cols,
    bytes: 4 * (rows * cols + (axis === 0 ? cols : rows)),
    reference: (x) => sumAxis(x, rows, cols, axis),
    weft: (x) => x.sum({ axis }),
    tfjs: (tf, x) => tf.sum(x, axis),
    jax: (jax, x) => jax.numpy.sum(x, axis),
    onnx: () => ({
      initializers: [{ name: 'axes', dims: [1], int64: [axis] }],
      nodes: [{ op: 'ReduceSum', inputs: ['x', 'axes'], outputs: ['z'], attributes: [{ name: 'keepdims', int: 0 }] }],
      outputs: [{ name: 'z', shape: [axis === 0 ? cols : rows] }],
    }),
  };
}

const softmaxCase: Case = {
  group: 'W2r softmax rows 4096x1024',
  rows: 4096,
  cols: 1024,
  bytes: 2 * 4 * 4096 * 1024,
  largeOutput: true,
  reference: (x) => softmaxRows(x, 4096, 1024),
  weft: (x) => pt.softmax(x, 1),
  tfjs: (tf, x) => tf.softmax(x),
  jax: (jax, x) => jax.nn.softmax(x, -1),
  onnx: (shape) => ({
    nodes: [{ op: 'Softmax', inputs: ['x'], outputs: ['z'], attributes: [{ name: 'axis', int: 1 }] }],
    outputs: [{ name: 'z', shape }],
  }),
};

async function runCase(suite: Suite, c: Case): Promise<void> {
  const shape = [c.rows, c.cols];
  const x = uniform(c.rows * c.cols, 31, -4, 4);
  const want = c.reference(x);
  const common = {
    group: c.group,
    unit: 'GB/s' as const,
    figure: (ms: number) => c.bytes / (ms * 1e6),
    // A float32 sum of 4096 terms in [-4, 4] errs by about eps32 times the sum of |x| (~1e-4
    // absolute), not by a fraction of its result, which may be near zero: the floor is 2e-5 of
    // the results' rms (~1e-3), so that the peers' float32 accumulation passes and a wrong sum does not.
    check: (got: Float32Array) => compare('z', got, want, { rtol: 1e-4, floor: 2e-5 }),
  };
  const ORT_2 = { group: c.group, system: 'onnxruntime-node', config: '2 threads' };

  const graph = { name: c.group.replace(/\W+/g, '_'), inputs: [{ name: 'x', shape }], ...c.onnx(shape) };
  const onnx = (threads: number): Measurement<Float32Array> => ({ ...common, ...onnxRow(graph, [[x, shape]], threads), reference: threads === 2 });

  const pool = weft.createPool({ workers: 2 });
  try {
    const xs = pt.matrix('x', 'float32');
    const resident = pool.from(weft.ndarray(x, shape));
    // A large output (softmax's 16 MiB) also given back after use (weft.release: warm pages).
    const layouts = c.largeOutput ? ([[0, false], [1, false], [2, false], [1, true], [2, true]] as const) : ([[0, false], [1, false], [2, false]] as const);
    const rows = layouts.map(([workers, release]): Measurement<Float32Array> => ({
      ...common,
      system: 'weft',
      config: `${workersLabel(workers)}, input from pool.from${release ? ', output released' : ''}`,
      goals: workers === 2 ? [{ kind: 'speedup', label: 'onnxruntime 2 threads', vs: ORT_2, atLeast: 1 }] : undefined,
      setup: async () => {
        const fn = await weft.compile([xs], c.weft(xs), { pool, workers });
        return { run: outputRun(async () => await fn(resident), release), dispose: () => fn.dispose() };
      },
    }));
    await suite.measureAlongside(rows, [onnx(1), onnx(2)]);
  } finally {
    await pool.close();
  }

  await suite.measure({
    ...common,
    system: 'tfjs wasm',
    config: 'eager, 1 thread',
    setup: async () => {
      const tf = await (await loadTfjs()).use('wasm');
      const tx = tf.tensor2d(x, [c.rows, c.cols]);
      return {
        run: () => {
          const out = tf.tidy(() => c.tfjs(tf, tx));
          const data = out.dataSync() as Float32Array;
          out.dispose();
          return data;
        },
        dispose: () => tx.dispose(),
      };
    },
  });

  await suite.measure({
    ...common,
    system: 'jax-js wasm',
    config: 'jit, 1 thread',
    setup: async () => {
      const jax = await loadJax();
      const f = jax.jit((a: JaxArray) => c.jax(jax, a));
      const jx = jax.numpy.array(x).reshape(shape);
      return {
        run: () => f(jx.ref).dataSync() as Float32Array,
        dispose: () => {
          jx.dispose();
          f.dispose();
        },
      };
    },
  });
}

async function run(suite: Suite): Promise<void> {
  for (const c of [sumCase(0), sumCase(1), softmaxCase]) await runCase(suite, c);
}

export const w2r: Workload = { id: 'W2r', title: 'reductions and softmax, float32 matrices (GB/s of bytes read and written)', run };
