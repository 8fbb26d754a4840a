// The scan rewrites that move products out of loops (PushOutSeqScan's products with non-sequences,
// and a loop without recurrence leaving no loop): each is checked
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

