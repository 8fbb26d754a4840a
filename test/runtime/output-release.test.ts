// weft.release: outputs given back to weft lend their memory to later outputs of the same size
// (no fresh pages), every array over a released buffer becomes empty, and memory weft did not
// make for an output (the caller's own, borrowed views, pool arrays, small outputs) is left
// alone. A reused buffer holds the last output's values until it is overwritten, so every call
// below has inputs of its own and each check compares every element with its own call's value.
import t from 'tap';
import { OWN_OUTPUT_BYTES } from '../../src/scheduler/planned-executor.js';
import { dropKept, MAX_KEPT_BYTES, keptBytesNow, UNZEROED_BYTES } from '../../src/workers/given-back.js';
import { pt, weft } from '../helpers.js';

const N = 1 << 16; // 256 KiB of float32, 512 KiB of float64: above UNZEROED_BYTES, copied out

function wrongElements(data: ArrayLike<number>, want: (k: number) => number): number {
  let wrong = 0;
  for (let k = 0; k < data.length; k++) if (data[k] !== want(k)) wrong += 1;
  return wrong;
}

t.test('a released output lends its memory to the next output of its size, on 0 and 2 workers', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  t.ok(4 * N >= UNZEROED_BYTES && 8 * N < OWN_OUTPUT_BYTES, 'these outputs are copied out of the region');
  for (const workers of [0, 2]) {
    for (const dtype of ['float32', 'float64'] as const) {
      dropKept();
      const x = pt.vector('x', dtype);
      // x * 2 + 1 has a WebAssembly kernel; cumsum only a JS one. Call i's input: k + i, and
      // i + 1 everywhere for cumsum (whose sums (k + 1)(i + 1) float32 holds exactly).
      for (const [label, y, input, want] of [
        ['x * 2 + 1', x.mul(2).add(1), (k: number, i: number) => k + i, (k: number, i: number) => 2 * (k + i) + 1],
        ['cumsum(x)', pt.cumsum(x), (_k: number, i: number) => i + 1, (k: number, i: number) => (k + 1) * (i + 1)],
      ] as const) {
        const fn = await weft.compile([x], y, { pool, workers });
        const Storage = dtype === 'float32' ? Float32Array : Float64Array;
        const call = async (i: number) => (await fn(new Storage(N).map((_, k) => input(k, i)))) as weft.NdArray;
        const first = await call(0);
        const bytes = first.data.byteLength;
        const view = first.data.subarray(10, 20);
        const what = `${label}, ${dtype}, ${workers} workers`;
        t.equal(weft.release(first), bytes, `${what}: release gives back the output's bytes`);
        t.equal(keptBytesNow(), bytes, `${what}: the memory waits for reuse`);
        t.equal(first.data.length, 0, `${what}: the released array is empty`);
        t.equal(view.length, 0, `${what}: so is every array over its memory`);
        t.equal(weft.release(first), 0, `${what}: releasing it again gives nothing`);
        for (let i = 1; i <= 3; i++) {
          const out = await call(i);
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

t.test('outputs kernels write directly: taken back inline, noted on workers, and copied out after', async (t) => {
  const pool = weft.createPool({ workers: 1 });
  t.teardown(() => pool.close());
  const big = OWN_OUTPUT_BYTES / 4;
  const x = pt.vector('x', 'float32');
  const ones = (i: number) => new Float32Array(big).fill(i + 1);
  for (const workers of [0, 1]) {
    dropKept();
    const fn = await weft.compile([x], pt.cumsum(x), { pool, workers });
    const first = (await fn(ones(0))) as weft.NdArray;
    const what = `${workers} workers`;
    if (workers === 1) {
      t.ok(first.data.buffer instanceof SharedArrayBuffer, `${what}: the cumsum was written by the worker in shared memory`);
      t.equal(weft.release(first), 0, `${what}: which release leaves alone`);
      t.equal(first.data[big - 1], big, `${what}: intact`);
    } else {
      t.ok(first.data.buffer instanceof ArrayBuffer, `${what}: the cumsum was written by the calling thread into memory of its own`);
      t.equal(weft.release(first), 4 * big, `${what}: which release takes`);
    }
    for (let i = 1; i <= 3; i++) {
      const out = (await fn(ones(i))) as weft.NdArray;
      t.ok(out.data.buffer instanceof ArrayBuffer, `${what}, call ${i}: copied out, into memory release can take`);
      t.equal(wrongElements(out.data, (k) => (k + 1) * (i + 1)), 0, `${what}, call ${i}: every element is this call's cumsum`);
      t.equal(weft.release(out), 4 * big, `${what}, call ${i}: and goes back`);
      if (i > 1 || workers === 0) t.equal(keptBytesNow(), 4 * big, `${what}, call ${i}: after taking the given-back memory`);
    }
    if (workers === 1) t.equal(first.data[big - 1], big, `${what}: the first output, never taken, is still intact`);
    fn.dispose();
  }
  // AllocEmpty writes nothing: its output must not show a released output's values.
  dropKept();
  const cumulative = await weft.compile([x], pt.cumsum(x), { workers: 0 });
  const released = (await cumulative(ones(6))) as weft.NdArray;
  t.equal(weft.release(released), 4 * big, 'a cumsum of 7s given back');
  const empty = await weft.compile([], weft.allocEmpty('float32', big), { workers: 0 });
  const fresh = (await empty()) as weft.NdArray;
  t.equal(wrongElements(fresh.data, (k) => 7 * (k + 1)), big, "AllocEmpty's output shows none of the released values");
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
  t.equal(weft.release(borrowed), 0, 'a borrowed output (a view of the function memory)');
  t.equal(borrowed.data[0], 6, 'the borrowed output is intact');
  const small = await weft.compile([x], x.mul(2), { workers: 0 });
  const out = (await small(new Float32Array(16).fill(1))) as weft.NdArray;
  t.equal(weft.release(out), 0, `an output under ${UNZEROED_BYTES} bytes`);
  t.equal(out.data.length, 16, 'the small output is intact');
});

t.test('beyond MAX_KEPT_BYTES nothing more is taken', async (t) => {
  dropKept();
  const x = pt.vector('x', 'float32');
  const n = MAX_KEPT_BYTES / 4 / 2; // two outputs fill the room
  const fn = await weft.compile([x], x.add(1), { workers: 0 });
  const input = new Float32Array(n);
  const outs = [] as weft.NdArray[];
  for (let i = 0; i < 3; i++) outs.push((await fn(input)) as weft.NdArray);
  t.equal(weft.release(outs[0]!, outs[1]!), MAX_KEPT_BYTES, 'two outputs fill the room');
  t.equal(weft.release(outs[2]!), 0, 'a third is not taken');
  t.equal(outs[2]!.data.length, n, 'and stays intact');
  dropKept();
});

t.test('memory stays flat over 2,000 calls whose outputs are given back, and no output is handed out twice', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  dropKept();
  const x = pt.vector('x', 'float32');
  const fn = await weft.compile([x], x.add(1), { pool, workers: 2 });
  const xv = new Float32Array(N).map((_, k) => k);
  const held: Array<[number, weft.NdArray]> = [];
  for (let i = 0; i < 20; i++) weft.release((await fn(xv)) as weft.NdArray);
  const before = process.memoryUsage().arrayBuffers;
  for (let i = 0; i < 2000; i++) {
    xv[0] = i; // each call's output has a value of its own
    const out = (await fn(xv)) as weft.NdArray;
    // Every 100th output is kept, not given back: later outputs must not take its memory.
    if (i % 100 === 0) held.push([i, out]);
    else weft.release(out);
  }
  const grown = (process.memoryUsage().arrayBuffers - before) / 2 ** 20;
  const heldMiB = (held.length * 4 * N) / 2 ** 20;
  t.ok(grown < heldMiB + 16, `array buffers grew by ${grown.toFixed(1)} MiB over 2,000 calls of 256 KiB (${heldMiB} MiB of them kept on purpose)`);
  t.ok(keptBytesNow() <= 4 * N, 'at most one output waits for reuse');
  t.same(held.map(([i, o]) => o.data[0]), held.map(([i]) => i + 1), "each kept output still holds its own call's first value");
  t.equal(held.map(([, o]) => wrongElements(o.data.subarray(1), (k) => k + 2)).reduce((a, b) => a + b, 0), 0, 'and the rest of its values');
});

t.test('an array given back is refused as an argument, naming it', async (t) => {
  const pool = weft.createPool({ workers: 1 });
  t.teardown(() => pool.close());
  dropKept();
  const x = pt.vector('x', 'float32');
  const fn = await weft.compile([x], x.mul(2), { pool, workers: 1, name: 'twice' });
  const out = (await fn(new Float32Array(N).fill(1))) as weft.NdArray;
  weft.release(out);
  await t.rejects(fn(out), new weft.ValueTypeError(`input 0 (x) of function 'twice': its shape [${N}] reaches element ${N - 1} of data holding 0 (an array given back with weft.release is empty)`));
  const pending = (await fn(new Float32Array(N).fill(1))) as weft.NdArray;
  const call = fn(pending);
  weft.release(pending);
  await t.rejects(call, new TypeError("function 'twice': argument 0 was emptied after the call began (given back with weft.release while the call was pending?)"));
  t.equal(((await fn(new Float32Array(N).fill(2))) as weft.NdArray).data[7], 4, 'the function still works');
});

t.test('release refuses what is not an array, naming it, and then takes nothing', async (t) => {
  dropKept();
  const x = pt.vector('x', 'float32');
  const fn = await weft.compile([x], x.mul(2), { workers: 0 });
  const out = (await fn(new Float32Array(N))) as weft.NdArray;
  const message = (got: string) => new TypeError(`weft.release: expected an output of a compiled function (an ndarray or a typed array), got ${got}`);
  t.throws(() => weft.release(out, 42 as never), message('number 42'));
  t.equal(out.data.length, N, 'a good argument before a bad one is left as it is');
  t.throws(() => weft.release({} as never), message('Object'));
  t.throws(() => weft.release(undefined as never), message('undefined'));
  t.throws(() => weft.release((() => 1) as never), message('a function'));
  t.equal(weft.release(), 0, 'nothing to release');
});
