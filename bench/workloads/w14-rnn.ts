// W14: a tanh RNN, h_t = tanh(x_t Wx + h_{t-1} Wh + b), input 128, hidden 512, batch 64, 100 steps,
// float32; loss = sum(h_100^2); one call gives the loss and its gradients (back through time) with
// respect to Wx, Wh, b and h0, in ms per call. weft loops with weft.scan (with and without its scan
// rewrites, on 1 and 2 workers, every input resident through pool.from as in W9 and W10); tfjs wasm
// (one thread: its threads do not run under Node) and jax-js (@jax-js/jax 0.1.25 has no scan or
// fori loop: the loop unrolled under its jit) take gradients of the loop unrolled over 100 steps.
// Every system's first call is checked against a float64 reference (the loss and every gradient
// entry). The reference row is weft on 1 worker: ratios are 2 workers vs 1 and vs each peer.
// `--quick` keeps the sizes (figures stay comparable) and takes the suite's fewer runs.
import { all, compare, type CheckResult } from '../lib/check.js';
import { uniform } from '../lib/data.js';
import type { Goal, RowKey, Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { loadJax } from '../peers/jax.js';
import { loadTfjs } from '../peers/tfjs.js';
import { float32Data, pt, weft, workersLabel, type TV } from '../peers/weft.js';
import { rnnLossAndGrads, type RnnParams, type RnnShape } from './rnn-reference.js';

const SHAPE: RnnShape = { steps: 100, batch: 64, inputs: 128, hidden: 512 };
const { steps: T, batch: B, inputs: I, hidden: H } = SHAPE;
const GROUP = 'W14 RNN fwd+BPTT';
const NAMES = ['wx', 'wh', 'b', 'h0'] as const;
type Name = (typeof NAMES)[number];
const DIMS: Record<Name, number[]> = { wx: [I, H], wh: [H, H], b: [H], h0: [B, H] };

/** What a call yields: the loss and the gradients, as float32. */
interface Result {
  readonly loss: number;
  readonly grads: Readonly<Record<Name, Float32Array>>;
}

const weftConfig = (workers: number, rewrites: boolean): string => `${workersLabel(workers)}, scan${rewrites ? '' : ' rewrites excluded'}, inputs from pool.from`;
const WEFT_1: RowKey = { group: GROUP, system: 'weft', config: weftConfig(1, true) };
const WEFT_2_EXCLUDED: RowKey = { group: GROUP, system: 'weft', config: weftConfig(2, false) };
const TFJS_WASM: RowKey = { group: GROUP, system: 'tfjs wasm', config: 'grads of 100 unrolled steps, 1 thread' };
const JAX: RowKey = { group: GROUP, system: 'jax-js wasm', config: 'jit of valueAndGrad, 100 unrolled steps, 1 thread' };
const GOALS_2: readonly Goal[] = [
  { kind: 'speedup', label: '1.7x 1 worker', vs: WEFT_1, atLeast: 1.7 },
  { kind: 'speedup', label: 'faster than tfjs wasm', vs: TFJS_WASM, atLeast: 1 },
  { kind: 'speedup', label: 'faster than jax-js', vs: JAX, atLeast: 1 },
  { kind: 'speedup', label: 'vs scan rewrites excluded', vs: WEFT_2_EXCLUDED, atLeast: 1 },
];

/**
 * Seeded inputs. Wh's spectral radius is about 0.9: the loop contracts, so float32 and float64 runs
 * stay close over 100 steps (the gradient with respect to h0 fades to about 1e-13, the floor judges it).
 */
function inputs(): RnnParams {
  return {
    x: uniform(T * B * I, 141),
    h0: uniform(B * H, 142, -0.5, 0.5),
    wx: uniform(I * H, 143, -0.1, 0.1),
    wh: uniform(H * H, 144, -0.07, 0.07),
    b: uniform(H, 145, -0.1, 0.1),
  };
}

async function run(suite: Suite): Promise<void> {
  const p = inputs();
  // About 8 s of plain JS, once: the reference every row (weft's too) is held to.
  const ref = rnnLossAndGrads(SHAPE, p);
  // Float32 rounding over 100 steps: loss to 1e-4, gradients to 1e-3 with a floor at 1e-3 of their RMS.
  const check = (got: Result): CheckResult =>
    all([compare('loss', [got.loss], [ref.loss], { rtol: 1e-4 }), ...NAMES.map((n) => compare(`d loss / d ${n}`, got.grads[n], ref.grads[n], { rtol: 1e-3, floor: 1e-3 }))]);
  const common = { group: GROUP, unit: 'ms' as const, figure: (ms: number) => ms, check };

  const X = pt.tensor3('X', 'float32');
  const vars: Record<Name, TV> = { wx: pt.matrix('Wx', 'float32'), wh: pt.matrix('Wh', 'float32'), b: pt.vector('b', 'float32'), h0: pt.matrix('h0', 'float32') };
  const { outputs: hs } = weft.scan({
    fn: (x: TV, h: TV, wx: TV, wh: TV, b: TV) => pt.tanh(x.dot(wx).add(h.dot(wh)).add(b)),
    sequences: [X],
    outputsInfo: [vars.h0],
    nonSequences: [vars.wx, vars.wh, vars.b],
    name: 'rnn',
  });
  const last = hs.get(-1);
  const loss = last.mul(last).sum();
  const grads = weft.grad(loss, NAMES.map((n) => vars[n])) as TV[];
  const pool = weft.createPool({ workers: 2 });
  try {
    const [wx, wh, b, h0] = NAMES.map((n) => pool.from(weft.ndarray(p[n], DIMS[n])));
    const resident = [pool.from(weft.ndarray(p.x, [T, B, I])), wx!, wh!, b!, h0!] as const;
    const noScanRewrites = new weft.Mode({ excluding: ['scan'] });
    for (const rewrites of [true, false]) {
      for (const workers of [1, 2]) {
        await suite.measure({
          ...common,
          system: 'weft',
          config: weftConfig(workers, rewrites),
          reference: workers === 1 && rewrites,
          goals: workers === 2 && rewrites ? GOALS_2 : undefined,
          setup: async () => {
            const fn = await weft.compile([X, ...NAMES.map((n) => vars[n])], [loss, ...grads], { pool, workers, mode: rewrites ? undefined : noScanRewrites });
            const plan = fn.planInfo(...resident);
            return {
              run: async (): Promise<Result> => {
                const [l, ...g] = (await fn(...resident)) as weft.NdArray[];
                return { loss: float32Data(l!)[0]!, grads: { wx: float32Data(g[0]!), wh: float32Data(g[1]!), b: float32Data(g[2]!), h0: float32Data(g[3]!) } };
              },
              dispose: () => fn.dispose(),
              // The region holds the stacked states and the per-step gradients the backward loop stacks.
              info: { nodes: fn.fgraph.toposort().length, regionBytes: plan.regionBytes, tasks: plan.tasks },
            };
          },
        });
      }
    }
  } finally {
    await pool.close();
  }

  await suite.measure({
    ...common,
    ...TFJS_WASM,
    // A call takes seconds: fewer runs.
    counts: { runs: 5, minRuns: 3 },
    setup: async () => {
      const tf = await (await loadTfjs()).use('wasm');
      type T2 = ReturnType<typeof tf.tensor2d>;
      const xs = tf.tidy(() => tf.unstack(tf.tensor3d(p.x, [T, B, I])) as T2[]);
      const params = NAMES.map((n) => tf.tensor(p[n], DIMS[n]));
      const step = tf.valueAndGrads((...ts) => {
        const [wx, wh, b, h0] = ts as T2[];
        let h = h0!;
        for (const x of xs) h = tf.tanh(tf.add(tf.add(tf.matMul(x, wx!), tf.matMul(h, wh!)), b!));
        return tf.sum(tf.square(h));
      });
      return {
        run: (): Result => {
          const { value, grads: g } = step(params);
          const data = g.map((t) => t.dataSync() as Float32Array);
          const result = { loss: value.dataSync()[0]!, grads: { wx: data[0]!, wh: data[1]!, b: data[2]!, h0: data[3]! } };
          tf.dispose([value, ...g]);
          return result;
        },
        dispose: () => tf.dispose([...xs, ...params]),
      };
    },
  });

  await suite.measure({
    ...common,
    ...JAX,
    counts: { runs: 5, minRuns: 3 },
    setup: async () => {
      const jax = await loadJax();
      const np = jax.numpy;
      type A = InstanceType<typeof jax.Array>;
      type Params = Record<Name, A>;
      // jax-js arrays are consumed by every use: `.ref` keeps one for the next step, the last step consumes.
      const lossOf = (q: Params, xa: A): A => {
        let h = q.h0;
        for (let t = 0; t < T; t++) {
          const keep = t < T - 1;
          const [wx, wh, b, x] = keep ? [q.wx.ref, q.wh.ref, q.b.ref, xa.ref] : [q.wx, q.wh, q.b, xa];
          h = np.tanh(np.matmul(x.slice(t), wx).add(np.matmul(h, wh)).add(b));
        }
        return h.ref.mul(h).sum();
      };
      const step = jax.jit(jax.valueAndGrad(lossOf) as (q: Params, xa: A) => [A, Params]);
      const params = { wx: np.array(p.wx).reshape(DIMS.wx), wh: np.array(p.wh).reshape(DIMS.wh), b: np.array(p.b), h0: np.array(p.h0).reshape(DIMS.h0) };
      const xa = np.array(p.x).reshape([T, B, I]);
      return {
        run: (): Result => {
          const [l, g] = step({ wx: params.wx.ref, wh: params.wh.ref, b: params.b.ref, h0: params.h0.ref }, xa.ref);
          return { loss: l.item(), grads: { wx: g.wx.dataSync() as Float32Array, wh: g.wh.dataSync() as Float32Array, b: g.b.dataSync() as Float32Array, h0: g.h0.dataSync() as Float32Array } };
        },
        dispose: () => {
          for (const a of [...Object.values(params), xa]) a.dispose();
          step.dispose();
        },
      };
    },
  });
}

export const w14: Workload = { id: 'W14', title: 'tanh RNN 128 -> 512, batch 64, 100 steps, float32: loss and BPTT gradients (ms per call)', run };
