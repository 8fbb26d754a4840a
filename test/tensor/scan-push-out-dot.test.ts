// The scan rewrites that move products out of loops (PushOutSeqScan's products with non-sequences,
// PushOutScanOutput, PushOutDot1, and a loop without recurrence leaving no loop): each is checked
// on the rewritten graph, against the graph compiled without it, on 0 and 2 workers, with verifyGrad.
import t, { type Test } from 'tap';
import { near, pt, rng, weft } from '../helpers.js';
import { asList, checkValues as checkOn, many, one, outerOps, scans, stepOps, theScan, without, type Fn, type TV } from './scan-rewrite-checks.js';

const pool = weft.createPool({ workers: 2 });
t.teardown(() => pool.close());
const checkValues = (t: Test, inputs: TV[], outputs: TV[], values: unknown[], excluded: string[], tol?: number): Promise<Fn> => checkOn(t, pool, inputs, outputs, values, excluded, tol);

const dots = (names: readonly string[]): number => names.filter((s) => s === 'Dot' || s.startsWith('Gemm')).length;

/** A tanh RNN over batches: x_t [batch, in], h [batch, hidden]. */
function tanhRnn(X: TV, h0: TV, Wx: TV, Wh: TV, b: TV): TV {
  return one(
    weft.scan({
      fn: (x: TV, h: TV, wx: TV, wh: TV, bb: TV) => pt.tanh(pt.dot(x, wx).add(pt.dot(h, wh)).add(bb)),
      sequences: [X],
      outputsInfo: [h0],
      nonSequences: [Wx, Wh, b],
      name: 'rnn',
    }).outputs,
  );
}
const rnnInputs = (): TV[] => [pt.tensor3('X'), pt.matrix('h0'), pt.matrix('Wx'), pt.matrix('Wh'), pt.vector('b')];
function rnnValues(seed: number, steps: number): weft.NdArray[] {
  const r = rng(seed);
  return [r.normal([steps, 2, 3], { std: 0.5 }), r.normal([2, 4], { std: 0.5 }), r.normal([3, 4], { std: 0.5 }), r.normal([4, 4], { std: 0.3 }), r.normal([4], { std: 0.1 })];
}

t.test('PushOutSeqScan: a product of sequence rows with a non-sequence is one product over the sequence (matrix rows: the RNN input term)', async (t) => {
  const ins = rnnInputs();
  const h = tanhRnn(ins[0]!, ins[1]!, ins[2]!, ins[3]!, ins[4]!);
  const fn = await checkValues(t, ins, [h], rnnValues(1, 6), ['PushOutSeqScan']);
  const { node, op } = theScan(t, fn);
  t.equal(dots(stepOps(op)), 1, 'the step has one product left: h Wh');
  t.notOk(op.inner.inputs.includes(ins[2]!), 'Wx is not read by the step');
  const seqs = node.inputs.slice(1, 1 + op.spec.nSeqs).map((v) => (v.owner ? String(v.owner.op) : String(v)));
  t.same(seqs, ['Reshape{ndim=3}'], 'the sequence is X Wx, reshaped back to [T, batch, hidden]');
  t.equal(dots(outerOps(fn)), 1, 'one product outside: [T*batch, in] times Wx');
  const kept = theScan(t, (await weft.compile(ins, h, { workers: 0, mode: without('PushOutSeqScan') })) as Fn).op;
  t.equal(dots(stepOps(kept)), 2, 'excluded: both products in the step');
  await weft.verifyGrad((X: TV, h0: TV, Wx: TV, Wh: TV, b: TV) => tanhRnn(X, h0, Wx, Wh, b).sum(), rnnValues(2, 4), { rng: rng(3) });
  t.pass('verifyGrad through the rewritten scan');
});

t.test('PushOutSeqScan: vector rows on either side of the product, and matrix rows on the right (PyTensor test_pushout_seqs)', async (t) => {
  const [x, y, h0, W, M] = [pt.matrix('x'), pt.tensor3('y'), pt.vector('h0'), pt.matrix('W'), pt.matrix('M')];
  const step = (xt: TV, yt: TV, h: TV, w: TV, m: TV): TV[] => [pt.tanh(pt.dot(xt, w).add(pt.dot(w.T, xt)).add(h)), pt.dot(m, yt).sum().add(h.sum())];
  const outs = many(weft.scan({ fn: step, sequences: [x, y], outputsInfo: [h0, null], nonSequences: [W, M] }).outputs);
  const r = rng(4);
  const values = [r.normal([5, 3]), r.normal([5, 3, 2]), r.normal([3]), r.normal([3, 3], { std: 0.5 }), r.normal([4, 3])];
  const fn = await checkValues(t, [x, y, h0, W, M], outs, values, ['PushOutSeqScan']);
  t.equal(dots(stepOps(theScan(t, fn).op)), 0, 'x_t W, W.T x_t and M y_t all left the step');
  // A vector as the fixed operand of matrix rows, on either side: y_t v and u y_t.
  const [u, v] = [pt.vector('u'), pt.vector('v')];
  const vecs = many(weft.scan({ fn: (yt: TV, acc: TV, uu: TV, vv: TV) => acc.add(pt.dot(yt, vv).sum()).add(pt.dot(uu, yt).prod()), sequences: [y], outputsInfo: [pt.zeros([])], nonSequences: [u, v] }).outputs);
  const vfn = await checkValues(t, [y, u, v], vecs, [values[1], r.normal([3]), r.normal([2])], ['PushOutSeqScan']);
  t.equal(dots(stepOps(theScan(t, vfn).op)), 0, 'y_t v and u y_t left the step');
  await weft.verifyGrad((a: TV, b: TV, c: TV, d: TV, e: TV) => {
    const o = many(weft.scan({ fn: step, sequences: [a, b], outputsInfo: [c, null], nonSequences: [d, e] }).outputs);
    return o[0]!.sum().add(o[1]!.mul(o[1]!).sum());
  }, values, { rng: rng(5) });
  t.pass('verifyGrad');
});

t.test('PushOutSeqScan does not move a product with a shared variable the loop updates, nor with a past state', async (t) => {
  const x = pt.matrix('x');
  const s = weft.shared([[1, 0], [0, 2]], { name: 's' });
  const { outputs, updates } = weft.scan({ fn: (xt: TV) => [pt.dot(xt, s), [[s, s.mul(0.5)]]] as const, sequences: [x] });
  const fn = (await weft.compile([x], one(outputs), { workers: 0, updates })) as Fn;
  t.equal(dots(stepOps(theScan(t, fn).op)), 1, 'x_t s reads the state of s at each step: it stays');
  near(t, asList(await fn([[1, 1], [1, 1], [2, 2]]))[0]!, [[1, 2], [0.5, 1], [0.5, 1]], 0, 's halves after each step');

  // A recurrence read at taps [-2, -1]: its past states are no sequence, their products stay.
  const [f0, W] = [pt.matrix('f0'), pt.matrix('W')];
  const fib = one(weft.scan({ fn: (a: TV, b: TV, w: TV) => pt.tanh(pt.dot(a, w).add(b)), outputsInfo: [{ initial: f0, taps: [-2, -1] }], nonSequences: [W], nSteps: 5 }).outputs);
  const r = rng(6);
  const mit = await checkValues(t, [f0, W], [fib], [r.normal([2, 3]), r.normal([3, 3], { std: 0.5 })], ['scan']);
  t.equal(dots(stepOps(theScan(t, mit).op)), 1, 'the product of a past state stays in the step');
});

t.test('PushOutSeqScan: a step without recurrence leaves no loop (PyTensor TestPushOutSeqScan.test_pushout_all)', async (t) => {
  const [X, W, c] = [pt.tensor3('X'), pt.matrix('W'), pt.vector('c')];
  const step = (x: TV, w: TV, cc: TV): TV[] => [pt.tanh(pt.dot(x, w)).mul(2), x.exp(), cc.mul(3)];
  const outs = many(weft.scan({ fn: step, sequences: [X], nonSequences: [W, c] }).outputs);
  const r = rng(7);
  const [xv, wv, cv] = [r.normal([4, 2, 3]), r.normal([3, 4]), r.normal([4])];
  const fn = await checkValues(t, [X, W, c], outs, [xv, wv, cv], ['PushOutSeqScan']);
  t.equal(scans(fn).length, 0, 'no Scan node is left');
  t.equal(dots(outerOps(fn)), 1, 'one product over the whole sequence');
  t.same(asList(await fn(xv, wv, cv)).map((v) => v.shape), [[4, 2, 4], [4, 2, 3], [4, 4]], 'a row a step (the non-sequence output repeated)');
  const none = r.normal([0, 2, 3]);
  const empty = asList(await fn(none, wv, cv));
  t.same(empty.map((v) => v.shape), [[0, 2, 4], [0, 2, 3], [0, 4]], "zero steps: empty outputs of the rows' shapes");
  const ref = asList(await ((await weft.compile([X, W, c], outs, { workers: 0, mode: without('scan') })) as Fn)(none, wv, cv));
  t.same(ref.map((v) => v.shape), empty.map((v) => v.shape), 'as the loop gives them');

  // A given nSteps the sequences may not have: the loop stays, to check it when it runs.
  const n = pt.scalar('n', 'int32');
  const given = many(weft.scan({ fn: step, sequences: [X], nonSequences: [W, c], nSteps: n }).outputs);
  const kept = await checkValues(t, [X, W, c, n], given, [xv, wv, cv, 3], ['PushOutSeqScan']);
  t.equal(dots(stepOps(theScan(t, kept).op)), 0, 'the work left the step all the same');
  await t.rejects(kept(xv, wv, cv, 5), /Scan\{scan\}: nSteps is 5 but sequence 0 has only 4 steps/, 'and a too large nSteps fails as it did');
  await weft.verifyGrad((a: TV, b: TV) => many(weft.scan({ fn: (x: TV, w: TV) => [pt.tanh(pt.dot(x, w))], sequences: [a], nonSequences: [b] }).outputs)[0]!.sum(), [xv, wv], { rng: rng(8) });
  t.pass('verifyGrad');
});

t.test('PushOutScanOutput: a product of the stacked state with a non-sequence leaves the loop (PyTensor TestPushOutScanOutputDot.test_dot_sitsot_output)', async (t) => {
  const [a, b] = [pt.matrix('a'), pt.matrix('b')];
  const step = (s: TV, prev: TV, m: TV): TV[] => {
    const h = prev.add(s);
    return [h, pt.dot(h, m), h.mul(2).add(1)];
  };
  const outs = many(weft.scan({ fn: step, sequences: [a], outputsInfo: [a.get(0), null, null], nonSequences: [b] }).outputs);
  const r = rng(9);
  const values = [r.normal([5, 4]), r.normal([4, 3])];
  const fn = await checkValues(t, [a, b], outs, values, ['PushOutScanOutput']);
  const { op } = theScan(t, fn);
  t.equal(dots(stepOps(op)), 0, 'dot(h_t, b) is not in the step');
  t.equal(op.spec.nNitsot, 0, 'both outputs not fed back are work on the stacked states now');
  t.equal(dots(outerOps(fn)), 1, 'one product of the stacked states');
  t.equal(theScan(t, (await weft.compile([a, b], outs, { workers: 0, mode: without('PushOutScanOutput') })) as Fn).op.spec.nNitsot, 2, 'excluded: two outputs not fed back');
  await weft.verifyGrad((x: TV, y: TV) => {
    const o = many(weft.scan({ fn: step, sequences: [x], outputsInfo: [x.get(0), null, null], nonSequences: [y] }).outputs);
    return o[1]!.mul(o[1]!).sum().add(o[2]!.sum());
  }, values, { rng: rng(10) });
  t.pass('verifyGrad');
});

t.test('PushOutScanOutput: a value the step computes becomes a stacked output of its own (PyTensor TestPushOutScanOutputDot.test_dot_not_output, test_dot_nitsot_output)', async (t) => {
  const [a, h0, U, V] = [pt.matrix('a'), pt.vector('h0'), pt.matrix('U'), pt.matrix('V')];
  // q_t reads the past state: it has no stack, so it becomes one; dot(q_t, V) leaves the loop.
  const step = (s: TV, prev: TV, u: TV, v: TV): TV[] => {
    const q = pt.tanh(pt.dot(prev, u)).add(s);
    return [q, pt.dot(q.mul(q), v)];
  };
  const outs = many(weft.scan({ fn: step, sequences: [a], outputsInfo: [h0, null], nonSequences: [U, V] }).outputs);
  const r = rng(11);
  const values = [r.normal([6, 3]), r.normal([3]), r.normal([3, 3], { std: 0.5 }), r.normal([3, 2])];
  const fn = await checkValues(t, [a, h0, U, V], outs, values, ['PushOutScanOutput']);
  const { op } = theScan(t, fn);
  t.equal(dots(stepOps(op)), 1, 'only the recurrent product prev U stays');
  t.notOk(stepOps(op).includes('Elemwise{sqr}') || stepOps(op).some((s) => s.includes('mul')), 'q_t * q_t is done on the stacked states');
  // The product of a past state is no output: it stays (dot(prev, V) reads h_{t-1}).
  const stay = many(weft.scan({ fn: (s: TV, prev: TV, v: TV) => [pt.tanh(prev.add(s)), pt.dot(prev, v)], sequences: [a], outputsInfo: [h0, null], nonSequences: [V] }).outputs);
  const kept = await checkValues(t, [a, h0, V], stay, [values[0], values[1], values[3]], ['PushOutScanOutput']);
  t.equal(dots(stepOps(theScan(t, kept).op)), 1, 'dot(h_{t-1}, V) stays in the step');
  // Nor a product with a shared variable the loop updates: its value is a state of the loop.
  const s = weft.shared([[1, 0], [0, 2], [1, 1]], { name: 's' });
  const upd = weft.scan({ fn: (row: TV, prev: TV) => [[pt.tanh(prev.add(row)), pt.dot(pt.tanh(prev.add(row)), s)], [[s, s.mul(0.5)]]] as const, sequences: [a], outputsInfo: [h0, null] });
  const withS = (await weft.compile([a, h0], many(upd.outputs)[1]!, { workers: 0, updates: upd.updates })) as Fn;
  t.equal(dots(stepOps(theScan(t, withS).op)), 1, 'dot(h_t, s) with s updated each step stays');
  // The jacobian of dot(v, m) (PyTensor's test_dot_not_output): a loop over the rows of an identity.
  const [v, m] = [pt.vector('v'), pt.matrix('m')];
  const jac = weft.jacobian(pt.dot(v, m), v) as TV;
  await checkValues(t, [v, m], [jac], [r.normal([4]), r.normal([4, 5])], ['PushOutScanOutput']);
});

/** The weight gradients of a tanh RNN's summed states: backpropagation through time. */
const rnnGrads = (ins: TV[]): TV[] => weft.grad(tanhRnn(ins[0]!, ins[1]!, ins[2]!, ins[3]!, ins[4]!).sum(), [ins[2]!, ins[3]!, ins[4]!]) as TV[];

t.test('PushOutDot1: the weight gradients of a tanh RNN leave the backward loop as one product each (BPTT)', async (t) => {
  const ins = rnnInputs();
  const h = tanhRnn(ins[0]!, ins[1]!, ins[2]!, ins[3]!, ins[4]!);
  const grads = rnnGrads(ins);
  const fn = await checkValues(t, ins, [h.sum(), ...grads], rnnValues(12, 7), ['scan'], 1e-11);
  const loops = scans(fn);
  t.equal(loops.length, 2, 'the forward loop and the backward loop');
  const [forward, backward] = loops.map((n) => stepOps(n.op as weft.ScanOp));
  t.equal(dots(forward!), 1, 'forward: h Wh');
  t.equal(dots(backward!), 1, 'backward: delta Wh.T (the carry)');
  t.equal(dots(outerOps(fn)), 3, 'outside: X Wx, and for the gradients of Wx and Wh one product each over all steps (the backward loop reads the forward states, it does not compute them again)');
  // Zero steps: the sums over no step are zeros, as the loops give them.
  const none = rnnValues(12, 7);
  none[0] = rng(21).normal([0, 2, 3]);
  const reference = (await weft.compile(ins, [h.sum(), ...grads], { workers: 0, mode: without('scan') })) as Fn;
  const [got, want] = [asList(await fn(...none)), asList(await reference(...none))];
  got.forEach((v, i) => near(t, v, weft.tolist(want[i]!) as never, 0, `zero steps, output ${i}`));
  const excluded = (await weft.compile(ins, grads, { workers: 0, mode: without('PushOutDot1') })) as Fn;
  t.equal(dots(stepOps(scans(excluded)[1]!.op as weft.ScanOp)), 3, 'excluded: x_t.T delta and h_{t-1}.T delta per step');
  await weft.verifyGrad((X: TV, h0: TV, Wx: TV, Wh: TV, b: TV) => {
    const g = rnnGrads([X, h0, Wx, Wh, b]);
    return g[0]!.sum().add(g[1]!.mul(g[1]!).sum());
  }, rnnValues(13, 3), { rng: rng(14) });
  t.pass('verifyGrad of the rewritten gradient (second derivatives through both loops)');
});

t.test('PushOutDot1: vector rows (the gradient is an outer product per step)', async (t) => {
  const [X, h0, W, U] = [pt.matrix('X'), pt.vector('h0'), pt.matrix('W'), pt.matrix('U')];
  const cost = (x: TV, h: TV, w: TV, u: TV): TV => one(weft.scan({ fn: (xt: TV, p: TV, ww: TV, uu: TV) => pt.tanh(pt.dot(xt, ww).add(pt.dot(p, uu))), sequences: [x], outputsInfo: [h], nonSequences: [w, u] }).outputs).get(-1).sum();
  const grads = weft.grad(cost(X, h0, W, U), [W, U]) as TV[];
  const r = rng(15);
  const values = [r.normal([6, 3]), r.normal([4]), r.normal([3, 4], { std: 0.5 }), r.normal([4, 4], { std: 0.4 })];
  const fn = await checkValues(t, [X, h0, W, U], grads, values, ['PushOutDot1']);
  t.equal(scans(fn).map((n) => n.op as weft.ScanOp).filter((op) => op.name.endsWith('grad')).length, 1, 'one backward loop');
  const back = scans(fn).map((n) => n.op as weft.ScanOp).find((op) => op.name.endsWith('grad'))!;
  t.equal(back.spec.nNitsot, 1, 'the backward loop stacks one delta per step; the outer products left');
  await weft.verifyGrad(cost, values, { rng: rng(16) });
  t.pass('verifyGrad');
});

t.test('PushOutDot1: an accumulator of products of sequence rows is one product after the loop (PyTensor TestPushOutSumOfDot.test_non_zero_init)', async (t) => {
  const [s1, s2, s3] = [pt.tensor3('s1'), pt.tensor3('s2'), pt.tensor3('s3')];
  const [W, U, init] = [pt.matrix('W'), pt.matrix('U'), pt.matrix('init')];
  const step = (a: TV, b: TV, c: TV, acc: TV, w: TV, u: TV): TV => acc.add(pt.dot(pt.dot(a, w).add(c), pt.dot(b, u)));
  const acc = one(weft.scan({ fn: step, sequences: [s1, s2, s3], outputsInfo: [init], nonSequences: [W, U] }).outputs);
  const r = rng(17);
  const values = [r.normal([4, 3, 4]), r.normal([4, 5, 6]), r.normal([4, 3, 5]), r.normal([4, 5]), r.normal([6, 7]), r.normal([3, 7])];
  const inputs = [s1, s2, s3, W, U, init];
  const fn = await checkValues(t, inputs, [acc.get(-1)], values, ['PushOutDot1'], 1e-11);
  t.equal(scans(fn).length, 0, 'nothing is left of the loop');
  t.equal(dots(outerOps(fn)), 3, 'three products: s1 W and s2 U over all rows, and their sum over the steps');
  // Transposed rows, as a weight gradient writes them: acc + x_t.T y_t.
  const [x, y, a0] = [pt.tensor3('x'), pt.tensor3('y'), pt.matrix('a0')];
  const xty = one(weft.scan({ fn: (xt: TV, yt: TV, p: TV) => p.add(pt.dot(xt.T, yt)), sequences: [x, y], outputsInfo: [a0] }).outputs);
  const tv = [r.normal([5, 2, 3]), r.normal([5, 2, 4]), r.normal([3, 4])];
  const xtyFn = await checkValues(t, [x, y, a0], [xty.get(-1)], tv, ['PushOutDot1']);
  t.equal(scans(xtyFn).length, 0, 'transposed rows: no loop left');
  t.same(outerOps(xtyFn).filter((s) => s.startsWith('DimShuffle{1,0,2}')), [], 'the rows are flattened, then transposed (no [in, T, batch] copy)');
  await weft.verifyGrad((p: TV, q: TV, c: TV) => one(weft.scan({ fn: (xt: TV, yt: TV, s: TV) => s.add(pt.dot(xt.T, yt)), sequences: [p, q], outputsInfo: [c] }).outputs).get(-1).sum(), tv, { rng: rng(18) });
  t.pass('verifyGrad');
});

t.test('PushOutDot1: a shared variable that accumulates products gets its update after the loop', async (t) => {
  const [x, y] = [pt.tensor3('x'), pt.tensor3('y')];
  const r = rng(22);
  const start = r.normal([3, 4]);
  const acc = weft.shared(start, { name: 'acc' });
  const { updates } = weft.scan({ fn: (xt: TV, yt: TV) => [[acc, acc.add(pt.dot(xt.T, yt))]] as const, sequences: [x, y] });
  const fn = await weft.compile([x, y], [], { workers: 0, updates });
  t.equal(fn.fgraph.toposort().filter((n) => n.op instanceof weft.ScanOp).length, 0, 'no loop: the update is acc + one product');
  const [xv, yv] = [r.normal([5, 2, 3]), r.normal([5, 2, 4])];
  await fn(xv, yv);
  const want = (weft.tolist(start) as number[][]).map((row, i) => row.map((a, j) => {
    let sum = a;
    for (let k = 0; k < 5; k++) for (let b = 0; b < 2; b++) sum += (xv.get(k, b, i) as number) * (yv.get(k, b, j) as number);
    return sum;
  }));
  near(t, acc.getValue() as weft.NdArray, want, 1e-12, 'acc + sum over steps of x_t.T y_t');
});

t.test('PushOutDot1 over a sequence read at overlapping taps: each tap is its own cut, values unchanged', async (t) => {
  const [x, a0] = [pt.tensor3('x'), pt.matrix('a0')];
  // sum_t x[t-1].T x[t]: the rows of two cuts of one sequence, X[0:T-1] and X[1:T].
  const step = (prev: TV, now: TV, acc: TV): TV => acc.add(pt.dot(prev.T, now));
  const acc = one(weft.scan({ fn: step, sequences: [{ input: x, taps: [-1, 0] }], outputsInfo: [a0] }).outputs);
  const r = rng(23);
  const values = [r.normal([6, 2, 3]), r.normal([3, 3])];
  const fn = await checkValues(t, [x, a0], [acc.get(-1)], values, ['PushOutDot1']);
  t.equal(scans(fn).length, 0, 'no loop left');
  await weft.verifyGrad((p: TV, c: TV) => one(weft.scan({ fn: step, sequences: [{ input: p, taps: [-1, 0] }], outputsInfo: [c] }).outputs).get(-1).sum(), values, { rng: rng(24) });
  t.pass('verifyGrad');
});

t.test('PushOutDot1 does not fire when the stacked rows of the accumulator are read', async (t) => {
  const [x, y, a0] = [pt.tensor3('x'), pt.tensor3('y'), pt.matrix('a0')];
  const acc = one(weft.scan({ fn: (xt: TV, yt: TV, p: TV) => p.add(pt.dot(xt.T, yt)), sequences: [x, y], outputsInfo: [a0] }).outputs);
  const r = rng(19);
  const values = [r.normal([5, 2, 3]), r.normal([5, 2, 4]), r.normal([3, 4])];
  const fn = await checkValues(t, [x, y, a0], [acc.get(-1), acc.sum({ axis: 0 })], values, ['PushOutDot1']);
  t.equal(dots(stepOps(theScan(t, fn).op)), 1, 'the running sums are read: the product stays in the step');
  // Nor when the accumulator feeds the rest of the step.
  const both = many(weft.scan({ fn: (xt: TV, yt: TV, p: TV) => { const q = p.add(pt.dot(xt.T, yt)); return [q, q.sum()]; }, sequences: [x, y], outputsInfo: [a0, null] }).outputs);
  const fed = await checkValues(t, [x, y, a0], [both[0]!.get(-1), both[1]!], values, ['PushOutDot1']);
  t.equal(dots(stepOps(theScan(t, fed).op)), 1, 'the state is read in the step: the product stays');
});

t.test('the push-out rewrites are registered under their names, tagged fast_run and scan', async (t) => {
  const ins = rnnInputs();
  // With the gradient of the inputs too: delta_t Wx.T per step is an output not fed back (PushOutScanOutput).
  const grads = weft.grad(tanhRnn(ins[0]!, ins[1]!, ins[2]!, ins[3]!, ins[4]!).sum(), [ins[0]!, ins[2]!, ins[3]!]) as TV[];
  const fn = await checkValues(t, ins, grads, rnnValues(20, 5), ['scan'], 1e-11);
  t.equal(dots(stepOps(scans(fn)[1]!.op as weft.ScanOp)), 1, 'the backward step keeps one product: the carry');
  const profiled = (await weft.compile(ins, grads, { workers: 0, profile: true })) as Fn;
  const ran = profiled.profile!.rewrites.byRewriter;
  for (const name of ['PushOutSeqScan', 'PushOutDot1', 'PushOutScanOutput']) t.ok((ran.get(name)?.applied ?? 0) > 0, `${name} changed the graph`);
  const none = (await weft.compile(ins, grads, { workers: 0, mode: without('scan') })) as Fn;
  t.equal(dots(stepOps(scans(none)[1]!.op as weft.ScanOp)), 4, "excluding 'scan': every product of the backward step stays in it (the carry and three gradients; the forward step's two are read from the forward loop's rows)");
});
