// The specialize rewrites: pow with small constant exponents (sqr, sqrt, reciprocals, 1, 0)
// and sums of scaled matrix products into Gemm. Each: the graph with and without it, values
// against hand arithmetic and against the unrewritten graph, and cases where it must not fire.
import t, { type Test } from 'tap';
import { Gemm } from '../../src/tensor/linalg/gemm.js';
import { pt, rng, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
type Nested = number | Nested[];
const flat = (x: Nested): number[] => (Array.isArray(x) ? x.flatMap(flat) : [x]);
const values = (a: weft.NdArray): number[] => flat(weft.tolist(a) as Nested);

async function both(t: Test, rewrite: string, inputs: TV[], out: TV, expect: { before?: string; after?: string } = {}) {
  const on = await weft.compile(inputs, out, { onUnusedInput: 'ignore', profile: true, mode: new weft.Mode({ excluding: ['inplace'] }) });
  const off = await weft.compile(inputs, out, { onUnusedInput: 'ignore', mode: new weft.Mode({ excluding: [rewrite, 'inplace'] }) });
  if (expect.before !== undefined) t.equal(weft.debugprint(off), expect.before, `${rewrite}: the graph without it`);
  if (expect.after !== undefined) t.equal(weft.debugprint(on), expect.after, `${rewrite}: the graph with it`);
  return { on, off, applied: on.profile!.rewrites.byRewriter.get(rewrite)?.applied ?? 0 };
}

function close(t: Test, got: weft.NdArray, want: readonly number[], tol: number, msg: string): void {
  const g = values(got);
  t.equal(g.length, want.length, `${msg}: size`);
  const bad = want.map((w, i) => (Object.is(g[i], w) || Math.abs(g[i]! - w) <= tol * Math.max(1, Math.abs(w)) ? '' : `[${i}] ${g[i]} vs ${w}`));
  t.same(bad.filter((s) => s).slice(0, 5), [], `${msg}${tol ? ` within ${tol}` : ''}`);
}

const r = rng(303);

t.test('pow_specialize: powers with small constant exponents', async (t) => {
  const x = pt.vector('x');
  const xv = [0.5, 2, 3, 1e-3, 7];
  const cases: Array<[number, string, (v: number) => number]> = [
    [2, 'Elemwise{sqr} [id A]   0\n |x [id B]', (v) => v * v],
    [0.5, 'Elemwise{sqrt} [id A]   0\n |x [id B]', Math.sqrt],
    [-1, 'Elemwise{trueDiv} [id A]   0\n |TensorConstant{[1]} [id B]\n |x [id C]', (v) => 1 / v],
    [-2, 'Composite{trueDiv(i0,sqr(i1))} [id A]   0\n |TensorConstant{[1]} [id B]\n |x [id C]', (v) => 1 / (v * v)],
    [-0.5, 'Composite{trueDiv(i0,sqrt(i1))} [id A]   0\n |TensorConstant{[1]} [id B]\n |x [id C]', (v) => 1 / Math.sqrt(v)],
    [1, 'DeepCopyOp [id A]   0\n |x [id B]', (v) => v],
    [0, 'Alloc [id A]   1\n |TensorConstant{1} [id B]\n |Shape_i{0} [id C]   0\n   |x [id D]', () => 1],
  ];
  for (const [e, after, f] of cases) {
    const c = await both(t, 'pow_specialize', [x], pt.pow(x, e), { before: `Elemwise{pow} [id A]   0\n |x [id B]\n |TensorConstant{[${e}]} [id C]`, after });
    t.equal(c.applied, 1, `x ** ${e}`);
    close(t, await c.on(xv), xv.map(f), 1e-15, `x ** ${e}: values`);
    close(t, await c.on(xv), values(await c.off(xv)), 1e-15, `x ** ${e}: as the unrewritten pow`);
  }
  // pow(NaN, 0) is 1, as NumPy's.
  const c0 = await both(t, 'pow_specialize', [x], pt.pow(x, 0));
  t.same(values(await c0.on([NaN, Infinity])), [1, 1]);
  // A float32 base to a float64 exponent squares in float64, as pow did.
  const f = pt.vector('f', 'float32');
  const fv = new Float32Array([0.1, 3.3, 1e20]);
  const c32 = await both(t, 'pow_specialize', [f], pt.pow(f, pt.constant(2, { dtype: 'float64' })), {
    after: 'Composite{sqr(cast{float64}(i0))} [id A]   0\n |f [id B]',
  });
  close(t, await c32.on(fv), [...fv].map((v) => v * v), 0, 'float32 base, float64 exponent');
  // Integers: squares wrap as the integer power does.
  const i = pt.vector('i', 'int32');
  const iv = new Int32Array([65536, -3, 46341]);
  const ci = await both(t, 'pow_specialize', [i], pt.pow(i, 2), { after: 'Elemwise{sqr} [id A]   0\n |i [id B]' });
  close(t, await ci.on(iv), [...iv].map((v) => Math.imul(v, v)), 0, 'int32 square wraps');
  close(t, await ci.on(iv), values(await ci.off(iv)), 0, 'int32: as the unrewritten pow');
  // Not fired: other exponents, a variable exponent, negative or fractional powers of integers.
  const y = pt.vector('y');
  for (const [out, why] of [
    [pt.pow(x, 3), 'x ** 3'],
    [pt.pow(x, y), 'x ** y'],
    [pt.pow(x, [2, 3, 2, 2, 2]), 'exponents that differ'],
    [pt.pow(i, -1), 'int32 ** -1'],
  ] as const) {
    const n = await both(t, 'pow_specialize', [x, y, i], out);
    t.equal(n.applied, 0, `not fired: ${why}`);
    t.equal(weft.debugprint(n.on), weft.debugprint(n.off), `unchanged: ${why}`);
  }
  // An int8 to the power 0.5 is a float64 square root (the weak 0.5 is a float64).
  const j = pt.vector('j', 'int8');
  const cj = await both(t, 'pow_specialize', [j], pt.pow(j, 0.5), { after: 'Composite{sqrt(cast{float64}(i0))} [id A]   0\n |j [id B]' });
  close(t, await cj.on(new Int8Array([4, 2, 100])), [2, Math.SQRT2, 10], 0, 'int8 ** 0.5');
});

/** b*z + a*(x . y) by hand, row-major. */
function gemmRef(z: number[], a: number, x: number[], y: number[], b: number, m: number, k: number, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += x[i * k + p]! * y[p * n + j]!;
      out.push(b * z[i * n + j]! + a * s);
    }
  }
  return out;
}

t.test('gemm_from_add: scaled sums of a dot product become Gemm', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const z = pt.matrix('z');
  const a = pt.scalar('a');
  const b = pt.scalar('b');
  const xv = r.normal([3, 4]);
  const yv = r.normal([4, 2]);
  const zv = r.normal([3, 2]);
  const [X, Y, Z] = [xv, yv, zv].map(values) as [number[], number[], number[]];
  const ref = (al: number, be: number) => gemmRef(Z, al, X, Y, be, 3, 4, 2);
  const d = pt.dot(x, y);
  const cases: Array<[string, TV, number, number]> = [
    ['a*dot(x,y) + b*z', pt.add(pt.mul(a, d), pt.mul(b, z)), 1.5, -0.5],
    ['z + dot(x,y)', pt.add(z, d), 1, 1],
    ['dot(x,y) + z', pt.add(d, z), 1, 1],
    ['z - dot(x,y)', pt.sub(z, d), -1, 1],
    ['dot(x,y) - z', pt.sub(d, z), 1, -1],
    ['2*z + dot(x,y)*a', pt.add(pt.mul(2, z), pt.mul(d, a)), 1.5, 2],
    ['-dot(x,y) + z*b', pt.add(pt.neg(d), pt.mul(z, b)), -1, -0.5],
    ['z*b - a*dot(x,y)', pt.sub(pt.mul(z, b), pt.mul(a, d)), -1.5, -0.5],
  ];
  for (const [what, out, al, be] of cases) {
    const c = await both(t, 'gemm_from_add', [x, y, z, a, b], out);
    t.equal(c.applied, 1, `${what}: fired`);
    // One Gemm and no Dot; only a symbolic negated coefficient (-a) may remain beside it.
    const names = c.on.fgraph.toposort().map((n) => String(n.op));
    t.same(names.filter((n) => n !== 'Elemwise{neg}'), ['Gemm'], `${what}: ${names.join(', ')}`);
    const got = await c.on(xv, yv, zv, 1.5, -0.5);
    close(t, got, ref(al, be), 1e-14, `${what}: values`);
    close(t, got, values(await c.off(xv, yv, zv, 1.5, -0.5)), 1e-14, `${what}: as the unrewritten graph`);
  }
  const shown = await both(t, 'gemm_from_add', [x, y, z], pt.add(pt.mul(2, z), pt.mul(d, 3)), {
    before: 'Composite{add(mul(i0,i1),mul(i2,i3))} [id A]   1\n |TensorConstant{[[2]]} [id B]\n |z [id C]\n |Dot [id D]   0\n | |x [id E]\n | |y [id F]\n |TensorConstant{[[3]]} [id G]',
    after: 'Gemm [id A]   0\n |z [id B]\n |TensorConstant{3} [id C]\n |x [id D]\n |y [id E]\n |TensorConstant{2} [id F]',
  });
  t.equal(shown.applied, 1);

  // A third term stays an addition around the Gemm; two dots make a Gemm of one into the other.
  const w = pt.matrix('w');
  const c3 = await both(t, 'gemm_from_add', [x, y, z, w], pt.add(d, z, w));
  t.same(c3.on.fgraph.toposort().map((n) => String(n.op)), ['Gemm', 'Elemwise{add}']);
  close(t, await c3.on(xv, yv, zv, zv), values(await c3.off(xv, yv, zv, zv)), 1e-14, 'three terms');
  const sq = pt.matrix('sq');
  const sv = r.normal([3, 3]);
  const c4 = await both(t, 'gemm_from_add', [sq], pt.add(pt.dot(sq, sq), pt.dot(sq.T, sq)));
  t.equal(c4.applied, 1);
  close(t, await c4.on(sv), values(await c4.off(sv)), 1e-14, 'two dots');

  // float32, and a float32 product added to a float64 z (the operands are cast up, exactly).
  const [x32, y32, z32] = ['x', 'y', 'z'].map((n) => pt.matrix(n, 'float32')) as [TV, TV, TV];
  const v32 = [r.normal([3, 4], { dtype: 'float32' }), r.normal([4, 2], { dtype: 'float32' }), r.normal([3, 2], { dtype: 'float32' })];
  const c5 = await both(t, 'gemm_from_add', [x32, y32, z32], pt.sub(z32, pt.dot(x32, y32)));
  t.type(c5.on.fgraph.toposort()[0]!.op, Gemm);
  close(t, await c5.on(...v32), gemmRef(values(v32[2]!), -1, values(v32[0]!), values(v32[1]!), 1, 3, 4, 2), 1e-6, 'float32');
  const c6 = await both(t, 'gemm_from_add', [x32, y, z], pt.add(pt.dot(x32, y), z));
  t.equal(c6.applied, 1, 'float32 . float64 + float64');
  close(t, await c6.on(v32[0], yv, zv), gemmRef(Z, 1, values(v32[0]!), Y, 1, 3, 4, 2), 1e-14, 'mixed dtypes');
});

t.test('gemm_from_add must not fire', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const z = pt.matrix('z');
  const xv = r.normal([2, 2]);
  const yv = r.normal([2, 2]);
  const zv = r.normal([2, 2]);
  const d = pt.dot(x, y);
  // The dot result is used twice: computing it once beats computing it in a Gemm and again.
  const twice = await weft.compile([x, y, z], [pt.add(z, d), pt.exp(d)], { profile: true });
  t.equal(twice.profile!.rewrites.byRewriter.get('gemm_from_add')?.applied ?? 0, 0, 'a dot with two clients');
  t.notOk(twice.fgraph.toposort().some((n) => n.op instanceof Gemm));
  const [s, e] = await twice(xv, yv, zv);
  const ref = gemmRef(values(zv), 1, values(xv), values(yv), 1, 2, 2, 2);
  close(t, s!, ref, 1e-14, 'values');
  close(t, e!, gemmRef([0, 0, 0, 0], 1, values(xv), values(yv), 0, 2, 2, 2).map(Math.exp), 1e-14, 'values');
  const row = pt.tensor({ shape: [1, null], name: 'row' });
  const v = pt.vector('v');
  const i = pt.matrix('i', 'int32');
  const m3 = pt.scalar('m3');
  const col = pt.vector('col');
  for (const [ins, out, why] of [
    [[x, y, row], pt.add(d, row), 'z broadcast along a row'],
    [[x, v], pt.add(pt.dot(x, v), v), 'a matrix-vector product'],
    [[i], pt.add(pt.dot(i, i), i), 'integer matrices'],
    [[x, y, z, m3], pt.add(pt.mul(d, m3, m3), z), 'a product of three factors'],
    [[x, y, z], pt.mul(d, z), 'a product, not a sum'],
    [[x, y, z], pt.add(pt.exp(d), z), 'no dot among the terms'],
    [[x, y, z, col], pt.add(pt.mul(d, col), z), 'a vector coefficient'],
  ] as const) {
    const c = await weft.compile(ins as unknown as TV[], out as TV, { profile: true });
    t.equal(c.profile!.rewrites.byRewriter.get('gemm_from_add')?.applied ?? 0, 0, `not fired: ${why}`);
    t.notOk(c.fgraph.toposort().some((n) => n.op instanceof Gemm), `no Gemm: ${why}`);
  }
});

t.test('local_elemwise_alloc (PyTensor\'s): an Alloc that another operand broadcasts is read as its value', async (t) => {
  const m = pt.matrix('m');
  const v = pt.vector('v');
  const s = pt.scalar('s');
  // (A replacement must be as specific as what it replaces: m34's lengths are static, as the Alloc's are.)
  const m34 = pt.tensor({ name: 'm34', shape: [3, 4] });
  const mv = r.normal([3, 4]);
  const vv = r.normal([4]);
  // The gradient of sum(m * m) * s: a fill of s times 2m, which needs no filled array.
  const g = weft.grad(m.mul(m).sum().mul(s), m) as TV;
  const allocs = (fn: weft.CompiledFunction): number => fn.fgraph.toposort().filter((n) => String(n.op) === 'Alloc').length;
  for (const [name, out, inputs, args, want] of [
    ['gradient fill', g, [m, s], [mv, 1.5], values(mv).map((x) => 3 * x)],
    ['fill of a row', pt.alloc(v, 3, 4).mul(m34), [m34, v], [mv, vv], values(mv).map((x, i) => x * vv.data[i % 4]!)],
    ['a scalar fill', pt.add(pt.alloc(s, 3, 4), m34), [m34, s], [mv, 2], values(mv).map((x) => x + 2)],
  ] as const) {
    const { on, off, applied } = await both(t, 'local_elemwise_alloc', inputs as unknown as TV[], out as TV);
    t.ok(applied >= 1, `${name}: applied`);
    t.equal(allocs(on), 0, `${name}: no Alloc left`);
    t.ok(allocs(off) >= 1, `${name}: an Alloc without it`);
    close(t, (await on(...(args as unknown as weft.InputValue[]))) as weft.NdArray, want as number[], 1e-15, name);
    close(t, (await off(...(args as unknown as weft.InputValue[]))) as weft.NdArray, want as number[], 1e-15, `${name} (without)`);
  }
  // Must not fire: the Alloc alone gives the output its rows (the other operand is a row).
  const row = pt.tensor({ name: 'row', shape: [1, 4] });
  const { on, applied } = await both(t, 'local_elemwise_alloc', [s, row], pt.alloc(s, 3, 4).add(row));
  t.equal(applied, 0, 'the other operand broadcasts along the rows: kept');
  t.same(weft.tolist((await on(2, [[1, 2, 3, 4]])) as weft.NdArray), [[3, 4, 5, 6], [3, 4, 5, 6], [3, 4, 5, 6]]);
});
