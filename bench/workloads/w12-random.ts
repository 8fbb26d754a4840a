// W12: 16M float32 normal draws (`stream.normal([16M], { dtype: 'float32' })`) on 1 and 2
// workers, in millions of draws per second, with the draws' memory borrowed (weft.Out(...,
// { borrow: true })) so that the figure is the generator's. Each element reads its own Philox
// block (kernels/philox.ts), so the draw is cut into tasks like any element-wise op. The reference
// row is weft on 1 worker (the goal: 1.8x on 2); tfjs's randomNormal (another generator) is shown
// for scale.
import type { CheckResult } from '../lib/check.js';
import type { Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { loadTfjs } from '../peers/tfjs.js';
import { pt, weft, workersLabel } from '../peers/weft.js';

const N = 16 * 1024 * 1024;
const GROUP = 'W12 normal draws 16M float32';

/** Mean near 0 and variance near 1 (16M draws: 5 standard errors are 0.0012 and 0.0018). */
function moments(got: Float32Array): CheckResult {
  let s = 0;
  let q = 0;
  for (let i = 0; i < got.length; i++) {
    s += got[i]!;
    q += got[i]! * got[i]!;
  }
  const mean = s / got.length;
  const variance = q / got.length - mean * mean;
  const ok = got.length === N && Math.abs(mean) < 0.0012 && Math.abs(variance - 1) < 0.0018;
  return { ok, worst: Math.max(Math.abs(mean) / 0.0012, Math.abs(variance - 1) / 0.0018), detail: `mean ${mean.toExponential(2)}, variance ${variance.toFixed(5)}` };
}

async function run(suite: Suite): Promise<void> {
  const figure = (ms: number): number => N / (ms * 1e3);
  const pool = weft.createPool({ workers: 2 });
  try {
    for (const workers of [1, 2]) {
      await suite.measure({
        group: GROUP,
        system: 'weft',
        config: `${workersLabel(workers)}, borrowed output`,
        unit: 'M draws/s',
        figure,
        reference: workers === 1,
        goals: workers === 2 ? [{ kind: 'speedup', label: '1.8x 1 worker', vs: { group: GROUP, system: 'weft', config: `${workersLabel(1)}, borrowed output` }, atLeast: 1.8 }] : undefined,
        check: moments,
        setup: async () => {
          const stream = new weft.RandomStream(12);
          const fn = await weft.compile([], weft.Out(stream.normal([N], { dtype: 'float32' }), { borrow: true }), { pool, workers });
          return { run: async () => ((await fn()) as weft.NdArray).data as Float32Array, dispose: () => fn.dispose() };
        },
      });
    }
  } finally {
    await pool.close();
  }
  await suite.measure({
    group: GROUP,
    system: 'tfjs cpu',
    config: 'randomNormal, 1 thread',
    unit: 'M draws/s',
    figure,
    check: moments,
    setup: async () => {
      const tf = await (await loadTfjs()).use('cpu');
      return {
        run: () => {
          const t = tf.randomNormal([N], 0, 1, 'float32', 12);
          const data = t.dataSync() as Float32Array;
          t.dispose();
          return data;
        },
      };
    },
  });
}

export const w12: Workload = { id: 'W12', title: '16M float32 normal draws, counter-based on the workers (M draws/s)', run };
