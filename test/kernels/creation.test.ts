// ARange ('arange', by elements) and Eye ('eye', by rows) under the kernel contract: their
// scalar arguments are small inputs read as arrays; chunked runs equal one call bitwise (Eye
// writes its zeros too, since a plan's memory is not zero-filled), and outputShapes computes
// the length or shape with perform's checks.
import t, { type Test } from 'tap';
import type { Apply } from '../../src/graph/apply.js';
import { STORAGE, type Dtype } from '../../src/kernels/dtype.js';
import { makeNdArray, type NdArray } from '../../src/tensor/core/ndarray.js';
import { pt, throwsExactly } from '../helpers.js';
import { checkChunks, elementsOf, sameElements } from './chunked-runs.js';

function scalarOf(v: number, dtype: Dtype): NdArray {
  const data = new STORAGE[dtype](1);
  data[0] = v;
  return makeNdArray(data, []);
}

function checkKernel(tt: Test, node: Apply, inputs: readonly NdArray[], label: string): NdArray {
  const run = checkChunks(tt, node, inputs, label);
  const [out] = node.op.perform(node, inputs) as NdArray[];
  tt.same(run.shapes, [[...out!.shape]], `${label}: outputShapes is perform's shape`);
  sameElements(tt, run.outputs[0]!, out!, `${label}: perform`);
  return run.outputs[0]!;
}

t.test('arange by elements', (tt) => {
  const cases: Array<[Dtype, Dtype, number, number, number, number[]]> = [
    ['float64', 'float64', 0.5, 7.3, 0.7, [0.5, 1.2, 1.9, 2.5999999999999996, 3.3, 4, 4.699999999999999, 5.3999999999999995, 6.1, 6.8]],
    ['float32', 'float32', -1, 2, 0.25, [...Array(12).keys()].map((i) => Math.fround(-1 + 0.25 * i))],
    ['int32', 'int32', 10, -3, -2, [10, 8, 6, 4, 2, 0, -2]],
    ['int32', 'int8', 3, 3, 1, []],
    ['float64', 'float64', 5, 0, 1, []],
  ];
  for (const [argDtype, dtype, start, stop, step, expected] of cases) {
    const a = pt.scalar('a', argDtype);
    const b = pt.scalar('b', argDtype);
    const c = pt.scalar('c', argDtype);
    const node = pt.arange(a, b, c, dtype).owner!;
    const label = `arange(${start}, ${stop}, ${step}) as ${dtype}`;
    const out = checkKernel(tt, node, [scalarOf(start, argDtype), scalarOf(stop, argDtype), scalarOf(step, argDtype)], label);
    tt.same(elementsOf(out), expected, `${label}: values`);
  }
  const node = pt.arange(pt.scalar('n', 'int32')).owner!;
  tt.same(node.op.kernel!(node), { name: 'arange', params: {}, chunking: { by: 'elements' } });
  tt.end();
});

t.test('ARange.outputShapes reads its arguments and throws the errors of perform', async (tt) => {
  const [a, b, c] = ['a', 'b', 'c'].map((n) => pt.scalar(n, 'float64'));
  const node = pt.arange(a!, b!, c!).owner!;
  const f = (v: number): NdArray => scalarOf(v, 'float64');
  tt.same(node.op.outputShapes!(node, [f(1), f(10), f(4)]), [[3]], 'ceil((10 - 1) / 4)');
  tt.same(node.op.outputShapes!(node, [f(1), f(-10), f(4)]), [[0]], 'never negative');
  const errors: Array<[number, number, number, string]> = [
    [0, 5, 0, 'ARange{dtype=float64}: step must not be 0'],
    [0, Infinity, 1, 'ARange{dtype=float64}: the range from 0 to Infinity with step 1 has no finite length'],
    [NaN, 3, 1, 'ARange{dtype=float64}: the range from NaN to 3 with step 1 has no finite length'],
  ];
  for (const [start, stop, step, message] of errors) {
    const ins = [f(start), f(stop), f(step)];
    await throwsExactly(tt, () => node.op.outputShapes!(node, ins), RangeError, message, `${start}, ${stop}, ${step}: outputShapes`);
    await throwsExactly(tt, () => node.op.perform(node, ins), RangeError, message, `${start}, ${stop}, ${step}: perform`);
  }
});

/** The n x m matrix with ones at (i, i + k), built with plain loops. */
function eyeValues(n: number, m: number, k: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) out.push(j - i === k ? 1 : 0);
  return out;
}

t.test('eye by rows, writing every zero', (tt) => {
  const n = pt.scalar('n', 'int32');
  const m = pt.scalar('m', 'int32');
  const k = pt.scalar('k', 'int32');
  const cases: Array<[Dtype, number, number, number]> = [
    ['float64', 7, 7, 0],
    ['float32', 5, 9, 2],
    ['int16', 9, 4, -3],
    ['bool', 6, 6, -1],
    ['uint8', 4, 5, 7],
    ['float64', 0, 3, 0],
    ['float64', 3, 0, 0],
  ];
  for (const [dtype, rows, cols, diag] of cases) {
    const node = pt.eye(n, m, k, dtype).owner!;
    const label = `eye(${rows}, ${cols}, ${diag}) as ${dtype}`;
    const out = checkKernel(tt, node, [scalarOf(rows, 'int32'), scalarOf(cols, 'int32'), scalarOf(diag, 'int32')], label);
    tt.same(elementsOf(out), eyeValues(rows, cols, diag), `${label}: values`);
  }
  const node = pt.eye(n, m, k).owner!;
  tt.same(node.op.kernel!(node), { name: 'eye', params: {}, chunking: { by: 'rows' } });
  tt.end();
});

t.test('Eye.outputShapes reads n and m and throws the errors of perform', async (tt) => {
  const n = pt.scalar('n', 'int32');
  const m = pt.scalar('m', 'int32');
  const node = pt.eye(n, m, 0, 'float64').owner!;
  const i = (v: number): NdArray => scalarOf(v, 'int32');
  tt.same(node.op.outputShapes!(node, [i(3), i(5), i(1)]), [[3, 5]]);
  const errors: Array<[number, number, string]> = [
    [-1, 5, 'Eye{dtype=float64}: n must be non-negative, got -1'],
    [2, -4, 'Eye{dtype=float64}: m must be non-negative, got -4'],
  ];
  for (const [rows, cols, message] of errors) {
    const ins = [i(rows), i(cols), i(0)];
    await throwsExactly(tt, () => node.op.outputShapes!(node, ins), RangeError, message, `${rows} x ${cols}: outputShapes`);
    await throwsExactly(tt, () => node.op.perform(node, ins), RangeError, message, `${rows} x ${cols}: perform`);
  }
});
