// The lowered ops (tensor ops over a sparse matrix's parts) on their own, with tensor inputs:
// inferShape against real shapes (weft.checkInferShape) for each, and their bad-input errors.
// Their values, bits and gradients (through the sparse ops) are checked in workers.test.ts.
import t from 'tap';
import { CompressedSwitch, CompressedTimesDense, CompressedToDense, FusedTimesDense, ProductsAt, ValuesAt } from '../../src/sparse/compressed.js';
import { Elemwise } from '../../src/tensor/elemwise/elemwise.js';
import { pt, weft } from '../helpers.js';
import { randomDense, randomSparse } from './random.js';

const A = randomSparse(501, 6, 5, 0.4);
const vector = (name: string, dtype: 'int32' | 'float64') => pt.vector(name, dtype);
const [data, indices, indptr] = [vector('data', 'float64'), vector('indices', 'int32'), vector('indptr', 'int32')];
const shape = pt.tensor({ dtype: 'int32', shape: [2], name: 'shape' });
const d = pt.matrix('d');
const partsOf = (p: { data: number[]; indices: number[]; indptr: number[]; shape: [number, number] }) => [
  weft.ndarray(Float64Array.from(p.data)),
  weft.ndarray(Int32Array.from(p.indices)),
  weft.ndarray(Int32Array.from(p.indptr)),
  weft.ndarray(Int32Array.from(p.shape)),
];
const parts = [data, indices, indptr, shape] as const;

t.test('inferShape of each lowered op against real shapes', async (t) => {
  for (const [format, outer] of [['csr', 'rows'], ['csc', 'columns']] as const) {
    const values = partsOf(A[format]);
    const D = weft.ndarray(Float64Array.from(randomDense(502, 5, 3).flat()), [5, 3]);
    const X = weft.ndarray(Float64Array.from(randomDense(503, 6, 2).flat()), [6, 2]);
    const Y = weft.ndarray(Float64Array.from(randomDense(504, 5, 2).flat()), [5, 2]);
    const Z = weft.ndarray(Float64Array.from(randomDense(505, 6, 5).flat()), [6, 5]);
    const b = pt.vector('b');
    const [x, y] = [pt.matrix('x'), pt.matrix('y')];
    const product = new CompressedTimesDense(outer, 'structuredDot').call(...parts, d);
    const fused = new FusedTimesDense(new CompressedTimesDense(outer, 'structuredDot'), pt.add(x, y).owner!.op as Elemwise, 0).call(...parts, d, b.dimshuffle('x', 0));
    const switched = new CompressedSwitch(outer).call(...parts);
    const checks: Array<[weft.TensorVariable[], weft.TensorVariable[], unknown[]]> = [
      [[...parts, d], [product], [...values, D]],
      [[...parts, d, b], [fused as weft.TensorVariable], [...values, D, weft.ndarray(Float64Array.of(1, 2, 3))]],
      [[...parts], switched, values],
      [[indices, indptr, shape, x, y, data], [new ProductsAt(outer, true, 'samplingDot').call(indices, indptr, shape, x, y, data)], [values[1], values[2], values[3], X, Y, values[0]]],
      [[indices, indptr, shape, d], [new ValuesAt(outer, 'sparse.mul').call(indices, indptr, shape, d)], [values[1], values[2], values[3], Z]],
      [[...parts], [new CompressedToDense(outer).call(...parts)], values],
      [[...parts, d], [new CompressedToDense(outer).call(...parts, d)], [...values, Z]],
    ];
    for (const [ins, outs, vals] of checks) t.ok((await weft.checkInferShape(ins, outs, vals as weft.TensorLike[])) >= 1, `${format}: ${outs[0]!.owner!.op}`);
  }
});

t.test('bad inputs: the errors of the sparse ops they stand for', async (t) => {
  const values = partsOf(A.csr);
  const run = async (ins: weft.TensorVariable[], out: weft.TensorVariable, vals: unknown[]) => (await weft.compile(ins, out, { workers: 0 }))(...(vals as weft.InputValue[]));
  const err = async (p: Promise<unknown>, message: string, what: string) =>
    p.then(
      () => t.fail(`${what}: expected a NodeError`),
      (e: unknown) => {
        t.type(e, weft.NodeError, `${what}: NodeError`);
        t.equal((e as Error).message.split('\n')[0], message, `${what}: message`);
      },
    );
  const D = weft.ndarray(new Float64Array(12), [4, 3]);
  await err(run([...parts, d], new CompressedTimesDense('rows', 'structuredDot').call(...parts, d), [...values, D]), 'structuredDot: shapes [6, 5] and [4, 3] are not aligned: input 0 has 5 columns, input 1 has 4 rows', 'misaligned product');
  const [x, y] = [pt.matrix('x'), pt.matrix('y')];
  await err(
    run([indices, indptr, shape, x, y], new ProductsAt('rows', false, 'the gradient of structuredDot').call(indices, indptr, shape, x, y), [values[1], values[2], values[3], weft.ndarray(new Float64Array(12), [6, 2]), weft.ndarray(new Float64Array(12), [4, 3])]),
    "the gradient of structuredDot: gz [6, 2] times d^T ([4, 3] transposed) does not have s's shape [6, 5]",
    'products at the stored positions',
  );
  await err(run([indices, indptr, shape, d], new ValuesAt('rows', 'sparse.mul').call(indices, indptr, shape, d), [values[1], values[2], values[3], D]), "sparse.mul: the operands' shapes [6, 5] and [4, 3] differ", 'values at the stored positions');
  await err(run([...parts, d], new CompressedToDense('rows').call(...parts, d), [...values, D]), "sparse.add: the operands' shapes [6, 5] and [4, 3] differ", 'sparse plus dense');
});
