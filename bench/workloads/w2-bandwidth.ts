// W2: memory bandwidth of z = x * y + w over 16M float32 values, in GB/s counting the bytes the
// computation must move (three arrays read, one written: 16 bytes per element). With plain
// arrays, weft's calls also copy the three inputs into its shared memory on the calling thread;
// arrays made by pool.from are read where they are, as the loop peer reads its SharedArrayBuffers.
// Either way the workers write the output straight into memory the caller then owns (fresh
// pages: their first touch is part of the figure, as it is for any library that returns new
// arrays; on this VM a fresh page can cost 8x more in some phases, see the closing notes), or,
// with weft.Out(z, { borrow: true }), into memory the function keeps and reuses, as the loop
// peer reuses its output, or with weft.release(z) after each call, which gives the output's
// memory back for the next call's (warm pages, and the output is the caller's until then). The figure counts 16 bytes per element, since that is what a user
// asked for. The reference row is the plain JS loop on 2 threads; the row issue 12's goal
// compares to it is timed in turns with it (Suite.measureAlongside).
import { compare } from '../lib/check.js';
import { uniform } from '../lib/data.js';
import type { Measurement, Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { LoopTeam } from '../peers/loop-team.js';
import { float32Data, lastTaskSpan, outputRun, pt, weft, workersLabel } from '../peers/weft.js';

const N = 16 * 1024 * 1024;
const BYTES = 16 * N;
const GROUP = 'W2 16M x*y+w';
/** BENCH.md's C loop (-O3 -march=native) on 2 threads: 26-28 GB/s on its machine; not run here. */
const C_TWO_THREADS_GBS = 26;
const WEFT_1 = { group: GROUP, system: 'weft', config: workersLabel(1) };
const LOOP_2 = { group: GROUP, system: 'plain JS loop', config: '2 threads (SAB)' };

async function run(suite: Suite): Promise<void> {
  const x = uniform(N, 21);
  const y = uniform(N, 22);
  const w = uniform(N, 23);
  const want = new Float64Array(N);
  for (let i = 0; i < N; i++) want[i] = x[i]! * y[i]! + w[i]!;
  const common = {
    group: GROUP,
    unit: 'GB/s' as const,
    figure: (ms: number) => BYTES / (ms * 1e6),
    check: (got: Float32Array) => compare('z', got, want, { rtol: 1e-6, floor: 1e-6 }),
  };

  const pool = weft.createPool({ workers: 2 });
  try {
    const rows: Measurement<Float32Array>[] = [];
    const xs = pt.vector('x', 'float32');
    const ys = pt.vector('y', 'float32');
    const ws = pt.vector('w', 'float32');
    const z = xs.mul(ys).add(ws);
    const inPool = [pool.from(x), pool.from(y), pool.from(w)];
    const layouts = [
      { shared: false, borrow: false, release: false, label: '' },
      { shared: false, borrow: false, release: true, label: ', output released' },
      { shared: true, borrow: false, release: false, label: ', inputs from pool.from' },
      { shared: true, borrow: false, release: true, label: ', inputs from pool.from, output released' },
      { shared: true, borrow: true, release: false, label: ', inputs from pool.from, output borrowed' },
    ];
    for (const { shared, borrow, release, label } of layouts) {
      for (const workers of [1, 2]) {
        const config = `${workersLabel(workers)}${label}`;
        const one = { ...WEFT_1, config: `${WEFT_1.config}${label}` };
        rows.push({
          ...common,
          system: 'weft',
          config,
          goals:
            workers === 2
              ? [
                  { kind: 'value', label: `85% of C's ${C_TWO_THREADS_GBS} GB/s (BENCH.md)`, atLeast: 0.85 * C_TWO_THREADS_GBS },
                  { kind: 'speedup', label: '1.8x 1 worker (issue 5)', vs: one, atLeast: 1.8 },
                  ...(shared && borrow ? [{ kind: 'speedup' as const, label: '1.2x plain JS loop 2 threads (issue 12)', vs: LOOP_2, atLeast: 1.2 }] : []),
                ]
              : undefined,
          setup: async () => {
            const fn = await weft.compile([xs, ys, ws], borrow ? weft.Out(z, { borrow: true }) : z, { pool, workers });
            const args = (shared ? inPool : [x, y, w]) as [weft.InputValue, weft.InputValue, weft.InputValue];
            return {
              run: outputRun(async () => (await fn(...args)) as weft.NdArray, release),
              dispose: () => fn.dispose(),
            };
          },
        });
      }
    }
    // Where the time goes: the same calls timed by their tasks only (from fn.profile).
    rows.push({
      ...common,
      system: 'weft',
      config: '2 workers, tasks only',
      note: "the span of the call's tasks in fn.profile, without copying inputs in and the output out",
      setup: async () => {
        const fn = await weft.compile([xs, ys, ws], z, { pool, workers: 2, profile: true });
        return { run: async () => float32Data(await fn(x, y, w)), lastMs: () => lastTaskSpan(fn), dispose: () => fn.dispose() };
      },
    });

    const loop = (threads: number): Measurement<Float32Array> => ({
      ...common,
      system: 'plain JS loop',
      config: `${threads} thread${threads === 1 ? '' : 's'} (SAB)`,
      reference: threads === 2,
      setup: async () => {
        const team = await LoopTeam.start(threads, 'multiplyAdd', [x, y, w]);
        return { run: () => team.run(), dispose: () => team.close() };
      },
    });
    await suite.measureAlongside(rows, [loop(2)]);
    await suite.measure(loop(1));
  } finally {
    await pool.close();
  }
}

export const w2: Workload = { id: 'W2', title: 'bandwidth z = x * y + w, 16M float32 (GB/s, 16 bytes per element)', run };
