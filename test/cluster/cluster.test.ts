// weft.cluster over a real Redis (a redis-server of the test's own) and real `weft worker`
// processes (the built CLI): results equal local calls bit for bit through 1 and 2 processes; a
// map of 2,000 calls survives a worker SIGKILLed mid-way (each call answered once, right values);
// a hostile document is refused unread; bad input comes back as the local error; an aborted call
// leaves the queue; a Redis restart is survived; shared state stays on the caller; SIGTERM lets
// the call in flight finish.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { documentHash, documentKey } from '../../src/cluster/documents.js';
import { CALL_JOB } from '../../src/cluster/job.js';
import { frameText } from '../../src/cluster/wire.js';
import { pt, requires, rng, throwsExactly, weft } from '../helpers.js';
import { startRedis, type RedisServer } from '../redis.js';
import { REDIS } from '../requires.js';

// Real processes (redis-server, weft worker): each takes seconds to start on a loaded machine.
t.setTimeout(300_000);

const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

/** A dense layer, W8's shape: tanh(x·W + b) for x of [n, 16]. */
async function denseLayer() {
  const r = rng(7);
  const x = pt.matrix('x', 'float32');
  const w = weft.shared(r.normal([16, 32], { dtype: 'float32' }), { name: 'W' });
  const b = weft.shared(r.normal([32], { dtype: 'float32' }), { name: 'b' });
  return weft.compile([x], pt.tanh(x.dot(w).add(b)), { name: 'dense', workers: 0 });
}

function inputs(n: number, seed: number): weft.NdArray[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => r.normal([8, 16], { dtype: 'float32' }));
}

function bytesOf(a: weft.NdArray): string {
  const d = a.data;
  return Buffer.from(d.buffer, d.byteOffset, d.byteLength).toString('hex');
}

interface WorkerProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

/** `weft worker` as a process of its own; resolves once it serves. */
function startWorker(url: string, queue: string, extra: readonly string[] = []): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [CLI, 'worker', '--redis', url, '--queue', queue, '--workers', '1', '--lock-duration', '1000', '--stalled-interval', '500', ...extra], {
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`weft worker did not start in 20 s: ${output}`)), 20_000);
    const onData = (d: Buffer): void => {
      output += d;
      if (/serving queue/.test(output)) {
        clearTimeout(timer);
        resolve({ child, exited, output: () => output });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (output += d));
    void exited.then(({ code }) => reject(new Error(`weft worker exited (${code}) before serving: ${output}`)));
  });
}

async function stopWorker(w: WorkerProcess): Promise<void> {
  if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
  await w.exited;
}

let queueCount = 0;
const freshQueue = (name: string): string => `${name}-${process.pid}-${queueCount++}`;

t.test('in a browser build weft.cluster says it runs on Node', async (t) => {
  const browser = await import('../../src/cluster/index.browser.js');
  await throwsExactly(t, () => browser.connect(), Error, 'weft.cluster.connect runs on Node.js (BullMQ over Redis); a browser page cannot call it');
  await throwsExactly(t, () => browser.serve(), Error, 'weft.cluster.serve runs on Node.js (BullMQ over Redis); a browser page cannot call it');
  t.equal(browser.MAX_FRAME_BYTES, weft.cluster.MAX_FRAME_BYTES, 'the same limit');
  const { readFileSync } = await import('node:fs');
  const bundle = readFileSync(new URL('../../dist/browser/weft.js', import.meta.url), 'utf8');
  t.notMatch(bundle, /from ["']bullmq["']|import\(["']bullmq["']\)/, 'the browser bundle does not load bullmq');
});

const redisPath = requires(t, REDIS, 'weft.cluster over Redis');
if (redisPath) {
  let redis: RedisServer;
  t.before(async () => {
    redis = await startRedis(redisPath);
  });
  t.teardown(async () => {
    await redis?.stop();
    await weft.shutdown();
  });

  t.test('calls through 1 and then 2 worker processes equal local calls bit for bit', async (t) => {
    const f = await denseLayer();
    const queue = freshQueue('bits');
    const first = await startWorker(redis.url, queue);
    t.teardown(() => stopWorker(first));
    const remote = await weft.cluster.connect(f, { connection: redis.url, queue });
    t.teardown(() => remote.close());
    const xs = inputs(40, 11);
    const local = await Promise.all(xs.map((x) => f(x)));
    const one = await Promise.all(xs.map((x) => remote(x)));
    t.same(one.map((r) => bytesOf(r as weft.NdArray)), local.map(bytesOf), '40 calls through 1 process: the same bits');
    t.same(one[0]!.shape, [8, 32], 'an ndarray of the output\'s shape');
    t.equal(one[0]!.data.constructor, Float32Array, 'of the output\'s dtype');
    const second = await startWorker(redis.url, queue);
    t.teardown(() => stopWorker(second));
    const two = await remote.map(xs.map((x) => [x]));
    t.same(two.map((r) => bytesOf(r as weft.NdArray)), local.map(bytesOf), '40 calls through 2 processes: the same bits');
    t.equal(remote.pending, 0, 'nothing left waiting');
  });

  t.test('map of 2,000 calls with one worker process SIGKILLed after 500 results: every call answered once, right values', async (t) => {
    const f = await denseLayer();
    const queue = freshQueue('kill');
    const a = await startWorker(redis.url, queue, ['--concurrency', '4']);
    const b = await startWorker(redis.url, queue, ['--concurrency', '4']);
    t.teardown(() => Promise.all([stopWorker(a), stopWorker(b)]));
    const remote = await weft.cluster.connect(f, { connection: redis.url, queue });
    t.teardown(() => remote.close());
    const xs = inputs(2000, 12);
    const expected = await Promise.all(xs.map((x) => f(x)));
    const progress: number[] = [];
    const totals = new Set<number>();
    let killed = false;
    const results = await remote.map(
      xs.map((x) => [x]),
      {
        onProgress: (done, total) => {
          progress.push(done);
          totals.add(total);
          if (done === 500 && !killed) {
            killed = true;
            a.child.kill('SIGKILL');
          }
        },
      },
    );
    const { signal } = await a.exited;
    t.equal(signal, 'SIGKILL', 'one worker process was killed mid-way');
    t.equal(results.length, 2000, '2,000 results');
    t.same([...totals], [2000], 'progress counts all calls');
    t.same(progress, Array.from({ length: 2000 }, (_, i) => i + 1), 'each call answered exactly once');
    const wrong = results.map((r, i) => (bytesOf(r as weft.NdArray) === bytesOf(expected[i]!) ? -1 : i)).filter((i) => i >= 0);
    t.same(wrong, [], 'every result is its own call\'s, bit for bit');
    t.equal(remote.pending, 0, 'nothing left waiting');
  });

  t.test('a hostile document stored under its hash is refused by the worker without running anything', async (t) => {
    const queue = freshQueue('hostile');
    const pool = weft.createPool({ workers: 1 });
    t.teardown(() => pool.close());
    const server = await weft.cluster.serve({ connection: redis.url, queue, pool, handleSignals: false });
    t.teardown(() => server.close());
    const { client, jobs } = queueOf(t, redis.url, queue);
    const f = await denseLayer();
    const doc = JSON.parse(weft.serialize(f));
    // An op type that names Object.prototype's constructor, and a prototype-polluting field.
    doc.nodes[0].op.type = 'constructor';
    doc.nodes[0].op.props = JSON.parse('{"__proto__": {"polluted": true}}');
    const hostile = JSON.stringify(doc);
    t.match(hostile, /"__proto__":\{"polluted":true\}/, 'the document carries the polluting field');
    const hash = documentHash(hostile);
    await client.set(documentKey('bull', queue, hash), hostile);
    const args = frameText([{ kind: 'array', array: inputs(1, 1)[0]! }], 'args');
    const job = await jobs.add(CALL_JOB, { fn: hash, args }, { attempts: 3 });
    const reason = await waitFailed(jobs, job.id!);
    t.match(reason, /^DeserializeError: nodes\[0\]\.op\.type: /, `refused by the loader's checks (${reason.slice(0, 120)})`);
    const after = await jobs.getJob(job.id!);
    t.equal(after?.attemptsMade, 1, 'failed once, not retried (3 attempts allowed)');
    t.equal((Object.prototype as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
    t.equal(server.stats().done, 0, 'nothing ran');

    // A document stored under another document's hash is refused before it is read.
    const honest = weft.serialize(f);
    const claimed = documentHash(`${honest} `);
    await client.set(documentKey('bull', queue, claimed), honest);
    const job2 = await jobs.add(CALL_JOB, { fn: claimed, args });
    t.equal(await waitFailed(jobs, job2.id!), `Error: weft.cluster: the document at bull:${queue}:weft-fn:${claimed} has hash ${documentHash(honest)}, not ${claimed}: refused unread`, 'a wrong hash is refused');
    const job3 = await jobs.add(CALL_JOB, { fn: 'x', args });
    t.equal(await waitFailed(jobs, job3.id!), 'TypeError: weft.cluster: the job is not a weft call (fn is not a SHA-256 hash)', 'a malformed job is refused');
    t.equal(server.stats().failed, 3, 'three calls failed');
  });

  t.test('a call\'s bad input comes back as the same error class and message as locally', async (t) => {
    const queue = freshQueue('errors');
    const pool = weft.createPool({ workers: 1 });
    t.teardown(() => pool.close());
    const server = await weft.cluster.serve({ connection: redis.url, queue, pool, handleSignals: false });
    t.teardown(() => server.close());
    const f = await denseLayer();
    const remote = await weft.cluster.connect(f, { connection: redis.url, queue });
    t.teardown(() => remote.close());
    const cases: Array<[string, unknown[]]> = [
      ['a vector for a matrix', [[1, 2, 3]]],
      ['a misaligned matrix', [[[1, 2], [3, 4]]]],
      ['float64 data for float32 (no downcast)', [new Float64Array(16)]],
      ['a ragged nested array', [[[1, 2], [3]]]],
      ['too many arguments', [[[1]], [[2]]]],
    ];
    for (const [what, args] of cases) {
      let local: Error | undefined;
      try {
        await (f as unknown as (...a: unknown[]) => Promise<unknown>)(...args);
      } catch (e) {
        local = e as Error;
      }
      t.ok(local, `${what}: fails locally`);
      await throwsExactly(t, () => (remote as unknown as (...a: unknown[]) => Promise<unknown>)(...args), local!.constructor as new () => Error, local!.message, `${what} (${local!.name})`);
    }
    t.equal(server.stats().done, 0, 'no call succeeded');
    // Three reached the server (a ragged array and a wrong count are refused before sending): each failed once.
    t.equal(server.stats().failed, 3, 'each call that reached the server failed once, none was retried');
    t.same((await remote(inputs(1, 3)[0]!)).shape, [8, 32], 'the server still answers');
  });

  t.test('an AbortSignal removes a waiting call from the queue', async (t) => {
    const queue = freshQueue('abort');
    const f = await denseLayer();
    const remote = await weft.cluster.connect(f, { connection: redis.url, queue });
    t.teardown(() => remote.close());
    const { jobs } = queueOf(t, redis.url, queue);
    const controller = new AbortController();
    const call = remote(inputs(1, 4)[0]!, { signal: controller.signal });
    await until(async () => (await jobs.getJobCounts('wait')).wait === 1);
    controller.abort(new Error('enough'));
    await throwsExactly(t, () => call, weft.AbortError, "remote function 'dense': the call was aborted");
    await until(async () => (await jobs.getJobCounts('wait')).wait === 0);
    t.equal((await jobs.getJobCounts('wait')).wait, 0, 'the job left the queue');
    t.equal(remote.pending, 0, 'nothing waits for it');
    const pool = weft.createPool({ workers: 1 });
    t.teardown(() => pool.close());
    const server = await weft.cluster.serve({ connection: redis.url, queue, pool, handleSignals: false });
    t.teardown(() => server.close());
    t.same((await remote(inputs(1, 4)[0]!)).shape, [8, 32], 'a later call runs');
    t.equal(server.stats().done, 1, 'the aborted call never ran');
  });

  t.test('a Redis restart while idle is survived by reconnecting', async (t) => {
    const queue = freshQueue('restart');
    const f = await denseLayer();
    const worker = await startWorker(redis.url, queue);
    t.teardown(() => stopWorker(worker));
    const remote = await weft.cluster.connect(f, { connection: redis.url, queue });
    t.teardown(() => remote.close());
    const x = inputs(1, 5)[0]!;
    const before = bytesOf(await remote(x));
    await redis.restart();
    // The restarted Redis is empty: the caller stores the document again once it reconnects.
    const check = new Redis(redis.url);
    t.teardown(() => check.disconnect());
    await until(async () => (await check.exists(documentKey('bull', queue, remote.hash))) === 1, 15_000);
    t.equal(bytesOf(await remote(x)), before, 'a call after the restart gives the same bits');
    t.equal(bytesOf(await remote(x)), bytesOf(await f(x)), 'and equals the local call');
  });

  t.test('shared variables: refused without state: caller; with it the caller keeps the state', async (t) => {
    const queue = freshQueue('state');
    const x = pt.vector('x');
    const acc = weft.shared([0, 0, 0], { name: 'acc' });
    const step = await weft.compile([x], acc.add(x).sum(), { updates: [[acc, acc.add(x)]], name: 'step', workers: 0 });
    await throwsExactly(
      t,
      () => weft.cluster.connect(step, { connection: redis.url, queue }),
      TypeError,
      "weft.cluster.connect: function 'step' updates shared variables (acc), and workers keep no state; pass { state: 'caller' } to send their values with each call and apply the new values here",
    );
    const pool = weft.createPool({ workers: 1 });
    t.teardown(() => pool.close());
    const server = await weft.cluster.serve({ connection: redis.url, queue, pool, handleSignals: false });
    t.teardown(() => server.close());
    const remote = await weft.cluster.connect(step, { connection: redis.url, queue, state: 'caller' });
    t.teardown(() => remote.close());
    t.equal(remote.shared[0], acc, 'the state is the compiled function\'s own shared variable');
    const out1 = await remote([1, 2, 3]);
    t.same(weft.tolist(out1 as weft.NdArray), 6, 'the output');
    t.same(weft.tolist(acc.getValue()), [1, 2, 3], 'the update applied here');
    await remote([1, 1, 1]);
    t.same(weft.tolist(acc.getValue()), [2, 3, 4], 'and the next call sent the new state');
    await throwsExactly(t, () => remote([1, 2]), weft.NodeError, (await localError(step as unknown as (...a: unknown[]) => Promise<unknown>, [[1, 2]])).message, 'a failing call');
    t.same(weft.tolist(acc.getValue()), [2, 3, 4], 'a failed call leaves the state as it was');
    // A document works the same, with the state on remote.shared.
    const doc = await weft.cluster.connect(weft.serialize(step), { connection: redis.url, queue, state: 'caller' });
    t.teardown(() => doc.close());
    await doc([5, 5, 5]);
    t.same(weft.tolist(doc.shared[0]!.getValue()), [7, 8, 9], 'a document\'s state starts at its stored values');
  });

  t.test('SIGTERM: the worker finishes the call in flight, then exits', async (t) => {
    const queue = freshQueue('sigterm');
    const a = pt.matrix('a');
    // About a second of work on one thread: six products of 600 x 600 float64 matrices.
    let y = a;
    for (let i = 0; i < 6; i++) y = pt.tanh(y.dot(a).mul(1e-3));
    const slow = await weft.compile([a], y.sum(), { name: 'slow', workers: 0 });
    const worker = await startWorker(redis.url, queue);
    t.teardown(() => stopWorker(worker));
    const remote = await weft.cluster.connect(slow, { connection: redis.url, queue });
    t.teardown(() => remote.close());
    const m = rng(9).normal([600, 600]);
    const call = remote(m);
    const { jobs } = queueOf(t, redis.url, queue);
    await until(async () => (await jobs.getJobCounts('active')).active === 1);
    worker.child.kill('SIGTERM');
    const result = await call;
    t.equal(weft.tolist(result as weft.NdArray), weft.tolist((await slow(m)) as weft.NdArray), 'the call in flight was answered, right value');
    const { signal } = await worker.exited;
    t.equal(signal, 'SIGTERM', 'then the process ended as SIGTERM ends it');
  });

  t.test('the weft command: --help, usage errors and exit codes', async (t) => {
    const help = await runCli(['--help']);
    t.equal(help.code, 0, 'weft --help exits 0');
    t.match(help.out, /worker\s+serve a weft\.cluster queue/, 'lists worker');
    const whelp = await runCli(['worker', '--help']);
    t.equal(whelp.code, 0, 'weft worker --help exits 0');
    t.match(whelp.out, /Usage: weft worker --redis URL --queue NAME/, 'shows worker usage');
    const unknown = await runCli(['frobnicate']);
    t.equal(unknown.code, 2, 'an unknown command exits 2');
    t.match(unknown.err, /^weft: unknown command 'frobnicate'/, 'and says so');
    const missing = await runCli(['worker', '--queue', 'q']);
    t.equal(missing.code, 2, 'a missing --redis exits 2');
    t.match(missing.err, /^weft worker: --redis URL is required/, 'and says what is missing');
    const bad = await runCli(['worker', '--redis', redis.url, '--queue', 'q', '--workers', 'two']);
    t.match(bad.err, /^weft worker: --workers must be a whole number of at least 0, got 'two'/, 'a bad number is named');
    const flag = await runCli(['worker', '--bogus']);
    t.equal(flag.code, 2, 'an unknown flag exits 2');
  });

  t.test('the status line: calls done, per second, in flight', async (t) => {
    const queue = freshQueue('status');
    const worker = await startWorker(redis.url, queue);
    t.teardown(() => stopWorker(worker));
    const f = await denseLayer();
    const remote = await weft.cluster.connect(f, { connection: redis.url, queue });
    t.teardown(() => remote.close());
    await remote.map(inputs(30, 6).map((x) => [x]));
    await until(async () => /: 30 calls done, \d+\/s, 0 in flight, 0 failed/.test(worker.output()), 5000);
    t.match(worker.output(), /weft worker \d+: 30 calls done, \d+\/s, 0 in flight, 0 failed/, 'a status line counts the calls');
  });
}

/** A BullMQ queue of its own on `queue` (to look into it, or add jobs by hand), closed at the end of `t`. */
function queueOf(t: Test, url: string, queue: string): { readonly client: Redis; readonly jobs: Queue } {
  const client = new Redis(url, { maxRetriesPerRequest: null });
  const jobs = new Queue(queue, { connection: client });
  t.teardown(async () => {
    await jobs.close();
    client.disconnect();
  });
  return { client, jobs };
}

async function localError(f: (...a: unknown[]) => Promise<unknown>, args: unknown[]): Promise<Error> {
  try {
    await f(...args);
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected the local call to fail');
}

function runCli(args: readonly string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

async function until(check: () => Promise<boolean>, timeout = 10_000): Promise<void> {
  const end = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The failed reason of a job, once it failed. */
async function waitFailed(jobs: Queue, id: string): Promise<string> {
  let reason: string | undefined;
  await until(async () => {
    // The state first: a job read before it failed has no reason yet.
    if ((await jobs.getJobState(id)) !== 'failed') return false;
    reason = (await jobs.getJob(id))?.failedReason;
    return reason !== undefined;
  });
  return reason!;
}
