// W1: the fused chain z = exp(x) * y + tanh(w) over 4M float32 values, end to end: each system's
// inputs are resident in its own form (weft: typed arrays, which every call copies into its arena,
// and arrays of pool.from; tfjs, jax-js, onnxruntime: tensors made once), and the result is read
// back as a Float32Array. The reference row is onnxruntime-node on 2 threads. Each weft row with
// goals is timed in turns with the peers they name, onnxruntime and the plain JS loop on 2 threads
// (Suite.measureAlongside); tfjs cpu, named by a 20x goal, is timed on its own like the others.
import { compare } from '../lib/check.js';
import { uniform } from '../lib/data.js';
import type { Measurement, Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { loadJax } from '../peers/jax.js';
import { LoopTeam } from '../peers/loop-team.js';
import { onnxRow } from '../peers/onnx.js';
import { loadTfjs } from '../peers/tfjs.js';
import { outputRun, pt, weft, workersLabel } from '../peers/weft.js';

const N = 4 * 1024 * 1024;
const GROUP = 'W1 4M fused';
const ORT_2: { group: string; system: string; config: string } = { group: GROUP, system: 'onnxruntime-node', config: '2 threads' };
const TFJS_CPU = { group: GROUP, system: 'tfjs cpu', config: 'eager, 1 thread' };
const ORT_1 = { group: GROUP, system: 'onnxruntime-node', config: '1 thread' };
const LOOP_2 = { group: GROUP, system: 'plain JS loop', config: '2 threads (SAB)' };

async function run(suite: Suite): Promise<void> {
  const x = uniform(N, 11);
  const y = uniform(N, 12);
  const w = uniform(N, 13);
  const want = new Float64Array(N);
  for (let i = 0; i < N; i++) want[i] = Math.exp(x[i]!) * y[i]! + Math.tanh(w[i]!);
  const check = (got: Float32Array) => compare('z', got, want, { rtol: 1e-5, floor: 1e-5 });
  const common = { group: GROUP, unit: 'ms' as const, figure: (ms: number) => ms, check };

  // weft: one pool of 2 workers; the worker count is a compile option.
  const pool = weft.createPool({ workers: 2 });
  try {
    const rows: Measurement<Float32Array>[] = [];
    const peers: Measurement<Float32Array>[] = [];
    const xs = pt.vector('x', 'float32');
    const ys = pt.vector('y', 'float32');
    const ws = pt.vector('w', 'float32');
    const z = xs.exp().mul(ys).add(ws.tanh());
    // Layouts: plain Float32Arrays, which every call copies into the arena; arrays made once
    // by pool.from, which the call reads where they are (weft's form of the peers' tensors made
    // once), with a fresh output; those whose output is given back with weft.release after use (warm
    // pages); and those with a borrowed output (no copy out: the kernel alone).
    const inPool = [pool.from(x), pool.from(y), pool.from(w)] as const;
    const layouts = [
      { resident: false, borrow: false, release: false, label: '', workers: [0, 1, 2] },
      { resident: false, borrow: false, release: true, label: ', output released', workers: [2] },
      { resident: true, borrow: false, release: false, label: ', inputs from pool.from', workers: [0, 1, 2] },
      { resident: true, borrow: false, release: true, label: ', inputs from pool.from, output released', workers: [1, 2] },
      { resident: true, borrow: true, release: false, label: ', inputs from pool.from, output borrowed', workers: [1, 2] },
    ];
    for (const { resident, borrow, release, label, workers: counts } of layouts) {
      for (const workers of counts) {
        rows.push({
          ...common,
          system: 'weft',
          config: `${workersLabel(workers)}${label}`,
          goals:
            workers === 2 && !borrow
              ? [
                  { kind: 'speedup', label: 'onnxruntime 1 thread (issue 12)', vs: ORT_1, atLeast: 1 },
                  { kind: 'speedup', label: '2x onnxruntime 2 threads', vs: ORT_2, atLeast: 2 },
                  { kind: 'speedup', label: '3x plain JS loop 2 threads (issue 12)', vs: LOOP_2, atLeast: 3 },
                  ...(resident ? [] : [{ kind: 'speedup' as const, label: '20x tfjs cpu', vs: TFJS_CPU, atLeast: 20 }]),
                ]
              : undefined,
          setup: async () => {
            const fn = await weft.compile([xs, ys, ws], borrow ? weft.Out(z, { borrow: true }) : z, { pool, workers });
            const args = resident ? inPool : ([x, y, w] as const);
            return {
              run: outputRun(async () => (await fn(...args)) as weft.NdArray, release),
              dispose: () => fn.dispose(),
              info: { nodes: fn.fgraph.toposort().map((n) => String(n.op)) },
            };
          },
        });
      }
    }

    const loop = (threads: number): Measurement<Float32Array> => ({
      ...common,
      system: 'plain JS loop',
      config: `${threads} thread${threads === 1 ? '' : 's'} (SAB)`,
      setup: async () => {
        const team = await LoopTeam.start(threads, 'fusedChain', [x, y, w]);
        return { run: () => team.run(), dispose: () => team.close() };
      },
    });
    peers.push(loop(2));

    const shape = [N];
    const graph = {
      name: 'w1',
      inputs: ['x', 'y', 'w'].map((name) => ({ name, shape })),
      outputs: [{ name: 'z', shape }],
      nodes: [
        { op: 'Exp', inputs: ['x'], outputs: ['e'] },
        { op: 'Mul', inputs: ['e', 'y'], outputs: ['m'] },
        { op: 'Tanh', inputs: ['w'], outputs: ['t'] },
        { op: 'Add', inputs: ['m', 't'], outputs: ['z'] },
      ],
    };
    for (const threads of [1, 2]) peers.push({ ...common, ...onnxRow(graph, [x, y, w].map((v) => [v, shape] as const), threads), reference: threads === 2 });
    await suite.measureAlongside(rows, peers);
    await suite.measure(loop(1));
  } finally {
    await pool.close();
  }

  for (const backend of ['cpu', 'wasm'] as const) {
    await suite.measure({
      ...common,
      system: `tfjs ${backend}`,
      config: 'eager, 1 thread',
      counts: backend === 'cpu' ? { runs: 5, minRuns: 3 } : undefined,
      setup: async () => {
        const tf = await (await loadTfjs()).use(backend);
        const [tx, ty, tw] = [x, y, w].map((a) => tf.tensor1d(a));
        return {
          run: () => {
            const out = tf.tidy(() => tf.exp(tx!).mul(ty!).add(tf.tanh(tw!)));
            const data = out.dataSync() as Float32Array;
            out.dispose();
            return data;
          },
          dispose: () => tf.dispose([tx!, ty!, tw!]),
        };
      },
    });
  }

  await suite.measure({
    ...common,
    system: 'jax-js wasm',
    config: 'jit, 1 thread',
    setup: async () => {
      const jax = await loadJax();
      const np = jax.numpy;
      const f = jax.jit((a: InstanceType<typeof jax.Array>, b: InstanceType<typeof jax.Array>, c: InstanceType<typeof jax.Array>) =>
        np.exp(a).mul(b).add(np.tanh(c)),
      );
      const [ja, jb, jc] = [x, y, w].map((v) => np.array(v));
      return {
        run: () => f(ja!.ref, jb!.ref, jc!.ref).dataSync() as Float32Array,
        dispose: () => {
          for (const v of [ja!, jb!, jc!]) v.dispose();
          f.dispose();
        },
      };
    },
  });
}

export const w1: Workload = { id: 'W1', title: 'fused chain z = exp(x) * y + tanh(w), 4M float32 (ms per call)', run };
