// NumPy's and PyTensor's extra ops (issue 14), after PyTensor's test_extra_ops.py (TestCumOp,
// TestSearchsortedOp, TestBinCount, TestUnique) and test_sort.py (TestSort, TestTopK): cumsum and
// cumprod (gradients and Rop, the cumprod gradient where x has zeros), sort, argsort (stable, NaN last),
// topk and argtopk (largest first; negative k the smallest), searchsorted, bincount, unique:
// values against NumPy's, verifyGrad, Rop, inferShape, 0 and 2 workers, bad inputs.
import t from 'tap';
import { pt, rng, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
const r = rng(5772);

async function value(inputs: TV[], y: TV, xs: unknown[], options: weft.CompileOptions = {}): Promise<unknown> {
  const fn = await weft.compile(inputs, y, { onUnusedInput: 'ignore', ...options });
  return weft.tolist((await fn(...(xs as weft.InputValue[]))) as weft.NdArray);
}

t.test('cumsum and cumprod: NumPy values, dtypes, gradients (zeros too), Rop, inferShape (TestCumOp)', async (t) => {
  const m = pt.matrix('m');
  const a = [[1, 2, 3], [4, 5, 6]];
  t.same(await value([m], pt.cumsum(m), [a]), [1, 3, 6, 10, 15, 21], 'flattened');
  t.same(await value([m], pt.cumsum(m, { axis: 0 }), [a]), [[1, 2, 3], [5, 7, 9]]);
  t.same(await value([m], pt.cumsum(m, { axis: -1 }), [a]), [[1, 3, 6], [4, 9, 15]]);
  t.same(await value([m], pt.cumprod(m, { axis: 1 }), [a]), [[1, 2, 6], [4, 20, 120]]);
  const i8 = pt.vector('i', 'int8');
  t.equal(pt.cumsum(i8).dtype, 'int32', 'small integers accumulate in int32');
  t.same(await value([i8], pt.cumsum(i8), [new Int8Array([100, 100, 100])]), [100, 200, 300]);
  t.equal(pt.cumsum(pt.vector('u', 'uint8')).dtype, 'uint32');
  const f = pt.vector('f', 'float32');
  const got = (await (await weft.compile([f], pt.cumsum(f)))(new Float32Array([0.1, 0.2, 0.3]))).data;
  t.equal(got[2], Math.fround(Math.fround(Math.fround(0.1) + Math.fround(0.2)) + Math.fround(0.3)), 'float32 partials round as they are stored');
  const x = r.normal([3, 4]);
  for (const axis of [0, 1]) {
    await weft.verifyGrad((v: TV) => pt.cumsum(v, { axis }), [x], { rng: rng(1) });
    await weft.verifyGrad((v: TV) => pt.cumprod(v, { axis }), [x], { rng: rng(2) });
    await weft.checkRop((v: TV) => pt.cumsum(v, { axis }), [x]);
    await weft.checkRop((v: TV) => pt.cumprod(v, { axis }), [x]);
    await weft.checkInferShape([m], [pt.cumsum(m, { axis }), pt.cumprod(m, { axis })], [x]);
  }
  // The gradient of cumprod where x has zeros (PyTensor's divides by x and gives NaN).
  const v = pt.vector('v');
  const g = weft.grad(pt.cumprod(v).sum(), v) as TV;
  t.same(await value([v], g, [[2, 0, 3, 4]]), [1, 2 + 6 + 24, 0, 0], 'd/dx of 2 + 0 + 0 + 0 ... at x = [2, 0, 3, 4]');
  t.same(await value([v], g, [[0, 0, 5]]), [1, 0, 0]);
  await throwsExactly(t, () => pt.cumsum(m, { axis: 2 }), RangeError, 'cumsum: axis 2 is out of range for a 2-d input (axes are -2..1)');
});

t.test('cumprod, second order: the gradient\'s gradient and the Rop\'s gradient (CumprodGradGrad), zeros too', async (t) => {
  const x = r.normal([3, 5]);
  for (const axis of [0, 1]) {
    const gradOf = (v: TV): TV => {
      const y = pt.cumprod(v, { axis });
      return weft.grad(y.mul(y).sum(), v) as TV;
    };
    await weft.verifyGrad(gradOf, [x], { rng: rng(3) });
    await weft.checkRop(gradOf, [x]);
    // The Rop's gradient, for x and for the eval point.
    await weft.verifyGrad((v: TV, e: TV) => (weft.Rop(pt.cumprod(v, { axis }), v, e) as TV).mul(v).sum(), [x, r.normal([3, 5])], { rng: rng(4) });
    const m = pt.matrix('m');
    await weft.checkInferShape([m], [gradOf(m), weft.grad(gradOf(m).sum(), m) as TV], [x]);
  }
  // The Hessian of sum(cumprod(v)) at a point with zeros, against its definition: entry (m, i)
  // is the sum over j >= max(m, i) of the product of v_k for k <= j but m and i.
  const v = pt.vector('v');
  const g = weft.grad(pt.cumprod(v).sum(), v) as TV;
  const point = [2, 0, 3, 0, 5];
  const rows: number[][] = [];
  for (let i = 0; i < 5; i++) {
    const hi = weft.grad(g.get(i), v) as TV;
    rows.push(Array.from(((await (await weft.compile([v], hi))(point)) as weft.NdArray).data as Float64Array));
  }
  const want = point.map((_, m) => point.map((__, i) => {
    if (m === i) return 0;
    let s = 0;
    for (let j = Math.max(m, i); j < 5; j++) s += point.slice(0, j + 1).reduce((p, e, k) => (k === m || k === i ? p : p * e), 1);
    return s;
  }));
  t.same(rows, want, 'the Hessian at [2, 0, 3, 0, 5]');
});

t.test('sort and argsort: NumPy values, stable, NaN last, axes, gradient (TestSort)', async (t) => {
  const v = pt.vector('v');
  const m = pt.matrix('m');
  t.same(await value([v], pt.sort(v), [[3, 1, NaN, 2, -Infinity]]), [-Infinity, 1, 2, 3, NaN]);
  t.same(await value([v], pt.argsort(v), [[3, 1, NaN, 2, 1]]), [1, 4, 3, 0, 2], 'ties keep their order; NaN last');
  t.same(await value([m], pt.sort(m), [[[3, 1, 2], [0, 5, 4]]]), [[1, 2, 3], [0, 4, 5]], 'the last axis by default');
  t.same(await value([m], pt.sort(m, { axis: 0 }), [[[3, 1, 2], [0, 5, 4]]]), [[0, 1, 2], [3, 5, 4]]);
  t.same(await value([m], pt.argsort(m, { axis: 0 }), [[[3, 1, 2], [0, 5, 4]]]), [[1, 0, 0], [0, 1, 1]]);
  const i = pt.vector('i', 'int32');
  t.same(await value([i], pt.sort(i), [[5, -2, 7]]), [-2, 5, 7]);
  const x = r.normal([3, 5]);
  for (const axis of [0, 1]) {
    await weft.verifyGrad((a: TV) => pt.sort(a, { axis }), [x], { rng: rng(3) });
    await weft.checkRop((a: TV) => pt.sort(a, { axis }), [x]);
  }
  await weft.checkInferShape([m], [pt.sort(m), pt.argsort(m, { axis: 0 })], [x]);
  const g = weft.grad(pt.sort(v).get(0), v) as TV;
  t.same(await value([v], g, [[3, 1, 2]]), [0, 1, 0], 'the smallest element gets the gradient of the first');
  await throwsExactly(t, () => pt.sort(pt.vector('b', 'bool')), TypeError, 'Sort{axis=0}: cannot order bools (b); cast them to an integer dtype');
});

t.test('topk and argtopk: largest first, the smallest for negative k, gradient (TestTopK)', async (t) => {
  const v = pt.vector('v');
  const m = pt.matrix('m');
  t.same(await value([v], pt.topk(v, 2), [[3, 9, 1, 9, 4]]), [9, 9]);
  t.same(await value([v], pt.argtopk(v, 3), [[3, 9, 1, 9, 4]]), [1, 3, 4], 'ties in index order');
  t.same(await value([v], pt.argtopk(v, -2), [[3, 9, 1, 9, 4]]), [2, 0], 'the two smallest');
  t.same(await value([m], pt.topk(m, 1, { axis: 0 }), [[[3, 1], [0, 5]]]), [[3, 5]]);
  t.same(await value([m], pt.topk(m, 2), [[[3, 1, 2], [0, 5, 4]]]), [[3, 2], [5, 4]]);
  const x = r.normal([4, 6]);
  await weft.verifyGrad((a: TV) => pt.topk(a, 3), [x], { rng: rng(4) });
  await weft.verifyGrad((a: TV) => pt.topk(a, -2, { axis: 0 }), [x], { rng: rng(5) });
  await weft.checkInferShape([m], [pt.topk(m, 2), pt.argtopk(m, -3, { axis: 0 })], [x]);
  await throwsExactly(t, () => pt.topk(pt.tensor({ name: 'w', shape: [3] }), 4), RangeError, 'argtopk: k = 4 but axis 0 of w has length 3');
  await throwsExactly(t, () => pt.argtopk(v, 0), RangeError, 'argtopk: k must be a non-zero integer, got 0');
});

t.test('searchsorted, bincount, unique (TestSearchsortedOp, TestBinCount, TestUnique)', async (t) => {
  const s = pt.vector('s');
  const q = pt.vector('q');
  t.same(await value([s, q], pt.searchsorted(s, q), [[1, 2, 2, 3], [0, 2, 2.5, 9, NaN]]), [0, 1, 3, 4, 4]);
  t.same(await value([s, q], pt.searchsorted(s, q, { side: 'right' }), [[1, 2, 2, 3], [0, 2, 2.5, 9]]), [0, 3, 3, 4]);
  const qm = pt.matrix('qm');
  t.same(await value([s, qm], pt.searchsorted(s, qm), [[1, 2, 3], [[2, 0], [4, 3]]]), [[1, 0], [3, 2]], 'values of any shape');
  const i = pt.vector('i', 'int32');
  const w = pt.vector('w');
  t.same(await value([i], pt.bincount(i), [[0, 1, 1, 3, 1]]), [1, 3, 0, 1]);
  t.same(await value([i], pt.bincount(i, { minlength: 6 }), [[0, 1, 1, 3, 1]]), [1, 3, 0, 1, 0, 0]);
  t.same(await value([i, w], pt.bincount(i, { weights: w }), [[0, 1, 1, 3], [0.5, 1, 2, 4]]), [0.5, 3, 0, 4]);
  await weft.verifyGrad((a: TV) => pt.bincount(pt.constant([0, 2, 2, 1], { dtype: 'int32' }), { weights: a }), [r.normal([4])], { rng: rng(6) });
  t.same(await value([q], pt.unique(q), [[3, 1, NaN, 3, 2, 1, NaN]]), [1, 2, 3, NaN]);
  const mm = pt.matrix('mm', 'int32');
  t.same(await value([mm], pt.unique(mm), [[[4, 2], [4, 2]]]), [2, 4], 'of the flattened array');
  // Data-dependent lengths in a plan: computed when the call gets there, then the rest is planned.
  const total = pt.bincount(i).sum().add(pt.unique(i).shape.get(0));
  for (const workers of [0, 2]) t.same(await value([i], total, [[0, 1, 1, 7]], { workers }), 4 + 3, `workers ${workers}`);
  const fn = await weft.compile([i], pt.bincount(i));
  await t.rejects(fn([1, -1]), { message: /bincount: value -1 at position 1 is negative; bincount counts non-negative integers/ });
  await throwsExactly(t, () => pt.bincount(pt.vector('f')), TypeError, 'bincount: x must be a vector of integers, got f (TensorType(float64, (?,)))');
  await throwsExactly(t, () => pt.searchsorted(pt.matrix('sm'), q), TypeError, 'searchsorted: the sorted array must be a vector, got sm (TensorType(float64, (?, ?)))');
});

t.test('on 2 workers: the bits of the calling thread', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const m = pt.matrix('m');
  const y = pt.cumsum(pt.sort(m, { axis: 1 }), { axis: 0 }).add(pt.cumprod(m.mul(0.01).add(1), { axis: 1 })).add(pt.topk(m, 256).sum())
    .add(pt.searchsorted(pt.sort(m.get(0)), m).astype('float64'));
  const a = r.normal([512, 512]);
  const inline = (await (await weft.compile([m], y, { workers: 0 }))(a)).data;
  const pooled = (await (await weft.compile([m], y, { pool }))(a)).data;
  t.ok(inline.every((v, k) => Object.is(v, pooled[k])), 'equal bits');
});

t.teardown(() => weft.shutdown());
