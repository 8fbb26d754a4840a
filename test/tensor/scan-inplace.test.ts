// ScanInplaceOptimizer (src/tensor/rewriting/scan/inplace.ts, and the in-place step views of
// workers/scan-loop.ts): where it fires, and the bits of loops whose rows are read and written in
// place against the same loops copying them, on the layouts where in place must give way to a
// copy: a ring of one row (the state read and written in the same row), sequences with strides,
// taps two steps back, an output that is a view of an input, and steps shared with the team.
import t from 'tap';
import type { Test } from 'tap';
import { PlannedExecutor } from '../../src/scheduler/planned-executor.js';
import { BoundPlan, MemoryViews } from '../../src/workers/bound-plan.js';
import { innerViews } from '../../src/workers/inner-plan.js';
import { Loop, type ScanLoopParams } from '../../src/workers/scan-loop.js';
import { pt, rng, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
const without = (...tags: string[]): weft.Mode => new weft.Mode({ excluding: tags });
const bitsOf = (a: weft.NdArray): Buffer => Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength);
const asList = (r: weft.NdArray | weft.NdArray[]): weft.NdArray[] => (Array.isArray(r) ? r : [r]);
const scanOps = (fn: { fgraph: weft.FunctionGraph }): weft.ScanOp[] => fn.fgraph.toposort().flatMap((n) => (n.op instanceof weft.ScanOp ? [n.op] : []));

const pool = weft.createPool({ workers: 2 });
t.teardown(() => pool.close());

/** Compiles `outputs` with and without the rewrite, on 0 and 2 workers: every result has the same bits. */
async function sameBits(t: Test, what: string, inputs: TV[], outputs: TV[], values: weft.NdArray[]): Promise<weft.NdArray[]> {
  const reference = asList(await (await weft.compile(inputs, outputs, { workers: 0, mode: without('scan_inplace') }))(...values));
  for (const workers of [0, 2]) {
    const fn = await weft.compile(inputs, outputs, { pool, workers });
    t.ok(scanOps(fn).length > 0 && scanOps(fn).every((op) => op.spec.inplace === true), `${what}: every loop is in place (${workers} workers)`);
    const got = asList(await fn(...values));
    got.forEach((g, i) => t.ok(bitsOf(g).equals(bitsOf(reference[i]!)), `${what}: output ${i} on ${workers} workers has the bits of the copying loop`));
  }
  return reference;
}

t.test('ScanInplaceOptimizer fires in the inplace phase, and excluding scan_inplace, inplace or scan turns it off', async (t) => {
  const x = pt.matrix('x');
  const { outputs } = weft.scan({ fn: (xt: TV, acc: TV) => acc.add(xt.exp()), sequences: [x], outputsInfo: [pt.zeros([3])] });
  for (const [mode, inplace] of [[undefined, true], [without('scan_inplace'), false], [without('inplace'), false], [without('scan'), false]] as const) {
    const fn = await weft.compile([x], outputs, mode ? { mode } : {});
    t.same(scanOps(fn).map((op) => op.spec.inplace === true), [inplace], `${mode ? `excluding ${mode.options.excluding!.join(', ')}` : 'FAST_RUN'}: ${inplace ? 'in place' : 'copying'}`);
  }
  const fn = await weft.compile([x], outputs);
  const back = weft.deserialize(weft.serialize(fn));
  const fgraph = new weft.FunctionGraph(back.inputs as TV[], back.outputs);
  t.same(scanOps({ fgraph }).map((op) => op.spec.inplace), [true], 'a document keeps the loop in place');
});

t.test('a tanh RNN forward and BPTT, rows in place, steps shared with the team', async (t) => {
  const [x, h0, wx, wh, b] = [pt.tensor3('x'), pt.matrix('h0'), pt.matrix('wx'), pt.matrix('wh'), pt.vector('b')];
  const { outputs: hs } = weft.scan({
    fn: (xt: TV, h: TV, a: TV, u: TV, c: TV) => pt.tanh(xt.dot(a).add(h.dot(u)).add(c)),
    sequences: [x],
    outputsInfo: [h0],
    nonSequences: [wx, wh, b],
  });
  const loss = (hs as TV).sqr().sum();
  const r = rng(4);
  const values = [r.normal([5, 64, 16]), r.normal([64, 256]), r.normal([16, 256]), r.normal([256, 256]), r.normal([256])];
  for (let i = 0; i < values[3]!.data.length; i++) values[3]!.data[i] = values[3]!.data[i]! / 16;
  await sameBits(t, 'rnn', [x, h0, wx, wh, b], [loss, hs as TV, ...weft.grad(loss, [wx, wh, b, h0])], values);
});

/**
 * What step 1 of the compiled loop reads and writes in place: the step views the kernel would use,
 * over a memory laid out as the call's region (the plan's own descriptor and scan params).
 */
async function stepOne(inputs: TV[], outputs: TV[], values: weft.NdArray[]): Promise<{ read: number[]; written: number[]; inputs: number }> {
  const fn = await weft.compile(inputs, outputs, { pool, workers: 2 });
  const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
  t.teardown(() => executor.dispose());
  const d = executor.planFor(values).plan.descriptor;
  const call = d.calls.find((c) => c.kernel === 'scanLoop')!;
  const memory = new MemoryViews(new WebAssembly.Memory({ initial: Math.ceil(d.regionBytes / 65536) + 1, maximum: 65536, shared: true }));
  const views = new BoundPlan(d, 0, memory).views;
  const ins = call.inputs.map((v) => views[v]!);
  const outs = call.outputs.map((v) => views[v]!);
  ins[0]!.data[ins[0]!.offset] = values[0]!.shape[0]!;
  const params = call.params as unknown as ScanLoopParams;
  const { readInPlace, writtenInPlace } = new Loop(params, ins, outs).stepViews(innerViews(params.step.plan, outs[outs.length - 1]!), 1);
  return { read: [...readInPlace].sort(), written: [...writtenInPlace].sort(), inputs: params.step.inputs.length };
}

t.test('in place is what happens: a step reads its row, its state and its non-sequence where they are and writes its state into its row', async (t) => {
  const [x, w] = [pt.matrix('x'), pt.matrix('w')];
  const { outputs } = weft.scan({ fn: (xt: TV, h: TV, u: TV) => pt.tanh(h.dot(u).add(xt)), sequences: [x], outputsInfo: [pt.zeros([4])], nonSequences: [w] });
  const values = [rng(12).normal([6, 4]), rng(13).normal([4, 4])];
  const all = await stepOne([x, w], [outputs as TV], values);
  t.same(all, { read: [0, 1, 2], written: [0], inputs: 3 }, 'every input read in place, the state written in place');
  const last = await stepOne([x, w], [(outputs as TV).get(-1)], values);
  t.same(last.written, [], 'a ring of one row: the state read and written in the same row is copied out');
  t.same(last.read, [0, 1, 2], 'and still read in place');
});

t.test('the last state of a forward loop (a ring of one row: read and written in the same row) is copied, and right', async (t) => {
  const x = pt.matrix('x');
  const { outputs } = weft.scan({ fn: (xt: TV, h: TV) => pt.tanh(h.mul(0.5).add(xt)), sequences: [x], outputsInfo: [pt.zeros([4])] });
  const last = (outputs as TV).get(-1);
  const values = [rng(5).normal([50, 4])];
  const fn = await weft.compile([x], [last], { pool, workers: 0 });
  t.same(scanOps(fn).map((op) => op.spec.keep), [[1]], 'ScanSaveMem kept one row');
  const [got] = await sameBits(t, 'ring of one row', [x], [last], values);
  let h = [0, 0, 0, 0];
  for (let s = 0; s < 50; s++) h = h.map((v, i) => Math.tanh(v * 0.5 + values[0]!.data[s * 4 + i]!));
  t.ok(h.every((v, i) => Math.abs(v - got!.data[i]!) < 1e-12), 'the written-out loop agrees');
});

t.test('sequences with strides (a transposed matrix, every other row) are copied in; taps two steps back read in place', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const { outputs } = weft.scan({
    fn: (xt: TV, yt: TV, a: TV, b: TV) => a.add(b).mul(0.5).add(xt).sub(yt),
    sequences: [x.T, y.get(weft.slice(null, null, 2))],
    outputsInfo: [{ initial: pt.zeros([2, 6]), taps: [-1, -2] }],
  });
  const values = [rng(6).normal([6, 10]), rng(7).normal([20, 6])];
  const [got] = await sameBits(t, 'strided sequences, taps [-1, -2]', [x, y], [outputs as TV], values);
  const [xs, ys] = values.map((v) => v.data);
  const rows: number[][] = [Array(6).fill(0), Array(6).fill(0)];
  for (let s = 0; s < 10; s++) rows.push(rows[s + 1]!.map((a, i) => (a + rows[s]![i]!) * 0.5 + xs![i * 10 + s]! - ys![2 * s * 6 + i]!));
  t.ok(rows.slice(2).every((row, s) => row.every((v, i) => Math.abs(v - got!.data[s * 6 + i]!) < 1e-12)), 'the written-out loop agrees');
});

t.test('an output that is a view of a row (a transpose of the state) and one the step passes through', async (t) => {
  const x = pt.tensor3('x');
  const { outputs } = weft.scan({
    fn: (xt: TV, h: TV) => {
      const next = h.add(xt);
      return [next, next.T, xt] as const;
    },
    sequences: [x],
    outputsInfo: [pt.zeros([3, 2]), null, null],
  });
  const values = [rng(8).normal([4, 3, 2])];
  const got = await sameBits(t, 'view outputs', [x], outputs as TV[], values);
  t.same(weft.tolist(got[2]!), weft.tolist(values[0]!), 'the passed-through rows are the sequence');
  const sums = values[0]!.data.slice(0, 6).map((v, i) => v + values[0]!.data[6 + i]!);
  t.same((weft.tolist(got[1]!) as number[][][])[1], [[sums[0], sums[2], sums[4]], [sums[1], sums[3], sums[5]]], 'the transposed state of step 1');
});

t.test('verifyGrad through loops compiled in place (the forward loop and its gradient loop)', async (t) => {
  const step = (xt: TV, h: TV, u: TV): TV => pt.tanh(h.dot(u).add(xt));
  const loop = (x: TV, h0: TV, u: TV): TV => weft.scan({ fn: step, sequences: [x], outputsInfo: [h0], nonSequences: [u] }).outputs as TV;
  const r = rng(9);
  await weft.verifyGrad((x: TV, h0: TV, u: TV) => loop(x, h0, u).sum(), [r.normal([4, 2, 3]), r.normal([2, 3]), r.normal([3, 3])], { rng: rng(10) });
  await weft.verifyGrad((x: TV, h0: TV, u: TV) => loop(x, h0, u).get(-1).sum(), [r.normal([5, 2, 3]), r.normal([2, 3]), r.normal([3, 3])], { rng: rng(11) });
  t.pass('verifyGrad agrees with finite differences');
});
