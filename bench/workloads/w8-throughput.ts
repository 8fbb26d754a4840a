// W8: throughput, 10k concurrent calls of a small function: a dense layer y = tanh(x W + b) with
// x [16, 64] and W [64, 64] in a shared variable (65k multiply-adds: above the cost model's
// inline threshold, so calls go to the workers). All calls are issued at once and awaited
// together; 16 distinct inputs rotate, and every result of the checked batch is compared with
// its float64 reference. Each row has a pool of its own with that many threads (a call of this
// graph is one task chain, so it uses one thread; the threads serve concurrent calls). The
// reference row is weft on 1 worker; the goal is 1.85x on 2.
import ndarray from 'ndarray';
import { all, compare } from '../lib/check.js';
import { uniform } from '../lib/data.js';
import type { Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { float32Data, pt, weft, workersLabel } from '../peers/weft.js';

const CALLS = 10_000;
const ROWS = 16;
const WIDTH = 64;
const DISTINCT = 16;
const GROUP = 'W8 10k calls';
const WEFT_1 = { group: GROUP, system: 'weft', config: workersLabel(1) };

function dense(x: Float32Array, w: Float32Array, b: Float32Array): Float64Array {
  const out = new Float64Array(ROWS * WIDTH);
  for (let i = 0; i < ROWS; i++) {
    for (let j = 0; j < WIDTH; j++) {
      let s = b[j]!;
      for (let p = 0; p < WIDTH; p++) s += x[i * WIDTH + p]! * w[p * WIDTH + j]!;
      out[i * WIDTH + j] = Math.tanh(s);
    }
  }
  return out;
}

async function run(suite: Suite): Promise<void> {
  const w = uniform(WIDTH * WIDTH, 81, -0.2, 0.2);
  const b = uniform(WIDTH, 82, -0.1, 0.1);
  const xs = Array.from({ length: DISTINCT }, (_, k) => uniform(ROWS * WIDTH, 100 + k));
  const wants = xs.map((x) => dense(x, w, b));
  const inputs = xs.map((x) => ndarray(x, [ROWS, WIDTH]));
  const check = (outs: Float32Array[]) =>
    all(outs.map((o, i) => compare(`call ${i}`, o, wants[i % DISTINCT]!, { rtol: 1e-5, floor: 1e-5 })));

  const x = pt.matrix('x', 'float32');
  const ws = weft.shared(ndarray(w, [WIDTH, WIDTH]), { name: 'W', dtype: 'float32' });
  const bs = weft.shared(b, { name: 'b', dtype: 'float32' });
  const y = pt.tanh(x.dot(ws).add(bs));
  for (const workers of [0, 1, 2]) {
    const pool = workers > 0 ? weft.createPool({ workers }) : undefined;
    try {
      await suite.measure({
        group: GROUP,
        system: 'weft',
        config: workersLabel(workers),
        unit: 'calls/s',
        figure: (ms) => CALLS / (ms / 1000),
        reference: workers === 1,
        goals: workers === 2 ? [{ kind: 'speedup', label: '1.85x 1 worker', vs: WEFT_1, atLeast: 1.85 }] : undefined,
        check,
        counts: { runs: 5, minRuns: 3 },
        setup: async () => {
          const fn = await weft.compile([x], y, { workers, ...(pool ? { pool } : {}) });
          return {
            run: async () => {
              const calls: Array<Promise<weft.NdArray>> = [];
              for (let i = 0; i < CALLS; i++) calls.push(fn(inputs[i % DISTINCT]!));
              return (await Promise.all(calls)).map(float32Data);
            },
            dispose: () => fn.dispose(),
            get info() {
              return { arenaMiBAfter: pool ? pool.arena.byteLength / 2 ** 20 : 0, nodes: fn.fgraph.toposort().map((n) => String(n.op)) };
            },
          };
        },
      });
    } finally {
      await pool?.close();
    }
  }
}

export const w8: Workload = { id: 'W8', title: 'throughput: 10k concurrent calls of a small dense layer (calls/s)', run };
