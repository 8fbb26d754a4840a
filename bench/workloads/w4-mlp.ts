// W4: one training step of an MLP 784-512-10 (relu, log-softmax cross-entropy), batch 256,
// float32: forward, gradient and the SGD update of the parameters, in steps per second. weft
// keeps the parameters in shared variables updated by the compiled function; tfjs in variables
// updated by its SGD optimizer; jax-js as arrays returned by a jitted step. Every system starts
// from the same parameters and its first step is checked against a float64 reference (the loss,
// and the change of every parameter). The reference row is jax-js, the fastest JS peer here, and
// the 2-worker row is timed in turns with it (Suite.measureAlongside).
import ndarray from 'ndarray';
import { all, compare, type CheckResult } from '../lib/check.js';
import { oneHot, uniform } from '../lib/data.js';
import type { Measurement, Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { loadJax } from '../peers/jax.js';
import { loadTfjs } from '../peers/tfjs.js';
import { pt, weft, workersLabel } from '../peers/weft.js';
import { mlpStep, type MlpParams, type MlpShape } from './mlp-reference.js';

const SHAPE: MlpShape = { batch: 256, inputs: 784, hidden: 512, classes: 10 };
const LR = 0.1;
const GROUP = 'W4 MLP step';
const JAX = { group: GROUP, system: 'jax-js wasm', config: 'jit, 1 thread' };
const NAMES = ['w1', 'b1', 'w2', 'b2'] as const;
type Name = (typeof NAMES)[number];

function initialParams(): MlpParams {
  const { inputs: I, hidden: H, classes: C } = SHAPE;
  return { w1: uniform(I * H, 41, -0.05, 0.05), b1: uniform(H, 42, -0.01, 0.01), w2: uniform(H * C, 43, -0.1, 0.1), b2: uniform(C, 44, -0.01, 0.01) };
}

/** One value per parameter. */
function byName<T>(f: (n: Name) => T): Record<Name, T> {
  return { w1: f('w1'), b1: f('b1'), w2: f('w2'), b2: f('b2') };
}

const SHAPES: Record<Name, number[]> = {
  w1: [SHAPE.inputs, SHAPE.hidden],
  b1: [SHAPE.hidden],
  w2: [SHAPE.hidden, SHAPE.classes],
  b2: [SHAPE.classes],
};

async function run(suite: Suite): Promise<void> {
  const { batch: B, inputs: I, classes: C } = SHAPE;
  const x = uniform(B * I, 45, 0, 1);
  const y = oneHot(B, C, 46);
  const p0 = initialParams();
  const ref = mlpStep(SHAPE, p0, x, y);
  /** The first step's loss and parameter changes against the reference (delta = -lr * grad). */
  const checkStep = (loss: number, after: Record<Name, ArrayLike<number>>): CheckResult =>
    all([
      compare('loss', [loss], [ref.loss], { rtol: 1e-4 }),
      ...NAMES.map((n) => {
        const delta = Float64Array.from(after[n], (v, i) => v - p0[n][i]!);
        return compare(`change of ${n}`, delta, ref.grads[n].map((g) => -LR * g), { rtol: 1e-3, floor: 1e-3 });
      }),
    ]);
  // Every system warms up for 1.5 s: a training loop runs thousands of steps, and three warm-up
  // steps left weft's product kernels in V8's baseline WebAssembly code (Liftoff) on the workers,
  // and jax-js's likewise.
  const common = { group: GROUP, unit: 'steps/s' as const, figure: (ms: number) => 1000 / ms, warmupMs: 1500 };

  const jax: Measurement<number> = {
    ...common,
    ...JAX,
    reference: true,
    setup: async () => {
      const jax = await loadJax();
      const { numpy: np, nn } = jax;
      type A = InstanceType<typeof jax.Array>;
      type Params = { w1: A; b1: A; w2: A; b2: A };
      // jax-js arrays are consumed by every use: `.ref` keeps one for a second use.
      const lossOf = (p: Params, xa: A, ya: A): A => {
        const h = nn.relu(np.matmul(xa, p.w1).add(p.b1));
        const logits = np.matmul(h, p.w2).add(p.b2);
        return np.sum(ya.mul(nn.logSoftmax(logits, -1))).mul(-1 / B);
      };
      const step = jax.jit((p: Params, xa: A, ya: A) => {
        const [loss, g] = jax.valueAndGrad(lossOf)({ w1: p.w1.ref, b1: p.b1.ref, w2: p.w2.ref, b2: p.b2.ref }, xa, ya);
        const next: Params = {
          w1: p.w1.sub(g.w1.mul(LR)),
          b1: p.b1.sub(g.b1.mul(LR)),
          w2: p.w2.sub(g.w2.mul(LR)),
          b2: p.b2.sub(g.b2.mul(LR)),
        };
        return [loss, next] as [A, Params];
      });
      let params: Params = { w1: np.array(p0.w1).reshape(SHAPES.w1), b1: np.array(p0.b1), w2: np.array(p0.w2).reshape(SHAPES.w2), b2: np.array(p0.b2) };
      const xa = np.array(x).reshape([B, I]);
      const ya = np.array(y).reshape([B, C]);
      return {
        run: () => {
          const [loss, next] = step(params, xa.ref, ya.ref);
          params = next;
          return loss.item();
        },
        verify: (loss: number) => checkStep(loss, byName((n) => params[n].ref.dataSync() as ArrayLike<number>)),
        dispose: () => {
          for (const a of [...Object.values(params), xa, ya]) a.dispose();
          step.dispose();
        },
      };
    },
  };

  const pool = weft.createPool({ workers: 2 });
  try {
    const xs = pt.matrix('x', 'float32');
    const ys = pt.matrix('y', 'float32');
    const rows: Measurement<number>[] = [];
    for (const workers of [0, 1, 2]) {
      rows.push({
        ...common,
        system: 'weft',
        config: workersLabel(workers),
        goals:
          workers === 2
            ? [
                { kind: 'value', label: '100 steps/s', atLeast: 100 },
                { kind: 'speedup', label: '2x jax-js', vs: JAX, atLeast: 2 },
              ]
            : undefined,
        setup: async () => {
          const params = byName((n) => weft.shared(ndarray(p0[n].slice(), SHAPES[n]), { name: n, dtype: 'float32' }));
          const h = pt.relu(xs.dot(params.w1).add(params.b1));
          const logits = h.dot(params.w2).add(params.b2);
          const loss = ys.mul(pt.logSoftmax(logits)).sum({ axis: 1 }).mean().neg();
          const grads = weft.grad(loss, NAMES.map((n) => params[n]));
          const fn = await weft.compile([xs, ys], loss, {
            pool,
            workers,
            updates: NAMES.map((n, i) => [params[n], params[n].sub(grads[i]!.mul(LR))] as const),
          });
          const [nx, ny] = [ndarray(x, [B, I]), ndarray(y, [B, C])];
          return {
            run: async () => (await fn(nx, ny)).data[0] as number,
            verify: (loss: number) => checkStep(loss, byName((n) => params[n].getValue().data as ArrayLike<number>)),
            info: { nodes: fn.fgraph.toposort().length },
          };
        },
      });
    }
    await suite.measureAlongside(rows, [jax]);
  } finally {
    await pool.close();
  }

  for (const backend of ['cpu', 'wasm'] as const) {
    await suite.measure({
      ...common,
      system: `tfjs ${backend}`,
      config: 'eager + SGD, 1 thread',
      counts: backend === 'cpu' ? { runs: 5, minRuns: 3 } : undefined,
      setup: async () => {
        const tf = await (await loadTfjs()).use(backend);
        const vars = byName((n) => tf.variable(tf.tensor(p0[n], SHAPES[n])));
        const tx = tf.tensor2d(x, [B, I]);
        const ty = tf.tensor2d(y, [B, C]);
        const optimizer = tf.train.sgd(LR);
        const lossOf = () => {
          const h = tf.relu(tf.matMul(tx, vars.w1).add(vars.b1));
          const logits = tf.matMul(h, vars.w2).add(vars.b2);
          return tf.neg(tf.mean(tf.sum(tf.mul(ty, tf.logSoftmax(logits)), 1))) as import('@tensorflow/tfjs').Scalar;
        };
        return {
          run: () => {
            const loss = optimizer.minimize(lossOf, true)!;
            const value = loss.dataSync()[0]!;
            loss.dispose();
            return value;
          },
          verify: (loss: number) => checkStep(loss, byName((n) => vars[n].dataSync() as ArrayLike<number>)),
          dispose: () => {
            optimizer.dispose();
            tf.dispose([tx, ty, ...Object.values(vars)]);
          },
        };
      },
    });
  }
}

export const w4: Workload = { id: 'W4', title: 'MLP 784-512-10 training step, batch 256, float32 (steps/s)', run };
