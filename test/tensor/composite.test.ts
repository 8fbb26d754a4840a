// Composite as an op, built by hand from a CompositeScalar: values against plain JS arithmetic
// (float64, float32 and integer wrapping of intermediates, shared steps, broadcasting, strided
// and 0-d inputs), inferShape, verifyGrad, checkRop, identity (equal structures give equal ops,
// the props key) and bad input with exact messages.
import t, { type Test } from 'tap';
import { Composite, CompositeScalar, type CompositeStep } from '../../src/tensor/elemwise/composite.js';
import * as S from '../../src/tensor/scalar/catalog.js';
import type { Dtype } from '../../src/kernels/dtype.js';
import { pt, rng, run, throwsExactly, weft } from '../helpers.js';
import { exp32, tanh32 } from '../../src/kernels/vmath/float32.js';
import * as vmath from '../../src/kernels/vmath/functions.js';

type Nested = number | Nested[];
const flat = (x: Nested): number[] => (Array.isArray(x) ? x.flatMap(flat) : [x]);
const values = (a: weft.NdArray): number[] => flat(weft.tolist(a) as Nested);
type TV = weft.pt.TensorVariable;

function exact(t: Test, got: weft.NdArray, want: readonly number[], msg: string): void {
  const g = values(got);
  t.equal(g.length, want.length, `${msg}: size`);
  const bad = want.map((v, i) => (Object.is(g[i], v) ? '' : `[${i}] ${g[i]} vs ${v}`)).filter((s) => s !== '');
  t.same(bad.slice(0, 5), [], msg);
}

/** exp(i0) * i1 + tanh(i2) in `dtype`. */
function expMulTanh(dtype: Dtype): Composite {
  const steps: CompositeStep[] = [
    { op: S.exp, args: [0], dtype },
    { op: S.mul, args: [3, 1], dtype },
    { op: S.tanh, args: [2], dtype },
    { op: S.add, args: [4, 5], dtype },
  ];
  return new Composite(new CompositeScalar([dtype, dtype, dtype], steps));
}

t.test('Composite: values in float64 and float32', async (t) => {
  for (const dtype of ['float64', 'float32'] as const) {
    const op = expMulTanh(dtype);
    t.equal(String(op), 'Composite{add(mul(exp(i0),i1),tanh(i2))}');
    const [x, y, w] = ['x', 'y', 'w'].map((n) => pt.matrix(n, dtype));
    const out = op.call(x, y, w) as TV;
    t.equal(out.dtype, dtype);
    const r = rng(4);
    const args = [r.normal([2, 3], { dtype }), r.normal([2, 3], { dtype }), r.normal([2, 3], { dtype })];
    const got = await run([x!, y!, w!], out, args, { mode: 'FAST_COMPILE' });
    const round = dtype === 'float32' ? Math.fround : (v: number) => v;
    const [a, b, c] = args.map(values);
    // weft's own exp and tanh (vmath), which every kernel uses: the unfused steps' bits.
    const e = dtype === 'float32' ? exp32 : vmath.exp;
    const th = dtype === 'float32' ? tanh32 : vmath.tanh;
    exact(t, got, a!.map((v, i) => round(round(round(e(v)) * b![i]!) + round(th(c![i]!)))), dtype);
  }
});

t.test('Composite: integer intermediates wrap, a shared step, mixed dtypes', async (t) => {
  // s0 = i0 + i1 (int8, wraps), s1 = s0 * s0 (reads s0 twice), s2 = s1 - i1.
  const steps: CompositeStep[] = [
    { op: S.add, args: [0, 1], dtype: 'int8' },
    { op: S.mul, args: [2, 2], dtype: 'int8' },
    { op: S.sub, args: [3, 1], dtype: 'int8' },
  ];
  const op = new Composite(new CompositeScalar(['int8', 'int8'], steps));
  t.equal(String(op), 'Composite{s0=add(i0,i1);s1=mul(s0,s0);s2=sub(s1,i1)}', 'shared steps print as a list');
  const a = pt.vector('a', 'int8');
  const b = pt.vector('b', 'int8');
  const av = [100, -100, 127, 5, 0];
  const bv = [100, -29, 1, 6, -128];
  const got = await run([a, b], op.call(a, b) as TV, [new Int8Array(av), new Int8Array(bv)]);
  t.equal(got.dtype, 'int8');
  const w8 = (v: number) => (v << 24) >> 24;
  exact(t, got, av.map((v, i) => { const s = w8(v + bv[i]!); return w8(w8(s * s) - bv[i]!); }), 'int8');

  // int32 product modulo 2^32, then uint8 from a comparison cast: mixed dtypes along the way.
  const steps2: CompositeStep[] = [
    { op: S.mul, args: [0, 1], dtype: 'int32' },
    { op: S.lt, args: [2, 1], dtype: 'bool' },
    { op: S.castTo('uint8'), args: [3], dtype: 'uint8' },
    { op: S.add, args: [4, 2], dtype: 'int32' },
  ];
  const op2 = new Composite(new CompositeScalar(['int32', 'int32'], steps2));
  const i = pt.vector('i', 'int32');
  const j = pt.vector('j', 'int32');
  const iv = [2 ** 30, 123456789, -5, 3];
  const jv = [7, 987654321, 3, 4];
  const got2 = await run([i, j], op2.call(i, j) as TV, [new Int32Array(iv), new Int32Array(jv)]);
  t.equal(got2.dtype, 'int32');
  exact(t, got2, iv.map((v, k) => { const p = Math.imul(v, jv[k]!); return ((p < jv[k]! ? 1 : 0) + p) | 0; }), 'int32 and bool');

  // float32 and int16 inputs: the sum is float32.
  const steps3: CompositeStep[] = [
    { op: S.add, args: [0, 1], dtype: 'float32' },
    { op: S.sqrt, args: [2], dtype: 'float32' },
  ];
  const op3 = new Composite(new CompositeScalar(['float32', 'int16'], steps3));
  const f = pt.vector('f', 'float32');
  const h = pt.vector('h', 'int16');
  const fv = new Float32Array([0.1, 2.5, 1e-7]);
  const hv = new Int16Array([3, -1, 30000]);
  exact(t, await run([f, h], op3.call(f, h) as TV, [fv, hv]), [...fv].map((v, k) => Math.fround(Math.sqrt(Math.fround(v + hv[k]!)))), 'float32 and int16');
});

t.test('Composite: broadcasting, strided, 0-d and empty inputs', async (t) => {
  const op = expMulTanh('float64');
  const m = pt.matrix('m');
  const row = pt.tensor({ shape: [1, null], name: 'row' });
  const s = pt.scalar('s');
  const r = rng(8);
  const mv = r.normal([3, 2]);
  const rv = r.normal([1, 3]);
  const out = op.call(m.T, row, s) as TV;
  t.same(out.type.shape, [null, null]);
  const got = await run([m, row, s], out, [mv, rv, 0.75]);
  t.same(got.shape, [2, 3]);
  const mf = values(mv);
  const rf = values(rv);
  const want: number[] = [];
  for (let i = 0; i < 2; i++) for (let j = 0; j < 3; j++) want.push(Math.exp(mf[j * 2 + i]!) * rf[j]! + Math.tanh(0.75));
  exact(t, got, want, 'broadcast and transposed');
  const a = pt.scalar('a');
  exact(t, await run([a], op.call(a, a, a) as TV, [0.5]), [Math.exp(0.5) * 0.5 + Math.tanh(0.5)], '0-d');
  const e = await run([m], op.call(m, m, m) as TV, [[[], [], []]]);
  t.same(e.shape, [3, 0], 'empty');
});

t.test('Composite: inferShape, grad and Rop', async (t) => {
  const op = expMulTanh('float64');
  const r = rng(13);
  const pts = [r.normal([3, 4]), r.normal([3, 4]), r.normal([3, 4])];
  const [x, y, w] = ['x', 'y', 'w'].map((n) => pt.matrix(n));
  t.equal(await weft.checkInferShape([x!, y!, w!], [op.call(x, y, w) as TV], pts, Composite), 1);
  await weft.verifyGrad((a, b, c) => op.call(a, b, c) as TV, pts);
  await weft.checkRop((a, b, c) => op.call(a, b, c) as TV, pts);
  // Broadcast inputs: the gradient is summed over the broadcast axis.
  const row = r.normal([1, 4]);
  await weft.verifyGrad((a, b, c) => op.call(a, b, c) as TV, [pts[0]!, row, pts[2]!]);
  // float32, and a composite with a shared step.
  const op32 = expMulTanh('float32');
  const p32 = [r.normal([2, 3], { dtype: 'float32' }), r.normal([2, 3], { dtype: 'float32' }), r.normal([2, 3], { dtype: 'float32' })];
  await weft.verifyGrad((a, b, c) => op32.call(a, b, c) as TV, p32);
  const shared = new Composite(
    new CompositeScalar(['float64', 'float64'], [
      { op: S.sin, args: [0], dtype: 'float64' },
      { op: S.mul, args: [2, 2], dtype: 'float64' },
      { op: S.mul, args: [3, 1], dtype: 'float64' },
    ]),
  );
  await weft.verifyGrad((a, b) => shared.call(a, b) as TV, [pts[0]!, pts[1]!]);
  await weft.checkRop((a, b) => shared.call(a, b) as TV, [pts[0]!, pts[1]!]);
  // The symbolic gradient of sin(a)^2 * b with respect to a is 2 sin(a) cos(a) b.
  const a = pt.vector('a');
  const b = pt.vector('b');
  const g = weft.grad(pt.sum(shared.call(a, b) as TV), a);
  const gv = await run([a, b], g, [[0.3, -1.2], [2, 0.5]]);
  const want = [0.3, -1.2].map((v, i) => 2 * Math.sin(v) * Math.cos(v) * [2, 0.5][i]!);
  const got = values(gv);
  t.ok(got.every((v, i) => Math.abs(v - want[i]!) < 1e-14), `gradient ${got} vs ${want}`);
});

t.test('Composite: gradient and Rop with an integer input', async (t) => {
  // exp(i * f) with i int8: d/df = i exp(i f); i gets no direction in Rop.
  const op = new Composite(
    new CompositeScalar(['int8', 'float64'], [
      { op: S.mul, args: [0, 1], dtype: 'float64' },
      { op: S.exp, args: [2], dtype: 'float64' },
    ]),
  );
  const i = pt.vector('i', 'int8');
  const f = pt.vector('f');
  const out = op.call(i, f) as TV;
  const iv = new Int8Array([2, -3]);
  const fv = [0.1, 0.2];
  const want = [0, 1].map((k) => iv[k]! * Math.exp(iv[k]! * fv[k]!));
  const g = await run([i, f], weft.grad(pt.sum(out), f), [iv, fv]);
  t.ok(values(g).every((v, k) => Math.abs(v - want[k]!) < 1e-15), `grad ${values(g)} vs ${want}`);
  const v = pt.vector('v');
  const rop = await run([i, f, v], weft.Rop(out, f, v) as TV, [iv, fv, [1, 0.5]]);
  const wantR = want.map((w, k) => w * [1, 0.5][k]!);
  t.ok(values(rop).every((x, k) => Math.abs(x - wantR[k]!) < 1e-15), `Rop ${values(rop)} vs ${wantR}`);
  await weft.checkRop((a) => op.call(pt.constant(new Int8Array([2, -3])), a) as TV, [rng(3).normal([2])]);
});

t.test('Composite: equal structures give equal ops, and the props key', async (t) => {
  const a = expMulTanh('float64');
  const b = expMulTanh('float64');
  t.not(a, b);
  t.ok(a.equals(b), 'equal');
  t.equal(a.key, b.key);
  t.same(a.props, ['scalarOp', 'inplacePattern']);
  t.equal(
    a.key,
    'Composite(scalarOp=scalar.composite[float64,float64,float64]{scalar.exp:float64(i0);scalar.mul:float64(s0,i1);' +
      'scalar.tanh:float64(i2);scalar.add:float64(s1,s2)};inplacePattern={})',
  );
  t.notOk(a.equals(expMulTanh('float32')), 'another dtype');
  const reordered = new Composite(
    new CompositeScalar(['float64', 'float64', 'float64'], [
      { op: S.exp, args: [0], dtype: 'float64' },
      { op: S.mul, args: [1, 3], dtype: 'float64' },
      { op: S.tanh, args: [2], dtype: 'float64' },
      { op: S.add, args: [4, 5], dtype: 'float64' },
    ]),
  );
  t.notOk(a.equals(reordered), 'operands in another order');
  // Equal ops on equal inputs merge into one node.
  const x = pt.vector('x');
  const fn = await weft.compile([x], pt.add(a.call(x, x, x) as TV, b.call(x, x, x) as TV), { mode: new weft.Mode({ excluding: ['fusion'] }) });
  t.equal(fn.fgraph.toposort().filter((n) => n.op instanceof Composite).length, 1, 'merged');
});

t.test('Composite: bad input', async (t) => {
  const op = expMulTanh('float64');
  await throwsExactly(t, () => op.call(pt.vector('x'), pt.vector('y')), TypeError,
    'Composite{add(mul(exp(i0),i1),tanh(i2))}: expected 3 inputs, got 2');
  await throwsExactly(t, () => op.call(pt.vector('x'), pt.vector('y', 'float32'), pt.vector('w')), TypeError,
    'Composite{add(mul(exp(i0),i1),tanh(i2))}: input 1 has dtype float32, the fused computation expects float64');
  await throwsExactly(t, () => new CompositeScalar(['float64'], []), TypeError,
    'CompositeScalar: no steps; a fused computation needs at least one');
  await throwsExactly(t, () => new CompositeScalar(['float64'], [{ op: S.exp, args: [0, 0], dtype: 'float64' }]), TypeError,
    'CompositeScalar: step 0 (exp) has 2 arguments; exp takes 1');
  await throwsExactly(t, () => new CompositeScalar(['float64'], [{ op: S.add, args: [], dtype: 'float64' }]), TypeError,
    'CompositeScalar: step 0 (add) has 0 arguments; add takes at least 1');
  await throwsExactly(t, () => new CompositeScalar(['float64'], [{ op: S.exp, args: [0], dtype: 'float64' }, { op: S.exp, args: [2], dtype: 'float64' }]), RangeError,
    'CompositeScalar: step 1 (exp) reads value 2; it may read values 0 to 1 (the 1 inputs, then the steps before it)');
  await throwsExactly(t, () => new CompositeScalar(['int8'], [{ op: S.exp, args: [0], dtype: 'float64' }]), TypeError,
    'CompositeScalar: step 0 (exp) has dtype float64, but exp of (int8) gives float32');
  await throwsExactly(t, () => new CompositeScalar(['float64', 'float64'], [{ op: S.and, args: [0, 1], dtype: 'float64' }]), TypeError,
    'CompositeScalar: step 0 (and): input 0 has dtype float64; and takes bool or integer inputs');
});
