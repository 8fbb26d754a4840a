// MakeVector: a vector from scalars (what shape(x) becomes once lifted). Values and dtypes
// (upcast to a common dtype, bools, none at all), inferShape, gradient, Rop, bad input.
import t from 'tap';
import { MakeVector, makeVector } from '../../src/tensor/shape/make-vector.js';
import { dataKind, near, pt, run, throwsExactly, weft } from '../helpers.js';

t.test('MakeVector: values and dtypes', async (t) => {
  const a = pt.scalar('a');
  const b = pt.scalar('b');
  const c = pt.scalar('c');
  const v = makeVector(a, b, c);
  t.equal(String(v.owner!.op), 'MakeVector');
  t.same(v.type.shape, [3]);
  t.equal(v.dtype, 'float64');
  near(t, await run([a, b, c], v, [1.5, -2, 1e-300]), [1.5, -2, 1e-300], 0);

  // int8 and int16 make int16; int8 and float32 make float32; plain numbers are weak.
  const i8 = pt.scalar('i8', 'int8');
  const i16 = pt.scalar('i16', 'int16');
  const f32 = pt.scalar('f32', 'float32');
  const w = makeVector(i8, i16);
  t.equal(w.dtype, 'int16');
  const wv = await run([i8, i16], w, [-128, 30000]);
  t.equal(dataKind(wv), 'Int16Array');
  near(t, wv, [-128, 30000], 0);
  const m = makeVector(i8, f32, 7);
  t.equal(m.dtype, 'float32');
  near(t, await run([i8, f32], m, [3, 0.5]), [3, 0.5, 7], 0);

  // bools stay bool; no scalars give an empty int32 vector.
  const p = pt.scalar('p', 'bool');
  const bv = await run([p], makeVector(p, p), [true]);
  t.equal(dataKind(bv), 'Uint8Array');
  t.same(weft.tolist(bv), [1, 1]);
  const empty = makeVector();
  t.equal(empty.dtype, 'int32');
  t.same(empty.type.shape, [0]);
  const ev = await run([], empty, []);
  t.same(ev.shape, [0]);
  // One op: every MakeVector is equal.
  t.ok(new MakeVector().equals(v.owner!.op));
});

t.test('MakeVector: inferShape, grad and Rop', async (t) => {
  const a = pt.scalar('a');
  const b = pt.scalar('b');
  t.equal(await weft.checkInferShape([a, b], [makeVector(a, b, a)], [1, 2], MakeVector), 1);
  await weft.verifyGrad((x, y) => pt.sum(pt.mul(makeVector(x, y, x), [1, 2, 3])), [0.5, -1.5]);
  await weft.verifyGrad((x, y) => makeVector(pt.exp(x), pt.mul(x, y)), [0.5, -1.5]);
  await weft.checkRop((x, y) => makeVector(x, pt.sqr(y)), [weft.pt.constant(0.5).data, weft.pt.constant(-1.5).data]);
  // d/da sum([a, b, a] * [1, 2, 3]) = 1 + 3, d/db = 2.
  const g = weft.grad(pt.sum(pt.mul(makeVector(a, b, a), [1, 2, 3])), [a, b]);
  const fn = await weft.compile([a, b], g, { onUnusedInput: 'ignore' });
  const [ga, gb] = await fn(0.5, 7);
  near(t, ga!, 4, 0);
  near(t, gb!, 2, 0);
});

t.test('MakeVector: bad input', async (t) => {
  await throwsExactly(t, () => makeVector(pt.scalar('a'), pt.vector('v')), TypeError,
    'MakeVector: input 1 (v) must be a scalar, got TensorType(float64, (?,))');
  await throwsExactly(t, () => makeVector([1, 2]), TypeError,
    'MakeVector: input 0 (TensorConstant{[1,2]}) must be a scalar, got TensorType(float64, (2,))');
});
