// NumPy's shape and extra functions of wave 2 (issue 14): squeeze, expandDims, swapaxes and flip
// (views), roll, tile, repeat, pad, diff, tril, triu, oneHot, diagonal, trace, diag, full and
// linspace: values against NumPy's (written out, or computed here element by element),
// inferShape against the real shapes, verifyGrad and Rop, the same bits on 0 and 2 workers, and
// bad inputs with their exact errors.
import t from 'tap';
import { pt, rng, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
const r = rng(2718);

/** The value of `y` for inputs `xs`, as nested lists. */
async function value(inputs: TV[], y: TV, xs: unknown[]): Promise<unknown> {
  const fn = await weft.compile(inputs, y, { onUnusedInput: 'ignore' });
  return weft.tolist((await fn(...(xs as weft.InputValue[]))) as weft.NdArray);
}

const m23 = [[1, 2, 3], [4, 5, 6]];

t.test('squeeze, expandDims, swapaxes, flip: NumPy values, and views (DimShuffle, Subtensor)', async (t) => {
  const x = pt.tensor({ name: 'x', shape: [1, 3, 1] });
  t.same(await value([x], pt.squeeze(x), [[[[1], [2], [3]]]]), [1, 2, 3]);
  t.same(await value([x], pt.squeeze(x, { axis: 0 }), [[[[1], [2], [3]]]]), [[1], [2], [3]]);
  t.same(await value([x], pt.squeeze(x, { axis: [-1, 0] }), [[[[1], [2], [3]]]]), [1, 2, 3]);
  t.match(String(pt.squeeze(x).owner!.op), /^DimShuffle/, 'a static length 1 is dropped by a view');
  const m = pt.matrix('m');
  // An axis whose length is known only when running: checked then.
  t.same(await value([m], pt.squeeze(m, { axis: 1 }), [[[1], [2]]]), [1, 2]);
  await t.rejects(value([m], pt.squeeze(m, { axis: 1 }), [m23]));
  t.same(await value([m], pt.expandDims(m, 0), [m23]), [m23]);
  t.same((pt.expandDims(m, [0, 3]).type.shape), [1, null, null, 1]);
  t.same(await value([m], pt.expandDims(m, -1), [m23]), [[[1], [2], [3]], [[4], [5], [6]]]);
  t.same(await value([m], pt.swapaxes(m, 0, -1), [m23]), [[1, 4], [2, 5], [3, 6]]);
  t.same(await value([m], pt.flip(m, { axis: 1 }), [m23]), [[3, 2, 1], [6, 5, 4]]);
  t.same(await value([m], pt.flip(m), [m23]), [[6, 5, 4], [3, 2, 1]]);
  t.match(String(pt.flip(m).owner!.op), /^Subtensor/, 'flip is a view (negative strides)');
  const v = r.normal([3, 4]);
  for (const f of [(a: TV) => pt.flip(a, { axis: 0 }), (a: TV) => pt.swapaxes(a, 0, 1), (a: TV) => pt.expandDims(a, 1), (a: TV) => pt.squeeze(pt.expandDims(a, 1), { axis: 1 })]) {
    await weft.verifyGrad(f, [v], { rng: rng(1) });
    await weft.checkRop(f, [v]);
    await weft.checkInferShape([m], [f(m)], [v]);
  }
  await throwsExactly(t, () => pt.squeeze(pt.tensor({ name: 'y', shape: [2, 3] }), { axis: 1 }), RangeError, 'squeeze: axis 1 of y (TensorType(float64, (2, 3))) has length 3; only axes of length 1 can be removed');
  await throwsExactly(t, () => pt.swapaxes(m, 0, 2), RangeError, 'swapaxes: axis 2 is out of range for a 2-d input (axes are -2..1)');
  await throwsExactly(t, () => pt.expandDims(m, 3), RangeError, 'expandDims: axis 3 is out of range for a 3-d input (axes are -3..2)');
});

t.test('roll, tile, repeat: NumPy values (also symbolic shifts and wrapping), gradients, shapes', async (t) => {
  const v = pt.vector('v');
  const m = pt.matrix('m');
  const ten = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  t.same(await value([v], pt.roll(v, 2), [ten]), [8, 9, 0, 1, 2, 3, 4, 5, 6, 7]);
  t.same(await value([v], pt.roll(v, -3), [ten]), [3, 4, 5, 6, 7, 8, 9, 0, 1, 2]);
  t.same(await value([v], pt.roll(v, 12), [ten]), [8, 9, 0, 1, 2, 3, 4, 5, 6, 7], 'a shift beyond the length wraps');
  const s = pt.scalar('s', 'int32');
  t.same(await value([v, s], pt.roll(v, s), [ten, 1]), [9, 0, 1, 2, 3, 4, 5, 6, 7, 8], 'a symbolic shift');
  t.same(await value([m], pt.roll(m, 1), [m23]), [[6, 1, 2], [3, 4, 5]], 'no axis: the flattened array');
  t.same(await value([m], pt.roll(m, -1, { axis: 1 }), [m23]), [[2, 3, 1], [5, 6, 4]]);
  t.same(await value([m], pt.roll(m, [1, 1], { axis: [0, 1] }), [m23]), [[6, 4, 5], [3, 1, 2]]);
  t.same(await value([v], pt.tile(v, 2), [[0, 1, 2]]), [0, 1, 2, 0, 1, 2]);
  t.same(await value([v], pt.tile(v, [2, 2]), [[0, 1, 2]]), [[0, 1, 2, 0, 1, 2], [0, 1, 2, 0, 1, 2]]);
  t.same(await value([m], pt.tile(m, [2, 1]), [[[1, 2], [3, 4]]]), [[1, 2], [3, 4], [1, 2], [3, 4]]);
  t.same(await value([m], pt.tile(m, 2), [[[1, 2], [3, 4]]]), [[1, 2, 1, 2], [3, 4, 3, 4]], 'reps shorter than the axes count for the last');
  t.same(await value([m], pt.repeat(m, 2), [[[1, 2], [3, 4]]]), [1, 1, 2, 2, 3, 3, 4, 4]);
  t.same(await value([m], pt.repeat(m, 2, { axis: 1 }), [[[1, 2], [3, 4]]]), [[1, 1, 2, 2], [3, 3, 4, 4]]);
  t.same(await value([m], pt.repeat(m, 3, { axis: 0 }), [[[1, 2]]]), [[1, 2], [1, 2], [1, 2]]);
  t.same(await value([m], pt.repeat(m, 0, { axis: 0 }), [[[1, 2]]]), []);
  const a = r.normal([3, 4]);
  for (const f of [(x: TV) => pt.roll(x, 2, { axis: 1 }), (x: TV) => pt.roll(x, -5), (x: TV) => pt.tile(x, [2, 3]), (x: TV) => pt.repeat(x, 3, { axis: 0 }), (x: TV) => pt.repeat(x, 2)]) {
    await weft.verifyGrad(f, [a], { rng: rng(2) });
    await weft.checkRop(f, [a]);
    await weft.checkInferShape([m], [f(m)], [a]);
  }
  await throwsExactly(t, () => pt.tile(m, [2, -1]), RangeError, 'tile: each repetition must be a non-negative integer, got -1');
  await throwsExactly(t, () => pt.repeat(m, [1, 2] as unknown as number), TypeError, 'repeat: repeats must be one number (a count per element needs integer indexing: take)');
  await throwsExactly(t, () => pt.roll(m, [1, 2], { axis: 0 }), RangeError, 'roll: 2 shifts for 1 axes');
});

t.test('pad (constant, edge, reflect) and diff: NumPy values, gradients, shapes', async (t) => {
  const v = pt.vector('v');
  const m = pt.matrix('m');
  t.same(await value([v], pt.pad(v, [2, 1]), [[1, 2, 3]]), [0, 0, 1, 2, 3, 0]);
  t.same(await value([v], pt.pad(v, 1, { constantValue: 9 }), [[1, 2, 3]]), [9, 1, 2, 3, 9]);
  t.same(await value([v], pt.pad(v, [2, 1], { mode: 'edge' }), [[1, 2, 3]]), [1, 1, 1, 2, 3, 3]);
  t.same(await value([v], pt.pad(v, [2, 1], { mode: 'reflect' }), [[1, 2, 3]]), [3, 2, 1, 2, 3, 2]);
  t.same(await value([m], pt.pad(m, [[1, 0], [0, 2]]), [m23]), [[0, 0, 0, 0, 0], [1, 2, 3, 0, 0], [4, 5, 6, 0, 0]]);
  t.same(await value([m], pt.pad(m, [[1, 1], [1, 1]], { mode: 'reflect' }), [m23]), [[5, 4, 5, 6, 5], [2, 1, 2, 3, 2], [5, 4, 5, 6, 5], [2, 1, 2, 3, 2]]);
  t.same(await value([m], pt.pad(m, 1, { mode: 'edge' }), [m23]), [[1, 1, 2, 3, 3], [1, 1, 2, 3, 3], [4, 4, 5, 6, 6], [4, 4, 5, 6, 6]]);
  t.same(await value([v], pt.diff(v), [[1, 2, 4, 7, 0]]), [1, 2, 3, -7]);
  t.same(await value([v], pt.diff(v, { n: 2 }), [[1, 2, 4, 7, 0]]), [1, 1, -10]);
  t.same(await value([m], pt.diff(m, { axis: 0 }), [[[1, 2], [4, 8]]]), [[3, 6]]);
  const a = r.normal([4, 5]);
  for (const f of [(x: TV) => pt.pad(x, [[1, 2], [0, 3]]), (x: TV) => pt.pad(x, 2, { mode: 'edge' }), (x: TV) => pt.pad(x, [[1, 2], [3, 1]], { mode: 'reflect' }), (x: TV) => pt.diff(x, { n: 2, axis: 0 })]) {
    await weft.verifyGrad(f, [a], { rng: rng(3) });
    await weft.checkRop(f, [a]);
    await weft.checkInferShape([m], [f(m)], [a]);
  }
  await throwsExactly(t, () => pt.pad(pt.tensor({ name: 'y', shape: [3] }), 3, { mode: 'reflect' }), RangeError, 'pad: a reflection on axis 0 of length 3 can add at most 2 elements on a side, not 3');
  await throwsExactly(t, () => pt.pad(m, [[1, 1]]), RangeError, 'pad: 1 pairs of widths for 2 axes');
  await throwsExactly(t, () => pt.pad(m, 1, { mode: 'wrap' as 'edge' }), TypeError, `pad: mode must be 'constant', 'edge' or 'reflect', got "wrap"`);
  await throwsExactly(t, () => pt.diff(m, { n: -1 }), RangeError, 'diff: n must be a non-negative integer, got -1');
});

t.test('tril, triu, oneHot, diagonal, trace, diag: NumPy values, batches, gradients, shapes', async (t) => {
  const m = pt.matrix('m');
  const m34 = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]];
  t.same(await value([m], pt.tril(m), [m34]), [[1, 0, 0, 0], [5, 6, 0, 0], [9, 10, 11, 0]]);
  t.same(await value([m], pt.tril(m, -1), [m34]), [[0, 0, 0, 0], [5, 0, 0, 0], [9, 10, 0, 0]]);
  t.same(await value([m], pt.triu(m, 1), [m34]), [[0, 2, 3, 4], [0, 0, 7, 8], [0, 0, 0, 12]]);
  const b = pt.tensor3('b');
  t.same(await value([b], pt.triu(b), [[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]]), [[[1, 2], [0, 4]], [[5, 6], [0, 8]]], 'over leading axes');
  t.same(await value([m], pt.diagonal(m), [m34]), [1, 6, 11]);
  t.same(await value([m], pt.diagonal(m, { offset: 1 }), [m34]), [2, 7, 12]);
  t.same(await value([m], pt.diagonal(m, { offset: -1 }), [m34]), [5, 10]);
  t.same(await value([m], pt.diagonal(m, { offset: 4 }), [m34]), []);
  t.same(await value([m], pt.diagonal(m, { offset: -3 }), [m34]), []);
  t.same(await value([b], pt.diagonal(b, { axis1: 1, axis2: 2 }), [[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]]), [[1, 4], [5, 8]]);
  t.same(await value([b], pt.diagonal(b), [[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]]), [[1, 7], [2, 8]], 'axes 0 and 1, the diagonal last');
  t.same(await value([m], pt.trace(m), [m34]), 18);
  t.same(await value([m], pt.diag(m, 1), [m34]), [2, 7, 12]);
  const v = pt.vector('v');
  t.same(await value([v], pt.diag(v), [[1, 2]]), [[1, 0], [0, 2]]);
  t.same(await value([v], pt.diag(v, 1), [[1, 2]]), [[0, 1, 0], [0, 0, 2], [0, 0, 0]]);
  t.same(await value([v], pt.diag(v, -2), [[1, 2]]), [[0, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0], [0, 2, 0, 0]]);
  const i = pt.vector('i', 'int32');
  t.same(await value([i], pt.oneHot(i, 3), [[0, 2, 1, 5, -1]]), [[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 0, 0], [0, 0, 0]]);
  t.equal(pt.oneHot(i, 3).dtype, 'float64');
  t.equal(pt.oneHot(i, 3, { dtype: 'int8' }).dtype, 'int8');
  const a = r.normal([4, 5]);
  for (const f of [(x: TV) => pt.tril(x, 1), (x: TV) => pt.triu(x, -1), (x: TV) => pt.diagonal(x, { offset: 1 }), (x: TV) => pt.trace(x), (x: TV) => pt.diag(x, -1)]) {
    await weft.verifyGrad(f, [a], { rng: rng(4) });
    await weft.checkRop(f, [a]);
    await weft.checkInferShape([m], [f(m)], [a]);
  }
  await weft.verifyGrad((x: TV) => pt.diag(x, 1), [r.normal([3])], { rng: rng(5) });
  await throwsExactly(t, () => pt.oneHot(v, 3), TypeError, 'oneHot: the indices must be integers, got v (TensorType(float64, (?,)))');
  await throwsExactly(t, () => pt.tril(v), TypeError, 'tril: expected at least 2 axes, got v (TensorType(float64, (?,)))');
  await throwsExactly(t, () => pt.diagonal(m, { axis1: 1, axis2: -1 }), RangeError, 'diagonal: axis1 and axis2 are both axis 1; they must differ');
  await throwsExactly(t, () => pt.diag(b), TypeError, 'diag: expected a vector or a matrix, got b (TensorType(float64, (?, ?, ?)))');
});

t.test('as methods, as PyTensor variables have them', async (t) => {
  const m = pt.matrix('m');
  const a = [[1, 2], [3, 4]];
  t.same(await value([m], m.swapaxes(0, 1), [a]), [[1, 3], [2, 4]]);
  t.same(await value([m], m.repeat(2, { axis: 0 }), [a]), [[1, 2], [1, 2], [3, 4], [3, 4]]);
  t.same(await value([m], m.diagonal(), [a]), [1, 4]);
  t.same(await value([m], m.trace(), [a]), 5);
  t.same(await value([m], pt.expandDims(m, 0).squeeze(), [a]), a);
});

t.test('broadcastTo: NumPy values, gradient (summed back), shapes, errors', async (t) => {
  const v = pt.vector('v');
  const c = pt.tensor({ name: 'c', shape: [null, 1] });
  t.same(await value([v], pt.broadcastTo(v, [2, 3]), [[1, 2, 3]]), [[1, 2, 3], [1, 2, 3]]);
  t.same(await value([c], pt.broadcastTo(c, [2, 3]), [[[1], [2]]]), [[1, 1, 1], [2, 2, 2]]);
  await weft.verifyGrad((a: TV) => pt.broadcastTo(a, [4, 3]), [r.normal([3])], { rng: rng(6) });
  await weft.checkInferShape([v], [pt.broadcastTo(v, [2, v.shape.get(0)])], [r.normal([3])]);
  await throwsExactly(t, () => pt.broadcastTo(pt.matrix('m'), [3]), TypeError, 'broadcastTo: m (TensorType(float64, (?, ?))) has 2 axes, more than the 1 of the shape');
  await throwsExactly(t, () => pt.broadcastTo(pt.tensor({ name: 'w', shape: [2] }), [3]), TypeError, 'BroadcastTo: the value w (TensorType(float64, (2,))) cannot be broadcast to length 3 on axis 0');
  const f = await weft.compile([c], pt.broadcastTo(c, [2, 3]));
  await t.rejects(f([[1], [2], [3]]), { message: /^BroadcastTo: the value of shape \[3, 1\] cannot be broadcast to shape \[2, 3\]/ });
});

t.test('broadcastTo is a view (stride 0, NumPy\'s read-only view), and nothing overwrites it in place', async (t) => {
  const v = pt.vector('v');
  const y = pt.broadcastTo(v, [3, 4]);
  const node = y.owner!;
  t.same(node.op.viewMap, { 0: [0] });
  const x = weft.ndarray(new Float64Array([1, 2, 3, 4]), [4]);
  const [out] = node.op.perform(node, [x, ...node.inputs.slice(1).map((d) => weft.ndarray(new Int32Array([(d as weft.pt.TensorConstant).data.data[0]!]), []))]) as weft.NdArray[];
  t.same([out!.shape, out!.stride, out!.data === x.data], [[3, 4], [0, 1], true], 'the input\'s memory with stride 0 on the new axis');
  const debug = await weft.compile([v], y, { mode: 'DebugMode' });
  t.same(await value([v], y, [[1, 2, 3, 4]]), [[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]]);
  await debug([1, 2, 3, 4]);
  // An element-wise op and a setSubtensor over the view would be made inplace into it, which
  // writes each shared element several times: the destroy handler refuses, so they copy.
  // (Each the view's only reader, so that without the refusal the rewrite would take it.)
  const e = pt.exp(v);
  const b = pt.broadcastTo(e, [3, 4]);
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const point = [0, 1, 2, 3];
  const cases = [
    [b.add(pt.arange(12).reshape([3, 4])), [0, 1, 2].map((r0) => point.map((i) => Math.exp(i) + r0 * 4 + i))],
    [pt.setSubtensor(b.get(1), pt.zeros([4])), [0, 1, 2].map((r0) => point.map((i) => (r0 === 1 ? 0 : Math.exp(i))))],
  ] as const;
  for (const [y, want] of cases) {
    for (const options of [{ workers: 0 }, { pool }, { mode: 'DebugMode' as const }]) {
      const fn = await weft.compile([v], y, options);
      const destroyers = fn.fgraph.toposort().filter((n) => Object.keys(n.op.destroyMap).length > 0 && n.inputs.some((i) => i.owner?.op.constructor.name === 'BroadcastTo'));
      t.same(destroyers.map(String), [], `${y.owner!.op}: no node overwrites the view`);
      t.same(weft.tolist((await fn(point)) as weft.NdArray), want);
    }
  }
});

t.test('full and linspace: NumPy values and dtypes', async (t) => {
  t.same(weft.tolist((await (await weft.compile([], pt.full([2, 3], 7)))()) as weft.NdArray), [[7, 7, 7], [7, 7, 7]]);
  t.equal(pt.full([2], 7, { dtype: 'float32' }).dtype, 'float32');
  t.equal(pt.full([2], 1.5).dtype, pt.constant(1.5).dtype, "the value's dtype");
  const lin = async (y: TV): Promise<unknown> => weft.tolist((await (await weft.compile([], y))()) as weft.NdArray);
  t.same(await lin(pt.linspace(0, 1, 5)), [0, 0.25, 0.5, 0.75, 1]);
  t.same(await lin(pt.linspace(0, 1, 4, { endpoint: false })), [0, 0.25, 0.5, 0.75]);
  t.same(await lin(pt.linspace(2, 3, 1)), [2]);
  t.same(await lin(pt.linspace(2, 3, 0)), []);
  // NumPy: np.linspace(0, 0.3, 7)[-1] is exactly 0.3, and the middle values are i * step + start.
  const seven = (await lin(pt.linspace(0, 0.3, 7))) as number[];
  t.equal(seven[6], 0.3);
  t.equal(seven[3], 3 * (0.3 / 6));
  const s = pt.scalar('s');
  const fn = await weft.compile([s], pt.linspace(s, s.mul(2), 3));
  t.same(Array.from((await fn(4)).data), [4, 6, 8], 'symbolic ends');
  t.equal(pt.linspace(pt.constant(0, { dtype: 'float32' }), pt.constant(1, { dtype: 'float32' }), 3).dtype, 'float32');
  await throwsExactly(t, () => pt.linspace(0, 1, 2.5), RangeError, 'linspace: num must be a non-negative integer, got 2.5');
  await throwsExactly(t, () => pt.full([2], pt.vector('w')), TypeError, 'full: the value must be a scalar, got w (TensorType(float64, (?,)))');
});

t.test('on 2 workers: the bits of the calling thread', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const m = pt.matrix('m');
  const y = pt.concatenate([pt.roll(pt.tril(m, 2), 3, { axis: 1 }), pt.flip(pt.pad(m, [[0, 0], [2, 2]], { mode: 'reflect' }).get(weft.slice(null), weft.slice(0, 256)))], 0)
    .add(pt.tile(pt.diagonal(m).get(weft.slice(0, 1)), [512, 256])).sum({ axis: 0 }).add(pt.diff(pt.repeat(m.get(0), 2)).get(weft.slice(0, 256)));
  const a = r.normal([256, 256]);
  const inline = (await (await weft.compile([m], y, { workers: 0 }))(a)).data;
  const pooled = (await (await weft.compile([m], y, { pool }))(a)).data;
  t.ok(inline.every((v, i) => Object.is(v, pooled[i])), 'equal bits');
});

t.teardown(() => weft.shutdown());
