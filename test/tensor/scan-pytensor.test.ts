// weft.scan against PyTensor's own scan tests (tests/scan/test_basic.py), with their expected
// values: gradients when the step returns one variable as several outputs, or an input unchanged;
// non-sequences and captured variables as inputs of the node, computed once; steps that return
// only updates; second and higher derivatives; serialization of such scans.
import t from 'tap';
import { near, pt, rng, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
const one = (outputs: TV | TV[]): TV => outputs as TV;
const many = (outputs: TV | TV[]): TV[] => outputs as TV[];
const list = (a: weft.NdArray): number[] => (weft.tolist(a) as number[]).flat(Infinity as 1) as number[];

/**
 * PyTensor's test_grad_duplicate_outputs loop: the step's value `total` (of a sequence row, the
 * state 3 steps back, a non-sequence) is both outputs, the first not fed back, the second with taps [-3].
 */
function duplicated(seq: TV, outInit: TV, nonSeq: TV, step: (row: TV, back3: TV, ns: TV) => TV): TV[] {
  const fn = (row: TV, back3: TV, ns: TV): TV[] => {
    const total = step(row, back3, ns);
    return [total, total];
  };
  return many(weft.scan({ fn, sequences: seq, outputsInfo: [null, { initial: outInit, taps: [-3] }], nonSequences: nonSeq }).outputs);
}

t.test('test_grad_duplicate_outputs (pytensor tests/scan/test_basic.py): both outputs are one variable', async (t) => {
  const seq = pt.matrix('seq');
  const outInit = pt.matrix('outInit');
  const nonSeq = pt.vector('nonSeq');
  const outs = duplicated(seq, outInit, nonSeq, (inp1, inp2, inp3) => inp1.add(inp2).add(inp3));
  const wrt = [seq, outInit, nonSeq];
  const fct = await weft.compile(wrt, [...weft.grad(outs[0]!.sum(), wrt), ...weft.grad(outs[1]!.sum(), wrt)], { workers: 0 });
  const r = rng(1828);
  const got = await fct(r.uniform([10, 3]), r.uniform([3, 3]), r.uniform([3]));
  // Step t feeds step t+3: dcost/dseq[t] counts t, t+3, t+6, ... up to 9.
  const gSeq = [4, 3, 3, 3, 2, 2, 2, 1, 1, 1].map((k) => [k, k, k]);
  for (const o of [0, 3]) {
    near(t, got[o]!, gSeq, 1e-12, `output ${o / 3}: the sequence`);
    near(t, got[o + 1]!, gSeq.slice(0, 3), 1e-12, `output ${o / 3}: the initial states`);
    near(t, got[o + 2]!, [22, 22, 22], 1e-12, `output ${o / 3}: the non-sequence`);
  }
});

t.test('test_grad_duplicate_outputs (pytensor tests/scan/test_basic.py): [q, q] with q = 2s, and steps that return an input unchanged', async (t) => {
  const x0 = pt.scalar('x0');
  const w = pt.scalar('w');
  const x = pt.vector('x');
  // The case: outputs[0] = [2, 4, 8] x0, so d sum / dx0 = 14.
  const twice = many(weft.scan({ fn: (s: TV) => { const q = s.mul(2); return [q, q]; }, outputsInfo: [x0, null], nSteps: 3 }).outputs);
  // A state returned unchanged as an output not fed back: [x0, 2 x0, 4 x0].
  const keeps = many(weft.scan({ fn: (s: TV) => [s.mul(2), s], outputsInfo: [x0, null], nSteps: 3 }).outputs);
  // A non-sequence returned unchanged: [w, w, w]; the state is x0 w^t.
  const passes = many(weft.scan({ fn: (s: TV, ww: TV) => [s.mul(ww), ww], outputsInfo: [x0, null], nonSequences: [w], nSteps: 3 }).outputs);
  // One variable as two recurrent outputs: a_t = b_t = a_{t-1} + b_{t-1}.
  const both = many(weft.scan({ fn: (a: TV, b: TV) => { const q = a.add(b); return [q, q]; }, outputsInfo: [x0, w], nSteps: 3 }).outputs);
  // A recurrent output that is its own past state: [x0, x0, x0].
  const same = one(weft.scan({ fn: (s: TV) => s, outputsInfo: [x0], nSteps: 3 }).outputs);
  // A sequence row returned twice, once as a recurrent output.
  const rows = many(weft.scan({ fn: (xt: TV, _s: TV) => [xt, xt], sequences: [x], outputsInfo: [x0, null] }).outputs);
  const f = await weft.compile(
    [x0, w, x],
    [
      weft.grad(twice[0]!.sum(), x0),
      weft.grad(twice[1]!.sum(), x0),
      weft.grad(keeps[1]!.sum(), x0),
      weft.grad(keeps[0]!.sum().add(keeps[1]!.sum()), x0),
      ...weft.grad(passes[1]!.sum(), [w, x0], { disconnectedInputs: 'ignore' }),
      weft.grad(passes[0]!.sum(), w),
      ...weft.grad(both[0]!.sum(), [x0, w]),
      weft.grad(rows[0]!.sum().add(rows[1]!.sum()), x),
      weft.grad(same.sum(), x0),
    ],
    { workers: 0, onUnusedInput: 'ignore' },
  );
  const [g1, g2, g3, g4, g5, g6, g7, g8, g9, g10, g11] = await f(1.5, 0.5, [1, 2, 3]);
  near(t, g1!, 14, 1e-15, 'd sum(outputs[0]) / dx0');
  near(t, g2!, 14, 1e-15, 'd sum(outputs[1]) / dx0');
  near(t, g3!, 7, 1e-15, 'a state returned unchanged: d (x0 + 2 x0 + 4 x0) / dx0');
  near(t, g4!, 21, 1e-15, 'both outputs');
  near(t, g5!, 3, 1e-15, 'a non-sequence returned unchanged: d 3w / dw');
  near(t, g6!, 0, 1e-15, '... which does not depend on x0');
  near(t, g7!, 1.5 * (1 + 2 * 0.5 + 3 * 0.25), 1e-15, 'd (x0 w + x0 w^2 + x0 w^3) / dw');
  near(t, g8!, 7, 1e-15, 'one variable as two recurrent outputs: d / da0');
  near(t, g9!, 7, 1e-15, 'one variable as two recurrent outputs: d / db0');
  near(t, g10!, [2, 2, 2], 1e-15, 'a sequence row returned twice');
  near(t, g11!, 3, 1e-15, 'a state returned as itself');
  // The same through finite differences, and the pushforward.
  await weft.verifyGrad((s0: TV, ww: TV) => {
    const [a, b] = many(weft.scan({ fn: (s: TV, v: TV) => { const q = s.mul(v).tanh(); return [q, q, v]; }, outputsInfo: [s0, null, null], nonSequences: [ww], nSteps: 4 }).outputs);
    return a!.sum().add(b!.mul(2).sum());
  }, [0.7, 1.3], { rng: rng(5) });
  await weft.checkRop((s0: TV) => many(weft.scan({ fn: (s: TV) => { const q = s.sin(); return [q, q]; }, outputsInfo: [s0, null], nSteps: 3 }).outputs)[1]!, [rng(7).normal([2])], { rng: rng(6) });
  t.pass('verifyGrad and checkRop');
});

t.test('test_grad_mitsot (pytensor tests/scan/test_basic.py): second derivatives through a mit-sot and a sit-sot returning one variable', async (t) => {
  const sumOfGrad = (input0: TV, input1: TV): TV => {
    const outs = many(
      weft.scan({
        fn: (mitsotM2: TV, sitsot: TV) => {
          const output = mitsotM2.add(sitsot).pow(1.02);
          return [output, output];
        },
        outputsInfo: [{ initial: input0, taps: [-2] }, input1],
        nSteps: 3,
      }).outputs,
    );
    return weft.grad(outs[0]!.sum(), input0).sum().add(weft.grad(outs[1]!.sum(), input1).sum());
  };
  const r = rng(1211);
  await weft.verifyGrad(sumOfGrad, [r.uniform([2, 3]), r.uniform([3])], { rng: r });
  t.pass('verifyGrad of the sum of the gradients');
});

t.test('test_grad_sitsot (pytensor tests/scan/test_basic.py): the gradient of a gradient', async (t) => {
  const r = rng(1194);
  await weft.verifyGrad((inp: TV) => weft.grad(one(weft.scan({ fn: (x: TV) => x.mul(2), outputsInfo: [inp], nSteps: 5 }).outputs).sum(), inp).sum(), [r.uniform([3])], { rng: r });
  t.pass('verifyGrad');
});

t.test('test_grad_grad_mitsot_sitsot (pytensor tests/scan/test_basic.py): second derivatives, taps [-2, -1] and a sit-sot', async (t) => {
  const sumOfGrads = (m: TV, v: TV): TV => {
    const outs = many(
      weft.scan({
        fn: (m2: TV, m1: TV, s: TV) => {
          const output = m2.add(m1).add(s).pow(1.05);
          return [output, output];
        },
        outputsInfo: [{ initial: m, taps: [-2, -1] }, v],
        nSteps: 5,
      }).outputs,
    );
    return weft.grad(outs[0]!.sum(), m).sum().add(weft.grad(outs[1]!.sum(), v).sum());
  };
  const r = rng(1327);
  await weft.verifyGrad(sumOfGrads, [r.uniform([2, 3], { low: 0.1, high: 0.5 }), r.uniform([3], { low: 0.1, high: 0.5 })], { rng: r });
  t.pass('verifyGrad');
});

t.test('test_high_order_grad_sitsot (pytensor tests/scan/test_basic.py): four derivatives of x^16', async (t) => {
  const x = pt.scalar('x');
  const y = one(weft.scan({ fn: (xtm1: TV) => xtm1.pow(2), outputsInfo: [x], nSteps: 4 }).outputs).get(-1);
  const xv = 0.95;
  near(t, await y.eval(new Map([[x, xv]])), xv ** 16, 1e-14, 'x^16');
  let deriv = y;
  for (let order = 1; order <= 4; order++) {
    deriv = weft.grad(deriv, x);
    const expected = [16, 15, 14, 13].slice(0, order).reduce((a, b) => a * b, 1) * xv ** (16 - order);
    near(t, await deriv.eval(new Map([[x, xv]])), expected, 1e-12, `derivative ${order}`);
  }
});

t.test('test_grad_multiple_seqs_different_nsteps and test_grad_of_grad_of_state (pytensor tests/scan/test_basic.py)', async (t) => {
  const c = pt.vector('c');
  const x = pt.scalar('x');
  const components = one(weft.scan({ fn: (coeff: TV, power: TV, free: TV) => coeff.mul(free.pow(power)), sequences: [c, pt.arange(1000)], nonSequences: x }).outputs);
  const dP = weft.grad(components.sum(), x);
  const f = await weft.compile([c, x], [dP, weft.grad(dP.sum(), x)], { workers: 0 });
  const [d1, d2] = await f([1, 2, -3, 4], 2);
  near(t, d1!, 38, 0, 'dP/dx');
  near(t, d2!, 42, 0, 'd2P/dx2');
});

t.test('test_grad_multiple_taps_state (pytensor tests/scan/test_basic.py): taps [-4, -1] and a non-sequence', async (t) => {
  const r = rng(1977);
  // Entries of magnitude 1 to 3, some negative, as PyTensor draws them (small ones make the
  // finite differences unstable).
  const signed = (shape: number[]): weft.NdArray => {
    const v = r.uniform(shape, { low: 1, high: 3 });
    const flip = r.uniform(shape);
    for (let i = 0; i < v.data.length; i++) if (flip.data[i]! < 0.5) v.data[i] = -v.data[i]!;
    return v;
  };
  const loss = (xinit: TV, w: TV): TV => {
    const xseq = one(weft.scan({ fn: (_xdl: TV, xprev: TV, ww: TV) => ww.add(xprev), outputsInfo: [{ initial: xinit, taps: [-4, -1] }], nonSequences: w, nSteps: 10 }).outputs);
    return xseq.get(-1).sqr().sum();
  };
  await weft.verifyGrad(loss, [signed([5, 2, 2]), signed([2, 2])], { rng: r });
  t.pass('verifyGrad');
});

t.test('test_grad_wrt_shared, test_grad_find_input, test_grad_bug_disconnected_input, test_only_nonseq_inputs (pytensor tests/scan/test_basic.py)', async (t) => {
  // test_grad_wrt_shared: y = x1 * x2[t], d sum(y) / dx1 = 2 + 3.
  const x1 = weft.shared(3, { dtype: 'float64', name: 'x1' });
  const x2 = pt.vector('x2');
  const y = one(weft.scan({ fn: (v: TV) => v.mul(x1), sequences: x2 }).outputs);
  near(t, await (await weft.compile([x2], weft.grad(y.sum(), x1), { workers: 0 }))([2, 3]), 5, 0, 'test_grad_wrt_shared');
  // test_grad_find_input: the step returns a shared variable it read from outside.
  const w = weft.shared(0, { dtype: 'float32', name: 'w' });
  const init = pt.scalar('init', 'float32');
  const out = one(weft.scan({ fn: (_prev: TV) => w, outputsInfo: init, nSteps: 2 }).outputs);
  near(t, await (await weft.compile([init], weft.grad(out.get(-1), w), { workers: 0, onUnusedInput: 'ignore' }))(1), 1, 0, 'test_grad_find_input: d out[-1] / dw');
  // test_grad_bug_disconnected_input: rows of W picked by an integer sequence.
  const W = weft.shared([[0, 0, 0], [0, 0, 0], [0, 0, 0]], { dtype: 'float64', name: 'W' });
  const iv = pt.vector('v', 'int32');
  const rowsOf = one(weft.scan({ fn: (i: TV, ww: TV) => ww.get(i), sequences: iv, nonSequences: W }).outputs);
  near(t, await (await weft.compile([iv], weft.grad(rowsOf.sum(), W), { workers: 0 }))([1, 2]), [[0, 0, 0], [1, 1, 1], [1, 1, 1]], 0, 'test_grad_bug_disconnected_input');
  // test_only_nonseq_inputs: a step that returns its non-sequence.
  const inp = pt.matrix('inp');
  const broadcasted = one(weft.scan({ fn: (v: TV) => v, nonSequences: [inp], nSteps: 2 }).outputs);
  const fun = await weft.compile([inp], [broadcasted, weft.grad(broadcasted.sum(), inp)], { workers: 0 });
  const [o1, o2] = await fun([[1, 2], [3, 4]]);
  near(t, o1!, [[[1, 2], [3, 4]], [[1, 2], [3, 4]]], 0, 'test_only_nonseq_inputs: the rows');
  near(t, o2!, [[2, 2], [2, 2]], 0, 'test_only_nonseq_inputs: the gradient');
});

t.test('test_grad_duplicate_outputs_connection_pattern (pytensor tests/scan/test_basic.py)', async (t) => {
  const inits = [pt.vector('i0'), pt.vector('i1'), pt.matrix('i2'), pt.matrix('i3')];
  const outs = many(
    weft.scan({
      fn: (...args: TV[]) => {
        const total = args.reduce((a, b) => a.add(b));
        return [total, total, total, total, total, total];
      },
      outputsInfo: [null, null, inits[0]!, inits[1]!, { initial: inits[2]!, taps: [-2, -1] }, { initial: inits[3]!, taps: [-2, -1] }],
      nSteps: 10,
    }).outputs,
  );
  weft.grad(outs[0]!.sum(), inits[1]!);
  const node = outs[0]!.owner!;
  const pattern = node.op.connectionPattern!(node);
  // PyTensor's rows 1-4 are the initial states (its nSteps row is all false; weft's counts nSteps
  // as connected, an integer that gets no gradient either way).
  t.same(pattern.slice(1), [0, 1, 2, 3].map(() => [true, true, true, true, true, true]), 'every initial state reaches every output');
  t.equal(pattern.length, 5);
});

t.test('test_random_as_input_to_scan (pytensor tests/scan/test_basic.py): a draw as a non-sequence is one draw', async (t) => {
  const trng = new weft.RandomStream(123);
  const x = pt.matrix('x');
  const y = trng.uniform(x.shape).lt(x).astype('float64');
  const { outputs: z, updates } = weft.scan({ fn: (a: TV) => a, nonSequences: y, nSteps: 2 });
  t.same(updates, [], 'the loop carries no random state');
  t.ok(one(z).owner!.inputs.includes(y), 'the draw is an input of the Scan node');
  const f = await weft.compile([x], [y, one(z)], { updates, workers: 0 });
  const nx = rng(1001).uniform([10, 10]);
  const [ny1, nz1] = await f(nx);
  const [ny2, nz2] = await f(nx);
  t.same(weft.tolist(nz1!), [weft.tolist(ny1!), weft.tolist(ny1!)], 'each step sees the same draw, the one outside');
  t.same(weft.tolist(nz2!), [weft.tolist(ny2!), weft.tolist(ny2!)]);
  t.notSame(weft.tolist(ny1!), weft.tolist(ny2!), 'the next call draws again');
});

t.test('test_bugFunctioProvidesIntermediateNodesAsInputs (pytensor tests/scan/test_basic.py): a computed non-sequence is an input of the node', async (t) => {
  const V = pt.tensor3('INPUT', 'float32');
  const orig = pt.matrix('PARAM', 'float32');
  const W = orig.add(2);
  const OS = one(weft.scan({ fn: (v: TV, ww: TV) => v.add(1).add(ww.sum()), sequences: V, outputsInfo: [null], nonSequences: [W] }).outputs);
  const O = OS.sum().add(W.sum());
  t.ok(OS.owner!.inputs.includes(W), 'W, not orig, is what the Scan reads');
  t.notOk(OS.owner!.inputs.includes(orig));
  const f = await weft.compile([V, W], O, { workers: 0 });
  const v = rng(3434).uniform([3, 2, 2], { dtype: 'float32' });
  const wv = [[1, 2], [3, 4]];
  // 3 steps of 4 elements: sum(V) + 12 (1 + sum(W)) + sum(W).
  const sumV = list(v).reduce((a, b) => a + b, 0);
  near(t, await f(v, wv), sumV + 12 * 11 + 10, 1e-5);
  // A computed variable the step captures without declaring it is read the same way.
  const captured = one(weft.scan({ fn: (vt: TV) => vt.add(W.sum()), sequences: V }).outputs);
  t.ok(captured.owner!.inputs.includes(W), 'a captured W is an input too');
  near(t, await (await weft.compile([V, W], captured.sum(), { workers: 0 }))(v, wv), sumV + 12 * 10, 1e-5);
});

t.test('test_inner_graph_cloning (pytensor tests/scan/test_basic.py): a draw captured from outside is one draw, one made in the step draws anew', async (t) => {
  const stream = new weft.RandomStream(254);
  const yv = weft.shared(1, { dtype: 'float64', name: 'y' });
  yv.defaultUpdate = yv.add(1);
  const z = stream.normal([], { name: 'z' });
  const { outputs, updates } = weft.scan({
    fn: (x: TV) => {
      const r = stream.normal([], { mean: x });
      return [r.add(yv).add(z), z, r];
    },
    outputsInfo: [pt.constant(0, { dtype: 'float64' }), null, null],
    nSteps: 4,
  });
  t.equal(updates.length, 1, 'one state carried: that of the draw made in the step');
  const [res, zRes, r] = many(outputs);
  const f = await weft.compile([], [res!, zRes!, r!], { updates, workers: 0 });
  const [a, b, c] = (await f()).map(list);
  t.equal(new Set(a).size, 4, 'the draw in the step differs at each step');
  t.equal(new Set(b).size, 1, 'the captured draw is the same at each step');
  // As in PyTensor, y (made outside, with a default update) keeps its value through the loop;
  // its default update applies once per call.
  t.same(a!.map((v, i) => Math.round((v - c![i]! - b![i]!) * 1e9) / 1e9), [1, 1, 1, 1], 'y is 1 at every step');
  const [a2, b2, c2] = (await f()).map(list);
  t.same(a2!.map((v, i) => Math.round((v - c2![i]! - b2![i]!) * 1e9) / 1e9), [2, 2, 2, 2], 'y is 2 in the next call');
  t.not(b2![0], b![0], 'the next call draws z again');
});

t.test('a variable built outside that reads a shared variable the step updates follows its state; a declared one is computed once', async (t) => {
  // PyTensor copies a captured computation into the step, where the shared variable is the
  // state of the step; a non-sequence is an outer input, computed from the value before the loop.
  const count = weft.shared(0, { dtype: 'float64', name: 'count' });
  const twice = count.mul(2);
  const captured = weft.scan({ fn: () => [twice, [[count, count.add(1)]]] as const, nSteps: 3 });
  const f = await weft.compile([], one(captured.outputs), { updates: captured.updates, workers: 0 });
  near(t, await f(), [0, 2, 4], 0, 'captured: 2 count at each step');
  t.equal(weft.tolist(count.getValue()), 3);
  const declared = weft.scan({ fn: (tw: TV) => [tw, [[count, count.add(1)]]] as const, nonSequences: [twice], nSteps: 3 });
  const g = await weft.compile([], one(declared.outputs), { updates: declared.updates, workers: 0 });
  near(t, await g(), [6, 6, 6], 0, 'a non-sequence: 2 count before the loop');
  t.equal(weft.tolist(count.getValue()), 6);
});

t.test('an op with a draw, made outside and called in the step, draws anew at each step', async (t) => {
  // The draw is computed in the step (the node is made there), so its state is one of the loop's.
  const stream = new weft.RandomStream(5);
  const a = pt.scalar('a');
  const noisy = new weft.OpFromGraph([a], [a.add(stream.uniform([]))]);
  const { outputs, updates } = weft.scan({ fn: (s: TV) => noisy.call(s.mul(0)) as TV, outputsInfo: [pt.constant(0, { dtype: 'float64' })], nSteps: 3 });
  t.equal(updates.length, 1, 'the op\'s state is carried');
  const f = await weft.compile([], one(outputs), { updates, workers: 0 });
  const first = list(await f());
  t.equal(new Set(first).size, 3, 'three draws');
  t.notSame(list(await f()), first, 'the next call continues from the last state');
});

t.test('test_grad_numeric_shared (pytensor tests/scan/test_basic.py): a step that returns [[], updates]', async (t) => {
  const sharedVar = weft.shared(1, { dtype: 'float32', name: 'sv' });
  const { outputs, updates } = weft.scan({ fn: () => [[], new Map([[sharedVar, sharedVar.add(1)]])] as const, nSteps: 10 });
  t.same(outputs, [], 'no outputs');
  t.equal(updates.length, 1, 'one update');
  t.equal(updates[0]![0], sharedVar);
  const cost = updates[0]![1];
  const fgrad = await weft.compile([], [weft.grad(cost, sharedVar), cost], { workers: 0 });
  const [g, last] = await fgrad();
  near(t, g!, 1, 0, 'd (s + 10) / ds');
  near(t, last!, 11, 0, 'the value after 10 steps');
  // The same with the updates as a list of pairs.
  const counter = weft.shared(0, { dtype: 'float64', name: 'counter' });
  const pairs = weft.scan({ fn: () => [[], [[counter, counter.add(2)]]] as const, nSteps: 3 });
  t.same(pairs.outputs, []);
  const step = await weft.compile([], [], { updates: pairs.updates, workers: 0 });
  await step();
  t.equal(weft.tolist(counter.getValue()), 6, 'the counter went up by 2 per step');
});

t.test('test_only_shared_no_input_no_output and test_eliminate_nonseqs (pytensor tests/scan/test_basic.py): outputs and updates from non-sequences only', async (t) => {
  const state = weft.shared(0.75, { dtype: 'float64', name: 'vstate' });
  const nSteps = pt.scalar('nstep', 'int32');
  const doubling = weft.scan({ fn: () => new Map([[state, state.mul(2)]]), nSteps });
  const thisF = await weft.compile([nSteps], [], { updates: doubling.updates, workers: 0 });
  await thisF(3);
  near(t, state.getValue(), 0.75 * 2 ** 3, 0, 'test_only_shared_no_input_no_output');

  const W = pt.scalar('W');
  const sh = weft.shared(2, { dtype: 'float64', name: 'sh' });
  const x1 = pt.vector('x1');
  const x2 = pt.scalar('x2');
  const { outputs, updates } = weft.scan({
    fn: (...args: TV[]) => {
      const w = args[args.length - 1]!;
      return [[w.add(1), w.add(2), w.add(3)], [[sh, w.add(4)]]] as const;
    },
    outputsInfo: [{ initial: x1, taps: [-1, -3] }, x2, null],
    nonSequences: W,
    nSteps: 5,
  });
  const f = await weft.compile([W, x1, x2], outputs, { updates, workers: 0 });
  const vw = 0.375;
  const [X1, X2, X3] = await f(vw, [0, 0, 0], 0);
  near(t, X1!, Array(5).fill(vw + 1), 0, 'mit-sot');
  near(t, X2!, Array(5).fill(vw + 2), 0, 'sit-sot');
  near(t, X3!, Array(5).fill(vw + 3), 0, 'nit-sot');
  near(t, sh.getValue(), vw + 4, 0, 'shared');
});

t.test('serialization: a scan whose non-sequences are a computation and a draw round-trips with them as inputs', async (t) => {
  const V = pt.matrix('V');
  const orig = pt.vector('orig');
  const W = orig.add(2);
  W.name = 'W';
  const stream = new weft.RandomStream(77);
  const noise = stream.uniform([3], { name: 'noise' });
  const { outputs } = weft.scan({ fn: (v: TV, w: TV, e: TV) => [v.mul(w), e], sequences: V, nonSequences: [W, noise] });
  const [prod, rows] = many(outputs);
  const json = weft.serialize([prod!, rows!, W]);
  const copy = weft.deserialize(json);
  if (copy.kind !== 'variables') throw new Error('expected a variables document');
  t.equal(weft.serialize(copy.outputs), json, 'the copy serializes to the same document');
  const [cProd, cRows, cW] = copy.outputs as TV[];
  const node = cProd!.owner!;
  t.ok(node.op instanceof weft.ScanOp, 'a Scan again');
  t.ok(node.inputs.includes(cW!), 'the computed non-sequence is an input of the copied node');
  t.ok(
    node.inputs.some((v) => v.name === 'noise'),
    'the draw is an input of the copied node',
  );
  const cV = copy.inputs.find((v) => v.name === 'V') as TV;
  const cOrig = copy.inputs.find((v) => v.name === 'orig') as TV;
  const f = await weft.compile([V, orig], [prod!, rows!], { workers: 0 });
  const g = await weft.compile([cV, cOrig], [cProd!, cRows!], { workers: 0 });
  const v = [[1, 2, 3], [4, 5, 6]];
  const [p1, r1] = await f(v, [0, 1, 2]);
  const [p2, r2] = await g(v, [0, 1, 2]);
  near(t, p1!, [[2, 6, 12], [8, 15, 24]], 0);
  t.same(weft.tolist(p2!), weft.tolist(p1!), 'the copy computes the same');
  const drawn = weft.tolist(r2!) as number[][];
  t.same(drawn[1], drawn[0], 'the copy draws once per call, not once per step');
  t.same(weft.tolist(r1!), weft.tolist(r2!), 'the same draw as the original (the state is copied)');
  // And a compile with W itself as an input (PyTensor's test_bugFunctioProvidesIntermediateNodesAsInputs) works on the copy.
  const h = await weft.compile([cV, cW!], cProd!, { workers: 0 });
  near(t, await h(v, [1, 1, 1]), v, 0);
});

t.test('a pool of 2 workers gives the bits of the calling thread for these scans', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const seq = pt.matrix('seq');
  const outInit = pt.matrix('outInit');
  const nonSeq = pt.vector('nonSeq');
  const W = nonSeq.mul(2);
  const outs = duplicated(seq, outInit, W, (a, b, c) => a.add(b).mul(c).tanh());
  const wrt = [seq, outInit, nonSeq];
  const outsAndGrads = [...outs, ...weft.grad(outs[0]!.sum().add(outs[1]!.sum()), wrt)];
  const r = rng(2);
  const values = [r.uniform([40, 3]), r.uniform([3, 3]), r.uniform([3])];
  const a = await (await weft.compile(wrt, outsAndGrads, { workers: 0 }))(...values);
  const b = await (await weft.compile(wrt, outsAndGrads, { pool }))(...values);
  a.forEach((x, i) => t.same(Array.from(b[i]!.data), Array.from(x.data), `output ${i}`));
});

t.teardown(() => weft.shutdown());
