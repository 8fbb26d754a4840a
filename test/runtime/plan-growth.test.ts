// Plans grow linearly with the data: sum(exp(x) * 2) over float32 vectors of 2^20 .. 2^28
// elements, on 2 workers, in a child with a heap limit of 256 MB (the plan of 2^26 elements once
// kept 245 MB, with every chunk of exp linked to every partial of the sum). Asserted: the task
// and edge counts and the descriptor's bytes per task (deterministic), the heap the first call
// keeps, the value. The timings of every size (the first call against a later one) are reported,
// not asserted.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { TASK_WORK } from '../../src/scheduler/plan.js';

const child = fileURLToPath(new URL('./plan-growth-child.ts', import.meta.url));

interface Row {
  readonly e: number;
  readonly value: number;
  readonly tasks: number;
  readonly edges: number;
  readonly calls: number;
  readonly descriptorBytes: number;
  readonly regionBytes: number;
  readonly planHeap: number;
  readonly planMs: number;
  readonly firstMs: number;
  readonly laterMs: number;
}

function measure(sizes: readonly number[]): Promise<Row[]> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--expose-gc', '--max-old-space-size=256', '--import', 'tsx', child, ...sizes.map(String)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('exit', (code) => {
      if (code !== 0) reject(new Error(`the child exited with ${code}: ${out}${err}`));
      else resolve(out.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Row));
    });
  });
}

/** Elements per task of an element-wise chunk or a partial of the sum (the planner's own figure). */
const PER_TASK = TASK_WORK;
const MB = 2 ** 20;

t.test('the plan of sum(exp(x) * 2) grows linearly from 2^20 to 2^28 elements', async (t) => {
  const sizes = [20, 21, 22, 23, 24, 25, 26, 27, 28];
  const rows = await measure(sizes);
  t.same(
    rows.map((r) => r.e),
    sizes,
    'every size ran (the 2^28 float32 input is 1 GiB; its region, 2 GiB and a little, fits the 4 GiB arena)',
  );
  for (const r of rows) {
    const n = 2 ** r.e;
    t.comment(
      `2^${r.e}: ${r.tasks} tasks, ${r.edges} edges, descriptor ${(r.descriptorBytes / MB).toFixed(2)} MB, ` +
        `plan heap ${(r.planHeap / MB).toFixed(2)} MB, plan ${r.planMs.toFixed(0)} ms, ` +
        `first call ${r.firstMs.toFixed(0)} ms, later ${r.laterMs.toFixed(0)} ms`,
    );
    const want = 2 * n * Math.fround(Math.exp(1 / 1024));
    t.ok(Math.abs(r.value - want) <= 1e-6 * want, `2^${r.e}: the sum is ${r.value} (${want})`);
    // The argument's copy into the region and exp*2 in n / PER_TASK chunks each, the sum in as
    // many slab tasks and one combine.
    t.ok(r.tasks <= (3 * n) / PER_TASK + 1, `2^${r.e}: ${r.tasks} tasks, at most 3 per ${PER_TASK} elements and one`);
    t.ok(r.edges <= r.tasks, `2^${r.e}: ${r.edges} edges, no more than tasks (a chunk feeds its slab, one to one)`);
    t.ok(r.descriptorBytes <= 100 * r.tasks + 4096, `2^${r.e}: ${r.descriptorBytes} descriptor bytes, at most 100 per task`);
    t.ok(r.planHeap <= 4 * MB, `2^${r.e}: the first call kept ${(r.planHeap / MB).toFixed(2)} MB of heap (at most 4 MB)`);
  }
  // The cost of a first call against a later one is a timing, reported above rather than asserted
  // (tests hold no timed assertions; under load the ratio says nothing).
  const last = rows[rows.length - 1]!;
  t.comment(`2^28: the first call ${last.firstMs.toFixed(0)} ms (its plan ${last.planMs.toFixed(0)} ms of it), a later one ${last.laterMs.toFixed(0)} ms`);
});
