// The job ring: first its protocol played by hand on a shared memory (order, a full ring,
// cancelling, answers, the counters' wrap), then through real workers: 1,000 concurrent calls
// of several functions on one pool, a worker killed while calls wait in the ring, an abort of a
// call waiting there, and memory that stays flat over 20k calls with plain arrays.
import ndarray from 'ndarray';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { COUNTER_LIMIT, JobRing, RING_EXTERNAL_PAIRS, RING_SLOTS, SLOT, ringCarries } from '../../src/workers/job-ring.js';
import type { TeamJob } from '../../src/workers/protocol.js';
import { costModel, INLINE_WORK } from '../../src/scheduler/planned-executor.js';
import { pt, weft } from '../helpers.js';
import { FaultOp, faultKernels } from './fault-op.js';

function ring(): JobRing {
  const memory = new WebAssembly.Memory({ initial: Math.ceil((JobRing.bytes + 128) / 65536), maximum: 64, shared: true });
  const r = new JobRing(memory, 64);
  r.initialize();
  return r;
}

const job = (callId: number, extra: Partial<TeamJob> = {}): TeamJob => ({ callId, planId: 7, planOffset: 4096, planLength: 300, region: 3_000_000_000, ...extra });

t.test('jobs are taken in order, with every field (offsets above 2^31 too), and answered in their slot', async (t) => {
  const r = ring();
  const a = r.offer(job(1, { member: 0, external: [2, 123456] }));
  const b = r.offer(job(2, { member: 3 }));
  t.same([a, b], [0, 1]);
  t.equal(r.state(a), SLOT.FILLED);
  const first = r.take(11)!;
  t.same(first.job, job(1, { member: 0, external: [2, 123456] }), 'the first job as offered');
  t.equal(r.state(a), SLOT.TAKEN);
  t.ok(r.heldBy(a, 11), 'the slot says which thread took it');
  t.notOk(r.heldBy(a, 12));
  const second = r.take(12)!;
  t.same(second.job, job(2, { member: 3 }));
  t.equal(r.take(11), undefined, 'an empty ring gives nothing');
  const finished = r.finished;
  r.answerResult(second.slot, { tasks: 5, thread: 12 });
  r.answerResult(first.slot, { tasks: 2, thread: 11, error: { task: 1, message: 'boom', stack: 'Error: boom\n    at kernel' } });
  t.equal(r.finished, finished + 2, 'each answer bumps the counter the calling thread waits on');
  t.same(r.answer(second.slot), { kind: 'result', result: { tasks: 5, thread: 12 } });
  t.same(r.answer(first.slot), { kind: 'result', result: { tasks: 2, thread: 11, error: { task: 1, message: 'boom', stack: 'Error: boom\n    at kernel' } } });
});

t.test('a full ring refuses a job until the slot it needs is freed; a failure before the tasks is an answer too', async (t) => {
  const r = ring();
  for (let k = 0; k < RING_SLOTS; k++) t.equal(r.offer(job(k + 1)), k);
  t.equal(r.offer(job(99)), -1, 'every slot holds a job');
  const taken = r.take(1)!;
  t.equal(r.offer(job(99)), -1, 'taken is not free');
  r.answerFailure(taken.slot, new Error('the plan could not be read'));
  t.match(r.answer(taken.slot), { kind: 'failed', message: 'the plan could not be read', stack: /^Error: the plan could not be read/ });
  r.free(taken.slot);
  t.equal(r.offer(job(99)), 0, 'the freed slot takes the next job');
});

t.test('a job cancelled before it is taken is skipped; one already taken cannot be cancelled', async (t) => {
  const r = ring();
  const a = r.offer(job(1));
  const b = r.offer(job(2));
  t.ok(r.cancel(a));
  const taken = r.take(5)!;
  t.equal(taken.job.callId, 2, 'the worker passes over the cancelled job');
  t.equal(r.state(a), SLOT.DONE, 'and marks its slot for freeing');
  t.notOk(r.cancel(b), 'a taken job runs and answers');
});

t.test("an error's long message and stack are cut to the slot's text, whole characters", async (t) => {
  const r = ring();
  r.offer(job(1));
  const taken = r.take(1)!;
  const message = 'é'.repeat(3000);
  r.answerResult(taken.slot, { tasks: 0, error: { task: 0, message, stack: 'x'.repeat(10000) } });
  const answer = r.answer(taken.slot);
  t.equal(answer.kind, 'result');
  const error = answer.kind === 'result' ? answer.result.error! : undefined;
  t.equal(error?.message.length, 2048, '4096 bytes of two-byte characters');
  t.equal(error?.stack, undefined, 'no room left for the stack');
  r.offer(job(2));
  const odd = r.take(1)!;
  r.answerResult(odd.slot, { tasks: 0, error: { task: 0, message: 'x' + 'é'.repeat(3000) } });
  const cut = r.answer(odd.slot);
  t.equal(cut.kind === 'result' ? cut.result.error?.message : undefined, 'x' + 'é'.repeat(2047), 'a cut that would split a character ends before it');
});

t.test('the head and tail counters wrap without losing or repeating a job', async (t) => {
  // Both counters just before their limit (slot 63 of 64): HEAD is the header's Int32 0, TAIL 1.
  const memory = new WebAssembly.Memory({ initial: Math.ceil((JobRing.bytes + 128) / 65536), maximum: 64, shared: true });
  const wrapped = new JobRing(memory, 64);
  wrapped.initialize();
  const h = new Int32Array(memory.buffer, 64, 2);
  Atomics.store(h, 0, COUNTER_LIMIT - 1);
  Atomics.store(h, 1, COUNTER_LIMIT - 1);
  const slots = [wrapped.offer(job(1)), wrapped.offer(job(2)), wrapped.offer(job(3))];
  t.same(slots, [RING_SLOTS - 1, 0, 1]);
  t.same(Atomics.load(h, 1), 2, 'the tail wrapped');
  t.same([1, 2, 3].map(() => wrapped.take(1)!.job.callId), [1, 2, 3]);
  t.equal(wrapped.take(1), undefined);
  t.equal(Atomics.load(h, 0), 2, 'the head wrapped');
});

t.test('a worker that took a job and stopped before moving the head leaves no job unreachable', async (t) => {
  const memory = new WebAssembly.Memory({ initial: Math.ceil((JobRing.bytes + 128) / 65536), maximum: 64, shared: true });
  const r = new JobRing(memory, 64);
  r.initialize();
  const head = new Int32Array(memory.buffer, 64, 1);
  const a = r.offer(job(1));
  r.offer(job(2));
  const first = r.take(11)!;
  // Played back: thread 11 took slot a's job, then stopped before HEAD moved on.
  Atomics.store(head, 0, 0);
  t.ok(r.heldBy(a, 11), 'taken and recorded in one step: its exit would reject exactly this job');
  const second = r.take(12)!;
  t.equal(second.job.callId, 2, 'the next worker passes the taken slot and takes the next job');
  t.equal(Atomics.load(head, 0), 2, 'and the head moved past both');
  t.equal(r.take(12), undefined);
  t.equal(first.job.callId, 1);
  t.equal(r.state(a), SLOT.TAKEN, 'the first job is still the first thread\'s');
});

t.test('which jobs travel through the ring', async (t) => {
  t.ok(ringCarries(job(1)));
  t.ok(ringCarries(job(1, { external: Array.from({ length: 2 * RING_EXTERNAL_PAIRS }, (_, i) => i) })));
  t.notOk(ringCarries(job(1, { external: Array.from({ length: 2 * RING_EXTERNAL_PAIRS + 2 }, (_, i) => i) })), 'more inputs in place than a slot holds');
  t.notOk(ringCarries(job(1, { trace: true })), 'a traced job (its trace comes back as a message)');
  t.notOk(ringCarries(job(1, { outputMemory: [[0, new SharedArrayBuffer(8)]] })), 'a job with output buffers of its own (they travel as a message)');
});

/** A vector long enough that calls go to the workers (above the cost model's inline threshold). */
const BIG = 1 << 16;

t.test('1,000 concurrent calls of three functions on one pool go through the ring with the right results', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const fns = await Promise.all([x.mul(x).sum(), x.add(1).sum(), x.mul(2).max()].map((y) => weft.compile([x], y, { pool })));
  const want = [(v: number) => v * v * BIG, (v: number) => (v + 1) * BIG, (v: number) => 2 * v];
  const inputs = Array.from({ length: 8 }, (_, i) => new Float64Array(BIG).fill(i));
  const before = pool.jobsSent;
  const calls = Array.from({ length: 1000 }, (_, i) => fns[i % 3]!(inputs[i % 8]!).then((r) => [i, weft.tolist(r) as number] as const));
  const results = await Promise.all(calls);
  const wrong = results.filter(([i, got]) => got !== want[i % 3]!(i % 8));
  t.same(wrong, [], 'every call has its own function and input');
  const sent = pool.jobsSent;
  t.ok(sent.ring - before.ring >= 1000, `at least one ring job per call (${sent.ring - before.ring})`);
  t.equal(sent.messages, before.messages, 'no messages');
  t.equal(pool.queued, 0);
});

t.test('a worker killed while calls wait in the ring: its call rejects, the others complete, the next call works', async (t) => {
  const pool = weft.createPool({ workers: 1, kernelModules: [faultKernels] });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const good = await weft.compile([x], x.add(1).sum(), { pool });
  const slow = await weft.compile([x], new FaultOp('test.slow', 50).call(x).sum(), { pool });
  const exit = await weft.compile([x], new FaultOp('test.exit').call(x).sum(), { pool, name: 'exits' });
  const v = (i: number): Float64Array => new Float64Array(BIG).fill(i);
  // The slow call holds the one thread, so the rest wait in the ring when the exit call runs.
  const calls = [slow(v(1)), good(v(2)), exit(v(3)), good(v(4)), good(v(5)), slow(v(6)), good(v(7))];
  const ends = await Promise.allSettled(calls);
  t.same(ends.map((e) => e.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'], 'only the call whose kernel exits fails');
  t.same(
    ends.map((e) => (e.status === 'fulfilled' ? weft.tolist(e.value as weft.NdArray) : undefined)),
    [BIG, 3 * BIG, undefined, 5 * BIG, 6 * BIG, 6 * BIG, 8 * BIG],
    'the others have their results',
  );
  t.match((ends[2] as PromiseRejectedResult).reason, {
    name: 'NodeError',
    message: /^function 'exits': a worker thread died while it ran this node's kernel: worker exited with code: 3\n {2}in node \d+: FaultOp\{kernelName=test\.exit/,
  });
  t.equal(weft.tolist(await good(v(9))), 10 * BIG, 'the next call works');
  t.equal(pool.jobsSent.messages, 0, 'all of them went through the ring');
});

t.test('a call aborted while it waits in the ring rejects at once; the running call and the function are unharmed', async (t) => {
  const pool = weft.createPool({ workers: 1, kernelModules: [faultKernels] });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const slow = await weft.compile([x], new FaultOp('test.slow', 400).call(x).sum(), { pool });
  const good = await weft.compile([x], x.add(1).sum(), { pool });
  const v = new Float64Array(BIG).fill(1);
  t.equal(weft.tolist(await good(v)), 2 * BIG, 'the worker is up');
  const started = performance.now();
  const running = slow(v);
  const stop = new AbortController();
  const waiting = good(v, { signal: stop.signal });
  await new Promise((r) => setTimeout(r, 30));
  t.equal(pool.queued, 1, 'the second call waits in the ring');
  stop.abort();
  const error = await waiting.then(
    () => undefined,
    (e: Error) => e,
  );
  const rejectedAfter = performance.now() - started;
  t.equal(error?.name, 'AbortError');
  t.ok(rejectedAfter < 400, `it rejected before the running call ended (after ${rejectedAfter.toFixed(0)} ms)`);
  t.equal(weft.tolist(await running), BIG, 'the running call completes');
  t.equal(pool.queued, 0);
  t.equal(weft.tolist(await good(v)), 2 * BIG, 'the aborted function works again');
});

t.test('memory stays flat over 20k calls with plain arrays in and out', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  // W8's dense layer: 65k multiply-adds per call, fresh [16, 64] outputs.
  const x = pt.matrix('x', 'float32');
  const w = weft.shared(ndarray(Float32Array.from({ length: 64 * 64 }, (_, i) => ((i * 37) % 101) / 1000 - 0.05), [64, 64]), { name: 'W', dtype: 'float32' });
  const fn = await weft.compile([x], pt.tanh(x.dot(w)), { pool });
  const plain = Array.from({ length: 4 }, (_, k) => ndarray(Float32Array.from({ length: 16 * 64 }, (_, i) => ((i + k) % 7) / 7), [16, 64]));
  const first = await fn(plain[0]!);
  const rounds = async (n: number): Promise<void> => {
    for (let r = 0; r < n; r++) {
      const outs = await Promise.all(Array.from({ length: 1000 }, (_, i) => fn(plain[i % 4]!)));
      const bad = outs.findIndex((o, i) => i % 4 === 0 && !o.data.every((value, j) => Object.is(value, first.data[j])));
      if (bad >= 0) throw new Error(`round ${r}: call ${bad} differs from the first call with the same input`);
    }
  };
  // A real collection before each reading (tap does not start node with --expose-gc). The heap
  // is what is checked: freed ArrayBuffers' bytes leave the process lazily (0-24 MiB here).
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const heap = (): number => {
    gc();
    return process.memoryUsage().heapUsed;
  };
  const arena = pool.arena.byteLength;
  await rounds(5);
  const after5k = heap();
  let most = after5k;
  for (let k = 0; k < 5; k++) {
    await rounds(3);
    most = Math.max(most, heap());
  }
  const grew = most - after5k;
  t.ok(grew < 8 << 20, `over 15k more calls the heap held at most ${(grew / 2 ** 20).toFixed(2)} MiB more than after 5k`);
  t.equal(pool.arena.byteLength, arena, 'the arena did not grow');
  t.equal(pool.queued, 0);
});

t.test('with the inline threshold at 0 a tiny call goes through the ring, with the same value as inline', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const [a, b] = [pt.scalar('a'), pt.scalar('b')];
  const fn = await weft.compile([a, b], a.mul(b).add(1).tanh(), { pool });
  const inline = weft.tolist(await fn(0.3, 0.7));
  t.equal(pool.jobsSent.ring, 0, 'the cost model runs it on the calling thread');
  costModel.inlineWork = 0;
  try {
    t.equal(weft.tolist(await fn(0.3, 0.7)), inline, 'the same bits on a worker');
  } finally {
    costModel.inlineWork = INLINE_WORK;
  }
  t.equal(pool.jobsSent.ring, 1, 'one ring job');
  t.equal(weft.tolist(await fn(0.3, 0.7)), inline);
  t.equal(pool.jobsSent.ring, 1, 'inline again');
});

t.test('a kernel module that fails to load in the workers: calls reject with its error, through messages, instead of waiting', async (t) => {
  const pool = weft.createPool({ workers: 2, kernelModules: [new URL('../fixtures/refuses-in-workers.mjs', import.meta.url)] });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const fn = await weft.compile([x], x.add(1).sum(), { pool, name: 'refused' });
  const v = new Float64Array(BIG).fill(1);
  const calls = await Promise.allSettled([fn(v), fn(v), fn(v)]);
  t.same(calls.map((c) => c.status), ['rejected', 'rejected', 'rejected']);
  for (const c of calls) t.match((c as PromiseRejectedResult).reason, { message: /refuses-in-workers\.mjs: this module does not load in a worker thread/ });
  await t.rejects(fn(v), { message: /does not load in a worker thread/ }, 'and so does a later call');
  t.ok(pool.jobsSent.messages >= 4, `the jobs went as messages (${JSON.stringify(pool.jobsSent)})`);
  t.equal(pool.queued, 0, 'nothing is left waiting');
});

t.test('a message job is not held back by a stream of ring jobs on the same worker', async (t) => {
  const pool = weft.createPool({ workers: 1 });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const ringFn = await weft.compile([x], x.mul(x).sum(), { pool });
  // A profiled function's jobs carry a trace, which comes back as a message.
  const traced = await weft.compile([x], x.add(1).sum(), { pool, profile: true });
  // Calls of about a millisecond each, so that the ring stays full while the message arrives.
  const long = pool.from(new Float64Array(1 << 19).fill(2));
  const v = new Float64Array(BIG).fill(2);
  t.equal(weft.tolist(await traced(v)), 3 * BIG, 'the worker is up');
  let ringDone = 0;
  const stream = Array.from({ length: 400 }, () => ringFn(long).then((r) => ((ringDone += 1), r)));
  await new Promise((r) => setTimeout(r, 20));
  const messages = pool.jobsSent.messages;
  const tracedResult = await traced(v);
  const doneBefore = ringDone;
  t.equal(weft.tolist(tracedResult), 3 * BIG);
  t.equal(pool.jobsSent.messages, messages + 1, 'the traced call went as a message');
  const all = await Promise.all(stream);
  t.ok(all.every((r) => weft.tolist(r) === 4 * (1 << 19)), 'the ring calls have their values');
  t.ok(doneBefore < stream.length / 2, `the message job finished while ring jobs were still to run (${doneBefore} of ${stream.length} done)`);
});
