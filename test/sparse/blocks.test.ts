// Blocks of sparse matrices: getBlock / get(rows, cols) with weft.slice bounds, padBlock, vstack
// and hstack, against the same blocks of the dense matrices (csr and csc, mixed formats), their
// inferShape, bad bounds with exact errors, and their gradients (blocks of gz) by verifyGrad.
import t, { type Test } from 'tap';
import { pt, weft } from '../helpers.js';
import { denseOf, randomSparse } from './random.js';

const { sparse } = weft;
type SparseValue = weft.sparse.SparseValue;
const block = (m: number[][], r0: number, r1: number, c0: number, c1: number) => m.slice(r0, r1).map((row) => row.slice(c0, c1));

async function check(t: Test, outputs: weft.Variable[], inputs: weft.Variable[], values: unknown[], wants: number[][][], names: string[]) {
  const fn = await weft.compile(inputs, outputs, { onUnusedInput: 'ignore' });
  const outs = (await fn(...(values as weft.InputValue[]))) as SparseValue[];
  outs.forEach((o, i) => {
    t.same(denseOf(o), wants[i], names[i]!);
    t.same(o, sparse[o.format](o), `${names[i]}: canonical`);
  });
}

t.test('blocks, padding and stacks against dense blocks', async (t) => {
  const A = randomSparse(71, 5, 6, 0.4);
  const B = randomSparse(72, 3, 6, 0.4);
  const C = randomSparse(73, 5, 2, 0.4);
  for (const format of ['csr', 'csc'] as const) {
    const other = format === 'csr' ? 'csc' : 'csr';
    const make = format === 'csr' ? sparse.csrMatrix : sparse.cscMatrix;
    const [a, b] = [make('a'), make('b')];
    const c = (other === 'csr' ? sparse.csrMatrix : sparse.cscMatrix)('c');
    const rows = [...A.dense, ...B.dense];
    await check(
      t,
      [
        sparse.getBlock(a, 1, 4, 2, 6),
        sparse.get(a, weft.slice(2, null)),
        sparse.get(a, weft.slice(null, 2), weft.slice(3, 5)),
        sparse.getBlock(a, 2, 2, 0, 6),
        sparse.padBlock(b, 1, 2, 5, 9),
        sparse.vstack([a, b]),
        sparse.vstack([a, b], { format: other }),
        sparse.hstack([a, c]),
        sparse.hstack([c, a, c], { format: other }),
      ],
      [a, b, c],
      [sparse[format](A[format]), sparse[format](B[format]), sparse[other](C[other])],
      [
        block(A.dense, 1, 4, 2, 6),
        block(A.dense, 2, 5, 0, 6),
        block(A.dense, 0, 2, 3, 5),
        [],
        [[0, 0, 0, 0, 0, 0, 0, 0, 0], ...B.dense.map((r) => [0, 0, ...r, 0]), [0, 0, 0, 0, 0, 0, 0, 0, 0]],
        rows,
        rows,
        A.dense.map((r, i) => [...r, ...C.dense[i]!]),
        A.dense.map((r, i) => [...C.dense[i]!, ...r, ...C.dense[i]!]),
      ],
      ['getBlock', 'get rows 2:', 'get rows :2, columns 3:5', 'an empty block', 'padBlock', 'vstack', `vstack into ${other}`, 'hstack mixed formats', `hstack into ${other}`],
    );
  }
});

t.test('inferShape of blocks and stacks', async (t) => {
  const a = sparse.csrMatrix('a');
  const b = sparse.cscMatrix('b');
  const outs = [sparse.getBlock(a, 1, 3, 0, 4), sparse.padBlock(a, 1, 2, 7, 8), sparse.vstack([a, b, a]), sparse.hstack([a, a])];
  const lengths = outs.flatMap((o) => o.owner!.op.inferShape!(o.owner!, []) as weft.TensorVariable[][]).flat();
  const fn = await weft.compile([a, b], [...outs, ...lengths]);
  const values = (await fn(sparse.csr(randomSparse(74, 4, 5).csr), sparse.csc(randomSparse(75, 2, 5).csc))) as unknown[];
  const real = values.slice(0, 4).flatMap((v) => [...(v as SparseValue).shape]);
  t.same(values.slice(4).map((l) => (l as weft.NdArray).data[0]), real, `inferred [${real.join(', ')}]`);
});

t.test('bad bounds and mismatched stacks: exact errors', async (t) => {
  const a = sparse.csrMatrix('a');
  const A = sparse.csr(randomSparse(76, 3, 4).csr);
  const firstLine = async (v: weft.Variable, value: SparseValue) => {
    const fn = await weft.compile([a], v);
    return fn(value).then(() => 'no error', (e: Error) => e.message.split('\n')[0]);
  };
  t.equal(await firstLine(sparse.getBlock(a, 2, 1, 0, 4), A), 'sparse.getBlock: rows 2:1 and columns 0:4 are not a block of a [3, 4] matrix (0 <= start <= stop <= length)');
  t.equal(await firstLine(sparse.get(a, weft.slice(0, 9)), A), 'sparse.getBlock: rows 0:9 and columns 0:4 are not a block of a [3, 4] matrix (0 <= start <= stop <= length)');
  t.equal(await firstLine(sparse.padBlock(a, 1, 1, 3, 4), A), 'sparse.padBlock: a [3, 4] block at row 1, column 1 does not fit in a [3, 4] matrix');
  t.equal(await firstLine(sparse.vstack([a, sparse.transpose(a)]), A), 'sparse.vstack: input 1 has 3 columns, input 0 has 4');
  t.throws(() => sparse.get(a, weft.slice(0, 2, 2)), { message: 'sparse.get: rows: only steps of 1 are supported, got 2' });
  t.throws(() => sparse.getBlock(a, 0.5, 1, 0, 1), { message: 'sparse.getBlock: input 1: expected an integer, got 0.5' });
  t.throws(() => sparse.vstack([pt.matrix('d')]), { message: 'sparse.vstack: input 0: expected a sparse matrix (a csr or csc variable or value), got d (TensorType(float64, (?, ?)))' });
});

t.test('gradients: blocks of gz, by verifyGrad through csrFromData', async (t) => {
  const of = (r: ReturnType<typeof randomSparse>, format: 'csr' | 'csc') => {
    const p = r[format];
    const build = format === 'csr' ? sparse.csrFromData : sparse.cscFromData;
    return { data: Float64Array.from(p.data), of: (d: weft.TensorVariable) => build(d, Int32Array.from(p.indices), Int32Array.from(p.indptr), Int32Array.from(p.shape)) };
  };
  const A = of(randomSparse(77, 4, 5, 0.5), 'csr');
  const B = of(randomSparse(78, 2, 5, 0.5), 'csc');
  const C = of(randomSparse(79, 4, 3, 0.5), 'csc');
  await weft.verifyGrad((d) => sparse.dense(sparse.getBlock(A.of(d), 1, 3, 1, 5)), [A.data]);
  await weft.verifyGrad((d) => sparse.dense(sparse.padBlock(A.of(d), 2, 1, 7, 6)), [A.data]);
  await weft.verifyGrad((a, b) => sparse.dense(sparse.vstack([A.of(a), B.of(b), A.of(a)])), [A.data, B.data]);
  await weft.verifyGrad((a, c) => sparse.dense(sparse.hstack([A.of(a), C.of(c)], { format: 'csc' })), [A.data, C.data]);
  t.pass('verifyGrad agreed');
  const text = weft.serialize(sparse.hstack([A.of(pt.vector('d')), C.of(pt.vector('e'))], { format: 'csc' }));
  t.match(text, /"type":"sparse.Stack","props":\{"axis":1,"format":"csc"\}/, 'stacks in documents');
  t.ok(weft.deserialize(text).outputs.length === 1);
});

t.test('diag and squareDiagonal: values, shapes, errors, gradients', async (t) => {
  const A = randomSparse(80, 4, 4, 0.5);
  for (const format of ['csr', 'csc'] as const) {
    const a = format === 'csr' ? sparse.csrMatrix('a') : sparse.cscMatrix('a');
    const v = pt.vector('v');
    const d = sparse.diag(a);
    const sq = sparse.squareDiagonal(v, format);
    const lengths = [...d.owner!.op.inferShape!(d.owner!, [[]])[0]!, ...sq.owner!.op.inferShape!(sq.owner!, [[pt.shape(v).get(0)]])[0]!];
    const fn = await weft.compile([a, v], [d, sq, ...lengths]);
    const [dv, sv, ...ls] = (await fn(sparse[format](A[format]), [1, 0, 3])) as unknown[];
    t.same(weft.tolist(dv as weft.NdArray), A.dense.map((r, i) => r[i]!), `${format}: diag`);
    t.same(denseOf(sv as SparseValue), [[1, 0, 0], [0, 0, 0], [0, 0, 3]], `${format}: squareDiagonal`);
    t.equal((sv as SparseValue).format, format);
    t.same(ls.map((l) => (l as weft.NdArray).data[0]), [4, 3, 3], `${format}: inferShape`);
    const bad = await weft.compile([a], sparse.diag(a));
    await bad(sparse[format](randomSparse(81, 2, 3)[format])).then(
      () => t.fail('a non-square matrix'),
      (e: Error) => t.equal(e.message.split('\n')[0], 'sparse.diag: expected a square matrix, got shape [2, 3]'),
    );
  }
  const P = randomSparse(82, 5, 5, 0.5).csr;
  const pattern = [Int32Array.from(P.indices), Int32Array.from(P.indptr), Int32Array.from(P.shape)] as const;
  await weft.verifyGrad((data) => sparse.diag(sparse.csrFromData(data, ...pattern)), [Float64Array.from(P.data)]);
  await weft.verifyGrad((v) => sparse.dense(sparse.squareDiagonal(v)), [[0.5, -1, 2]]);
  t.pass('verifyGrad agreed');
});

t.test('methods of sparse variables: s.get(rows, cols?), s.T, s.toDense()', async (t) => {
  const A = randomSparse(83, 5, 4, 0.5);
  const a = sparse.csrMatrix('a');
  const rows = a.get(weft.slice(1, 3));
  t.ok(rows.owner!.op instanceof sparse.GetBlock, 'get is a block');
  t.equal(a.T.format, 'csc');
  const fn = await weft.compile([a], [sparse.dense(rows), sparse.dense(a.get(weft.slice(null, null), weft.slice(2, null))), a.T.toDense()]);
  const [r, c, tr] = (await fn(sparse.csr(A.csr))) as weft.NdArray[];
  t.same(weft.tolist(r!), block(A.dense, 1, 3, 0, 4), 'rows 1:3');
  t.same(weft.tolist(c!), block(A.dense, 0, 5, 2, 4), 'columns 2:');
  t.same(weft.tolist(tr!), A.dense[0]!.map((_, j) => A.dense.map((row) => row[j]!)), 'the transpose');
});
