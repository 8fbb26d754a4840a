// W6: dispatch costs. (1) Per task, with hot workers: a chain of 10k tiny tasks (each waits for
// the one before) and a fan of 5k tiny branches joined by a tree of 5k maxima (10k tasks), on
// vectors of 8 float32 values, compiled without fusion so that every node stays a task. The figure is the
// call's time divided by its tasks (kernel work included, which is tiny); the reference is the
// same plan run on the calling thread. (2) The end-to-end latency of a 10-op scalar expression,
// from JS numbers to a JS number: weft (its cost model runs it inline; and forced onto two
// workers through the job ring), tfjs eager ops, jax-js jit.
import { compare } from '../lib/check.js';
import { uniform } from '../lib/data.js';
import type { Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { loadJax } from '../peers/jax.js';
import { loadTfjs } from '../peers/tfjs.js';
import { costModel, INLINE_WORK } from '../../dist/src/scheduler/planned-executor.js';
import { float32Data, lastCallTasks, pt, weft, workersLabel, type TV } from '../peers/weft.js';

const LENGTH = 8;
/** Tasks of the chain; the fan has half as many branches, and as many maxima less one. */
const TASKS = 10_000;
const BRANCHES = TASKS / 2;
/** Calls per timed run of the scalar expression. */
const CALLS = 2000;
const SCALAR_GROUP = 'W6 scalar call';
const JAX_JIT = { group: SCALAR_GROUP, system: 'jax-js wasm', config: 'jit' };

/** The chain's k-th op and its float64 counterpart. */
const CHAIN_OPS: ReadonlyArray<readonly [(v: TV) => TV, (v: number) => number]> = [
  [pt.tanh, Math.tanh],
  [pt.sin, Math.sin],
  [pt.cos, Math.cos],
];

function chain(x: TV): TV {
  let v = x;
  for (let k = 0; k < TASKS; k++) v = CHAIN_OPS[k % CHAIN_OPS.length]![0](v);
  return v;
}

function chainReference(x: Float32Array): Float64Array {
  return Float64Array.from(x, (v0) => {
    let v = v0;
    for (let k = 0; k < TASKS; k++) v = CHAIN_OPS[k % CHAIN_OPS.length]![1](v);
    return v;
  });
}

/** Branch k adds its own constant; a balanced tree of maxima joins the branches. */
const fanConstant = (k: number): number => Math.fround(((k * 7919) % BRANCHES) / BRANCHES - 0.5);

function fan(x: TV): TV {
  let level: TV[] = Array.from({ length: BRANCHES }, (_, k) => x.add(fanConstant(k)));
  while (level.length > 1) {
    const next: TV[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(pt.maximum(level[i]!, level[i + 1]!));
    if (level.length % 2 === 1) next.push(level[level.length - 1]!);
    level = next;
  }
  return level[0]!;
}

function fanReference(x: Float32Array): Float64Array {
  let best = -Infinity;
  for (let k = 0; k < BRANCHES; k++) best = Math.max(best, fanConstant(k));
  return Float64Array.from(x, (v) => Math.fround(v + best));
}

async function perTask(suite: Suite): Promise<void> {
  const x = uniform(LENGTH, 61);
  const xs = pt.vector('x', 'float32');
  const noFusion = new weft.Mode({ excluding: ['fusion'] });
  const pool = weft.createPool({ workers: 2 });
  try {
    for (const [name, build, reference] of [
      ['chain', chain, chainReference],
      ['fan', fan, fanReference],
    ] as const) {
      const group = `W6 ${name} 10k`;
      const out = build(xs);
      const want = reference(x);
      // Tasks per call, counted once from a traced call: chunking never depends on the workers.
      let counted: { tasks: number; threads: number } | undefined;
      const countTasks = async (): Promise<{ tasks: number; threads: number }> => {
        const traced = await weft.compile([xs], out, { pool, workers: 2, mode: noFusion, profile: true });
        await traced(x);
        return lastCallTasks(traced);
      };
      for (const workers of [0, 1, 2]) {
        await suite.measure({
          group,
          system: 'weft',
          config: workersLabel(workers),
          unit: 'µs/task',
          figure: (ms) => (ms * 1000) / counted!.tasks,
          reference: workers === 0,
          goals: workers > 0 ? [{ kind: 'value', label: '2 µs/task (BENCH.md)', atMost: 2 }, { kind: 'value', label: '10 µs/task (issue 5)', atMost: 10 }] : undefined,
          check: (got: Float32Array) => compare(name, got, want, { rtol: 1e-4 }),
          setup: async () => {
            counted ??= await countTasks();
            const compileStarted = performance.now();
            const fn = await weft.compile([xs], out, { pool, workers, mode: noFusion });
            const compileMs = performance.now() - compileStarted;
            const planStarted = performance.now();
            await fn(x);
            const firstCallMs = performance.now() - planStarted;
            return {
              run: async () => float32Data(await fn(x)),
              info: { compileMs, firstCallMs, nodes: fn.fgraph.toposort().length, tasks: counted.tasks, threadsWhenTraced: counted.threads },
            };
          },
        });
      }
    }
  } finally {
    await pool.close();
  }
}

/** The 10-op scalar expression: log(sqr(exp(tanh(a*b + c) * a) - b) + 1) / c. */
const [A, B, C] = [0.7, 1.3, 0.9];
function scalarReference(a: number, b: number, c: number): number {
  return Math.log((Math.exp(Math.tanh(a * b + c) * a) - b) ** 2 + 1) / c;
}

async function scalarCall(suite: Suite): Promise<void> {
  const want = scalarReference(Math.fround(A), Math.fround(B), Math.fround(C));
  const common = {
    group: SCALAR_GROUP,
    unit: 'µs/call' as const,
    figure: (ms: number) => (ms * 1000) / CALLS,
    check: (got: number) => compare('f(a, b, c)', [got], [want], { rtol: 1e-5 }),
    // Latency in steady state: each system's calls take 10k or more before the JIT settles.
    warmupMs: 4000,
  };

  await suite.measure({
    ...common,
    system: 'weft',
    config: 'default (inline: tiny)',
    goals: [
      { kind: 'value', label: '5 µs (BENCH.md)', atMost: 5 },
      { kind: 'speedup', label: '2x jax-js jit', vs: JAX_JIT, atLeast: 2 },
      { kind: 'value', label: '50 µs (issue 5)', atMost: 50 },
    ],
    setup: async () => {
      const [a, b, c] = (['a', 'b', 'c'] as const).map((n) => pt.scalar(n, 'float32')) as [TV, TV, TV];
      const f = a.mul(b).add(c).tanh().mul(a).exp().sub(b).sqr().add(1).log().trueDiv(c);
      const fn = await weft.compile([a, b, c], f);
      return {
        run: async () => {
          let v = 0;
          for (let i = 0; i < CALLS; i++) v = (await fn(A, B, C)).data[0] as number;
          return v;
        },
        info: { nodes: fn.fgraph.toposort().map((n) => String(n.op)) },
      };
    },
  });

  // The same call forced onto two workers (the cost model's inline threshold set to 0): what
  // running it inline saves, a round trip through the job ring and a wake-up of the workers.
  const pool = weft.createPool({ workers: 2 });
  try {
    await suite.measure({
      ...common,
      system: 'weft',
      config: '2 workers (forced, not inline)',
      setup: async () => {
        const [a, b, c] = (['a', 'b', 'c'] as const).map((n) => pt.scalar(n, 'float32')) as [TV, TV, TV];
        const f = a.mul(b).add(c).tanh().mul(a).exp().sub(b).sqr().add(1).log().trueDiv(c);
        const fn = await weft.compile([a, b, c], f, { pool, workers: 2 });
        return {
          run: async () => {
            costModel.inlineWork = 0;
            try {
              let v = 0;
              for (let i = 0; i < CALLS; i++) v = (await fn(A, B, C)).data[0] as number;
              return v;
            } finally {
              costModel.inlineWork = INLINE_WORK;
            }
          },
        };
      },
    });
  } finally {
    await pool.close();
  }

  for (const backend of ['cpu', 'wasm'] as const) {
    await suite.measure({
      ...common,
      system: `tfjs ${backend}`,
      config: 'eager',
      setup: async () => {
        const tf = await (await loadTfjs()).use(backend);
        const once = (): number => {
          const out = tf.tidy(() => {
            const [a, b, c] = [tf.scalar(A), tf.scalar(B), tf.scalar(C)];
            return tf.div(tf.log(tf.add(tf.square(tf.sub(tf.exp(tf.mul(tf.tanh(tf.add(tf.mul(a, b), c)), a)), b)), 1)), c);
          });
          const v = out.dataSync()[0]!;
          out.dispose();
          return v;
        };
        return {
          run: () => {
            let v = 0;
            for (let i = 0; i < CALLS; i++) v = once();
            return v;
          },
        };
      },
    });
  }

  await suite.measure({
    ...common,
    ...JAX_JIT,
    reference: true,
    setup: async () => {
      const jax = await loadJax();
      const np = jax.numpy;
      type Arr = InstanceType<typeof jax.Array>;
      const f = jax.jit((a: Arr, b: Arr, c: Arr) =>
        np.log(np.square(np.exp(np.tanh(a.ref.mul(b.ref).add(c.ref)).mul(a)).sub(b)).add(1)).div(c),
      );
      return {
        run: () => {
          let v = 0;
          for (let i = 0; i < CALLS; i++) v = f(A, B, C).item();
          return v;
        },
        dispose: () => f.dispose(),
      };
    },
  });
}

async function run(suite: Suite): Promise<void> {
  await perTask(suite);
  await scalarCall(suite);
}

export const w6: Workload = { id: 'W6', title: 'dispatch: 10k tiny tasks (chain, fan) per task; 10-op scalar call latency', run };
