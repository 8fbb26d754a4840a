// pool2d (issue 14), after PyTensor's test_pool.py (TestPool: test_pool_2d_with_padding,
// test_max_pool_2d_2D, the average modes, ignore_border): values against PyTensor's Pool.perform
// written out here, every mode with strides, padding and kept borders, gradients (verifyGrad;
// max: to every tie), Rop (max: the eval point at each window's maximum), inferShape, 0 and 2
// workers, bad options.
import t from 'tap';
import { pt, rng, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
const r = rng(1732);

type Mode = 'max' | 'sum' | 'average_inc_pad' | 'average_exc_pad';

/** PyTensor's Pool.perform for one 2-d plane. */
function reference(x: number[][], ws: [number, number], st: [number, number], pad: [number, number], ignoreBorder: boolean, mode: Mode): number[][] {
  const [H, W] = [x.length, x[0]!.length];
  const out = (n: number, a: 0 | 1): number => {
    if (ignoreBorder) return Math.floor((n + 2 * pad[a] - ws[a]) / st[a]) + 1;
    if (st[a] >= ws[a]) return Math.floor((n - 1) / st[a]) + 1;
    return Math.max(0, Math.floor((n - 1 - ws[a] + st[a]) / st[a])) + 1;
  };
  const [Hp, Wp] = [H + 2 * pad[0], W + 2 * pad[1]];
  const y = Array.from({ length: Hp }, (_, i) => Array.from({ length: Wp }, (_, j) => (i >= pad[0] && i < H + pad[0] && j >= pad[1] && j < W + pad[1] ? x[i - pad[0]]![j - pad[1]]! : 0)));
  const inc = mode === 'average_inc_pad';
  return Array.from({ length: out(H, 0) }, (_, i) => Array.from({ length: out(W, 1) }, (_, j) => {
    let [r0, r1] = [i * st[0], Math.min(i * st[0] + ws[0], Hp)];
    let [c0, c1] = [j * st[1], Math.min(j * st[1] + ws[1], Wp)];
    if (!inc) [r0, r1, c0, c1] = [Math.max(r0, pad[0]), Math.min(r1, H + pad[0]), Math.max(c0, pad[1]), Math.min(c1, W + pad[1])];
    const region = y.slice(r0, r1).flatMap((row) => row.slice(c0, c1));
    if (mode === 'max') return Math.max(...region);
    const s = region.reduce((a, b) => a + b, 0);
    return mode === 'sum' ? s : s / region.length;
  }));
}

const CASES: Array<{ ws: [number, number]; st?: [number, number]; pad?: [number, number]; ib?: boolean }> = [
  { ws: [2, 2] },
  { ws: [3, 2], st: [1, 2] },
  { ws: [2, 3], ib: false },
  { ws: [3, 3], st: [2, 1], ib: false },
  { ws: [3, 3], st: [2, 2], pad: [1, 2] },
  { ws: [2, 2], st: [3, 3] },
];
const MODES: Mode[] = ['max', 'sum', 'average_inc_pad', 'average_exc_pad'];

t.test('values: every mode, strides, padding, kept borders (against PyTensor\'s algorithm)', async (t) => {
  const x = pt.tensor4('x');
  const xv = r.normal([2, 3, 7, 8]);
  const planes = weft.tolist(xv) as number[][][][];
  for (const c of CASES) {
    for (const mode of MODES) {
      const y = pt.pool2d(x, { ws: c.ws, stride: c.st, pad: c.pad, ignoreBorder: c.ib, mode });
      const got = weft.tolist((await (await weft.compile([x], y))(xv)) as weft.NdArray) as number[][][][];
      const want = planes.map((p) => p.map((q) => reference(q, c.ws, c.st ?? c.ws, c.pad ?? [0, 0], c.ib ?? true, mode)));
      const flat = (a: unknown): number[] => (a as number[]).flat(3) as number[];
      const [g, w] = [flat(got), flat(want)];
      t.ok(g.length === w.length && w.every((v, k) => Math.abs(v - g[k]!) <= 1e-14 * Math.max(1, Math.abs(v))), `${JSON.stringify(c)} ${mode}`);
    }
  }
  const m = pt.matrix('m');
  t.same(weft.tolist((await (await weft.compile([m], pt.pool2d(m, { ws: [2, 2] })))([[1, 2, 3, 4], [5, 6, 7, 8]])) as weft.NdArray), [[6, 8]], 'a matrix');
});

t.test('gradients, Rop, inferShape; max: every tie gets the window\'s gradient (MaxPoolGrad)', async (t) => {
  const x = pt.tensor4('x');
  const xv = r.normal([1, 2, 6, 7]);
  for (const c of CASES) {
    for (const mode of MODES) {
      const o = { ws: c.ws, stride: c.st, pad: c.pad, ignoreBorder: c.ib, mode };
      await weft.verifyGrad((a: TV) => pt.pool2d(a, o), [xv], { rng: rng(12) });
      await weft.checkRop((a: TV) => pt.pool2d(a, o), [xv]);
      const y = pt.pool2d(x, o);
      await weft.checkInferShape([x], [y, weft.grad(y.sum(), x) as TV], [xv]);
    }
  }
  const m = pt.matrix('m');
  const g = weft.grad(pt.pool2d(m, { ws: [2, 2] }).sum(), m) as TV;
  t.same(weft.tolist((await (await weft.compile([m], g))([[1, 3, 3, 0], [3, 2, 1, 1]])) as weft.NdArray), [[0, 1, 1, 0], [1, 0, 0, 0]], 'ties each get it');
});

t.test('second order: the gradient\'s gradient for every mode (PyTensor\'s DownsampleFactorMaxGradGrad for max), its Rop, inferShape', async (t) => {
  const x = pt.tensor4('x');
  // Normal draws: no window has ties, so max pooling is differentiable at the point.
  const xv = r.normal([1, 2, 6, 7]);
  for (const c of CASES.slice(0, 5)) {
    for (const mode of MODES) {
      const o = { ws: c.ws, stride: c.st, pad: c.pad, ignoreBorder: c.ib, mode };
      // The gradient of sum(pool(x)^2) is PoolGrad(x, y, 2y): second order through gz = 2y.
      const gradOf = (a: TV): TV => {
        const y = pt.pool2d(a, o);
        return weft.grad(y.mul(y).sum(), a) as TV;
      };
      await weft.verifyGrad(gradOf, [xv], { rng: rng(13) });
      await weft.checkRop(gradOf, [xv]);
      const g = gradOf(x);
      await weft.checkInferShape([x], [g, weft.grad(g.sum(), x) as TV], [xv]);
    }
  }
  // max: per window, the sum of the second-order direction where x equals the window's maximum.
  const m = pt.matrix('m');
  const gz = pt.matrix('gz');
  const h = pt.matrix('h');
  const gx = weft.grad(pt.pool2d(m, { ws: [2, 2] }).mul(gz).sum(), m) as TV;
  const hv = weft.grad(gx.mul(h).sum(), gz) as TV;
  const got = (await (await weft.compile([m, gz, h], hv))([[1, 3, 3, 0], [3, 2, 1, 1]], [[1, 1]], [[10, 20, 30, 40], [50, 60, 70, 80]])) as weft.NdArray;
  t.same(weft.tolist(got), [[20 + 50, 30]], 'ties each count');
});

t.test('float32 on 2 workers: the bits of the calling thread', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.tensor4('x', 'float32');
  const y = pt.pool2d(x, { ws: [2, 2], mode: 'max' }).add(pt.pool2d(x, { ws: [3, 3], stride: [2, 2], pad: [1, 1], mode: 'average_exc_pad' }).get(weft.slice(null), weft.slice(null), weft.slice(0, 14), weft.slice(0, 14)));
  const g = weft.grad(y.mul(y).sum(), x) as TV;
  const xv = weft.ndarray(Float32Array.from(r.normal([4 * 8 * 28 * 28]).data as Float64Array), [4, 8, 28, 28]);
  const a = (await (await weft.compile([x], [y, g], { workers: 0 }))(xv)) as weft.NdArray[];
  const b = (await (await weft.compile([x], [y, g], { pool }))(xv)) as weft.NdArray[];
  a.forEach((v, k) => t.ok(v.data.every((e, i) => Object.is(e, b[k]!.data[i])), `output ${k}: equal bits`));
});

t.test('bad options and inputs: the exact errors', async (t) => {
  const x = pt.tensor4('x');
  await throwsExactly(t, () => pt.pool2d(x, { ws: [2, 2], pad: [1, 1], ignoreBorder: false }), RangeError, 'pool2d: padding needs ignoreBorder: true (as PyTensor)');
  await throwsExactly(t, () => pt.pool2d(x, { ws: [2, 2], pad: [2, 0] }), RangeError, 'pool2d: the padding [2, 0] must be smaller than the window [2, 2]');
  await throwsExactly(t, () => pt.pool2d(x, { ws: [0, 2] }), RangeError, 'pool2d: ws must be two integers of at least 1, got [0, 2]');
  await throwsExactly(t, () => pt.pool2d(x, { ws: [2, 2], mode: 'avg' as 'sum' }), TypeError, 'pool2d: mode must be one of max, sum, average_inc_pad, average_exc_pad, got "avg"');
  await throwsExactly(t, () => pt.pool2d(pt.vector('v'), { ws: [2, 2] }), TypeError, 'Pool{max, ws=2x2, stride=2x2}: expected at least 2 axes (rows and columns last), got v (TensorType(float64, (?,)))');
  const fn = await weft.compile([x], pt.pool2d(x, { ws: [3, 3] }));
  await t.rejects(fn(r.normal([1, 1, 2, 5])), { message: /Pool\{max, ws=3x3, stride=3x3\}: the window does not fit in an input of shape \[1, 1, 2, 5\]/ });
});

t.teardown(() => weft.shutdown());
