// NumPy's advanced indexing (issue 14), after PyTensor's test_subtensor.py (TestAdvancedSubtensor1,
// TestAdvancedSubtensor, TestAdvancedIncSubtensor1, test_inc_adv_subtensor): x.get with integer
// arrays (alone, several broadcast together, mixed with slices, not adjacent), negative indices,
// take, setSubtensor and incSubtensor on the result (repeated indices accumulate as np.add.at),
// gradients, Rop, inferShape, the same bits on 0 and 2 workers, documents, and bad inputs.
import t from 'tap';
import { pt, rng, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
const r = rng(3141);

async function value(inputs: TV[], y: TV, xs: unknown[], options: weft.CompileOptions = {}): Promise<unknown> {
  const fn = await weft.compile(inputs, y, { onUnusedInput: 'ignore', ...options });
  return weft.tolist((await fn(...(xs as weft.InputValue[]))) as weft.NdArray);
}

const m34 = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]];

t.test('x.get with integer arrays: NumPy values (TestAdvancedSubtensor1, TestAdvancedSubtensor)', async (t) => {
  const m = pt.matrix('m');
  const v = pt.vector('v');
  const i = pt.vector('i', 'int32');
  t.same(await value([v], v.get([2, 0, 2, -1]), [[10, 11, 12, 13]]), [12, 10, 12, 13], 'a vector at repeated and negative indices');
  t.same(await value([m, i], m.get(i), [m34, [2, 0]]), [[8, 9, 10, 11], [0, 1, 2, 3]], 'rows');
  t.same(await value([m], m.get([[0, 1], [2, 2]]), [m34]), [[[0, 1, 2, 3], [4, 5, 6, 7]], [[8, 9, 10, 11], [8, 9, 10, 11]]], 'a 2-d index array');
  t.same(await value([m, i], m.get(pt.arange(3), i), [m34, [3, 0, 1]]), [3, 4, 9], 'x[arange(n), labels]: one element per row');
  t.same(await value([m], m.get([[0], [2]], [1, 3]), [m34]), [[1, 3], [9, 11]], 'index arrays broadcast together');
  t.same(await value([m], m.get(weft.slice(1, null), [0, 3]), [m34]), [[4, 7], [8, 11]], 'a slice, then an index array');
  t.same(await value([m], m.get([2, 0], weft.slice(null, 2)), [m34]), [[8, 9], [0, 1]], 'an index array, then a slice');
  t.same(await value([m], m.get(1, [0, 3]), [m34]), [4, 7], 'an integer with an index array (both advanced)');
  const b = pt.tensor3('b');
  const b234 = [[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]], [[12, 13, 14, 15], [16, 17, 18, 19], [20, 21, 22, 23]]];
  // NumPy: index arrays separated by a slice put the broadcast axes first.
  t.same(await value([b], b.get([0, 1], weft.slice(null), [3, 0]), [b234]), [[3, 7, 11], [12, 16, 20]], 'arrays not adjacent: the broadcast axis first');
  t.same(await value([b], b.get(weft.slice(null), [2, 0], [1, 1]), [b234]), [[9, 1], [21, 13]], 'adjacent arrays after a slice stay in place');
  t.same((b.get(weft.slice(null), [2, 0], [1, 1]).type.shape), [null, 2]);
  t.same(await value([v, i], pt.take(v, i), [[5, 6, 7], [2, 2, -3]]), [7, 7, 5], 'take');
  t.same(await value([m], pt.take(m, [1, 0], { axis: 1 }), [m34]), [[1, 0], [5, 4], [9, 8]], 'take on an axis');
  t.same(await value([m], pt.take(m, [5, 11]), [m34]), [5, 11], 'take of the flattened array');
});

t.test('setSubtensor and incSubtensor on the result: repeated indices accumulate (np.add.at), the last set wins', async (t) => {
  const v = pt.vector('v');
  const m = pt.matrix('m');
  t.same(await value([v], pt.incSubtensor(v.get([0, 2, 0, 0]), 1), [[0, 0, 0, 0]]), [3, 0, 1, 0], 'np.add.at');
  t.same(await value([v], pt.incSubtensor(v.get([1, 1]), [10, 20]), [[1, 2, 3]]), [1, 32, 3]);
  t.same(await value([v], pt.setSubtensor(v.get([1, 1, 2]), [10, 20, 30]), [[1, 2, 3]]), [1, 20, 30], 'set: the last of repeated indices wins');
  t.same(await value([m], pt.incSubtensor(m.get(pt.arange(3), [1, 1, 0]), 100), [m34]), [[0, 101, 2, 3], [4, 105, 6, 7], [108, 9, 10, 11]]);
  t.same(await value([m], pt.setSubtensor(m.get(weft.slice(1, null), [0, 3]), 0), [m34]), [[0, 1, 2, 3], [0, 5, 6, 0], [0, 9, 10, 0]], 'through the slice, the whole tensor back');
  const b = pt.tensor3('b');
  const zeros = [[[0, 0, 0], [0, 0, 0]], [[0, 0, 0], [0, 0, 0]]];
  t.same(await value([b], pt.incSubtensor(b.get([0, 1, 0], weft.slice(null), [2, 0, 2]), [[1], [2], [3]]), [zeros]), [[[0, 0, 4], [0, 0, 4]], [[2, 0, 0], [2, 0, 0]]], 'not adjacent: put back in its axes');
  const f32 = pt.vector('f', 'float32');
  const inc = pt.incSubtensor(f32.get([0, 0, 0]), pt.constant([0.1, 0.2, 0.3], { dtype: 'float32' }));
  const got = (await (await weft.compile([f32], inc))(new Float32Array([1]))).data[0]!;
  t.equal(got, Math.fround(Math.fround(Math.fround(1 + Math.fround(0.1)) + Math.fround(0.2)) + Math.fround(0.3)), 'float32 sums in index order, each rounded');
});

t.test('boolean masks: NumPy values (a mask of k axes is the index arrays of its true elements), set through them, gradients', async (t) => {
  const m = pt.matrix('m');
  const v = pt.vector('v');
  t.same(await value([v], v.get(v.gt(2)), [[1, 5, 2, 7]]), [5, 7]);
  t.same(await value([v], v.get([true, false, true, false]), [[1, 5, 2, 7]]), [1, 2], 'a JS array of booleans');
  t.same(await value([m], m.get(m.gt(5)), [m34]), [6, 7, 8, 9, 10, 11], 'a 2-d mask gives a vector, in C order');
  t.same(await value([m], m.get(weft.slice(null), [true, false, false, true]), [m34]), [[0, 3], [4, 7], [8, 11]], 'a mask of axis 1');
  t.same(await value([m], m.get([false, true, true]), [m34]), [[4, 5, 6, 7], [8, 9, 10, 11]], 'rows');
  t.same(await value([m], m.get(m.gt(100)), [m34]), [], 'nothing selected');
  t.same(await value([v], pt.setSubtensor(v.get(v.lt(0)), 0), [[-1, 2, -3, 4]]), [0, 2, 0, 4], "relu by a mask: x[x < 0] = 0");
  t.same(await value([v], pt.incSubtensor(v.get(v.gt(1)), 10), [[-1, 2, -3, 4]]), [-1, 12, -3, 14]);
  const a = r.normal([4, 5]);
  const mask = pt.constant(Array.from({ length: 20 }, (_, k) => (k % 3 === 0 ? 1 : 0)), { dtype: 'bool' }).reshape([4, 5]);
  await weft.verifyGrad((x: TV) => x.get(mask), [a], { rng: rng(9) });
  await weft.verifyGrad((x: TV) => pt.setSubtensor(x.get(mask), 1).sum({ axis: 0 }), [a], { rng: rng(10) });
  for (const workers of [0, 2]) t.same(await value([v], v.get(v.gt(0)).sum(), [[1, -2, 3]], { workers }), 4, `a plan stops at the mask and goes on (workers ${workers})`);
  await throwsExactly(t, () => pt.tensor({ name: 'y', shape: [3, 4] }).get([true, false]), RangeError, 'get: the mask at entry 0 has length 2 on its axis 0 but axis 0 of y has length 3');
  await throwsExactly(t, () => v.get([true, 1]), TypeError, 'get: entry 0 mixes booleans with 1; a mask holds booleans only');
  t.same((pt.nonzero(pt.constant([[0, 1], [1, 1]]))).length, 2, 'pt.nonzero: one vector per axis');
});

t.test('gradients (the gather\'s is the accumulating scatter), Rop, inferShape', async (t) => {
  const a = r.normal([4, 5]);
  const idx = pt.constant([3, 0, 3, 1], { dtype: 'int32' });
  for (const f of [
    (x: TV) => x.get(idx),
    (x: TV) => x.get(weft.slice(null), [4, 4, 0]),
    (x: TV) => x.get([[0, 1], [3, 3]], [1, 2]),
    (x: TV) => pt.incSubtensor(x.get(idx), 2),
    (x: TV) => pt.setSubtensor(x.get(weft.slice(1, null), [0, 2]), 5),
  ]) {
    await weft.verifyGrad(f, [a], { rng: rng(6) });
    await weft.checkRop(f, [a]);
  }
  // With respect to y: the gathered gradient, summed over y's broadcast axes.
  await weft.verifyGrad((x: TV, y: TV) => pt.incSubtensor(x.get([0, 0, 2]), y), [a, r.normal([3, 5])], { rng: rng(7) });
  await weft.verifyGrad((x: TV, y: TV) => pt.setSubtensor(x.get([1, 3]), y), [a, r.normal([5])], { rng: rng(8) });
  const x = pt.matrix('x');
  const g = weft.grad(x.get([1, 1, 1]).sum(), x) as TV;
  t.same(weft.tolist((await (await weft.compile([x], g))(a)) as weft.NdArray), [[0, 0, 0, 0, 0], [3, 3, 3, 3, 3], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]], 'a row selected three times gets three');
  const i = pt.matrix('i', 'int32');
  await weft.checkInferShape([x, i], [x.get(i), x.get(weft.slice(null), i), pt.incSubtensor(x.get(i), 1)], [a, weft.ndarray(new Int32Array([0, 1, 2, 3, 3, 2]), [2, 3])]);
});

t.test('on 2 workers: the bits of the calling thread (gather and accumulating scatter, float32)', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const table = pt.matrix('table', 'float32');
  const ids = pt.vector('ids', 'int32');
  const rows = table.get(ids);
  const y = pt.tanh(rows).sum();
  const g = weft.grad(y, table) as TV;
  const n = 50_000;
  const values = Float32Array.from(r.normal([4096 * 32]).data as Float64Array);
  const picks = Int32Array.from({ length: n }, (_, k) => (k * 7919) % 4096);
  const inline = await weft.compile([table, ids], [rows, g], { workers: 0 });
  const pooled = await weft.compile([table, ids], [rows, g], { pool });
  const tv = weft.ndarray(values, [4096, 32]);
  const [a1, a2] = (await inline(tv, picks)) as weft.NdArray[];
  const [b1, b2] = (await pooled(tv, picks)) as weft.NdArray[];
  t.ok(a1!.data.every((v, k) => Object.is(v, b1!.data[k])), 'gathered rows: equal bits');
  t.ok(a2!.data.every((v, k) => Object.is(v, b2!.data[k])), 'the accumulated gradient: equal bits');
  t.equal(a1!.data[32 * 3 + 5], values[32 * picks[3]! + 5], 'row 3 is table[ids[3]]');
});

t.test('whole rows by WebAssembly row copies (int32 indices, negative ones, rows of 37 floats, chunks that split rows): values, equal bits on 0 and 2 workers, an index out of bounds', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const table = pt.matrix('table', 'float32');
  const ids = pt.vector('ids', 'int32');
  const values = Float32Array.from(r.normal([300 * 37]).data as Float64Array);
  const picks = Int32Array.from({ length: 5000 }, (_, k) => ((k * 7919) % 600) - 300);
  const tv = pool.from(weft.ndarray(values, [300, 37]));
  const iv = pool.from(weft.ndarray(picks, [5000]));
  const runs: Float32Array[] = [];
  for (const workers of [0, 2]) {
    const fn = await weft.compile([table, ids], table.get(ids), { pool, workers });
    runs.push(((await fn(tv, iv)) as weft.NdArray).data as Float32Array);
  }
  const want = Float32Array.from({ length: 5000 * 37 }, (_, e) => values[(picks[Math.floor(e / 37)]! + 300) % 300 * 37 + (e % 37)]!);
  t.ok(runs[0]!.every((v, e) => Object.is(v, want[e])), 'row k is table[ids[k]], negative ids from the end');
  t.ok(runs[1]!.every((v, e) => Object.is(v, runs[0]![e])), 'equal bits on 2 workers');
  const bad = Int32Array.from(picks);
  bad[3000] = 300;
  const fn = await weft.compile([table, ids], table.get(ids), { pool, workers: 2 });
  await t.rejects(fn(tv, pool.from(weft.ndarray(bad, [5000]))), { message: 'AdvancedSubtensor{axis=0, count=1}: index 300 is out of bounds for axis 0 with length 300' });
  t.ok((((await fn(tv, iv)) as weft.NdArray).data as Float32Array).every((v, e) => Object.is(v, want[e])), 'and the pool still works');

  // The scatters of whole rows (one index array on the first axis, updates of [ids, row]):
  // repeated indices add in order (np.add.at) or the last one wins (set), on 0 and 2 workers.
  const u = pt.matrix('u', 'float32');
  const updates = Float32Array.from(r.normal([5000 * 37]).data as Float64Array);
  const uv = pool.from(weft.ndarray(updates, [5000, 37]));
  const added = Float32Array.from(values);
  const assigned = Float32Array.from(values);
  picks.forEach((i, k) => {
    const row = (i + 300) % 300;
    for (let c = 0; c < 37; c++) {
      added[row * 37 + c] = Math.fround(added[row * 37 + c]! + updates[k * 37 + c]!);
      assigned[row * 37 + c] = updates[k * 37 + c]!;
    }
  });
  for (const workers of [0, 2]) {
    const both = await weft.compile([table, ids, u], [pt.incSubtensor(table.get(ids), u), pt.setSubtensor(table.get(ids), u)], { pool, workers });
    const [inc, set] = (await both(tv, iv, uv)) as weft.NdArray[];
    t.ok(inc!.data.every((v, e) => Object.is(v, added[e])), `incSubtensor: the additions in order (workers ${workers})`);
    t.ok(set!.data.every((v, e) => Object.is(v, assigned[e])), `setSubtensor: the last one wins (workers ${workers})`);
    // Either scatter may fail first on the workers.
    await t.rejects(both(tv, pool.from(weft.ndarray(bad, [5000])), uv), { message: /^Advanced(Inc|Set)Subtensor\{axis=0, count=1\}: index 300 is out of bounds for axis 0 with length 300\n/ });
  }
});

t.test('the gradient of a lookup scatters into its zeros in place (inplace_advanced_incsubtensor), and not into zeros another output still reads', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const table = pt.matrix('table', 'float32');
  const ids = pt.vector('ids', 'int32');
  const g = weft.grad(pt.tanh(table.get(ids)).sum(), table) as TV;
  const values = Float32Array.from(r.normal([300 * 37]).data as Float64Array);
  const picks = Int32Array.from({ length: 5000 }, (_, k) => ((k * 7919) % 600) - 300);
  const want = new Float32Array(300 * 37);
  picks.forEach((i, k) => {
    const row = (i + 300) % 300;
    for (let c = 0; c < 37; c++) want[row * 37 + c] = Math.fround(want[row * 37 + c]! + Math.fround(1 - Math.tanh(values[row * 37 + c]!) ** 2));
  });
  for (const workers of [0, 2]) {
    const fn = await weft.compile([table, ids], g, { pool, workers });
    const ops = fn.fgraph.toposort().map((n) => String(n.op));
    t.ok(ops.includes('AdvancedIncSubtensor{axis=0, count=1, inplace}') && ops.includes('Alloc'), `into the Alloc's zeros (workers ${workers})`);
    const got = ((await fn(pool.from(weft.ndarray(values, [300, 37])), pool.from(weft.ndarray(picks, [5000])))) as weft.NdArray).data as Float32Array;
    const bad = Array.from(want).filter((v, e) => Math.abs(v - got[e]!) > 1e-4 * Math.max(1, Math.abs(v))).length;
    t.equal(bad, 0, `values (workers ${workers})`);
  }
  // Zeros that a second output reads after the scatter are not written into.
  const zeros = pt.zerosLike(table);
  const u = pt.matrix('u', 'float32');
  const both = await weft.compile([table, ids, u], [pt.incSubtensor(zeros.get(ids), u), zeros.add(1)], { pool, workers: 2 });
  const updates = Float32Array.from({ length: 5000 * 37 }, () => 1);
  const [scattered, ones] = (await both(weft.ndarray(values, [300, 37]), picks, weft.ndarray(updates, [5000, 37]))) as weft.NdArray[];
  t.ok(ones!.data.every((v) => v === 1), 'the other reader sees zeros');
  const counts = new Float32Array(300);
  picks.forEach((i) => (counts[(i + 300) % 300]! += 1));
  t.ok(scattered!.data.every((v, e) => v === counts[Math.floor(e / 37)]), 'the scatter counts each row');
});

t.test('rows that are not a multiple of 4 bytes (uint8 rows of 17) are gathered element by element; the inplace scatter into an Alloc of a value agrees with perform (DebugMode)', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const bytes = pt.matrix('bytes', 'uint8');
  const ids = pt.vector('ids', 'int32');
  const table = Uint8Array.from({ length: 20 * 17 }, (_, e) => (e * 37) % 251);
  const picks = Int32Array.from({ length: 4000 }, (_, k) => (k * 13) % 20);
  for (const workers of [0, 2]) {
    const fn = await weft.compile([bytes, ids], bytes.get(ids), { pool, workers });
    const got = ((await fn(pool.from(weft.ndarray(table, [20, 17])), pool.from(weft.ndarray(picks, [4000])))) as weft.NdArray).data;
    t.ok(got.every((v, e) => v === table[picks[Math.floor(e / 17)]! * 17 + (e % 17)]), `uint8 rows (workers ${workers})`);
  }
  const v = pt.scalar('v', 'float32');
  const i = pt.vector('i', 'int32');
  const y = pt.matrix('y', 'float32');
  const z = pt.incSubtensor(pt.alloc(v, 5, 3).get(i), y);
  const debug = await weft.compile([v, i, y], z, { mode: 'DebugMode' });
  t.ok(debug.fgraph.toposort().some((n) => String(n.op) === 'AdvancedIncSubtensor{axis=0, count=1, inplace}'), 'the inplace form');
  const out = (await debug(2, [4, 0, 4], weft.ndarray(Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9]), [3, 3]))) as weft.NdArray;
  t.same(weft.tolist(out), [[6, 7, 8], [2, 2, 2], [2, 2, 2], [2, 2, 2], [10, 12, 14]], 'x is the Alloc of 2, not zeros');
});

t.test('DebugMode: kernels against perform, whole and in chunks, on shared memory; inferShape; declared views', async (t) => {
  const m = pt.matrix('m');
  const i = pt.vector('i', 'int32');
  const y = pt.incSubtensor(m.get(i, weft.slice(1, null)), m.get(i, weft.slice(null, -1)).mul(2)).get([2, 0], [1, 1]);
  const fn = await weft.compile([m, i], y, { mode: 'DebugMode' });
  const out = (await fn(r.normal([3, 4]), [2, 2, 0])) as weft.NdArray;
  t.same(out.shape, [2]);
});

t.test('documents round-trip the ops', async (t) => {
  const m = pt.matrix('m');
  const y = pt.incSubtensor(m.get(weft.slice(null), [2, 2]), 1).get([0, 1]);
  const loaded = weft.deserialize(weft.serialize(y));
  const fn = await weft.compile(loaded.inputs, loaded.outputs);
  const [out] = (await fn(m34)) as weft.NdArray[];
  t.same(weft.tolist(out!), [[0, 1, 4, 3], [4, 5, 8, 7]]);
});

t.test('bad inputs: the exact errors', async (t) => {
  const m = pt.matrix('m');
  const v = pt.vector('v');
  await throwsExactly(t, () => m.get(pt.vector('f')), TypeError, 'get: entry 0 is f (TensorType(float64, (?,))); index arrays must have an integer dtype');
  await throwsExactly(t, () => m.get([0.5]), TypeError, 'get: entry 0 is an array holding 0.5; index arrays hold integers');
  await throwsExactly(t, () => m.get([0], null), TypeError, 'get: null (a new axis) cannot be mixed with index arrays; use pt.expandDims first');
  await throwsExactly(t, () => v.get([0], [0]), TypeError, 'get: too many indices for v (TensorType(float64, (?,))): it has 1 axes but 2 were indexed');
  await throwsExactly(t, () => m.get(pt.constant([0, 1], { dtype: 'int32' }), pt.constant([0, 1, 2], { dtype: 'int32' })), RangeError, 'AdvancedSubtensor{axis=0, count=2}: index arrays of static shapes (2) and (3) cannot be broadcast together');
  const fn = await weft.compile([v], v.get([0, 3]));
  await t.rejects(fn([1, 2, 3]), { message: /AdvancedSubtensor\{axis=0, count=1\}: index 3 is out of bounds for axis 0 with length 3/ });
  const i = pt.vector('i', 'int32');
  const fm = await weft.compile([m, i], m.get(weft.slice(null), i), { workers: 2 });
  await t.rejects(fm(m34, [-5]), { message: /index -5 is out of bounds for axis 1 with length 4/ }, 'on the workers too');
  t.same(weft.tolist((await fm(m34, [-4])) as weft.NdArray), [[0], [4], [8]], 'and the pool still works');
  await throwsExactly(t, () => pt.incSubtensor(v.get([0, 1]), pt.matrix('w')), TypeError, 'AdvancedIncSubtensor{axis=0, count=1}: y = w (TensorType(float64, (?, ?))) cannot be broadcast to the indexed elements of static shape (2)');
  await throwsExactly(t, () => pt.incSubtensor(pt.vector('k', 'int32').get([0]), 0.5), TypeError, 'AdvancedIncSubtensor{axis=0, count=1}: cannot add float64 values y = TensorConstant{0.5} into k of dtype int32 without loss; cast y first (y.astype(\'int32\'))');
});

t.teardown(() => weft.shutdown());
