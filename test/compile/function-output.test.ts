// weft.Out(variable, { borrow: true }): an output returned as a view of the memory the function
// keeps (no copy, no fresh pages), overwritten by its next call, as Theano's Out(borrow=True);
// outputs without it stay the caller's own. On the calling thread and on a pool.
import t from 'tap';
import { nearlyFullPool, pt, throwsExactly, weft } from '../helpers.js';

const N = 1 << 19; // 2 MiB of float32: large enough to be written straight into fresh memory unless borrowed

t.test('a borrowed output is the same memory on every call; others are new arrays', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.vector('x', 'float32');
  for (const workers of [0, 1, 2]) {
    const fn = await weft.compile([x], [weft.Out(x.mul(2), { borrow: true }), x.add(1)], { pool, workers });
    const one = new Float32Array(N).fill(1);
    const [a1, b1] = await fn(one);
    t.equal(a1!.data[N - 1], 2, `workers ${workers}: first call`);
    t.equal(b1!.data[N - 1], 2);
    const [a2, b2] = await fn(new Float32Array(N).fill(3));
    t.equal(a2!.data[N - 1], 6, `workers ${workers}: second call`);
    t.equal(a1!.data.buffer, a2!.data.buffer, 'the borrowed output is in the same memory');
    t.equal(a1!.data.byteOffset, a2!.data.byteOffset, 'at the same place');
    t.equal(a1!.data[0], 6, 'so the first result now shows the second call');
    t.equal(a2!.data.length, N, 'a view of exactly the output');
    t.not(b1!.data.buffer, b2!.data.buffer, 'the other output is new on each call');
    t.equal(b1!.data[0], 2, 'and keeps its value');
    if (workers > 0) t.equal(a2!.data.buffer, pool.arena.memory.buffer, "on a pool, the view is of the pool's shared memory");
    fn.dispose();
  }
});

t.test('a small borrowed output and a single borrowed output', async (t) => {
  const x = pt.vector('x');
  const fn = await weft.compile([x], weft.Out(x.sum({ keepdims: true }), { borrow: true }), { workers: 0 });
  const first = await fn([1, 2, 3]);
  t.same([...first.data], [6]);
  const second = await fn([4, 5, 6]);
  t.same([...second.data], [15]);
  t.equal(first.data.buffer, second.data.buffer);
});

t.test('Out without borrow, and bad arguments', async (t) => {
  const x = pt.vector('x');
  const fn = await weft.compile([x], weft.Out(x.mul(2)), { workers: 0 });
  const a = await fn([1, 2]);
  const b = await fn([3, 4]);
  t.same([...a.data, ...b.data], [2, 4, 6, 8], 'an output without borrow is the caller’s own');
  throwsExactly(t, () => weft.Out(3 as never), TypeError, 'Out: expected a variable, got 3');
});

t.test('a full arena does not take the region behind a borrowed output', async (t) => {
  // 3.75 GiB held (address space only): one region of 144 MiB fits. The borrowing function keeps
  // it; another function's call then finds the arena full rather than overwriting that output.
  const { pool, x, n, big } = nearlyFullPool(t);
  const borrowing = await weft.compile([x], weft.Out(x.mul(2), { borrow: true }), { pool, workers: 1 });
  const other = await weft.compile([x], x.mul(3), { pool, workers: 1 });
  const kept = await borrowing(big);
  t.equal(kept.data[n - 1], 1);
  await t.rejects(other(big), { name: 'ArenaFullError' }, 'the other function cannot have that region');
  t.equal(kept.data[n - 1], 1, 'the borrowed output is intact');
  borrowing.dispose();
  t.equal((await other(big)).data[n - 1], 1.5, 'once the borrowing function is disposed, its region serves others');
});

t.test('a borrowed output keeps its function’s memory after the function is collected', async (t) => {
  // In a child with --expose-gc: without the hold, the collected function's region went back to
  // the arena, and the next function of that size wrote its own values into the borrowed output.
  const dist = new URL('../../dist/src/index.js', import.meta.url).href;
  const script = `
    import * as weft from '${dist}';
    const x = weft.pt.vector('x');
    let fn = await weft.compile([x], weft.Out(x.mul(2), { borrow: true }), { workers: 0 });
    const out = await fn(new Float64Array(4096).fill(1));
    fn = null;
    for (let i = 0; i < 5; i++) { gc(); await new Promise((r) => setTimeout(r, 10)); }
    const g = await weft.compile([x], x.mul(3), { workers: 0 });
    for (let i = 0; i < 3; i++) await g(new Float64Array(4096).fill(7));
    console.log(out.data[0], out.data[4095]);
  `;
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  t.equal(r.stdout.trim(), '2 2', `the borrowed values are intact (stderr: ${r.stderr.trim() || 'none'})`);
});
