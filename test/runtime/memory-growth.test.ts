// The pool's memory grows while functions hold plans bound to it: a plan's views made before the
// growth reach only the old bytes, so arguments placed beyond them (arrays of pool.from made
// later, update values kept in the pool) must still be read. The calling thread binds its plans
// again after a growth, as workers already did; its calls read NaN (float) or 0 (int) before it
// did (the workers' variant is here to keep them so).
import t from 'tap';
import { attachedMemoryOf } from '../../src/kernels/gemm-wasm.js';
import { costModel, INLINE_WORK } from '../../src/scheduler/planned-executor.js';
import { Arena } from '../../src/workers/arena.js';
import { MemoryViews } from '../../src/workers/bound-plan.js';
import { pt, weft } from '../helpers.js';

/** Grows `pool`'s memory by placing a 48 MiB array in it (kept: its block stays taken); returns the old size. */
function grow(pool: weft.Pool): { before: number; keep: weft.NdArray } {
  const before = pool.arena.byteLength;
  const keep = pool.from(new Float64Array(6 << 20));
  return { before, keep };
}

/** Runs `body` with every call going to workers (the cost model's inline threshold at 0). */
async function onWorkers<T>(body: () => Promise<T>): Promise<T> {
  costModel.inlineWork = 0;
  try {
    return await body();
  } finally {
    costModel.inlineWork = INLINE_WORK;
  }
}

for (const where of ['the calling thread', 'workers'] as const) {
  t.test(`${where}: arguments of pool.from placed beyond the memory a plan was bound to`, async (t) => {
    const pool = weft.createPool({ workers: 1 });
    t.teardown(() => pool.close());
    const run = where === 'workers' ? onWorkers : <T>(body: () => Promise<T>) => body();
    const x = pt.vector('x', 'float64');
    const k = pt.vector('k', 'int32');
    // cumsum has JS kernels only: they read through the plan's views.
    const fn = await weft.compile([x, k], [pt.cumsum(x), pt.cumsum(k)], { pool });
    const first = await run(() => fn(pool.from(new Float64Array([1, 2, 3])), pool.from(new Int32Array([1, 1, 1]), { dtype: 'int32' })));
    t.same(first.map((r) => weft.tolist(r)), [[1, 3, 6], [1, 2, 3]]);
    const { before, keep } = grow(pool);
    const [a, b] = [pool.from(new Float64Array([4, 5, 6])), pool.from(new Int32Array([7, 8, 9]), { dtype: 'int32' })];
    t.ok(pool.arena.byteLength > before, `the memory grew (${before} -> ${pool.arena.byteLength} bytes)`);
    t.ok(a.data.byteOffset >= before && b.data.byteOffset >= before, 'both arguments lie beyond the old end');
    const after = await run(() => fn(a, b));
    t.same(after.map((r) => weft.tolist(r)), [[4, 9, 15], [7, 15, 24]], 'their values, not NaN or 0');
    t.equal(keep.data.length, 6 << 20);
  });
}

t.test('an update value kept in the pool, placed beyond the memory the plan was bound to', async (t) => {
  const pool = weft.createPool({ workers: 1 });
  t.teardown(() => pool.close());
  const s = weft.shared(new Float64Array([1, 1, 1]), { name: 's' });
  // The sum of cumsum(s) reads s through the plan's views; s + 1 is s's next value.
  const fn = await weft.compile([], pt.cumsum(s).sum(), { pool, updates: [[s, s.add(1)]] });
  const sums: number[] = [];
  const kept: weft.NdArray[] = [];
  for (let step = 0; step < 4; step++) {
    sums.push(weft.tolist(await fn()) as number);
    // The next value was placed where the memory then ended; growing now leaves the plan's views short of it.
    const { before, keep } = grow(pool);
    kept.push(keep);
    t.ok(pool.arena.byteLength > before, `step ${step}: the memory grew`);
  }
  // s is 1, 2, 3, 4 in turn: cumsum [v, 2v, 3v] sums to 6v.
  t.same(sums, [6, 12, 18, 24]);
  t.same(weft.tolist(s.getValue()), [5, 5, 5]);
});

t.test("another shared memory's growth: arrays the arena made in between are still known as its memory's", async (t) => {
  // V8 gives every shared memory a new buffer object whenever any shared memory grows; an array
  // made on one that no kernel looked up before the next growth would take the JS paths.
  const arena = new Arena(1 << 20);
  arena.array('float32', 16); // the arena's own first growth (its scratch ends beyond 1 MiB) is behind us
  const other = new WebAssembly.Memory({ initial: 1, maximum: 16, shared: true });
  const before = arena.memory.buffer;
  other.grow(1);
  t.not(arena.memory.buffer, before, "V8 still does so (if not, this test checks nothing new)");
  const made = arena.array('float32', 16);
  other.grow(1);
  t.not(made.buffer, arena.memory.buffer, 'the array keeps an older buffer object');
  t.equal(attachedMemoryOf(made.buffer), arena.memory, 'known as the arena memory');
  const views = new MemoryViews(arena.memory);
  other.grow(1);
  const float64 = views.of('float64');
  other.grow(1);
  t.equal(attachedMemoryOf(float64.buffer), arena.memory, "plans' views of the memory too");
});
