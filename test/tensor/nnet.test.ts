// softmax, logSoftmax, SoftmaxGrad and relu: values against plain-JS lane arithmetic for every
// axis, float32 and float64, integer inputs and strided values, exact results at extreme
// inputs, inferShape, gradients (first and second order), Rop, bad input, and the kernels' ranges.
import ndarray from 'ndarray';
import t, { type Test } from 'tap';
import { softmaxInto } from '../../src/kernels/softmax.js';
import { LogSoftmax, Softmax, SoftmaxGrad } from '../../src/tensor/nnet/nnet.js';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

type Nested = number | Nested[];

interface Dense {
  readonly shape: readonly number[];
  readonly values: readonly number[];
}

function flat(x: Nested): number[] {
  return Array.isArray(x) ? x.flatMap(flat) : [x];
}

function dense(a: weft.NdArray): Dense {
  return { shape: [...a.shape], values: flat(weft.tolist(a) as Nested) };
}

/** `f` applied to every lane along `axis` (a lane's values in order, giving new values). */
function perLane(x: Dense, axis: number, f: (lane: number[]) => number[]): Dense {
  const shape = x.shape;
  const n = shape[axis]!;
  let inner = 1;
  for (let a = axis + 1; a < shape.length; a++) inner *= shape[a]!;
  let outer = 1;
  for (let a = 0; a < axis; a++) outer *= shape[a]!;
  const out = new Array<number>(x.values.length);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const at = (j: number) => (o * n + j) * inner + i;
      const lane = [...Array(n).keys()].map((j) => x.values[at(j)]!);
      f(lane).forEach((v, j) => (out[at(j)] = v));
    }
  }
  return { shape, values: out };
}

function refSoftmax(lane: number[]): number[] {
  const m = Math.max(...lane);
  const e = lane.map((v) => Math.exp(v - m));
  const s = e.reduce((p, q) => p + q, 0);
  return e.map((v) => v / s);
}

function refLogSoftmax(lane: number[]): number[] {
  const m = Math.max(...lane);
  const s = lane.reduce((p, v) => p + Math.exp(v - m), 0);
  return lane.map((v) => v - m - Math.log(s));
}

function closeTo(t: Test, actual: weft.NdArray, want: Dense, tol: number, msg: string): void {
  t.same(actual.shape, want.shape, `${msg}: shape`);
  const got = dense(actual).values;
  const bad: string[] = [];
  want.values.forEach((w, i) => {
    if (!(Math.abs(got[i]! - w) <= tol * Math.max(1, Math.abs(w))) && bad.length < 5) bad.push(`[${i}] got ${got[i]}, expected ${w}`);
  });
  t.same(bad, [], `${msg} within ${tol}`);
}

function typeOf(shape: readonly number[], dtype: weft.Dtype = 'float64', name = 'x'): weft.pt.TensorVariable {
  return pt.tensor({ shape: shape.map((d) => (d === 1 ? 1 : null)), dtype, name });
}

t.test('softmax and logSoftmax along every axis, float32 and float64', async (t) => {
  const r = rng(30);
  const shapes = [[5], [3, 4], [2, 3, 4], [4, 1], [1, 4], [2, 0, 3], [3, 70]];
  for (const dtype of ['float64', 'float32'] as const) {
    const tol = dtype === 'float32' ? 1e-6 : 1e-14;
    for (const shape of shapes) {
      const value = r.normal(shape, { dtype, std: 3 });
      const x = typeOf(shape, dtype);
      for (let axis = -shape.length; axis < shape.length; axis++) {
        const pos = axis < 0 ? axis + shape.length : axis;
        const sm = await run([x], pt.softmax(x, axis), [value]);
        t.equal(sm.data.constructor, dtype === 'float32' ? Float32Array : Float64Array, `${dtype} storage`);
        closeTo(t, sm, perLane(dense(value), pos, refSoftmax), tol, `softmax ${dtype} [${shape}] axis ${axis}`);
        const ls = await run([x], pt.logSoftmax(x, axis), [value]);
        closeTo(t, ls, perLane(dense(value), pos, refLogSoftmax), tol, `logSoftmax ${dtype} [${shape}] axis ${axis}`);
      }
    }
  }
  const m = pt.matrix('m');
  near(t, await run([m], pt.softmax(m), [[[0, Math.log(3)]]]), [[0.25, 0.75]], 1e-15, 'default axis is the last');
  near(t, await run([m], pt.logSoftmax(m), [[[0, Math.log(3)]]]), [[Math.log(0.25), Math.log(0.75)]], 1e-15);
});

t.test('extreme inputs are exact: no overflow, no lost terms', async (t) => {
  for (const dtype of ['float64', 'float32'] as const) {
    const v = pt.vector('v', dtype);
    near(t, await run([v], pt.softmax(v), [[1000, 0]]), [1, 0], 0, `${dtype} softmax [1000, 0]`);
    near(t, await run([v], pt.logSoftmax(v), [[0, -1000]]), [0, -1000], 0, `${dtype} logSoftmax [0, -1000]`);
    near(t, await run([v], pt.logSoftmax(v), [[1000, 0]]), [0, -1000], 0, `${dtype} logSoftmax [1000, 0]`);
    near(t, await run([v], pt.softmax(v), [[-1000, -1000]]), [0.5, 0.5], 0, `${dtype} softmax [-1000, -1000]`);
    near(t, await run([v], pt.softmax(v), [[3]]), [1], 0, `${dtype} softmax of one element`);
  }
  const v = pt.vector('v');
  near(t, await run([v], pt.logSoftmax(v), [[1000, 1000]]), [-Math.LN2, -Math.LN2], 1e-16);
  near(t, await run([v], pt.softmax(v), [[-Infinity, 0]]), [0, 1], 0, '-Infinity gets probability 0');
  const long = await run([v], pt.softmax(v), [Float64Array.from({ length: 1000 }, (_, i) => i / 100)]);
  const total = Array.from(long.data).reduce((p, q) => p + q, 0);
  t.ok(Math.abs(total - 1) < 1e-14, `a long lane sums to 1 (${total})`);
});

t.test('integer inputs give floats; strided values', async (t) => {
  const i32 = pt.matrix('i', 'int32');
  const i8 = pt.matrix('j', 'int8');
  t.equal(pt.softmax(i32).dtype, 'float64');
  t.equal(pt.softmax(i8).dtype, 'float32');
  t.equal(pt.logSoftmax(i8).dtype, 'float32');
  const ints = [[1, 2, 3], [0, 0, 0]];
  closeTo(t, await run([i32], pt.softmax(i32), [ints]), perLane({ shape: [2, 3], values: ints.flat() }, 1, refSoftmax), 1e-15, 'int32');
  closeTo(t, await run([i8], pt.logSoftmax(i8, 0), [ints]), perLane({ shape: [2, 3], values: ints.flat() }, 0, refLogSoftmax), 1e-6, 'int8');

  const r = rng(31);
  const value = r.normal([4, 6]);
  const x = pt.matrix('x');
  const transposedRef = (f: (lane: number[]) => number[], axis: number): Dense => {
    const d = dense(value.transpose(1, 0));
    return perLane(d, axis, f);
  };
  closeTo(t, await run([x], pt.softmax(x.T), [value]), transposedRef(refSoftmax, 1), 1e-14, 'softmax of x.T');
  closeTo(t, await run([x], pt.logSoftmax(x.T, 0), [value]), transposedRef(refLogSoftmax, 0), 1e-14, 'logSoftmax of x.T');
  const data = Float64Array.from({ length: 24 }, (_, i) => Math.sin(i));
  const reversed = ndarray(data, [4, 3], [-3, 2], 18);
  closeTo(t, await run([x], pt.softmax(x), [reversed]), perLane(dense(reversed), 1, refSoftmax), 1e-14, 'a reversed, strided value');
  closeTo(t, await run([x], pt.softmax(x, 0), [reversed]), perLane(dense(reversed), 0, refSoftmax), 1e-14, 'along axis 0');
});

t.test('relu', async (t) => {
  const v = pt.vector('v');
  near(t, await run([v], pt.relu(v), [[-2, -0.5, 0, 0.5, 3, NaN, -Infinity, Infinity]]), [0, 0, 0, 0.5, 3, 0, 0, Infinity]);
  const i = pt.vector('i', 'int32');
  t.equal(pt.relu(i).dtype, 'int32', 'integers stay integers');
  near(t, await run([i], pt.relu(i), [[-3, 0, 4]]), [0, 0, 4]);
  const f = pt.vector('f', 'float32');
  t.equal(pt.relu(f).dtype, 'float32');
  near(t, await run([v], weft.grad(pt.relu(v).sum(), v), [[-1, 0, 2]]), [0, 0, 1], 0, 'the gradient is 0 at 0');
  const away = ndarray(Float64Array.from([-1.5, -0.3, 0.4, 2, 0.7, -0.9]), [2, 3]);
  await weft.verifyGrad((x) => pt.relu(x), [away]);
  await weft.checkRop((x) => pt.relu(x), [away]);
});

t.test('inferShape', async (t) => {
  const r = rng(32);
  const x = pt.tensor3('x');
  const value = r.normal([2, 3, 4]);
  t.equal(await weft.checkInferShape([x], [pt.softmax(x, 1)], [value], Softmax), 1);
  t.equal(await weft.checkInferShape([x], [pt.logSoftmax(x, 0)], [value], LogSoftmax), 1);
  const y = pt.tensor3('y');
  t.equal(await weft.checkInferShape([x, y], [new SoftmaxGrad(2).call(x, y)], [value, r.normal([2, 3, 4])], SoftmaxGrad), 1);
  const s = pt.tensor({ shape: [2, null, 4], name: 's' });
  t.same(new SoftmaxGrad(1).call(x, s).type.shape, [2, null, 4], 'static lengths come from either input');
});

t.test('gradients', async (t) => {
  const r = rng(33);
  await weft.verifyGrad((x) => pt.softmax(x), [r.normal([3, 5])]);
  await weft.verifyGrad((x) => pt.softmax(x, 0), [r.normal([3, 5])]);
  await weft.verifyGrad((x) => pt.softmax(x, 1), [r.normal([2, 3, 4])]);
  await weft.verifyGrad((x) => pt.softmax(x), [r.normal([6])]);
  await weft.verifyGrad((x) => pt.softmax(x), [r.normal([3, 5], { dtype: 'float32' })]);
  await weft.verifyGrad((x) => pt.logSoftmax(x), [r.normal([3, 5])]);
  await weft.verifyGrad((x) => pt.logSoftmax(x, 0), [r.normal([2, 3, 4])]);
  await weft.verifyGrad((x) => pt.logSoftmax(x), [r.normal([3, 5], { dtype: 'float32' })]);
  await weft.verifyGrad((dy, sm) => new SoftmaxGrad(1).call(dy, sm), [r.normal([3, 4]), r.uniform([3, 4])]);
  await weft.verifyGrad((dy, sm) => new SoftmaxGrad(0).call(dy, sm), [r.normal([3, 4]), r.uniform([3, 4])]);
  // Cross-entropy through logSoftmax, and the second derivative through SoftmaxGrad.
  const labels = r.uniform([4, 3]);
  await weft.verifyGrad((x) => pt.logSoftmax(x).mul(labels).sum({ axis: 1 }).neg(), [r.normal([4, 3])]);
  await weft.verifyGrad((x) => weft.grad(pt.softmax(x).mul(labels).sum(), x), [r.normal([4, 3])]);

  const x = pt.matrix('x');
  const g = weft.grad(pt.softmax(x).mul(pt.matrix('w')).sum(), x);
  t.ok(weft.ioToposort([x], [g]).some((n) => n.op instanceof SoftmaxGrad), 'the gradient of softmax is one SoftmaxGrad node');
  // d/dx sum(softmax(x) * w) on one lane is sm * (w - sum(w * sm)): check against known numbers.
  const w = pt.matrix('w');
  const dot = 1 * 0.25 + 3 * 0.75;
  near(t, await run([x, w], weft.grad(pt.softmax(x).mul(w).sum(), x), [[[0, Math.log(3)]], [[1, 3]]]),
    [[0.25 * (1 - dot), 0.75 * (3 - dot)]], 1e-15);
});

t.test('Rop', async (t) => {
  const r = rng(34);
  await weft.checkRop((x) => pt.softmax(x), [r.normal([3, 5])]);
  await weft.checkRop((x) => pt.softmax(x, 0), [r.normal([2, 3, 4])]);
  await weft.checkRop((x) => pt.logSoftmax(x), [r.normal([3, 5])]);
  await weft.checkRop((x) => pt.logSoftmax(x, 1), [r.normal([2, 3, 4])]);
  await weft.checkRop((dy, sm) => new SoftmaxGrad(1).call(dy, sm), [r.normal([3, 4]), r.uniform([3, 4])]);
  t.pass('Rop matches finite differences and Lop');
});

t.test('bad input', async (t) => {
  await throwsExactly(t, () => pt.softmax(pt.scalar('s')), TypeError,
    'softmax: the input s (TensorType(float64, ())) is 0-d; softmax normalizes along an axis, so it needs at least one');
  await throwsExactly(t, () => pt.logSoftmax(pt.matrix('m'), 2), RangeError,
    'logSoftmax: axis 2 is out of range for m (TensorType(float64, (?, ?))); the axes are -2..1');
  await throwsExactly(t, () => pt.softmax(pt.matrix('m'), 0.5), RangeError,
    'softmax: axis 0.5 is out of range for m (TensorType(float64, (?, ?))); the axes are -2..1');
  await throwsExactly(t, () => new Softmax(-1), RangeError,
    'Softmax: the axis must be a non-negative integer, got -1 (the functions softmax and logSoftmax accept negative axes)');
  await throwsExactly(t, () => new Softmax(2).call(pt.matrix('m')), TypeError,
    'Softmax{axis=2}: the input m (TensorType(float64, (?, ?))) has 2 axes; axis 2 does not exist');
  await throwsExactly(t, () => new SoftmaxGrad(0).call(pt.matrix('g'), pt.tensor({ shape: [null, null, null], name: 's' })),
    weft.ShapeMismatchError, 'SoftmaxGrad{axis=0}: the gradient g (TensorType(float64, (?, ?))) and the softmax s (TensorType(float64, (?, ?, ?))) must have one shape');
  await throwsExactly(t, () => new SoftmaxGrad(0).call(pt.tensor({ shape: [2, 3], name: 'g' }), pt.tensor({ shape: [2, 4], name: 's' })),
    weft.ShapeMismatchError, 'SoftmaxGrad{axis=0}: the gradient g (TensorType(float64, (2, 3))) and the softmax s (TensorType(float64, (2, 4))) must have one shape');
  await throwsExactly(t, () => new SoftmaxGrad(0).call(pt.matrix('g', 'int32'), pt.matrix('s')), TypeError,
    'SoftmaxGrad{axis=0}: input 0 g (TensorType(int32, (?, ?))) must be float32 or float64');
  const g = pt.matrix('g');
  const s = pt.matrix('s');
  await throwsExactly(t, () => run([g, s], new SoftmaxGrad(1).call(g, s), [rng(1).normal([2, 3]), rng(2).normal([2, 4])]), weft.NodeError,
    'SoftmaxGrad{axis=1}: the gradient has shape [2, 3] but the softmax has shape [2, 4]' +
      '\n  in node 0: SoftmaxGrad{axis=1}(g, s)\n  input values: float64 [2, 3], float64 [2, 4]');
});

t.test('softmax kernel: lane ranges add up to the whole, bitwise', (t) => {
  const value = rng(35).normal([3, 5, 4]);
  for (const axis of [0, 1, 2]) {
    const lanes = (3 * 5 * 4) / value.shape[axis]!;
    const whole = { data: new Float64Array(60), offset: 0, shape: [3, 5, 4], stride: [20, 4, 1] };
    softmaxInto(value, axis, whole);
    const parts = { data: new Float64Array(60).fill(NaN), offset: 0, shape: [3, 5, 4], stride: [20, 4, 1] };
    const cut = [0, 1, Math.floor(lanes / 2), lanes];
    for (let i = 0; i < 3; i++) softmaxInto(value, axis, parts, { start: cut[i]!, end: cut[i + 1]! });
    t.same(Array.from(parts.data), Array.from(whole.data), `axis ${axis}: ${lanes} lanes in three ranges`);
  }
  t.end();
});
