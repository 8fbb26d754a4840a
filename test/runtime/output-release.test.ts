// weft.release: outputs given back to weft lend their memory to later outputs of the same size
// (no fresh pages), every array over a released buffer becomes empty, and memory weft did not
// make for an output (the caller's own, borrowed outputs, pool arrays, small outputs) is left
// alone. A reused buffer holds the last output's values until the kernel overwrites it, so each
// check below compares every element with its own call's value.
import t from 'tap';
import { OWN_OUTPUT_BYTES } from '../../src/scheduler/planned-executor.js';
import { dropKept, KEPT_BYTES, keptBytesNow, UNZEROED_BYTES } from '../../src/workers/shared-memory.js';
import { pt, weft } from '../helpers.js';

const N = 1 << 16; // 256 KiB of float32, 512 KiB of float64: above UNZEROED_BYTES

function wrongElements(data: ArrayLike<number>, want: (k: number) => number): number {
  let wrong = 0;
  for (let k = 0; k < data.length; k++) if (data[k] !== want(k)) wrong += 1;
  return wrong;
}

t.test('a released output lends its memory to the next output of its size, on 0 and 2 workers', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  t.ok(4 * N >= UNZEROED_BYTES);
  for (const workers of [0, 2]) {
    for (const dtype of ['float32', 'float64'] as const) {
      dropKept();
      const x = pt.vector('x', dtype);
      // x * 2 + 1 has a WebAssembly kernel (its output is copied out of the region); cumsum has
      // only a JS kernel, whose large output is written straight into memory the caller owns.
      for (const [label, y, want] of [
        ['x * 2 + 1', x.mul(2).add(1), (k: number, i: number) => 2 * (k + i) + 1],
        ['cumsum(x) of ones', pt.cumsum(x.mul(0).add(1)), (k: number) => k + 1],
      ] as const) {
        const fn = await weft.compile([x], y, { pool, workers });
        const Storage = dtype === 'float32' ? Float32Array : Float64Array;
        const input = (i: number) => new Storage(N).map((_, k) => k + i);
        const first = (await fn(input(0))) as weft.NdArray;
        const bytes = first.data.byteLength;
        const view = first.data.subarray(10, 20);
        const given = weft.release(first);
        const what = `${label}, ${dtype}, ${workers} workers`;
        t.equal(given, bytes, `${what}: release gives back the output's bytes`);
        t.equal(keptBytesNow(), bytes, `${what}: the memory waits for reuse`);
        t.equal(first.data.length, 0, `${what}: the released array is empty`);
        t.equal(view.length, 0, `${what}: so is every array over its memory`);
        t.equal(weft.release(first), 0, `${what}: releasing it again gives nothing`);
        for (let i = 1; i <= 3; i++) {
          const out = (await fn(input(i))) as weft.NdArray;
          t.equal(keptBytesNow(), 0, `${what}, call ${i}: the output took the given-back memory`);
          t.equal(out.data.length, N, `${what}, call ${i}: its length`);
          t.equal(wrongElements(out.data, (k) => want(k, i)), 0, `${what}, call ${i}: every element is this call's value`);
          t.equal(weft.release(out), bytes, `${what}, call ${i}: its memory was weft's to take back`);
        }
        fn.dispose();
      }
    }
  }
});

t.test('memory weft did not make for an output is left as it is', async (t) => {
  const pool = weft.createPool({ workers: 1 });
  t.teardown(() => pool.close());
  dropKept();
  const x = pt.vector('x', 'float32');
  const own = new Float32Array(N).fill(3);
  t.equal(weft.release(own), 0, "the caller's own array");
  t.equal(own.length, N, "the caller's array is intact");
  const resident = pool.from(new Float32Array(N).fill(2));
  t.equal(weft.release(resident), 0, 'an array of pool.from');
  t.equal(resident.data[5], 2, 'the pool array is intact');
  const borrowing = await weft.compile([x], weft.Out(x.mul(2), { borrow: true }), { pool, workers: 1 });
  const borrowed = (await borrowing(own)) as weft.NdArray;
  t.equal(weft.release(borrowed), 0, 'a borrowed output');
  t.equal(borrowed.data[0], 6, 'the borrowed output is intact');
  // A JS kernel's output of OWN_OUTPUT_BYTES or more, which the worker writes in shared memory.
  const big = OWN_OUTPUT_BYTES / 4;
  const cumulative = await weft.compile([x], pt.cumsum(x), { pool, workers: 1 });
  const shared = (await cumulative(new Float32Array(big).fill(1))) as weft.NdArray;
  t.ok(shared.data.buffer instanceof SharedArrayBuffer, 'the large cumsum was written by the worker in shared memory');
  t.equal(weft.release(shared), 0, 'an output in shared memory');
  t.equal(shared.data[big - 1], big, 'the shared output is intact');
  // From then on outputs of that size are copied out, into memory release takes.
  const ones = new Float32Array(big).fill(1);
  const copied = (await cumulative(ones)) as weft.NdArray;
  t.ok(copied.data.buffer instanceof ArrayBuffer, 'the next one was copied out into an ArrayBuffer');
  t.equal(weft.release(copied), 4 * big, 'which release takes');
  for (let i = 0; i < 3; i++) {
    const again = (await cumulative(ones)) as weft.NdArray;
    t.equal(keptBytesNow(), 0, `call ${i}: the output took the given-back memory`);
    t.equal(wrongElements(again.data, (k) => k + 1), 0, `call ${i}: every element is this call's cumsum`);
    t.equal(weft.release(again), 4 * big, `call ${i}: and goes back`);
  }
  t.equal(shared.data[big - 1], big, 'the first output, never taken, is still intact');
  const small = await weft.compile([x], x.mul(2), { workers: 0 });
  const out = (await small(new Float32Array(16).fill(1))) as weft.NdArray;
  t.equal(weft.release(out), 0, `an output under ${UNZEROED_BYTES} bytes`);
  t.equal(out.data.length, 16, 'the small output is intact');
  t.ok(KEPT_BYTES >= 1 << 28, 'up to 256 MiB of given-back memory waits for reuse');
});

t.test('release refuses what is not an array, naming it', async (t) => {
  t.throws(() => weft.release(42 as never), new TypeError('weft.release: expected an output of a compiled function (an ndarray or a typed array), got number 42'));
  t.throws(() => weft.release({} as never), new TypeError('weft.release: expected an output of a compiled function (an ndarray or a typed array), got Object'));
  t.throws(() => weft.release(undefined as never), new TypeError('weft.release: expected an output of a compiled function (an ndarray or a typed array), got undefined'));
  t.equal(weft.release(), 0, 'nothing to release');
});

t.test('memory stays flat over 2,000 calls whose outputs are given back, and no output is handed out twice', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  dropKept();
  const x = pt.vector('x', 'float32');
  const fn = await weft.compile([x], x.add(1), { pool, workers: 2 });
  const xv = new Float32Array(N).map((_, k) => k);
  const held: weft.NdArray[] = [];
  for (let i = 0; i < 20; i++) weft.release((await fn(xv)) as weft.NdArray);
  const before = process.memoryUsage().arrayBuffers;
  for (let i = 0; i < 2000; i++) {
    const out = (await fn(xv)) as weft.NdArray;
    // Every 100th output is kept, not given back: later outputs must not take its memory.
    if (i % 100 === 0) held.push(out);
    else weft.release(out);
  }
  const grown = (process.memoryUsage().arrayBuffers - before) / 2 ** 20;
  const heldMiB = (held.length * 4 * N) / 2 ** 20;
  t.ok(grown < heldMiB + 16, `array buffers grew by ${grown.toFixed(1)} MiB over 2,000 calls of 256 KiB (${heldMiB} MiB of them kept on purpose)`);
  t.ok(keptBytesNow() <= 4 * N, 'at most one output waits for reuse');
  t.equal(new Set(held.map((o) => o.data.buffer)).size, held.length, 'each kept output has memory of its own');
  t.equal(held.map((o) => wrongElements(o.data, (k) => k + 1)).reduce((a, b) => a + b, 0), 0, 'and still holds its values');
});
