// The 'reduce' and 'argreduce' kernels through the registry: chunked by output elements, every
// split gives the bits of one call (each output element is reduced whole inside one chunk), on
// contiguous, transposed, reversed and offset inputs of odd sizes; outputShapes agrees with
// perform and throws its errors.
import t, { type Test } from 'tap';
import type { Apply } from '../../src/graph/apply.js';
import type { Dtype } from '../../src/kernels/dtype.js';
import type { TensorView } from '../../src/kernels/view.js';
import type { NdArray } from '../../src/tensor/core/ndarray.js';
import { pt, rng, throwsExactly } from '../helpers.js';
import { checkChunks, sameElements } from './chunked-runs.js';

type Kind = 'sum' | 'prod' | 'max' | 'min' | 'all' | 'any' | 'argmax' | 'argmin';

/** The node of `kind` over `axis` for an input of `ndim` axes and `dtype`. */
function nodeOf(kind: Kind, ndim: number, axis: number[] | null, dtype: Dtype = 'float64'): Apply {
  const x = pt.tensor({ shape: Array<null>(ndim).fill(null), dtype });
  const options = { axis };
  const y = {
    sum: pt.sum, prod: pt.prod, max: pt.max, min: pt.min, all: pt.all, any: pt.any, argmax: pt.argmax, argmin: pt.argmin,
  }[kind](x, options);
  return y.owner!;
}

/** Runs the chunk checks, then checks that perform gives outputShapes' shapes and the same elements. */
function check(tt: Test, node: Apply, x: TensorView, label: string): void {
  const run = checkChunks(tt, node, [x], label);
  const [out] = node.op.perform(node, [x as NdArray]) as NdArray[];
  tt.same(run.shapes, [[...out!.shape]], `${label}: outputShapes is perform's shape`);
  sameElements(tt, run.outputs[0]!, out!, `${label}: perform`);
}

const KINDS: readonly Kind[] = ['sum', 'prod', 'max', 'min', 'argmax', 'argmin'];
const AXES: ReadonlyArray<number[] | null> = [[1], [0], [2], [0, 2], [1, 2], [0, 1], null, []];

t.test('every kind over every set of axes of a 7x5x3 input, chunked', (tt) => {
  const x = rng(1).normal([7, 5, 3], { dtype: 'float64' });
  for (const kind of KINDS) {
    for (const axis of AXES) {
      if (axis?.length === 0 && kind.startsWith('arg')) continue;
      check(tt, nodeOf(kind, 3, axis), x, `${kind} axis ${JSON.stringify(axis)}`);
    }
  }
  tt.end();
});

t.test('non-contiguous inputs: transposed, reversed, offset slices', (tt) => {
  const base = rng(2).normal([9, 6, 5], { dtype: 'float64' });
  const inputs: Array<[string, NdArray]> = [
    ['transposed', base.transpose(2, 0, 1)],
    ['reversed axis', base.step(1, -1, 1)],
    ['offset slice', base.lo(1, 1, 2).hi(7, 4, 3)],
    ['strided', base.step(2, 1, -2)],
  ];
  for (const [name, x] of inputs) {
    for (const kind of KINDS) {
      for (const axis of [[0], [1], [2], [0, 2], null]) check(tt, nodeOf(kind, 3, axis), x, `${kind} axis ${JSON.stringify(axis)} of a ${name} input`);
    }
  }
  tt.end();
});

t.test('longer axes: the four-rows-at-a-time paths and swapped short inner axes', (tt) => {
  const r = rng(3);
  const a = r.normal([41, 33], { dtype: 'float64' });
  const b = r.normal([37, 3], { dtype: 'float64' });
  const c = r.normal([3, 4, 5, 6], { dtype: 'float64' });
  for (const kind of KINDS) {
    check(tt, nodeOf(kind, 2, [0]), a, `${kind} axis 0 of 41x33`);
    check(tt, nodeOf(kind, 2, [1]), a, `${kind} axis 1 of 41x33`);
    check(tt, nodeOf(kind, 2, [0]), a.transpose(1, 0), `${kind} axis 0 of a transposed 41x33`);
    check(tt, nodeOf(kind, 2, [0]), b, `${kind} axis 0 of 37x3`);
    check(tt, nodeOf(kind, 2, [1]), b.transpose(1, 0), `${kind} axis 1 of a transposed 37x3`);
    check(tt, nodeOf(kind, 4, [1, 3]), c, `${kind} axes [1, 3] of 3x4x5x6`);
    check(tt, nodeOf(kind, 4, [0, 2]), c.transpose(3, 1, 0, 2), `${kind} axes [0, 2] of a permuted 3x4x5x6`);
  }
  tt.end();
});

t.test('dtypes: float32 and int32 sums, bool all/any, NaNs and ties', (tt) => {
  const r = rng(4);
  check(tt, nodeOf('sum', 2, [1], 'float32'), r.normal([11, 13], { dtype: 'float32' }), 'float32 sum');
  check(tt, nodeOf('prod', 2, [0], 'float32'), r.uniform([11, 13], { low: 0.5, high: 1.5, dtype: 'float32' }), 'float32 prod');
  const ints = r.integers([8, 9], -50, 50, 'int32');
  check(tt, nodeOf('sum', 2, [0], 'int32'), ints, 'int32 sum');
  check(tt, nodeOf('max', 2, [1], 'int32'), ints, 'int32 max');
  check(tt, nodeOf('argmin', 2, [0], 'int32'), ints, 'int32 argmin');
  const bools = r.integers([6, 7], 0, 2, 'bool');
  bools.data.fill(1, 0, 7);
  check(tt, nodeOf('all', 2, [1], 'bool'), bools, 'bool all');
  check(tt, nodeOf('any', 2, [0], 'bool'), bools, 'bool any');
  const special = r.integers([7, 6], 0, 3, 'float64');
  special.data[3] = NaN;
  special.data[20] = NaN;
  special.data[21] = -0;
  for (const kind of KINDS) {
    check(tt, nodeOf(kind, 2, [1]), special, `${kind} with NaNs, -0 and ties`);
    check(tt, nodeOf(kind, 2, [0]), special, `${kind} with NaNs, -0 and ties, axis 0`);
  }
  tt.end();
});

t.test('empty outputs and empty reduced axes', (tt) => {
  const r = rng(5);
  check(tt, nodeOf('sum', 2, [1]), r.normal([4, 0], { dtype: 'float64' }), 'sum over an empty axis');
  check(tt, nodeOf('prod', 2, [1]), r.normal([4, 0], { dtype: 'float64' }), 'prod over an empty axis');
  check(tt, nodeOf('max', 2, [1]), r.normal([0, 3], { dtype: 'float64' }), 'max into an empty output');
  check(tt, nodeOf('sum', 1, [0]), r.normal([1], { dtype: 'float64' }), 'sum of one element');
  check(tt, nodeOf('argmax', 0, []), r.normal([], { dtype: 'float64' }), 'argmax of a 0-d input over no axes');
  tt.end();
});

t.test('outputShapes throws the errors of perform', async (tt) => {
  const empty = rng(6).normal([3, 0, 2], { dtype: 'float64' });
  const cases: Array<[Kind, number[], string]> = [
    ['max', [1], 'Max{axis=[1]}: axis 1 has length 0, and the maximum of no elements is undefined'],
    ['min', [0, 1], 'Min{axis=[0,1]}: axis 1 has length 0, and the minimum of no elements is undefined'],
    ['argmax', [1, 2], 'Argmax{axis=[1,2]}: axis 1 has length 0, so there is no position to return'],
    ['argmin', [1], 'Argmin{axis=[1]}: axis 1 has length 0, so there is no position to return'],
  ];
  for (const [kind, axis, message] of cases) {
    const node = nodeOf(kind, 3, axis);
    await throwsExactly(tt, () => node.op.outputShapes!(node, [empty]), RangeError, message, `${kind} outputShapes`);
    await throwsExactly(tt, () => node.op.perform(node, [empty]), RangeError, message, `${kind} perform`);
  }
  const sumNode = nodeOf('sum', 3, [1]);
  tt.same(sumNode.op.outputShapes!(sumNode, [empty]), [[3, 2]], 'sum over an empty axis has a shape');
});

t.test('kernel calls are plain data chunked by output elements', (tt) => {
  const node = nodeOf('sum', 3, [0, 2]);
  tt.same(node.op.kernel!(node), {
    name: 'reduce',
    params: { kind: 'sum', axes: [0, 2] },
    chunking: { by: 'elements' },
    partials: { axes: [0, 2], combine: { name: 'reduce', params: { kind: 'sum', axes: [0] } } },
  });
  const arg = nodeOf('argmin', 2, [1]);
  tt.same(arg.op.kernel!(arg), { name: 'argreduce', params: { kind: 'min', axes: [1] }, chunking: { by: 'elements' } });
  tt.same(JSON.parse(JSON.stringify(node.op.kernel!(node))), node.op.kernel!(node), 'survives JSON');
  tt.end();
});
