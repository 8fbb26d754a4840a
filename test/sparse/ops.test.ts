// The sparse ops' values against dense computations of the same seeded random matrices (csr and
// csc, float64 and float32), their inferShape against the shapes of real outputs, and bad
// operands (misaligned, mismatched shapes, dense where sparse is expected) with exact errors.
import t, { type Test } from 'tap';
import { near, pt, throwsExactly, weft } from '../helpers.js';
import { denseOf, matmul, randomDense, randomSparse, transposed } from './random.js';

const { sparse } = weft;
type Matrix = number[][];
type SparseValue = weft.sparse.SparseValue;

/** The dense matrix of a sparse output, or the nested values of a dense one. */
function valueOf(x: unknown): Matrix | number[] | number {
  return (x as SparseValue).indptr instanceof Int32Array ? denseOf(x as SparseValue) : (weft.tolist(x as weft.NdArray) as Matrix);
}

function close(t: Test, got: unknown, want: Matrix | number[] | number, tol: number, msg: string): void {
  const g = valueOf(got);
  const flat = (v: unknown): number[] => (Array.isArray(v) ? v.flatMap(flat) : [v as number]);
  const shape = (v: unknown): number[] => (Array.isArray(v) ? [v.length, ...shape(v[0])] : []);
  t.same(shape(g), shape(want), `${msg}: shape`);
  const bad = flat(want).map((w, i) => [w, flat(g)[i]!] as const).filter(([w, x]) => !(Math.abs(w - x) <= tol * Math.max(1, Math.abs(w))));
  t.same(bad.slice(0, 3), [], `${msg}: values within ${tol}`);
}

/** Rejects with a NodeError whose first line (the op's own message, before the node's context) is `message`. */
async function nodeFails(t: Test, call: () => Promise<unknown>, message: string, what: string): Promise<void> {
  await call().then(
    () => t.fail(`${what}: expected a NodeError`),
    (e: unknown) => {
      t.type(e, weft.NodeError, `${what}: NodeError`);
      t.equal((e as Error).message.split('\n')[0], message, `${what}: message`);
    },
  );
}

const elementwise = (a: Matrix, b: Matrix, f: (x: number, y: number) => number): Matrix => a.map((row, i) => row.map((x, j) => f(x, b[i]![j]!)));

for (const dtype of ['float64', 'float32'] as const) {
  const tol = dtype === 'float64' ? 1e-12 : 1e-5;
  for (const format of ['csr', 'csc'] as const) {
    t.test(`${format} ${dtype}: values against dense computations`, async (t) => {
      const A = randomSparse(1, 5, 4, 0.4);
      const B = randomSparse(2, 5, 4, 0.4);
      const C = randomSparse(3, 4, 6, 0.4);
      const D = randomDense(4, 6, 3);
      const E = randomDense(5, 5, 4);
      const make = format === 'csr' ? sparse.csrMatrix : sparse.cscMatrix;
      const [a, b, c] = [make('a', dtype), make('b', dtype), make('c', dtype)];
      const [d, e] = [pt.matrix('d', dtype), pt.matrix('e', dtype)];
      const cases: Array<[string, unknown, Matrix | number[] | number]> = [
        ['dense', sparse.dense(a), A.dense],
        ['asSparse(dense)', sparse.asSparse(sparse.dense(a), format), A.dense],
        ['asSparse into the other format', sparse.asSparse(e, format === 'csr' ? 'csc' : 'csr'), E],
        ['toFormat', sparse.toFormat(a, format === 'csr' ? 'csc' : 'csr'), A.dense],
        ['transpose', sparse.transpose(a), transposed(A.dense)],
        ['neg', sparse.neg(a), A.dense.map((r) => r.map((x) => -x))],
        ['add sparse sparse', sparse.add(a, b), elementwise(A.dense, B.dense, (x, y) => x + y)],
        ['add sparse dense', sparse.add(a, e), elementwise(A.dense, E, (x, y) => x + y)],
        ['add dense sparse', sparse.add(e, a), elementwise(A.dense, E, (x, y) => x + y)],
        ['sub sparse sparse', sparse.sub(a, b), elementwise(A.dense, B.dense, (x, y) => x - y)],
        ['sub sparse dense', sparse.sub(a, e), elementwise(A.dense, E, (x, y) => x - y)],
        ['sub dense sparse', sparse.sub(e, a), elementwise(E, A.dense, (x, y) => x - y)],
        ['mul sparse sparse', sparse.mul(a, b), elementwise(A.dense, B.dense, (x, y) => x * y)],
        ['mul sparse dense', sparse.mul(a, e), elementwise(A.dense, E, (x, y) => x * y)],
        ['mul dense sparse', sparse.mul(e, a), elementwise(A.dense, E, (x, y) => x * y)],
        ['structuredDot', sparse.structuredDot(c, d), matmul(C.dense, D)],
        ['dot sparse dense', sparse.dot(c, d), matmul(C.dense, D)],
        ['dot dense sparse', sparse.dot(e, c), matmul(E, C.dense)],
        ['dot sparse sparse', sparse.dot(a, c), matmul(A.dense, C.dense)],
        ['dot sparse sparse^T', sparse.dot(a, sparse.transpose(b)), matmul(A.dense, transposed(B.dense))],
        ['sum', sparse.sum(a), A.dense.flat().reduce((s, x) => s + x, 0)],
        ['sum axis 0', sparse.sum(a, { axis: 0 }), transposed(A.dense).map((col) => col.reduce((s, x) => s + x, 0))],
        ['sum axis 1', sparse.sum(a, { axis: 1 }), A.dense.map((row) => row.reduce((s, x) => s + x, 0))],
      ];
      const fn = await weft.compile([a, b, c, d, e], cases.map(([, v]) => v as weft.Variable), { onUnusedInput: 'ignore' });
      const value = (r: typeof A) => sparse[format](r[format], { dtype });
      const [d32, e32] = [D, E].map((m) => weft.ndarray(Float32Array.from(m.flat()), [m.length, m[0]!.length]));
      const outs = (await fn(value(A), value(B), value(C), dtype === 'float64' ? D : d32!, dtype === 'float64' ? E : e32!)) as unknown[];
      cases.forEach(([name, v, want], i) => {
        if (sparse.isSparseVariable(v)) {
          const o = outs[i] as SparseValue;
          t.equal(o.format, v.format, `${name}: format ${v.format}`);
          t.type(o.data, dtype === 'float64' ? Float64Array : Float32Array, `${name}: ${dtype}`);
          t.same(o, sparse[o.format](o), `${name}: canonical`);
        }
        close(t, outs[i], want, tol, name);
      });
      // Structure, not only values: mul keeps the sparse operand's pattern (explicit zeros too).
      const structured = outs[13] as SparseValue;
      t.equal(structured.data.length, A[format].data.length, "mul sparse dense: s's pattern");
    });
  }
}

t.test('transpose moves no data; asSparse keeps NaN and drops zeros', async (t) => {
  const s = sparse.csrMatrix('s');
  const v = sparse.csr({ data: [1, 2], indices: [1, 0], indptr: [0, 1, 2], shape: [2, 3] });
  const fn = await weft.compile([s], sparse.transpose(s));
  const out = (await fn(v)) as SparseValue;
  t.equal(out.format, 'csc');
  t.same(out.shape, [3, 2]);
  t.same([Array.from(out.data), Array.from(out.indices), Array.from(out.indptr)], [[1, 2], [1, 0], [0, 1, 2]], 'the same arrays, read as csc');
  const d = pt.matrix('d');
  const toSparse = await weft.compile([d], sparse.asSparse(d, 'csr'));
  const w = (await toSparse([[0, NaN, 0], [3, 0, -0]])) as SparseValue;
  t.same([Array.from(w.indices), Array.from(w.indptr)], [[1, 0], [0, 1, 2]], 'NaN is stored, 0 and -0 are not');
  t.ok(Number.isNaN(w.data[0]!));
});

t.test('csrFromData builds a matrix from tensors, checked when it runs', async (t) => {
  const data = pt.vector('data');
  const indices = pt.vector('indices', 'int32');
  const indptr = pt.vector('indptr', 'int32');
  const shape = pt.vector('shape', 'int32');
  const fn = await weft.compile([data, indices, indptr, shape], sparse.dense(sparse.csrFromData(data, indices, indptr, shape)));
  near(t, await fn([1, 2, 3], new Int32Array([2, 0, 2]), new Int32Array([0, 3, 3]), new Int32Array([2, 3])), [[2, 0, 4], [0, 0, 0]], 0, 'unsorted and duplicate entries');
  await nodeFails(t, () => fn([1], new Int32Array([3]), new Int32Array([0, 1, 1]), new Int32Array([2, 3])), 'csrFromData: indices[0] = 3 is out of range for 3 columns (0 to 2)', 'index out of range');
  await nodeFails(t, () => fn([1, 2], new Int32Array([0]), new Int32Array([0, 1, 1]), new Int32Array([2, 3])), 'csrFromData: data has 2 entries but indices has 1; they must have the same length (one column index per stored value)', 'length mismatch');
});

t.test('inferShape agrees with the shapes of real outputs', async (t) => {
  const A = randomSparse(7, 3, 5);
  const C = randomSparse(8, 5, 2);
  const a = sparse.csrMatrix('a');
  const c = sparse.cscMatrix('c');
  const d = pt.matrix('d');
  const e = pt.matrix('e');
  const outs: Array<[string, weft.Variable]> = [
    ['dense', sparse.dense(a)],
    ['asSparse', sparse.asSparse(e, 'csc')],
    ['transpose', sparse.transpose(a)],
    ['neg', sparse.neg(a)],
    ['toFormat', sparse.toFormat(a, 'csc')],
    ['add ss', sparse.add(a, a)],
    ['add sd', sparse.add(a, e)],
    ['mul ss', sparse.mul(a, a)],
    ['mul sd', sparse.mul(a, e)],
    ['structuredDot', sparse.structuredDot(c, d)],
    ['dot sd', sparse.dot(a, sparse.dense(c))],
    ['dot ds', sparse.dot(e, c)],
    ['dot ss', sparse.dot(a, c)],
    ['sum', sparse.sum(a)],
    ['sum 0', sparse.sum(a, { axis: 0 })],
    ['sum 1', sparse.sum(a, { axis: 1 })],
  ];
  for (const [name, out] of outs) {
    const node = out.owner!;
    const shapes = node.inputs.map((v) => (sparse.isSparseVariable(v) ? [] : [0, 1].map((i) => pt.shape(v as weft.TensorVariable).get(i))));
    const inferred = node.op.inferShape!(node, shapes) as weft.TensorVariable[][];
    const fn = await weft.compile([a, c, d, e], [out, ...inferred[0]!], { onUnusedInput: 'ignore' });
    const [value, ...lengths] = (await fn(sparse.csr(A.csr), sparse.csc(C.csc), randomDense(9, 2, 4), randomDense(10, 3, 5))) as unknown[];
    const real = (value as { shape: readonly number[] }).shape;
    t.same(lengths.map((l) => (l as weft.NdArray).data[0]), [...real], `${name}: [${real.join(', ')}]`);
  }
});

t.test('bad operands: errors name the op, the input and what was expected', async (t) => {
  const a = sparse.csrMatrix('a');
  const d = pt.matrix('d');
  const v = pt.vector('v');
  await throwsExactly(t, () => sparse.dense(d), weft.ValueTypeError, 'dense: input 0: expected a sparse matrix (a csr or csc variable or value), got d (TensorType(float64, (?, ?)))');
  await throwsExactly(t, () => sparse.structuredDot(a, v), TypeError, 'structuredDot: input 1: expected a matrix (2-d), got v (TensorType(float64, (?,)))');
  await throwsExactly(t, () => sparse.structuredDot(a, a), TypeError, 'structuredDot: input 1: expected a dense matrix, got the sparse a (SparseTensorType(csr, float64))');
  await throwsExactly(t, () => sparse.mul(d, d), TypeError, 'sparse.mul: at least one operand must be sparse, got d and d (use pt.mul for dense ones)');
  const A = sparse.csr(randomSparse(1, 3, 4).csr);
  const dot = await weft.compile([a, d], sparse.structuredDot(a, d));
  await nodeFails(t, () => dot(A, randomDense(2, 3, 2)), 'structuredDot: shapes [3, 4] and [3, 2] are not aligned: input 0 has 4 columns, input 1 has 3 rows', 'misaligned product');
  const add = await weft.compile([a, d], sparse.add(a, d));
  await nodeFails(t, () => add(A, randomDense(2, 3, 5)), "sparse.add: the operands' shapes [3, 4] and [3, 5] differ", 'mismatched shapes');
});

t.test('samplingDot: (x y^T) * p at p\'s stored positions', async (t) => {
  const P = randomSparse(61, 4, 5, 0.4);
  const X = randomDense(62, 4, 3);
  const Y = randomDense(63, 5, 3);
  const xy = matmul(X, transposed(Y));
  for (const format of ['csr', 'csc'] as const) {
    const p = format === 'csr' ? sparse.csrMatrix('p') : sparse.cscMatrix('p');
    const [x, y] = [pt.matrix('x'), pt.matrix('y')];
    const fn = await weft.compile([x, y, p], sparse.samplingDot(x, y, p));
    const out = (await fn(X, Y, sparse[format](P[format]))) as SparseValue;
    t.equal(out.format, format);
    t.equal(out.data.length, P[format].data.length, "p's pattern");
    close(t, out, elementwise(xy, P.dense, (a, b) => a * b), 1e-12, `samplingDot ${format}`);
    await nodeFails(t, () => fn(X, randomDense(64, 5, 2), sparse[format](P[format])), "samplingDot: x [4, 3] times y^T ([5, 2] transposed) does not have p's shape [4, 5]", 'misaligned');
  }
});
