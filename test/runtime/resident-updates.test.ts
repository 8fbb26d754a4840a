// The new values of shared variables stay in the pool's shared memory (a block of the arena of
// their own, resident-values.ts): the next call reads them there, a value no longer current goes
// back to the arena once no call reads it, a value lent out with getValue({ borrow: true }) is
// never reused, and concurrent readers and updaters of one variable always see whole values.
import t, { type Test } from 'tap';
import ndarray from 'ndarray';
import { currentValue } from '../../src/graph/shared.js';
import { isResident, residentArray, retire, startReading, stopReading } from '../../src/scheduler/resident-values.js';
import { pt, weft } from '../helpers.js';

/** w := w * 0.5 + x, as float32 (or float64) arithmetic does it; exact for these small values. */
function stepOf(w: Float64Array, x: Float64Array, round: (v: number) => number): Float64Array {
  return Float64Array.from(w, (v, k) => round(round(v * 0.5) + x[k % x.length]!));
}

/** A pool of `workers` closed when the test ends. */
function poolFor(t: Test, workers = 2): weft.Pool {
  const pool = weft.createPool({ workers });
  t.teardown(() => pool.close());
  return pool;
}

function differing(got: ArrayLike<number>, want: ArrayLike<number>): number {
  let wrong = 0;
  for (let k = 0; k < want.length; k++) if (got[k] !== want[k]) wrong += 1;
  return wrong + Math.abs(got.length - want.length);
}

t.test('an updated value stays in the pool memory and the next call reads it: 0 and 2 workers, float32 and float64, small and copied by tasks', async (t) => {
  const pool = poolFor(t);
  // 37 x 41 is copied into a call's region before it starts; 640 x 640 float32 (1.6 MB) by the
  // calling thread's copy tasks while the workers start (plan/argument-copies.ts).
  for (const [rows, cols] of [[37, 41], [640, 640]] as const) {
    for (const dtype of ['float32', 'float64'] as const) {
      for (const workers of [0, 2]) {
        const round = dtype === 'float32' ? Math.fround : (v: number) => v;
        const Storage = dtype === 'float32' ? Float32Array : Float64Array;
        let want: Float64Array = Float64Array.from({ length: rows * cols }, (_, k) => k % 13);
        const w = weft.shared(ndarray(Storage.from(want), [rows, cols]), { name: 'w', dtype });
        const x = pt.vector('x', dtype);
        const fn = await weft.compile([x], w.sum(), { pool, workers, updates: [[w, w.mul(0.5).add(x)]] });
        const xs = Float64Array.from({ length: cols }, (_, k) => k % 7);
        const what = `${rows}x${cols} ${dtype}, ${workers} workers`;
        let wrong = 0;
        for (let i = 0; i < 10; i++) {
          const before = want.reduce((a, b) => a + b, 0);
          const out = (await fn(Storage.from(xs))) as weft.NdArray;
          // float64 sums these values exactly; float32 rounds them in its own order.
          const sum = out.data[0]!;
          wrong += (dtype === 'float64' ? sum === before : Math.abs(sum - before) <= 1e-5 * before) ? 0 : 1;
          want = stepOf(want, xs, round);
          wrong += differing(w.getValue().data, want);
        }
        t.equal(wrong, 0, `${what}: every element of every step's value, and the sums read before each step`);
        t.ok(isResident(currentValue(w)), `${what}: the value lives in a block of the arena`);
        t.ok(pool.arena.offsetOf(currentValue(w).data) !== undefined, `${what}: which calls on this pool read in place`);
        fn.dispose();
      }
    }
  }
});

t.test('blocks of values no longer current go back: the arena stays the same size over 400 updates', async (t) => {
  const pool = poolFor(t);
  const n = 512;
  const w = weft.shared(ndarray(new Float32Array(n * n).fill(1), [n, n]), { name: 'w', dtype: 'float32' });
  const v = weft.shared(new Float32Array(n * n).fill(2), { name: 'v', dtype: 'float32' });
  const fn = await weft.compile([], [], { pool, workers: 2, updates: [[w, w.add(1)], [v, v.mul(1)]] });
  for (let i = 0; i < 20; i++) await fn();
  const early = pool.arena.byteLength;
  for (let i = 0; i < 380; i++) await fn();
  t.equal(pool.arena.byteLength, early, `the arena holds ${early} bytes after 20 and after 400 calls`);
  t.equal(differing(w.getValue().data, new Float32Array(n * n).fill(401)), 0, 'w has had its 400 updates');
});

t.test('a value lent out with getValue({ borrow: true }) keeps its bytes: its block is never given to another value', async (t) => {
  const pool = poolFor(t);
  const n = 300;
  const w = weft.shared(new Float32Array(n).fill(0), { name: 'w', dtype: 'float32' });
  const u = weft.shared(new Float32Array(n).fill(0), { name: 'u', dtype: 'float32' });
  // Two variables of the same size updated by every call: each call's new values need two
  // blocks of that size, which the values no longer current would otherwise give.
  const fn = await weft.compile([], [], { pool, workers: 2, updates: [[w, w.add(1)], [u, u.add(-1)]] });
  await fn();
  const lent = w.getValue({ borrow: true });
  t.ok(isResident(lent), 'the lent value was kept in the pool memory');
  for (let i = 0; i < 50; i++) await fn();
  t.equal(differing(lent.data, new Float32Array(n).fill(1)), 0, 'after 50 more calls, the lent value still holds the first update');
  t.equal(differing(w.getValue().data, new Float32Array(n).fill(51)), 0, 'and the variable has moved on');
  t.equal(differing(u.getValue().data, new Float32Array(n).fill(-51)), 0, 'as has the other one');
});

t.test('a value no longer current keeps its block while a call reads it, and gives it back after', async (t) => {
  const pool = poolFor(t, 1);
  const value = ndarray(residentArray(pool.arena, 'float32', 1000), [1000]);
  value.data.fill(7);
  startReading([value]);
  retire(value);
  const next = residentArray(pool.arena, 'float32', 1000);
  next.fill(9);
  t.not(next.byteOffset, value.data.byteOffset, 'a new value of its size takes another block');
  t.equal(differing(value.data, new Float32Array(1000).fill(7)), 0, 'and the value read keeps its bytes');
  stopReading([value]);
  t.notOk(isResident(value), 'the last reader done, its block went back');
  t.equal(residentArray(pool.arena, 'float32', 1000).byteOffset, value.data.byteOffset, 'and the next array of its size takes it');
});

t.test('concurrent readers (in place) and updaters of one variable see whole values', async (t) => {
  const pool = poolFor(t);
  const n = 1 << 20;
  const w = weft.shared(new Float32Array(n).fill(3), { name: 'w', dtype: 'float32' });
  const read = await weft.compile([], w.sum(), { pool, workers: 2 });
  const bump = await weft.compile([], w.sum(), { pool, workers: 2, updates: [[w, w.add(1)]] });
  const calls: Array<Promise<weft.NdArray>> = [];
  for (let i = 0; i < 300; i++) calls.push((i % 3 === 0 ? bump() : read()) as Promise<weft.NdArray>);
  const sums = (await Promise.all(calls)).map((o) => o.data[0]!);
  // A value torn between two updates would sum to a number that is not a multiple of n.
  const torn = sums.filter((s) => s % n !== 0 || s < 3 * n || s > 103 * n);
  t.same(torn, [], `each of the 300 sums is n times a value the variable had (${sums.length} calls)`);
  const final = w.getValue().data;
  t.ok(final.every((v) => v === final[0]) && final[0]! > 3 && final[0]! <= 103, `the variable ends whole: ${final[0]}`);
  const again = (await read()) as weft.NdArray;
  t.equal(again.data[0], final[0]! * n, 'and a later call reads that value');
});

t.test('a failing call leaves the value in place and the pool usable', async (t) => {
  const pool = poolFor(t);
  const n = 4096;
  const w = weft.shared(new Float32Array(n).fill(1), { name: 'w', dtype: 'float32' });
  const table = weft.shared(new Float32Array(8).fill(2), { name: 'table', dtype: 'float32' });
  const idx = pt.vector('idx', 'int32');
  const fn = await weft.compile([idx], w.sum(), { pool, workers: 2, updates: [[w, w.add(table.get(idx).sum())]] });
  await fn(Int32Array.from([1, 2]));
  const held = currentValue(w);
  await t.rejects(fn(Int32Array.from([1, 99])), /index 99 is out of bounds/, 'an index out of bounds fails the call');
  t.equal(currentValue(w), held, 'the variable keeps the value it had');
  t.equal(differing(w.getValue().data, new Float32Array(n).fill(5)), 0, 'with its bytes');
  await fn(Int32Array.from([0]));
  t.equal(differing(w.getValue().data, new Float32Array(n).fill(7)), 0, 'and the next call updates it');
});

t.test('a variable updated by functions on two pools: each reads the other pool memory', async (t) => {
  const [a, b] = [weft.createPool({ workers: 1 }), weft.createPool({ workers: 2 })];
  t.teardown(() => Promise.all([a.close(), b.close()]));
  const n = 1 << 17;
  const w = weft.shared(new Float32Array(n).fill(1), { name: 'w', dtype: 'float32' });
  const double = await weft.compile([], [], { pool: a, workers: 1, updates: [[w, w.mul(2)]] });
  const plus = await weft.compile([], [], { pool: b, workers: 2, updates: [[w, w.add(1)]] });
  let want = 1;
  for (let i = 0; i < 6; i++) {
    await double();
    await plus();
    want = want * 2 + 1;
  }
  t.equal(differing(w.getValue().data, new Float32Array(n).fill(want)), 0, `w = ${want} after 6 rounds`);
  t.ok(b.arena.offsetOf(currentValue(w).data) !== undefined, 'the last value lives in the memory of the pool that made it');
});

t.test('a variable given another variable value keeps it when the other moves on', async (t) => {
  const pool = poolFor(t);
  const n = 1 << 12;
  const v = weft.shared(new Float32Array(n).fill(1), { name: 'v', dtype: 'float32' });
  const w = weft.shared(new Float32Array(n).fill(0), { name: 'w', dtype: 'float32' });
  const bumpV = await weft.compile([], [], { pool, workers: 2, updates: [[v, v.add(1)]] });
  const copyV = await weft.compile([], [], { pool, workers: 2, updates: [[w, v]] });
  await bumpV(); // v = 2, in the pool memory
  await copyV(); // w = v's value
  for (let i = 0; i < 20; i++) await bumpV();
  t.equal(differing(w.getValue().data, new Float32Array(n).fill(2)), 0, 'w still holds 2 after 20 updates of v');
  t.equal(differing(v.getValue().data, new Float32Array(n).fill(22)), 0, 'v is 22');
  t.not(currentValue(w).data, currentValue(v).data, 'they do not share an array');
});

t.test('an array lent out keeps its bytes when it comes back as another variable value', async (t) => {
  const pool = poolFor(t);
  const n = 256;
  const a = weft.shared(new Float32Array(n).fill(1), { name: 'a', dtype: 'float32' });
  const b = weft.shared(new Float32Array(n).fill(0), { name: 'b', dtype: 'float32' });
  const bumpA = await weft.compile([], [], { pool, workers: 2, updates: [[a, a.add(1)]] });
  const bumpB = await weft.compile([], [], { pool, workers: 2, updates: [[b, b.add(10)]] });
  await bumpA(); // a = 2, in the pool memory
  const lent = a.getValue({ borrow: true });
  b.setValue(lent.data, { borrow: true }); // b's value: a new wrapper around the lent array
  await bumpB(); // b moves on from the lent array
  for (let i = 0; i < 10; i++) await bumpA();
  t.equal(differing(lent.data, new Float32Array(n).fill(2)), 0, 'the lent array still holds 2');
  t.equal(differing(b.getValue().data, new Float32Array(n).fill(12)), 0, 'b is 12');
  t.equal(differing(a.getValue().data, new Float32Array(n).fill(12)), 0, 'a is 12');
});

t.test('a value that sets shapes, updated by every call, with up to 12 calls at once: every output right', async (t) => {
  const pool = poolFor(t);
  const n = weft.shared(3, { name: 'n', dtype: 'int32' });
  const c = weft.shared(new Float32Array(64).fill(0), { name: 'c', dtype: 'float32' });
  // n sets the output's length (a value the plan is made for) and is read by the sum; each call
  // moves n between 3 and 4, so plans for both values are kept, and c's update takes blocks too.
  // Later rounds run more calls at once: their plans then make new regions, each filled with the
  // value of n the plan was made for.
  const out = pt.alloc(pt.constant(1, { dtype: 'float32' }), n).add(n.astype('float32'));
  const fn = await weft.compile([], out, { pool, workers: 2, updates: [[n, pt.constant(7, { dtype: 'int32' }).sub(n)], [c, c.add(1)]] });
  let wrong = 0;
  let calls = 0;
  for (const atOnce of [1, 1, 1, 1, 1, 1, 2, 3, 4, 6, 8, 12]) {
    const results = (await Promise.all(Array.from({ length: atOnce }, () => fn()))) as weft.NdArray[];
    for (const r of results) {
      const length = r.shape[0]!;
      if ((length !== 3 && length !== 4) || [...r.data].some((v) => v !== length + 1)) wrong += 1;
    }
    calls += atOnce;
  }
  t.equal(wrong, 0, `every output has n elements, each 1 + n, over ${calls} calls, up to 12 at once`);
});

t.test('serializing a function between its calls does not keep the values it reads from going back', async (t) => {
  const pool = poolFor(t);
  const n = 1 << 14;
  const w = weft.shared(new Float32Array(n).fill(0), { name: 'w', dtype: 'float32' });
  const fn = await weft.compile([], [], { pool, workers: 2, updates: [[w, w.add(1)]] });
  for (let i = 0; i < 20; i++) await fn();
  const early = pool.arena.byteLength;
  let documents = 0;
  for (let i = 0; i < 300; i++) {
    await fn();
    documents += weft.serialize(fn).length > 0 ? 1 : 0;
  }
  t.equal(documents, 300, '300 documents written');
  t.equal(pool.arena.byteLength, early, `the arena holds ${early} bytes after 20 calls and after 300 more, each serialized`);
  t.equal(differing(w.getValue().data, new Float32Array(n).fill(320)), 0, 'w has had its 320 updates');
});
