// The kernels of inplace nodes, called through the registry with the output being the input's
// own memory (any layout, at an offset inside larger storage): 'incSubtensorInplace',
// 'gemmInplace' and the 'elemwise' kernel writing over an input. Chunked runs equal one call
// bitwise, the result equals the copying kernel's, and nothing outside the overwritten elements
// changes; 'allocEmpty' writes nothing; inplace performs return the input itself, and their
// outputShapes check as the copying ops do.
import t, { type Test } from 'tap';
import { Apply } from '../../src/graph/apply.js';
import type { Op } from '../../src/graph/op.js';
import { isConstant, type Constant } from '../../src/graph/variable.js';
import { getKernel } from '../../src/kernels/registry.js';
import { contiguousStrides, sizeOf, type TensorView } from '../../src/kernels/view.js';
import { AllocEmpty } from '../../src/tensor/shape/alloc.js';
import { Elemwise } from '../../src/tensor/elemwise/elemwise.js';
import { Gemm, gemm } from '../../src/tensor/linalg/gemm.js';
import { empty, makeNdArray, type NdArray } from '../../src/tensor/core/ndarray.js';
import { IncSubtensor } from '../../src/tensor/shape/subtensor.js';
import { chunkUnits } from '../../src/scheduler/chunking.js';
import { evenRanges, randomRanges, elementsOf } from '../kernels/chunked-runs.js';
import { pt, rng, throwsExactly, weft } from '../helpers.js';

const { slice } = weft;
type TV = weft.pt.TensorVariable;

/**
 * Seeded float64 values of `shape` in storage laid out with the axes reversed (a transposed
 * layout) after `pad` elements, the rest of the storage filled with other seeded values.
 */
function transposedIn(shape: readonly number[], seed: number, pad = 5): NdArray {
  const n = sizeOf(shape);
  const data = rng(seed).normal([n + 2 * pad]).data as Float64Array;
  const stride = contiguousStrides([...shape].reverse()).reverse();
  return makeNdArray(data, shape, stride, pad);
}

/** A copy of `x` in fresh storage with the same layout (the whole storage copied). */
function cloneStorage(x: NdArray): NdArray {
  return makeNdArray((x.data as Float64Array).slice(), x.shape, x.stride, x.offset);
}

/** The node `op` on `node`'s inputs (outputs of the same types). */
function withOp(node: Apply, op: Op): Apply {
  return new Apply(op, node.inputs, node.outputs.map((o) => o.type.makeVariable()));
}

/** The index inputs of an IncSubtensor node, as 0-d arrays. */
function indexValues(node: Apply): NdArray[] {
  return node.inputs.slice(2).map((v) => (v as Constant<weft.pt.TensorType, NdArray>).data);
}

/**
 * Runs `node`'s kernel with output 0 over input `over` (its own storage): whole, then in even
 * and random chunks (in reverse order) on fresh copies; every run must leave the storage
 * bytewise equal to the whole run's. Returns the whole run's overwritten input.
 */
function checkInplaceChunks(t: Test, node: Apply, inputs: readonly NdArray[], over: number, label: string): NdArray {
  const call = node.op.kernel!(node)!;
  const kernel = getKernel(call.name);
  const run = (ranges: ReadonlyArray<{ start: number; end: number } | undefined>): NdArray => {
    const ins = inputs.map((x, i) => (i === over ? cloneStorage(x) : x));
    for (const r of [...ranges].reverse()) kernel(ins, [ins[over]!], call.params, r);
    return ins[over]!;
  };
  const whole = run([undefined]);
  const units = chunkUnits(call.chunking, inputs[over]!.shape);
  const bad: string[] = [];
  const splits = [2, 3, 7].map((c) => evenRanges(units, c));
  splits.push(randomRanges(units, 5, units + 3));
  if (units > 1) splits.push(evenRanges(units, units));
  for (const ranges of splits) {
    const got = run(ranges);
    const at = (got.data as Float64Array).findIndex((v, i) => !Object.is(v, whole.data[i]));
    if (at >= 0) bad.push(`${ranges.length} chunks: storage element ${at} differs`);
  }
  t.same(bad, [], `${label}: chunked runs (${units} ${call.chunking.by}) leave the storage as one call does`);
  return whole;
}

/** Storage elements of `after` that differ from `before` outside the elements `x` shows. */
function outsideChanges(before: NdArray, after: NdArray): number[] {
  const shown = new Set<number>();
  const n = sizeOf(before.shape);
  for (let i = 0; i < n; i++) {
    let p = before.offset;
    let rem = i;
    for (let a = before.shape.length - 1; a >= 0; a--) {
      const idx = rem % before.shape[a]!;
      rem = (rem - idx) / before.shape[a]!;
      p += idx * before.stride[a]!;
    }
    shown.add(p);
  }
  const out: number[] = [];
  before.data.forEach((v, i) => {
    if (!shown.has(i) && !Object.is(v, after.data[i])) out.push(i);
  });
  return out;
}

t.test("'incSubtensorInplace': only the region is written, in x's own layout, by rows in any split", async (t) => {
  const cases: Array<[string, readonly number[], (x: TV, y: TV) => TV, readonly number[]]> = [
    ['x[1:4] = y', [6, 5], (x, y) => pt.setSubtensor(x.get(slice(1, 4)), y), [3, 5]],
    ['x[::-2, 1] += y', [7, 4], (x, y) => pt.incSubtensor(x.get(slice(null, null, -2), 1), y), [4]],
    ['x[2] += y (one row)', [5, 3], (x, y) => pt.incSubtensor(x.get(2), y), [3]],
    ['x[:, 1:3] = y, 3-d', [4, 5, 3], (x, y) => pt.setSubtensor(x.get(slice(null), slice(1, 3)), y), [4, 2, 3]],
    ['x[:] = y (all of x)', [5, 4], (x, y) => pt.setSubtensor(x.get(slice(null)), y), [5, 4]],
  ];
  for (const [label, xShape, build, yShape] of cases) {
    const x = pt.tensor({ shape: xShape.map(() => null), name: 'x' });
    const y = pt.tensor({ shape: yShape.map(() => null), name: 'y' });
    const copying = build(x, y).owner!;
    const op = copying.op as IncSubtensor;
    const node = withOp(copying, new IncSubtensor(op.idxList, op.setInstead, true));
    t.same(node.op.destroyMap, { 0: [0] }, `${label}: destroys x`);
    const xv = transposedIn(xShape, 1);
    const yv = rng(2).normal([...yShape]);
    const inputs = [xv, yv, ...indexValues(copying)];
    const after = checkInplaceChunks(t, node, inputs, 0, label);
    // The copying kernel on the same inputs, into a new array.
    const want = empty('float64', xShape);
    getKernel('incSubtensor')(inputs, [want], copying.op.kernel!(copying)!.params);
    t.same(elementsOf(after), elementsOf(want), `${label}: equals the copying kernel`);
    t.same(outsideChanges(xv, after), [], `${label}: nothing else in the storage changed`);
    // perform: the result is x itself.
    const given = cloneStorage(xv);
    const [out] = node.op.perform(node, [given, yv, ...indexValues(copying)]) as NdArray[];
    t.equal(out, given, `${label}: perform returns x itself`);
    t.same(elementsOf(out!), elementsOf(want), `${label}: perform's values`);
  }
  // The checks of the copying op, unchanged.
  const x = pt.matrix('x');
  const node = pt.setSubtensor(x.get(slice(1, null)), pt.matrix('y')).owner!;
  const inplace = withOp(node, new IncSubtensor((node.op as IncSubtensor).idxList, true, true));
  const layout = (shape: number[]): TensorView => ({ data: new Float64Array(0), offset: 0, shape, stride: contiguousStrides(shape) });
  t.same(inplace.op.outputShapes!(inplace, [layout([4, 3]), layout([3, 3]), ...indexValues(node)]), [[4, 3]]);
  await throwsExactly(
    t,
    () => inplace.op.outputShapes!(inplace, [layout([4, 3]), layout([2, 3]), ...indexValues(node)]),
    RangeError,
    'SetSubtensor{start:, inplace}: y of shape [2, 3] cannot be broadcast to the indexed region of shape [3, 3]: axis 0 of y has length 2 where the region has 3',
  );
});

t.test("'gemmInplace': beta * z + alpha * x . y written into z by rows, as the copying 'gemm' computes it", async (t) => {
  const z = pt.matrix('z');
  const copying = gemm(z, pt.scalar('a'), pt.matrix('x'), pt.matrix('y'), pt.scalar('b')).owner!;
  const node = withOp(copying, new Gemm(true));
  t.same(node.op.destroyMap, { 0: [0] });
  t.equal(node.op.kernel!(node)!.name, 'gemmInplace');
  for (const [label, m, k, n, beta] of [
    ['beta 0.5', 13, 7, 9, 0.5],
    ['beta 0 (z not read)', 6, 4, 5, 0],
    ['one row', 1, 3, 4, -1],
  ] as const) {
    const zv = transposedIn([m, n], 3);
    const scalar = (v: number): NdArray => makeNdArray(Float64Array.of(v), []);
    const inputs = [zv, scalar(1.5), rng(4).normal([m, k]), transposedIn([k, n], 5), scalar(beta)];
    const after = checkInplaceChunks(t, node, inputs, 0, label);
    const want = empty('float64', [m, n]);
    getKernel('gemm')(inputs, [want], {});
    t.same(elementsOf(after), elementsOf(want), `${label}: equals the copying kernel`);
    t.same(outsideChanges(zv, after), [], `${label}: nothing else in the storage changed`);
    const given = cloneStorage(zv);
    const [out] = node.op.perform(node, [given, ...inputs.slice(1)]) as NdArray[];
    t.equal(out, given, `${label}: perform returns z itself`);
    t.same(elementsOf(out!), elementsOf(want), `${label}: perform's values`);
  }
  // A z whose layout repeats elements cannot hold the result: perform makes a new array.
  const repeated = makeNdArray(Float64Array.of(1, 2), [3, 2], [0, 1]);
  const ins = [repeated, makeNdArray(Float64Array.of(1), []), rng(6).normal([3, 2]), rng(7).normal([2, 2]), makeNdArray(Float64Array.of(1), [])];
  const [fresh] = node.op.perform(node, ins) as NdArray[];
  t.not(fresh, repeated, 'a broadcast z is not written');
  t.same([...repeated.data], [1, 2]);
  await throwsExactly(t, () => node.op.outputShapes!(node, [repeated, ins[1]!, ins[2]!, rng(8).normal([3, 2]), ins[4]!]), RangeError,
    'Gemm: shapes [3, 2] + [3, 2] . [3, 2] do not fit');
});

t.test("the 'elemwise' kernel writing over an input: by elements in any split, any layout", async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  for (const [label, build] of [
    ['exp(x) * y + 1', (a: TV, b: TV) => pt.add(pt.mul(pt.exp(a), b), 1)],
    ['x - y', (a: TV, b: TV) => pt.sub(a, b)],
  ] as const) {
    const plain = build(x, y).owner!;
    // One Elemwise node (the sum's own node), made to write over its first full input.
    const over = plain.inputs.findIndex((v) => (v.type as weft.pt.TensorType).shape.every((d) => d !== 1));
    const node = withOp(plain, (plain.op as Elemwise).withInplace(over));
    t.same(node.op.destroyMap, { 0: [over] }, `${label}: destroys input ${over}`);
    const values = plain.inputs.map((v, i) => (isConstant(v) ? (v as Constant<weft.pt.TensorType, NdArray>).data : transposedIn([37, 29], 10 + i)));
    const after = checkInplaceChunks(t, node, values, over, label);
    const want = empty('float64', [37, 29]);
    getKernel('elemwise')(values, [want], node.op.kernel!(node)!.params);
    t.same(elementsOf(after), elementsOf(want), `${label}: equals a run into a new array`);
    t.same(outsideChanges(values[over]!, after), [], `${label}: nothing else in the storage changed`);
  }
});

t.test("'allocEmpty' writes nothing; AllocEmpty's shapes", async (t) => {
  const n = pt.scalar('n', 'int32');
  const node = new AllocEmpty('float32').call(n, 3).owner!;
  t.equal(String(node.op), 'AllocEmpty{dtype=float32}');
  t.same((node.outputs[0]!.type as weft.pt.TensorType).shape, [null, 3]);
  const int = (v: number): NdArray => makeNdArray(Int32Array.of(v), []);
  t.same(node.op.outputShapes!(node, [int(4), int(3)]), [[4, 3]]);
  await throwsExactly(t, () => node.op.outputShapes!(node, [int(-1), int(3)]), RangeError, 'AllocEmpty: negative length -1 on axis 0');
  const storage = Float32Array.of(1, 2, 3, 4, 5, 6);
  getKernel('allocEmpty')([int(2), int(3)], [makeNdArray(storage, [2, 3])], {});
  t.same([...storage], [1, 2, 3, 4, 5, 6], 'the memory is left as it was');
  const [fresh] = node.op.perform(node, [int(2), int(3)]) as NdArray[];
  t.same(fresh!.shape, [2, 3]);
  t.equal(fresh!.data.constructor, Float32Array);
  t.same(node.op.connectionPattern!(node), [[false], [false]]);
  t.notOk(node.op.doConstantFolding(node), 'never folded into a constant');
  await throwsExactly(t, () => new AllocEmpty('float32').call(-2), RangeError, 'AllocEmpty: negative length -2 on axis 0');
});
