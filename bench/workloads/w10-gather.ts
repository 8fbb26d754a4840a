// W10: an embedding lookup, the gather of 64k rows of a 50,000 x 128 float32 table (`table.get(ids)`),
// and its gradient, the accumulating scatter of 64k rows of upstream gradients into a table of
// zeros (`grad(sum(rows * g), table)`, repeated ids adding up). GB/s counts the bytes each must
// move (gather: the rows read and written; scatter: the table written and the rows read). Inputs
// are resident (pool.from). The reference row of each group is weft on 1 worker; tfjs wasm's
// gather is the peer of the forward row.
import { compare } from '../lib/check.js';
import { uniform, uniformStream } from '../lib/data.js';
import type { Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { loadTfjs } from '../peers/tfjs.js';
import { outputRun, pt, weft, workersLabel, type TV } from '../peers/weft.js';

const [ROWS, DIM, LOOKUPS] = [50_000, 128, 65_536];

async function run(suite: Suite): Promise<void> {
  const table = uniform(ROWS * DIM, 101);
  const next = uniformStream(102);
  const ids = Int32Array.from({ length: LOOKUPS }, () => Math.floor(next() * ROWS));
  const upstream = uniform(LOOKUPS * DIM, 103);
  const gathered = new Float64Array(LOOKUPS * DIM);
  const scattered = new Float64Array(ROWS * DIM);
  ids.forEach((r, k) => {
    for (let j = 0; j < DIM; j++) {
      gathered[k * DIM + j] = table[r * DIM + j]!;
      scattered[r * DIM + j]! += upstream[k * DIM + j]!;
    }
  });

  const tv = pt.matrix('table', 'float32');
  const iv = pt.vector('ids', 'int32');
  const gv = pt.matrix('g', 'float32');
  const rows = tv.get(iv);
  const gradient = weft.grad(rows.mul(gv).sum(), tv) as TV;
  const cases = [
    { group: 'W10 gather 64k rows', bytes: 2 * 4 * LOOKUPS * DIM + 4 * LOOKUPS, outputs: rows, want: gathered },
    { group: 'W10 scatter-add gradient', bytes: 4 * ROWS * DIM + 4 * LOOKUPS * DIM + 4 * LOOKUPS, outputs: gradient, want: scattered },
  ];
  const pool = weft.createPool({ workers: 2 });
  try {
    const resident = [pool.from(weft.ndarray(table, [ROWS, DIM])), pool.from(weft.ndarray(ids, [LOOKUPS])), pool.from(weft.ndarray(upstream, [LOOKUPS, DIM]))] as const;
    for (const c of cases) {
      const WEFT_1 = { group: c.group, system: 'weft', config: workersLabel(1) };
      // Fresh outputs (32 and 25.6 MB of new pages a call, which the workers write), outputs given
      // back after use (weft.release: copied out into the last call's memory), and borrowed ones
      // (memory the function keeps: the kernels alone).
      const modes = [[0, ''], [1, ''], [2, ''], [1, 'released'], [2, 'released'], [1, 'borrowed'], [2, 'borrowed']] as const;
      for (const [workers, output] of modes) {
        const borrow = output === 'borrowed';
        const label = `, inputs from pool.from${output ? `, output ${output}` : ''}`;
        await suite.measure({
          group: c.group,
          system: 'weft',
          config: `${workersLabel(workers)}${label}`,
          unit: 'GB/s',
          figure: (ms) => c.bytes / (ms * 1e6),
          reference: workers === 1 && output === '',
          goals: workers === 2 ? [{ kind: 'speedup', label: '1.85x 1 worker', vs: { ...WEFT_1, config: `${WEFT_1.config}${label}` }, atLeast: 1.85 }] : undefined,
          check: (got: Float32Array) => compare(c.group, got, c.want, { rtol: 1e-5, floor: 1e-6 }),
          setup: async () => {
            const fn = await weft.compile([tv, iv, gv], borrow ? weft.Out(c.outputs, { borrow: true }) : c.outputs, { pool, workers, onUnusedInput: 'ignore' });
            return { run: outputRun(async () => (await fn(...resident)) as weft.NdArray, output === 'released'), dispose: () => fn.dispose() };
          },
        });
      }
    }
  } finally {
    await pool.close();
  }

  await suite.measure({
    group: cases[0]!.group,
    system: 'tfjs wasm',
    config: 'eager, 1 thread',
    unit: 'GB/s',
    figure: (ms) => cases[0]!.bytes / (ms * 1e6),
    check: (got: Float32Array) => compare('gather', got, gathered, { rtol: 1e-6 }),
    setup: async () => {
      const tf = await (await loadTfjs()).use('wasm');
      const t = tf.tensor2d(table, [ROWS, DIM]);
      const i = tf.tensor1d(ids, 'int32');
      return {
        run: () => {
          const out = tf.gather(t, i);
          const data = out.dataSync() as Float32Array;
          out.dispose();
          return data;
        },
        dispose: () => {
          t.dispose();
          i.dispose();
        },
      };
    },
  });
}

export const w10: Workload = { id: 'W10', title: 'embedding gather and its accumulating gradient, 50,000 x 128 float32 (GB/s)', run };
