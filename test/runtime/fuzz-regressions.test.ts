// Runtime bugs the differential fuzzer found, each as the smallest test that shows it: regions
// past 2 GiB of the arena, arena blocks that executors never gave back, a full arena that could
// not reuse a released block of another size class (nor the idle regions functions keep), and a
// calling thread whose missed wake-up let the process exit in the middle of a call.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { PlannedExecutor } from '../../src/scheduler/planned-executor.js';
import { makeNdArray } from '../../src/tensor/core/ndarray.js';
import { Arena, type Block } from '../../src/workers/arena.js';
import { nearlyFullPool, pt, weft } from '../helpers.js';

const N = 1 << 16;

t.test('a call whose region lies past 2 GiB of the arena runs (offsets are unsigned)', async (t) => {
  const pool = weft.createPool({ workers: 1 });
  t.teardown(() => pool.close());
  // Fills the first 2 GiB (address space only: the pages are never touched).
  pool.arena.allocate(2 ** 31);
  const x = pt.vector('x');
  const fn = await weft.compile([x], x.mul(2).sum(), { pool });
  t.equal(weft.tolist(await fn(new Float64Array(N).fill(1))), 2 * N, 'on the workers');
  const inline = await weft.compile([x], x.mul(2).sum(), { pool, workers: 1 });
  t.equal(weft.tolist(await inline(new Float64Array(8).fill(1))), 16, 'inline, on the pool arena');
});

t.test('a disposed executor gives its regions and plans back to the arena', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const fn = await weft.compile([x], x.exp().add(1).sum(), { pool });
  const values = [makeNdArray(new Float64Array(4 * N).fill(0.5), [4 * N])];
  const once = async (): Promise<number> => {
    const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
    const [first] = await Promise.all([executor.run(values), executor.run(values)]);
    executor.dispose();
    return weft.tolist(first![0]!) as number;
  };
  const expected = await once();
  const bytes = pool.arena.byteLength;
  for (let i = 0; i < 40; i++) t.equal(await once(), expected, `executor ${i}`);
  t.equal(pool.arena.byteLength, bytes, 'the arena did not grow');
  const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
  executor.dispose();
  await t.rejects(executor.run(values), { message: 'weft: the function was disposed' }, 'a disposed executor refuses calls');
});

t.test('disposing during a call gives the region back when the call ends', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const fn = await weft.compile([x], x.sqr().sum(), { pool });
  const values = [makeNdArray(new Float64Array(4 * N).fill(2), [4 * N])];
  const warm = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
  await warm.run(values);
  warm.dispose();
  const bytes = pool.arena.byteLength;
  for (let i = 0; i < 20; i++) {
    const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
    const running = executor.run(values);
    executor.dispose();
    t.equal(weft.tolist((await running)[0]!), 16 * N, `call ${i} finished`);
  }
  t.equal(pool.arena.byteLength, bytes, 'the arena did not grow');
});

t.test('a full arena serves a request from a larger released block', (t) => {
  const arena = new Arena(1 << 16);
  // Address space only: none of these pages is touched.
  const large = arena.allocate(2 ** 31);
  arena.allocate(2 ** 30);
  arena.release(large);
  const blocks = [arena.allocate(2 ** 29), arena.allocate(2 ** 29)];
  t.equal(blocks[1]!.offset, large.offset, 'the second could not grow the memory: it is the start of the released block');
  blocks.push(arena.allocate(2 ** 29), arena.allocate(2 ** 29), arena.allocate(2 ** 29));
  const offsets = blocks.slice(1).map((b) => b.offset - large.offset).sort((a, b) => a - b);
  t.same(offsets, [0, 2 ** 29, 2 ** 30, 3 * 2 ** 29], 'the released block was cut into four');
  t.throws(() => arena.allocate(2 ** 29), { name: 'ArenaFullError' }, 'then the arena is full');
  t.end();
});

t.test('a full arena asks the holders of idle blocks to give them back', (t) => {
  const arena = new Arena(1 << 16);
  const asked: string[] = [];
  let idle: Block | undefined = arena.allocate(2 ** 30);
  const holder = {
    releaseIdle(): void {
      asked.push('holder');
      if (idle) arena.release(idle);
      idle = undefined;
    },
  };
  arena.addIdleHolder(holder);
  arena.allocate(2 ** 31);
  arena.allocate(2 ** 29);
  t.same(asked, [], 'not asked while the memory can grow');
  const reclaimed = arena.allocate(2 ** 30);
  t.same(asked, ['holder'], 'asked once the memory is full');
  t.ok(reclaimed.offset > 0 && reclaimed.size === 2 ** 30, 'the request got the idle block');
  t.throws(() => arena.allocate(2 ** 30), { name: 'ArenaFullError' }, 'with nothing idle left, the arena is full');
  t.same(asked, ['holder', 'holder'], 'asked again before giving up');
  t.end();
});

t.test('functions give back their idle regions when the arena is full', async (t) => {
  // 3.75 GiB held (address space only), so that one region of 144 MiB (64 MB in, 64 MB out) fits
  // and a second does not: each function keeps its region for its next call, and the next
  // function runs only because the arena asks for the idle one back.
  const { pool, x, n, big } = nearlyFullPool(t);
  const fns = [];
  for (const k of [1, 2, 3]) fns.push(await weft.compile([x], x.mul(k), { pool, workers: 1 }));
  t.equal((await fns[0]!(big)).data[n - 1], 0.5, 'the first function takes the one region that fits');
  t.equal((await fns[1]!(big)).data[n - 1], 1, 'the second runs in the region the first gave back');
  t.equal((await fns[2]!(big)).data[0], 1.5, 'and the third');
  t.equal((await fns[0]!(big)).data[0], 0.5, 'and the first again');
  t.equal(pool.arena.byteLength, 2 ** 32, 'the memory is at its limit');
});

t.test('a calling thread that misses its wake-up still sees the call end (the process stays alive)', (t) => {
  const child = fileURLToPath(new URL('./fuzz-wakeup-child.ts', import.meta.url));
  const r = spawnSync(process.execPath, ['--import', 'tsx', child], { encoding: 'utf8', timeout: 20_000 });
  t.equal(r.stdout.trim(), 'over', `the wait ended (stderr: ${r.stderr.trim() || 'none'})`);
  t.equal(r.status, 0, 'exit code 0 (13 is a top-level await left unsettled)');
  t.end();
});
