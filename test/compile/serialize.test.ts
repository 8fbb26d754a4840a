// serialize/deserialize round trips: for graphs that together use every tensor op codec, the
// copy compiles to a function whose outputs equal the original's bit for bit on seeded values,
// and serializing the copy gives the same document again. Values keep NaN, infinities, -0 and
// float32 bits; shared variables keep their stored values; OpFromGraph (shared, nested, inline,
// overrides), Map (jacobian, hessian) and compiled functions (a training loop with updates)
// round-trip; what cannot be written (asOp, function overrides, ops without a codec) is refused.
import t, { type Test } from 'tap';
import { AllocEmpty, allocEmpty } from '../../src/tensor/shape/alloc.js';
import { deepCopy, viewOf } from '../../src/tensor/shape/basic-ops.js';
import { tensorCodecNames } from '../../src/tensor/serialize/codecs.js';
import { Col2Im, Im2Col } from '../../src/tensor/nnet/im2col.js';
import { Composite, CompositeScalar } from '../../src/tensor/elemwise/composite.js';
import { Gemm } from '../../src/tensor/linalg/gemm.js';
import { tensordot } from '../../src/tensor/linalg/linalg.js';
import { makeVector } from '../../src/tensor/shape/make-vector.js';
import * as S from '../../src/tensor/scalar/catalog.js';
import { shapeI } from '../../src/tensor/shape/shape.js';
import { pt, rng, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
type Json = weft.Json;

/** Op types met in the documents of this file, to check at the end that every codec was used. */
const seen = new Set<string>();

function collectOpTypes(op: { type: string; props: Record<string, Json> }): void {
  seen.add(op.type);
  for (const k of ['lopOverrides', 'ropOverrides']) {
    const o = op.props[k];
    // An override is an op, or a traced one: { op, slots }.
    const nested = o && typeof o === 'object' && !Array.isArray(o) && 'slots' in o ? (o as Record<string, Json>).op : o;
    if (nested && typeof nested === 'object' && !Array.isArray(nested)) collectOpTypes(nested as { type: string; props: Record<string, Json> });
  }
}

function record(json: string): Record<string, Json> {
  const doc = JSON.parse(json) as Record<string, Json>;
  const graphs = [doc, ...(doc.graphs as Array<Record<string, Json>>)];
  for (const g of graphs) for (const n of g.nodes as Array<{ op: { type: string; props: Record<string, Json> } }>) collectOpTypes(n.op);
  return doc;
}

/** The free inputs of `outputs` in the order serialize lists them. */
function freeInputs(outputs: readonly TV[]): TV[] {
  return weft.graphInputs(outputs).filter((v) => !(v instanceof weft.Constant) && !(v instanceof weft.SharedVariable)) as TV[];
}

const flat = (x: unknown): number[] => (Array.isArray(x) ? x.flatMap(flat) : [x as number]);

/** Same shape, same storage class, and every element the same number (Object.is: -0 and NaN too). */
function sameBits(t: Test, a: weft.NdArray, b: weft.NdArray, msg: string): void {
  t.same(b.shape, a.shape, `${msg}: shape`);
  t.equal(b.data.constructor.name, a.data.constructor.name, `${msg}: dtype`);
  const x = weft.tolist(a);
  const y = weft.tolist(b);
  const fx = flat(x);
  const fy = flat(y);
  const bad = fx.map((v, i) => (Object.is(v, fy[i]) ? '' : `[${i}] ${v} vs ${fy[i]}`)).filter(Boolean);
  t.same(bad.slice(0, 5), [], `${msg}: bits`);
}

async function compileBoth(inputs: readonly TV[], outputs: readonly TV[], copyInputs: readonly TV[], copyOutputs: readonly TV[]) {
  const options = { workers: 0, onUnusedInput: 'ignore' as const };
  return [await weft.compile(inputs, outputs, options), await weft.compile(copyInputs, copyOutputs, options)] as const;
}

/**
 * serialize -> deserialize -> compile both -> equal outputs bit for bit on `values` (one per free
 * input, by variable); serializing the copy gives the same text. Returns the copy.
 */
async function roundTrip(t: Test, outputs: readonly TV[], values: ReadonlyMap<TV, unknown>, same = true): Promise<weft.DeserializedGraph> {
  const json = weft.serialize(outputs);
  record(json);
  const copy = weft.deserialize(json);
  if (copy.kind !== 'variables') throw new Error('expected a variables document');
  if (same) t.equal(weft.serialize(copy.outputs), json, 'the copy serializes to the same document');
  const inputs = freeInputs(outputs);
  t.same(copy.inputs.map((v) => v.name), inputs.map((v) => v.name), 'inputs by name, in order');
  t.same(copy.inputs.map((v) => String(v.type)), inputs.map((v) => String(v.type)), 'input types');
  const args = inputs.map((v) => {
    if (!values.has(v)) throw new Error(`no value for ${v}`);
    return values.get(v);
  });
  const [f1, f2] = await compileBoth(inputs, outputs, copy.inputs, copy.outputs);
  const r1 = (await f1(...(args as weft.InputValue[]))) as weft.NdArray[];
  const r2 = (await f2(...(args as weft.InputValue[]))) as weft.NdArray[];
  r1.forEach((a, i) => sameBits(t, a, r2[i]!, `output ${i} (${outputs[i]})`));
  return copy;
}

const r = rng(20240611);

t.test('element-wise ops of the catalog, casts, and mixed dtypes', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const i = pt.vector('i', 'int32');
  const j = pt.vector('j', 'int16');
  const b = pt.vector('b', 'bool');
  const xy = [x, y] as const;
  const unit = x.tanh();
  const outs: TV[] = [
    x.add(y, 1), x.sub(y), x.mul(y, x), x.trueDiv(y), x.intDiv(y), x.mod(y), x.abs().pow(y), x.neg(), x.abs(), x.sign(),
    x.exp(), x.expm1(), x.abs().log(), x.abs().log1p(), x.abs().log2(), x.abs().log10(), x.abs().sqrt(), x.sqr(),
    x.sin(), x.cos(), x.tan(), unit.arcsin(), unit.arccos(), x.arctan(), pt.arctan2(...xy), x.sinh(), x.cosh(), x.tanh(),
    pt.sigmoid(x), pt.softplus(x), pt.erf(x), pt.erfc(x), x.floor(), x.ceil(), x.round(), pt.clip(x, -0.5, 0.5),
    pt.maximum(...xy), pt.minimum(...xy), pt.where(pt.gt(x, 0), x, y), pt.eq(...xy), pt.neq(...xy), pt.lt(...xy),
    pt.le(...xy), pt.gt(...xy), pt.ge(...xy), pt.and(i, j), pt.or(i, j), pt.xor(i, j), pt.not(i), pt.and(b, pt.not(b)),
    x.astype('float32'), x.mul(100).astype('int8'), i.astype('bool'), i.add(j).mul(i), i.intDiv(j), i.mod(j), i.pow(2),
  ];
  const values = new Map<TV, unknown>([
    [x, r.normal([3, 4])],
    [y, r.uniform([3, 4], { low: 0.5, high: 2 })],
    [i, r.integers([4], -50, 50, 'int32')],
    [j, r.integers([4], 1, 7, 'int16')],
    [b, [true, false, true, true]],
  ]);
  await roundTrip(t, outs, values);
});

t.test('values: NaN, infinities, -0, subnormals and float32 bits, every integer dtype at its limits', async (t) => {
  const specials = [NaN, Infinity, -Infinity, -0, 0, 1e-45, 3.4028234663852886e38, -1.1754943508222875e-38, 0.1, -2.5];
  const c32 = pt.constant(Float32Array.from(specials), { name: 'c32' });
  const c64 = pt.constant(Float64Array.from([...specials, 5e-324, 1.7976931348623157e308, 0.1 + 0.2]), { name: 'c64' });
  const ints = (['int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32'] as const).map((d) => {
    const lo = d.startsWith('u') ? 0 : -(2 ** (Number(d.replace(/\D/g, '')) - 1));
    const hi = d.startsWith('u') ? 2 ** Number(d.replace(/\D/g, '')) - 1 : -lo - 1;
    return pt.constant([lo, hi, 0, 1], { dtype: d });
  });
  const flags = pt.constant([true, false, false, true]);
  const z = pt.vector('z', 'float32');
  const json = weft.serialize([c32, c64, z.mul(c32), ...ints, flags]);
  t.match(json, /"data":\["NaN","Infinity","-Infinity","-0",0,/, 'specials are spelled out');
  const copy = await roundTrip(t, [c32, c64, z.mul(c32), ...ints, flags], new Map([[z, r.normal([10], { dtype: 'float32' })]]));
  // The constants themselves, bit for bit.
  const bits = (v: TV): number[] => Array.from((v as unknown as weft.Constant<weft.TensorType, weft.NdArray>).data.data);
  t.same(new Uint32Array(Float32Array.from(bits(copy.outputs[0]!)).buffer), new Uint32Array(Float32Array.from(specials).buffer), 'float32 bits');
  t.ok(bits(copy.outputs[0]!).every((v, k) => Object.is(v, Math.fround(specials[k]!))), 'float32 values, -0 included');
  t.ok(bits(copy.outputs[1]!).every((v, k) => Object.is(v, bits(c64)[k])), 'float64 values, subnormals included');
  t.equal(copy.outputs[0]!.name, 'c32', 'constant names');
});

t.test('reductions and arg reductions', async (t) => {
  const x = pt.tensor3('x');
  const m = pt.matrix('m', 'int32');
  const outs: TV[] = [
    x.sum(), x.sum({ axis: [0, 2] }), x.prod({ axis: 1 }), x.max({ axis: -1 }), x.min({ axis: 0, keepdims: true }),
    pt.all(pt.gt(x, 0), { axis: 1 }), pt.any(pt.gt(x, 1)), pt.argmax(x, { axis: 2 }), pt.argmin(x, { axis: 0 }),
    pt.mean(x, { axis: 1 }), pt.var(x, { axis: 0 }), pt.std(x), m.sum({ axis: 0 }), m.prod(),
  ];
  await roundTrip(t, outs, new Map<TV, unknown>([[x, r.normal([2, 3, 4])], [m, r.integers([3, 2], -4, 5)]]));
});

t.test('shapes, joins, creation and indexing', async (t) => {
  const x = pt.matrix('x');
  const v = pt.vector('v');
  const n = pt.scalar('n', 'int32');
  const k = pt.scalar('k', 'int32');
  const [s0, s1] = pt.split(v, [2, 4]);
  const outs: TV[] = [
    x.T, x.dimshuffle(1, 'x', 0), x.reshape([-1]), x.reshape([2, -1, 2]), pt.flatten(x.T),
    pt.concatenate([x, x.mul(2)], 1), pt.stack([v, v.neg()]), s1!.add(1), s0!,
    pt.arange(n), pt.arange(1, n, 2, 'float32'), pt.eye(n, null, k), pt.eye(3, 4, 1, 'int8'),
    pt.zeros([n, 2]), pt.ones([2, 3], 'int16'), pt.alloc(v.get(0), n, 3), pt.zerosLike(x), pt.onesLike(v),
    pt.shape(x), shapeI(x, 1).mul(k), makeVector(n, k, 7),
    x.get(1), x.get(weft.slice(1, null), weft.slice(null, null, -1)), x.get(null, k, weft.slice(0, 3, 2)),
    v.get(weft.slice(k, null)), pt.setSubtensor(x.get(0, weft.slice(1, 3)), v.get(weft.slice(0, 2))),
    pt.incSubtensor(x.get(weft.slice(null, null, 2)), 10), pt.setSubtensor(allocEmpty('float64', 3, 4).get(weft.slice(null)), x),
    x.get([2, 0, 2], weft.slice(1, null)), pt.incSubtensor(x.get(weft.slice(null), [3, 3]), v.get(weft.slice(0, 3)).dimshuffle(0, 'x')),
    pt.cumsum(x, { axis: 1 }), (weft.grad(pt.cumprod(v).sum(), v) as TV), pt.sort(x), pt.argtopk(x, 2), pt.searchsorted(pt.sort(v), x),
    pt.bincount(pt.cast(pt.abs(v.mul(3)), 'int32')).astype('float64'), pt.unique(x.mul(0)),
  ];
  const values = new Map<TV, unknown>([
    [x, r.normal([3, 4])],
    [v, r.normal([6])],
    [n, 5],
    [k, 1],
  ]);
  const copy = await roundTrip(t, outs, values);
  t.ok(copy.outputs.some((o) => o.owner!.inputs.some((i) => i.owner?.op instanceof AllocEmpty)), 'AllocEmpty is in the copy');
});

t.test('linear algebra, networks, identities, Gemm and a hand-built Composite', async (t) => {
  const a = pt.matrix('a');
  const b = pt.matrix('b');
  const v = pt.vector('v');
  const t3 = pt.tensor3('t3');
  const f32 = pt.matrix('f32', 'float32');
  const zz = pt.matrix('zz');
  const loss = pt.softmax(a).mul(b).sum();
  const [ga] = weft.grad(loss, [a]);
  const composite = new Composite(
    new CompositeScalar(['float32', 'float32'], [
      { op: S.exp, args: [0], dtype: 'float32' },
      { op: S.mul, args: [2, 1], dtype: 'float32' },
      { op: S.castTo('float64'), args: [3], dtype: 'float64' },
      { op: S.add, args: [4, 4], dtype: 'float64' },
    ]),
  );
  const outs: TV[] = [
    a.dot(b.T), a.dot(v.get(weft.slice(0, 4))), v.dot(v), tensordot(t3, a, [[2], [1]]), pt.matmul(t3, a.T), pt.outer(v, v),
    pt.softmax(a), pt.logSoftmax(a, 0), pt.relu(a), ga!, deepCopy(a), viewOf(b).add(1),
    new Gemm().call(zz, 0.5, a, b.T, 2), composite.call(f32, f32.T) as TV,
  ];
  t.ok(weft.ancestors([ga!]).some((x) => x.owner && String(x.owner.op).startsWith('SoftmaxGrad')), 'the gradient uses SoftmaxGrad');
  const values = new Map<TV, unknown>([
    [a, r.normal([3, 4])],
    [b, r.normal([3, 4])],
    [v, r.normal([4])],
    [t3, r.normal([2, 3, 4])],
    [f32, r.normal([3, 3], { dtype: 'float32' })],
    [zz, r.normal([3, 3])],
  ]);
  await roundTrip(t, outs, values);
});

t.test('pt.special: every special function by its catalog name, with gradients', async (t) => {
  const a = pt.vector('a');
  const b = pt.vector('b');
  const n = pt.vector('n', 'int32');
  const sp = pt.special;
  const u = pt.sigmoid(b);
  const outs: TV[] = [
    sp.gamma(a), sp.gammaln(a), sp.psi(a), sp.polygamma(n, a), sp.erfinv(u.mul(2).sub(1)), sp.erfcinv(u), sp.erfcx(b), sp.betaln(a, b.abs()),
    sp.betainc(a, b.abs(), u), sp.gammainc(a, b.abs()), sp.gammaincc(a, b.abs()), sp.i0(b), sp.i1(b), sp.i0e(b), sp.i1e(b), sp.j0(b), sp.j1(b),
  ];
  const grads = weft.grad(outs.filter((_, i) => i !== 3).map((o) => o.sum()).reduce((s, o) => s.add(o)), [a, b]) as TV[];
  await roundTrip(t, [...outs, ...grads], new Map<TV, unknown>([[a, r.uniform([5], { low: 0.5, high: 4 })], [b, r.normal([5])], [n, new Int32Array([0, 1, 2, 3, 1])]]));
});

t.test('pt.linalg: the dense square ops and their gradients', async (t) => {
  const a = pt.matrix('a');
  const b = pt.vector('b');
  const la = pt.linalg;
  const spd = a.matmul(a.T).add(pt.eye(3).mul(3));
  const outs: TV[] = [la.inv(spd), la.det(spd), ...la.slogdet(spd), la.solve(spd, b), la.solve(spd, b, { assumeA: 'pos', lower: true }), la.solveTriangular(spd, b, { lower: true, trans: 'T' }), la.cholesky(spd), la.cholesky(spd, { lower: false })];
  const grads = weft.grad(outs.map((o) => o.sum()).reduce((s, o) => s.add(o)), [a, b]) as TV[];
  await roundTrip(t, [...outs, ...grads], new Map<TV, unknown>([[a, r.normal([3, 3])], [b, r.normal([3])]]));
});

t.test('pt.linalg: the decompositions and matrix functions, and their gradients', async (t) => {
  const a = pt.matrix('a');
  const b = pt.vector('b');
  const la = pt.linalg;
  const spd = a.matmul(a.T).add(pt.eye(3).mul(3));
  const outs: TV[] = [...la.qr(a), la.qr(a, { mode: 'r' }), ...la.eigh(spd), ...la.svd(a, { fullMatrices: false }), la.svd(a, { computeUv: false }), ...la.lu(a), la.expm(a), la.pinv(a), la.lstsq(a, b)[0], la.norm(a, { ord: 'nuc' }), la.matrixPower(a, 3), la.kron(a, a)];
  const grads = weft.grad(outs.map((o) => pt.sqr(o).sum()).reduce((s, o) => s.add(o)), [a, b]) as TV[];
  await roundTrip(t, [...outs, ...grads], new Map<TV, unknown>([[a, r.normal([3, 3])], [b, r.normal([3])]]));
});

t.test('convolution, pooling and masks, with their gradients', async (t) => {
  const x = pt.tensor4('x');
  const w = pt.tensor4('w');
  const y = pt.conv2d(x, w, { borderMode: [1, 0], subsample: [2, 1], filterDilation: [1, 2], filterFlip: false });
  const p = pt.pool2d(x, { ws: [2, 2], stride: [1, 2], mode: 'average_exc_pad' });
  const m = pt.pool2d(x, { ws: [3, 2], ignoreBorder: false });
  const [gx, gw] = weft.grad(y.sum().add(p.sum()).add(m.sum()), [x, w]) as TV[];
  const v = pt.vector('v');
  const rops = weft.Rop([m, pt.cumprod(v)], [x, v], [x.mul(2), v.neg()]) as TV[];
  // Second order (the gradients' gradients), and the im2col pair the conv_gemm rewrites make.
  const [hx] = weft.grad(gx!.sum().add(gw!.sum()), [x]) as TV[];
  const [hz] = weft.grad((weft.grad(m.mul(m).sum(), x) as TV).sum(), [x]) as TV[];
  const hv = weft.grad((weft.grad(pt.cumprod(v).sum(), v) as TV).mul(v).sum(), v) as TV;
  const cols = new Im2Col('half', [0, 0], [1, 1], [1, 1], 1, true).call(x, w) as TV;
  const back = new Col2Im('half', [0, 0], [1, 1], [1, 1], 1, true).call(cols, x, w) as TV;
  const outs: TV[] = [y, p, m, gx!, gw!, hx!, hz!, hv, cols, back, pt.broadcastTo(v, [2, 8]).mul(3), v.get(v.gt(0)), pt.nonzero(pt.tril(pt.ones([3, 3])))[1]!, ...rops];
  await roundTrip(t, outs, new Map<TV, unknown>([[x, r.normal([2, 2, 6, 7])], [w, r.normal([3, 2, 3, 2])], [v, r.normal([8])]]));
});

t.test('shared variables: stored values, fresh variables, names and types', async (t) => {
  const w = weft.shared(r.normal([2, 3], { dtype: 'float32' }), { name: 'w', shape: [2, 3] });
  const s = weft.shared(7, { name: 's', dtype: 'int16' });
  const x = pt.matrix('x', 'float32');
  const y = x.dot(w).mul(s);
  const before = w.getValue();
  const json = weft.serialize(y);
  w.setValue(r.normal([2, 3], { dtype: 'float32' })); // later changes are not in the document
  const copy = weft.deserialize(json);
  if (copy.kind !== 'variables') throw new Error('kind');
  t.equal(copy.shared.length, 2);
  t.same(copy.shared.map((v) => v.name), ['w', 's']);
  t.same(copy.shared.map((v) => String(v.type)), [String(w.type), String(s.type)]);
  t.not(copy.shared[0], w, 'a new shared variable');
  sameBits(t, before, copy.shared[0]!.getValue(), 'the stored value of w');
  t.same(weft.tolist(copy.shared[1]!.getValue()), 7);
  // The copy reads its own shared variables.
  const f = await weft.compile(copy.inputs, copy.outputs[0]!, { workers: 0 });
  copy.shared[1]!.setValue(0);
  t.same(weft.tolist(await f([[1, 2], [3, 4]])), [[0, 0, 0], [0, 0, 0]]);
});

t.test('OpFromGraph: shared inside, multiple outputs, unused input, nested, inline, overrides, grad', async (t) => {
  const a = pt.scalar('a');
  const b = pt.scalar('b');
  const c = pt.scalar('c');
  const s = weft.shared(r.normal([2, 2]), { name: 's' });
  // The example of Theano's OpFromGraph page, with a shared matrix.
  const op = new weft.OpFromGraph([a, b, c], [a.add(b).mul(c).add(s.sum()), a.mul(b)], { name: 'fused' });
  const inner = new weft.OpFromGraph([a, b], [a.mul(2).sub(b)], { name: 'inner' });
  const outer = new weft.OpFromGraph([a, b], [(inner.call(a, b) as TV).mul(inner.call(b, a) as TV)], { name: 'outer', inline: true });
  const [ga, gb, go] = [pt.scalar('xa'), pt.scalar('xb'), pt.scalar('go')];
  const lop = new weft.OpFromGraph([ga, gb, pt.scalar('out'), go], [go.mul(3), go.mul(gb)], { name: 'lop' });
  const withLop = new weft.OpFromGraph([a, b], [a.mul(b)], { name: 'withLop', lopOverrides: lop });
  const unused = new weft.OpFromGraph([a, b], [a.exp()], { name: 'unused' });

  const x = pt.scalar('x');
  const y = pt.scalar('y');
  const z = pt.scalar('z');
  const [o0, o1] = op.call(x, y, z) as TV[];
  const [p0] = op.call(z, y, x) as TV[];
  const nested = outer.call(x, y) as TV;
  const overridden = withLop.call(x, y) as TV;
  const [gx, gy] = weft.grad(overridden.add(o0!), [x, y]);
  const outs: TV[] = [o0!.add(p0!), o1!, nested, overridden, gx!, gy!, unused.call(x, y) as TV];
  const copy = await roundTrip(t, outs, new Map<TV, unknown>([[x, 0.5], [y, -1.25], [z, 2]]));
  t.equal(copy.shared.length, 1, 'the shared variable inside the op');
  t.same(weft.tolist(copy.shared[0]!.getValue()), weft.tolist(s.getValue()), 'with its value');
  const ops = weft.ancestors(copy.outputs).flatMap((v) => (v.owner ? [v.owner.op] : [])).filter((o) => o instanceof weft.OpFromGraph) as weft.OpFromGraph[];
  t.ok(ops.some((o) => o.inline && o.name === 'outer'), 'inline and name kept');
  t.ok(ops.some((o) => o.options.lopOverrides instanceof weft.OpFromGraph && o.options.lopOverrides.name === 'lop'), 'lopOverrides kept');
  const fused = ops.find((o) => o.name === 'fused')!;
  t.equal(fused.shared[0], copy.shared[0], 'the op reads the loaded shared variable');

  // Updating the shared variable of the copy changes what the copy computes, as for the original.
  const [f1, f2] = await compileBoth(freeInputs(outs), [outs[0]!], copy.inputs, [copy.outputs[0]!]);
  const twice = (await pt.constant([[1, 2], [3, 4]]).eval()) as weft.NdArray;
  s.setValue(twice);
  copy.shared[0]!.setValue(twice);
  sameBits(t, ((await f1(0.5, -1.25, 2)) as weft.NdArray[])[0]!, ((await f2(0.5, -1.25, 2)) as weft.NdArray[])[0]!, 'after setValue');

  // Function and list overrides were traced at construction: the document carries the traced
  // graphs and slots (never code), and the copy's ops equal the originals.
  const fnLop = new weft.OpFromGraph([a], [a.sqr()], { name: 'fnLop', lopOverrides: (_i, _o, [g]) => [g!.mul(2)] });
  const listLop = new weft.OpFromGraph([a, b, c], [a.mul(b)], { name: 'listLop', lopOverrides: [null, (_i, _o, [g]) => g!.mul(3), weft.disconnected()] });
  const fnRop = new weft.OpFromGraph([a, b], [a.mul(b)], { name: 'fnRop', ropOverrides: (_i, [e, f]) => [e!.mul(2).add(f!)] });
  const traced = [fnLop.call(x) as TV, listLop.call(x, y, z) as TV, fnRop.call(x, y) as TV];
  const [tx, ty] = weft.grad((traced[0]!).add(traced[1]!), [x, y]);
  const tracedCopy = await roundTrip(t, [...traced, tx!, ty!], new Map<TV, unknown>([[x, 0.5], [y, -1.25], [z, 2]]));
  const copied = tracedCopy.outputs.slice(0, 3).map((v) => v.owner!.op as weft.OpFromGraph);
  t.same(copied.map((o) => o.name), ['fnLop', 'listLop', 'fnRop']);
  t.ok(copied.every((o, i) => o.equals(traced[i]!.owner!.op)), 'the copies equal the originals, overrides included');
  // The copies differentiate through the loaded overrides.
  const [u, v] = [pt.scalar('u'), pt.scalar('v')];
  const [du, dv] = [pt.scalar('du'), pt.scalar('dv')];
  const [gu, gv] = weft.grad((copied[1]!.call(u, v, u) as TV).add(copied[0]!.call(u) as TV), [u, v], { disconnectedInputs: 'ignore' });
  const jvp = weft.Rop(copied[2]!.call(u, v) as TV, [u, v], [du, dv]) as TV;
  const fn = await weft.compile([u, v, du, dv], [gu!, gv!, jvp], { onUnusedInput: 'ignore' });
  t.same((await fn(3, 4, 5, 7)).map((r) => weft.tolist(r)), [2 + 4, 3, 2 * 5 + 7], 'd/du: 2 (fnLop) + v (default); d/dv: 3 (listed); Rop 2 du + dv');
});

t.test('an OpFromGraph applied twice is written once', async (t) => {
  const a = pt.vector('a');
  const op = new weft.OpFromGraph([a], [a.exp().sum()], { name: 'once' });
  const x = pt.vector('x');
  const doc = record(weft.serialize((op.call(x) as TV).add(op.call(x.neg()) as TV)));
  t.equal((doc.graphs as Json[]).length, 1, 'one inner graph in the table');
});

t.test('Map: jacobian and hessian', async (t) => {
  const x = pt.vector('x');
  const w = weft.shared(r.normal([3]), { name: 'w' });
  const y = x.mul(x).mul(w).add(x.sin());
  const jac = weft.jacobian(y, x);
  const hess = weft.hessian(x.sqr().mul(w).sum().add(x.prod()), x);
  t.ok(String(jac.owner!.op).startsWith('Map'), 'jacobian uses a Map');
  // A Map's id is its own identity, not part of the document: a loaded Map gets a new one.
  const copy = await roundTrip(t, [jac, hess], new Map<TV, unknown>([[x, r.normal([3])]]));
  t.equal(copy.shared.length, 1);
  // A compiled function with a Map.
  const fn = await weft.compile([x], jac, { workers: 0 });
  const loaded = weft.deserialize(weft.serialize(fn));
  if (loaded.kind !== 'function') throw new Error('kind');
  const fn2 = await weft.compile(loaded.inputs, loaded.outputs[0]!, { workers: 0 });
  const xs = r.normal([3]);
  sameBits(t, (await fn(weft.tolist(xs))) as weft.NdArray, (await fn2(weft.tolist(xs))) as weft.NdArray, 'compiled jacobian');
});

t.test('a compiled function: rewritten graph, name, input options', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const z = pt.matrix('z');
  const out = x.dot(y).mul(2).add(z.mul(3)).exp();
  const fn = await weft.compile([weft.In(x, { mutable: true }), y, weft.In(z, { name: 'zed' })], [out, x.sum()], { name: 'f', workers: 0 });
  const json = weft.serialize(fn);
  const doc = record(json);
  t.equal(doc.kind, 'function');
  t.equal(doc.name, 'f');
  const copy = weft.deserialize(json);
  if (copy.kind !== 'function') throw new Error('kind');
  t.equal(copy.name, 'f');
  t.ok(copy.inputs[0] instanceof weft.FunctionInput && copy.inputs[0].mutable, 'mutable input');
  t.ok(copy.inputs[2] instanceof weft.FunctionInput && copy.inputs[2].name === 'zed', 'input name');
  t.ok(!(copy.inputs[1] instanceof weft.FunctionInput), 'a plain input stays a variable');
  t.equal(copy.outputs.length, 2);
  const g = await weft.compile(copy.inputs, copy.outputs, { updates: copy.updates, name: copy.name, workers: 0 });
  const args = () => [r.normal([2, 3]), r.normal([3, 2]), r.normal([2, 2])];
  const vals = args();
  const copies = (vs: weft.NdArray[]) => vs.map((v) => weft.tolist(v)) as [weft.InputValue, weft.InputValue, weft.InputValue];
  const a1 = (await fn(...copies(vals))) as weft.NdArray[];
  const a2 = (await g(...copies(vals))) as weft.NdArray[];
  a1.forEach((v, i) => sameBits(t, v, a2[i]!, `output ${i}`));
  t.equal(weft.serialize(g), json, 'compiling the loaded graph again gives the same document');
});

t.test('a training function with updates round-trips and trains identically', async (t) => {
  const x = pt.matrix('x', 'float32');
  const target = pt.vector('target', 'float32');
  const W = weft.shared(r.normal([4, 3], { dtype: 'float32', std: 0.5 }), { name: 'W' });
  const b = weft.shared(r.normal([3], { dtype: 'float32' }), { name: 'b' });
  const v = weft.shared(r.normal([3], { dtype: 'float32' }), { name: 'v' });
  const steps = weft.shared(0, { name: 'steps', dtype: 'int32' });
  const hidden = pt.tanh(x.dot(W).add(b));
  const pred = hidden.dot(v);
  const cost = pred.sub(target).sqr().mean();
  const [gW, gb, gv] = weft.grad(cost, [W, b, v]);
  const lr = 0.1;
  const train = await weft.compile([x, target], cost, {
    updates: [[W, W.sub(gW!.mul(lr))], [b, b.sub(gb!.mul(lr))], [v, v.sub(gv!.mul(lr))], [steps, steps.add(1)]],
    name: 'train',
    workers: 0,
  });
  const json = weft.serialize(train);
  const copy = weft.deserialize(json);
  if (copy.kind !== 'function') throw new Error('kind');
  t.same(copy.updates.map(([s]) => s.name), ['W', 'b', 'v', 'steps']);
  t.same(copy.shared.map((s) => s.name).sort(), ['W', 'b', 'steps', 'v']);
  const train2 = await weft.compile(copy.inputs, copy.outputs[0]!, { updates: copy.updates, name: copy.name, workers: 0 });
  const data = rng(7);
  for (let step = 0; step < 5; step++) {
    const xs = data.normal([8, 4], { dtype: 'float32' });
    const ts = data.normal([8], { dtype: 'float32' });
    const c1 = (await train(xs, ts)) as weft.NdArray;
    const c2 = (await train2(xs, ts)) as weft.NdArray;
    sameBits(t, c1, c2, `cost at step ${step}`);
  }
  for (const [s, s2] of copy.updates.map(([s2]) => [[W, b, v, steps].find((o) => o.name === s2.name)!, s2] as const)) {
    sameBits(t, s.getValue(), s2.getValue(), `${s.name} after training`);
  }
  t.same(weft.tolist(copy.updates[3]![0].getValue()), 5);
});

t.test('refused: asOp, ops without a codec, non-variables; user codecs', async (t) => {
  const x = pt.vector('x');
  const double = weft.asOp({ itypes: [new weft.TensorType('float64', [null])], otypes: [new weft.TensorType('float64', [null])], name: 'double' }, (a) => a);
  await throwsExactly(
    t,
    () => weft.serialize(double.call(x) as TV),
    TypeError,
    'serialize: AsOp{double} wraps a JS function, which a document cannot carry (reading a document never evaluates code); rebuild the asOp after loading, or write the op as a class with a registered codec',
  );

  class Scale extends weft.Op {
    static override props = ['factor'] as const;
    constructor(readonly factor: number) {
      super();
    }
    override makeNode(v: unknown): weft.Apply {
      const xv = pt.asTensorVariable(v as TV);
      return new weft.Apply(this, [xv], [xv.type.makeVariable()]);
    }
  }
  const y = new Scale(3).call(x) as TV;
  await throwsExactly(
    t,
    () => weft.serialize(y),
    TypeError,
    'serialize: Scale{factor=3} (class Scale) has no op codec; register the class with weft.registerOpCodec(Scale) (its props are then written with their static propKinds, as plain JSON without one) or give a codec',
  );
  await throwsExactly(t, () => weft.serialize([x, 3 as unknown as TV]), TypeError, 'serialize: output 1 is not a variable (or a compiled function): 3');

  weft.registerOpCodec<Scale, number>({
    name: 'test.Scale',
    opClass: Scale,
    props: ['factor'],
    encode: (op) => ({ factor: op.factor }),
    decode: (props) => {
      const factor = props.object(['factor']).field('factor').number();
      if (factor < 0) throw new RangeError('the factor must not be negative');
      return factor;
    },
    build: (factor) => new Scale(factor),
  });
  const json = weft.serialize(y);
  t.match(json, /"type":"test.Scale","props":\{"factor":3\}/);
  const copy = weft.deserialize(json);
  t.equal(String(copy.outputs[0]!.owner!.op), 'Scale{factor=3}');
  await throwsExactly(
    t,
    () => weft.deserialize(json.replace('"factor":3', '"factor":"3"')),
    weft.DeserializeError,
    'nodes[0].op.props.factor: expected a finite number, got "3"',
  );
  await throwsExactly(
    t,
    () => weft.deserialize(json.replace('"factor":3', '"factor":-3')),
    weft.DeserializeError,
    'nodes[0].op.props: the "test.Scale" op codec refused these props: the factor must not be negative',
  );
  await throwsExactly(
    t,
    () => weft.registerOpCodec({ name: 'test.Scale', opClass: class extends Scale {}, props: [], encode: () => ({}), decode: () => 0, build: () => new Scale(1) }),
    TypeError,
    'registerOpCodec: an op codec named "test.Scale" is already registered',
  );
  await throwsExactly(
    t,
    () => weft.registerOpCodec({ name: 'Other', opClass: Scale, props: [], encode: () => ({}), decode: () => 0, build: () => new Scale(1) }),
    TypeError,
    'registerOpCodec (Other): Scale already has a codec ("test.Scale")',
  );
  await throwsExactly(
    t,
    () => weft.registerOpCodec({ name: '__proto__', opClass: class extends Scale {}, props: [], encode: () => ({}), decode: () => 0, build: () => new Scale(1) }),
    TypeError,
    'registerOpCodec: the name must be an identifier-like string (letters, digits, _ . -), got "__proto__"',
  );
});

t.test('Scan: a recurrence with taps, a shared variable inside, and its gradient', async (t) => {
  const x = pt.vector('x');
  const h0 = pt.vector('h0');
  const w = weft.shared(r.normal([3]), { name: 'w' });
  const { outputs } = weft.scan({
    fn: (prev: TV, now: TV, h2: TV, h1: TV, a: TV) => pt.tanh(h2.mul(a).add(h1.mul(w)).add(prev.mul(now))),
    sequences: [{ input: x, taps: [-1, 0] }],
    outputsInfo: { initial: h0.dimshuffle('x', 0).mul(pt.ones([2, 1])), taps: [-2, -1] },
    nonSequences: [pt.scalar('a')],
    name: 'rec',
  });
  const y = outputs as TV;
  const a = y.owner!.inputs.find((v) => v.name === 'a') as TV;
  const copy = await roundTrip(t, [y, ...weft.grad(y.sum(), [x, h0, a])], new Map<TV, unknown>([[x, r.normal([6])], [h0, r.normal([3])], [a, 0.7]]));
  t.ok(copy.outputs[0]!.owner!.op instanceof weft.ScanOp, 'a Scan again');
  // A loop with an until condition keeps it.
  const s = pt.vector('s');
  const stop = weft.scan({ fn: (st: TV, acc: TV) => [acc.add(st), weft.until(acc.add(st).gt(2))], sequences: [s], outputsInfo: [pt.zeros([])] }).outputs as TV;
  const back = await roundTrip(t, [stop, ...weft.grad(stop.sum(), [s])], new Map<TV, unknown>([[s, [1, 0.5, 1, 4]]]));
  t.equal((back.outputs[0]!.owner!.op as weft.ScanOp).spec.until, true, 'until survives');
});

t.test("a user's op registered by its class: props written with their kinds, plain JSON without one, rebuilt through the constructor", async (t) => {
  class Shift extends weft.Op {
    static override readonly props = ['amount', 'label', 'table'] as const;
    static override readonly propKinds = { amount: weft.propKinds.int(0, 10), label: weft.propKinds.optionalString() };
    constructor(
      readonly amount: number,
      readonly label: string | undefined,
      readonly table: unknown,
    ) {
      super();
      if (!Array.isArray(table) || !table.every((v) => typeof v === 'number')) throw new TypeError('Shift: the table must be a list of numbers');
    }
    override makeNode(v: unknown): weft.Apply {
      const xv = pt.asTensorVariable(v as TV);
      return new weft.Apply(this, [xv], [xv.type.makeVariable()]);
    }
  }
  const x = pt.vector('x');
  const y = new Shift(2, undefined, [1, 2.5]).call(x) as TV;
  weft.registerOpCodec(Shift);
  const json = weft.serialize(y);
  t.match(json, /"type":"Shift","props":\{"amount":2,"label":null,"table":\[1,2.5\]\}/, 'the props as written');
  const copy = weft.deserialize(json);
  const op = copy.outputs[0]!.owner!.op as Shift;
  t.ok(op instanceof Shift, 'rebuilt as the class');
  t.same([op.amount, op.label, op.table], [2, undefined, [1, 2.5]]);
  t.ok(op.equals(y.owner!.op), 'equal to the op written');
  await throwsExactly(t, () => weft.deserialize(json.replace('"amount":2', '"amount":11')), weft.DeserializeError, 'nodes[0].op.props.amount: expected an integer from 0 to 10, got 11');
  await throwsExactly(t, () => weft.deserialize(json.replace('"label":null', '"label":7')), weft.DeserializeError, 'nodes[0].op.props.label: expected a string, got 7');
  await throwsExactly(
    t,
    () => weft.deserialize(json.replace('"table":[1,2.5]', '"table":"no"')),
    weft.DeserializeError,
    'nodes[0].op.props: cannot rebuild a Shift op from these props: Shift: the table must be a list of numbers',
  );
  await throwsExactly(t, () => weft.deserialize(json.replace('"amount":2,', '')), weft.DeserializeError, 'nodes[0].op.props: missing field "amount"');
  const odd = new Shift(1, 'a', [1]);
  (odd as { table: unknown }).table = [() => 1];
  await throwsExactly(
    t,
    () => weft.serialize(odd.call(x) as TV),
    TypeError,
    "serialize: Shift{amount=1, label=a, table=[()=>1]}.table[0]: function is not JSON; give Shift a kind for 'table' in static propKinds, or register a codec that writes it",
  );
  await throwsExactly(t, () => weft.registerOpCodec(Shift, { name: 'Shift2' }), TypeError, 'registerOpCodec (Shift2): Shift already has a codec ("Shift")');
});

t.test('every tensor op codec was used by a round trip above', async (t) => {
  // The codecs this file registers for its own ops (test.*, Shift) are not weft's; the sparse
  // lowering's tensor ops (sparse.*) go through documents in test/sparse/workers.test.ts.
  const unused = tensorCodecNames().filter((n) => n !== 'AsOp' && !n.startsWith('test.') && !n.startsWith('sparse.') && n !== 'Shift' && !seen.has(n));
  t.same(unused, [], 'codecs not exercised');
});

t.teardown(() => weft.shutdown());
