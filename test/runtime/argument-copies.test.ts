// Large arguments are copied into a call's region, and large results out of it, by tasks of the
// calling thread (scheduler/plan/argument-copies.ts): chunk by chunk, each chunk linked to the
// tasks that read or write the same elements, so that the workers start on the first chunks while
// the rest is copied. Checked: the plan (which values get copy tasks, the edges one to one, the
// queue order, no hazard), and values through the public API on 0 and 2 workers for plain arrays,
// pool arrays read in place, a mix, strided arguments, an output that is an argument, borrowed
// and released outputs, and a profiled call.
import t from 'tap';
import { buildPlan, COPY_IN_TASK_BYTES, COPY_OUT_TASK_BYTES } from '../../src/scheduler/plan.js';
import { HostValues } from '../../src/scheduler/host-values.js';
import { innerPlanning } from '../../src/scheduler/inner-planner.js';
import { planHazards } from '../../src/scheduler/plan-check.js';
import { TASK_WORK } from '../../src/scheduler/plan/tasks.js';
import { ARGUMENT_COPY_KERNEL } from '../../src/workers/protocol.js';
import { dropKept, keptBytesNow } from '../../src/workers/given-back.js';
import { pt, weft } from '../helpers.js';

/** 8 MiB of float32: copied in and out by tasks, in 16 chunks. */
const N = 1 << 21;
/** 256 KiB of float32: copied before and after the call. */
const SMALL = 1 << 16;

function filled(Storage: Float32ArrayConstructor | Float64ArrayConstructor, n: number, f: (k: number) => number): Float32Array | Float64Array {
  const a = new Storage(n);
  for (let k = 0; k < n; k++) a[k] = f(k);
  return a;
}

function wrongElements(data: ArrayLike<number>, want: (k: number) => number): number {
  let wrong = 0;
  for (let k = 0; k < data.length; k++) if (data[k] !== want(k)) wrong += 1;
  return wrong;
}

t.test('the plan copies large arguments and results by calling-thread tasks, linked chunk to chunk', async (t) => {
  t.ok(4 * N >= COPY_OUT_TASK_BYTES && COPY_OUT_TASK_BYTES >= COPY_IN_TASK_BYTES && 4 * SMALL < COPY_IN_TASK_BYTES, 'N float32 values are copied in and out by tasks, SMALL ones are not');
  const x = pt.vector('x', 'float32');
  const y = pt.vector('y', 'float32');
  const b = pt.vector('b', 'float32');
  const fg = new weft.FunctionGraph([x, y, b], [x.mul(y), x, b.mul(2)]);
  const values = [weft.ndarray(new Float32Array(N)), weft.ndarray(new Float32Array(N)), weft.ndarray(new Float32Array(SMALL))];
  const plan = buildPlan(fg, values, new HostValues(fg), 1, innerPlanning, { argumentCopies: {} });
  const d = plan.descriptor;
  t.same([...plan.copies.inputs.keys()], [0, 1], 'arguments x and y are copied by tasks; b (small) before the call');
  t.same([...plan.copies.outputs.keys()], [0, 1], 'x * y and x (an argument returned as it is) are copied out by tasks; b * 2 (small) after the call');
  t.same(planHazards(d), [], 'no two tasks that may run at once touch the same bytes');

  const copyCalls = d.calls.flatMap((c, i) => (c.kernel === ARGUMENT_COPY_KERNEL ? [i] : []));
  t.equal(copyCalls.length, 4, 'one copy call per copied value');
  t.ok(copyCalls.every((i) => d.calls[i]!.main), 'copies are calling-thread calls (no worker runs them)');
  const chunks = N / TASK_WORK;
  const tasksOf = (call: number): number[] => d.tasks.flatMap((task, i) => (task.call === call ? [i] : []));
  const [inX, inY, outXY, outX] = copyCalls.map(tasksOf) as [number[], number[], number[], number[]];
  t.equal(inX.length, chunks, `the copy of x in ${chunks} chunks of TASK_WORK elements, as an element-wise call over it`);
  t.equal(outXY.length, chunks, 'and the copy of x * y out');
  t.same(
    d.initialMainReady.slice(0, 4),
    [inX[0], inY[0], inX[1], inY[1]],
    'the calling thread copies chunk 0 of every argument first, then chunk 1, ...',
  );
  t.same(
    d.initialReady.map((task) => d.calls[d.tasks[task]!.call]!.inputs[0]),
    d.initialReady.map(() => d.calls.find((c) => c.label.startsWith('Elemwise{mul}(b'))!.inputs[0]),
    'the worker tasks ready at once are b * 2\'s: none reads x or y before its copy',
  );

  const predecessors = (task: number): number[] => d.tasks.flatMap((other, i) => (other.successors.includes(task) ? [i] : []));
  const mul = d.calls.findIndex((c) => c.label.startsWith('Elemwise{mul}(x, y)'));
  const range = (task: number): [number, number] => [d.tasks[task]!.start, d.tasks[task]!.end];
  for (const m of tasksOf(mul)) {
    const before = predecessors(m);
    t.same(before.map(range), [range(m), range(m)], `x * y chunk ${range(m)} waits for the same chunk of x and of y, and nothing else`);
  }
  for (const o of outXY) t.same(predecessors(o).map((p) => d.tasks[p]!.call), [mul], `copy out of chunk ${range(o)} waits for the product's chunk only`);
  for (const o of outX) t.same(predecessors(o).map((p) => d.tasks[p]!.call), [copyCalls[0]], `x's copy out waits for x's copy in only`);

  const plain = buildPlan(fg, values, new HostValues(fg), 2, innerPlanning);
  t.equal(plain.copies.inputs.size + plain.copies.outputs.size, 0, 'without the option (inner plans) there are no copies');
  const product = new weft.FunctionGraph([x, y], [x.mul(y)]);
  const widths = [{}, { argumentCopies: {} }].map((options, id) => buildPlan(product, values.slice(0, 2), new HostValues(product), 10 + id, innerPlanning, options).width);
  t.same(widths, [chunks, chunks], 'the copies do not count in the plan width (no worker runs them)');

  const borrowed = buildPlan(fg, values, new HostValues(fg), 3, innerPlanning, { argumentCopies: { borrowedOutputs: [true, false, false] } });
  t.same([...borrowed.copies.outputs.keys()], [1], 'a borrowed output is not copied out');
  t.same(planHazards(borrowed.descriptor), []);
});

t.test('values through copy tasks on 0 and 2 workers: plain arrays, pool arrays, a mix, strided arguments', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  for (const dtype of ['float32', 'float64'] as const) {
    const Storage = dtype === 'float32' ? Float32Array : Float64Array;
    const x = pt.vector('x', dtype);
    const y = pt.vector('y', dtype);
    const xs = filled(Storage, N, (k) => (k % 1000) / 8);
    const ys = filled(Storage, N, (k) => 3 - (k % 7));
    const want = (k: number): number => xs[k]! * ys[k]! + 1;
    const bits: Array<Float32Array | Float64Array> = [];
    for (const workers of [0, 2]) {
      const fn = await weft.compile([x, y], [x.mul(y).add(1), x], { pool, workers });
      const what = `${dtype}, ${workers} workers`;
      for (const [label, args] of [
        ['plain arrays', [xs, ys]],
        ['pool arrays (read in place)', [pool.from(xs), pool.from(ys)]],
        ['a pool array and a plain one', [pool.from(xs), ys]],
      ] as const) {
        const [z, same] = (await fn(...args)) as weft.NdArray[];
        t.equal(wrongElements(z!.data, want), 0, `${what}, ${label}: every element of x * y + 1`);
        t.equal(wrongElements(same!.data, (k) => xs[k]!), 0, `${what}, ${label}: the argument returned as it is`);
        if (label === 'plain arrays') bits.push(z!.data as Float32Array | Float64Array);
      }
      fn.dispose();
    }
    // Counted in a loop: t.same on 16 MiB of bytes took most of a minute.
    const [inline, team] = bits.map((b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
    t.equal(team!.length, inline!.length);
    t.equal(wrongElements(team!, (k) => inline![k]!), 0, `${dtype}: the same bits on 0 and 2 workers`);
  }

  // A strided argument (a transposed matrix) is copied before the call, the contiguous one by tasks.
  const R = 512;
  const C = 1024;
  const m = pt.matrix('m', 'float32');
  const v = pt.matrix('v', 'float32');
  const fn = await weft.compile([m, v], m.mul(2).add(v), { pool, workers: 2 });
  const storage = filled(Float32Array, R * C, (k) => k % 4096);
  const transposed = weft.ndarray(storage, [R, C], [1, R]);
  const vs = filled(Float32Array, R * C, (k) => -(k % 13));
  const out = (await fn(transposed, weft.ndarray(vs, [R, C]))) as weft.NdArray;
  t.equal(wrongElements(out.data, (k) => 2 * storage[(k % C) * R + Math.floor(k / C)]! + vs[k]!), 0, 'a transposed argument beside a contiguous one: every element');
  fn.dispose();
});

t.test('outputs copied out by tasks: released memory is reused, borrowed outputs stay views, profiles keep copies apart from nodes', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  dropKept();
  const x = pt.vector('x', 'float32');
  const fn = await weft.compile([x], x.mul(3), { pool, workers: 2 });
  const call = async (i: number) => (await fn(filled(Float32Array, N, (k) => k + i))) as weft.NdArray;
  // The first output of this size is written by the workers into memory of its own; released,
  // it makes later outputs of its size copies (by tasks) into memory release can take.
  const first = await call(0);
  t.equal(wrongElements(first.data, (k) => 3 * k), 0, 'an output the workers wrote into memory of its own (its copy tasks copy nothing): every element');
  weft.release(first);
  const second = await call(1);
  t.equal(wrongElements(second.data, (k) => 3 * (k + 1)), 0, 'the first copied-out output: every element');
  const bytes = weft.release(second);
  t.equal(bytes, 4 * N, 'a copied-out output is memory release takes back');
  for (let i = 2; i <= 4; i++) {
    const out = await call(i);
    t.equal(keptBytesNow(), 0, `call ${i}: the copy tasks wrote into the given-back memory`);
    t.equal(wrongElements(out.data, (k) => 3 * (k + i)), 0, `call ${i}: every element is this call's`);
    weft.release(out);
  }
  fn.dispose();
  dropKept();

  const lent = await weft.compile([x], weft.Out(x.mul(3), { borrow: true }), { pool, workers: 2 });
  const view = (await lent(filled(Float32Array, N, (k) => k))) as weft.NdArray;
  t.equal(wrongElements(view.data, (k) => 3 * k), 0, 'a borrowed output: every element');
  t.ok(view.data.buffer instanceof SharedArrayBuffer, 'a borrowed output is a view of the region, not a copy');
  lent.dispose();

  const profiled = await weft.compile([x], x.mul(3).add(x), { pool, workers: 2, profile: true });
  const out = (await profiled(filled(Float32Array, N, (k) => k))) as weft.NdArray;
  t.equal(wrongElements(out.data, (k) => 4 * k), 0, 'a profiled call: every element');
  const events = profiled.profile!.events;
  t.ok(events.length > 0 && events.every((e) => e.node !== undefined && profiled.fgraph.toposort().includes(e.node)), 'its node events are the graph\'s nodes (copies are not nodes)');
  const copies = profiled.profile!.copies;
  const plan = profiled.planInfo(filled(Float32Array, N, (k) => k));
  t.ok(copies.length > 1, `its copy tasks are recorded apart (${copies.length})`);
  const labels = ['copy of argument 0 into the region', 'copy of output 0 out of the region'];
  t.ok(copies.every((c) => c.thread === 0 && c.call === 0 && labels.includes(c.label) && c.duration >= 0), 'on the calling thread, named by what they copy');
  t.same(new Set(copies.map((c) => c.label)), new Set(labels), 'the argument\'s copy in and the result\'s copy out (8 MiB)');
  t.ok(copies.length + events.length <= plan.tasks, 'no more events than the plan has tasks');
  const trace = JSON.parse(profiled.profile!.toChromeTrace()) as { traceEvents: Array<{ cat?: string; tid?: number; args?: { copy?: string } }> };
  t.equal(trace.traceEvents.filter((e) => e.cat === 'copy').length, copies.length, 'the Chrome trace has them, on the calling thread');
  t.ok(trace.traceEvents.filter((e) => e.cat === 'copy').every((e) => e.tid === 0 && labels.includes(e.args?.copy ?? '')));
  const svg = profiled.profile!.toSvgTimeline();
  t.equal(svg.split('class="task copy"').length - 1, copies.length, 'the SVG timeline draws a bar for each');
  t.match(String(profiled.profile), /copies of large arguments and results: [\d.]+ ms in \d+ tasks/, 'the summary counts them');
  profiled.dispose();
});

t.test('a borrowed output passed back in is copied before any task runs (the tasks would overwrite it)', async (t) => {
  // fn(p, b2) gets p, a view of the region that this call's own tasks write (output 0): copied
  // by chunks beside the tasks, p would be overwritten before its last chunks were copied.
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const a = pt.vector('a', 'float32');
  const b = pt.vector('b', 'float32');
  const fn = await weft.compile([a, b], [weft.Out(b.get(weft.slice(0, N)).mul(2), { borrow: true }), a.add(1)], { pool, workers: 2 });
  for (let round = 0; round < 6; round++) {
    const [p] = (await fn(filled(Float32Array, N, () => 0), filled(Float32Array, 2 * N, (k) => (k + round) % 1000))) as weft.NdArray[];
    const [, s] = (await fn(p!, filled(Float32Array, 2 * N, () => -7))) as weft.NdArray[];
    t.equal(wrongElements(s!.data, (k) => 2 * ((k + round) % 1000) + 1), 0, `round ${round}: p + 1 has the borrowed output's values, not the call's own`);
  }
});

t.test('concurrent calls with plain arrays each get their own values', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.vector('x', 'float32');
  const y = pt.vector('y', 'float32');
  const fn = await weft.compile([x, y], x.mul(y).add(x), { pool, workers: 2 });
  const calls = Array.from({ length: 6 }, (_, i) => fn(filled(Float32Array, N, (k) => (k % 100) + i), filled(Float32Array, N, () => i + 1)));
  const outs = (await Promise.all(calls)) as weft.NdArray[];
  outs.forEach((out, i) => t.equal(wrongElements(out.data, (k) => ((k % 100) + i) * (i + 2)), 0, `call ${i}: every element is its own`));
});
