// The inplace rewrites end to end: which nodes they make inplace (Elemwise, Composite, Gemm,
// IncSubtensor, AllocEmpty) and where they must not; values equal to the graph without them, bit
// for bit, on 0 and 2 workers; no caller-visible array ever changes (inputs, shared values and
// earlier outputs); plans give an overwrite its input's memory and stay free of hazards; and a
// call that fails after an inplace update leaves every shared variable as it was.
import t, { type Test } from 'tap';
import { Apply } from '../../src/graph/apply.js';
import type { TensorView } from '../../src/kernels/view.js';
import { planHazards } from '../../src/scheduler/plan-check.js';
import { PlanError } from '../../src/scheduler/plan.js';
import { PlannedExecutor } from '../../src/scheduler/planned-executor.js';
import { registerKernel } from '../../src/kernels/registry.js';
import { gemm } from '../../src/tensor/linalg/gemm.js';
import { copyArray } from '../../src/tensor/core/ndarray.js';
import { near, pt, rng, throwsExactly, weft } from '../helpers.js';
import { FaultOp, faultKernels } from '../runtime/fault-op.js';

type TV = weft.pt.TensorVariable;
type NdArray = weft.NdArray;

const NO_INPLACE = new weft.Mode({ excluding: ['inplace'] });

/** "op destroyMap" for every node of the compiled graph that overwrites an input. */
function overwrites(fn: weft.CompiledFunction): string[] {
  return fn.fgraph
    .toposort()
    .filter((n) => Object.keys(n.op.destroyMap).length > 0)
    .map((n) => `${n.op} ${JSON.stringify(n.op.destroyMap)}`);
}

function sameBits(t: Test, a: NdArray, b: NdArray, msg: string): void {
  t.same(a.shape, b.shape, `${msg}: shape`);
  const x = new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength);
  const y = new Uint8Array(b.data.buffer, b.data.byteOffset, b.data.byteLength);
  t.ok(x.length === y.length && x.every((v, i) => v === y[i]), `${msg}: same bits`);
}

/** A copy of every array, to check later that nothing wrote into them. */
function snapshotOf(arrays: readonly NdArray[]): NdArray[] {
  return arrays.map((a) => copyArray(a));
}

function unchanged(t: Test, arrays: readonly NdArray[], copies: readonly NdArray[], what: string): void {
  arrays.forEach((a, i) => sameBits(t, a, copies[i]!, `${what} ${i} unchanged`));
}

t.test('the rewrites fire: Elemwise, Composite, Gemm, IncSubtensor, AllocEmpty', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const z = pt.matrix('z');
  const compiled = (outs: TV | TV[], mode?: weft.Mode): Promise<weft.WeftFunction<unknown, [weft.InputValue, weft.InputValue, weft.InputValue]>> =>
    weft.compile([x, y, z], outs as TV, { mode, onUnusedInput: 'ignore', workers: 0 });

  // A fused loop writes into the product it reads; unfused, each node writes into the one before.
  const chain = pt.tanh(x.dot(y)).mul(3).add(z);
  t.same(overwrites(await compiled(chain)), ['Composite{add(mul(tanh(i0),i1),i2),inplace} {"0":[0]}']);
  t.same(overwrites(await compiled(chain, new weft.Mode({ excluding: ['fusion'] }))), [
    'Elemwise{tanh,inplace} {"0":[0]}',
    'Elemwise{mul,inplace} {"0":[0]}',
    'Elemwise{add,inplace} {"0":[0]}',
  ]);
  t.same(overwrites(await compiled(chain, NO_INPLACE)), [], "excluding: ['inplace'] turns them off");

  // IncSubtensor writes into x; an Alloc that a set covers, or that a Gemm with b = 0 ignores,
  // becomes an AllocEmpty that the node then writes into.
  t.same(overwrites(await compiled(pt.setSubtensor(pt.exp(x).get(weft.slice(1, 3)), y))), ['SetSubtensor{start:stop, inplace} {"0":[0]}']);
  t.same(overwrites(await compiled(pt.incSubtensor(pt.exp(x).get(1), y.get(0)))), ['IncSubtensor{i, inplace} {"0":[0]}']);
  const covered = await compiled(pt.setSubtensor(pt.zerosLike(x).get(weft.slice(null)), pt.exp(y)));
  t.same(overwrites(covered), ['SetSubtensor{inplace} {"0":[0]}']);
  t.ok(covered.fgraph.toposort().some((n) => String(n.op) === 'AllocEmpty{dtype=float64}'), 'the covered Alloc is an AllocEmpty');
  const product = await compiled(gemm(pt.zerosLike(x.dot(y)), 2, x, y, 0));
  t.same(overwrites(product), ['Gemm{inplace} {"0":[0]}']);
  t.ok(product.fgraph.toposort().some((n) => String(n.op) === 'AllocEmpty{dtype=float64}'), "a Gemm with b = 0 ignores z's values");
  const zero = await compiled(gemm(pt.zerosLike(x.dot(y)), 2, x, y, 1));
  t.notOk(zero.fgraph.toposort().some((n) => String(n.op).startsWith('AllocEmpty')), 'with b = 1 the zeros are read: no AllocEmpty');

  const [xv, yv, zv] = [rng(1).normal([4, 3]), rng(2).normal([3, 4]), rng(3).normal([4, 4])];
  const prod = await (await weft.compile([x, y], x.dot(y)))(xv, yv);
  const want = weft.tolist(prod) as number[][];
  near(t, (await product(xv, yv, zv)) as NdArray, want.map((r) => r.map((v) => 2 * v)), 1e-12, 'Gemm into AllocEmpty');
  const e = (weft.tolist(yv) as number[][]).map((r) => r.map(Math.exp));
  near(t, (await covered(rng(4).normal([3, 4]), yv, zv)) as NdArray, e, 1e-12, 'set over AllocEmpty');
});

t.test('the rewrites do not fire where they must not', async (t) => {
  const x = pt.matrix('x');
  const v = pt.vector('v');
  const k = pt.matrix('k', 'int32');
  const run = (inputs: Array<TV | weft.FunctionInput>, out: TV | TV[]): Promise<weft.WeftFunction<unknown>> =>
    weft.compile(inputs, out as TV, { onUnusedInput: 'ignore', workers: 0 });

  t.same(overwrites(await run([x], pt.exp(x))), [], 'an input is not mutable');
  t.same(overwrites(await run([weft.In(x, { mutable: true })], pt.exp(x))), ['Elemwise{exp,inplace} {"0":[0]}'], 'a mutable one is');
  const d = x.dot(x);
  t.same(overwrites(await run([x], [pt.sin(d), pt.cos(d)])), [], 'two readers, neither before the other: no ordering is added');
  t.same(overwrites(await run([x], [d, pt.exp(d)])), [], 'a value the function returns');
  // The broadcast operand and the int operand cannot hold the output; the full float one can.
  t.same(overwrites(await run([x, v], pt.add(pt.exp(v).dimshuffle('x', 0), x.dot(x)))), ['Elemwise{add,inplace} {"0":[1]}']);
  t.same(overwrites(await run([x, k], pt.add(k.mul(2), x.dot(x)))), ['Composite{add(mul(i0,i1),i2),inplace} {"0":[2]}']);
  // Small integers of static shape (here the shape of x, times 2, plus 1) are computed while
  // planning and live in every region from its start: never overwritten.
  const host = await run([x], x.sum().add(pt.shape(x).mul(2).add(1).sum()));
  t.same(overwrites(host), ['Elemwise{add,inplace} {"0":[0]}'], 'the Composite over the shape is not inplace');
  near(t, (await host([[1, 2, 3]])) as NdArray, 6 + 3 + 7);
  const s = weft.shared(rng(5).normal([3, 3]), { name: 's' });
  t.same(overwrites(await run([x], pt.exp(s).add(x))), [], 'a shared variable that is not updated');
  const u = weft.shared(rng(6).normal([3, 3]), { name: 'u' });
  const fn = await weft.compile([x], pt.sum(x), { updates: [[u, u.mul(2)]], workers: 0 });
  t.same(overwrites(fn), ['Elemwise{mul,inplace} {"0":[0]}'], 'one that is updated');
});

t.test('inplace graphs give the right values and change no array the caller holds', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const z = pt.matrix('z');
  const r = rng(11);
  const n = 300;
  const values = [r.normal([n, n]), r.normal([n, n]), r.normal([n, n])] as const;
  const other = [r.normal([n, n]), r.normal([n, n]), r.normal([n, n])] as const;
  const held = snapshotOf(values);
  const s = weft.shared(r.normal([n, n]), { name: 's' });
  const sHeld = s.getValue({ borrow: true });
  const sCopy = copyArray(sHeld);
  const outs = [
    pt.tanh(x.dot(y)).mul(3).add(z).add(s),
    pt.setSubtensor(pt.exp(x).get(weft.slice(1, 5)), y.get(weft.slice(0, 4))).sum({ axis: 0 }),
    pt.incSubtensor(x.dot(z).get(weft.slice(null, null, 2)), pt.ones([1, n])).mean({ axis: 1 }),
    gemm(pt.zerosLike(x.dot(y)), 0.5, x, y, 0).sub(z),
  ];
  const reference = await weft.compile([x, y, z], outs, { mode: NO_INPLACE, workers: 0 });
  const want = await reference(...values);
  const wantOther = await reference(...other);
  for (const workers of [0, 2]) {
    for (const mutable of [false, true]) {
      const inputs = [x, y, z].map((v) => (mutable ? weft.In(v, { mutable: true }) : v));
      const fn = await weft.compile(inputs, outs, { pool, workers });
      t.ok(overwrites(fn).length >= 4, `workers ${workers}, mutable ${mutable}: ${overwrites(fn).length} overwrites`);
      const got = await fn(...values);
      got.forEach((g, j) => sameBits(t, g, want[j]!, `workers ${workers}, mutable ${mutable}: output ${j}`));
      const kept = snapshotOf(got);
      const again = await fn(...other);
      again.forEach((g, j) => sameBits(t, g, wantOther[j]!, `workers ${workers}, mutable ${mutable}: second call, output ${j}`));
      unchanged(t, got, kept, 'an output of the first call');
      unchanged(t, values, held, 'input');
      sameBits(t, sHeld, sCopy, 'the shared value');
      t.equal(s.getValue({ borrow: true }), sHeld, 'the shared variable holds the same array');
    }
  }
});

/** One SGD step's graph for a linear model y ~ x W + b; W and b are updated. */
function sgd(x: TV, y: TV, seed: number, k: number, m: number): { W: weft.pt.TensorSharedVariable; b: weft.pt.TensorSharedVariable; loss: TV; updates: Array<[weft.pt.TensorSharedVariable, TV]> } {
  const r = rng(seed);
  const W = weft.shared(r.normal([k, m], { dtype: 'float32', std: 0.1 }), { name: 'W' });
  const b = weft.shared(r.normal([m], { dtype: 'float32', std: 0.1 }), { name: 'b' });
  const err = x.dot(W).add(b).sub(y);
  const loss = err.sqr().mean();
  const [gW, gb] = weft.grad(loss, [W, b]) as TV[];
  return { W, b, loss, updates: [[W, W.sub(gW!.mul(0.05))], [b, b.sub(gb!.mul(0.05))]] };
}

t.test('a training loop with inplace updates equals the one without, bit for bit, on 0 and 2 workers', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const [n, k, m] = [512, 96, 48];
  const r = rng(21);
  const xv = r.normal([n, k], { dtype: 'float32' });
  const yv = r.normal([n, m], { dtype: 'float32' });
  const held = snapshotOf([xv, yv]);
  const results: Array<{ label: string; losses: NdArray[]; W: NdArray; b: NdArray }> = [];
  for (const workers of [0, 2]) {
    for (const mode of [undefined, NO_INPLACE]) {
      const x = pt.matrix('x', 'float32');
      const y = pt.matrix('y', 'float32');
      const model = sgd(x, y, 22, k, m);
      const fn = await weft.compile([x, y], model.loss, { updates: model.updates, pool, workers, mode });
      const label = `workers ${workers}, ${mode ? 'without' : 'with'} inplace`;
      if (!mode) {
        const o = overwrites(fn);
        t.ok(o.includes('Gemm{inplace} {"0":[0]}'), `${label}: the update of W is a Gemm into W`);
        t.ok(o.some((s) => s.startsWith('Composite{sub(i0,mul(') && s.endsWith('{"0":[0]}')), `${label}: the update of b writes into b`);
      }
      const losses: NdArray[] = [];
      for (let step = 0; step < 6; step++) losses.push(await fn(xv, yv));
      results.push({ label, losses, W: model.W.getValue(), b: model.b.getValue() });
    }
  }
  unchanged(t, [xv, yv], held, 'training input');
  const first = results[0]!;
  t.ok((first.losses[5]!.data[0] as number) < (first.losses[0]!.data[0] as number), 'the loss goes down');
  for (const res of results.slice(1)) {
    res.losses.forEach((l, i) => sameBits(t, l, first.losses[i]!, `${res.label}: loss ${i}`));
    sameBits(t, res.W, first.W, `${res.label}: W`);
    sameBits(t, res.b, first.b, `${res.label}: b`);
  }
});

// A kernel that fails, on the calling thread (plans run inline with workers: 0).
registerKernel('test.inplace.throw', () => {
  throw new Error('boom on the calling thread');
});

t.test('a call that fails after an inplace update leaves every shared variable as it was', async (t) => {
  const [n, k, m] = [64, 16, 8];
  const r = rng(31);
  const xv = r.normal([n, k], { dtype: 'float32' });
  const yv = r.normal([n, m], { dtype: 'float32' });
  const pool = weft.createPool({ workers: 2, kernelModules: [faultKernels] });
  t.teardown(() => pool.close());

  // Plans, inline and on workers: a kernel that throws after the update was computed into W's
  // place in the call's region.
  for (const [workers, kernel, message] of [
    [0, 'test.inplace.throw', /^boom on the calling thread/],
    [2, 'test.throw', /^boom from a kernel/],
  ] as const) {
    const x = pt.matrix('x', 'float32');
    const y = pt.matrix('y', 'float32');
    const model = sgd(x, y, 32 + workers, k, m);
    const newW = model.updates[0]![1];
    const fn = await weft.compile([x, y], new FaultOp(kernel).call(newW.mul(2)).sum(), { updates: model.updates, pool, workers });
    t.ok(overwrites(fn).includes('Gemm{inplace} {"0":[0]}'), `workers ${workers}: W is updated inplace`);
    const W0 = model.W.getValue({ borrow: true });
    const [Wcopy, bcopy] = snapshotOf([W0, model.b.getValue({ borrow: true })]);
    const size = workers === 0 ? n : 4096;
    await t.rejects(fn(r.normal([size, k], { dtype: 'float32' }), r.normal([size, m], { dtype: 'float32' })), { name: 'NodeError', message });
    sameBits(t, model.W.getValue({ borrow: true }), Wcopy!, `workers ${workers}: W as it was`);
    sameBits(t, model.b.getValue({ borrow: true }), bcopy!, `workers ${workers}: b as it was`);
    t.equal(model.W.getValue({ borrow: true }), W0, `workers ${workers}: W holds the same array`);
  }

  // The reference executor (compile's fallback, and what the fuzz tests compare with): a shape
  // error in a node that reads the new W, so it fails after the Gemm wrote the update into W's
  // storage, which must be a copy.
  const x = pt.matrix('x', 'float32');
  const y = pt.matrix('y', 'float32');
  const z = pt.matrix('z', 'float32');
  const model = sgd(x, y, 35, k, m);
  const newW = model.updates[0]![1];
  const fn = await weft.compile([x, y, z], newW.add(z).sum(), { updates: model.updates, workers: 0 });
  t.ok(overwrites(fn).includes('Gemm{inplace} {"0":[0]}'), 'reference: W is updated inplace');
  const executor = new weft.ReferenceExecutor(fn.fgraph);
  const shared = fn.fgraph.inputs.slice(3).map((v) => (v === model.W ? model.W : model.b).getValue({ borrow: true }));
  const kept = snapshotOf(shared);
  const order = executor.order.map(String);
  const gemmAt = order.findIndex((s) => s.startsWith('Gemm{inplace}'));
  const addAt = order.findIndex((s) => s.startsWith('Elemwise{add'));
  t.ok(gemmAt >= 0 && gemmAt < addAt, 'the update runs before the node that fails');
  await throwsExactly(
    t,
    () => executor.run([xv, yv, r.normal([k, m + 1], { dtype: 'float32' }), ...shared]),
    weft.NodeError,
    `Elemwise{add}: input 0 has shape [16, 8] and input 1 has shape [16, 9]: they differ on axis 1 (8 vs 9)\n` +
      `  in node ${addAt}: ${executor.order[addAt]}\n  input values: float32 [16, 8], float32 [16, 9]`,
  );
  unchanged(t, shared, kept, 'shared value given to the reference executor');
  const [total] = executor.run([xv, yv, r.normal([k, m], { dtype: 'float32' }), ...shared]) as NdArray[];
  t.ok(Number.isFinite(total!.data[0]), 'a good run works');
  unchanged(t, shared, kept, 'shared value given to the reference executor, after a good run');

  // A mode with its own runtime (NanGuardMode runs each node's perform on the values it is
  // given): a NaN found after the inplace update of W stops the call, and W is as it was.
  {
    const x = pt.matrix('x');
    const W = weft.shared([[1, 2], [3, 4]], { name: 'W' });
    const held = W.getValue({ borrow: true });
    const newW = W.sub(x.T.dot(x).mul(0.1));
    const fn = await weft.compile([x], pt.log(newW.neg()).sum(), { updates: [[W, newW]], mode: new weft.NanGuardMode({ nanIsError: true }) });
    t.ok(overwrites(fn).includes('Gemm{inplace} {"0":[0]}'), 'NanGuardMode: W is updated inplace');
    await t.rejects(fn([[1, 1], [1, 1]]), { name: 'NanGuardError' });
    t.same(weft.tolist(W.getValue()), [[1, 2], [3, 4]], 'NanGuardMode: W as it was');
    t.equal(W.getValue({ borrow: true }), held, 'NanGuardMode: the same array, not written');
  }
});

t.test('plans: an overwrite takes its input’s memory, the region shrinks, and no hazard appears', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.matrix('x', 'float32');
  const y = pt.matrix('y', 'float32');
  const model = sgd(x, y, 41, 128, 64);
  const values = [rng(42).normal([1024, 128], { dtype: 'float32' }), rng(43).normal([1024, 64], { dtype: 'float32' })];
  const plans = [];
  for (const mode of [undefined, NO_INPLACE]) {
    const fn = await weft.compile([x, y], model.loss, { updates: model.updates, pool, mode });
    const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
    const all = [...values, model.W.getValue({ borrow: true }), model.b.getValue({ borrow: true })];
    const { plan } = executor.planFor(all);
    t.same(planHazards(plan.descriptor), [], `${mode ? 'without' : 'with'} inplace: no hazard`);
    plans.push(plan);
  }
  const [on, off] = plans;
  t.ok(on!.descriptor.regionBytes < off!.descriptor.regionBytes, `region ${on!.descriptor.regionBytes} < ${off!.descriptor.regionBytes} bytes`);
  const d = on!.descriptor;
  const gemmCall = d.calls.findIndex((c) => c.label.startsWith('Gemm{inplace}'));
  t.ok(gemmCall >= 0, 'the plan has the inplace Gemm');
  const call = d.calls[gemmCall]!;
  const [zIn, out] = [d.views[call.inputs[0]!]!, d.views[call.outputs[0]!]!];
  t.same([out.offset, out.shape, out.stride], [zIn.offset, zIn.shape, zIn.stride], 'its output is W, where W is in the region');
  t.equal(call.kernel, 'gemmInplace');

  // Without the edge that orders a reader of W before the Gemm that overwrites W, the check complains.
  const readers = d.calls.flatMap((c, i) => (i !== gemmCall && c.inputs.some((v) => d.views[v]!.offset === zIn.offset) ? [i] : []));
  t.ok(readers.length > 0, 'W has another reader');
  const gemmTasks = new Set(d.tasks.flatMap((task, i) => (task.call === gemmCall ? [i] : [])));
  // Cut every path from the readers to the Gemm: the Gemm's tasks then wait for nothing.
  const tasks = d.tasks.map((task) => ({ ...task, successors: task.successors.filter((s) => !gemmTasks.has(s)) }));
  const pending = tasks.map(() => 0);
  tasks.forEach((task) => task.successors.forEach((s) => (pending[s] = pending[s]! + 1)));
  const cut = { ...d, tasks, initialPending: pending, initialReady: pending.flatMap((p, i) => (p === 0 ? [i] : [])) };
  const hazards = planHazards(cut);
  t.ok(
    hazards.some((h) => h.message.includes('Gemm{inplace}') && readers.some((c) => h.message.includes(d.calls[c]!.label))),
    'an unordered reader of W is reported',
  );
});

/** Adds y into x (0-d int32 values), written into x; no worker kernel. */
class AddIntoFirst extends weft.Op {
  override readonly destroyMap = { 0: [0] };

  override makeNode(x: unknown, y: unknown): Apply {
    const [a, b] = [pt.asTensorVariable(x as TV), pt.asTensorVariable(y as TV)];
    return new Apply(this, [a, b], [a.type.makeVariable()]);
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }

  override perform(_node: Apply, [x, y]: readonly NdArray[]): NdArray[] {
    x!.data[x!.offset] = x!.data[x!.offset]! + y!.data[y!.offset]!;
    return [x!];
  }

  override toString(): string {
    return 'AddIntoFirst';
  }
}

t.test('a plan refuses to overwrite a value it writes into the region once; the reference runs it', async (t) => {
  const x = pt.vector('x');
  const length = x.shape.get(0);
  const total = new AddIntoFirst().call(length, x.sum().astype('int32')) as TV;
  const fn = await weft.compile([x], total, { mode: 'FAST_COMPILE', workers: 0 });
  const xv = rng(51).uniform([5], { low: 0, high: 2 });
  await throwsExactly(
    t,
    () => new PlannedExecutor(fn.fgraph, undefined, { workers: 0 }).planFor([xv]),
    PlanError,
    `${fn.fgraph.outputs[0]!.owner} would write its output over a value the plan writes into the region once`,
  );
  const sum = (weft.tolist(xv) as number[]).reduce((a, b) => a + b, 0);
  for (let k = 0; k < 3; k++) t.equal(weft.tolist(await fn(xv)), 5 + Math.trunc(sum), `call ${k + 1}: the length is not corrupted`);

  // The fallback runs through the interpreter's hooks: a profile hears its nodes.
  const profiled = await weft.compile([x], total, { mode: 'FAST_COMPILE', workers: 0, profile: true });
  t.equal(weft.tolist(await profiled(xv)), 5 + Math.trunc(sum));
  const profile = profiled.profile!;
  t.match(profile.fallback, /would write its output over a value the plan writes into the region once/, 'the profile says why it fell back');
  t.same(
    profile.events.map((e) => e.node),
    profiled.fgraph.toposort(),
    'one event per node, in the order they ran',
  );
  t.ok(profile.events.every((e) => e.duration >= 0 && e.call === 0), 'with durations, in the first call');
});
