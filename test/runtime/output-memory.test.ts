// Large outputs are fresh SharedArrayBuffers that the workers write. V8 does not count those as
// memory pressure, so without workers/shared-memory.ts's announcement a loop that drops its
// outputs would keep every one of them (here 300 calls of 2 MiB: 600 MiB) until some unrelated
// collection; with it, memory stays flat on the calling thread and in the workers.
import t from 'tap';
import { OWN_OUTPUT_BYTES } from '../../src/scheduler/planned-executor.js';
import { pt, weft } from '../helpers.js';

const MiB = 2 ** 20;

t.test('memory stays flat over many calls whose large outputs the caller drops', async (t) => {
  const pool = weft.createPool({ workers: 1 });
  t.teardown(() => pool.close());
  const n = (2 * MiB) / 4;
  t.ok(4 * n >= OWN_OUTPUT_BYTES, 'the output is written by the worker into memory the caller owns');
  const x = pt.vector('x', 'float32');
  const fn = await weft.compile([x], x.mul(2), { pool, workers: 1 });
  const xv = pool.from(new Float32Array(n).fill(1.5));
  const calls = 300;
  for (let i = 0; i < 20; i++) await fn(xv);
  const before = process.memoryUsage();
  let last = 0;
  for (let i = 0; i < calls; i++) last = ((await fn(xv)) as weft.NdArray).data[n - 1] as number;
  const after = process.memoryUsage();
  t.equal(last, 3, 'the calls computed');
  const grownBuffers = (after.arrayBuffers - before.arrayBuffers) / MiB;
  const grownResident = (after.rss - before.rss) / MiB;
  t.ok(grownBuffers < 150, `array buffers of the calling thread grew by ${grownBuffers.toFixed(0)} MiB over ${calls} calls of 2 MiB (without the announcement: about 600)`);
  t.ok(grownResident < 300, `the process grew by ${grownResident.toFixed(0)} MiB (the workers' copies of the buffers too)`);
});

t.test('outputs copied out of the region into memory made while the workers ran hold each call\'s values', async (t) => {
  // 1 worker on a machine with a second core: the calling thread makes (and touches) the
  // output's array during the call. An output kept in the region (a WebAssembly element-wise
  // kernel keeps its output there) of 512 KiB, float32 and float64.
  const pool = weft.createPool({ workers: 1 });
  t.teardown(() => pool.close());
  for (const dtype of ['float32', 'float64'] as const) {
    const n = (512 * 1024) / (dtype === 'float32' ? 4 : 8);
    const x = pt.vector('x', dtype);
    const fn = await weft.compile([x], x.mul(2).add(1), { pool, workers: 1 });
    const outs: weft.NdArray[] = [];
    for (let i = 0; i < 4; i++) {
      const xv = new (dtype === 'float32' ? Float32Array : Float64Array)(n).map((_, k) => k + i);
      outs.push((await fn(xv)) as weft.NdArray);
    }
    outs.forEach((out, i) => {
      t.equal(out.data.length, n, `${dtype} call ${i}: its length`);
      let wrong = 0;
      for (let k = 0; k < n; k++) if (out.data[k] !== 2 * (k + i) + 1) wrong += 1;
      t.equal(wrong, 0, `${dtype} call ${i}: every element is its own call's value`);
    });
    t.equal(new Set(outs.map((o) => o.data.buffer)).size, 4, `${dtype}: each call returned memory of its own`);
  }
});
