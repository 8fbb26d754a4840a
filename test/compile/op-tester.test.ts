// weft/testing's makeTester and makeBroadcastTester (PyTensor's testers for users' ops): the
// cases of a correct op pass under tap, each kind of case catches the fault it is for, and the
// tester's run() lists every failing case.
import t from 'tap';
import { CheckError, makeBroadcastTester, makeTester } from '../../src/testing.js';
import { pt, rng, weft } from '../helpers.js';

const r = rng(31);
const m = (rows: number, cols: number): weft.NdArray => r.normal([rows, cols]);

const addTester = makeBroadcastTester({
  name: 'add',
  op: (a, b) => pt.add(a!, b!),
  expected: (a, b) => (weft.tolist(a) as number[][]).map((row, i) => row.map((v, j) => v + (weft.tolist(b) as number[][])[i % b.shape[0]!]![j % b.shape[1]!]!)),
  good: { same_shapes: [m(3, 4), m(3, 4)], row_broadcast: [m(3, 4), m(1, 4)], float32: [weft.ndarray(new Float32Array([1.5, 2]), [1, 2]), weft.ndarray(new Float32Array([0.25, -1]), [1, 2])] },
  badBuild: { static_mismatch: { inputs: [m(3, 4), m(2, 4)], error: /cannot be broadcast together/ } },
  badRuntime: { runtime_mismatch: { inputs: [m(3, 4), m(2, 4)], error: /they differ on axis 0 \(3 vs 2\)/ } },
  grad: { point: [m(2, 3), m(2, 3)] },
  rop: { point: [m(2, 3), m(2, 3)] },
});

t.test('a correct op passes every case, one tap test each', async (t) => {
  t.same(
    addTester.cases.map((c) => c.name),
    [
      'add good same_shapes',
      'add good row_broadcast',
      'add good float32',
      'add good same_shapes (strided inputs)',
      'add good row_broadcast (strided inputs)',
      'add good float32 (strided inputs)',
      'add badBuild static_mismatch',
      'add badRuntime runtime_mismatch',
      'add grad point',
      'add rop point',
    ],
  );
  for (const c of addTester.cases) await t.resolves(c.run(), c.name);
});

t.test('with a pool, good cases also check the workers give the calling thread bits', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const big = r.normal([256, 512]);
  const tester = makeTester({ name: 'tanh', op: (x) => pt.tanh(x!), expected: (x) => (weft.tolist(x) as number[][]).map((row) => row.map(Math.tanh)), good: { big: [big] }, tol: 1e-15, pool });
  await t.resolves(tester.run());
});

t.test('each kind of case catches its fault, and run() lists them all', async (t) => {
  // A wrong expectation, a wrong gradient (the op's grad is doubled), errors that do not come.
  class Doubled extends weft.Op {
    override makeNode(x: unknown): weft.Apply {
      const v = pt.asTensorVariable(x as weft.TensorLike);
      return new weft.Apply(this, [v], [v.type.makeVariable()]);
    }
    override perform(_n: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
      return [weft.ndarray(Float64Array.from(x!.data as Float64Array, (v) => 2 * v), [...x!.shape])];
    }
    override grad(_i: readonly weft.pt.TensorVariable[], [gz]: readonly weft.pt.TensorVariable[]): weft.pt.TensorVariable[] {
      return [gz!.mul(4)];
    }
  }
  const tester = makeTester({
    name: 'doubled',
    op: (x) => new Doubled().call(x!),
    expected: (x) => (weft.tolist(x) as number[]).map((v) => 3 * v),
    good: { wrong_expectation: [weft.ndarray(new Float64Array([1, 2]), [2])] },
    badBuild: { never_fails: { inputs: [weft.ndarray(new Float64Array([1]), [1])], error: 'nope' } },
    badRuntime: { never_fails: { inputs: [weft.ndarray(new Float64Array([1]), [1])], error: 'nope' } },
    grad: { wrong_grad: [weft.ndarray(new Float64Array([1, 2]), [2])] },
    inferShape: false,
  });
  const [good, build, runtime, grad] = tester.cases;
  await t.rejects(good!.run(), new CheckError('doubled good wrong_expectation: [0] 2 (expected 3), [1] 4 (expected 6) (relative tolerance 1e-12)'));
  await t.rejects(build!.run(), new CheckError('doubled badBuild never_fails: the graph was built; expected it to fail with nope'));
  await t.rejects(runtime!.run(), new CheckError('doubled badRuntime never_fails: the call succeeded; expected it to fail with nope'));
  await t.rejects(grad!.run(), { name: 'GradientMismatchError' });
  const all = await tester.run().then(
    () => undefined,
    (e: Error) => e,
  );
  t.match(all?.message, /^4 of 4 cases failed:\ndoubled good wrong_expectation: CheckError: .*\ndoubled badBuild never_fails: .*\ndoubled badRuntime never_fails: .*\ndoubled grad wrong_grad: GradientMismatchError: /);
});

t.teardown(() => weft.shutdown());
