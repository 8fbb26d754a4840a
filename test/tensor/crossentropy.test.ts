// categoricalCrossentropy (probabilities or integer labels) and binaryCrossentropy (issue 14),
// after PyTensor's test_nnet.py (test_categorical_crossentropy, test_binary_crossentropy and the
// crossentropy_softmax stabilizations): values, labels equal to their one-hot rows, finite losses
// and gradients for softmax and sigmoid outputs of huge logits (the rewrites' stable forms),
// verifyGrad, inferShape, 2 workers, bad inputs.
import t from 'tap';
import { pt, rng, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
const r = rng(1618);

t.test('categoricalCrossentropy: values, integer labels as their one-hot rows, higher ranks', async (t) => {
  const p = pt.matrix('p');
  const q = pt.matrix('q');
  const y = pt.vector('y', 'int32');
  const probs = [[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]];
  const labels = [1, 2];
  const oneHot = [[0, 1, 0], [0, 0, 1]];
  const byLabel = await weft.compile([p, y], pt.categoricalCrossentropy(p, y));
  const byRows = await weft.compile([p, q], pt.categoricalCrossentropy(p, q));
  const want = [-Math.log(0.5), -Math.log(0.8)];
  t.same(Array.from((await byLabel(probs, labels)).data), want, 'labels');
  t.same(Array.from((await byRows(probs, oneHot)).data), want, 'one-hot rows');
  const soft = [[0.5, 0.25, 0.25], [0.25, 0.25, 0.5]];
  const mixed = (await byRows(probs, soft)).data;
  t.ok(Math.abs(mixed[0]! + (0.5 * Math.log(0.2) + 0.25 * Math.log(0.5) + 0.25 * Math.log(0.3))) < 1e-15, 'a soft target');
  const p3 = pt.tensor3('p3');
  const y2 = pt.matrix('y2', 'int32');
  const out = await (await weft.compile([p3, y2], pt.categoricalCrossentropy(p3, y2)))([[[0.5, 0.5], [0.9, 0.1]], [[0.3, 0.7], [0.2, 0.8]]], [[0, 1], [1, 0]]);
  t.same(out.shape, [2, 2]);
  t.same(Array.from(out.data), [-Math.log(0.5), -Math.log(0.1), -Math.log(0.7), -Math.log(0.2)], 'batches of rows');
  const v = pt.vector('v');
  const i = pt.scalar('i', 'int32');
  t.equal((await (await weft.compile([v, i], pt.categoricalCrossentropy(v, i)))([0.25, 0.75], 1)).data[0], -Math.log(0.75), 'one distribution');
});

t.test('of a softmax: the stable form (logSoftmax), finite for huge logits, gradient softmax - onehot (crossentropy_softmax_1hot)', async (t) => {
  const x = pt.matrix('x');
  const y = pt.vector('y', 'int32');
  const loss = pt.categoricalCrossentropy(pt.softmax(x), y);
  const fn = await weft.compile([x, y], loss);
  t.ok(fn.fgraph.toposort().some((n) => String(n.op).startsWith('LogSoftmax')), `log(softmax) became logSoftmax (${fn.fgraph.toposort().map((n) => String(n.op)).join(', ')})`);
  const huge = [[1000, -1000, 0], [0, 800, -800]];
  const got = Array.from((await fn(huge, [1, 1])).data);
  t.same(got, [2000, 0], 'no inf: 2000 and 0');
  const g = weft.grad(loss.sum(), x) as TV;
  const gfn = await weft.compile([x, y], g);
  const gv = Array.from((await gfn(huge, [1, 1])).data);
  t.same(gv, [1, -1, 0, 0, 0, 0], 'softmax minus the one-hot rows');
  const xv = r.normal([4, 5]);
  const labels = pt.constant([0, 4, 2, 2], { dtype: 'int32' });
  await weft.verifyGrad((a: TV) => pt.categoricalCrossentropy(pt.softmax(a), labels), [xv], { rng: rng(1) });
  const q = pt.constant([[0.1, 0.2, 0.3, 0.2, 0.2], [1, 0, 0, 0, 0], [0, 0, 0.5, 0.5, 0], [0, 0, 0, 0, 1]]);
  await weft.verifyGrad((a: TV) => pt.categoricalCrossentropy(pt.softmax(a), q), [xv], { rng: rng(2) });
  await weft.checkInferShape([x, y], [loss], [xv, weft.ndarray(new Int32Array([0, 4, 2, 2]), [4])]);
});

t.test('binaryCrossentropy: values, of a sigmoid the softplus form (finite for huge logits), gradients', async (t) => {
  const o = pt.vector('o');
  const tv = pt.vector('t');
  const fn = await weft.compile([o, tv], pt.binaryCrossentropy(o, tv));
  const got = Array.from((await fn([0.9, 0.2, 0.5], [1, 0, 0.5])).data);
  t.same(got, [-Math.log(0.9), -Math.log(0.8), -Math.log(0.5)]);
  const z = pt.vector('z');
  const loss = pt.binaryCrossentropy(pt.sigmoid(z), tv);
  const stable = await weft.compile([z, tv], loss);
  t.ok(stable.fgraph.toposort().some((n) => /softplus/.test(String(n.op))), `written with softplus (${stable.fgraph.toposort().map((n) => String(n.op)).join(', ')})`);
  const big = Array.from((await stable([800, -800, 0], [0, 1, 1])).data);
  t.same(big, [800, 800, Math.LN2], 'no inf');
  const g = Array.from((await (await weft.compile([z, tv], weft.grad(loss.sum(), z) as TV))([800, -800, 0], [0, 1, 1])).data);
  t.same(g, [1, -1, -0.5], 'sigmoid(z) - t');
  await weft.verifyGrad((a: TV) => pt.binaryCrossentropy(pt.sigmoid(a), pt.constant([0, 1, 0.3, 1, 0])), [r.normal([5])], { rng: rng(3) });
  await weft.verifyGrad((a: TV) => pt.binaryCrossentropy(a, pt.constant([0, 1, 0.3])), [[0.2, 0.6, 0.9]], { rng: rng(4) });
});

t.test('on 2 workers: the bits of the calling thread', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.matrix('x');
  const y = pt.vector('y', 'int32');
  const loss = pt.categoricalCrossentropy(pt.softmax(x), y).mean();
  const g = weft.grad(loss, x) as TV;
  const xv = r.normal([2048, 64]);
  const yv = Int32Array.from({ length: 2048 }, (_, k) => (k * 37) % 64);
  const [a0, a1] = (await (await weft.compile([x, y], [loss, g], { workers: 0 }))(xv, yv)) as weft.NdArray[];
  const [b0, b1] = (await (await weft.compile([x, y], [loss, g], { pool }))(xv, yv)) as weft.NdArray[];
  t.ok(Object.is(a0!.data[0], b0!.data[0]), 'the loss');
  t.ok(a1!.data.every((v, k) => Object.is(v, b1!.data[k])), 'its gradient');
});

t.test('bad inputs: the exact errors', async (t) => {
  const p = pt.matrix('p');
  await throwsExactly(t, () => pt.categoricalCrossentropy(p, pt.vector('f')), TypeError, 'categoricalCrossentropy: labels with one axis fewer than p must be integers, got f (TensorType(float64, (?,)))');
  await throwsExactly(t, () => pt.categoricalCrossentropy(p, pt.tensor3('q')), TypeError, 'categoricalCrossentropy: the true distribution q (TensorType(float64, (?, ?, ?))) must have the 2 axes of p or 1 (integer labels)');
  await throwsExactly(t, () => pt.categoricalCrossentropy(pt.scalar('s'), 1), TypeError, 'categoricalCrossentropy: the coding distribution must have a class axis, got s (TensorType(float64, ()))');
});

t.teardown(() => weft.shutdown());
