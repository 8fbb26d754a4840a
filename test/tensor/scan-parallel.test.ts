// A Scan's steps on the team (workers/nested-team.ts): a step with work enough runs its tasks in a
// nested region that idle members help with, steps in order. Equal bits on 0-3 workers, the cost
// model's threshold (small steps stay on one member, and the plan asks for no more), failures
// and aborts inside a shared step, and the profile showing the loop's work on several threads.
import t from 'tap';
import { ScanOp } from '../../src/tensor/inner/scan-op.js';
import { NESTED_TEAM_WORK, teamHelps } from '../../src/workers/nested-team.js';
import { FaultOp, faultKernels } from '../runtime/fault-op.js';
import { pt, rng, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;

const bitsOf = (a: weft.NdArray): Buffer => Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength);

/** A tanh RNN over x [T, batch, input]: its loss (the last state's squares summed) and the gradients of its weights. */
function rnn(dtype: 'float32' | 'float64') {
  const x = pt.tensor3('x', dtype);
  const h0 = pt.matrix('h0', dtype);
  const wx = pt.matrix('wx', dtype);
  const wh = pt.matrix('wh', dtype);
  const b = pt.vector('b', dtype);
  const { outputs: hs } = weft.scan({
    fn: (xt: TV, h: TV, wxs: TV, whs: TV, bs: TV) => pt.tanh(xt.dot(wxs).add(h.dot(whs)).add(bs)),
    sequences: [x],
    outputsInfo: [h0],
    nonSequences: [wx, wh, b],
    name: 'rnn',
  });
  const loss = hs.get(-1).sqr().sum();
  return { inputs: [x, h0, wx, wh, b], outputs: [loss, hs, ...weft.grad(loss, [wx, wh, b, h0])] };
}

function rnnValues(dtype: 'float32' | 'float64', steps: number, batch: number, input: number, hidden: number, seed: number) {
  const r = rng(seed);
  const scale = (a: weft.NdArray, s: number): weft.NdArray => {
    for (let i = 0; i < a.data.length; i++) a.data[i] = a.data[i]! * s;
    return a;
  };
  return [
    r.normal([steps, batch, input], { dtype }),
    r.normal([batch, hidden], { dtype }),
    scale(r.normal([input, hidden], { dtype }), 1 / Math.sqrt(input)),
    scale(r.normal([hidden, hidden], { dtype }), 1 / Math.sqrt(hidden)),
    r.normal([hidden], { dtype }),
  ] as const;
}

t.test('a tanh RNN forward and BPTT: equal bits on 0, 1, 2 and 3 workers, and the steps use two workers', async (t) => {
  t.setTimeout(240_000);
  for (const dtype of ['float32', 'float64'] as const) {
    const { inputs, outputs } = rnn(dtype);
    // batch 64, hidden 256: each step's h . wh is 4M multiply-adds, two tasks of columns.
    const values = rnnValues(dtype, 6, 64, 32, 256, 3);
    const reference = (await (await weft.compile(inputs, outputs, { workers: 0 }))(...values)) as weft.NdArray[];
    for (const workers of [1, 2, 3]) {
      const pool = weft.createPool({ workers });
      const fn = await weft.compile(inputs, outputs, { pool, workers, profile: true });
      const info = fn.planInfo(...values);
      t.ok(info.width >= 2, `${dtype}, ${workers} workers: the plan asks for ${info.width} members (the steps' tasks)`);
      let threads = new Set<number>();
      // Which member takes a step's task depends on wake-up timing: a few calls show the spread.
      for (let call = 0; call < 6; call++) {
        const got = (await fn(...values)) as weft.NdArray[];
        got.forEach((g, i) => t.ok(bitsOf(g).equals(bitsOf(reference[i]!)), `${dtype}, ${workers} workers, call ${call}: output ${i} has the bits of the inline call`));
        threads = new Set(fn.profile!.events.filter((e) => e.node.op instanceof ScanOp).map((e) => e.thread));
        if (workers === 1 || threads.size >= 2) break;
      }
      if (workers > 1) t.ok(threads.size >= 2, `${dtype}, ${workers} workers: the loops' tasks ran on threads ${[...threads].join(', ')}`);
      await pool.close();
    }
  }
  // The values themselves: the loss against a loop written out here.
  const values = rnnValues('float64', 3, 2, 3, 4, 5);
  const { inputs, outputs } = rnn('float64');
  const [loss] = (await (await weft.compile(inputs, outputs.slice(0, 1), { workers: 0 }))(...values)) as weft.NdArray[];
  const [xs, h0, wx, wh, b] = values.map((v) => v.data);
  let h = Array.from(h0);
  for (let s = 0; s < 3; s++) {
    const next: number[] = [];
    for (let i = 0; i < 2; i++) {
      for (let j = 0; j < 4; j++) {
        let a = b[j]!;
        for (let k = 0; k < 3; k++) a += xs[s * 6 + i * 3 + k]! * wx[k * 4 + j]!;
        for (let k = 0; k < 4; k++) a += h[i * 4 + k]! * wh[k * 4 + j]!;
        next.push(Math.tanh(a));
      }
    }
    h = next;
  }
  const want = h.reduce((a, v) => a + v * v, 0);
  t.ok(Math.abs(loss!.data[0]! - want) < 1e-12, `the loss is the written-out loop's (${loss!.data[0]} vs ${want})`);
});

t.test('a shared loop over pool arrays read in place, two sets in turn: each call has the bits of its own inputs', async (t) => {
  // A member helping with the steps found the sequences and stacked outputs of the first call
  // it helped with (test/runtime/nested-region.test.ts plays it by hand).
  t.setTimeout(120_000);
  const { inputs, outputs } = rnn('float64');
  const forward = outputs.slice(0, 2);
  const sets = [rnnValues('float64', 6, 64, 32, 256, 7), rnnValues('float64', 6, 64, 32, 256, 8)];
  const inline = await weft.compile(inputs, forward, { workers: 0 });
  const references: weft.NdArray[][] = [];
  for (const values of sets) references.push((await inline(...values)) as weft.NdArray[]);
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const fn = await weft.compile(inputs, forward, { pool, workers: 2 });
  const pooled = sets.map((values) => values.map((v) => pool.from(v)));
  let wrong = 0;
  for (let call = 0; call < 24; call++) {
    const got = (await fn(...pooled[call % 2]!)) as weft.NdArray[];
    if (!got.every((g, i) => bitsOf(g).equals(bitsOf(references[call % 2]![i]!)))) wrong += 1;
  }
  t.equal(wrong, 0, '24 calls, none with another call\'s bits');
});

t.test('the cost model: a step below NESTED_TEAM_WORK, or one task wide, stays on one member', async (t) => {
  t.equal(NESTED_TEAM_WORK, 2 ** 18, 'two tasks of the least work a task carries');
  t.notOk(teamHelps(1, 1e9), 'one task wide: nothing to share');
  t.notOk(teamHelps(8, NESTED_TEAM_WORK - 1), 'too little work per step');
  t.ok(teamHelps(2, NESTED_TEAM_WORK));
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  // A cumulative sum of rows: one small element-wise task per step.
  const x = pt.matrix('x');
  const { outputs } = weft.scan({ fn: (xt: TV, acc: TV) => acc.add(xt), sequences: [x], outputsInfo: [pt.zeros([64])] });
  const small = await weft.compile([x], outputs, { pool, workers: 2 });
  const values = rng(1).normal([2000, 64]);
  const info = small.planInfo(values);
  t.equal(info.width, 1, 'a loop of small steps asks for one member');
  t.equal(info.inline, false, "2000 steps' work goes to the workers");
  const sums = (await small(values)) as weft.NdArray;
  let last = 0;
  for (let s = 0; s < 2000; s++) last += values.data[s * 64 + 5]!;
  t.ok(Math.abs(sums!.data[1999 * 64 + 5]! - last) < 1e-9, 'and it sums');
});

/** A loop whose step runs two slow kernels side by side (each 2^17 elements: work enough to share), one of them `fault`. */
async function faultyLoop(pool: weft.Pool, fault: string) {
  const x = pt.matrix('x');
  const { outputs } = weft.scan({
    fn: (xt: TV) => new FaultOp('test.slow', 30).call(xt).add(new FaultOp(fault, 30).call(xt.mul(2))),
    sequences: [x],
    name: 'faulty',
  });
  const fn = await weft.compile([x], outputs, { pool, workers: 2, name: 'faulty' });
  return { fn, values: rng(2).normal([4, 1 << 17]) };
}

t.test('a kernel that throws inside a shared step rejects the call naming the Scan; the pool still works', async (t) => {
  t.setTimeout(120_000);
  const pool = weft.createPool({ workers: 2, kernelModules: [faultKernels] });
  t.teardown(() => pool.close());
  const { fn, values } = await faultyLoop(pool, 'test.throw');
  t.ok(fn.planInfo(values).width >= 2, 'the step is shared');
  for (let i = 0; i < 3; i++) await t.rejects(fn(values), { name: 'NodeError', message: /^boom from a kernel\n {2}in node \d+: Scan\{faulty\}/ }, `call ${i}`);
  const { fn: good, values: goodValues } = await faultyLoop(pool, 'test.slow');
  const out = (await good(goodValues)) as weft.NdArray;
  t.equal(out!.data[3 * (1 << 17) + 7], goodValues.data[3 * (1 << 17) + 7]! * 3, 'a shared loop on the same pool works after them');
});

t.test('a worker that dies inside a shared step rejects the call naming the Scan; the pool replaces it', async (t) => {
  t.setTimeout(120_000);
  const pool = weft.createPool({ workers: 2, kernelModules: [faultKernels] });
  t.teardown(() => pool.close());
  const { fn, values } = await faultyLoop(pool, 'test.exit');
  const error = await fn(values).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  t.equal(error?.name, 'NodeError');
  t.match(error?.message, /^function 'faulty': a worker thread died while it ran this node's kernel: .*\n {2}in node \d+: Scan\{faulty\}/);
  const { fn: good, values: goodValues } = await faultyLoop(pool, 'test.slow');
  for (let i = 0; i < 2; i++) {
    const out = (await good(goodValues)) as weft.NdArray;
    t.equal(out!.data[5], goodValues.data[5]! * 3, `call ${i} after the crash works`);
  }
});

t.test('an abort in the middle of a shared loop stops it between tasks; the pool still works', async (t) => {
  t.setTimeout(120_000);
  const pool = weft.createPool({ workers: 2, kernelModules: [faultKernels] });
  t.teardown(() => pool.close());
  const x = pt.matrix('x');
  const { outputs } = weft.scan({ fn: (xt: TV) => new FaultOp('test.slow', 20).call(xt).add(new FaultOp('test.slow', 20).call(xt.mul(2))), sequences: [x] });
  const fn = await weft.compile([x], outputs, { pool, workers: 2 });
  const values = rng(3).normal([100, 1 << 17]);
  const running = new AbortController();
  const started = performance.now();
  const call = fn(values, { signal: running.signal });
  const why = new Error('stop');
  setTimeout(() => running.abort(why), 100);
  const error = await call.then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  t.equal(error?.name, 'AbortError');
  t.equal(error?.cause, why);
  const after = performance.now() - started;
  t.ok(after < 100 * 20, `it stopped before the loop's remaining steps (after ${after.toFixed(0)} ms; all of them take 2000 ms or more)`);
  const short = rng(4).normal([2, 1 << 17]);
  const out = (await fn(short)) as weft.NdArray;
  t.equal(out!.data[9], short.data[9]! * 3, 'the next call works');
});
