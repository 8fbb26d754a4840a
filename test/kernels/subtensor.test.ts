// Indexing through the kernel contract: Subtensor's `view` (offset arithmetic, relative to the
// input's own offset, with perform's errors) and the 'incSubtensor' kernel by rows of the output:
// chunked runs equal one call bitwise whatever the index (ints, positive and negative steps, new
// axes, empty slices), the values match a loop-based reference, and outputShapes checks as
// perform does.
import t from 'tap';
import type { Apply } from '../../src/graph/apply.js';
import { isConstant, type Constant } from '../../src/graph/variable.js';
import type { Dtype } from '../../src/kernels/dtype.js';
import { contiguousStrides, type TensorView } from '../../src/kernels/view.js';
import { makeNdArray, type NdArray } from '../../src/tensor/core/ndarray.js';
import type { IndexEntry } from '../../src/tensor/core/variable.js';
import { pt, rng, run, throwsExactly, weft } from '../helpers.js';
import { checkChunks, elementsOf, sameElements } from './chunked-runs.js';

const { slice } = weft;

/** An index entry as the tests write it: an integer, [start, stop, step] (nulls for defaults) or null (a new axis). */
type Entry = number | readonly [number | null, number | null, number | null] | null;

function weftIndex(index: readonly Entry[]): IndexEntry[] {
  return index.map((e) => (e === null || typeof e === 'number' ? e : slice(e[0], e[1], e[2])));
}

/** The indices Python's a[start:stop:step] visits, walked one at a time. */
function pyIndices(len: number, start: number | null, stop: number | null, step: number | null): number[] {
  const k = step ?? 1;
  const norm = (b: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, b < 0 ? b + len : b));
  const out: number[] = [];
  if (k > 0) {
    const s = start === null ? 0 : norm(start, 0, len);
    const e = stop === null ? len : norm(stop, 0, len);
    for (let i = s; i < e; i += k) out.push(i);
  } else {
    const s = start === null ? len - 1 : norm(start, -1, len - 1);
    const e = stop === null ? -1 : norm(stop, -1, len - 1);
    for (let i = s; i > e; i += k) out.push(i);
  }
  return out;
}

function flatIndex(shape: readonly number[], idx: readonly number[]): number {
  return idx.reduce((f, i, a) => f * shape[a]! + i, 0);
}

/**
 * x with x[index] set to (or increased by) y, by walking the region element by element; sums are
 * rounded to float32 when `float32`, and are logical ors when `asBool`.
 */
function refInc(x: TensorView, y: TensorView, index: readonly Entry[], set: boolean, asBool: boolean, float32 = false): number[] {
  const out = elementsOf(x);
  // per region axis: the x axis it walks (-1 for a new axis) and the x indices it visits
  const axes: Array<{ axis: number; at: number[] }> = [];
  const fixed = new Map<number, number>();
  let axis = 0;
  for (const e of index) {
    if (e === null) axes.push({ axis: -1, at: [0] });
    else if (typeof e === 'number') fixed.set(axis++, e < 0 ? e + x.shape[axis - 1]! : e);
    else {
      axes.push({ axis, at: pyIndices(x.shape[axis]!, e[0], e[1], e[2]) });
      axis++;
    }
  }
  for (; axis < x.shape.length; axis++) axes.push({ axis, at: [...Array(x.shape[axis]!).keys()] });
  const region = axes.map((a) => a.at.length);
  const lead = region.length - y.shape.length;
  const yValues = elementsOf(y);
  let walk: number[][] = [[]];
  for (const d of region) walk = walk.flatMap((p) => [...Array(d).keys()].map((i) => [...p, i]));
  for (const r of walk) {
    const xi = new Array<number>(x.shape.length);
    fixed.forEach((v, a) => (xi[a] = v));
    axes.forEach((a, k) => {
      if (a.axis >= 0) xi[a.axis] = a.at[r[k]!]!;
    });
    const yi = y.shape.map((d, a) => (d === 1 ? 0 : r[a + lead]!));
    const f = flatIndex(x.shape, xi);
    const v = yValues[flatIndex(y.shape, yi)]!;
    out[f] = set ? v : asBool ? Number(out[f]! !== 0 || v !== 0) : float32 ? Math.fround(out[f]! + v) : out[f]! + v;
  }
  return out;
}

function values(shape: readonly number[], dtype: Dtype, seed: number): NdArray {
  const r = rng(seed);
  if (dtype === 'float32' || dtype === 'float64') return r.normal(shape, { dtype });
  return dtype === 'bool' ? r.integers(shape, 0, 2, 'bool') : r.integers(shape, -40, 40, dtype);
}

/** Seeded values of `shape` stored with the axes reversed, at an offset. */
function reversed(shape: readonly number[], dtype: Dtype, seed: number): NdArray {
  const base = values([2, ...[...shape].reverse()], dtype, seed);
  const stride = contiguousStrides([...shape].reverse()).reverse();
  return makeNdArray(base.data, shape, stride, base.stride[0]!);
}

/** The node's inputs: x, y, and each index value (the constant's data, or the given scalar). */
function nodeInputs(node: Apply, x: NdArray, y: NdArray, free: readonly number[] = []): NdArray[] {
  let k = 0;
  return [x, y, ...node.inputs.slice(2).map((v) => (isConstant(v) ? (v as Constant<weft.pt.TensorType, NdArray>).data : makeNdArray(Int32Array.of(free[k++]!), [])))];
}

t.test('incSubtensor: by rows, bitwise in any split, against a loop-based reference', async (t) => {
  const cases: Array<[string, readonly number[], readonly Entry[], (number | null)[], readonly number[], Dtype, Dtype, boolean, boolean]> = [
    // label, x shape, index, y static shape, y shape, x dtype, y dtype, set, transposed operands
    ['x[1:] = y', [5, 4], [[1, null, null]], [null, null], [4, 4], 'float64', 'float64', true, false],
    ['x[::-2] += y (a static-1 row)', [7, 3], [[null, null, -2]], [1, null], [1, 3], 'float64', 'float64', false, true],
    ['x[-3:0:-3] += y', [11, 3], [[-3, 0, -3]], [null, null], [3, 3], 'float32', 'float32', false, false],
    ['x[2] = y', [6, 5], [2], [null], [5], 'float64', 'float64', true, true],
    ['x[-1, 1:4] += y', [6, 5], [-1, [1, 4, null]], [null], [3], 'float64', 'float64', false, false],
    ['x[None, 1:6:2] += y', [9, 2], [null, [1, 6, 2]], [1, null, null], [1, 3, 2], 'float64', 'float64', false, false],
    ['x[:, ::3] = y (axis 0 whole)', [7, 8], [[null, null, null], [null, null, 3]], [null, null], [7, 3], 'float64', 'float64', true, true],
    ['x[] += y (the whole tensor)', [5, 2, 3], [], [null, null], [2, 3], 'float64', 'float64', false, true],
    ['x[4:1] += y (empty)', [6, 2], [[4, 1, null]], [1], [1], 'float64', 'float64', false, false],
    ['x[1::2, 1] += y, int32 from int8', [9, 4], [[1, null, 2], 1], [null], [4], 'int32', 'int8', false, true],
    ['x[2:] += y, bool (logical or)', [5, 3], [[2, null, null]], [null, null], [3, 3], 'bool', 'bool', false, false],
    ['x[:, 1] = y, a vector row per row', [8, 3, 2], [[null, null, null], 1], [null, null], [8, 2], 'float32', 'float32', true, true],
  ];
  for (const [label, xs, index, yStatic, ys, xd, yd, set, transposed] of cases) {
    const make = transposed ? reversed : values;
    const x = pt.tensor({ shape: xs.map(() => null), dtype: xd, name: 'x' });
    const y = pt.tensor({ shape: yStatic, dtype: yd, name: 'y' });
    const view = x.get(...weftIndex(index));
    const z = set ? pt.setSubtensor(view, y) : pt.incSubtensor(view, y);
    const node = z.owner!;
    const xv = make(xs, xd, 11);
    const yv = make(ys, yd, 12);
    const r = checkChunks(t, node, nodeInputs(node, xv, yv), label);
    t.equal(r.call.chunking.by, 'rows', `${label}: by rows`);
    t.same(elementsOf(r.outputs[0]!), refInc(xv, yv, index, set, xd === 'bool', xd === 'float32'), `${label}: values`);
    const compiled = await run([x, y], z, [xv, yv]);
    sameElements(t, compiled, r.outputs[0]!, `${label}: the compiled function agrees`);
  }
});

t.test('incSubtensor: symbolic index values and 0-d x', async (t) => {
  const x = pt.matrix('x');
  const i = pt.scalar('i', 'int32');
  const j = pt.scalar('j', 'int32');
  const z = pt.incSubtensor(x.get(slice(i, null, j)), pt.tensor({ shape: [1, null], name: 'r' }));
  const node = z.owner!;
  for (const [start, step] of [[-2, -1], [1, 3], [9, 1]] as const) {
    const xv = values([9, 4], 'float64', 13);
    const rv = values([1, 4], 'float64', 14);
    const r = checkChunks(t, node, nodeInputs(node, xv, rv, [start, step]), `x[${start}::${step}] += r`);
    t.same(elementsOf(r.outputs[0]!), refInc(xv, rv, [[start, null, step]], false, false), `x[${start}::${step}] += r: values`);
  }
  const s = pt.scalar('s');
  const zs = pt.setSubtensor(s.get(), pt.scalar('v'));
  const r = checkChunks(t, zs.owner!, [makeNdArray(Float64Array.of(1), []), makeNdArray(Float64Array.of(4), [])], '0-d: s[()] = v');
  t.same(elementsOf(r.outputs[0]!), [4], '0-d: value');
});

t.test('incSubtensor: outputShapes checks as perform does', async (t) => {
  const x = pt.matrix('x');
  const y = pt.vector('y');
  const layout = (shape: readonly number[]): TensorView => ({ data: new Float64Array(0), offset: 0, shape, stride: contiguousStrides(shape) });
  const idx = (v: number): TensorView => makeNdArray(Int32Array.of(v), []);
  const set = pt.setSubtensor(x.get(slice(1, null)), y).owner!;
  t.same(set.op.outputShapes!(set, [layout([3, 4]), layout([4]), idx(1)]), [[3, 4]], 'the shape of x');
  await throwsExactly(t, () => set.op.outputShapes!(set, [layout([3, 4]), layout([3]), idx(1)]), RangeError,
    'SetSubtensor{start:}: y of shape [3] cannot be broadcast to the indexed region of shape [2, 4]: axis 0 of y has length 3 where the region has 4',
    'runtime lengths that clash');
  const inc = pt.incSubtensor(x.get(slice(1, null)), y).owner!;
  await throwsExactly(t, () => inc.op.outputShapes!(inc, [layout([3, 4]), layout([1]), idx(1)]), RangeError,
    'IncSubtensor{start:}: y of shape [1] cannot be broadcast to the indexed region of shape [2, 4]: axis 0 of y has length 1 where the region has 4' +
      ' and that axis of y is not statically broadcastable', 'runtime length 1 without a static 1');
  const i = pt.scalar('i', 'int32');
  const row = pt.incSubtensor(x.get(i), 1).owner!;
  await throwsExactly(t, () => row.op.outputShapes!(row, [layout([3, 4]), layout([]), idx(3)]), RangeError,
    'IncSubtensor{i}: index 3 is out of bounds for axis 0 with length 3', 'index out of bounds');
  const k = pt.scalar('k', 'int32');
  const stepped = pt.incSubtensor(x.get(slice(null, null, k)), 1).owner!;
  await throwsExactly(t, () => stepped.op.outputShapes!(stepped, [layout([3, 4]), layout([]), idx(0)]), RangeError,
    'IncSubtensor{::step}: slice step cannot be zero (axis 0)', 'zero step');
  const shapes = [[3, 4], [4]] as const;
  const out = await run([x, y], pt.setSubtensor(x.get(slice(1, null)), y), [values(shapes[0], 'float64', 1), values(shapes[1], 'float64', 2)]);
  t.same([...out.shape], [3, 4], 'the compiled function agrees');
});

t.test('Subtensor: view arithmetic relative to the input, with perform errors', async (t) => {
  const x = pt.tensor3('x');
  const i = pt.scalar('i', 'int32');
  const k = pt.scalar('k', 'int32');
  const sub = x.get(i, slice(null, null, k), null).owner!;
  t.same(Object.keys(sub.op.viewMap), ['0'], 'a view op');
  const base = values([2, 4, 5, 3], 'float64', 21);
  // an input that starts inside its storage (offset 60) and is transposed on its last two axes
  const xv = makeNdArray(base.data, [4, 3, 5], [15, 1, 3], 60);
  const idx = (v: number): NdArray => makeNdArray(Int32Array.of(v), []);
  for (const [iv, kv] of [[1, 2], [-1, -1], [0, 7]] as const) {
    const [v] = sub.op.view!(sub, [xv, idx(iv), idx(kv)])!;
    t.equal(v!.data, base.data, `x[${iv}, ::${kv}, None]: shares the input's data`);
    const compiled = await run([x, i, k], sub.outputs[0] as weft.pt.TensorVariable, [xv, iv, kv]);
    sameElements(t, compiled, { ...v!, data: v!.data }, `x[${iv}, ::${kv}, None]: the view equals the compiled result`);
    const rebased = sub.op.view!(sub, [{ ...xv, offset: 0 }, idx(iv), idx(kv)])![0]!;
    t.equal(v!.offset - rebased.offset, 60, `x[${iv}, ::${kv}, None]: the offset is relative to the input's`);
  }
  const layout: TensorView = { data: new Float64Array(0), offset: 0, shape: [4, 3, 5], stride: [15, 5, 1] };
  await throwsExactly(t, () => sub.op.view!(sub, [layout, idx(4), idx(1)]), RangeError,
    'Subtensor{i, ::step, newaxis}: index 4 is out of bounds for axis 0 with length 4', 'index out of bounds');
  await throwsExactly(t, () => sub.op.view!(sub, [layout, idx(0), idx(0)]), RangeError,
    'Subtensor{i, ::step, newaxis}: slice step cannot be zero (axis 1)', 'zero step');
  t.equal(sub.op.kernel, undefined, 'no kernel: a view never copies');
});
