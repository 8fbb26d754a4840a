// Join and Split under the kernel contract: 'concat' is chunked by rows of the output (a chunk
// may cut through one input, or span several when joining along axis 0) and every split gives
// the bits of one call; Split is a multi-output view by offset arithmetic. outputShapes and
// view throw perform's errors.
import t, { type Test } from 'tap';
import type { Apply } from '../../src/graph/apply.js';
import { sizeOf, type TensorView } from '../../src/kernels/view.js';
import { Join } from '../../src/tensor/shape/join.js';
import { makeNdArray, type NdArray } from '../../src/tensor/core/ndarray.js';
import type { TensorVariable } from '../../src/tensor/core/variable.js';
import { pt, rng, throwsExactly, weft } from '../helpers.js';
import { checkChunks, elementsOf, sameElements } from './chunked-runs.js';

function ints(...v: number[]): NdArray {
  return makeNdArray(Int32Array.from(v), [v.length]);
}

/** The element of `v` at a multi-index. */
function at(v: TensorView, idx: readonly number[]): number {
  return v.data[idx.reduce((p, i, a) => p + i * v.stride[a]!, v.offset)]!;
}

/** The concatenation along `axis`, element by element: find the input each output index falls in. */
function expectedJoin(xs: readonly TensorView[], axis: number): number[] {
  const shape = [...xs[0]!.shape];
  shape[axis] = xs.reduce((n, x) => n + x.shape[axis]!, 0);
  const out: number[] = [];
  for (let i = 0; i < sizeOf(shape); i++) {
    const idx: number[] = [];
    let rem = i;
    for (let a = shape.length - 1; a >= 0; a--) {
      idx[a] = rem % shape[a]!;
      rem = (rem - idx[a]!) / shape[a]!;
    }
    let k = 0;
    while (idx[axis]! >= xs[k]!.shape[axis]!) idx[axis] = idx[axis]! - xs[k++]!.shape[axis]!;
    out.push(at(xs[k]!, idx));
  }
  return out;
}

function checkJoin(tt: Test, node: Apply, xs: readonly NdArray[], axis: number, label: string): void {
  const run = checkChunks(tt, node, xs, label);
  const [out] = node.op.perform(node, xs) as NdArray[];
  tt.same(run.shapes, [[...out!.shape]], `${label}: outputShapes is perform's shape`);
  sameElements(tt, run.outputs[0]!, out!, `${label}: perform`);
  tt.same(elementsOf(run.outputs[0]!), expectedJoin(xs, axis), `${label}: the inputs one after another`);
}

t.test('concat along axis 0: chunks of rows that span and cut inputs', (tt) => {
  const r = rng(21);
  const xs = [r.normal([3, 4], { dtype: 'float64' }), r.normal([5, 4], { dtype: 'float64' }), r.normal([0, 4], { dtype: 'float64' }), r.normal([1, 4], { dtype: 'float64' })];
  const vars = xs.map(() => pt.matrix(undefined, 'float64'));
  checkJoin(tt, pt.concatenate(vars, 0).owner!, xs, 0, 'four matrices along axis 0');
  const transposed = [r.normal([4, 3], { dtype: 'float64' }).transpose(1, 0) as NdArray, r.normal([6, 4], { dtype: 'float64' }).step(-1, 1) as NdArray];
  checkJoin(tt, pt.concatenate(transposed.map(() => pt.matrix(undefined, 'float64')), 0).owner!, transposed, 0, 'transposed and reversed along axis 0');
  const vectors = [r.normal([5], { dtype: 'float32' }), r.normal([2], { dtype: 'float32' }).step(-1) as NdArray, r.normal([6], { dtype: 'float32' })];
  checkJoin(tt, pt.concatenate(vectors.map(() => pt.vector(undefined, 'float32')), 0).owner!, vectors, 0, 'three vectors');
  tt.end();
});

t.test('concat along inner axes: every chunk writes its rows of every slab', (tt) => {
  const r = rng(22);
  const m = [r.normal([7, 2], { dtype: 'float64' }), r.normal([3, 7], { dtype: 'float64' }).transpose(1, 0) as NdArray, r.normal([7, 0], { dtype: 'float64' })];
  checkJoin(tt, pt.concatenate(m.map(() => pt.matrix(undefined, 'float64')), 1).owner!, m, 1, 'matrices along axis 1');
  const c = [r.normal([5, 3, 2], { dtype: 'float64' }), r.normal([5, 3, 4], { dtype: 'float64' }).step(1, -1, 2) as NdArray];
  checkJoin(tt, pt.concatenate(c.map(() => pt.tensor3(undefined, 'float64')), -1).owner!, c, 2, '3-d along the last axis');
  checkJoin(tt, pt.concatenate(c.map(() => pt.tensor3(undefined, 'float64')), 2).owner!, c, 2, '3-d along axis 2');
  const d = [r.normal([5, 1, 2], { dtype: 'float64' }), r.normal([5, 2, 2], { dtype: 'float64' })];
  checkJoin(tt, pt.concatenate(d.map(() => pt.tensor3(undefined, 'float64')), 1).owner!, d, 1, '3-d along axis 1');
  const minusOne = new Join(-1).makeNode(pt.matrix(undefined, 'float64'), pt.matrix(undefined, 'float64'));
  tt.same(minusOne.op.kernel!(minusOne), { name: 'concat', params: { axis: 1 }, chunking: { by: 'rows' } }, 'the axis is resolved in params');
  tt.end();
});

t.test('concat converts dtypes and handles empty outputs', (tt) => {
  const r = rng(23);
  const mixed = [r.integers([3, 2], -100, 100, 'int8'), r.normal([3, 5], { dtype: 'float32' })];
  checkJoin(tt, pt.concatenate([pt.matrix(undefined, 'int8'), pt.matrix(undefined, 'float32')], 1).owner!, mixed, 1, 'int8 with float32');
  const flags = [r.integers([4], 0, 2, 'bool'), r.integers([3], -9, 9, 'int32')];
  checkJoin(tt, pt.concatenate([pt.vector(undefined, 'bool'), pt.vector(undefined, 'int32')]).owner!, flags, 0, 'bool with int32');
  const empty = [r.normal([0, 3], { dtype: 'float64' }), r.normal([0, 3], { dtype: 'float64' })];
  checkJoin(tt, pt.concatenate(empty.map(() => pt.matrix(undefined, 'float64')), 0).owner!, empty, 0, 'no rows');
  checkJoin(tt, pt.concatenate(empty.map(() => pt.matrix(undefined, 'float64')), 1).owner!, empty, 1, 'no rows along axis 1');
  tt.end();
});

t.test('Join.outputShapes throws the errors of perform', async (tt) => {
  const node = pt.concatenate([pt.matrix(undefined, 'float64'), pt.matrix(undefined, 'float64')], 0).owner!;
  const xs = [makeNdArray(new Float64Array(12), [3, 4]), makeNdArray(new Float64Array(10), [2, 5])];
  const message = 'Join{axis=0}: input 1 has shape [2, 5] but input 0 has shape [3, 4]: they differ on axis 1 (4 vs 5); all lengths but those on axis 0 must match';
  await throwsExactly(tt, () => node.op.outputShapes!(node, xs), weft.ShapeMismatchError, message, 'outputShapes');
  await throwsExactly(tt, () => node.op.perform(node, xs), weft.ShapeMismatchError, message, 'perform');
  tt.same(node.op.outputShapes!(node, [xs[0]!, makeNdArray(new Float64Array(8), [2, 4])]), [[5, 4]]);
});

t.test('Split is a view per piece, at offsets relative to the input', async (tt) => {
  const x = pt.matrix('x', 'float64');
  const sizes = pt.tensor({ shape: [3], dtype: 'int32' });
  const pieces = pt.split(x, sizes, 0) as TensorVariable[];
  const node = pieces[0]!.owner!;
  tt.equal(node.op.kernel, undefined, 'no kernel');
  const value = makeNdArray(Float64Array.from({ length: 40 }, (_, i) => i), [7, 4], [5, 1], 3);
  const s = ints(2, 0, 5);
  const views = node.op.view!(node, [value, s])!;
  tt.same(views.map((v) => [...v.shape]), [[2, 4], [0, 4], [5, 4]], 'shapes');
  tt.same(views.map((v) => v.offset), [3, 13, 13], 'offsets');
  const rebased = node.op.view!(node, [{ ...value, offset: 0 }, s])!;
  tt.same(rebased.map((v) => v.offset + 3), views.map((v) => v.offset), 'offsets are relative to the input');
  tt.same(elementsOf(views[2]!), [2, 3, 4, 5, 6].flatMap((i) => [0, 1, 2, 3].map((j) => 3 + 5 * i + j)), 'the last piece');
  const out = node.op.perform(node, [value, s]) as NdArray[];
  tt.ok(out.every((o, j) => o.data === value.data && o.offset === views[j]!.offset), 'perform returns the same views');

  const y = pt.matrix('y', 'float32');
  const cols = pt.split(y, [1, 2], 1) as TensorVariable[];
  const colNode = cols[0]!.owner!;
  const transposed = makeNdArray(Float32Array.from({ length: 12 }, (_, i) => i), [3, 4]).transpose(1, 0) as NdArray;
  const cv = colNode.op.view!(colNode, [transposed, ints(1, 2)])!;
  tt.same(cv.map((v) => [v.shape, v.stride, v.offset]), [[[4, 1], [1, 4], 0], [[4, 2], [1, 4], 4]], 'pieces of a transposed matrix along axis 1');

  const errors: Array<[NdArray, new (message: string) => Error, string]> = [
    [ints(2, 5), RangeError, 'Split{nSplits=3, axis=0}: expected 3 sizes, got 2'],
    [ints(2, -1, 6), RangeError, 'Split{nSplits=3, axis=0}: size 1 is negative (-1)'],
    [ints(2, 0, 4), weft.ShapeMismatchError, 'Split{nSplits=3, axis=0}: the sizes [2, 0, 4] add up to 6 but axis 0 of the input has length 7 (input shape [7, 4])'],
  ];
  for (const [bad, cls, message] of errors) {
    const what = `sizes ${elementsOf(bad).join(',')}`;
    await throwsExactly(tt, () => node.op.view!(node, [value, bad]), cls, message, `${what}: view`);
    await throwsExactly(tt, () => node.op.perform(node, [value, bad]), cls, message, `${what}: perform`);
  }
});
