// The softmax family through the kernel contract: 'softmax', 'logSoftmax' and 'softmaxGrad' by
// lanes along the op's axis. Chunked runs equal one call bitwise on every axis of odd shapes and
// non-contiguous inputs; the values match a per-lane reference; outputShapes checks as perform.
import t from 'tap';
import type { Apply } from '../../src/graph/apply.js';
import type { Dtype } from '../../src/kernels/dtype.js';
import { contiguousStrides, type TensorView } from '../../src/kernels/view.js';
import { makeNdArray, type NdArray } from '../../src/tensor/core/ndarray.js';
import { LogSoftmax, Softmax, SoftmaxGrad } from '../../src/tensor/nnet/nnet.js';
import { pt, rng, run, throwsExactly, weft } from '../helpers.js';
import { checkChunks, elementsOf } from './chunked-runs.js';

function values(shape: readonly number[], dtype: Dtype, seed: number): NdArray {
  const r = rng(seed);
  return dtype === 'float32' || dtype === 'float64' ? r.normal(shape, { dtype, std: 3 }) : r.integers(shape, -5, 5, dtype);
}

/** Seeded values of `shape` stored with the axes reversed, at an offset. */
function reversed(shape: readonly number[], dtype: Dtype, seed: number): NdArray {
  const base = values([2, ...[...shape].reverse()], dtype, seed);
  return makeNdArray(base.data, shape, contiguousStrides([...shape].reverse()).reverse(), base.stride[0]!);
}

/** The lanes of a C-ordered array of `shape` along `axis`: lists of flat positions. */
function lanes(shape: readonly number[], axis: number): number[][] {
  const strides = contiguousStrides(shape);
  const n = shape[axis]!;
  const others = shape.map((d, a) => (a === axis ? 1 : d));
  let starts = [0];
  others.forEach((d, a) => {
    starts = starts.flatMap((s) => [...Array(d).keys()].map((i) => s + i * strides[a]!));
  });
  return starts.map((s) => [...Array(n).keys()].map((j) => s + j * strides[axis]!));
}

function refSoftmax(x: readonly number[], shape: readonly number[], axis: number, log: boolean): number[] {
  const out = new Array<number>(x.length);
  for (const lane of lanes(shape, axis)) {
    const m = Math.max(...lane.map((p) => x[p]!));
    const sum = lane.reduce((s, p) => s + Math.exp(x[p]! - m), 0);
    for (const p of lane) out[p] = log ? x[p]! - m - Math.log(sum) : Math.exp(x[p]! - m) / sum;
  }
  return out;
}

function refSoftmaxGrad(dy: readonly number[], sm: readonly number[], shape: readonly number[], axis: number): number[] {
  const out = new Array<number>(dy.length);
  for (const lane of lanes(shape, axis)) {
    const dot = lane.reduce((s, p) => s + dy[p]! * sm[p]!, 0);
    for (const p of lane) out[p] = (dy[p]! - dot) * sm[p]!;
  }
  return out;
}

function close(got: readonly number[], want: readonly number[], tol: number): string[] {
  return want.flatMap((w, i) => (Math.abs(got[i]! - w) <= tol * Math.max(1, Math.abs(w)) ? [] : [`[${i}] ${got[i]} vs ${w}`])).slice(0, 5);
}

const shapes: ReadonlyArray<readonly number[]> = [[7], [5, 9], [3, 4, 5], [2, 0, 3]];

t.test('softmax and logSoftmax: by lanes on every axis, bitwise in any split', async (t) => {
  for (const shape of shapes) {
    for (let axis = 0; axis < shape.length; axis++) {
      for (const [dtype, layout] of [['float64', 'plain'], ['float32', 'reversed'], ['int32', 'plain']] as const) {
        const x = pt.tensor({ shape: shape.map(() => null), dtype, name: 'x' });
        const xv = (layout === 'plain' ? values : reversed)(shape, dtype, 31 + axis);
        const want = (log: boolean): number[] => refSoftmax(elementsOf(xv), shape, axis, log);
        const tol = dtype === 'float32' ? 1e-6 : 1e-13;
        for (const [name, node, log] of [
          ['softmax', pt.softmax(x, axis).owner!, false],
          ['logSoftmax', pt.logSoftmax(x, axis).owner!, true],
        ] as Array<[string, Apply, boolean]>) {
          const label = `${name} of ${dtype} [${shape.join(', ')}] (${layout}) along axis ${axis}`;
          const r = checkChunks(t, node, [xv], label);
          t.same(r.call.chunking, { by: 'lanes', axis }, `${label}: by lanes along the axis`);
          t.same(close(elementsOf(r.outputs[0]!), want(log), tol), [], `${label}: values`);
          if (shape.length === 3 && axis === 1) {
            const out = await run([x], node.outputs[0] as weft.pt.TensorVariable, [xv]);
            t.same([...out.shape], r.shapes[0], `${label}: outputShapes agrees with the compiled function`);
          }
        }
      }
    }
  }
});

t.test('softmaxGrad: by lanes on every axis, bitwise in any split', async (t) => {
  for (const shape of shapes) {
    for (let axis = 0; axis < shape.length; axis++) {
      const g = pt.tensor({ shape: shape.map(() => null), name: 'g' });
      const s = pt.tensor({ shape: shape.map(() => null), dtype: 'float32', name: 's' });
      const node = new SoftmaxGrad(axis).call(g, s).owner!;
      const gv = reversed(shape, 'float64', 41);
      const sv = values(shape, 'float32', 42);
      const label = `softmaxGrad [${shape.join(', ')}] along axis ${axis}`;
      const r = checkChunks(t, node, [gv, sv], label);
      t.same(r.call.chunking, { by: 'lanes', axis }, `${label}: by lanes along the axis`);
      t.same(close(elementsOf(r.outputs[0]!), refSoftmaxGrad(elementsOf(gv), elementsOf(sv), shape, axis), 1e-13), [], `${label}: values`);
    }
  }
});

t.test('outputShapes checks as perform does', async (t) => {
  const layout = (shape: readonly number[]): TensorView => ({ data: new Float64Array(0), offset: 0, shape, stride: contiguousStrides(shape) });
  const x = pt.matrix('x');
  for (const op of [new Softmax(1), new LogSoftmax(0)]) {
    const node = op.makeNode(x);
    t.same(op.outputShapes(node, [layout([2, 3])]), [[2, 3]], `${op}: the input's shape`);
  }
  const g = pt.matrix('g');
  const s = pt.matrix('s');
  const node = new SoftmaxGrad(1).makeNode(g, s);
  t.same(node.op.outputShapes!(node, [layout([2, 3]), layout([2, 3])]), [[2, 3]], 'SoftmaxGrad: the shared shape');
  await throwsExactly(t, () => node.op.outputShapes!(node, [layout([2, 3]), layout([2, 4])]), weft.ShapeMismatchError,
    'SoftmaxGrad{axis=1}: the gradient has shape [2, 3] but the softmax has shape [2, 4]', 'SoftmaxGrad shapes');
});
