// Sparse ops on the workers: the lowering rewrites make sparse products, their gradients,
// conversions and structured functions tensor ops over the matrices' parts, with kernels chunked
// by rows (csr), slabs of stored entries (csc) or entries. Checked: the same bits on 0, 1 and 2 workers and
// values against dense references computed here; the kernels cut at random points give the
// same bits as whole; ops whose pattern depends on values run between planned stages; bad
// inputs fail with the sparse ops' exact messages and leave the pool usable; DebugMode agrees.
import t, { type Test } from 'tap';
import { getKernel } from '../../src/kernels/registry.js';
import { cscScatterWasm, firstIrregularWasm } from '../../src/kernels/sparse-wasm.js';
import { scatterSlabs } from '../../src/kernels/sparse.js';
import type { TensorView } from '../../src/kernels/view.js';
import { pt, throwsExactly, uniformStream, weft } from '../helpers.js';
import { denseOf, matmul, randomDense, randomSparse } from './random.js';

const { sparse } = weft;
type Matrix = number[][];
const opsOf = (fn: { fgraph: weft.FunctionGraph }) => fn.fgraph.toposort().map((n) => n.op.constructor.name);
const bytes = (x: unknown): Buffer => {
  const a = (x as { data: Float64Array | Float32Array }).data;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
};
const transposed = (a: Matrix): Matrix => a[0]!.map((_, j) => a.map((row) => row[j]!));
const ndarray = (a: Matrix, dtype: 'float32' | 'float64'): weft.NdArray => weft.ndarray((dtype === 'float32' ? Float32Array : Float64Array).from(a.flat()), [a.length, a[0]!.length]);

function near(t: Test, got: weft.NdArray | Float64Array | Float32Array, want: readonly number[], tol: number, what: string): void {
  const g = 'shape' in got ? (got.data as Float64Array) : got;
  t.equal(g.length, want.length, `${what}: length`);
  const bad = want.map((w, i) => [i, w, g[i]!] as const).filter(([, w, x]) => !(Math.abs(w - x) <= tol * Math.max(1, Math.abs(w))));
  t.same(bad.slice(0, 3), [], `${what}: within ${tol}`);
}

// 2000 x 1000 at 5%: about 100,000 entries, times 64 columns, so several tasks (csr rows) or slabs (csc).
const [M, K, N] = [2000, 1000, 64];

for (const format of ['csr', 'csc'] as const) {
  for (const dtype of ['float64', 'float32'] as const) {
    t.test(`structuredDot, its gradients and sparse.dot (${format}, ${dtype}): equal bits on 0, 1 and 2 workers, values against dense ones`, async (t) => {
      const A = randomSparse(301, M, K, 0.05);
      const D = randomDense(302, K, N);
      const G = randomDense(303, M, N);
      const E = randomDense(304, N, M);
      const s = format === 'csr' ? sparse.csrMatrix('s', dtype) : sparse.cscMatrix('s', dtype);
      const [d, g, e] = [pt.matrix('d', dtype), pt.matrix('g', dtype), pt.matrix('e', dtype)];
      const y = sparse.structuredDot(s, d);
      const left = sparse.dot(e, s) as weft.pt.TensorVariable;
      const cost = pt.sum(pt.mul(y, g));
      const outputs = [y, left, weft.grad(cost, d), weft.grad(cost, s)];
      const S = sparse[format](A[format], { dtype });
      const values = [S, ndarray(D, dtype), ndarray(G, dtype), ndarray(E, dtype)] as const;
      const runs: unknown[][] = [];
      for (const workers of [0, 1, 2]) {
        const fn = await weft.compile([s, d, g, e], outputs, { workers, profile: true });
        runs.push((await fn(...values)) as unknown[]);
        if (workers === 2) {
          t.equal(fn.profile!.fallback, undefined, 'planned, not run on the reference executor');
          t.notOk(opsOf(fn).some((o) => ['StructuredDot', 'SparseDot', 'StructuredDotGrad', 'Transpose'].includes(o)), `no sparse product is left: ${[...new Set(opsOf(fn))].join(' ')}`);
          const products = fn.profile!.events.filter((ev) => ev.call === fn.profile!.calls - 1 && /CompressedTimesDense|ProductsAt/.test(String(ev.node)));
          t.ok(products.length >= 4, `the products ran as ${products.length} tasks`);
          t.ok(fn.planInfo(...(values as unknown as Parameters<typeof fn.planInfo>)).width >= 2, 'side by side in the plan');
        }
      }
      for (const [i, run] of runs.slice(1).entries()) {
        for (let j = 0; j < 3; j++) t.ok(bytes(run[j]).equals(bytes(runs[0]![j])), `${i + 1} worker(s): output ${j} has the bits of 0 workers`);
        t.ok(bytes(run[3]).equals(bytes(runs[0]![3])), `${i + 1} worker(s): the sparse gradient's data has the bits of 0 workers`);
      }
      const tol = dtype === 'float64' ? 1e-12 : 2e-5;
      const [yv, lv, gd, gs] = runs[0]! as [weft.NdArray, weft.NdArray, weft.NdArray, weft.sparse.SparseValue];
      near(t, yv, matmul(A.dense, D).flat(), tol, 'structuredDot');
      near(t, lv, matmul(E, A.dense).flat(), tol, 'dense times sparse');
      near(t, gd, matmul(transposed(A.dense), G).flat(), tol, 'the gradient with respect to d: s^T g');
      // Structured: (g d^T) at s's stored positions, in s's storage order.
      const gdT = matmul(G, transposed(D));
      const at = A[format];
      const want: number[] = [];
      for (let o = 0; o + 1 < at.indptr.length; o++) {
        for (let k = at.indptr[o]!; k < at.indptr[o + 1]!; k++) want.push(format === 'csr' ? gdT[o]![at.indices[k]!]! : gdT[at.indices[k]!]![o]!);
      }
      t.equal(gs.format, format, 'the gradient with respect to s has its format');
      t.same(Array.from(gs.indices), at.indices, 'and its pattern');
      near(t, gs.data, want, tol, 'the gradient with respect to s');
      await weft.shutdown();
    });
  }
}

t.test('samplingDot, dense(s), transpose, sparse * dense, sparse + dense, sums and the structured functions run as tensor ops on the parts', async (t) => {
  const A = randomSparse(311, 300, 200, 0.1);
  const X = randomDense(312, 300, 16);
  const Y = randomDense(313, 200, 16);
  const Z = randomDense(314, 300, 200);
  const s = sparse.cscMatrix('s');
  const [x, y, z] = [pt.matrix('x'), pt.matrix('y'), pt.matrix('z')];
  const sampled = sparse.samplingDot(x, y, s);
  const outputs = [
    sparse.dense(sampled),
    sparse.dense(sparse.transpose(s)),
    sparse.dense(sparse.structuredExp(sparse.neg(s))),
    sparse.dense(sparse.structuredPow(s, 2)),
    pt.stack(sparse.shape(s)),
    sparse.dense(sparse.mul(s, z)),
    sparse.add(z, s) as weft.pt.TensorVariable,
    sparse.sum(s),
    sparse.sum(s, { axis: 0 }),
    sparse.sum(s, { axis: 1 }),
    // sum's gradient spreads a vector over s's shape (a broadcast view) and multiplies it at s's pattern.
    sparse.dense(weft.grad(sparse.sum(s, { axis: 0, sparseGrad: true }).mul(pt.arange(200)).sum(), s) as weft.sparse.SparseVariable),
  ];
  const values = [sparse.csc(A.csc), X, Y, Z] as const;
  const runs: unknown[][] = [];
  for (const workers of [0, 2]) {
    const fn = await weft.compile([s, x, y, z], outputs, { workers, profile: true });
    runs.push((await fn(...values)) as unknown[]);
    if (workers === 2) {
      t.equal(fn.profile!.fallback, undefined, 'planned');
      const sparseOps = opsOf(fn).filter((o) => !['CSMProperties', 'SparseFromParts'].includes(o) && /Sparse|Structured|Sampling|Transpose|Neg|DenseFrom|MulSD|AddSD/.test(o));
      t.same(sparseOps, [], 'only tensor ops run (and the parts)');
    }
  }
  runs[1]!.forEach((v, i) => t.ok(bytes(v).equals(bytes(runs[0]![i])), `output ${i}: equal bits on 0 and 2 workers`));
  const xy = matmul(X, transposed(Y));
  const [sd, tr, ex, pw, shape, mz, az, all, cols, rows, spread] = runs[0]! as weft.NdArray[];
  near(t, sd!, A.dense.flatMap((row, r) => row.map((v, c) => (v === 0 ? 0 : v * xy[r]![c]!))), 1e-12, 'samplingDot');
  near(t, tr!, transposed(A.dense).flat(), 0, 'dense(transpose(s))');
  near(t, ex!, A.dense.flat().map((v) => (v === 0 ? 0 : Math.exp(-v))), 1e-15, 'structuredExp(neg(s)): absent entries stay absent');
  near(t, pw!, A.dense.flat().map((v) => v * v), 1e-15, 'structuredPow(s, 2)');
  t.same(Array.from(shape!.data), [300, 200], 'sparse.shape');
  near(t, mz!, A.dense.flatMap((row, r) => row.map((v, c) => v * Z[r]![c]!)), 1e-15, 'sparse * dense');
  near(t, az!, A.dense.flatMap((row, r) => row.map((v, c) => v + Z[r]![c]!)), 1e-15, 'dense + sparse');
  near(t, all!, [A.dense.flat().reduce((p, q) => p + q, 0)], 1e-12, 'the sum of all');
  near(t, cols!, transposed(A.dense).map((col) => col.reduce((p, q) => p + q, 0)), 1e-12, 'column sums');
  near(t, rows!, A.dense.map((row) => row.reduce((p, q) => p + q, 0)), 1e-12, 'row sums');
  near(t, spread!, A.dense.flatMap((row) => row.map((v, c) => (v === 0 ? 0 : c))), 0, 'the structured gradient of a column sum');
  await weft.shutdown();
});

t.test('ops whose pattern depends on values (sparse + sparse) run between planned stages', async (t) => {
  const [A, B] = [randomSparse(321, 500, 400, 0.05), randomSparse(322, 500, 400, 0.05)];
  const D = randomDense(323, 400, 32);
  const [a, b] = [sparse.csrMatrix('a'), sparse.csrMatrix('b')];
  const d = pt.matrix('d');
  const sum = sparse.add(a, b) as weft.sparse.SparseVariable;
  const outputs = [sparse.structuredDot(sum, pt.tanh(d)), sum];
  const runs: unknown[][] = [];
  for (const workers of [0, 2]) {
    const fn = await weft.compile([a, b, d], outputs, { workers, profile: true });
    runs.push((await fn(sparse.csr(A.csr), sparse.csr(B.csr), D)) as unknown[]);
    if (workers === 2) t.equal(fn.profile!.fallback, undefined, 'planned in stages, not run on the reference executor');
  }
  t.ok(bytes(runs[1]![0]).equals(bytes(runs[0]![0])), 'equal bits on 0 and 2 workers');
  const both = A.dense.map((row, r) => row.map((v, c) => v + B.dense[r]![c]!));
  near(t, runs[1]![0] as weft.NdArray, matmul(both, D.map((row) => row.map(Math.tanh))).flat(), 1e-12, '(a + b) tanh(d)');
  const out = runs[1]![1] as weft.sparse.SparseValue;
  t.ok(new sparse.SparseTensorType('csr').valuesEq(out, sparse.csr({ ...A.csr, data: both.flat().filter((v) => v !== 0), indices: both.flatMap((row) => row.flatMap((v, c) => (v === 0 ? [] : [c]))), indptr: [0, ...both.map((row, r) => both.slice(0, r + 1).flat().filter((v) => v !== 0).length)] })), 'the sum, a sparse output');
  await weft.shutdown();
});

t.test('an output that is an input or a transpose of one holds arrays of its own', async (t) => {
  const A = randomSparse(331, 6, 5, 0.4);
  const s = sparse.csrMatrix('s');
  const fn = await weft.compile([s], [s, sparse.transpose(s)], { workers: 2 });
  const input = sparse.csr(A.csr);
  const [same, tr] = (await fn(input)) as weft.sparse.SparseValue[];
  t.equal(tr!.format, 'csc', 'the transpose is csc');
  t.same(tr!.shape, [5, 6], 'of the turned shape');
  t.same(Array.from(tr!.data), Array.from(input.data), 'over the same entries');
  const buffers = (v: weft.sparse.SparseValue) => [v.data, v.indices, v.indptr].map((a) => a.buffer);
  t.notOk(buffers(same!).some((x) => buffers(tr!).includes(x) || buffers(input).includes(x)), 'no two values share an array');
  await weft.shutdown();
});

t.test('bad inputs on the workers fail with the sparse ops\' messages, and the pool goes on', async (t) => {
  const s = sparse.csrMatrix('s');
  const [d, e] = [pt.matrix('d'), pt.matrix('e')];
  const fn = await weft.compile([s, d, e], [sparse.structuredDot(s, d), sparse.dot(e, s) as weft.pt.TensorVariable], { workers: 2 });
  const S = sparse.csr(randomSparse(341, 3, 4).csr);
  const fails = async (values: readonly unknown[], message: string, what: string) => {
    await (fn as unknown as (...args: unknown[]) => Promise<unknown>)(...values).then(
      () => t.fail(`${what}: expected a NodeError`),
      (err: unknown) => {
        t.type(err, weft.NodeError, `${what}: NodeError`);
        t.equal((err as Error).message.split('\n')[0], message, `${what}: message`);
      },
    );
  };
  await fails([S, randomDense(342, 3, 2), randomDense(343, 2, 3)], 'structuredDot: shapes [3, 4] and [3, 2] are not aligned: input 0 has 4 columns, input 1 has 3 rows', 'sparse times dense');
  await fails([S, randomDense(342, 4, 2), randomDense(343, 2, 4)], 'sparse.dot: shapes [2, 4] and [3, 4] are not aligned: input 0 has 4 columns, input 1 has 3 rows', 'dense times sparse');
  const plus = await weft.compile([s, e], sparse.add(s, e) as weft.pt.TensorVariable, { workers: 2 });
  await plus(S, randomDense(346, 3, 5)).then(
    () => t.fail('sparse + dense: expected a NodeError'),
    (err: unknown) => t.equal((err as Error).message.split('\n')[0], "sparse.add: the operands' shapes [3, 4] and [3, 5] differ", 'sparse + dense: message'),
  );
  const [y, l] = (await fn(S, randomDense(344, 4, 2), randomDense(345, 2, 3))) as weft.NdArray[];
  t.same([y!.shape, l!.shape], [[3, 2], [2, 4]], 'the next call works');
  await weft.shutdown();
});

t.test('DebugMode checks the lowered ops and their kernels (cut into chunks) against perform', async (t) => {
  const A = randomSparse(351, M, K, 0.05);
  const s = sparse.cscMatrix('s');
  const d = pt.matrix('d');
  const y = sparse.structuredDot(s, d);
  const cost = pt.sum(pt.sqr(y));
  const outputs = [y, weft.grad(cost, d), weft.grad(cost, s), sparse.dense(s), sparse.toFormat(s, 'csr')];
  const values = [sparse.csc(A.csc), randomDense(352, K, N)] as const;
  const checked = await weft.compile([s, d], outputs, { mode: 'DebugMode' });
  t.ok(opsOf(checked).includes('CompressedTimesDense') && opsOf(checked).includes('CompressedSwitch'), 'DebugMode runs the lowered graph');
  const a = (await checked(...values)) as unknown[];
  const b = (await (await weft.compile([s, d], outputs, { workers: 0 }))(...values)) as unknown[];
  a.forEach((v, i) => t.ok(bytes(v).equals(bytes(b[i])), `output ${i}: as without DebugMode`));
  t.same(Array.from((a[4] as weft.sparse.SparseValue).indptr), A.csr.indptr, 'toFormat: the csr parts');
});

t.test('the sparse kernels cut at random points give the bits of one whole run', async (t) => {
  const u = uniformStream(361);
  const A = randomSparse(362, 120, 90, 0.1);
  const view = (data: Float64Array | Int32Array, shape: number[]): TensorView => ({ data, offset: 0, shape, stride: shape.length === 2 ? [shape[1]!, 1] : [1] });
  const parts = (p: { data: number[]; indices: number[]; indptr: number[] }, shape: [number, number]) => [
    view(Float64Array.from(p.data), [p.data.length]),
    view(Int32Array.from(p.indices), [p.indices.length]),
    view(Int32Array.from(p.indptr), [p.indptr.length]),
    view(Int32Array.from(shape), [2]),
  ];
  const cuts = (units: number): { start: number; end: number }[] => {
    const at = [0, ...Array.from({ length: 4 }, () => Math.floor(u() * units)).sort((x, y) => x - y), units];
    return at.slice(1).map((end, i) => ({ start: at[i]!, end }));
  };
  const runWhole = (name: string, ins: TensorView[], shape: number[], params: Readonly<Record<string, unknown>>) => {
    const out = view(new Float64Array(shape.reduce((x, y) => x * y, 1)), shape);
    getKernel(name)(ins, [out], params);
    return out.data as Float64Array;
  };
  const runCut = (name: string, ins: TensorView[], shape: number[], params: Readonly<Record<string, unknown>>, units: number) => {
    const out = view(new Float64Array(shape.reduce((x, y) => x * y, 1)).fill(NaN), shape);
    for (const r of cuts(units)) getKernel(name)(ins, [out], params, r);
    return out.data as Float64Array;
  };
  const D = view(Float64Array.from(randomDense(363, 90, 7).flat()), [90, 7]);
  const csr = parts(A.csr, [120, 90]);
  const same = (a: Float64Array, b: Float64Array) => Buffer.from(a.buffer).equals(Buffer.from(b.buffer));
  t.ok(same(runCut('sparse.timesDense', [...csr, D], [120, 7], { outer: 'rows' }, 120), runWhole('sparse.timesDense', [...csr, D], [120, 7], { outer: 'rows' })), 'csr times dense, by rows');
  const X = view(Float64Array.from(randomDense(364, 120, 5).flat()), [120, 5]);
  const Y = view(Float64Array.from(randomDense(365, 90, 5).flat()), [90, 5]);
  const nnz = A.csr.data.length;
  const pat = [csr[1]!, csr[2]!, csr[3]!, X, Y, csr[0]!];
  t.ok(same(runCut('sparse.productsAt', pat, [nnz], { outer: 'rows', scaled: true }, nnz), runWhole('sparse.productsAt', pat, [nnz], { outer: 'rows', scaled: true })), 'products at the stored positions, by entries');
  const csc = parts(A.csc, [120, 90]);
  const E = view(Float64Array.from(randomDense(366, 120, 37).flat()), [120, 37]);
  const cscT = parts(A.csr, [90, 120]);
  near(t, runWhole('sparse.cscTimesDense', [...cscT, E], [90, 37], {}), matmul(transposed(A.dense), randomDense(366, 120, 37)).flat(), 1e-12, 'csc times dense');
  // A csc product big enough for 3 slabs of entries: its steps (slabs into partials, then their
  // sum), each cut at random points, give the bits of the whole kernel.
  const B = randomSparse(367, 2000, 1000, 0.05);
  const F = view(Float64Array.from(randomDense(368, 1000, 64).flat()), [1000, 64]);
  const bigCsc = parts(B.csc, [2000, 1000]);
  const slabs = scatterSlabs(B.csc.data.length, 2000, 64, 'float64');
  t.equal(slabs, 3, 'the product is cut into 3 slabs');
  const partials = view(new Float64Array(slabs * 2000 * 64), [slabs, 2000, 64]);
  const partialsView: TensorView = { ...partials, stride: [2000 * 64, 64, 1] };
  for (const r of cuts(slabs)) getKernel('sparse.scatterSlabs')([...bigCsc, F], [partialsView], {}, r);
  const summed = view(new Float64Array(2000 * 64), [2000, 64]);
  for (const r of cuts(2000)) getKernel('sparse.sumSlabs')([partialsView], [summed], {}, r);
  t.ok(same(summed.data as Float64Array, runWhole('sparse.cscTimesDense', [...bigCsc, F], [2000, 64], {})), 'csc times dense: slabs and their sum, cut anywhere');
  // In float32 the partials are float32 (each product rounded, then added), summed in float64.
  const single = (v: TensorView): TensorView => (v.data instanceof Float64Array ? { ...v, data: Float32Array.from(v.data) } : v);
  const ins32 = [...bigCsc, F].map(single);
  t.equal(scatterSlabs(B.csc.data.length, 2000, 64, 'float32'), slabs, 'float32: the same 3 slabs');
  const partials32: TensorView = { data: new Float32Array(slabs * 2000 * 64), offset: 0, shape: [slabs, 2000, 64], stride: [2000 * 64, 64, 1] };
  for (const r of cuts(slabs)) getKernel('sparse.scatterSlabs')(ins32, [partials32], {}, r);
  const summed32 = single(view(new Float64Array(2000 * 64), [2000, 64]));
  for (const r of cuts(2000)) getKernel('sparse.sumSlabs')([partials32], [summed32], {}, r);
  const whole32 = single(view(new Float64Array(2000 * 64), [2000, 64]));
  getKernel('sparse.cscTimesDense')(ins32, [whole32], {});
  t.ok(Buffer.from(summed32.data.buffer).equals(Buffer.from(whole32.data.buffer)), 'float32 csc times dense: slabs and their sum, cut anywhere');
  const want32 = matmul(denseOf({ ...B.csc, format: 'csc', shape: [2000, 1000], data: Array.from(ins32[0]!.data) }), randomDense(368, 1000, 64).map((row) => row.map(Math.fround))).flat();
  near(t, whole32.data as Float32Array, want32, 1e-5, 'float32 csc times dense');
  t.ok(same(runCut('sparse.toDense', csc, [120, 90], { outer: 'columns' }, 90), runWhole('sparse.toDense', csc, [120, 90], { outer: 'columns' })), 'csc to dense, by columns');
  // The other format's parts, against the csc parts written out by the test's own loops.
  const switched = [view(new Float64Array(nnz), [nnz]), view(new Int32Array(nnz), [nnz]), view(new Int32Array(91), [91])];
  getKernel('sparse.switchFormat')(csr, switched, {});
  t.same([Array.from(switched[0]!.data), Array.from(switched[1]!.data), Array.from(switched[2]!.data)], [A.csc.data, A.csc.indices, A.csc.indptr], 'csr to csc parts');
});

t.test('documents: a lowered graph (parts and tensor ops over them) reads back and computes the same', async (t) => {
  const A = randomSparse(371, 40, 30, 0.2);
  const s = sparse.cscMatrix('s');
  const d = pt.matrix('d');
  const y = sparse.structuredDot(s, d);
  const cost = pt.sum(pt.sqr(y)).add(sparse.sum(sparse.mul(s, pt.exp(sparse.dense(s)))));
  const fn = await weft.compile([s, d], [y, weft.grad(cost, d), weft.grad(cost, s), sparse.toFormat(s, 'csr')], { workers: 0 });
  const names = new Set(opsOf(fn));
  t.ok(['CSMProperties', 'SparseFromParts', 'CompressedTimesDense', 'ProductsAt', 'ValuesAt', 'CompressedToDense', 'CompressedSwitch'].every((n) => names.has(n)), `the lowered ops: ${[...names].join(' ')}`);
  const back = weft.deserialize(weft.serialize(fn.fgraph.outputs));
  const again = await weft.compile(back.inputs, back.outputs, { mode: 'FAST_COMPILE', workers: 0 });
  const values = [sparse.csc(A.csc), randomDense(372, 30, 5)] as weft.InputValue[];
  const [a, b] = [(await fn(...(values as [weft.InputValue, weft.InputValue]))) as unknown[], (await again(...values)) as unknown[]];
  a.forEach((v, i) => t.ok(bytes(v).equals(bytes(b[i])), `output ${i}`));
});

for (const format of ['csr', 'csc'] as const) {
  t.test(`${format}: an element-wise op of a sparse product runs in the product's tasks, with the bits of the two ops apart`, async (t) => {
    const A = randomSparse(381, M, K, 0.05);
    const s = format === 'csr' ? sparse.csrMatrix('s', 'float32') : sparse.cscMatrix('s', 'float32');
    const [d, b] = [pt.matrix('d', 'float32'), pt.vector('b', 'float32')];
    const y = pt.tanh(sparse.structuredDot(s, d).add(b));
    const values = [sparse[format](A[format], { dtype: 'float32' }), ndarray(randomDense(382, K, N), 'float32'), weft.ndarray(Float32Array.from(randomDense(383, 1, N)[0]!), [N])] as const;
    const apart = new weft.Mode({ excluding: ['sparse_epilogue'] });
    const runs: weft.NdArray[] = [];
    for (const workers of [0, 2]) {
      const fused = await weft.compile([s, d, b], y, { workers });
      const ops = opsOf(fused);
      if (workers === 2) t.ok(ops.includes('FusedTimesDense') && !ops.includes('CompressedTimesDense') && !ops.includes('Composite'), `one fused node: ${[...new Set(ops)].join(' ')}`);
      runs.push((await fused(...values)) as weft.NdArray);
      const separate = await weft.compile([s, d, b], y, { workers, mode: apart });
      t.ok(opsOf(separate).includes('Composite'), 'without the rewrite, the element-wise op (a Composite) runs on its own');
      t.ok(bytes(runs.at(-1)).equals(bytes(await separate(...values))), `${workers} workers: the bits of the two ops apart`);
    }
    t.ok(bytes(runs[1]).equals(bytes(runs[0])), 'equal bits on 0 and 2 workers');
    const want = matmul(A.dense, randomDense(382, K, N)).map((row) => row.map((v, j) => Math.tanh(v + randomDense(383, 1, N)[0]![j]!)));
    near(t, runs[0]!, want.flat(), 1e-5, 'tanh(s d + b)');
    // The fused node goes through documents and computes the same.
    const fn = await weft.compile([s, d, b], y, { workers: 0 });
    const back = weft.deserialize(weft.serialize(fn.fgraph.outputs));
    const again = await weft.compile(back.inputs, back.outputs, { mode: 'FAST_COMPILE', workers: 0 });
    t.ok(opsOf(again).includes('FusedTimesDense'), 'read back fused');
    const [read] = (await again(...(values as unknown as weft.InputValue[]))) as weft.NdArray[];
    t.ok(bytes(read).equals(bytes(runs[0])), 'and computes the same');
    await weft.shutdown();
  });
}

t.test('a pool.from matrix is checked at every call by a WebAssembly loop over its parts, with the errors of the entry-by-entry check', async (t) => {
  const A = randomSparse(393, 300, 200, 0.1);
  const pool = weft.createPool({ workers: 2 });
  // Arrays made between two growths of the memory keep a buffer that was current only then: the
  // loop must still find them.
  const big = () => pool.from(weft.ndarray(new Float64Array(8 << 20), [8 << 20]));
  const before = big();
  const resident = pool.from(sparse.csr(A.csr));
  const after = big();
  t.ok(resident.indices.buffer !== after.data.buffer && resident.indices.buffer.byteLength < after.data.buffer.byteLength, 'the memory grew after the matrix was made: its parts keep an earlier buffer');
  t.ok(before.data.length === 8 << 20 && resident.indices.buffer.byteLength >= 64 << 20, 'and it had grown before, for the first 64 MiB array: the matrix sits on a buffer that was current only between two growths');
  t.equal(firstIrregularWasm(resident.indices, resident.indptr, 200), 300, 'every row regular, found in the memory after it grew');
  t.equal(firstIrregularWasm(Int32Array.from(A.csr.indices), Int32Array.from(A.csr.indptr), 200), undefined, 'arrays outside the pool: no loop');
  const s = sparse.csrMatrix('s');
  const d = pt.matrix('d');
  const fn = await weft.compile([s, d], sparse.structuredDot(s, d), { pool });
  const D = randomDense(394, 200, 8);
  const want = bytes(await fn(sparse.csr(A.csr), D));
  t.ok(bytes(await fn(resident, D)).equals(want), 'the same bits as a value outside the pool');
  const row = 150;
  const [start, end] = [resident.indptr[row]!, resident.indptr[row + 1]!];
  const written = async (what: string, write: () => void, row: number, message: string) => {
    const saved = [resident.indices.slice(), resident.indptr.slice()];
    write();
    t.equal(firstIrregularWasm(resident.indices, resident.indptr, 200), row, `${what}: the loop stops at row ${row}`);
    await throwsExactly(t, () => fn(resident, D), weft.ValueTypeError, message, what);
    resident.indices.set(saved[0]!);
    resident.indptr.set(saved[1]!);
  };
  const where = 'input 0 (s) of the function';
  await written('the last index of a row out of range', () => (resident.indices[end - 1] = 200), row, `${where}: indices[${end - 1}] = 200 is out of range for 200 columns (0 to 199)`);
  await written('a negative first index', () => (resident.indices[start] = -1), row, `${where}: indices[${start}] = -1 is out of range for 200 columns (0 to 199)`);
  await written('an index out of range inside a row', () => (resident.indices[start + 1] = 5000), row, `${where}: indices[${start + 1}] = 5000 is out of range for 200 columns (0 to 199)`);
  await written('indptr decreasing', () => (resident.indptr[row + 1] = start - 1), row, `${where}: indptr must not decrease, but indptr[${row + 1}] = ${start - 1} < indptr[${row}] = ${start}`);
  // Two indices of a row swapped: not in increasing order, so sorted into a canonical copy.
  const [a, b] = [resident.indices[start]!, resident.indices[start + 1]!];
  const da = [resident.data[start]!, resident.data[start + 1]!];
  [resident.indices[start], resident.indices[start + 1], resident.data[start], resident.data[start + 1]] = [b, a, da[1]!, da[0]!];
  t.equal(firstIrregularWasm(resident.indices, resident.indptr, 200), row, 'an unsorted row: the loop stops there');
  t.ok(bytes(await fn(resident, D)).equals(want), 'an unsorted row is sorted: the same bits');
  await pool.close();
});

t.test('the WebAssembly check of parts in shared memory gives what the entry-by-entry check gives, on short rows broken at every position', async (t) => {
  const u = uniformStream(395);
  const pool = weft.createPool({ workers: 1 });
  const shared = (a: Int32Array): Int32Array => pool.from(weft.ndarray(a, [a.length])).data as Int32Array;
  const outcome = (f: () => weft.sparse.SparseValue): string => {
    try {
      const v = f();
      return `ok ${Array.from(v.indices).join(',')} | ${Array.from(v.data).join(',')}`;
    } catch (e) {
      return `${(e as Error).constructor.name}: ${(e as Error).message}`;
    }
  };
  t.equal(firstIrregularWasm(shared(Int32Array.of(2, 1, 0)), shared(Int32Array.of(0, 1, 3)), 4), 1, 'parts in shared memory take the WebAssembly loop (row 1 unsorted)');
  let [differ, refused, tried] = [0, 0, 0];
  for (let trial = 0; trial < 400; trial++) {
    const inner = 12;
    const lengths = Array.from({ length: 8 }, () => Math.floor(u() * 10));
    const indptr = Int32Array.from([0, ...lengths.map((_, r) => lengths.slice(0, r + 1).reduce((a, b) => a + b, 0))]);
    const indices = Int32Array.from(lengths.flatMap((n) => [...Array.from({ length: inner }, (_, c) => c)].sort(() => u() - 0.5).slice(0, n).sort((a, b) => a - b)));
    // Break one entry (or one indptr entry) at a random position of a random row, or nothing.
    const kind = Math.floor(u() * 6);
    const at = Math.floor(u() * Math.max(1, indices.length));
    if (kind === 0 && indices.length > 0) indices[at] = inner;
    if (kind === 1 && indices.length > 0) indices[at] = -1 - Math.floor(u() * 3);
    if (kind === 2 && indices.length > 1) indices[at] = indices[Math.max(0, at - 1)]!;
    if (kind === 3 && indices.length > 1) indices[at] = Math.floor(u() * inner);
    if (kind === 4) indptr[1 + Math.floor(u() * 7)]! += Math.floor(u() * 5) - 2;
    const data = Float64Array.from(indices, (_, k) => k + 1);
    const shape = [8, inner] as const;
    const heap = outcome(() => sparse.csr({ data, indices: indices.slice(), indptr: indptr.slice(), shape }));
    const inPool = outcome(() => sparse.csr({ data, indices: shared(indices), indptr: shared(indptr), shape }));
    tried++;
    if (heap !== inPool) differ++;
    if (!heap.startsWith('ok')) refused++;
  }
  t.ok(refused > 100 && refused < tried, `${refused} of ${tried} refused: both kinds are tried`);
  t.equal(differ, 0, `${tried} matrices of rows of 0 to 9 entries: the same value or the same error with parts in shared memory as on the heap`);
  await pool.close();
});

t.test('the float32 scatter in WebAssembly (parts in shared memory) gives the bits of the JS loop, for any number of columns', async (t) => {
  const pool = weft.createPool({ workers: 1 });
  const B = randomSparse(396, 300, 200, 0.05);
  const nnz = B.csc.data.length;
  const asView = (nd: weft.NdArray): TensorView => ({ data: nd.data as TensorView['data'], offset: nd.offset, shape: nd.shape, stride: nd.stride });
  const heapView = (data: TensorView['data'], shape: number[]): TensorView => ({ data, offset: 0, shape, stride: shape.length === 2 ? [shape[1]!, 1] : [1] });
  for (const n of [1, 3, 5, 17, 18, 64]) {
    const F = Float32Array.from(randomDense(397 + n, 200, n).flat());
    const parts = [Float32Array.from(B.csc.data), Int32Array.from(B.csc.indices), Int32Array.from(B.csc.indptr), Int32Array.of(300, 200), F];
    const heapIns = parts.map((a) => heapView(a, [a.length]));
    heapIns[4] = heapView(F, [200, n]);
    const poolIns = parts.map((a) => asView(pool.from(weft.ndarray(a, [a.length]))));
    poolIns[4] = asView(pool.from(weft.ndarray(F, [200, n])));
    const slabs = 3;
    const probe = asView(pool.from(weft.ndarray(new Float32Array(300 * n), [300, n])));
    t.ok(cscScatterWasm(poolIns[0]!, poolIns[1]!, poolIns[2]!, poolIns[4]!, probe, 0, 0, 1, 0, n), `${n} columns: the WebAssembly loop runs`);
    const run = (ins: TensorView[], partials: TensorView) => {
      for (const r of [{ start: 0, end: 1 }, { start: 1, end: slabs }]) getKernel('sparse.scatterSlabs')(ins, [partials], {}, r);
      return new Uint8Array(partials.data.buffer, partials.data.byteOffset + partials.offset * 4, slabs * 300 * n * 4).slice();
    };
    const heapOut = run(heapIns, { data: new Float32Array(slabs * 300 * n), offset: 0, shape: [slabs, 300, n], stride: [300 * n, n, 1] });
    const poolOut = run(poolIns, asView(pool.from(weft.ndarray(new Float32Array(slabs * 300 * n), [slabs, 300, n]))));
    t.ok(Buffer.from(poolOut).equals(Buffer.from(heapOut)), `${n} columns: equal bits (${nnz} entries in ${slabs} slabs)`);
  }
  await pool.close();
});

t.test('pool.from takes a sparse matrix: its parts go into the pool\'s shared memory, checked, and calls on it give the same bits', async (t) => {
  const A = randomSparse(391, 300, 200, 0.1);
  const pool = weft.createPool({ workers: 2 });
  const resident = pool.from(sparse.csr(A.csr));
  t.equal(resident.format, 'csr', 'a csr matrix');
  t.ok([resident.data, resident.indices, resident.indptr].every((a) => a.buffer instanceof SharedArrayBuffer), 'its parts in shared memory');
  t.same([Array.from(resident.data), Array.from(resident.indices), Array.from(resident.indptr)], [A.csr.data, A.csr.indices, A.csr.indptr], 'the same entries');
  const s = sparse.csrMatrix('s');
  const d = pt.matrix('d');
  const fn = await weft.compile([s, d], sparse.structuredDot(s, d), { pool });
  const D = randomDense(392, 200, 8);
  t.ok(bytes(await fn(resident, D)).equals(bytes(await fn(sparse.csr(A.csr), D))), 'the same bits as a value outside the pool');
  await throwsExactly(t, () => pool.from({ format: 'csr', data: Float64Array.of(1), indices: Int32Array.of(3), indptr: Int32Array.of(0, 1), shape: [1, 2] } as unknown as weft.sparse.SparseValue), weft.ValueTypeError, 'pool.from: indices[0] = 3 is out of range for 2 columns (0 to 1)', 'a bad matrix');
  await pool.close();
});
