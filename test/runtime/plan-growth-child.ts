// Child process of plan-growth.test.ts (run with --expose-gc and a heap limit): for each size
// 2^e given on the command line, sum(exp(x) * 2) over a float32 vector of that length on a pool
// of 2 workers. It prints one JSON line per size: the plan's tasks, edges and descriptor bytes,
// the heap the first call kept (the plan), the time to plan alone, and the first call's time
// against later calls'. The first call runs in memory a sibling function touched and gave back,
// so that it pays for its plan, not for the first touch of fresh pages (which any first use of
// that much memory pays, about 4 ms per MiB on these VMs). Each size has a pool of its own: the
// 2^28 region (2 GiB and a little) fits a 4 GiB arena only beside nothing else.
import { PlannedExecutor } from '../../src/scheduler/planned-executor.js';
import { makeNdArray } from '../../src/tensor/core/ndarray.js';
import { pt, weft } from '../helpers.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('plan-growth-child: run with --expose-gc');
const heap = (): number => {
  gc();
  return process.memoryUsage().heapUsed;
};

const x = pt.vector('x', 'float32');
const chain = (k: number): weft.pt.TensorVariable => x.exp().mul(k).sum();
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

for (const e of process.argv.slice(2).map(Number)) {
  const n = 2 ** e;
  const input = new Float32Array(n).fill(1 / 1024);
  const pool = weft.createPool({ workers: 2 });
  // The sibling: the same region size, so its region (pages touched) serves the next function.
  const sibling = await weft.compile([x], chain(3), { pool });
  await sibling(input);
  sibling.dispose();

  const fn = await weft.compile([x], chain(2), { pool });
  const before = heap();
  let started = performance.now();
  const first = await fn(input);
  const firstMs = performance.now() - started;
  const planHeap = heap() - before;
  const later: number[] = [];
  for (let i = 0; i < 3; i++) {
    started = performance.now();
    await fn(input);
    later.push(performance.now() - started);
  }

  // The plan itself, made again by an executor of the same graph, timed and counted.
  const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
  started = performance.now();
  const { plan } = executor.planFor([makeNdArray(input, [n])]);
  const planMs = performance.now() - started;
  executor.dispose();
  const d = plan.descriptor;
  console.log(
    JSON.stringify({
      e,
      value: weft.tolist(first),
      tasks: d.tasks.length,
      edges: d.tasks.reduce((m, t) => m + t.successors.length, 0),
      calls: d.calls.length,
      descriptorBytes: JSON.stringify(d).length,
      regionBytes: d.regionBytes,
      planHeap,
      planMs,
      firstMs,
      laterMs: median(later),
    }),
  );
  fn.dispose();
  await pool.close();
}
