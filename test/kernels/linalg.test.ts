// The product kernels through the registry: 'matmul' (Dot and MatMul), 'tensordot' and 'gemm'.
// Chunked runs (by rows, lanes or elements, as each op declares) must equal one call bitwise, on
// odd sizes and non-contiguous inputs; the values match naive sums; outputShapes agrees with the
// compiled function's result shapes and throws perform's errors.
import t, { type Test } from 'tap';
import type { Apply } from '../../src/graph/apply.js';
import type { Dtype } from '../../src/kernels/dtype.js';
import { getKernel } from '../../src/kernels/registry.js';
import { contiguousStrides, type TensorView } from '../../src/kernels/view.js';
import { tensordot } from '../../src/tensor/linalg/linalg.js';
import { makeNdArray, type NdArray } from '../../src/tensor/core/ndarray.js';
import { pt, rng, run, throwsExactly, weft } from '../helpers.js';
import { checkChunks, elementsOf, evenRanges } from './chunked-runs.js';

/** Seeded values of a shape and dtype, contiguous. */
function values(shape: readonly number[], dtype: Dtype, seed: number): NdArray {
  const r = rng(seed);
  return dtype === 'float32' || dtype === 'float64' ? r.normal(shape, { dtype }) : r.integers(shape, -40, 40, dtype);
}

/** Seeded values of `shape` stored with the axes reversed (a transposed, non-contiguous view). */
function reversed(shape: readonly number[], dtype: Dtype, seed: number): NdArray {
  const base = values([...shape].reverse(), dtype, seed);
  return makeNdArray(base.data, shape, [...base.stride].reverse(), 0);
}

/** Seeded values of `shape` whose last axis steps by 2 inside a larger array, at an offset. */
function strided(shape: readonly number[], dtype: Dtype, seed: number): NdArray {
  const wide = [...shape];
  wide[wide.length - 1] = 2 * (wide[wide.length - 1] ?? 1);
  const base = values([1, ...wide], dtype, seed);
  const stride = contiguousStrides(wide).map((s, a) => (a === wide.length - 1 ? 2 * s : s));
  return makeNdArray(base.data, shape, stride, 1);
}

/** A view of a shape over no data: what outputShapes sees for inputs it does not read. */
function layout(shape: readonly number[]): TensorView {
  return { data: new Float64Array(0), offset: 0, shape, stride: contiguousStrides(shape) };
}

function at(v: TensorView, idx: readonly number[]): number {
  let p = v.offset;
  idx.forEach((i, a) => (p += i * v.stride[a]!));
  return v.data[p]!;
}

/** Every multi-index of `shape` in C order. */
function indices(shape: readonly number[]): number[][] {
  let out: number[][] = [[]];
  for (const d of shape) out = out.flatMap((p) => [...Array(d).keys()].map((i) => [...p, i]));
  return out;
}

/** NumPy's matmul by index arithmetic (float64 sums, in order over k). */
function refMatmul(x: TensorView, y: TensorView, outShape: readonly number[]): number[] {
  const xs = x.shape.length === 1 ? [1, x.shape[0]!] : [...x.shape];
  const ys = y.shape.length === 1 ? [y.shape[0]!, 1] : [...y.shape];
  const k = xs[xs.length - 1]!;
  const nb = Math.max(xs.length, ys.length) - 2;
  const promoted = [...outShape];
  if (x.shape.length === 1) promoted.splice(y.shape.length === 1 ? promoted.length : promoted.length - 1, 0, 1);
  if (y.shape.length === 1) promoted.push(1);
  const pick = (shape: readonly number[], batch: readonly number[]): number[] =>
    shape.slice(0, shape.length - 2).map((d, a) => (d === 1 ? 0 : batch[a + nb - (shape.length - 2)]!));
  return indices(promoted).map((idx) => {
    const batch = idx.slice(0, nb);
    const [i, j] = idx.slice(nb);
    let s = 0;
    for (let p = 0; p < k; p++) {
      const xi = x.shape.length === 1 ? [p] : [...pick(xs, batch), i!, p];
      const yi = y.shape.length === 1 ? [p] : [...pick(ys, batch), p, j!];
      s += at(x, xi) * at(y, yi);
    }
    return s;
  });
}

/** NumPy's tensordot by index arithmetic. */
function refTensordot(a: TensorView, b: TensorView, axesA: readonly number[], axesB: readonly number[]): number[] {
  const freeA = a.shape.map((_, i) => i).filter((i) => !axesA.includes(i));
  const freeB = b.shape.map((_, i) => i).filter((i) => !axesB.includes(i));
  const summed = indices(axesA.map((ax) => a.shape[ax]!));
  return indices([...freeA.map((ax) => a.shape[ax]!), ...freeB.map((ax) => b.shape[ax]!)]).map((idx) => {
    let s = 0;
    for (const q of summed) {
      const ia = new Array<number>(a.shape.length);
      const ib = new Array<number>(b.shape.length);
      freeA.forEach((ax, n) => (ia[ax] = idx[n]!));
      freeB.forEach((ax, n) => (ib[ax] = idx[freeA.length + n]!));
      axesA.forEach((ax, n) => (ia[ax] = q[n]!));
      axesB.forEach((ax, n) => (ib[ax] = q[n]!));
      s += at(a, ia) * at(b, ib);
    }
    return s;
  });
}

/** The computed values against the reference: exact for integers (wrapped), relative tolerance for floats. */
function matches(got: NdArray, want: readonly number[], dtype: Dtype): string[] {
  const g = elementsOf(got);
  const tol = dtype === 'float32' ? 1e-5 : 1e-12;
  return want
    .flatMap((w, i) => {
      const ok = dtype === 'float32' || dtype === 'float64' ? Math.abs(g[i]! - w) <= tol * Math.max(1, Math.abs(w)) : g[i] === (w | 0);
      return ok ? [] : [`[${i}] ${g[i]} vs ${w}`];
    })
    .slice(0, 5);
}

interface Case {
  readonly label: string;
  readonly node: Apply;
  readonly inputs: readonly NdArray[];
  readonly chunking: string;
  readonly want: (ins: readonly NdArray[], shape: readonly number[]) => number[];
}

/** Runs a case: chunks against one call, values against the reference, shapes against a compiled run. */
async function check(tt: Test, c: Case): Promise<void> {
  const r = checkChunks(tt, c.node, c.inputs, c.label);
  const dtype = (c.node.outputs[0]!.type as weft.pt.TensorType).dtype;
  tt.equal(r.call.chunking.by, c.chunking, `${c.label}: chunked by ${c.chunking}`);
  tt.same(matches(r.outputs[0]!, c.want(c.inputs, r.shapes[0]!), dtype), [], `${c.label}: values`);
  const ins = c.node.inputs as weft.pt.TensorVariable[];
  const out = await run(ins, c.node.outputs[0] as weft.pt.TensorVariable, c.inputs);
  tt.same([...out.shape], r.shapes[0], `${c.label}: outputShapes agrees with the compiled function`);
}

const matmulWant = (ins: readonly NdArray[], shape: readonly number[]): number[] => refMatmul(ins[0]!, ins[1]!, shape);

t.test('Dot: by rows where x is a matrix, whole otherwise', async (t) => {
  const cases: Array<[string, readonly number[], readonly number[], Dtype, 'plain' | 'reversed' | 'strided', string]> = [
    ['matrix . matrix', [13, 9], [9, 11], 'float64', 'plain', 'rows'],
    ['matrix . matrix, float32', [13, 9], [9, 11], 'float32', 'plain', 'rows'],
    ['matrix . matrix, transposed', [13, 9], [9, 6], 'float64', 'reversed', 'rows'],
    ['matrix . matrix, strided', [7, 5], [5, 9], 'float32', 'strided', 'rows'],
    ['matrix . matrix, int32', [11, 6], [6, 5], 'int32', 'plain', 'rows'],
    ['matrix . matrix, one row', [1, 5], [5, 7], 'float64', 'plain', 'rows'],
    ['matrix . matrix, one column', [9, 5], [5, 1], 'float64', 'reversed', 'rows'],
    ['matrix . matrix, float32 depth beyond one pass', [6, 1100], [1100, 5], 'float32', 'plain', 'rows'],
    ['matrix . matrix, empty depth', [5, 0], [0, 3], 'float64', 'plain', 'rows'],
    ['matrix . matrix, no rows', [0, 4], [4, 3], 'float64', 'plain', 'rows'],
    ['matrix . vector', [13, 9], [9], 'float64', 'plain', 'rows'],
    ['matrix . vector, transposed', [13, 9], [9], 'float64', 'reversed', 'rows'],
    ['matrix . vector, int16', [10, 4], [4], 'int16', 'strided', 'rows'],
    ['vector . matrix', [9], [9, 7], 'float64', 'reversed', 'none'],
    ['vector . vector', [9], [9], 'float32', 'strided', 'none'],
  ];
  for (const [label, xs, ys, dtype, kind, chunking] of cases) {
    const make = kind === 'plain' ? values : kind === 'reversed' ? reversed : strided;
    const x = pt.tensor({ shape: xs.map(() => null), dtype, name: 'x' });
    const y = pt.tensor({ shape: ys.map(() => null), dtype, name: 'y' });
    const node = pt.dot(x, y).owner!;
    t.equal(node.op.constructor.name, 'Dot', `${label}: a Dot node`);
    await check(t, { label, node, inputs: [make(xs, dtype, 1), make(ys, dtype, 2)], chunking, want: matmulWant });
  }
});

t.test('MatMul: by rows of the output seen as [batch * m, n]', async (t) => {
  const cases: Array<[string, (number | null)[], (number | null)[], readonly number[], readonly number[], Dtype, boolean]> = [
    ['batched', [null, null, null], [null, null, null], [3, 5, 4], [3, 4, 6], 'float64', false],
    ['batched, transposed', [null, null, null], [null, null, null], [3, 5, 4], [3, 4, 6], 'float64', true],
    ['x broadcast on a static 1', [1, null, null], [null, null, null], [1, 5, 4], [3, 4, 6], 'float32', false],
    ['y without batch axes', [null, null, null, null], [null, null], [2, 3, 5, 4], [4, 7], 'float64', true],
    ['y broadcast, one column', [null, null, null], [1, null, null], [4, 7, 3], [1, 3, 1], 'float64', false],
    ['int32', [null, null, null], [null, null, null], [2, 7, 3], [2, 3, 5], 'int32', false],
    ['an empty batch', [null, null, null], [null, null, null], [0, 3, 2], [0, 2, 4], 'float64', false],
  ];
  for (const [label, xt, yt, xs, ys, dtype, transposed] of cases) {
    const make = transposed ? reversed : values;
    const x = pt.tensor({ shape: xt, dtype, name: 'x' });
    const y = pt.tensor({ shape: yt, dtype, name: 'y' });
    const node = pt.matmul(x, y).owner!;
    t.equal(node.op.constructor.name, 'MatMul', `${label}: a MatMul node`);
    await check(t, { label, node, inputs: [make(xs, dtype, 3), make(ys, dtype, 4)], chunking: 'lanes', want: matmulWant });
  }
});

t.test('TensorDot: by rows of the free axes of a', async (t) => {
  const cases: Array<[string, readonly number[], readonly number[], [number[], number[]], string, boolean]> = [
    ['b has one free axis', [4, 3, 5], [5, 6], [[2], [0]], 'lanes', false],
    ['a summed over a middle axis (copied rows)', [4, 3, 5], [3, 6], [[1], [0]], 'lanes', false],
    ['b has two free axes', [5, 2, 3], [3, 4, 2], [[2], [0]], 'rows', false],
    ['b has two free axes, transposed operands', [5, 2, 3], [3, 4, 2], [[2], [0]], 'rows', true],
    ['b has no free axis', [4, 3, 5], [5, 3], [[1, 2], [1, 0]], 'elements', false],
    ['a has no free axis', [3, 5], [5, 3, 2], [[0, 1], [1, 0]], 'none', true],
    ['two summed pairs, copied a and b', [3, 4, 2, 5], [5, 6, 4], [[1, 3], [2, 0]], 'lanes', true],
    ['two summed pairs, b has two free axes', [3, 4, 2, 5], [5, 6, 4, 3], [[1, 3], [2, 0]], 'rows', false],
  ];
  for (const [label, as, bs, axes, chunking, transposed] of cases) {
    const make = transposed ? reversed : values;
    const a = pt.tensor({ shape: as.map(() => null), name: 'a' });
    const b = pt.tensor({ shape: bs.map(() => null), name: 'b' });
    const node = tensordot(a, b, axes).owner!;
    t.equal(node.op.constructor.name, 'TensorDot', `${label}: a TensorDot node`);
    const want = (ins: readonly NdArray[]): number[] => refTensordot(ins[0]!, ins[1]!, axes[0], axes[1]);
    await check(t, { label, node, inputs: [make(as, 'float64', 5), make(bs, 'float64', 6)], chunking, want });
  }
});

t.test("the 'gemm' kernel: beta * z + alpha * x . y by rows, bitwise in any split", (t) => {
  const kernel = getKernel('gemm');
  for (const [label, dtype, m, k, n, beta] of [
    ['float64', 'float64', 13, 7, 9, 0.5],
    ['float32, beta 0', 'float32', 10, 5, 6, 0],
    ['float32, depth beyond one pass', 'float32', 6, 1100, 5, -1],
  ] as const) {
    const z = reversed([m, n], dtype, 7);
    const x = values([m, k], dtype, 8);
    const y = reversed([k, n], dtype, 9);
    const scalar = (v: number): NdArray => makeNdArray(Float64Array.of(v), []);
    const ins = [z, scalar(2), x, y, scalar(beta)];
    const outOf = (): NdArray => makeNdArray(new (dtype === 'float32' ? Float32Array : Float64Array)(m * n), [m, n]);
    const whole = outOf();
    kernel(ins, [whole], {});
    const xy = refMatmul(x, y, [m, n]);
    const zs = elementsOf(z);
    t.same(matches(whole, xy.map((v, i) => 2 * v + beta * zs[i]!), dtype), [], `${label}: values`);
    for (const chunks of [2, 3, 7, m]) {
      const out = outOf();
      for (const r of evenRanges(m, chunks).reverse()) kernel(ins, [out], {}, r);
      t.same(Array.from(out.data), Array.from(whole.data), `${label}: ${chunks} chunks equal one call`);
    }
  }
  t.end();
});

t.test('outputShapes throws what perform throws', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const v = pt.vector('v');
  const dot = pt.dot(x, y).owner!;
  t.same(dot.op.outputShapes!(dot, [layout([2, 3]), layout([3, 5])]), [[2, 5]], 'Dot: matrix . matrix');
  const dotv = pt.dot(v, y).owner!;
  t.same(dotv.op.outputShapes!(dotv, [layout([3]), layout([3, 5])]), [[5]], 'Dot: vector . matrix');
  await throwsExactly(t, () => dot.op.outputShapes!(dot, [layout([2, 3]), layout([4, 5])]), weft.ShapeMismatchError,
    'Dot: shapes [2, 3] and [4, 5] are not aligned: axis 1 of input 0 has length 3, axis 0 of input 1 has length 4', 'Dot');
  const p = pt.tensor3('p');
  const q = pt.tensor3('q');
  const mm = pt.matmul(p, q).owner!;
  t.same(mm.op.outputShapes!(mm, [layout([2, 3, 4]), layout([2, 4, 5])]), [[2, 3, 5]], 'MatMul');
  const b1 = pt.tensor({ shape: [1, null, null], name: 'b1' });
  const mmb = pt.matmul(b1, pt.matrix('m')).owner!;
  t.same(mmb.op.outputShapes!(mmb, [layout([1, 3, 4]), layout([4, 2])]), [[1, 3, 2]], 'MatMul: missing and static-1 batch axes');
  await throwsExactly(t, () => mm.op.outputShapes!(mm, [layout([2, 3, 4]), layout([1, 4, 5])]), weft.ShapeMismatchError,
    'MatMul: the batch shapes of [2, 3, 4] and [1, 4, 5] cannot be broadcast together: lengths 2 and 1 on batch axis 0 ' +
      '(input 1 has length 1 there, but its type does not mark the axis broadcastable)', 'MatMul batch');
  await throwsExactly(t, () => mm.op.outputShapes!(mm, [layout([2, 3, 4]), layout([2, 3, 5])]), weft.ShapeMismatchError,
    'MatMul: shapes [2, 3, 4] and [2, 3, 5] are not aligned: axis 2 of input 0 has length 4, axis 1 of input 1 has length 3', 'MatMul k');
  const td = pt.dot(p, q).owner!;
  t.same(td.op.outputShapes!(td, [layout([2, 3, 4]), layout([5, 4, 6])]), [[2, 3, 5, 6]], 'TensorDot');
  await throwsExactly(t, () => td.op.outputShapes!(td, [layout([2, 3, 4]), layout([2, 3, 5])]), weft.ShapeMismatchError,
    'TensorDot{axes=[[2],[1]]}: shapes [2, 3, 4] and [2, 3, 5] are not aligned: axis 2 of input 0 has length 4, axis 1 of input 1 has length 3',
    'TensorDot');
});

t.test("the test's reference product on known numbers", (t) => {
  const a = makeNdArray(Float64Array.of(1, 2, 3, 4), [2, 2]);
  const b = makeNdArray(Float64Array.of(5, 6, 7, 8), [2, 2]);
  t.same(refMatmul(a, b, [2, 2]), [19, 22, 43, 50], 'matmul');
  t.same(refTensordot(a, b, [0], [1]), [23, 31, 34, 46], 'tensordot over axis 0 of a and axis 1 of b');
  t.end();
});
