// The chunk arithmetic of the kernel contract (src/scheduler/chunking.ts), which the planner,
// DebugMode and the kernel tests share, and the planner's use of a call's `contracted` axes: a
// product is cut by its multiply-adds, an element-wise call by the elements it touches.
import t from 'tap';
import { chunkRanges, chunkUnits } from '../../src/scheduler/chunking.js';
import { PlannedExecutor } from '../../src/scheduler/planned-executor.js';
import { TASK_WORK } from '../../src/scheduler/plan.js';
import { pt, rng, weft } from '../helpers.js';

t.test('chunkUnits counts elements, rows, lanes or one unit', async (t) => {
  const shape = [3, 4, 5];
  t.equal(chunkUnits({ by: 'elements' }, shape), 60);
  t.equal(chunkUnits({ by: 'rows' }, shape), 3);
  t.equal(chunkUnits({ by: 'lanes', axis: 1 }, shape), 15, 'lanes along axis 1: every index of the other axes');
  t.equal(chunkUnits({ by: 'lanes', axis: 2 }, shape), 12);
  t.equal(chunkUnits({ by: 'none' }, shape), 1);
  t.equal(chunkUnits({ by: 'rows' }, []), 1, 'a 0-d output is one row');
  t.equal(chunkUnits({ by: 'elements' }, [0, 4]), 0);
});

t.test('chunkRanges cuts units into ranges of ceil(units / chunks), none empty', async (t) => {
  t.same(chunkRanges(10, 3), [
    { start: 0, end: 4 },
    { start: 4, end: 8 },
    { start: 8, end: 10 },
  ]);
  t.same(chunkRanges(10, 4).length, 4, '3 + 3 + 3 + 1');
  t.same(chunkRanges(9, 4).map((r) => r.end - r.start), [3, 3, 3], 'fewer ranges than chunks when the last would be empty');
  t.same(chunkRanges(5, 10).map((r) => r.end - r.start), [1, 1, 1, 1, 1], 'at most one range per unit');
  t.same(chunkRanges(0, 3), [], 'no units, no ranges');
  t.same(chunkRanges(7, 1), [{ start: 0, end: 7 }]);
  for (const [units, chunks] of [
    [1000, 7],
    [4096, 64],
    [33, 32],
  ] as const) {
    const ranges = chunkRanges(units, chunks);
    const covered = ranges.every((r, i) => r.start === (i === 0 ? 0 : ranges[i - 1]!.end) && r.end > r.start);
    t.ok(covered && ranges[ranges.length - 1]!.end === units && ranges.length <= chunks, `${units} units in ${chunks}: consecutive, covering, non-empty`);
  }
});

t.test('a product is cut by its multiply-adds (contracted axes), not by the elements it touches', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.matrix('x', 'float32');
  const y = pt.matrix('y', 'float32');
  const fn = await weft.compile([x, y], [x.dot(y), x.dot(y).exp()], { pool });
  const r = rng(5);
  const values = [r.normal([2048, 2], { dtype: 'float32' }), r.normal([2, 2048], { dtype: 'float32' })] as const;
  const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
  t.teardown(() => executor.dispose());
  const { plan } = executor.planFor(values);
  const d = plan.descriptor;
  const tasksOf = (kernel: string) => {
    const calls = d.calls.flatMap((c, i) => (c.kernel.startsWith(kernel) ? [i] : []));
    t.equal(calls.length, 1, `one ${kernel} call`);
    return d.tasks.filter((task) => task.call === calls[0]).length;
  };
  // The product: 2048 * 2048 outputs, each a sum over 2: 8M multiply-adds, 4M a task.
  t.equal(tasksOf('matmul'), 2, 'the product: 2 tasks of 4M multiply-adds');
  // The exp touches 4M elements: TASK_WORK elements a task.
  t.equal(tasksOf('elemwise'), (2048 * 2048) / TASK_WORK, `the exp: ${(2048 * 2048) / TASK_WORK} tasks of ${TASK_WORK} elements`);
  const [z] = (await fn(...values)) as weft.NdArray[];
  const [x0, y0] = [values[0].data, values[1].data];
  const want = x0[10]! * y0[7]! + x0[11]! * y0[2048 + 7]!;
  t.ok(Math.abs(z!.data[5 * 2048 + 7]! - want) <= 1e-6 * (1 + Math.abs(want)), 'and the product is right');
});
