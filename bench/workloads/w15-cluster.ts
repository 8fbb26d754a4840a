// W15: calls through weft.cluster (BullMQ on a local redis-server) against the same calls on a
// local pool: W8's dense layer (tanh(x W + b), x [16, 64]), 2,000 calls issued at once with
// remote.map, through 1 and 2 `weft worker` processes of one thread each; and the latency of one
// call at a time (the queue's per-call overhead: the median of 200 sequential calls). Everything
// runs on this machine, so the 2-process row shares its cores with Redis and the caller; what
// scales on more machines is the worker side (each process takes calls independently).
import { existsSync } from 'node:fs';
import ndarray from 'ndarray';
import { startLocalCluster, type LocalCluster } from '../../examples/lib/local-cluster.js';
import { all, compare } from '../lib/check.js';
import { uniform } from '../lib/data.js';
import type { Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { float32Data, pt, weft } from '../peers/weft.js';

const CALLS = 2000;
const SEQUENTIAL = 200;
const [ROWS, WIDTH, DISTINCT] = [16, 64, 16];
const GROUP = 'W15 cluster calls';
const LATENCY = 'W15 one call latency';

async function run(suite: Suite): Promise<void> {
  const redis = process.env.WEFT_REDIS_SERVER ?? '/usr/bin/redis-server';
  if (!process.env.REDIS_URL && !existsSync(redis)) {
    const why = `no redis-server at ${redis} and no REDIS_URL (apt-get install -y redis-server)`;
    suite.skip({ group: GROUP, system: 'weft.cluster', config: '-', unit: 'calls/s' }, why);
    return;
  }
  const w = uniform(WIDTH * WIDTH, 81, -0.2, 0.2);
  const b = uniform(WIDTH, 82, -0.1, 0.1);
  const xs = Array.from({ length: DISTINCT }, (_, k) => ndarray(uniform(ROWS * WIDTH, 100 + k), [ROWS, WIDTH]));
  const x = pt.matrix('x', 'float32');
  const y = pt.tanh(x.dot(weft.shared(ndarray(w, [WIDTH, WIDTH]), { name: 'W', dtype: 'float32' })).add(weft.shared(b, { name: 'b', dtype: 'float32' })));
  const pool = weft.createPool({ workers: 1 });
  const local = await weft.compile([x], y, { pool, name: 'dense' });
  const wants = await Promise.all(xs.map(async (v) => Float64Array.from(float32Data(await local(v)))));
  const check = (outs: Float32Array[]) => all(outs.map((o, i) => compare(`call ${i}`, o, wants[i % DISTINCT]!, { rtol: 0, floor: 0 })));
  const many = (call: (v: weft.NdArray) => Promise<weft.NdArray>) => async () => (await Promise.all(Array.from({ length: CALLS }, (_, i) => call(xs[i % DISTINCT]!)))).map(float32Data);
  const sequential = (call: (v: weft.NdArray) => Promise<weft.NdArray>) => async () => {
    for (let i = 0; i < SEQUENTIAL; i++) await call(xs[i % DISTINCT]!);
    return [float32Data(await call(xs[0]!))];
  };
  const perCall = (ms: number) => (ms * 1000) / (SEQUENTIAL + 1);
  try {
    await suite.measure({ group: GROUP, system: 'weft', config: 'local pool, 1 worker', unit: 'calls/s', figure: (ms) => CALLS / (ms / 1000), reference: true, check, setup: async () => ({ run: many((v) => local(v)) }) });
    await suite.measure({ group: LATENCY, system: 'weft', config: 'local pool, 1 worker', unit: 'µs/call', figure: perCall, reference: true, setup: async () => ({ run: sequential((v) => local(v)) }) });
    for (const processes of [1, 2]) {
      let cluster: LocalCluster | undefined;
      try {
        cluster = await startLocalCluster(processes);
        const remote = await weft.cluster.connect(local, { connection: cluster.url, queue: cluster.queue });
        const config = `${processes} weft worker process${processes === 1 ? '' : 'es'} x 1 thread`;
        await suite.measure({
          group: GROUP,
          system: 'weft.cluster',
          config,
          unit: 'calls/s',
          figure: (ms) => CALLS / (ms / 1000),
          check,
          counts: { runs: 5, minRuns: 3 },
          note: 'Redis, the caller and the worker processes share this machine\'s 2 cores',
          setup: async () => ({ run: async () => (await remote.map(Array.from({ length: CALLS }, (_, i) => [xs[i % DISTINCT]!] as [weft.NdArray]))).map(float32Data) }),
        });
        if (processes === 1) {
          await suite.measure({ group: LATENCY, system: 'weft.cluster', config, unit: 'µs/call', figure: perCall, counts: { runs: 5, minRuns: 3 }, setup: async () => ({ run: sequential((v) => remote(v)) }) });
        }
        await remote.close();
      } finally {
        await cluster?.stop();
      }
    }
  } finally {
    local.dispose();
    await pool.close();
  }
}

export const w15: Workload = { id: 'W15', title: 'weft.cluster: calls through BullMQ/Redis to weft worker processes, against a local pool', run };
