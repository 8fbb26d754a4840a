// dot, tensordot, matmul and outer: values against naive index-arithmetic sums (BigInt for
// integer wrap-around) over many shapes, dtypes and memory layouts, static shapes, inferShape,
// gradients, Rop, bad input, and the gemm/gemv kernels directly (alpha, beta, row ranges).
import ndarray from 'ndarray';
import t, { type Test } from 'tap';
import { collapseToMatrix, batchedMatmulInto, gemm, gemv, tensordotInto } from '../../src/kernels/gemm.js';
import type { TypedArray } from '../../src/kernels/dtype.js';
import type { TensorView } from '../../src/kernels/view.js';
import { Dot, MatMul, TensorDot, tensordot } from '../../src/tensor/linalg/linalg.js';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

type Nested = number | Nested[];

/** A tensor as C-ordered values and a shape. */
interface Dense {
  readonly shape: readonly number[];
  readonly values: readonly number[];
}

function flat(x: Nested): number[] {
  return Array.isArray(x) ? x.flatMap(flat) : [x];
}

function dense(a: weft.NdArray): Dense {
  return { shape: [...a.shape], values: flat(weft.tolist(a) as Nested) };
}

function expected(d: Dense): Dense {
  return d;
}

/** `actual` has the shape and, within `tol` (relative, absolute near zero), the values of `want`. */
function closeTo(t: Test, actual: weft.NdArray, want: Dense, tol = 1e-12, msg = 'values'): void {
  t.same(actual.shape, want.shape, `${msg}: shape`);
  const got = dense(actual).values;
  const bad: string[] = [];
  want.values.forEach((w, i) => {
    const g = got[i]!;
    if (!(Math.abs(g - w) <= tol * Math.max(1, Math.abs(w))) && bad.length < 5) bad.push(`[${i}] got ${g}, expected ${w}`);
  });
  t.same(bad, [], `${msg} within ${tol}`);
}

function strides(shape: readonly number[]): number[] {
  const s: number[] = [];
  let acc = 1;
  for (let a = shape.length - 1; a >= 0; a--) {
    s[a] = acc;
    acc *= shape[a]!;
  }
  return s;
}

/** Every multi-index of `shape` in C order. */
function indices(shape: readonly number[]): number[][] {
  let out: number[][] = [[]];
  for (const d of shape) out = out.flatMap((p) => [...Array(d).keys()].map((i) => [...p, i]));
  return out;
}

type Accumulate = (terms: Array<[number, number]>) => number;

const floatSum: Accumulate = (terms) => terms.reduce((s, [p, q]) => s + p * q, 0);

/** Exact integer sum of products, wrapped to `bits` (signed or unsigned) as NumPy's integers wrap. */
function intSum(bits: number, signed: boolean): Accumulate {
  return (terms) => {
    const s = terms.reduce((acc, [p, q]) => acc + BigInt(p) * BigInt(q), 0n);
    return Number(signed ? BigInt.asIntN(bits, s) : BigInt.asUintN(bits, s));
  };
}

/** The reference contraction: out[free a..., free b...] = sum over paired axes of a * b. */
function refTensordot(a: Dense, b: Dense, axesA: readonly number[], axesB: readonly number[], acc: Accumulate = floatSum): Dense {
  const freeA = a.shape.map((_, i) => i).filter((i) => !axesA.includes(i));
  const freeB = b.shape.map((_, i) => i).filter((i) => !axesB.includes(i));
  const sa = strides(a.shape);
  const sb = strides(b.shape);
  const shape = [...freeA.map((i) => a.shape[i]!), ...freeB.map((i) => b.shape[i]!)];
  const summed = indices(axesA.map((i) => a.shape[i]!));
  const values = indices(shape).map((idx) => {
    const terms = summed.map((s): [number, number] => {
      let pa = 0;
      let pb = 0;
      freeA.forEach((ax, k) => (pa += idx[k]! * sa[ax]!));
      freeB.forEach((ax, k) => (pb += idx[freeA.length + k]! * sb[ax]!));
      axesA.forEach((ax, k) => (pa += s[k]! * sa[ax]!));
      axesB.forEach((ax, k) => (pb += s[k]! * sb[ax]!));
      return [a.values[pa]!, b.values[pb]!];
    });
    return acc(terms);
  });
  return { shape, values };
}

/** NumPy's dot: the last axis of a with the second-to-last of b (the only one of a vector). */
function refDot(a: Dense, b: Dense, acc: Accumulate = floatSum): Dense {
  return refTensordot(a, b, [a.shape.length - 1], [Math.max(0, b.shape.length - 2)], acc);
}

/** NumPy's matmul with broadcast batch axes and promoted vectors, by explicit loops. */
function refMatmul(a: Dense, b: Dense): Dense {
  const as = a.shape.length === 1 ? [1, a.shape[0]!] : a.shape;
  const bs = b.shape.length === 1 ? [b.shape[0]!, 1] : b.shape;
  const nb = Math.max(as.length, bs.length) - 2;
  const pad = (s: readonly number[]) => [...Array<number>(nb - (s.length - 2)).fill(1), ...s.slice(0, -2)];
  const [ba, bb] = [pad(as), pad(bs)];
  const batch = ba.map((d, i) => (d === 1 ? bb[i]! : d));
  const [m, k, n] = [as[as.length - 2]!, as[as.length - 1]!, bs[bs.length - 1]!];
  const values: number[] = [];
  for (const bi of indices(batch)) {
    const offA = bi.reduce((o, i, ax) => o * ba[ax]! + (ba[ax] === 1 ? 0 : i), 0) * m * k;
    const offB = bi.reduce((o, i, ax) => o * bb[ax]! + (bb[ax] === 1 ? 0 : i), 0) * k * n;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let p = 0; p < k; p++) s += a.values[offA + i * k + p]! * b.values[offB + p * n + j]!;
        values.push(s);
      }
    }
  }
  let shape = [...batch, m, n];
  if (a.shape.length === 1) shape = shape.filter((_, i) => i !== shape.length - 2);
  if (b.shape.length === 1) shape = shape.slice(0, -1);
  return { shape, values };
}

const f32 = { dtype: 'float32' as const };

t.test('dot of matrices: many shapes, float32 and float64, against a naive triple loop', async (t) => {
  const shapes: Array<[number, number, number]> = [
    [1, 1, 1], [2, 3, 4], [4, 4, 4], [5, 7, 3], [8, 8, 8], [9, 13, 6], [17, 1, 5], [1, 9, 1], [3, 0, 4], [0, 3, 2], [2, 3, 0],
    [65, 33, 70], [7, 1100, 6],
  ];
  const r = rng(10);
  for (const dtype of ['float64', 'float32'] as const) {
    const x = pt.matrix('x', dtype);
    const y = pt.matrix('y', dtype);
    const fn = await weft.compile([x, y], pt.dot(x, y));
    for (const [m, k, n] of shapes) {
      const a = r.normal([m, k], { dtype });
      const b = r.normal([k, n], { dtype });
      const out = await fn(a, b);
      t.equal(out.data.constructor, dtype === 'float32' ? Float32Array : Float64Array, `${dtype} output storage`);
      // float32 products in shared memory accumulate in float32 (the WebAssembly kernel, as BLAS
      // sgemm does), so their error grows with the depth k.
      const tol = dtype === 'float32' ? 2e-6 * Math.max(1, k / 64) : 1e-12;
      closeTo(t, out, expected(refDot(dense(a), dense(b))), tol, `${dtype} [${m}, ${k}] x [${k}, ${n}]`);
    }
  }
});

t.test('dot of vectors and matrices (every rank combination)', async (t) => {
  const r = rng(11);
  const v = pt.vector('v');
  const w = pt.vector('w');
  const x = pt.matrix('x');
  for (const [m, k, n] of [[1, 1, 1], [3, 5, 2], [6, 0, 4], [5, 11, 7]] as const) {
    const a = r.normal([m, k]);
    const b = r.normal([k, n]);
    const p = r.normal([k]);
    const q = r.normal([k]);
    const vv = await run([v, w], pt.dot(v, w), [p, q]);
    t.same(vv.shape, [], 'vector·vector is 0-d');
    closeTo(t, vv, expected(refDot(dense(p), dense(q))), 1e-12, `vector·vector, length ${k}`);
    closeTo(t, await run([x, v], pt.dot(x, v), [a, p]), expected(refDot(dense(a), dense(p))), 1e-12, `matrix·vector [${m}, ${k}]`);
    closeTo(t, await run([v, x], pt.dot(v, x), [p, b]), expected(refDot(dense(p), dense(b))), 1e-12, `vector·matrix [${k}, ${n}]`);
    closeTo(t, await run([v, x], v.dot(x), [p, b]), expected(refDot(dense(p), dense(b))), 1e-12, 'the method x.dot(y)');
  }
  // Known numbers, independent of any reference function.
  near(t, await run([x, v], pt.dot(x, v), [[[1, 2], [3, 4]], [1, -1]]), [-1, -1]);
  near(t, await run([v, w], pt.dot(v, w), [[1, 2, 3], [4, 5, 6]]), 32);
  near(t, await run([x], pt.dot(x, [[1, 0], [0, 1]]), [[[1, 2], [3, 4]]]), [[1, 2], [3, 4]], 0, 'a constant operand');
  const s = pt.scalar('s');
  near(t, await run([s, x], pt.dot(s, x), [2, [[1, 2], [3, 4]]]), [[2, 4], [6, 8]], 0, 'a 0-d operand multiplies');
});

t.test('transposed and non-contiguous operands', async (t) => {
  const r = rng(12);
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const v = pt.vector('v');
  for (const [m, k, n] of [[5, 7, 3], [9, 4, 10], [1, 6, 1]] as const) {
    const at = r.normal([k, m]);
    const bt = r.normal([n, k]);
    const a = dense(at);
    const b = dense(bt);
    const aT: Dense = { shape: [m, k], values: indices([m, k]).map(([i, p]) => a.values[p! * m + i!]!) };
    const bT: Dense = { shape: [k, n], values: indices([k, n]).map(([p, j]) => b.values[j! * k + p!]!) };
    closeTo(t, await run([x, y], pt.dot(x.T, y.T), [at, bt]), expected(refDot(aT, bT)), 1e-12, `x.T·y.T [${m}, ${k}, ${n}]`);
    const p = r.normal([m]);
    closeTo(t, await run([x, v], pt.dot(x, v), [at, p]), expected(refDot(dense(at), dense(p))), 1e-12, 'matrix·vector, matrix in columns');
    closeTo(t, await run([x, v], pt.dot(x.T, v), [at.transpose(1, 0), p]), expected(refDot(dense(at), dense(p))), 1e-12, 'x.T of a transposed value');
  }
  // Strided values: every other row, a reversed row order, a column of a larger matrix.
  const data = Float64Array.from({ length: 48 }, (_, i) => (i % 7) - 3);
  const everyOther = ndarray(data, [4, 6], [12, 1]);
  const reversed = ndarray(data, [6, 4], [-4, 1], 20);
  const column = ndarray(data, [6], [8], 1);
  closeTo(t, await run([x, y], pt.dot(x, y), [everyOther, reversed]), expected(refDot(dense(everyOther), dense(reversed))), 1e-12, 'strided operands');
  closeTo(t, await run([x, v], pt.dot(x, v), [everyOther, column]), expected(refDot(dense(everyOther), dense(column))), 1e-12, 'a strided vector');
  closeTo(t, await run([v, x], pt.dot(v, x), [column, reversed]), expected(refDot(dense(column), dense(reversed))), 1e-12, 'vector·reversed matrix');
});

t.test('integer dtypes wrap as NumPy does, mixed dtypes promote, bool is refused', async (t) => {
  const r = rng(13);
  const cases = [
    ['int32', 32, true, -70000, 70000],
    ['int16', 16, true, -300, 300],
    ['int8', 8, true, -100, 100],
    ['uint8', 8, false, 0, 200],
    ['uint16', 16, false, 0, 60000],
    ['uint32', 32, false, 0, 4000000000],
  ] as const;
  for (const [dtype, bits, signed, lo, hi] of cases) {
    const x = pt.matrix('x', dtype);
    const y = pt.matrix('y', dtype);
    const v = pt.vector('v', dtype);
    const a = r.integers([4, 6], lo, hi, dtype);
    const b = r.integers([6, 5], lo, hi, dtype);
    const p = r.integers([6], lo, hi, dtype);
    const out = await run([x, y], pt.dot(x, y), [a, b]);
    t.equal(pt.dot(x, y).dtype, dtype, `${dtype}·${dtype} is ${dtype}`);
    closeTo(t, out, expected(refDot(dense(a), dense(b), intSum(bits, signed))), 0, `${dtype} matrix product wraps`);
    closeTo(t, await run([x, v], pt.dot(x, v), [a, p]), expected(refDot(dense(a), dense(p), intSum(bits, signed))), 0, `${dtype} matrix·vector`);
  }
  const x8 = pt.matrix('x', 'int8');
  near(t, await run([x8], pt.dot(x8, x8), [[[100]]]), [[16]], 0, '100 * 100 = 10000 wraps to 16 in int8');
  const i32 = pt.matrix('i', 'int32');
  const f32m = pt.matrix('f', 'float32');
  t.equal(pt.dot(i32, f32m).dtype, 'float64', 'int32·float32 is float64');
  t.equal(pt.dot(pt.matrix('a', 'int8'), f32m).dtype, 'float32', 'int8·float32 is float32');
  t.equal(pt.dot(pt.matrix('a', 'bool'), pt.matrix('b', 'int16')).dtype, 'int16', 'bool·int16 is int16');
  near(t, await run([i32, f32m], pt.dot(i32, f32m), [[[1, 2]], [[0.5], [0.25]]]), [[1]]);
  const bools = pt.matrix('b', 'bool');
  await throwsExactly(t, () => pt.dot(bools, bools), TypeError, "Dot: both inputs are bool; cast one of them to a number dtype first (e.g. x.astype('int32'))");
});

t.test('static shapes', async (t) => {
  const a = pt.tensor({ shape: [3, 4], name: 'a' });
  const b = pt.tensor({ shape: [4, null], name: 'b' });
  const v = pt.tensor({ shape: [4], name: 'v' });
  t.same(pt.dot(a, b).type.shape, [3, null]);
  t.same(pt.dot(a, v).type.shape, [3]);
  t.same(pt.dot(v, b).type.shape, [null]);
  t.same(pt.dot(v, v).type.shape, []);
  const t3 = pt.tensor({ shape: [2, null, 4], name: 't3' });
  const u3 = pt.tensor({ shape: [5, 4, 6], name: 'u3' });
  t.same(pt.dot(t3, u3).type.shape, [2, null, 5, 6]);
  t.same(pt.matmul(t3, pt.tensor({ shape: [1, 4, 7] })).type.shape, [2, null, 7]);
  t.same(pt.matmul(pt.tensor({ shape: [1, 3, 4] }), pt.tensor({ shape: [6, 1, 4, 2] })).type.shape, [6, 1, 3, 2]);
  t.same(pt.matmul(v, u3).type.shape, [5, 6]);
  t.same(pt.matmul(u3, pt.vector('w')).type.shape, [5, 4]);
  t.same(pt.outer(v, pt.vector('w')).type.shape, [4, null]);
});

t.test('dot and tensordot of higher ranks (NumPy semantics)', async (t) => {
  const r = rng(14);
  const cases: Array<[number[], number[]]> = [
    [[2, 3, 4], [4, 5]],
    [[2, 3, 4], [5, 4, 6]],
    [[4], [2, 4, 3]],
    [[3, 2, 2, 5], [5]],
    [[2, 3], [4, 3, 2]],
    [[2, 0, 3], [3, 4]],
  ];
  for (const [sa, sb] of cases) {
    const a = r.normal(sa);
    const b = r.normal(sb);
    const x = pt.tensor({ shape: sa.map(() => null), name: 'x' });
    const y = pt.tensor({ shape: sb.map(() => null), name: 'y' });
    closeTo(t, await run([x, y], pt.dot(x, y), [a, b]), expected(refDot(dense(a), dense(b))), 1e-12, `dot [${sa}] x [${sb}]`);
  }
  const a = r.normal([3, 4, 5]);
  const b = r.normal([5, 3, 2]);
  const x = pt.tensor3('x');
  const y = pt.tensor3('y');
  closeTo(t, await run([x, y], tensordot(x, y, [[0, 2], [1, 0]]), [a, b]), expected(refTensordot(dense(a), dense(b), [0, 2], [1, 0])), 1e-12, 'paired axes out of order');
  closeTo(t, await run([x, y], tensordot(x, y, [[-1], [0]]), [a, b]), expected(refTensordot(dense(a), dense(b), [2], [0])), 1e-12, 'negative axes');
  const c = r.normal([4, 5, 6]);
  closeTo(t, await run([x, y], tensordot(x, y, 2), [a, c]), expected(refTensordot(dense(a), dense(c), [1, 2], [0, 1])), 1e-12, 'axes = 2');
  closeTo(t, await run([x, y], tensordot(x, y, 0), [a, c]), expected(refTensordot(dense(a), dense(c), [], [])), 1e-12, 'axes = 0: the outer product');
  // Operands whose summed axes do not merge in memory (copied before the product).
  // Summed axes whose strides do not merge in memory (the operand is copied before the product).
  const strided = a.transpose(0, 2, 1);
  const d = r.normal([4, 5, 6]);
  closeTo(t, await run([x, y], tensordot(x, y, [[1, 2], [1, 0]]), [strided, d]),
    refTensordot(dense(strided), dense(d), [1, 2], [1, 0]), 1e-12, 'non-mergeable strides');
  t.equal(String(tensordot(x, y, [[0, 2], [1, 0]]).owner!.op), 'TensorDot{axes=[[0,2],[1,0]]}');
});

t.test('matmul: batches, broadcast batch axes, promoted vectors', async (t) => {
  const r = rng(15);
  const cases: Array<[Array<number | null>, number[], Array<number | null>, number[]]> = [
    [[null, null, null], [2, 3, 4], [null, null], [4, 5]],
    [[null, null], [3, 4], [null, null, null], [2, 4, 5]],
    [[null, null, null], [3, 2, 4], [null, null, null], [3, 4, 6]],
    [[null, 1, null, null], [2, 1, 3, 4], [null, null, null], [5, 4, 2]],
    [[1, null, null], [1, 5, 4], [null, null, null, null], [2, 3, 4, 3]],
    [[null], [4], [null, null, null], [2, 4, 3]],
    [[null, null, null], [2, 3, 4], [null], [4]],
    [[null, null, null], [2, 1, 1], [null, null, null], [2, 1, 1]],
    [[null, null, null], [2, 3, 0], [null, null, null], [2, 0, 4]],
    [[null, null, null, null], [2, 2, 9, 6], [null, null], [6, 7]],
  ];
  for (const [ta, sa, tb, sb] of cases) {
    const a = r.normal(sa);
    const b = r.normal(sb);
    const x = pt.tensor({ shape: ta, name: 'x' });
    const y = pt.tensor({ shape: tb, name: 'y' });
    closeTo(t, await run([x, y], pt.matmul(x, y), [a, b]), expected(refMatmul(dense(a), dense(b))), 1e-12, `matmul [${sa}] @ [${sb}]`);
  }
  const x = pt.tensor3('x', 'float32');
  const a = r.normal([3, 5, 4], f32);
  const b = r.normal([3, 6, 5], f32);
  const out = await run([x], x.matmul(x.transpose(0, 2, 1)), [a]);
  t.equal(out.data.constructor, Float32Array);
  closeTo(t, out, expected(refMatmul(dense(a), dense(a.transpose(0, 2, 1)))), 2e-6, 'float32, transposed batch operand');
  const y = pt.tensor3('y', 'float32');
  closeTo(t, await run([x, y], pt.matmul(x.transpose(0, 2, 1), y.transpose(0, 2, 1)), [a, b]),
    refMatmul(dense(a.transpose(0, 2, 1)), dense(b.transpose(0, 2, 1))), 2e-6, 'float32, both transposed');
  const i = pt.tensor3('i', 'int32');
  const ia = r.integers([2, 3, 4], -50, 50);
  closeTo(t, await run([i], pt.matmul(i, i.transpose(0, 2, 1)), [ia]), expected(refMatmul(dense(ia), dense(ia.transpose(0, 2, 1)))), 0, 'int32');
  t.equal(pt.matmul(pt.matrix('m'), pt.matrix('n')).owner!.op instanceof Dot, true, 'matmul of matrices is a Dot');
  t.equal(pt.matmul(pt.vector('p'), pt.vector('q')).ndim, 0, 'matmul of vectors is 0-d');
});

t.test('outer', async (t) => {
  const v = pt.vector('v');
  const w = pt.vector('w');
  near(t, await run([v, w], pt.outer(v, w), [[1, 2, 3], [10, 20]]), [[10, 20], [20, 40], [30, 60]]);
  closeTo(t, await run([v, w], pt.outer(v, w), [[], [1, 2]]), { shape: [0, 2], values: [] }, 0, 'an empty vector');
  const x = pt.matrix('x');
  near(t, await run([x, w], pt.outer(x, w), [[[1, 2], [3, 4]], [1, -1]]), [[1, -1], [2, -2], [3, -3], [4, -4]], 0, 'a matrix is flattened first');
  await weft.verifyGrad((p, q) => pt.outer(p, q), [rng(1).normal([3]), rng(2).normal([4])]);
  await weft.checkRop((p, q) => pt.outer(p, q), [rng(1).normal([3]), rng(2).normal([4])]);
});

t.test('inferShape', async (t) => {
  const r = rng(16);
  const v = pt.vector('v');
  const w = pt.vector('w');
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  t.equal(await weft.checkInferShape([x, y], [pt.dot(x, y)], [r.normal([3, 4]), r.normal([4, 5])], Dot), 1);
  t.equal(await weft.checkInferShape([x, v], [pt.dot(x, v)], [r.normal([3, 4]), r.normal([4])], Dot), 1);
  t.equal(await weft.checkInferShape([v, y], [pt.dot(v, y)], [r.normal([4]), r.normal([4, 5])], Dot), 1);
  t.equal(await weft.checkInferShape([v, w], [pt.dot(v, w)], [r.normal([4]), r.normal([4])], Dot), 1);
  const a = pt.tensor3('a');
  const b = pt.tensor3('b');
  t.equal(await weft.checkInferShape([a, b], [pt.dot(a, b)], [r.normal([2, 3, 4]), r.normal([5, 4, 6])], TensorDot), 1);
  t.equal(await weft.checkInferShape([a, b], [tensordot(a, b, [[0, 2], [2, 0]])], [r.normal([2, 3, 4]), r.normal([4, 5, 2])], TensorDot), 1);
  const c = pt.tensor({ shape: [null, 1, null, null], name: 'c' });
  t.equal(await weft.checkInferShape([c, b], [pt.matmul(c, b)], [r.normal([2, 1, 3, 4]), r.normal([5, 4, 6])], MatMul), 1);
  t.equal(await weft.checkInferShape([v, b], [pt.matmul(v, b)], [r.normal([4]), r.normal([5, 4, 6])], MatMul), 1);
});

t.test('gradients', async (t) => {
  const r = rng(17);
  await weft.verifyGrad((p, q) => pt.dot(p, q), [r.normal([3, 4]), r.normal([4, 5])]);
  await weft.verifyGrad((p, q) => pt.dot(p, q), [r.normal([3, 4]), r.normal([4])]);
  await weft.verifyGrad((p, q) => pt.dot(p, q), [r.normal([4]), r.normal([4, 5])]);
  await weft.verifyGrad((p, q) => pt.dot(p, q), [r.normal([4]), r.normal([4])]);
  await weft.verifyGrad((p, q) => pt.dot(p.T, q), [r.normal([4, 3]), r.normal([4, 2])]);
  await weft.verifyGrad((p, q) => pt.dot(p, q), [r.normal([3, 4], f32), r.normal([4, 5], f32)]);
  await weft.verifyGrad((p, q) => pt.dot(p, q), [r.normal([2, 3, 4]), r.normal([5, 4, 2])]);
  await weft.verifyGrad((p, q) => tensordot(p, q, [[0, 2], [1, 0]]), [r.normal([3, 2, 4]), r.normal([4, 3, 2])]);
  await weft.verifyGrad((p, q) => pt.matmul(p, q), [r.normal([2, 3, 4]), r.normal([4, 5])]);
  await weft.verifyGrad((p, q) => pt.matmul(p, q), [r.normal([3, 4]), r.normal([2, 4, 5])]);
  await weft.verifyGrad((p, q) => pt.matmul(p, q), [r.normal([2, 1, 3, 4]), r.normal([5, 4, 2])]);
  await weft.verifyGrad((p, q) => pt.matmul(p, q), [r.normal([4]), r.normal([2, 4, 3])]);
  await weft.verifyGrad((p, q) => pt.matmul(p, q), [r.normal([2, 3, 4]), r.normal([4])]);
  // Second order: the Hessian of u·A·u is A + A^T.
  const A = [[1, 2], [3, 4]];
  const u = pt.tensor({ shape: [2], name: 'u' });
  near(t, await run([u], weft.hessian(pt.dot(u, pt.dot(A, u)), u), [[0.5, -1]]), [[2, 5], [5, 8]]);
});

t.test('Rop', async (t) => {
  const r = rng(18);
  await weft.checkRop((p, q) => pt.dot(p, q), [r.normal([3, 4]), r.normal([4, 5])]);
  await weft.checkRop((p, q) => pt.dot(p, q), [r.normal([3, 4]), r.normal([4])]);
  await weft.checkRop((p, q) => pt.dot(p, q), [r.normal([4]), r.normal([4])]);
  await weft.checkRop((p, q) => pt.dot(p, q), [r.normal([2, 3, 4]), r.normal([4, 2])]);
  await weft.checkRop((p, q) => pt.matmul(p, q), [r.normal([2, 3, 4]), r.normal([2, 4, 5])]);
  await weft.checkRop((p, q) => pt.matmul(p, q), [r.normal([2, 1, 3, 4]), r.normal([5, 4, 2])]);
  t.pass('Rop matches finite differences and Lop');
});

t.test('bad input', async (t) => {
  const a = pt.tensor({ shape: [2, 3], name: 'a' });
  const b = pt.tensor({ shape: [4, 5], name: 'b' });
  await throwsExactly(t, () => pt.dot(a, b), weft.ShapeMismatchError,
    'Dot: a (TensorType(float64, (2, 3))) and b (TensorType(float64, (4, 5))) are not aligned: axis 1 of input 0 has length 3, axis 0 of input 1 has length 4');
  await throwsExactly(t, () => pt.dot(pt.tensor({ shape: [null, null, 3], name: 't' }), pt.tensor({ shape: [2, 7, 5], name: 'u' })),
    weft.ShapeMismatchError,
    'TensorDot{axes=[[2],[1]]}: t (TensorType(float64, (?, ?, 3))) and u (TensorType(float64, (2, 7, 5))) are not aligned: axis 2 of input 0 has length 3, axis 1 of input 1 has length 7');
  await throwsExactly(t, () => pt.matmul(pt.tensor({ shape: [2, 3, 4], name: 'p' }), pt.tensor({ shape: [3, 4, 5], name: 'q' })), weft.ShapeMismatchError,
    'MatMul: the batch axes of p (TensorType(float64, (2, 3, 4))) and q (TensorType(float64, (3, 4, 5))) cannot be broadcast together: static lengths 2 and 3 on batch axis 0');
  await throwsExactly(t, () => pt.matmul(pt.tensor({ shape: [2, 3, 4], name: 'p' }), pt.tensor({ shape: [2, 5, 5], name: 'q' })), weft.ShapeMismatchError,
    'MatMul: p (TensorType(float64, (2, 3, 4))) and q (TensorType(float64, (2, 5, 5))) are not aligned: axis 2 of input 0 has length 4, axis 1 of input 1 has length 5');
  await throwsExactly(t, () => pt.matmul(pt.scalar('s'), pt.matrix('m')), TypeError,
    'matmul: input 0 s (TensorType(float64, ())) is 0-d; matmul needs at least one axis (use mul for scalars)');
  await throwsExactly(t, () => new Dot().call(pt.tensor3('t'), pt.matrix('m')), TypeError,
    'Dot: input 0 t (TensorType(float64, (?, ?, ?))) must be a vector or a matrix; use dot() or tensordot() for other ranks');
  await throwsExactly(t, () => new MatMul().call(pt.vector('v'), pt.matrix('m')), TypeError,
    'MatMul: input 0 v (TensorType(float64, (?,))) must have at least 2 axes; matmul() promotes vectors');
  await throwsExactly(t, () => tensordot(pt.matrix('m'), pt.matrix('n'), [[0, 0], [0, 1]]), RangeError, 'tensordot: the axes [0, 0] of input 0 repeat an axis');
  await throwsExactly(t, () => tensordot(pt.matrix('m'), pt.matrix('n'), [[2], [0]]), RangeError, 'tensordot: axis 2 is out of range for input 0, which has 2 axes');
  await throwsExactly(t, () => tensordot(pt.matrix('m'), pt.matrix('n'), [[0], [0, 1]]), RangeError, 'TensorDot: 1 axes of a but 2 axes of b; they are summed in pairs');
  await throwsExactly(t, () => tensordot(pt.matrix('m'), pt.matrix('n'), 3), RangeError,
    'tensordot: cannot sum over 3 axes of m (TensorType(float64, (?, ?))) and n (TensorType(float64, (?, ?)))');

  // At run time.
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  await throwsExactly(t, () => run([x, y], pt.dot(x, y), [rng(1).normal([2, 3]), rng(2).normal([4, 5])]), weft.NodeError,
    'Dot: shapes [2, 3] and [4, 5] are not aligned: axis 1 of input 0 has length 3, axis 0 of input 1 has length 4' +
      '\n  in node 0: Dot(x, y)\n  input values: float64 [2, 3], float64 [4, 5]');
  const v = pt.vector('v');
  await throwsExactly(t, () => run([x, v], pt.dot(x, v), [rng(1).normal([2, 3]), rng(2).normal([2])]), weft.NodeError,
    'Dot: shapes [2, 3] and [2] are not aligned: axis 1 of input 0 has length 3, axis 0 of input 1 has length 2' +
      '\n  in node 0: Dot(x, v)\n  input values: float64 [2, 3], float64 [2]');
  const p = pt.tensor3('p');
  const q = pt.tensor3('q');
  await throwsExactly(t, () => run([p, q], pt.matmul(p, q), [rng(1).normal([2, 3, 4]), rng(2).normal([1, 4, 5])]), weft.NodeError,
    'MatMul: the batch shapes of [2, 3, 4] and [1, 4, 5] cannot be broadcast together: lengths 2 and 1 on batch axis 0 ' +
      '(input 1 has length 1 there, but its type does not mark the axis broadcastable)' +
      '\n  in node 0: MatMul(p, q)\n  input values: float64 [2, 3, 4], float64 [1, 4, 5]');
  await throwsExactly(t, () => run([p, q], pt.matmul(p, q), [rng(1).normal([2, 3, 4]), rng(2).normal([2, 3, 5])]), weft.NodeError,
    'MatMul: shapes [2, 3, 4] and [2, 3, 5] are not aligned: axis 2 of input 0 has length 4, axis 1 of input 1 has length 3' +
      '\n  in node 0: MatMul(p, q)\n  input values: float64 [2, 3, 4], float64 [2, 3, 5]');
  await throwsExactly(t, () => run([p, q], pt.dot(p, q), [rng(1).normal([2, 3, 4]), rng(2).normal([2, 3, 5])]), weft.NodeError,
    'TensorDot{axes=[[2],[1]]}: shapes [2, 3, 4] and [2, 3, 5] are not aligned: axis 2 of input 0 has length 4, axis 1 of input 1 has length 3' +
      '\n  in node 0: TensorDot{axes=[[2],[1]]}(p, q)\n  input values: float64 [2, 3, 4], float64 [2, 3, 5]');
});

// ---------------------------------------------------------------------------------------------
// The kernels directly, as the worker runtime will call them.

function view(data: TypedArray, shape: number[], stride?: number[], offset = 0): TensorView {
  return { data, offset, shape, stride: stride ?? strides(shape) };
}

function values(v: TensorView): number[] {
  return indices(v.shape).map((idx) => v.data[v.offset + idx.reduce((o, i, a) => o + i * v.stride[a]!, 0)]!);
}

t.test('gemm kernel: alpha, beta, row ranges, NaN in C, long k in float32', (t) => {
  const r = rng(19);
  for (const [m, k, n] of [[7, 5, 9], [70, 20, 5], [5, 1500, 6]] as const) {
    for (const ctor of [Float64Array, Float32Array] as const) {
      const a = view(ctor.from(r.normal([m * k]).data), [m, k]);
      const b = view(ctor.from(r.normal([k * n]).data), [k, n]);
      const c0 = ctor.from(r.normal([m * n]).data);
      const c = view(ctor.from(c0), [m, n]);
      gemm(a, b, c, 2, 0.5);
      const prod = refDot({ shape: [m, k], values: values(a) }, { shape: [k, n], values: values(b) }).values;
      const want = prod.map((p, i) => 2 * p + 0.5 * c0[i]!);
      const tol = ctor === Float32Array ? 1e-5 : 1e-12;
      const got = values(c);
      t.ok(got.every((g, i) => Math.abs(g - want[i]!) <= tol * Math.max(1, Math.abs(want[i]!))), `${ctor.name} [${m}, ${k}, ${n}] alpha 2 beta 0.5`);
      // The same product computed in three row ranges is bitwise the whole.
      const whole = view(new ctor(m * n), [m, n]);
      gemm(a, b, whole);
      const parts = view(new ctor(m * n).fill(NaN), [m, n]);
      const cut = [0, Math.floor(m / 3), Math.floor((2 * m) / 3) + 1, m];
      for (let i = 0; i < 3; i++) gemm(a, b, parts, 1, 0, { start: cut[i]!, end: cut[i + 1]! });
      t.same(Array.from(parts.data), Array.from(whole.data), `${ctor.name} [${m}, ${k}, ${n}] by row ranges, NaN in C ignored with beta 0`);
    }
  }
  const ia = view(Int32Array.of(1, 2, 3, 4), [2, 2]);
  const ic = view(Int32Array.of(10, 20, 30, 40), [2, 2]);
  gemm(ia, ia, ic, 3, -1);
  t.same(Array.from(ic.data), [3 * 7 - 10, 3 * 10 - 20, 3 * 15 - 30, 3 * 22 - 40], 'integer alpha and beta');
  const empty = view(Float64Array.of(NaN, NaN, NaN, NaN), [2, 2]);
  gemm(view(new Float64Array(0), [2, 0]), view(new Float64Array(0), [0, 2]), empty);
  t.same(Array.from(empty.data), [0, 0, 0, 0], 'an empty inner dimension gives zeros');
  t.throws(() => gemm(view(new Float64Array(6), [2, 3]), view(new Float64Array(6), [2, 3]), view(new Float64Array(9), [3, 3])), {
    message: 'gemm: shapes [2, 3] x [2, 3] -> [3, 3] do not fit (expected [m, k] x [k, n] -> [m, n])',
  });
  t.end();
});

t.test('gemv kernel: both layouts of A, alpha, beta, ranges', (t) => {
  const r = rng(20);
  const [m, k] = [9, 6];
  const rowMajor = r.normal([m * k]).data as Float64Array;
  const x = view(r.normal([k]).data as Float64Array, [k]);
  const y0 = r.normal([m]).data as Float64Array;
  const colMajor = new Float64Array(m * k);
  for (let i = 0; i < m; i++) for (let p = 0; p < k; p++) colMajor[p * m + i] = rowMajor[i * k + p]!;
  const want = [...Array(m).keys()].map((i) => {
    let s = 0;
    for (let p = 0; p < k; p++) s += rowMajor[i * k + p]! * x.data[p]!;
    return 3 * s - 2 * y0[i]!;
  });
  for (const [name, a] of [['rows', view(rowMajor, [m, k])], ['columns', view(colMajor, [m, k], [1, m])]] as const) {
    const y = view(Float64Array.from(y0), [m]);
    gemv(a, x, y, 3, -2, { start: 0, end: 4 });
    gemv(a, x, y, 3, -2, { start: 4, end: m });
    t.ok(values(y).every((g, i) => Math.abs(g - want[i]!) < 1e-12), `A stored by ${name}`);
  }
  t.end();
});

t.test('tensordot and batched kernels: non-contiguous output, row ranges', (t) => {
  const r = rng(21);
  const a = view(r.normal([2 * 3 * 4]).data as Float64Array, [2, 3, 4]);
  const b = view(r.normal([4 * 5]).data as Float64Array, [4, 5]);
  const want = refTensordot({ shape: [2, 3, 4], values: values(a) }, { shape: [4, 5], values: values(b) }, [2], [0]).values;
  // An output [2, 3, 5] stored with its axes reversed cannot be seen as a [6, 5] matrix.
  const outData = new Float64Array(30);
  const out = view(outData, [2, 3, 5], [1, 2, 6]);
  t.equal(collapseToMatrix(out, 2), undefined, 'the reversed layout does not merge');
  tensordotInto(a, b, [2], [0], out);
  t.ok(values(out).every((g, i) => Math.abs(g - want[i]!) < 1e-12), 'written through a contiguous temporary');
  const x = view(r.normal([3 * 4 * 2]).data as Float64Array, [3, 4, 2]);
  const y = view(r.normal([2 * 6]).data as Float64Array, [3, 2, 6], [0, 6, 1]);
  const whole = view(new Float64Array(72), [3, 4, 6]);
  batchedMatmulInto(x, y, whole);
  const parts = view(new Float64Array(72), [3, 4, 6]);
  for (const [start, end] of [[0, 5], [5, 6], [6, 12]]) batchedMatmulInto(x, y, parts, { start: start!, end: end! });
  t.same(Array.from(parts.data), Array.from(whole.data), 'row ranges across batches add up to the whole');
  const ref = refMatmul({ shape: [3, 4, 2], values: values(x) }, { shape: [2, 6], values: values(view(y.data, [2, 6])) }).values;
  t.ok(values(whole).every((g, i) => Math.abs(g - ref[i]!) < 1e-12), 'a broadcast batch operand (stride 0)');
  t.end();
});
