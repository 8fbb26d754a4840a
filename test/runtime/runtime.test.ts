// The worker runtime through the public API: equal bits for any number of workers, faults that
// reject one call and leave the pool usable, aborts, concurrency, flat memory, and plans that
// are free of hazards.
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import t, { type Test } from 'tap';
import { Apply } from '../../src/graph/apply.js';
import type { TensorView } from '../../src/kernels/view.js';
import { planHazards } from '../../src/scheduler/plan-check.js';
import { PlannedExecutor } from '../../src/scheduler/planned-executor.js';
import { copyArray } from '../../src/tensor/core/ndarray.js';
import { near, pt, rng, weft } from '../helpers.js';
import { FaultOp, faultKernels } from './fault-op.js';

const BIG = 1 << 16;

/** The error a call rejects with (a call that succeeds fails the test). */
function rejection(call: Promise<unknown>): Promise<Error> {
  return call.then(
    () => {
      throw new Error('the call was expected to fail');
    },
    (e: unknown) => e as Error,
  );
}

function sameBits(t: Test, a: weft.NdArray, b: weft.NdArray, msg: string): void {
  t.same(a.shape, b.shape, `${msg}: shape`);
  const x = new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength);
  const y = new Uint8Array(b.data.buffer, b.data.byteOffset, b.data.byteLength);
  t.ok(x.length === y.length && x.every((v, i) => v === y[i]), `${msg}: same bits`);
}

t.test('large outputs are written straight into memory the caller owns, with the same bits', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.vector('x', 'float32');
  // Element-wise work without a WebAssembly form (gammaln): outputs with one stay in the arena
  // for it to run there (checked at the end).
  const sp = pt.special;
  const big = sp.gammaln(x.exp()).add(1);
  const out = [big, big, x.get(weft.slice(1, null)), x.sum(), sp.gammaln(x.add(2)).mul(3)];
  const value = rng(31).uniform([1 << 19], { low: -1, high: 1, dtype: 'float32' });
  const fn = await weft.compile([x], out, { pool, workers: 2 });
  const reference = await weft.compile([x], out, { workers: 0 });
  const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
  t.same(executor.planFor([value]).plan.descriptor.movableOutputs.map((m) => m.output), [0, 1, 2, 3, 4], 'compile gives each output a buffer of its own');
  // An output that shares its buffer with another, or that is a view of an input, is copied out.
  const z = sp.gammaln(x.add(2)).mul(3);
  const movable = (outputs: weft.pt.TensorVariable[]): number[] =>
    new PlannedExecutor(new weft.FunctionGraph([x], outputs, { clone: false }), () => pool, { workers: 2 })
      .planFor([value])
      .plan.descriptor.movableOutputs.map((m) => m.output);
  t.same(movable([z, z, x.get(weft.slice(1, null)), sp.gammaln(x)]), [3]);
  t.same(movable([x.exp(), x.mul(3), sp.gammaln(x)]), [2], 'outputs of WebAssembly programs stay in the arena');
  const single = await weft.compile([x], [big, z], { pool, workers: 2 });
  t.same(new PlannedExecutor(single.fgraph, () => pool, { workers: 2 }).planFor([value]).plan.descriptor.movableOutputs.map((m) => m.output), [0, 1]);
  const [a, b] = await Promise.all([single(value), single(value)]);
  const want = await reference(value);
  const [r0, r1] = [want[0]!, want[4]!];
  for (const [got, want, name] of [[a![0]!, r0!, 'gammaln(exp(x)) + 1'], [a![1]!, r1!, 'gammaln(x + 2) * 3'], [b![0]!, r0!, 'gammaln(exp(x)) + 1, second call']] as const) {
    sameBits(t, got, want, name);
    t.equal(got.data.buffer.constructor.name, 'SharedArrayBuffer', `${name}: written by the workers in place`);
    t.equal(got.data.length, 1 << 19, `${name}: the array covers its buffer`);
  }
  t.not(a![0]!.data.buffer, b![0]!.data.buffer, 'concurrent calls get buffers of their own');
  t.equal(r0!.data.buffer.constructor.name, 'ArrayBuffer', 'on the calling thread alone the memory is plain');
  const all = await fn(value);
  all.forEach((v, j) => sameBits(t, v, want[j]!, `output ${j}`));
  all[0]!.data[0] = 123;
  t.not(all[1]!.data[0], 123, 'an output given twice comes as two arrays');
  const after = await fn(value);
  sameBits(t, after[4]!, want[4]!, 'a later call does not touch the arrays handed over');
  t.equal(all[4]!.data[1], want[4]!.data[1]);
});

t.test('results are bitwise equal on 0, 1, 2 and 3 workers, and close to the reference', async (t) => {
  const pool = weft.createPool({ workers: 3 });
  t.teardown(() => pool.close());
  const x = pt.matrix('x', 'float32');
  const w = pt.matrix('w', 'float32');
  const b = pt.vector('b', 'float32');
  const h = pt.tanh(x.dot(w).add(b));
  const out = [h.sum({ axis: 1 }), pt.softmax(h).max({ axis: 0 }), h.exp().mul(2).sub(h.sqr())];
  const r = rng(5);
  const values = [r.normal([300, 200], { dtype: 'float32' }), r.normal([200, 256], { dtype: 'float32' }), r.normal([256], { dtype: 'float32' })] as const;
  const results: weft.NdArray[][] = [];
  for (const workers of [0, 1, 2, 3]) {
    const fn = await weft.compile([x, w, b], out, { workers, pool });
    results.push(await fn(...values));
    results.push(await fn(...values));
  }
  const reference = await (await weft.compile([x, w, b], out, { mode: 'FAST_COMPILE', workers: 0 }))(...values);
  for (let k = 1; k < results.length; k++) results[k]!.forEach((v, j) => sameBits(t, v, results[0]![j]!, `run ${k} output ${j}`));
  results[0]!.forEach((v, j) => near(t, v, weft.tolist(reference[j]!) as never, 1e-4, `output ${j} vs reference`));
});

t.test('plans are free of hazards', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const a = x.exp().add(y);
  const b = a.T.mul(2).dot(a);
  const c = pt.concatenate([a, a.mul(3)], 1).sum({ axis: 0 });
  const fn = await weft.compile([x, y], [b, c, a.get(weft.slice(1, null)).tanh()], { pool });
  const r = rng(2);
  const values = [r.normal([300, 400]), r.normal([300, 400])] as const;
  await fn(...values);
  const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
  const { plan } = executor.planFor(values);
  t.ok(plan.descriptor.tasks.length > 3, `${plan.descriptor.tasks.length} tasks`);
  t.same(planHazards(plan.descriptor), []);
});

t.test('a kernel that throws rejects the call with the node; the next call works', async (t) => {
  const pool = weft.createPool({ workers: 2, kernelModules: [faultKernels] });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const s = weft.shared([1, 2, 3], { name: 's' });
  const bad = await weft.compile([x], new FaultOp('test.throw').call(x.mul(2)).sum(), { pool, updates: [[s, s.add(1)]] });
  const good = await weft.compile([x], x.mul(2).sum(), { pool });
  const big = new Float64Array(BIG).fill(1);
  await t.rejects(bad(big), { name: 'NodeError', message: /^boom from a kernel\n {2}in node \d+: FaultOp\{kernelName=test\.throw, ms=0\}\(/ });
  t.same(weft.tolist(s.getValue()), [1, 2, 3], 'the shared variable kept its value');
  t.equal(weft.tolist(await good(big)), 2 * BIG, 'the pool still works');
});

t.test('a worker that dies rejects its call; the pool replaces it', async (t) => {
  const pool = weft.createPool({ workers: 2, kernelModules: [faultKernels] });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const s = weft.shared([1, 2, 3], { name: 's' });
  const dies = await weft.compile([x], new FaultOp('test.exit').call(x).sum(), { pool, updates: [[s, s.add(1)]], name: 'dies' });
  const good = await weft.compile([x], x.mul(3).sum(), { pool });
  const big = new Float64Array(BIG).fill(1);
  const error = await rejection(dies(big));
  t.equal(error.name, 'NodeError');
  t.match(error.message, /^function 'dies': a worker thread died while it ran this node's kernel: .*\n {2}in node \d+: FaultOp\{kernelName=test\.exit, ms=0\}\(/);
  t.match(String((error.cause as Error).cause), /exit/i, "the thread's own error is the cause's cause");
  t.same(weft.tolist(s.getValue()), [1, 2, 3], 'the shared variable kept its value');
  for (let i = 0; i < 4; i++) t.equal(weft.tolist(await good(big)), 3 * BIG, `call ${i} after the crash works`);
});

t.test('a worker out of memory (resource limits) rejects its call; the next call works', async (t) => {
  const pool = weft.createPool({ workers: 1, kernelModules: [faultKernels], resourceLimits: { maxOldGenerationSizeMb: 48 } });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const hog = await weft.compile([x], new FaultOp('test.hog').call(x).sum(), { pool });
  const good = await weft.compile([x], x.sum(), { pool });
  const big = new Float64Array(BIG).fill(1);
  await t.rejects(hog(big), { name: 'NodeError', message: /^the function: a worker thread died while it ran this node's kernel: .*\n {2}in node \d+: FaultOp\{kernelName=test\.hog/ });
  t.equal(weft.tolist(await good(big)), BIG);
});

t.test('AbortSignal: a running call stops between tasks, a queued call is dropped', async (t) => {
  const pool = weft.createPool({ workers: 1, kernelModules: [faultKernels] });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const s = weft.shared([0], { name: 's' });
  let chain = x;
  // Fifty tasks of 40 ms: each waits on the clock, so a call run to its end takes 2 s of wall time
  // however loaded the machine is, and an abort at 60 ms ends it after the task under way. The
  // bound is that 2 s: a loaded CI run once took 700 ms to stop (and over 320 ms before that).
  const TASKS = 50;
  for (let i = 0; i < TASKS; i++) chain = new FaultOp('test.slow', 40).call(chain);
  const slow = await weft.compile([x], chain.sum(), { pool, updates: [[s, s.add(1)]] });
  const big = new Float64Array(BIG).fill(1);
  const running = new AbortController();
  const started = performance.now();
  const first = slow(big, { signal: running.signal });
  const queued = new AbortController();
  const second = slow(big, { signal: queued.signal });
  const why = new Error('the user pressed stop');
  setTimeout(() => running.abort(why), 60);
  queued.abort();
  const [firstError, secondError] = await Promise.all([rejection(first), rejection(second)]);
  t.equal(secondError.name, 'AbortError');
  t.equal((secondError.cause as Error).name, 'AbortError', "the signal's reason (abort() without one: a DOMException) is the cause");
  t.equal(firstError.name, 'AbortError');
  t.equal(firstError.cause, why, "the signal's reason is the error's cause");
  const stoppedAfter = performance.now() - started;
  t.ok(stoppedAfter < TASKS * 40, `the running call stopped before its remaining tasks (after ${stoppedAfter.toFixed(0)} ms)`);
  t.same(weft.tolist(s.getValue()), [0], 'no update was applied');
  t.equal(weft.tolist(await slow(big)), BIG, 'the function still works');
  t.same(weft.tolist(s.getValue()), [1]);
});

t.test('100 concurrent calls of one function give the right results', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const fn = await weft.compile([x], x.mul(x).sum(), { pool });
  const inputs = Array.from({ length: 100 }, (_, i) => new Float64Array(BIG).fill(i));
  const results = await Promise.all(inputs.map((v) => fn(v)));
  t.ok(results.every((r, i) => weft.tolist(r) === i * i * BIG));
});

t.test('memory stays flat over 10k calls', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const fn = await weft.compile([x], x.exp().add(1).sum(), { pool });
  const big = new Float64Array(BIG).fill(0.5);
  for (let i = 0; i < 50; i++) await fn(big);
  const arena = pool.arena.byteLength;
  // A real collection before each reading (tap does not start node with --expose-gc): without
  // it the heap holds whatever garbage the collector has not reached yet, and the check flaked.
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  const heap = process.memoryUsage().heapUsed;
  for (let i = 0; i < 10_000; i++) await fn(big);
  gc();
  t.equal(pool.arena.byteLength, arena, 'the arena did not grow');
  const grown = process.memoryUsage().heapUsed - heap;
  t.ok(grown < 8 << 20, `the heap kept no more than 8 MB after 10k calls (${(grown / 2 ** 20).toFixed(2)} MB)`);
});

/** An op with no worker kernel: its perform runs on the calling thread, as a task of the plan. */
class Halve extends weft.Op {
  calls = 0;
  constructor(readonly fail = false) {
    super();
  }
  override makeNode(x: unknown): Apply {
    const v = pt.asTensorVariable(x as weft.pt.TensorVariable);
    return new Apply(this, [v], [v.type.makeVariable()]);
  }
  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }
  override perform(_node: Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    this.calls += 1;
    if (this.fail) throw new Error('the closure failed');
    const out = copyArray(x!);
    for (let i = 0; i < out.data.length; i++) out.data[i] = out.data[i]! / 2;
    return [out];
  }
}

t.test('ops without a worker kernel run on the calling thread inside the plan', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const halve = new Halve();
  const a = x.exp();
  const b = halve.call(a);
  const out = b.sum().add(a.mul(3).sum());
  const values = [rng(3).normal([BIG])] as const;
  const expected = Array.from(values[0]!.data as Float64Array).reduce((s, v) => s + Math.exp(v) / 2 + 3 * Math.exp(v), 0);
  for (const workers of [0, 2]) {
    const fn = await weft.compile([x], out, { pool, workers, profile: true });
    t.equal(fn.profile!.fallback, undefined, 'no fallback to the reference executor');
    const r = weft.tolist(await fn(...values)) as number;
    t.ok(Math.abs(r - expected) < 1e-6 * Math.abs(expected), `workers ${workers}: ${r} vs ${expected}`);
    t.ok(fn.profile!.events.some((e) => e.node.op === halve && e.thread === 0), 'the closure ran on the calling thread');
  }
  t.ok(halve.calls >= 2);
  const failing = await weft.compile([x], new Halve(true).call(x.exp()).sum(), { pool, workers: 2 });
  await t.rejects(failing(...values), { name: 'NodeError', message: /^the closure failed\n {2}in node \d+: Halve\(/ });
});

t.test('reductions to a few elements run as partials combined in a fixed order', async (t) => {
  const pool = weft.createPool({ workers: 3 });
  t.teardown(() => pool.close());
  const x = pt.matrix('x');
  const outs = [x.sum(), x.max(), x.min({ axis: [0, 1] }), x.prod({ axis: 0 }).sum(), x.gt(0).any(), x.gt(-10).all(), x.mean({ axis: 0 })];
  const values = [rng(9).uniform([1024, 600], { low: -1, high: 1 })] as const;
  const results: weft.NdArray[][] = [];
  for (const workers of [0, 1, 2, 3]) {
    const fn = await weft.compile([x], outs, { pool, workers });
    results.push(await fn(...values));
  }
  for (let k = 1; k < results.length; k++) results[k]!.forEach((v, j) => sameBits(t, v, results[0]![j]!, `workers run ${k}, output ${j}`));
  const flat = Array.from(values[0]!.data as Float64Array);
  near(t, results[0]![0]!, flat.reduce((a, b) => a + b, 0), 1e-10, 'sum');
  near(t, results[0]![1]!, flat.reduce((a, b) => Math.max(a, b)), 0, 'max');
  near(t, results[0]![2]!, flat.reduce((a, b) => Math.min(a, b)), 0, 'min');
  const fn = await weft.compile([x], x.sum(), { pool });
  const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 3 });
  const { plan } = executor.planFor(values);
  t.ok(plan.descriptor.tasks.length > 2, `the sum is ${plan.descriptor.tasks.length} tasks`);
  t.same(planHazards(plan.descriptor), []);
});

t.test("workers: 0 with a pool: every call on the calling thread, in the pool's memory (its arrays read in place)", async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.matrix('x');
  const z = x.exp().sum({ axis: 1 });
  const value = rng(3).normal([400, 400]);
  const fn = await weft.compile([x], z, { pool, workers: 0, profile: true });
  const want = await (await weft.compile([x], z, { workers: 0 }))(value);
  sameBits(t, await fn(pool.from(value)), want, 'the bits of a function without a pool');
  t.same([...new Set(fn.profile!.events.map((e) => e.thread))], [0], 'no worker ran a task');
  const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 0 });
  t.equal(executor.arena, pool.arena, "the plans live in the pool's arena");
  t.not(new PlannedExecutor(fn.fgraph, undefined, { workers: 0 }).arena, pool.arena, 'without a pool, in an arena of their own');
});

t.test("inputs in the pool's shared memory are read in place, with the same results", async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const out = [x.mul(y).add(x.T.dot(y).sum()), x.get(weft.slice(1, null)).exp().sum({ axis: 1 })];
  const r = rng(12);
  const plain = [r.normal([300, 300]), r.normal([300, 300])] as const;
  const shared = plain.map((v) => pool.from(v)) as [weft.NdArray, weft.NdArray];
  t.equal(shared[0]!.data.buffer.constructor.name, 'SharedArrayBuffer');
  const fn = await weft.compile([x, y], out, { pool, profile: true });
  const a = await fn(...plain);
  const b = await fn(...shared);
  a.forEach((v, j) => sameBits(t, b[j]!, v, `output ${j}`));
  const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
  t.same(executor.planFor(plain).plan.descriptor.relocatable.map((e) => e.input), [0, 1], 'both inputs may be read in place');
  // An input that a node overwrites is copied: the caller's array stays as it was.
  const m = pt.matrix('m');
  const inplace = await weft.compile([weft.In(m, { mutable: true })], m.exp().add(1), { pool });
  const data = pool.from(plain[0]!);
  const before = Array.from(data.data);
  near(t, await inplace(data), (weft.tolist(plain[0]!) as number[][]).map((row) => row.map((v) => Math.exp(v) + 1)), 1e-12);
  t.same(Array.from(data.data), before, 'the caller array is unchanged');
  const blank = pool.array([2, 3], { dtype: 'float32' });
  t.same(weft.tolist(blank), [[0, 0, 0], [0, 0, 0]]);
  t.equal(blank.data.constructor.name, 'Float32Array');
});
