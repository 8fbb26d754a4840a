// DimShuffle, transpose and x.T: values against index arithmetic, static shapes, the view it
// makes (shared data, declared in viewMap) and the copy that compile puts on outputs, inferShape,
// gradients, Rop and bad patterns.
import ndarray from 'ndarray';
import t from 'tap';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

type Nested = number | Nested[];

/** All permutations of 0..n-1. */
function permutations(n: number): number[][] {
  if (n === 0) return [[]];
  return permutations(n - 1).flatMap((p) => [...Array(n).keys()].map((i) => [...p.slice(0, i), n - 1, ...p.slice(i)]));
}

/** The nested array `x` with its axes permuted: out[i_0..] = x[j] where j[perm[k]] = i_k. */
function permuted(x: Nested, shape: readonly number[], perm: readonly number[]): Nested {
  const outShape = perm.map((a) => shape[a]!);
  const build = (prefix: number[]): Nested => {
    if (prefix.length === outShape.length) {
      const idx: number[] = [];
      perm.forEach((a, k) => (idx[a] = prefix[k]!));
      return idx.reduce((v: Nested, i) => (v as Nested[])[i]!, x);
    }
    return [...Array(outShape[prefix.length]).keys()].map((i) => build([...prefix, i]));
  };
  return build([]);
}

t.test('transpose and x.T on matrices, vectors and scalars', async (t) => {
  const x = pt.matrix('x');
  const m = [[1, 2, 3], [4, 5, 6]];
  near(t, await run([x], x.T, [m]), [[1, 4], [2, 5], [3, 6]]);
  near(t, await run([x], pt.transpose(x), [m]), [[1, 4], [2, 5], [3, 6]]);
  near(t, await run([x], x.transpose(1, 0), [m]), [[1, 4], [2, 5], [3, 6]]);
  near(t, await run([x], x.transpose(-1, -2), [m]), [[1, 4], [2, 5], [3, 6]]);
  near(t, await run([x], x.T.T, [m]), m);
  const v = pt.vector('v');
  t.equal(v.T, v, 'the transpose of a vector is the vector itself');
  t.equal(x.transpose(0, 1), x, 'the identity permutation adds no node');
  const s = pt.scalar('s');
  t.equal(s.T, s);
  near(t, await run([s], s.dimshuffle('x', 'x'), [4]), [[4]]);
});

t.test('every permutation of a 3-d input', async (t) => {
  const value = rng(1).normal([2, 3, 4]);
  const nested = weft.tolist(value) as Nested;
  const x = pt.tensor3('x');
  for (const perm of permutations(3)) {
    near(t, await run([x], x.dimshuffle(...perm), [value]), permuted(nested, [2, 3, 4], perm), 0, `dimshuffle(${perm})`);
    near(t, await run([x], x.transpose(...perm), [value]), permuted(nested, [2, 3, 4], perm), 0, `transpose(${perm})`);
  }
  near(t, await run([x], x.T, [value]), permuted(nested, [2, 3, 4], [2, 1, 0]), 0, 'x.T reverses the axes');
});

t.test("inserting ('x') and dropping broadcastable axes", async (t) => {
  const v = pt.vector('v');
  near(t, await run([v], v.dimshuffle('x', 0), [[1, 2, 3]]), [[1, 2, 3]]);
  near(t, await run([v], v.dimshuffle(0, 'x'), [[1, 2, 3]]), [[1], [2], [3]]);
  near(t, await run([v], v.dimshuffle('x', 0, 'x'), [[1, 2, 3]]), [[[1], [2], [3]]]);
  const b = pt.tensor({ shape: [1, null, 1], name: 'b' });
  const bv = [[[1], [2], [3]]];
  near(t, await run([b], b.dimshuffle(1), [bv]), [1, 2, 3]);
  near(t, await run([b], b.dimshuffle(1, 0), [bv]), [[1], [2], [3]]);
  near(t, await run([b], b.dimshuffle('x', 2, 1), [bv]), [[[1, 2, 3]]]);
  near(t, await run([b], pt.dimshuffle(b, [1, 'x']), [bv]), [[1], [2], [3]]);
  // Broadcasting a vector against a matrix through a new axis.
  const m = pt.matrix('m');
  near(t, await run([v, m], m.add(v.dimshuffle(0, 'x')), [[10, 20], [[1, 2, 3], [4, 5, 6]]]), [[11, 12, 13], [24, 25, 26]]);
});

t.test('non-contiguous input values', async (t) => {
  const x = pt.matrix('x');
  // Logical [[0, 3], [1, 4], [2, 5]] stored transposed, and [[5, 4, 3], [2, 1, 0]] stored backwards.
  const transposed = ndarray(new Float64Array([0, 1, 2, 3, 4, 5]), [3, 2], [1, 3]);
  near(t, await run([x], x.T, [transposed]), [[0, 1, 2], [3, 4, 5]]);
  const reversed = ndarray(new Float64Array([0, 1, 2, 3, 4, 5]), [2, 3], [-3, -1], 5);
  near(t, await run([x], x.T, [reversed]), [[5, 2], [4, 1], [3, 0]]);
  near(t, await run([x], x.dimshuffle(1, 'x', 0), [reversed]), [[[5, 2]], [[4, 1]], [[3, 0]]]);
});

t.test('static shapes', async (t) => {
  const x = pt.tensor({ shape: [2, null, 1], name: 'x' });
  t.equal(String(x.T.type), 'TensorType(float64, (1, ?, 2))');
  t.equal(String(x.dimshuffle(1, 'x', 0).type), 'TensorType(float64, (?, 1, 2))');
  t.equal(String(x.dimshuffle('x', 0, 1, 2).type), 'TensorType(float64, (1, 2, ?, 1))');
  const i = pt.matrix('i', 'int16');
  t.equal(i.T.dtype, 'int16');
  t.equal(String(i.T.owner?.op), 'DimShuffle{1,0}');
  t.equal(String(x.dimshuffle(1, 'x', 0).owner?.op), 'DimShuffle{1,x,0}');
});

t.test('int and bool dtypes', async (t) => {
  const i = pt.matrix('i', 'int8');
  const r = await run([i], i.T, [[[1, -2], [3, 4]]]);
  t.equal(r.data.constructor.name, 'Int8Array');
  near(t, r, [[1, 3], [-2, 4]]);
  const b = pt.vector('b', 'bool');
  const rb = await run([b], b.dimshuffle('x', 0), [[true, false]]);
  t.equal(rb.dtype, 'uint8');
  near(t, rb, [[1, 0]]);
});

t.test('the result is a view: shared data, viewMap, and outputs the caller owns', async (t) => {
  const x = pt.matrix('x');
  const y = x.dimshuffle(1, 'x', 0);
  const node = y.owner!;
  t.same(node.op.viewMap, { 0: [0] }, 'DimShuffle declares that output 0 views input 0');
  const input = ndarray(new Float64Array([1, 2, 3, 4, 5, 6]), [2, 3]);
  const [out] = node.op.perform(node, [input]) as weft.NdArray[];
  t.equal(out!.data, input.data, 'perform returns a view of the same data, no copy');
  t.same(out!.shape, [3, 1, 2]);
  t.same(out!.stride.filter((_, a) => out!.shape[a] !== 1), [1, 3], 'permuted strides');
  t.equal(out!.offset, input.offset);

  // Compiled: the output must not alias the caller's input, nor be overwritten by a later call.
  const fn = await weft.compile([x], x.T);
  const names = fn.fgraph.toposort().map((n) => String(n.op));
  t.same(names, ['DimShuffle{1,0}', 'DeepCopyOp'], 'compile copies an output that is a view');
  const first = await fn(input);
  t.not(first.data, input.data, 'the output has its own memory');
  first.data[0] = 100;
  t.equal(input.data[0], 1, 'writing to the output leaves the input alone');
  const second = await fn(ndarray(new Float64Array([7, 8, 9, 10, 11, 12]), [2, 3]));
  near(t, second, [[7, 10], [8, 11], [9, 12]]);
  near(t, first, [[100, 4], [2, 5], [3, 6]], 0, 'an earlier result is not overwritten');
  // A view of an intermediate result is also handed out as the caller's own memory.
  const g = await weft.compile([x], x.add(1).T);
  const r1 = await g(input);
  const r2 = await g(input);
  t.not(r1.data, r2.data, 'each call returns fresh memory');
});

t.test('inferShape', async (t) => {
  const x = pt.tensor3('x');
  const value = rng(2).normal([2, 3, 4]);
  for (const pattern of [[2, 0, 1], [1, 'x', 0, 2], ['x', 0, 1, 2, 'x']] as Array<Array<number | 'x'>>) {
    t.equal(await weft.checkInferShape([x], [x.dimshuffle(...pattern)], [value]), 1, `dimshuffle(${pattern})`);
  }
  t.equal(await weft.checkInferShape([x], [x.T], [ndarray(new Float64Array(0), [2, 0, 4])]), 1, 'an empty input');
  const b = pt.tensor({ shape: [null, 1], name: 'b' });
  t.equal(await weft.checkInferShape([b], [b.dimshuffle(0)], [[[1], [2]]]), 1, 'dropping an axis');
});

t.test('gradients and Rop', async (t) => {
  const r = rng(3);
  const a = r.normal([3, 4]);
  const c = r.normal([2, 3, 4]);
  await weft.verifyGrad((x) => x.T, [a]);
  await weft.verifyGrad((x) => x.dimshuffle(2, 0, 1), [c]);
  await weft.verifyGrad((x) => x.dimshuffle(1, 'x', 0), [a]);
  await weft.verifyGrad((x) => x.dimshuffle(1), [r.normal([1, 4])]);
  await weft.verifyGrad((x) => x.dimshuffle('x', 1, 0, 2), [r.normal([3, 1, 2])]);
  // The new axis is broadcast against a matrix afterwards, so its gradient is summed.
  await weft.verifyGrad((v, m) => m.mul(v.dimshuffle(0, 'x')), [r.normal([3]), a]);
  await weft.verifyGrad((x) => x.T, [r.normal([2, 3], { dtype: 'float32' })]);
  await weft.checkRop((x) => x.T, [a]);
  await weft.checkRop((x) => x.dimshuffle(1, 'x', 2, 0), [c]);
  // The op's own gradient sums over new axes when the incoming gradient is not broadcastable there.
  const v = pt.vector('v');
  const gz = pt.matrix('gz');
  const ds = v.dimshuffle(0, 'x');
  const [gv] = ds.owner!.op.grad!([v], [gz]) as weft.pt.TensorVariable[];
  near(t, await run([v, gz], gv!, [[0, 0, 0], [[1, 2], [3, 4], [5, 6]]]), [3, 7, 11]);
  // Direct gradient values: d sum(x.T * w) / dx = w.T.
  const x = pt.matrix('x');
  const g = weft.grad(pt.sum(x.T.mul([[1, 2], [3, 4], [5, 6]])), x);
  near(t, await run([x], g, [[[0, 0, 0], [0, 0, 0]]]), [[1, 3, 5], [2, 4, 6]]);
});

t.test('bad patterns are refused with exact messages', async (t) => {
  const x = pt.matrix('x');
  await throwsExactly(t, () => x.dimshuffle(1), TypeError,
    'DimShuffle{1}: cannot drop axis 0 of x (TensorType(float64, (?, ?))): only axes of static length 1 can be dropped');
  await throwsExactly(t, () => x.dimshuffle(0, 2), RangeError, "DimShuffle: 2 is not an axis of a 2-d input (use 0..1 or 'x')");
  await throwsExactly(t, () => x.dimshuffle(-1, 0), RangeError, "DimShuffle: -1 is not an axis of a 2-d input (use 0..1 or 'x')");
  await throwsExactly(t, () => x.dimshuffle(0, 0), RangeError, 'DimShuffle: axis 0 appears twice in [0, 0]');
  await throwsExactly(t, () => x.dimshuffle(0, 1, 1), RangeError, 'DimShuffle: axis 1 appears twice in [0, 1, 1]');
  await throwsExactly(t, () => x.transpose(0), RangeError, 'transpose: x has 2 axes but the permutation [0] has 1');
  await throwsExactly(t, () => x.transpose(0, 2), RangeError, 'transpose: 2 in [0, 2] is not an axis of x (use -2..1)');
  await throwsExactly(t, () => x.transpose(1, -3), RangeError, 'transpose: -3 in [1, -3] is not an axis of x (use -2..1)');
  await throwsExactly(t, () => x.transpose(1, -1), RangeError,
    'transpose: [1, -1] repeats an axis; it must be a permutation of the 2 axes of x');
  const s = pt.scalar('s');
  await throwsExactly(t, () => s.dimshuffle(0), RangeError, "DimShuffle: 0 is not an axis of a 0-d input (use 'x')");
  // The op checks its input's rank.
  const op = x.T.owner!.op;
  await throwsExactly(t, () => op.makeNode(pt.vector('v')), TypeError,
    'DimShuffle{1,0}: expected a 2-d input, got v (TensorType(float64, (?,)))');
});
