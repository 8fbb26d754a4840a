// Shape and view ops under the kernel contract: DimShuffle, ViewOp and Reshape of a contiguous
// value are views by offset arithmetic (relative to the viewed input's offset); DeepCopyOp
// ('copy'), Alloc ('alloc') and Reshape of a non-contiguous value ('reshapeCopy') are kernels
// chunked by elements, bitwise equal whatever the split; Shape and Shape_i have shapes only.
import ndarray from 'ndarray';
import t, { type Test } from 'tap';
import type { Apply } from '../../src/graph/apply.js';
import { sizeOf, type TensorView } from '../../src/kernels/view.js';
import { deepCopy, viewOf } from '../../src/tensor/shape/basic-ops.js';
import { makeNdArray, type NdArray } from '../../src/tensor/core/ndarray.js';
import { shapeI } from '../../src/tensor/shape/shape.js';
import type { TensorVariable } from '../../src/tensor/core/variable.js';
import { pt, rng, throwsExactly, weft } from '../helpers.js';
import { checkChunks, elementsOf, sameElements } from './chunked-runs.js';

function int(v: number): NdArray {
  return makeNdArray(Int32Array.of(v), []);
}

function ints(...v: number[]): NdArray {
  return makeNdArray(Int32Array.from(v), [v.length]);
}

/** A 0..n-1 float64 array of `shape`, so that every element says where it came from. */
function iota(shape: readonly number[]): NdArray {
  return makeNdArray(Float64Array.from({ length: sizeOf(shape) }, (_, i) => i), shape);
}

/** Runs the chunk checks, then checks perform's result against the kernel's (shape and elements). */
function checkKernel(tt: Test, node: Apply, inputs: readonly TensorView[], label: string): NdArray {
  const run = checkChunks(tt, node, inputs, label);
  const [out] = node.op.perform(node, inputs as NdArray[]) as NdArray[];
  tt.same(run.shapes, [[...out!.shape]], `${label}: outputShapes is perform's shape`);
  sameElements(tt, run.outputs[0]!, out!, `${label}: perform`);
  return run.outputs[0]!;
}

/** `view` of the node on `x` and on `x` re-based to offset 0: the offsets differ by x's offset. */
function checkRelative(tt: Test, node: Apply, inputs: readonly TensorView[], label: string): TensorView[] {
  const views = node.op.view!(node, inputs)!;
  const rebased = inputs.map((v, i) => (i === 0 ? { ...v, offset: 0 } : v));
  const relative = node.op.view!(node, rebased)!;
  tt.same(relative.map((v) => v.offset + inputs[0]!.offset), views.map((v) => v.offset), `${label}: offsets are relative to the input's`);
  tt.ok(views.every((v) => v.data === inputs[0]!.data), `${label}: the views share the input's data`);
  const out = node.op.perform(node, inputs as NdArray[]) as NdArray[];
  tt.same(out.map((o) => [...o.shape]), views.map((v) => [...v.shape]), `${label}: perform returns the views`);
  tt.ok(out.every((o, j) => o.data === inputs[0]!.data && o.offset === views[j]!.offset), `${label}: perform shares the input's data`);
  return views;
}

t.test('DimShuffle is a view: permuted strides, stride 0 on new axes', (tt) => {
  const x = pt.tensor({ shape: [null, 1, null], dtype: 'float64' });
  const node = x.dimshuffle(2, 'x', 0).owner!;
  tt.equal(node.op.kernel, undefined, 'no kernel');
  const value = iota([6, 1, 4, 3]).pick(null, null, 1, null) as NdArray; // 6x1x3, strides [12, 12, 1], offset 3
  const [v] = checkRelative(tt, node, [value], 'dimshuffle');
  tt.same([...v!.shape], [3, 1, 6]);
  tt.same([...v!.stride], [1, 0, 12]);
  const expected: number[] = [];
  for (let i = 0; i < 3; i++) for (let j = 0; j < 6; j++) expected.push(3 + 12 * j + i);
  tt.same(elementsOf(v!), expected, 'elements: out[i, 0, j] = x[j, 0, i]');
  const y = pt.matrix('y', 'float64');
  const tnode = y.T.owner!;
  const reversed = iota([4, 5]).step(-1, 1) as NdArray;
  const [tv] = checkRelative(tt, tnode, [reversed], 'transpose of a reversed matrix');
  tt.same(elementsOf(tv!), [0, 1, 2, 3, 4].flatMap((c) => [3, 2, 1, 0].map((r) => 5 * r + c)), 'elements of the transpose');
  tt.end();
});

t.test('ViewOp is the identity view', (tt) => {
  const x = pt.matrix('x', 'float32');
  const node = viewOf(x).owner!;
  const value = makeNdArray(new Float32Array(20).map((_, i) => i), [3, 4], [5, 1], 2);
  const [v] = checkRelative(tt, node, [value], 'ViewOp');
  tt.same([v!.shape, v!.stride, v!.offset], [[3, 4], [5, 1], 2]);
  tt.end();
});

t.test('DeepCopyOp copies any layout by elements', (tt) => {
  const r = rng(11);
  const cases: Array<[string, TensorVariable, NdArray]> = [
    ['float64 matrix', pt.matrix('a', 'float64'), r.normal([7, 9], { dtype: 'float64' })],
    ['transposed float32', pt.matrix('b', 'float32'), r.normal([5, 3], { dtype: 'float32' }).transpose(1, 0)],
    ['reversed int8 tensor3', pt.tensor3('c', 'int8'), r.integers([3, 4, 5], -100, 100, 'int8').step(-1, 1, -2)],
    ['bool vector', pt.vector('d', 'bool'), r.integers([13], 0, 2, 'bool')],
    ['0-d', pt.scalar('e', 'float64'), r.normal([], { dtype: 'float64' })],
    ['empty', pt.matrix('f', 'float64'), r.normal([0, 4], { dtype: 'float64' })],
  ];
  for (const [name, x, value] of cases) {
    const node = deepCopy(x).owner!;
    const out = checkKernel(tt, node, [value], `copy of a ${name}`);
    tt.same(elementsOf(out), elementsOf(value), `copy of a ${name}: the input's elements`);
  }
  const node = deepCopy(pt.matrix('g', 'float64')).owner!;
  tt.same(node.op.kernel!(node), { name: 'copy', params: {}, chunking: { by: 'elements' } });
  tt.end();
});

t.test('Alloc broadcasts its value by elements; its lengths are read from the small inputs', async (tt) => {
  const r = rng(12);
  const n = pt.scalar('n', 'int32');
  const m = pt.scalar('m', 'int8');
  const s = pt.scalar('s', 'float64');
  const v = pt.vector('v', 'float64');
  const b = pt.tensor({ shape: [1, null], dtype: 'float32' });
  const c = pt.tensor({ shape: [null, 1], dtype: 'int32' });
  const vector = r.normal([7], { dtype: 'float64' });
  const cases: Array<[string, TensorVariable, NdArray, number[]]> = [
    ['a scalar into 5x7', pt.alloc(s, n, m), r.normal([], { dtype: 'float64' }), [5, 7]],
    ['a vector into 5x7', pt.alloc(v, n, m), vector, [5, 7]],
    ['a reversed vector into 3x2x7', pt.alloc(v, n, 2, m), vector.step(-1) as NdArray, [3, 7]],
    ['a 1x5 row into 4x5', pt.alloc(b, n, m), r.normal([1, 5], { dtype: 'float32' }), [4, 5]],
    ['a 3x1 column into 2x3x4', pt.alloc(c, 2, n, m), r.integers([3, 1], -9, 9, 'int32'), [3, 4]],
    ['a vector into 0x7', pt.alloc(v, n, m), vector, [0, 7]],
  ];
  for (const [name, y, value, lengths] of cases) {
    const node = y.owner!;
    const dims = node.inputs.slice(1).map((d, i) => (d === n ? int(lengths[0]!) : d === m ? int(lengths[1]!) : (d as unknown as { data: NdArray }).data));
    tt.equal(dims.length, node.inputs.length - 1, `${name}: one length input per axis`);
    const out = checkKernel(tt, node, [value, ...dims], `alloc of ${name}`);
    // Independently: out[i] = value at the broadcast position.
    const outShape = out.shape;
    const lead = outShape.length - value.shape.length;
    const expected: number[] = [];
    for (let i = 0; i < sizeOf(outShape); i++) {
      let rem = i;
      let p = value.offset;
      for (let a = outShape.length - 1; a >= 0; a--) {
        const idx = rem % outShape[a]!;
        rem = (rem - idx) / outShape[a]!;
        if (a >= lead && value.shape[a - lead] !== 1) p += idx * value.stride[a - lead]!;
      }
      expected.push(value.data[p]!);
    }
    tt.same(elementsOf(out), expected, `alloc of ${name}: broadcast values`);
  }
  const node = pt.alloc(v, n, m).owner!;
  tt.same(node.op.kernel!(node), { name: 'alloc', params: {}, chunking: { by: 'elements' } });
  const errors: Array<[string, NdArray, number, number, string]> = [
    ['negative length', vector, -2, 7, 'Alloc: negative length -2 on axis 0'],
    ['wrong length', vector, 2, 6, 'Alloc: the value of shape [7] cannot be broadcast to shape [2, 6]'],
    ['runtime broadcasting', r.normal([1], { dtype: 'float64' }), 2, 6, 'Alloc: the value of shape [1] cannot be broadcast to shape [2, 6] (axis 0 of the value is not statically broadcastable)'],
  ];
  for (const [what, value, d0, d1, message] of errors) {
    await throwsExactly(tt, () => node.op.outputShapes!(node, [value, int(d0), int(d1)]), RangeError, message, `${what}: outputShapes`);
    await throwsExactly(tt, () => node.op.perform(node, [value, int(d0), int(d1)]), RangeError, message, `${what}: perform`);
  }
});

t.test('Reshape: a view of a C-contiguous value, else a copy by elements', async (tt) => {
  const x = pt.tensor3('x', 'float64');
  const node = x.reshape([2, -1]).owner!;
  const target = (node.inputs[1] as unknown as { data: NdArray }).data;
  const contiguous = iota([3, 4, 5]);
  const [v] = checkRelative(tt, node, [contiguous, target], 'reshape of a contiguous value');
  tt.same([v!.shape, v!.stride], [[2, 30], [30, 1]]);
  const offsetRows = makeNdArray(Float64Array.from({ length: 70 }, (_, i) => i), [3, 4, 5], [20, 5, 1], 7);
  const [w] = checkRelative(tt, node, [offsetRows, target], 'reshape of a contiguous value at an offset');
  tt.same(elementsOf(w!), elementsOf(offsetRows), 'the same elements in C order');
  const transposed = iota([5, 4, 3]).transpose(2, 1, 0) as NdArray;
  tt.equal(node.op.view!(node, [transposed, target]), undefined, 'a non-contiguous value needs a copy');
  const out = checkKernel(tt, node, [transposed, target], 'reshape of a transposed value');
  tt.same(elementsOf(out), elementsOf(transposed), 'the copy has the elements in C order');
  tt.same([...out.shape], [2, 30]);
  tt.same(node.op.kernel!(node), { name: 'reshapeCopy', params: {}, chunking: { by: 'elements' } });
  const reversed = rng(13).integers([7, 3], -5, 5, 'int16').step(-1, -1) as NdArray;
  const s = pt.tensor({ shape: [3], dtype: 'int32' });
  const symbolic = pt.matrix('m', 'int16').reshape(s).owner!;
  checkKernel(tt, symbolic, [reversed, ints(3, 1, 7)], 'reshape of a reversed int16 matrix to a symbolic shape');
  checkKernel(tt, symbolic, [rng(14).normal([0, 3], { dtype: 'float64' }).transpose(1, 0) as NdArray, ints(2, 0, 5)], 'reshape of an empty value');
  tt.same(symbolic.op.outputShapes!(symbolic, [reversed, ints(-1, 3, 1)]), [[7, 3, 1]], 'the -1 is resolved');
  const errors: Array<[NdArray, new (message: string) => Error, string]> = [
    [ints(3, 7), RangeError, 'Reshape{ndim=3}: the target shape [3, 7] has 2 lengths, expected 3'],
    [ints(3, -2, 7), RangeError, 'Reshape{ndim=3}: the target shape [3, -2, 7] has the negative length -2 (only -1 is allowed, for one length to be inferred)'],
    [ints(-1, -1, 7), RangeError, 'Reshape{ndim=3}: the target shape [-1, -1, 7] has more than one -1 (only one length can be inferred)'],
    [ints(2, 2, 5), weft.ShapeMismatchError, 'Reshape{ndim=3}: cannot reshape an array of shape [7, 3] (21 elements) into shape [2, 2, 5] (20 elements)'],
    [ints(0, -1, 3), weft.ShapeMismatchError, 'Reshape{ndim=3}: cannot infer the -1 in the target shape [0, -1, 3] for an array of shape [7, 3]: the other lengths multiply to 0'],
    [ints(2, -1, 1), weft.ShapeMismatchError, 'Reshape{ndim=3}: cannot reshape an array of shape [7, 3] (21 elements) into shape [2, -1, 1]: 21 is not a multiple of 2'],
  ];
  for (const [shape, cls, message] of errors) {
    const ins = [reversed, shape];
    const what = `target ${elementsOf(shape).join(',')}`;
    await throwsExactly(tt, () => symbolic.op.outputShapes!(symbolic, ins), cls, message, `${what}: outputShapes`);
    await throwsExactly(tt, () => symbolic.op.view!(symbolic, [iota([7, 3]), shape]), cls, message, `${what}: view`);
    await throwsExactly(tt, () => symbolic.op.perform(symbolic, ins), cls, message, `${what}: perform`);
  }
});

t.test('Shape and Shape_i: output shapes only, no kernel', (tt) => {
  const x = pt.tensor3('x', 'float32');
  const value = ndarray(new Float32Array(24), [2, 3, 4]) as NdArray;
  const shapeNode = pt.shape(x).owner!;
  tt.equal(shapeNode.op.kernel, undefined, 'Shape has no kernel');
  tt.same(shapeNode.op.outputShapes!(shapeNode, [value]), [[3]]);
  const [s] = shapeNode.op.perform(shapeNode, [value]) as NdArray[];
  tt.same([...s!.shape], [3], 'perform agrees');
  tt.same(elementsOf(s!), [2, 3, 4]);
  const iNode = shapeI(x, 1).owner!;
  tt.equal(iNode.op.kernel, undefined, 'Shape_i has no kernel');
  tt.same(iNode.op.outputShapes!(iNode, [value]), [[]]);
  const [d] = iNode.op.perform(iNode, [value]) as NdArray[];
  tt.same([...d!.shape], [], 'perform agrees');
  tt.same(elementsOf(d!), [3]);
  tt.end();
});
