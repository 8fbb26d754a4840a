// W5: a wide DAG, 8 independent branches of 4 ops on 1M float32 values each, joined by a sum:
// branch k is sum(tanh(x * c_k) + d_k) (multiply, tanh, add, reduce) over one shared input, and
// the 8 branch sums are added. weft compiles it in FAST_RUN as a user would (each branch's
// element-wise ops fuse into one Composite before its reduction), so the plan has 8 chains that
// may run at once, each chunked. The reference row is weft on 1 worker; the goal is 1.85x on 2.
import { compare } from '../lib/check.js';
import { uniform } from '../lib/data.js';
import type { Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { lastCallTasks, pt, weft, workersLabel, type TV } from '../peers/weft.js';

const N = 1024 * 1024;
const BRANCHES = 8;
const GROUP = 'W5 wide DAG';
const WEFT_1 = { group: GROUP, system: 'weft', config: workersLabel(1) };

/** Branch k's constants: the offsets keep each sum far from zero, so relative errors mean something. */
const scale = (k: number): number => 0.5 + 0.25 * k;
const offset = (k: number): number => 0.5 + 0.125 * k;

async function run(suite: Suite): Promise<void> {
  const x = uniform(N, 51);
  let want = 0;
  for (let k = 0; k < BRANCHES; k++) {
    const c = Math.fround(scale(k));
    const d = Math.fround(offset(k));
    for (let i = 0; i < N; i++) want += Math.tanh(x[i]! * c) + d;
  }

  const xs = pt.vector('x', 'float32');
  const branches: TV[] = [];
  for (let k = 0; k < BRANCHES; k++) branches.push(pt.tanh(xs.mul(scale(k))).add(offset(k)).sum());
  const total = pt.add(...branches);

  const pool = weft.createPool({ workers: 2 });
  try {
    for (const workers of [0, 1, 2]) {
      await suite.measure({
        group: GROUP,
        system: 'weft',
        config: workersLabel(workers),
        unit: 'ms',
        figure: (ms) => ms,
        reference: workers === 1,
        goals: workers === 2 ? [{ kind: 'speedup', label: '1.85x 1 worker', vs: WEFT_1, atLeast: 1.85 }] : undefined,
        check: (got: number) => compare('sum', [got], [want], { rtol: 1e-5 }),
        setup: async () => {
          const fn = await weft.compile([xs], total, { pool, workers });
          const traced = await weft.compile([xs], total, { pool, workers, profile: true });
          await traced(x);
          return {
            run: async () => (await fn(x)).data[0] as number,
            info: { nodes: fn.fgraph.toposort().map((n) => String(n.op)), ...lastCallTasks(traced) },
          };
        },
      });
    }
  } finally {
    await pool.close();
  }
}

export const w5: Workload = { id: 'W5', title: 'wide DAG: 8 branches of 4 ops on 1M float32, joined by a sum (ms per call)', run };
