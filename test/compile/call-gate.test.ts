// The call gate: at most `limit` calls run at once, the rest start in order as earlier ones end;
// a waiting call that is aborted never starts; failures free their slot. And through a compiled
// function: more concurrent calls than the gate lets through all return their own results, and
// calls on the calling thread run at once, outside the gate.
import t from 'tap';
import { CallGate, CALLS_AT_ONCE } from '../../src/compile/call-gate.js';
import { costModel, INLINE_WORK } from '../../src/scheduler/planned-executor.js';
import { pt, weft } from '../helpers.js';

/** A promise settled from outside. */
function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

t.test('at most `limit` calls run; the others start in order as slots free', async (t) => {
  const gate = new CallGate<number>(2);
  const started: number[] = [];
  const holds = [0, 1, 2, 3].map(() => deferred<number>());
  const results = holds.map((h, i) =>
    gate.run(() => {
      started.push(i);
      return h.promise;
    }),
  );
  t.same(started, [0, 1], 'two run at once');
  t.equal(gate.waiting, 2);
  holds[1]!.resolve(10);
  await results[1];
  await Promise.resolve();
  t.same(started, [0, 1, 2], 'the oldest waiting call takes the free slot');
  holds[0]!.reject(new Error('boom'));
  await t.rejects(results[0]!, { message: 'boom' }, 'a failure reaches its caller');
  await Promise.resolve();
  t.same(started, [0, 1, 2, 3], 'and frees its slot');
  holds[2]!.resolve(12);
  holds[3]!.resolve(13);
  t.same(await Promise.all(results.slice(1)), [10, 12, 13]);
  t.equal(gate.waiting, 0);
});

t.test('a call that throws when it starts rejects and frees its slot', async (t) => {
  const gate = new CallGate<number>(1);
  await t.rejects(
    gate.run(() => {
      throw new TypeError('bad');
    }),
    { name: 'TypeError', message: 'bad' },
  );
  t.equal(await gate.run(async () => 5), 5, 'the slot is free again');
});

t.test('a waiting call that is aborted never starts', async (t) => {
  const gate = new CallGate<number>(1, 'my function');
  const hold = deferred<number>();
  const first = gate.run(() => hold.promise);
  const controller = new AbortController();
  let ran = false;
  const second = gate.run(async () => {
    ran = true;
    return 2;
  }, controller.signal);
  const third = gate.run(async () => 3);
  controller.abort();
  await t.rejects(second, { name: 'AbortError', message: 'my function: the call was aborted while it waited for its turn' });
  hold.resolve(1);
  t.same(await Promise.all([first, third]), [1, 3]);
  t.notOk(ran, 'the aborted call did not run');
});

t.test('more concurrent calls than the gate lets through each get their own result', async (t) => {
  // Calls that a worker runs: calls on the calling thread end before fn returns (see below).
  const pool = weft.createPool({ workers: 1 });
  t.teardown(() => pool.close());
  costModel.inlineWork = 0;
  t.teardown(() => void (costModel.inlineWork = INLINE_WORK));
  const x = pt.vector('x');
  const fn = await weft.compile([x], x.mul(2).add(1), { pool });
  const n = CALLS_AT_ONCE + 300;
  const controller = new AbortController();
  const calls = Array.from({ length: n }, (_, i) => (i === n - 10 ? fn([i, -i], { signal: controller.signal }) : fn([i, -i])));
  controller.abort();
  const settled = await Promise.allSettled(calls);
  const wrong = settled.flatMap((s, i) => {
    if (i === n - 10) return s.status === 'rejected' && (s.reason as Error).name === 'AbortError' ? [] : [`call ${i} was not aborted`];
    if (s.status === 'rejected') return [`call ${i}: ${String(s.reason)}`];
    const got = [...s.value.data];
    return got[0] === 2 * i + 1 && got[1] === -2 * i + 1 ? [] : [`call ${i}: ${got}`];
  });
  t.same(wrong, []);
});

t.test('a call on the calling thread runs before fn returns and holds no place in the gate', async (t) => {
  const x = pt.vector('x');
  const total = weft.shared(0, { name: 'total' });
  const fn = await weft.compile([x], x.sum(), { workers: 0, updates: [[total, total.add(x.sum())]] });
  const n = CALLS_AT_ONCE + 300;
  const sum = (n * (n + 1)) / 2;
  const controller = new AbortController();
  const calls = Array.from({ length: n }, (_, i) => fn([i, 1], { signal: controller.signal }));
  // Every call has run (and updated total) already: an abort now stops none of them.
  t.equal(weft.tolist(total.getValue()), sum, 'every call ran before fn returned');
  controller.abort();
  const values = await Promise.all(calls);
  t.same(values.map((v) => weft.tolist(v)), Array.from({ length: n }, (_, i) => i + 1));
  await t.rejects(fn([1, 2], { signal: controller.signal }), { name: 'AbortError' }, 'a call whose signal was aborted before it started is refused');
  t.equal(weft.tolist(total.getValue()), sum, 'and changes nothing');
});
