// The scan rewrites (Theano's names, PyTensor's semantics): each fires where it should (the
// rewritten graph is checked: what left the step, what the node still takes), does not fire where
// it must not, leaves the values unchanged against the graph compiled with it excluded, keeps
// gradients through the rewritten loop right (verifyGrad), and gives equal bits on 0 and 2 workers.
import t, { type Test } from 'tap';
import { near, pt, rng, weft } from '../helpers.js';
import { asList, checkValues as checkOn, many, one, outerOps, scans, stepOps, theScan, without, type Fn, type TV } from './scan-rewrite-checks.js';

const pool = weft.createPool({ workers: 2 });
t.teardown(() => pool.close());
const checkValues = (t: Test, inputs: TV[], outputs: TV[], values: unknown[], excluded: string[], tol?: number): Promise<Fn> => checkOn(t, pool, inputs, outputs, values, excluded, tol);

/** An RNN step with loop-invariant work (W.T, U * 3) and element-wise work on its rows (exp(2 x_t)). */
function rnn(X: TV, h0: TV, W: TV, U: TV, b: TV): TV {
  return one(
    weft.scan({
      fn: (x: TV, h: TV, w: TV, u: TV, bb: TV) => pt.tanh(pt.dot(w.T, x.mul(2).exp()).add(pt.dot(u.mul(3), h)).add(bb)),
      sequences: [X],
      outputsInfo: [h0],
      nonSequences: [W, U, b],
    }).outputs,
  );
}
const rnnInputs = (): TV[] => [pt.matrix('X'), pt.vector('h0'), pt.matrix('W'), pt.matrix('U'), pt.vector('b')];
function rnnValues(seed: number, steps: number): weft.NdArray[] {
  const r = rng(seed);
  return [r.normal([steps, 3], { std: 0.5 }), r.normal([4]), r.normal([3, 4], { std: 0.5 }), r.normal([4, 4], { std: 0.3 }), r.normal([4])];
}

t.test('PushOutNonSeqScan: loop-invariant work leaves the step (PyTensor test_pushout_nonseq)', async (t) => {
  const ins = rnnInputs();
  const h = rnn(ins[0]!, ins[1]!, ins[2]!, ins[3]!, ins[4]!);
  const fn = await checkValues(t, ins, [h], rnnValues(1, 6), ['PushOutNonSeqScan']);
  const { node, op } = theScan(t, fn);
  const step = stepOps(op);
  t.notOk(step.includes('DimShuffle{1,0}'), 'W.T is not in the step');
  t.notOk(step.some((s) => s.startsWith('Elemwise{mul}') || s.includes('mul(')), 'U * 3 is not in the step');
  const fed = node.inputs.map((v) => (v.owner ? String(v.owner.op) : String(v)));
  // (W.T times exp(2 x_t) leaves the loop whole, as one product over the sequence: PushOutSeqScan.)
  t.ok(fed.includes('Elemwise{mul}'), `the node reads U * 3 computed before the loop (${fed.join(', ')})`);
  t.notOk(node.inputs.includes(ins[2]!), 'W itself is no input any more (remove_constants_and_unused_inputs_scan after the push-out)');
  const kept = theScan(t, (await weft.compile(ins, h, { workers: 0, mode: without('PushOutNonSeqScan') })) as Fn).op;
  t.ok(stepOps(kept).includes('DimShuffle{1,0}'), 'excluded: W.T stays in the step');

  await weft.verifyGrad((X: TV, h0: TV, W: TV, U: TV, b: TV) => rnn(X, h0, W, U, b).sum(), rnnValues(2, 4), { rng: rng(3) });
  t.pass('verifyGrad through the rewritten scan (and its rewritten gradient scan)');
});

t.test('PushOutNonSeqScan does not move work on a shared variable the step updates', async (t) => {
  const x = pt.vector('x');
  const s = weft.shared(1.5, { name: 's' });
  const { outputs, updates } = weft.scan({
    fn: (xt: TV) => [xt.mul(s.mul(2)), [[s, s.add(1)]]] as const,
    sequences: [x],
  });
  const fn = (await weft.compile([x], one(outputs), { workers: 0, updates })) as Fn;
  const { op } = theScan(t, fn);
  t.ok(op.inner.toposort().filter((n) => String(n.op) === 'Elemwise{mul}').length >= 2, 's * 2 reads the state of each step: it stays in the step');
  near(t, asList(await fn([1, 1, 1]))[0]!, [3, 5, 7], 1e-15, 's grows by one a step');
  near(t, s.getValue() as weft.NdArray, 4.5, 0, 'the update after three steps');
});

t.test('PushOutSeqScan: element-wise work on sequence rows is done on the whole sequence (PyTensor test_pushout_seqs)', async (t) => {
  const ins = rnnInputs();
  const h = rnn(ins[0]!, ins[1]!, ins[2]!, ins[3]!, ins[4]!);
  const fn = await checkValues(t, ins, [h, h.get(-1)], rnnValues(4, 7), ['PushOutSeqScan']);
  const { node, op } = theScan(t, fn);
  t.notOk(stepOps(op).some((s) => s.includes('exp')), 'exp(2 x_t) is not in the step');
  const seqs = node.inputs.slice(1, 1 + op.spec.nSeqs).map((v) => (v.owner ? String(v.owner.op) : String(v)));
  // exp(2 X) is computed on the whole sequence, and so is its product with W.T: one Dot outside.
  t.ok(seqs.some((s) => s.startsWith('Reshape') || s === 'Dot'), `a sequence is W.T exp(2 X) computed before the loop (${seqs.join(', ')})`);
  t.equal(stepOps(op).filter((s) => s === 'Dot').length, 1, 'the step has one product left: U h');
  t.ok(outerOps(fn).some((s) => s.includes('exp')), 'the outer graph has the exp');

  // The state is no sequence: element-wise work on it stays.
  const y0 = pt.vector('y0');
  const ys = one(weft.scan({ fn: (y: TV) => y.mul(2).exp().mul(0.5), outputsInfo: [y0], nSteps: 3 }).outputs);
  const stay = await checkValues(t, [y0], [ys], [[0.1, -0.2]], ['PushOutSeqScan']);
  t.ok(stepOps(theScan(t, stay).op).some((s) => s.includes('exp')), 'work on the recurrent state stays in the step');

  await weft.verifyGrad((X: TV, h0: TV, W: TV, U: TV, b: TV) => rnn(X, h0, W, U, b).get(-1).sum(), rnnValues(5, 4), { rng: rng(6) });
  t.pass('verifyGrad through the rewritten scan');
});

t.test('PushOutSeqScan over a sequence read at overlapping taps: each tap is its own cut, values unchanged', async (t) => {
  const x = pt.vector('x');
  const { outputs } = weft.scan({
    fn: (prev: TV, now: TV, next: TV, acc: TV) => acc.add(prev.mul(now).add(next.exp())),
    sequences: [{ input: x, taps: [-1, 0, 1] }],
    outputsInfo: [pt.zeros([])],
  });
  const fn = await checkValues(t, [x], [one(outputs)], [[0.5, -1, 2, 0.25, 3, -0.5]], ['PushOutSeqScan']);
  const { op } = theScan(t, fn);
  t.same(stepOps(op).filter((s) => s.includes('exp') || s.includes('mul')), [], 'x[t-1] * x[t] and exp(x[t+1]) left the step');
  const want = [0.5, -1, 2, 0.25, 3, -0.5].slice(1, -1).map((_, i, all) => [0.5, -1, 2, 0.25, 3, -0.5][i]! * all[i]! + Math.exp([0.5, -1, 2, 0.25, 3, -0.5][i + 2]!));
  near(t, asList(await fn([0.5, -1, 2, 0.25, 3, -0.5]))[0]!, want.map((_, i) => want.slice(0, i + 1).reduce((a, b) => a + b, 0)));
  await weft.verifyGrad(
    (xs: TV) => one(weft.scan({ fn: (p: TV, n: TV, q: TV, acc: TV) => acc.add(p.mul(n).add(q.exp())), sequences: [{ input: xs, taps: [-1, 0, 1] }], outputsInfo: [pt.zeros([])] }).outputs).sum(),
    [new Float64Array([0.5, -1, 2, 0.25, 0.3])],
    { rng: rng(7) },
  );
  t.pass('verifyGrad');
});

t.test('remove_constants_and_unused_inputs_scan: constants go into the step, unused outputs and inputs go', async (t) => {
  // A non-sequence that constant folding turns into a constant (after the first scan rewrites).
  const x = pt.vector('x');
  // (The state keeps the loop: a step of sequence work only would leave the loop altogether.)
  const { outputs } = weft.scan({ fn: (xt: TV, acc: TV, c: TV) => acc.mul(c.sum()).add(xt), sequences: [x], outputsInfo: [pt.zeros([])], nonSequences: [pt.constant([1, 2, 3]).mul(2)] });
  const fn = await checkValues(t, [x], [one(outputs)], [[1, -2]], ['remove_constants_and_unused_inputs_scan']);
  const { op } = theScan(t, fn);
  t.equal(op.spec.nNonSeqs, 0, 'the folded constant is inside the step, not an input');
  near(t, asList(await fn([1, -2]))[0]!, [1, 10]);
  const kept = theScan(t, (await weft.compile([x], one(outputs), { workers: 0, mode: without('remove_constants_and_unused_inputs_scan') })) as Fn).op;
  // (PushOutNonSeqScan still moves c.sum() out: the unused c and the sum are two non-sequences.)
  t.equal(kept.spec.nNonSeqs, 2, 'excluded: the constant stays a non-sequence, unused');

  // Two outputs, one read: the other goes, with the sequence only it read; a state that the read output needs stays.
  const [a, b] = [pt.vector('a'), pt.vector('b')];
  const y0 = pt.scalar('y0');
  const z0 = pt.scalar('z0');
  const parts = many(
    weft.scan({
      fn: (at: TV, bt: TV, y: TV, z: TV) => [y.add(z), z.mul(0.5).add(at), pt.dot(bt, bt)],
      sequences: [a, b],
      outputsInfo: [y0, z0, null],
      nSteps: 3,
    }).outputs,
  );
  const sums = await checkValues(t, [a, b, y0, z0], [parts[0]!], [[1, 2, 3], [[4], [5], [6]].flat(), 1, 2], ['remove_constants_and_unused_inputs_scan']);
  const cleaned = theScan(t, sums).op;
  t.equal(cleaned.spec.nNitsot, 0, 'the output not fed back that nothing reads is gone');
  t.equal(cleaned.spec.taps.length, 2, 'z stays: y reads it');
  t.equal(cleaned.spec.nSeqs, 1, 'b went with the output that read it');
  const onlyZ = theScan(t, (await weft.compile([a, b, y0, z0], parts[1]!, { workers: 0, onUnusedInput: 'ignore' })) as Fn).op;
  t.equal(onlyZ.spec.taps.length, 1, 'y goes when only z is read (z does not read y)');
});

t.test('scan_merge_inouts: equal inputs and equal outputs of one scan merge (PyTensor test_merge_inouts)', async (t) => {
  const x = pt.vector('x');
  const W = pt.matrix('W');
  const h0 = pt.vector('h0');
  // Two sequences that are one variable; two states with one initial state and one step; two equal outputs.
  const outs = many(
    weft.scan({
      fn: (a: TV, b: TV, h: TV, g: TV, w: TV) => [pt.tanh(pt.dot(w, h).add(a)), pt.tanh(pt.dot(w, g).add(b)), pt.dot(w, h).sum(), pt.dot(w, g).sum()],
      sequences: [x, x],
      outputsInfo: [h0, h0, null, null],
      nonSequences: [W],
    }).outputs,
  );
  const total = outs[0]!.sum().add(outs[1]!.sum()).add(outs[2]!.mul(outs[3]!).sum());
  const r = rng(8);
  const values = [r.normal([5]), r.normal([3, 3], { std: 0.5 }), r.normal([3])];
  const fn = await checkValues(t, [x, W, h0], [outs[0]!, outs[1]!, total], values, ['scan_merge_inouts']);
  const { op } = theScan(t, fn);
  t.equal(op.spec.nSeqs, 1, 'one sequence');
  t.equal(op.spec.taps.length, 1, 'one recurrence');
  t.equal(op.spec.nNitsot, 1, 'one output not fed back');
  const apart = theScan(t, (await weft.compile([x, W, h0], [outs[0]!, outs[1]!, total], { workers: 0, mode: without('scan_merge_inouts') })) as Fn).op;
  t.equal(apart.spec.taps.length, 2, 'excluded: two recurrences');

  // Alike but not equal: the same initial state, different steps.
  const differ = many(weft.scan({ fn: (h: TV, g: TV) => [h.mul(2), g.mul(3)], outputsInfo: [h0, h0], nSteps: 3 }).outputs);
  const two = await checkValues(t, [h0], differ, [[1, 2, 3]], ['scan_merge_inouts']);
  t.equal(theScan(t, two).op.spec.taps.length, 2, 'different steps stay two recurrences');

  await weft.verifyGrad((xs: TV, w: TV, h: TV) => {
    const o = many(weft.scan({ fn: (a: TV, b: TV, p: TV, q: TV, ww: TV) => [pt.tanh(pt.dot(ww, p).add(a)), pt.tanh(pt.dot(ww, q).add(b))], sequences: [xs, xs], outputsInfo: [h, h], nonSequences: [w] }).outputs);
    return o[0]!.sum().add(o[1]!.mul(o[1]!).sum());
  }, values, { rng: rng(9) });
  t.pass('verifyGrad');
});

t.test('ScanSaveMem: a forward-only loop read at its last state keeps one row (PyTensor test_save_mem)', async (t) => {
  const h0 = pt.vector('h0');
  const W = pt.matrix('W');
  const n = pt.scalar('n', 'int32');
  const hs = one(weft.scan({ fn: (h: TV, w: TV) => pt.tanh(pt.dot(w, h)), outputsInfo: [h0], nonSequences: [W], nSteps: n }).outputs);
  const r = rng(10);
  const [h, w] = [r.normal([64]), r.normal([64, 64], { std: 0.1 })];
  const fn = await checkValues(t, [h0, W, n], [hs.get(-1)], [h, w, 50], ['ScanSaveMem']);
  t.same(theScan(t, fn).op.spec.keep, [1], 'the output keeps one row');
  const [short, long] = [fn.planInfo(h, w, 10), fn.planInfo(h, w, 10000)];
  t.equal(long.regionBytes, short.regionBytes, `10,000 steps take the region of 10 (${short.regionBytes} bytes)`);
  const all = (await weft.compile([h0, W, n], hs.get(-1), { workers: 0, mode: without('ScanSaveMem') })) as Fn;
  t.ok(all.planInfo(h, w, 10000).regionBytes >= 10000 * 64 * 8, 'excluded: the region holds every state');
  near(t, asList(await fn(h, w, 10000))[0]!, weft.tolist(asList(await all(h, w, 10000))[0]!) as never, 0, '10,000 steps: the same last state');

  // The last k rows of a mit-sot and of an output not fed back; k at least the taps'.
  const fib = many(weft.scan({ fn: (a: TV, b: TV) => [a.add(b), a.mul(b)], outputsInfo: [{ initial: pt.constant([0, 1], { dtype: 'int32' }), taps: [-2, -1] }, null], nSteps: n }).outputs);
  const tail = await checkValues(t, [n], [fib[0]!.get(-1), fib[0]!.get(slice(-3, null)), fib[1]!.get(-2)], [12], ['ScanSaveMem'], 0);
  t.same(theScan(t, tail).op.spec.keep, [3, 2], 'Fibonacci keeps 3 rows (ys[-3:]), the products 2 (ps[-2])');
  t.same((await tail(12) as weft.NdArray[]).map((v) => weft.tolist(v)), [233, [89, 144, 233], 55 * 89], 'Fibonacci after 12 steps');
  t.same((await tail(2) as weft.NdArray[]).map((v) => weft.tolist(v)), [2, [1, 2], 0], 'fewer steps than rows kept');

  // Readers that need every row: the rewrite leaves the loop alone.
  const whole = await checkValues(t, [h0, W, n], [hs, hs.get(0)], [h, w, 5], ['ScanSaveMem']);
  t.equal(theScan(t, whole).op.spec.keep, undefined, 'every row is read: every row is kept');

  await weft.verifyGrad((hh: TV, ww: TV) => one(weft.scan({ fn: (p: TV, q: TV) => pt.tanh(pt.dot(q, p)), outputsInfo: [hh], nonSequences: [ww], nSteps: 6 }).outputs).get(-1).sum(), [r.normal([3]), r.normal([3, 3], { std: 0.5 })], { rng: rng(11) });
  t.pass('verifyGrad of the last state');
});

t.test('ScanMerge: two loops over the same steps become one (PyTensor test_merge)', async (t) => {
  const x = pt.vector('x');
  const s0 = pt.scalar('s0');
  const sums = one(weft.scan({ fn: (xt: TV, acc: TV) => acc.add(xt), sequences: [x], outputsInfo: [s0], name: 'sums' }).outputs);
  const prods = one(weft.scan({ fn: (xt: TV, acc: TV) => acc.mul(xt), sequences: [x], outputsInfo: [pt.onesLike(s0)], name: 'prods' }).outputs);
  const fn = await checkValues(t, [x, s0], [sums, prods], [[1, 2, 3, 4], 0.5], ['ScanMerge']);
  const { op } = theScan(t, fn);
  t.equal(String(op), 'Scan{sums&prods}', 'one loop does both');
  t.equal(op.spec.nSeqs, 1, 'x is read once a step (scan_merge_inouts after ScanMerge)');
  t.equal(scans((await weft.compile([x, s0], [sums, prods], { workers: 0, mode: without('ScanMerge') })) as Fn).length, 2, 'excluded: two loops');

  // A loop over the other's output depends on it: they stay two loops.
  const again = one(weft.scan({ fn: (st: TV, acc: TV) => acc.add(st.mul(st)), sequences: [sums], outputsInfo: [s0], name: 'squares' }).outputs);
  const chained = await checkValues(t, [x, s0], [again], [[1, 2, 3], 1], ['ScanMerge']);
  t.equal(scans(chained).length, 2, 'a loop reading the other stays apart');

  await weft.verifyGrad((xs: TV, a: TV) => {
    const p = one(weft.scan({ fn: (xt: TV, acc: TV) => acc.add(xt.mul(xt)), sequences: [xs], outputsInfo: [a] }).outputs);
    const q = one(weft.scan({ fn: (xt: TV, acc: TV) => acc.mul(0.5).add(pt.tanh(xt)), sequences: [xs], outputsInfo: [a] }).outputs);
    return p.sum().add(q.mul(q).sum());
  }, [new Float64Array([0.3, -0.4, 0.9]), 0.2], { rng: rng(12) });
  t.pass('verifyGrad through the merged loop');
});

t.test('the scan rewrites are registered under their names, tagged fast_run and scan', async (t) => {
  const x = pt.vector('x');
  const { outputs } = weft.scan({ fn: (xt: TV, acc: TV) => acc.add(xt.exp()), sequences: [x], outputsInfo: [pt.zeros([])] });
  const fn = (await weft.compile([x], one(outputs).get(-1), { workers: 0, profile: true })) as Fn;
  const ran = [...fn.profile!.rewrites.byRewriter.keys()];
  for (const name of ['remove_constants_and_unused_inputs_scan', 'PushOutNonSeqScan', 'PushOutSeqScan', 'PushOutDot1', 'PushOutScanOutput', 'ScanMerge', 'scan_merge_inouts', 'ScanSaveMem']) {
    t.ok(ran.includes(name), `${name} ran`);
  }
  const none = (await weft.compile([x], one(outputs).get(-1), { workers: 0, mode: without('scan') })) as Fn;
  t.ok(stepOps(theScan(t, none).op).some((s) => s.includes('exp')), "excluding 'scan' turns them all off");
});

const slice = weft.slice;
