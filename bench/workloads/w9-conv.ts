// W9: conv2d forward and backward, a batch of 32 images 1x28x28 through 16 filters 5x5 (float32,
// valid, flipped as PyTensor's): the output, and the gradients with respect to the input and the
// filters of sum(output^2) / 2 (so the output gradient is the output). Figures are ms per call.
// Forward and backward: weft (im2col + gemm, and its direct kernels for comparison), jax-js
// (jit of the forward and of the gradient) and tfjs cpu, the reference (tfjs's wasm backend has
// no kernel for the filters' gradient, Conv2DBackpropFilter). Forward alone: weft, tfjs wasm
// (the reference, BENCH.md's peer for the 1.5x goal), tfjs cpu, jax-js, onnxruntime-node.
import { compare, type CheckResult } from '../lib/check.js';
import { uniform } from '../lib/data.js';
import type { Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { loadJax } from '../peers/jax.js';
import { onnxRow } from '../peers/onnx.js';
import { loadTfjs } from '../peers/tfjs.js';
import { float32Data, outputRun, pt, weft, workersLabel, type TV } from '../peers/weft.js';

const [N, H, O, K] = [32, 28, 16, 5];
const HO = H - K + 1;
const GROUP = 'W9 conv2d forward+backward';
const FORWARD = 'W9 conv2d forward';
const TFJS = { group: GROUP, system: 'tfjs cpu', config: 'eager, 1 thread' };
const TFJS_WASM = { group: FORWARD, system: 'tfjs wasm', config: 'eager, 1 thread' };

/** The filters for peers that cross-correlate (tfjs, onnxruntime, jax-js): each one turned by 180 degrees, OIHW. */
function flippedOIHW(w: Float32Array): Float32Array {
  const out = new Float32Array(O * K * K);
  for (let o = 0; o < O; o++) for (let a = 0; a < K; a++) for (let b = 0; b < K; b++) out[(o * K + a) * K + b] = w[(o * K + (K - 1 - a)) * K + (K - 1 - b)]!;
  return out;
}

/** The convolution by its definition in float64: output, input gradient, filter gradient of sum(y^2)/2. */
function reference(x: Float32Array, w: Float32Array): [Float64Array, Float64Array, Float64Array] {
  const y = new Float64Array(N * O * HO * HO);
  for (let n = 0; n < N; n++) for (let o = 0; o < O; o++) for (let i = 0; i < HO; i++) for (let j = 0; j < HO; j++) {
    let s = 0;
    for (let a = 0; a < K; a++) for (let b = 0; b < K; b++) s += x[(n * H + i + a) * H + j + b]! * w[(o * K + (K - 1 - a)) * K + (K - 1 - b)]!;
    y[((n * O + o) * HO + i) * HO + j] = s;
  }
  const gx = new Float64Array(N * H * H);
  const gw = new Float64Array(O * K * K);
  for (let n = 0; n < N; n++) for (let o = 0; o < O; o++) for (let i = 0; i < HO; i++) for (let j = 0; j < HO; j++) {
    const g = y[((n * O + o) * HO + i) * HO + j]!;
    for (let a = 0; a < K; a++) for (let b = 0; b < K; b++) {
      gx[(n * H + i + a) * H + j + b]! += g * w[(o * K + (K - 1 - a)) * K + (K - 1 - b)]!;
      gw[(o * K + (K - 1 - a)) * K + (K - 1 - b)]! += g * x[(n * H + i + a) * H + j + b]!;
    }
  }
  return [y, gx, gw];
}

async function run(suite: Suite): Promise<void> {
  const x = uniform(N * H * H, 91);
  const w = uniform(O * K * K, 92, -0.2, 0.2);
  const [wantY, wantGx, wantGw] = reference(x, w);
  const check = (got: Float32Array[]): CheckResult => {
    const parts = [compare('y', got[0]!, wantY, { rtol: 1e-4, floor: 1e-4 }), compare('gx', got[1]!, wantGx, { rtol: 1e-4, floor: 1e-3 }), compare('gw', got[2]!, wantGw, { rtol: 1e-4, floor: 1e-2 })];
    return parts.find((p) => !p.ok) ?? parts[0]!;
  };
  const common = { group: GROUP, unit: 'ms' as const, figure: (ms: number) => ms, check };
  // A millisecond a call: every system of the forward group warms up for 1.5 s, as a worker runs
  // a kernel in V8's baseline WebAssembly code (Liftoff) until it has called it often enough.
  const forward = { group: FORWARD, unit: 'ms' as const, figure: (ms: number) => ms, warmupMs: 1500, check: (got: Float32Array) => compare('y', got, wantY, { rtol: 1e-4, floor: 1e-4 }) };
  const wFlipped = flippedOIHW(w);

  const xs = pt.tensor4('x', 'float32');
  const ws = pt.tensor4('w', 'float32');
  const y = pt.conv2d(xs, ws);
  const [gx, gw] = weft.grad(y.mul(y).sum().mul(0.5), [xs, ws]) as TV[];
  const pool = weft.createPool({ workers: 2 });
  try {
    const resident = [pool.from(weft.ndarray(x, [N, 1, H, H])), pool.from(weft.ndarray(w, [O, 1, K, K]))] as const;
    const direct = new weft.Mode({ excluding: ['conv_gemm'] });
    for (const [workers, mode] of [[0, undefined], [1, undefined], [2, undefined], [1, direct], [2, direct]] as const) {
      await suite.measure({
        ...common,
        system: 'weft',
        config: `${workersLabel(workers)}, inputs from pool.from${mode ? ', direct kernels (no im2col)' : ''}`,
        counts: mode ? { runs: 5, minRuns: 3 } : undefined,
        goals: workers === 2 && !mode ? [{ kind: 'speedup', label: '1.5x tfjs', vs: TFJS, atLeast: 1.5 }] : undefined,
        setup: async () => {
          const fn = await weft.compile([xs, ws], [y, gx!, gw!], { pool, workers, mode });
          return { run: async () => ((await fn(...resident)) as weft.NdArray[]).map(float32Data), dispose: () => fn.dispose() };
        },
      });
    }
    // The forward's output (1.2 MB) fresh, and given back after use with weft.release (warm pages).
    for (const [workers, release] of [[0, false], [1, false], [2, false], [0, true], [2, true]] as const) {
      await suite.measure({
        ...forward,
        system: 'weft',
        config: `${workersLabel(workers)}, inputs from pool.from${release ? ', output released' : ''}`,
        goals: workers === 2 ? [{ kind: 'speedup', label: '1.5x tfjs wasm', vs: TFJS_WASM, atLeast: 1.5 }, { kind: 'speedup', label: '3x tfjs wasm (goal)', vs: TFJS_WASM, atLeast: 3 }] : undefined,
        setup: async () => {
          const fn = await weft.compile([xs, ws], y, { pool, workers });
          return {
            run: outputRun(async () => (await fn(...resident)) as weft.NdArray, release),
            dispose: () => fn.dispose(),
          };
        },
      });
    }
  } finally {
    await pool.close();
  }

  await suite.measure({
    ...common,
    ...TFJS,
    reference: true,
    setup: async () => {
      const tf = await (await loadTfjs()).use('cpu');
      // tfjs is NHWC with HWIO filters, and cross-correlates: the filters are flipped here once.
      const flipped = new Float32Array(K * K * O);
      for (let o = 0; o < O; o++) for (let a = 0; a < K; a++) for (let b = 0; b < K; b++) flipped[(a * K + b) * O + o] = w[(o * K + (K - 1 - a)) * K + (K - 1 - b)]!;
      const tx = tf.tensor4d(x, [N, H, H, 1]);
      const tw = tf.tensor4d(flipped, [K, K, 1, O]);
      type T4 = ReturnType<typeof tf.tensor4d>;
      const step = tf.grads((...ts) => tf.conv2d(ts[0] as T4, ts[1] as T4, 1, 'valid').square().sum().mul(0.5));
      return {
        run: () => {
          const yv = tf.conv2d(tx, tw, 1, 'valid');
          const [ga, gb] = step([tx, tw]);
          // Back to NCHW and OIHW (flipped back) to compare.
          const yd = yv.transpose([0, 3, 1, 2]).dataSync() as Float32Array;
          const gad = ga!.dataSync() as Float32Array;
          const gbd = gb!.dataSync() as Float32Array;
          const gwd = new Float32Array(O * K * K);
          for (let o = 0; o < O; o++) for (let a = 0; a < K; a++) for (let b = 0; b < K; b++) gwd[(o * K + (K - 1 - a)) * K + (K - 1 - b)] = gbd[(a * K + b) * O + o]!;
          tf.dispose([yv, ga!, gb!]);
          return [yd, gad, gwd];
        },
        dispose: () => tf.dispose([tx, tw]),
      };
    },
  });

  await suite.measure({
    ...common,
    system: 'jax-js wasm',
    config: 'jit of the forward and of grad, 1 thread',
    setup: async () => {
      const jax = await loadJax();
      const np = jax.numpy;
      type A = InstanceType<typeof jax.Array>;
      const conv = (a: A, b: A): A => jax.lax.conv(a, b, [1, 1], 'VALID');
      const fwd = jax.jit(conv);
      const grads = jax.jit(jax.grad((a: A, b: A) => {
        const yv = conv(a, b);
        return yv.ref.mul(yv).sum().mul(0.5);
      }, { argnums: [0, 1] }) as (a: A, b: A) => A[]);
      const [ja, jb] = [np.array(x).reshape([N, 1, H, H]), np.array(wFlipped).reshape([O, 1, K, K])];
      return {
        run: () => {
          const yd = fwd(ja.ref, jb.ref).dataSync() as Float32Array;
          const [ga, gb] = grads(ja.ref, jb.ref);
          return [yd, ga!.dataSync() as Float32Array, flippedOIHW(gb!.dataSync() as Float32Array)];
        },
        dispose: () => {
          ja.dispose();
          jb.dispose();
          fwd.dispose();
          grads.dispose();
        },
      };
    },
  });

  for (const backend of ['wasm', 'cpu'] as const) {
    await suite.measure({
      ...forward,
      system: `tfjs ${backend}`,
      config: 'eager, 1 thread',
      reference: backend === 'wasm',
      setup: async () => {
        const tf = await (await loadTfjs()).use(backend);
        const hwio = new Float32Array(K * K * O);
        for (let o = 0; o < O; o++) for (let a = 0; a < K; a++) for (let b = 0; b < K; b++) hwio[(a * K + b) * O + o] = wFlipped[(o * K + a) * K + b]!;
        const tx = tf.tensor4d(x, [N, H, H, 1]);
        const tw = tf.tensor4d(hwio, [K, K, 1, O]);
        return {
          run: () => {
            const yd = tf.tidy(() => tf.conv2d(tx, tw, 1, 'valid').transpose([0, 3, 1, 2]));
            const data = yd.dataSync() as Float32Array;
            yd.dispose();
            return data;
          },
          dispose: () => tf.dispose([tx, tw]),
        };
      },
    });
  }

  await suite.measure({
    ...forward,
    system: 'jax-js wasm',
    config: 'jit, 1 thread',
    setup: async () => {
      const jax = await loadJax();
      const np = jax.numpy;
      type A = InstanceType<typeof jax.Array>;
      const fwd = jax.jit((a: A, b: A): A => jax.lax.conv(a, b, [1, 1], 'VALID'));
      const [ja, jb] = [np.array(x).reshape([N, 1, H, H]), np.array(wFlipped).reshape([O, 1, K, K])];
      return {
        run: () => fwd(ja.ref, jb.ref).dataSync() as Float32Array,
        dispose: () => {
          ja.dispose();
          jb.dispose();
          fwd.dispose();
        },
      };
    },
  });

  const graph = {
    name: 'w9',
    inputs: [{ name: 'x', shape: [N, 1, H, H] }, { name: 'w', shape: [O, 1, K, K] }],
    outputs: [{ name: 'y', shape: [N, O, HO, HO] }],
    nodes: [{ op: 'Conv', inputs: ['x', 'w'], outputs: ['y'] }],
  };
  const feeds = [[x, [N, 1, H, H]], [wFlipped, [O, 1, K, K]]] as const;
  for (const threads of [1, 2]) await suite.measure({ ...forward, ...onnxRow(graph, feeds, threads) });
}

export const w9: Workload = { id: 'W9', title: 'conv2d forward+backward, 32x1x28x28 through 16 filters 5x5, float32 (ms)', run };
