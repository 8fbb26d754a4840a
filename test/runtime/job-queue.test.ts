// The pool's job queue: jobs go out alone while a thread is free and in batches of distinct calls
// when every thread is busy; waiting jobs can be aborted; a failed message rejects its jobs and
// the queue goes on. First the queue's rules with a recording sender, then through real workers.
import t from 'tap';
import { JobQueue, MAX_BATCH, type Send } from '../../src/workers/job-queue.js';
import type { TeamJob, TeamMessage, TeamResult } from '../../src/workers/protocol.js';
import { pt, weft } from '../helpers.js';
import { FaultOp, faultKernels } from './fault-op.js';

const BIG = 1 << 16;

function job(callId: number): TeamJob {
  return { callId, planId: 1, planOffset: 0, planLength: 0, region: 0 };
}

/** A sender whose messages are answered by hand: each answer echoes the calls it carried. */
function recorder() {
  const sent: Array<{ message: TeamMessage; answer: () => void; fail: (e: Error) => void }> = [];
  const send: Send = (message) =>
    new Promise((resolve, reject) => {
      const jobs = 'batch' in message ? message.batch : [message];
      const results: TeamResult[] = jobs.map((j) => ({ tasks: j.callId }));
      sent.push({ message, answer: () => resolve('batch' in message ? results : results[0]!), fail: reject });
    });
  const calls = (i: number): number[] => {
    const m = sent[i]!.message;
    return ('batch' in m ? m.batch : [m]).map((j) => j.callId);
  };
  return { sent, send, calls };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

t.test('jobs go out alone while a thread is free, then in batches of distinct calls', async (t) => {
  const { sent, send, calls } = recorder();
  const queue = new JobQueue(2, send);
  const a = queue.run(job(1));
  const b = queue.run(job(2));
  t.equal(sent.length, 2, 'two threads: two messages at once');
  t.same([calls(0), calls(1)], [[1], [2]]);
  const waiting = [3, 3, 4, 5].map((c) => queue.run(job(c)));
  t.equal(queue.waiting, 4);
  sent[0]!.answer();
  t.same((await a).tasks, 1);
  await tick();
  t.same(calls(2), [3, 4, 5], 'one batch, each call once');
  t.equal(queue.waiting, 1, "the second member of call 3 waits for the next message");
  sent[1]!.answer();
  t.same((await b).tasks, 2);
  await tick();
  t.same(calls(3), [3]);
  sent[2]!.answer();
  sent[3]!.answer();
  t.same((await Promise.all(waiting)).map((r) => r.tasks), [3, 3, 4, 5], 'each job gets its own result');
});

t.test('a batch holds at most MAX_BATCH jobs', async (t) => {
  const { sent, send, calls } = recorder();
  const queue = new JobQueue(1, send);
  const all = Array.from({ length: MAX_BATCH + 3 }, (_, i) => queue.run(job(i)));
  t.equal(sent.length, 1);
  sent[0]!.answer();
  await tick();
  t.equal(calls(1).length, MAX_BATCH);
  sent[1]!.answer();
  await tick();
  t.same(calls(2), [MAX_BATCH + 1, MAX_BATCH + 2]);
  sent[2]!.answer();
  t.equal((await Promise.all(all)).length, MAX_BATCH + 3);
});

t.test('a waiting job can be aborted; a failed message rejects its jobs only', async (t) => {
  const { sent, send, calls } = recorder();
  const queue = new JobQueue(1, send);
  const gone = new AbortController();
  gone.abort();
  await t.rejects(queue.run(job(9), gone.signal), { name: 'AbortError', message: 'the job was aborted before it started' });
  t.equal(sent.length, 0, 'an aborted job is never sent');
  const first = queue.run(job(1));
  const later = new AbortController();
  const dropped = queue.run(job(2), later.signal);
  const kept = [queue.run(job(3)), queue.run(job(4))];
  later.abort();
  await t.rejects(dropped, { name: 'AbortError' });
  sent[0]!.fail(new Error('worker died'));
  await t.rejects(first, /worker died/);
  await tick();
  t.same(calls(1), [3, 4], 'the aborted job left the queue');
  sent[1]!.fail(new Error('worker died again'));
  for (const k of kept) await t.rejects(k, /worker died again/, 'every job of the failed batch rejects');
  const after = queue.run(job(5));
  sent[2]!.answer();
  t.equal((await after).tasks, 5, 'the queue goes on');
});

t.test('a worker that answers a batch with too few results rejects the jobs left over', async (t) => {
  const sent: Array<() => void> = [];
  const queue = new JobQueue(1, () => new Promise((resolve) => sent.push(() => resolve([{ tasks: 7 }]))));
  const first = queue.run(job(1));
  const batch = [queue.run(job(2)), queue.run(job(3))];
  sent[0]!();
  t.equal((await first).tasks, 7);
  await tick();
  sent[1]!();
  t.equal((await batch[0]!).tasks, 7);
  await t.rejects(batch[1]!, { message: 'a worker answered 1 results for a batch of 2' });
});

t.test('through real workers: many concurrent calls on one thread, batched, with the right results', async (t) => {
  const pool = weft.createPool({ workers: 1, kernelModules: [faultKernels] });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const fn = await weft.compile([x], x.mul(x).sum(), { pool });
  const inputs = Array.from({ length: 200 }, (_, i) => new Float64Array(BIG).fill(i));
  let settled = false;
  const pending = Promise.all(inputs.map((v) => fn(v))).finally(() => (settled = true));
  let mostQueued = 0;
  while (!settled) {
    mostQueued = Math.max(mostQueued, pool.queued);
    await tick();
  }
  t.ok(mostQueued > 1, `calls waited in the queue while the thread was busy (at most ${mostQueued})`);
  const results = await pending;
  t.ok(results.every((r, i) => weft.tolist(r) === i * i * BIG));
  t.equal(pool.queued, 0);

  // A worker that dies in a batch fails only the call whose kernel it ran: the calls it had
  // finished keep their results and those it had not joined run on its replacement.
  const exit = await weft.compile([x], new FaultOp('test.exit').call(x).sum(), { pool, name: 'exits' });
  const other = await weft.compile([x], x.add(1).sum(), { pool });
  const mixed = [fn(inputs[1]!), other(inputs[2]!), fn(inputs[2]!), exit(inputs[3]!), fn(inputs[4]!), other(inputs[5]!)];
  const ends = await Promise.allSettled(mixed);
  t.same(
    ends.map((e) => e.status),
    ['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    'only the call whose kernel exits fails',
  );
  const values = ends.map((e) => (e.status === 'fulfilled' ? weft.tolist(e.value as weft.NdArray) : undefined));
  t.same(values, [BIG, 3 * BIG, 4 * BIG, undefined, 16 * BIG, 6 * BIG], 'the others have their results');
  t.match((ends[3] as PromiseRejectedResult).reason, {
    name: 'NodeError',
    message: /^function 'exits': a worker thread died while it ran this node's kernel: .*\n {2}in node \d+: FaultOp\{kernelName=test\.exit/,
  });
  t.equal(weft.tolist(await fn(inputs[5]!)), 25 * BIG, 'the next call works');

  // A queued call aborted while others run: only it rejects.
  const abort = new AbortController();
  const queued = [fn(inputs[6]!), fn(inputs[7]!), fn(inputs[8]!, { signal: abort.signal }), fn(inputs[9]!)];
  abort.abort();
  const outcome = await Promise.allSettled(queued);
  t.same(
    outcome.map((o) => o.status),
    ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
  );
  t.equal((outcome[2] as PromiseRejectedResult).reason.name, 'AbortError');
  t.equal(weft.tolist((outcome[3] as PromiseFulfilledResult<weft.NdArray>).value), 81 * BIG);
});
