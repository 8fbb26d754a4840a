// The stabilize rewrites: log(1 + x) -> log1p(x), exp(x) - 1 -> expm1(x), log(sigmoid(x)) ->
// -softplus(-x), log(1 - sigmoid(x)) -> -softplus(x), log(softmax(x)) -> logSoftmax(x), and the
// stable gradients of log(sigmoid) and log(softmax). Each: the graph with and without it, equal
// values on ordinary seeded inputs, the values at extreme inputs (checked against numbers
// worked out by hand), and cases where it must not fire.
import t, { type Test } from 'tap';
import { pt, rng, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
type Nested = number | Nested[];
const flat = (x: Nested): number[] => (Array.isArray(x) ? x.flatMap(flat) : [x]);
const values = (a: weft.NdArray): number[] => flat(weft.tolist(a) as Nested);

/** FAST_RUN with and without `rewrite`; both graphs' debugprints when expected; whether it fired. */
async function both(t: Test, rewrite: string, inputs: TV[], out: TV | TV[], expect: { before?: string; after?: string } = {}) {
  const on = await weft.compile(inputs, out as TV, { onUnusedInput: 'ignore', profile: true, mode: new weft.Mode({ excluding: ['inplace'] }) });
  const off = await weft.compile(inputs, out as TV, { onUnusedInput: 'ignore', mode: new weft.Mode({ excluding: [rewrite, 'inplace'] }) });
  if (expect.before !== undefined) t.equal(weft.debugprint(off), expect.before, `${rewrite}: the graph without it`);
  if (expect.after !== undefined) t.equal(weft.debugprint(on), expect.after, `${rewrite}: the graph with it`);
  return { on, off, applied: on.profile!.rewrites.byRewriter.get(rewrite)?.applied ?? 0 };
}

/** Relative closeness to hand-computed values (exact matches for infinities and signed zeros). */
function rel(t: Test, got: weft.NdArray, want: readonly number[], tol: number, msg: string): void {
  const g = values(got);
  t.equal(g.length, want.length, `${msg}: size`);
  const bad = want.map((w, i) => {
    const v = g[i]!;
    const ok = Number.isFinite(w) ? Math.abs(v - w) <= tol * Math.max(Math.abs(w), Number.MIN_VALUE) || (w === 0 && Math.abs(v) <= tol) : Object.is(v, w);
    return ok ? '' : `[${i}] ${v} vs ${w}`;
  });
  t.same(bad.filter((s) => s), [], `${msg} (relative ${tol})`);
}

async function sameOnSeeded(t: Test, on: weft.WeftFunction<weft.NdArray>, off: weft.WeftFunction<weft.NdArray>, args: unknown[], tol: number, msg: string) {
  const want = values(await off(...(args as weft.InputValue[])));
  rel(t, await on(...(args as weft.InputValue[])), want, tol, `${msg}: equal to the unrewritten graph on seeded values`);
}

const r = rng(202);

t.test('log1p: log(1 + x)', async (t) => {
  const x = pt.vector('x');
  const c = await both(t, 'log1p', [x], pt.log(pt.add(1, x)), {
    before: 'Composite{log(add(i0,i1))} [id A]   0\n |TensorConstant{[1]} [id B]\n |x [id C]',
    after: 'Elemwise{log1p} [id A]   0\n |x [id B]',
  });
  t.equal(c.applied, 1);
  // log1p(1e-10) = 1e-10 - 5e-21 + 3.3e-31 - ...; 1 + 1e-10 rounds first, losing 8 digits.
  const tiny = [1e-10, 1e-15, -1e-12];
  const series = tiny.map((v) => v - (v * v) / 2 + (v * v * v) / 3);
  rel(t, await c.on(tiny), series, 1e-15, 'log1p of tiny values');
  const naive = values(await c.off(tiny));
  t.ok(Math.abs(naive[0]! - series[0]!) > 1e-9 * series[0]!, `without the rewrite the error is large (${naive[0]})`);
  await sameOnSeeded(t, c.on, c.off, [r.uniform([8], { low: 0, high: 3 })], 1e-15, 'log1p');
  // x + 1 and 1 + x + y, and a float32 x with a float64 1: x is computed in the sum's dtype.
  const y = pt.vector('y');
  const d = await both(t, 'log1p', [x, y], pt.log(pt.add(x, 1, y)), {
    after: 'Composite{log1p(add(i0,i1))} [id A]   0\n |x [id B]\n |y [id C]',
  });
  t.equal(d.applied, 1);
  rel(t, await d.on([1e-10], [2e-10]), [3e-10 - 4.5e-20], 1e-15, '1 + x + y');
  const f = pt.vector('f', 'float32');
  const e = await both(t, 'log1p', [f], pt.log(pt.add(pt.constant(1, { dtype: 'float64' }), f)), {
    after: 'Composite{log1p(cast{float64}(i0))} [id A]   0\n |f [id B]',
  });
  t.equal((await e.on(new Float32Array([1e-10]))).dtype, 'float64');
  rel(t, await e.on(new Float32Array([1e-10])), [Math.fround(1e-10) - Math.fround(1e-10) ** 2 / 2], 1e-15, 'float32 x, float64 sum');
  // Not without a 1, and not on an integer sum (int8 127 + 1 wraps to -128: log gives NaN, as it must).
  const w = pt.vector('w');
  for (const [out, why] of [[pt.log(pt.add(2, x)), 'log(2 + x)'], [pt.log(pt.add(x, w)), 'log(x + w)'], [pt.log(x), 'log(x)']] as const) {
    const n = await both(t, 'log1p', [x, w], out);
    t.equal(n.applied, 0, `not fired: ${why}`);
    t.equal(weft.debugprint(n.on), weft.debugprint(n.off), `unchanged: ${why}`);
  }
  const i = pt.vector('i', 'int8');
  const n = await both(t, 'log1p', [i], pt.log(pt.add(i, 1)));
  t.equal(n.applied, 0, 'not fired: an int8 sum');
  const got = values(await n.on(new Int8Array([127, 0])));
  t.ok(Number.isNaN(got[0]!), 'int8 127 + 1 wraps before the log');
  t.equal(got[1], 0);
});

t.test('expm1: exp(x) - 1', async (t) => {
  const x = pt.vector('x');
  const c = await both(t, 'expm1', [x], pt.sub(pt.exp(x), 1), {
    before: 'Composite{sub(exp(i0),i1)} [id A]   0\n |x [id B]\n |TensorConstant{[1]} [id C]',
    after: 'Elemwise{expm1} [id A]   0\n |x [id B]',
  });
  t.equal(c.applied, 1);
  const tiny = [1e-10, -1e-12, 1e-300];
  rel(t, await c.on(tiny), tiny.map((v) => v + (v * v) / 2 + (v * v * v) / 6), 1e-15, 'expm1 of tiny values');
  t.ok(Math.abs(values(await c.off(tiny))[0]! - 1.00000000005e-10) > 1e-18, 'without the rewrite the error is large');
  await sameOnSeeded(t, c.on, c.off, [r.normal([8])], 1e-15, 'expm1');
  // exp(x) + -1 and -1 + exp(x).
  for (const out of [pt.add(pt.exp(x), -1), pt.add(-1, pt.exp(x))]) {
    const d = await both(t, 'expm1', [x], out, { after: 'Elemwise{expm1} [id A]   0\n |x [id B]' });
    t.equal(d.applied, 1);
  }
  for (const [out, why] of [[pt.sub(pt.exp(x), 2), 'exp(x) - 2'], [pt.sub(1, pt.exp(x)), '1 - exp(x)'], [pt.sub(x, 1), 'x - 1'], [pt.add(pt.exp(x), 1), 'exp(x) + 1']] as const) {
    const n = await both(t, 'expm1', [x], out);
    t.equal(n.applied, 0, `not fired: ${why}`);
    t.equal(weft.debugprint(n.on), weft.debugprint(n.off), `unchanged: ${why}`);
  }
});

t.test('log_sigmoid: log(sigmoid(x)) and log(1 - sigmoid(x))', async (t) => {
  const x = pt.vector('x');
  const c = await both(t, 'log_sigmoid', [x], pt.log(pt.sigmoid(x)), {
    before: 'Composite{log(sigmoid(i0))} [id A]   0\n |x [id B]',
    after: 'Composite{neg(softplus(neg(i0)))} [id A]   0\n |x [id B]',
  });
  t.equal(c.applied, 1);
  // log(sigmoid(x)) = -log(1 + e^-x): -800 at x = -800, -log 2 at 0, -e^-40 at 40.
  rel(t, await c.on([-800, 0, 40]), [-800, -Math.LN2, -Math.exp(-40)], 1e-15, 'log(sigmoid(x))');
  t.equal(values(await c.off([-800]))[0], -Infinity, 'without the rewrite: -Infinity');
  await sameOnSeeded(t, c.on, c.off, [r.normal([8], { std: 3 })], 1e-14, 'log(sigmoid(x))');
  const d = await both(t, 'log_sigmoid', [x], pt.log(pt.sub(1, pt.sigmoid(x))), {
    before: 'Composite{log(sub(i0,sigmoid(i1)))} [id A]   0\n |TensorConstant{[1]} [id B]\n |x [id C]',
    after: 'Composite{neg(softplus(i0))} [id A]   0\n |x [id B]',
  });
  t.equal(d.applied, 1);
  rel(t, await d.on([800, 0, -40]), [-800, -Math.LN2, -Math.exp(-40)], 1e-15, 'log(1 - sigmoid(x))');
  await sameOnSeeded(t, d.on, d.off, [r.normal([8])], 1e-14, 'log(1 - sigmoid(x))');
  for (const [out, why] of [[pt.log(pt.sub(2, pt.sigmoid(x))), 'log(2 - sigmoid(x))'], [pt.log(pt.tanh(x)), 'log(tanh(x))'], [pt.sigmoid(pt.log(x)), 'sigmoid(log(x))']] as const) {
    const n = await both(t, 'log_sigmoid', [x], out);
    t.equal(n.applied, 0, `not fired: ${why}`);
  }
});

t.test('the gradient of log(sigmoid(x)) at extreme inputs', async (t) => {
  const x = pt.vector('x');
  const g = weft.grad(pt.sum(pt.log(pt.sigmoid(x))), x);
  const fn = await weft.compile([x], g);
  // d/dx log(sigmoid(x)) = 1 - sigmoid(x): 1 at -800, 1/2 at 0, 0 at 800.
  t.same(values(await fn([-800, 0, 800])), [1, 0.5, 0]);
  t.ok(!weft.debugprint(fn).includes('trueDiv'), 'no division by sigmoid(x) is left');
  const off = await weft.compile([x], g, { mode: new weft.Mode({ excluding: ['mul_div_cancel'] }) });
  t.ok(Number.isNaN(values(await off([-800]))[0]!), 'without mul_div_cancel: 0/0');
  // And for float32.
  const f = pt.vector('f', 'float32');
  const fn32 = await weft.compile([f], weft.grad(pt.sum(pt.log(pt.sigmoid(f))), f));
  t.same(values(await fn32(new Float32Array([-200, 0, 200]))), [1, 0.5, 0]);
  await weft.verifyGrad((v) => pt.log(pt.sigmoid(v)), [r.normal([5], { std: 4 })]);
});

t.test('log_softmax: log(softmax(x))', async (t) => {
  const x = pt.vector('x');
  const c = await both(t, 'log_softmax', [x], pt.log(pt.softmax(x)), {
    before: 'Elemwise{log} [id A]   1\n |Softmax{axis=0} [id B]   0\n   |x [id C]',
    after: 'LogSoftmax{axis=0} [id A]   0\n |x [id B]',
  });
  t.equal(c.applied, 1);
  t.same(values(await c.on([1000, 0])), [0, -1000], 'log(softmax([1000, 0])) = [0, -1000]');
  t.same(values(await c.off([1000, 0])), [0, -Infinity], 'without the rewrite: -Infinity');
  await sameOnSeeded(t, c.on, c.off, [r.normal([6])], 1e-14, 'log(softmax(x))');
  // Along axis 0 of a matrix: the axis is kept.
  const m = pt.matrix('m');
  const d = await both(t, 'log_softmax', [m], pt.log(pt.softmax(m, 0)), { after: 'LogSoftmax{axis=0} [id A]   0\n |m [id B]' });
  rel(t, await d.on([[1000, 1], [0, 1]]), [0, -Math.LN2, -1000, -Math.LN2], 1e-15, 'axis 0');
  const n = await both(t, 'log_softmax', [x], pt.log(pt.exp(pt.softmax(x))));
  t.equal(n.applied, 0, 'not fired: log(exp(softmax(x))) is log_exp');
  const n2 = await both(t, 'log_softmax', [x], pt.exp(pt.softmax(x)));
  t.equal(n2.applied, 0, 'not fired: exp(softmax(x))');
});

t.test('softmax_grad_of_log: the gradient of log(softmax(x))', async (t) => {
  const x = pt.vector('x');
  const g = weft.grad(pt.sum(pt.log(pt.softmax(x))), x);
  const c = await both(t, 'softmax_grad_of_log', [x], g);
  t.equal(c.applied, 1);
  // d/dx_i sum_j log softmax_j = 1 - n softmax_i: [1 - 2*1, 1 - 2*0] at [1000, 0].
  t.same(values(await c.on([1000, 0])), [-1, 1]);
  t.ok(values(await c.off([1000, 0])).every(Number.isNaN), 'without the rewrite: NaN');
  t.notOk(c.on.fgraph.toposort().some((n) => String(n.op).startsWith('SoftmaxGrad')), 'no SoftmaxGrad left');
  await sameOnSeeded(t, c.on, c.off, [r.normal([6])], 1e-13, 'gradient');
  // Weighted, along axis 1 of a matrix: d/dm_ij = w_j - (sum_k w_k) softmax_ij.
  const m = pt.matrix('m');
  const w = [[1, 2, 3]];
  const gm = weft.grad(pt.sum(pt.mul(pt.log(pt.softmax(m, 1)), w)), m);
  const d = await both(t, 'softmax_grad_of_log', [m], gm);
  t.equal(d.applied, 1);
  const mv = [[1000, 0, -1000], [0, 0, 0]];
  rel(t, await d.on(mv), [1 - 6, 2, 3, 1 - 2, 2 - 2, 3 - 2], 1e-15, 'weighted, axis 1');
  // The gradient of softmax itself has no division by it: not fired.
  const gs = weft.grad(pt.sum(pt.mul(pt.softmax(x), [1, 2])), x);
  const n = await both(t, 'softmax_grad_of_log', [x], gs);
  t.equal(n.applied, 0, 'not fired: the gradient of softmax(x)');
  await sameOnSeeded(t, n.on, n.off, [r.normal([2])], 0, 'gradient of softmax');
  await weft.verifyGrad((v) => pt.log(pt.softmax(v)), [r.normal([2, 3])]);
});

t.test('stabilize runs in FAST_RUN only', async (t) => {
  const x = pt.vector('x');
  const fc = await weft.compile([x], pt.log(pt.add(1, x)), { mode: 'FAST_COMPILE' });
  t.equal(weft.debugprint(fc), 'Elemwise{log} [id A]   1\n |Elemwise{add} [id B]   0\n   |TensorConstant{[1]} [id C]\n   |x [id D]');
  const fr = await weft.compile([x], pt.log(pt.add(1, x)));
  t.equal(weft.debugprint(fr), 'Elemwise{log1p} [id A]   0\n |x [id B]');
});
