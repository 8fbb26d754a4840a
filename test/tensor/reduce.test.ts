// Reductions (sum prod mean max min argmax argmin all any var std): values against a plain-JS
// reference that groups elements by explicit index arithmetic, dtypes, NaN and ties, empty axes,
// non-contiguous inputs, inferShape, gradients, Rop and bad input.
import ndarray from 'ndarray';
import t from 'tap';
import { ArgReduce, CAReduce } from '../../src/tensor/elemwise/reduce.js';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

type Nested = number | Nested[];
type Reducer = (block: readonly number[]) => number;
type Axis = number | number[] | null | undefined;

function flat(x: Nested): number[] {
  return Array.isArray(x) ? x.flatMap(flat) : [x];
}

function unflatten(values: readonly number[], shape: readonly number[]): Nested {
  if (shape.length === 0) return values[0]!;
  let k = 0;
  const build = (axis: number): Nested[] =>
    [...Array(shape[axis]).keys()].map(() => (axis === shape.length - 1 ? values[k++]! : build(axis + 1)));
  return build(0);
}

/**
 * The reference: every element is assigned to the block of its kept indices, in C order, so each
 * block lists its elements in C order over the reduced axes; `f` reduces a block.
 */
function reference(values: readonly number[], shape: readonly number[], axis: Axis, keepdims: boolean, f: Reducer): Nested {
  const nd = shape.length;
  const list = axis === null || axis === undefined ? [...Array(nd).keys()] : typeof axis === 'number' ? [axis] : axis;
  const axes = list.map((a) => (a < 0 ? a + nd : a));
  const kept = [...Array(nd).keys()].filter((a) => !axes.includes(a));
  const keptShape = kept.map((a) => shape[a]!);
  const blocks: number[][] = Array.from({ length: keptShape.reduce((a, b) => a * b, 1) }, () => []);
  values.forEach((v, i) => {
    const idx: number[] = [];
    let rem = i;
    for (let a = nd - 1; a >= 0; a--) {
      idx[a] = rem % shape[a]!;
      rem = Math.floor(rem / shape[a]!);
    }
    let key = 0;
    for (const a of kept) key = key * shape[a]! + idx[a]!;
    blocks[key]!.push(v);
  });
  const outShape = keepdims ? shape.map((d, a) => (axes.includes(a) ? 1 : d)) : keptShape;
  return unflatten(blocks.map(f), outShape);
}

const REF: Record<string, Reducer> = {
  sum: (b) => b.reduce((a, v) => a + v, 0),
  prod: (b) => b.reduce((a, v) => a * v, 1),
  max: (b) => (b.some(Number.isNaN) ? NaN : Math.max(...b)),
  min: (b) => (b.some(Number.isNaN) ? NaN : Math.min(...b)),
  argmax: (b) => (b.some(Number.isNaN) ? b.findIndex(Number.isNaN) : b.indexOf(Math.max(...b))),
  argmin: (b) => (b.some(Number.isNaN) ? b.findIndex(Number.isNaN) : b.indexOf(Math.min(...b))),
  all: (b) => (b.every((v) => v !== 0) ? 1 : 0),
  any: (b) => (b.some((v) => v !== 0) ? 1 : 0),
  mean: (b) => b.reduce((a, v) => a + v, 0) / b.length,
};

function variance(b: readonly number[], ddof: number): number {
  const m = b.reduce((a, v) => a + v, 0) / b.length;
  return b.reduce((a, v) => a + (v - m) ** 2, 0) / (b.length - ddof);
}

type ReduceFn = (x: weft.pt.TensorVariable, o?: weft.ReduceOptions) => weft.pt.TensorVariable;
const OPS: Record<string, ReduceFn> = {
  sum: pt.sum, prod: pt.prod, max: pt.max, min: pt.min, argmax: pt.argmax, argmin: pt.argmin,
  all: pt.all, any: pt.any, mean: pt.mean,
};

const AXES_3D: Axis[] = [undefined, null, 0, 1, 2, -1, -3, [0, 2], [2, 0], [-1, -3], [0, 1], [1, 2], [0, 1, 2], []];

t.test('hand-computed values on a matrix', async (t) => {
  const x = pt.matrix('x');
  const v = [[1, -2, 3], [4, 5, -6]];
  const cases: Array<[weft.pt.TensorVariable, Nested]> = [
    [pt.sum(x), 5],
    [pt.sum(x, { axis: 0 }), [5, 3, -3]],
    [pt.sum(x, { axis: 1 }), [2, 3]],
    [pt.sum(x, { axis: -1, keepdims: true }), [[2], [3]]],
    [pt.prod(x, { axis: 1 }), [-6, -120]],
    [pt.max(x, { axis: 0 }), [4, 5, 3]],
    [pt.min(x, { axis: 1 }), [-2, -6]],
    [pt.argmax(x, { axis: 0 }), [1, 1, 0]],
    [pt.argmin(x), 5],
    [pt.mean(x, { axis: 0 }), [2.5, 1.5, -1.5]],
    // Row means 2/3 and 1: squared deviations sum to (1 + 64 + 49) / 9 and 9 + 16 + 49.
    [pt.var(x, { axis: 1 }), [114 / 27, 74 / 3]],
    [pt.var(x, { axis: 1, ddof: 1 }), [114 / 18, 37]],
    [pt.std(x, { axis: 0 }), [1.5, 3.5, 4.5]],
    [x.sum({ axis: [0, 1], keepdims: true }), [[5]]],
    [x.max(), 5],
    [x.argmax({ axis: 1, keepdims: true }), [[2], [1]]],
  ];
  for (const [out, want] of cases) near(t, await run([x], out, [v]), want, 1e-12, String(out.owner?.op ?? out));
});

t.test('sum, prod, max, min, all, any, argmax, argmin, mean over axis sets of a 3-d input', async (t) => {
  const r = rng(11);
  const value = r.normal([2, 3, 4]);
  // Some exact zeros so that all and any see both outcomes.
  value.data[5] = 0;
  value.data[6] = 0;
  value.data[7] = 0;
  const flatValue = flat(weft.tolist(value) as Nested);
  const x = pt.tensor3('x');
  for (const [name, op] of Object.entries(OPS)) {
    for (const axis of AXES_3D) {
      for (const keepdims of [false, true]) {
        const out = await run([x], op(x, { axis, keepdims }), [value]);
        near(t, out, reference(flatValue, [2, 3, 4], axis, keepdims, REF[name]!), 1e-12, `${name} axis ${JSON.stringify(axis)} keepdims ${keepdims}`);
      }
    }
  }
});

t.test('var and std over axis sets, with ddof', async (t) => {
  const value = rng(12).normal([2, 3, 4]);
  const flatValue = flat(weft.tolist(value) as Nested);
  const x = pt.tensor3('x');
  for (const axis of AXES_3D.filter((a) => !(Array.isArray(a) && a.length === 0))) {
    for (const ddof of [0, 1]) {
      for (const keepdims of [false, true]) {
        const what = `axis ${JSON.stringify(axis)} ddof ${ddof} keepdims ${keepdims}`;
        near(t, await run([x], pt.var(x, { axis, ddof, keepdims }), [value]), reference(flatValue, [2, 3, 4], axis, keepdims, (b) => variance(b, ddof)), 1e-12, `var ${what}`);
        near(t, await run([x], x.std({ axis, ddof, keepdims }), [value]), reference(flatValue, [2, 3, 4], axis, keepdims, (b) => Math.sqrt(variance(b, ddof))), 1e-12, `std ${what}`);
      }
    }
  }
});

t.test('every axis subset of a permuted 4-d input (non-contiguous)', async (t) => {
  const value = rng(13).normal([3, 2, 5, 4]);
  const x = pt.tensor4('x');
  const y = x.dimshuffle(2, 0, 3, 1); // shape [5, 3, 4, 2], strides not in C order
  const yShape = [5, 3, 4, 2];
  const yFlat: number[] = [];
  const xs = weft.tolist(value) as number[][][][];
  for (let a = 0; a < 5; a++) for (let b = 0; b < 3; b++) for (let c = 0; c < 4; c++) for (let d = 0; d < 2; d++) yFlat.push(xs[b]![d]![a]![c]!);
  for (let mask = 0; mask < 16; mask++) {
    const axis = [0, 1, 2, 3].filter((a) => mask & (1 << a));
    for (const name of ['sum', 'max', 'argmax', 'argmin']) {
      near(t, await run([x], OPS[name]!(y, { axis }), [value]), reference(yFlat, yShape, axis, false, REF[name]!), 1e-12, `${name} axis [${axis}]`);
    }
  }
});

t.test('seeded random shapes, permutations and axis sets (length-1 axes included)', async (t) => {
  const r = rng(14);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r.random() * xs.length)]!;
  for (let c = 0; c < 30; c++) {
    const nd = 1 + Math.floor(r.random() * 4);
    const shape = [...Array(nd).keys()].map(() => pick([1, 2, 3, 5, 9]));
    const perm = [...Array(nd).keys()].sort(() => r.random() - 0.5);
    const axis = perm.filter(() => r.random() < 0.5).map((a) => (r.random() < 0.5 ? a - nd : a));
    const value = r.integers(shape, -3, 4, 'int32');
    const x = pt.tensor({ dtype: 'int32', shape: shape.map(() => null), name: 'x' });
    const y = x.transpose(...perm);
    // The reference reads the permuted input in its own C order.
    const yShape = perm.map((a) => shape[a]!);
    const xs = weft.tolist(value) as Nested;
    const yFlat = [...Array(yShape.reduce((a, b) => a * b, 1)).keys()].map((i) => {
      const idx: number[] = [];
      let rem = i;
      for (let a = nd - 1; a >= 0; a--) {
        idx[perm[a]!] = rem % yShape[a]!;
        rem = Math.floor(rem / yShape[a]!);
      }
      return idx.reduce((v: Nested, k) => (v as Nested[])[k]!, xs) as number;
    });
    for (const name of ['sum', 'prod', 'min', 'argmax', 'any']) {
      const what = `${name} of shape [${shape}] permuted [${perm}] over [${axis}]`;
      near(t, await run([x], OPS[name]!(y, { axis }), [value]), reference(yFlat, yShape, axis, false, REF[name]!), 1e-12, what);
    }
  }
});

t.test('non-contiguous and broadcast input values', async (t) => {
  const x = pt.matrix('x');
  // A transposed view: logical [[0, 3], [1, 4], [2, 5]].
  const transposed = ndarray(new Float64Array([0, 1, 2, 3, 4, 5]), [3, 2], [1, 3]);
  near(t, await run([x], pt.sum(x, { axis: 0 }), [transposed]), [3, 12]);
  near(t, await run([x], pt.sum(x, { axis: 1 }), [transposed]), [3, 5, 7]);
  near(t, await run([x], pt.argmax(x), [transposed]), 5);
  near(t, await run([x], pt.argmax(x, { axis: 0 }), [transposed]), [2, 2]);
  // A stride-0 axis: every row is [1, 2, 3, 4].
  const repeated = ndarray(new Float64Array([1, 2, 3, 4]), [3, 4], [0, 1]);
  near(t, await run([x], pt.sum(x, { axis: 0 }), [repeated]), [3, 6, 9, 12]);
  near(t, await run([x], pt.sum(x), [repeated]), 30);
  near(t, await run([x], pt.argmax(x, { axis: 0 }), [repeated]), [0, 0, 0, 0]);
  // An offset, negative-stride view: logical [[5, 4, 3], [2, 1, 0]].
  const reversed = ndarray(new Float64Array([0, 1, 2, 3, 4, 5]), [2, 3], [-3, -1], 5);
  near(t, await run([x], pt.prod(x.add(1), { axis: 1 }), [reversed]), [120, 6]);
  near(t, await run([x], pt.argmin(x, { axis: 1 }), [reversed]), [2, 2]);
  // The graph's own transpose, and tall and wide blocks (short inner axes).
  const tall = rng(3).normal([40, 3]);
  const tallFlat = flat(weft.tolist(tall) as Nested);
  for (const name of ['sum', 'max', 'argmax']) {
    near(t, await run([x], OPS[name]!(x, { axis: 0 }), [tall]), reference(tallFlat, [40, 3], 0, false, REF[name]!), 1e-12, `${name} of [40, 3] over axis 0`);
    near(t, await run([x], OPS[name]!(x.T, { axis: 1 }), [tall]), reference(tallFlat, [40, 3], 0, false, REF[name]!), 1e-12, `${name} of x.T over axis 1`);
  }
});

t.test('long blocks over the first and the last axis (four rows per pass, and the rest)', async (t) => {
  const value = rng(15).normal([13, 10]);
  value.data[5 * 10 + 2] = NaN; // in a group of four rows
  value.data[12 * 10 + 7] = NaN; // in the leftover row
  const flatValue = Array.from(value.data);
  const x = pt.matrix('x');
  for (const name of ['sum', 'prod', 'max', 'min', 'argmax', 'argmin', 'all', 'any']) {
    for (const axis of [0, 1, null]) {
      near(t, await run([x], OPS[name]!(x, { axis }), [value]), reference(flatValue, [13, 10], axis, false, REF[name]!), 1e-12, `${name} axis ${axis}`);
    }
  }
  const i16 = pt.matrix('i16', 'int16');
  const ints = rng(16).integers([9, 12], -300, 300, 'int16');
  near(t, await run([i16], pt.sum(i16, { axis: 0 }), [ints]), reference(Array.from(ints.data), [9, 12], 0, false, REF.sum!), 0, 'int16 sums');
});

t.test('0-d inputs', async (t) => {
  const s = pt.scalar('s');
  for (const [out, want] of [
    [pt.sum(s), -2.5], [pt.prod(s), -2.5], [pt.max(s), -2.5], [pt.min(s, { axis: [] }), -2.5], [pt.mean(s), -2.5],
    [pt.var(s), 0], [pt.argmax(s), 0], [pt.argmin(s), 0], [pt.all(s), 1], [pt.any(s), 1], [pt.sum(s, { keepdims: true }), -2.5],
  ] as Array<[weft.pt.TensorVariable, number]>) {
    near(t, await run([s], out, [-2.5]), want, 1e-12, String(out.owner?.op));
  }
  near(t, await run([s], pt.all(s), [0]), 0, 0, 'all of 0');
  near(t, await run([s], pt.any(s), [0]), 0, 0, 'any of 0');
});

t.test('empty axes: identities, and empty outputs', async (t) => {
  const x = pt.matrix('x');
  const e = ndarray(new Float64Array(0), [0, 3]);
  near(t, await run([x], pt.sum(x, { axis: 0 }), [e]), [0, 0, 0]);
  near(t, await run([x], pt.sum(x), [e]), 0);
  near(t, await run([x], pt.prod(x, { axis: 0 }), [e]), [1, 1, 1]);
  near(t, await run([x], pt.prod(x), [e]), 1);
  near(t, await run([x], pt.all(x), [e]), 1);
  near(t, await run([x], pt.any(x), [e]), 0);
  near(t, await run([x], pt.all(x, { axis: 0 }), [e]), [1, 1, 1]);
  near(t, await run([x], pt.mean(x, { axis: 0 }), [e]), [NaN, NaN, NaN]);
  // Reducing a non-empty axis of an empty array gives an empty result, even for max and argmax.
  near(t, await run([x], pt.sum(x, { axis: 1 }), [e]), []);
  near(t, await run([x], pt.max(x, { axis: 1 }), [e]), []);
  near(t, await run([x], pt.argmax(x, { axis: 1 }), [e]), []);
});

t.test('output dtypes', async (t) => {
  const cases: Array<[weft.Dtype, string, string, string, string]> = [
    // input, sum/prod, mean, max, storage of max
    ['int8', 'int32', 'float64', 'int8', 'Int8Array'],
    ['int16', 'int32', 'float64', 'int16', 'Int16Array'],
    ['int32', 'int32', 'float64', 'int32', 'Int32Array'],
    ['uint8', 'uint32', 'float64', 'uint8', 'Uint8Array'],
    ['uint16', 'uint32', 'float64', 'uint16', 'Uint16Array'],
    ['uint32', 'uint32', 'float64', 'uint32', 'Uint32Array'],
    ['bool', 'int32', 'float64', 'bool', 'Uint8Array'],
    ['float32', 'float32', 'float32', 'float32', 'Float32Array'],
    ['float64', 'float64', 'float64', 'float64', 'Float64Array'],
  ];
  for (const [dtype, sumDtype, meanDtype, maxDtype, maxStorage] of cases) {
    const x = pt.vector('x', dtype);
    t.equal(pt.sum(x).dtype, sumDtype, `sum of ${dtype}`);
    t.equal(pt.prod(x).dtype, sumDtype, `prod of ${dtype}`);
    t.equal(pt.mean(x).dtype, meanDtype, `mean of ${dtype}`);
    t.equal(pt.var(x).dtype, meanDtype, `var of ${dtype}`);
    t.equal(pt.max(x).dtype, maxDtype, `max of ${dtype}`);
    t.equal(pt.min(x).dtype, maxDtype, `min of ${dtype}`);
    t.equal(pt.argmax(x).dtype, 'int32', `argmax of ${dtype}`);
    t.equal(pt.all(x).dtype, 'bool', `all of ${dtype}`);
    t.equal(pt.any(x).dtype, 'bool', `any of ${dtype}`);
    const value = dtype === 'bool' ? [true, false, true] : [1, 0, 2];
    t.equal((await run([x], pt.max(x), [value])).data.constructor.name, maxStorage, `max of ${dtype}: storage`);
  }
});

t.test('integer and bool values: sums widen, means are float64', async (t) => {
  const i8 = pt.vector('i8', 'int8');
  const u8 = pt.vector('u8', 'uint8');
  const b = pt.vector('b', 'bool');
  const i16 = pt.vector('i16', 'int16');
  // 3 * 100 overflows int8 but not the int32 result; 2 * 200 overflows uint8 but not uint32.
  const s8 = await run([i8], pt.sum(i8), [[100, 100, 100]]);
  t.equal(s8.data.constructor.name, 'Int32Array');
  near(t, s8, 300);
  near(t, await run([i8], pt.prod(i8), [[100, 100, -3]]), -30000);
  near(t, await run([i8], pt.max(i8), [[-128, 127, 5]]), 127);
  near(t, await run([i8], pt.argmin(i8), [[5, -128, -128]]), 1);
  const s16 = await run([u8], pt.sum(u8), [[200, 200]]);
  t.equal(s16.data.constructor.name, 'Uint32Array');
  near(t, s16, 400);
  near(t, await run([i16], pt.sum(i16, { axis: 0 }), [[30000, 30000, -1]]), 59999);
  near(t, await run([b], pt.sum(b), [[true, true, false, true]]), 3);
  near(t, await run([b], pt.max(b), [[false, true]]), 1);
  near(t, await run([b], pt.all(b), [[true, true, false]]), 0);
  near(t, await run([b], pt.all(b), [[true, true]]), 1);
  near(t, await run([b], pt.any(b), [[false, true]]), 1);
  near(t, await run([b], pt.any(b), [[false, false]]), 0);
  const m = await run([i8], pt.mean(i8), [[1, 2]]);
  t.equal(m.data.constructor.name, 'Float64Array');
  near(t, m, 1.5);
  near(t, await run([i8], pt.var(i8), [[1, 2, 4]]), (16 / 9 + 1 / 9 + 25 / 9) / 3);
  const a = await run([u8], pt.all(u8), [[1, 2]]);
  t.equal(a.data.constructor.name, 'Uint8Array', 'bool results are stored as bytes');
});

t.test('float32: sums accumulate in float64, then round', async (t) => {
  const x = pt.vector('x', 'float32');
  // In float32 arithmetic 2^24 + 1 + 1 stays 2^24; accumulated in float64 it is 2^24 + 2 exactly.
  const s = await run([x], pt.sum(x), [new Float32Array([2 ** 24, 1, 1])]);
  t.equal(s.data.constructor.name, 'Float32Array');
  t.equal(s.data[0], 2 ** 24 + 2);
  const values = new Float32Array([0.1, 0.2, 0.3, 0.7]);
  const exact = [...values].reduce((a, v) => a + v, 0);
  t.equal((await run([x], pt.sum(x), [values])).data[0], Math.fround(exact));
  t.equal((await run([x], pt.mean(x), [values])).data[0], Math.fround(Math.fround(exact) / 4));
  t.equal((await run([x], pt.prod(x), [values])).data[0], Math.fround(values.reduce((a, v) => a * v, 1)));
  const mx = await run([x], pt.max(x), [values]);
  t.equal(mx.data.constructor.name, 'Float32Array');
  t.equal(mx.data[0], values[3]);
});

t.test('NaN: max and min propagate it, argmax and argmin return the first NaN, all and any count it as true', async (t) => {
  const x = pt.vector('x');
  for (const v of [[NaN, 1, 2], [1, NaN, 2], [1, 2, NaN], [NaN, NaN, -Infinity]]) {
    near(t, await run([x], pt.max(x), [v]), NaN, 0, `max ${v}`);
    near(t, await run([x], pt.min(x), [v]), NaN, 0, `min ${v}`);
    near(t, await run([x], pt.argmax(x), [v]), v.findIndex(Number.isNaN), 0, `argmax ${v}`);
    near(t, await run([x], pt.argmin(x), [v]), v.findIndex(Number.isNaN), 0, `argmin ${v}`);
    near(t, await run([x], pt.all(x), [v]), v.includes(0) ? 0 : 1, 0, `all ${v}`);
  }
  near(t, await run([x], pt.all(x), [[NaN, -Infinity]]), 1);
  near(t, await run([x], pt.any(x), [[0, -0, NaN]]), 1);
  near(t, await run([x], pt.any(x), [[0, -0]]), 0);
  const m = pt.matrix('m');
  const v = [[1, NaN, 3], [4, 5, 6], [NaN, NaN, 0]];
  near(t, await run([m], pt.max(m, { axis: 1 }), [v]), [NaN, 6, NaN]);
  near(t, await run([m], pt.max(m, { axis: 0 }), [v]), [NaN, NaN, 6]);
  near(t, await run([m], pt.argmax(m, { axis: 1 }), [v]), [1, 2, 0]);
  near(t, await run([m], pt.argmin(m, { axis: 0 }), [v]), [2, 0, 2]);
  near(t, await run([m], pt.argmax(m), [v]), 1);
  near(t, await run([m], pt.sum(m, { axis: 1 }), [v]), [NaN, 15, NaN]);
});

t.test('ties: the first position wins; infinities', async (t) => {
  const x = pt.vector('x');
  near(t, await run([x], pt.argmax(x), [[1, 3, 3, 2]]), 1);
  near(t, await run([x], pt.argmin(x), [[2, 1, 3, 1]]), 1);
  near(t, await run([x], pt.argmax(x), [[-Infinity, -Infinity]]), 0);
  near(t, await run([x], pt.argmin(x), [[Infinity, Infinity]]), 0);
  near(t, await run([x], pt.argmax(x), [[-Infinity, -5, Infinity]]), 2);
  near(t, await run([x], pt.max(x), [[-Infinity, -Infinity]]), -Infinity);
  near(t, await run([x], pt.min(x), [[Infinity, 3]]), 3);
  const m = pt.matrix('m');
  near(t, await run([m], pt.argmax(m, { axis: 0 }), [[[7, 1], [7, 9], [2, 9]]]), [0, 1]);
  // Ties through a transpose: m.T[0][1] and m.T[1][0] are both 7; the first in m.T's C order wins.
  const tied = [[0, 7, 0, 0, 0, 0, 0, 0, 0], [7, 0, 0, 0, 0, 0, 0, 0, 0]];
  near(t, await run([m], pt.argmax(m.T), [tied]), 1);
  near(t, await run([m], pt.argmin(m.T.neg()), [tied]), 1);
  near(t, await run([m], pt.argmax(m.T, { axis: [0, 1] }), [tied]), 1);
});

t.test('argmax over several axes: the C-order position within the reduced block', async (t) => {
  const x = pt.tensor3('x');
  const v = [
    [[0, 1, 2, 3], [4, 5, 99, 7], [8, 9, 10, 11]],
    [[12, 13, 14, 15], [16, 17, 18, 19], [-5, 21, 22, 23]],
  ];
  // Over axes 0 and 2 the block of kept index j is v[i][j][k] at position i * 4 + k.
  near(t, await run([x], pt.argmax(x, { axis: [0, 2] }), [v]), [7, 2, 7]);
  near(t, await run([x], pt.argmax(x, { axis: [2, 0] }), [v]), [7, 2, 7]);
  near(t, await run([x], pt.argmin(x, { axis: [0, 2] }), [v]), [0, 0, 4]);
  // Over axes 0 and 1 the position is i * 3 + j.
  near(t, await run([x], pt.argmax(x, { axis: [0, 1] }), [v]), [4, 5, 1, 5]);
  near(t, await run([x], pt.argmin(x, { axis: [-2, -3] }), [v]), [5, 0, 0, 0]);
  // Over all axes: the flat index, also through a transpose (of the logical order, not memory).
  near(t, await run([x], pt.argmax(x), [v]), 6);
  near(t, await run([x], pt.argmin(x), [v]), 20);
  // x.T has shape [4, 3, 2]; 99 sits at [2, 1, 0], flat index 2 * 6 + 1 * 2 + 0 = 14.
  near(t, await run([x], pt.argmax(x.T), [v]), 14);
  near(t, await run([x], pt.argmax(x, { axis: [0, 2], keepdims: true }), [v]), [[[7], [2], [7]]]);
});

t.test('static shapes and inferShape', async (t) => {
  const x = pt.tensor({ shape: [2, null, 4], name: 'x' });
  t.equal(String(pt.sum(x, { axis: 1 }).type), 'TensorType(float64, (2, 4))');
  t.equal(String(pt.max(x, { axis: [0, 2], keepdims: true }).type), 'TensorType(float64, (1, ?, 1))');
  t.equal(String(pt.argmax(x, { axis: -1 }).type), 'TensorType(int32, (2, ?))');
  t.equal(String(pt.mean(x).type), 'TensorType(float64, ())');
  const y = pt.tensor3('y');
  const value = rng(5).normal([2, 3, 4]);
  const outs = [
    pt.sum(y, { axis: 1 }), pt.prod(y, { axis: [0, 2] }), pt.max(y, { axis: -1, keepdims: true }), pt.min(y),
    pt.argmax(y, { axis: [1, 2] }), pt.argmin(y, { axis: 0, keepdims: true }), pt.all(y, { axis: 2 }), pt.any(y),
    pt.mean(y, { axis: [0, 1] }), pt.var(y, { axis: 2, ddof: 1 }), pt.std(y, { keepdims: true }),
  ];
  for (const out of outs) t.ok((await weft.checkInferShape([y], [out], [value])) >= 1, `inferShape: ${out.owner?.op}`);
  const e = ndarray(new Float64Array(0), [2, 0, 4]);
  t.ok((await weft.checkInferShape([y], [pt.sum(y, { axis: 1 }), pt.argmax(y, { axis: 2 })], [e])) >= 2, 'inferShape with an empty axis');
});

t.test('gradients: sum, mean, var, std, max, min', async (t) => {
  const r = rng(21);
  const a = r.normal([3, 4]);
  const b = r.normal([2, 3, 4]);
  for (const axis of [undefined, 0, 1, -1]) {
    await weft.verifyGrad((x) => pt.sum(x, { axis }), [a]);
    await weft.verifyGrad((x) => pt.mean(x, { axis, keepdims: true }), [a]);
    await weft.verifyGrad((x) => pt.var(x, { axis }), [a]);
    await weft.verifyGrad((x) => pt.std(x, { axis, ddof: 1 }), [a]);
    await weft.verifyGrad((x) => pt.max(x, { axis }), [a]);
    await weft.verifyGrad((x) => pt.min(x, { axis, keepdims: true }), [a]);
  }
  for (const axis of [[0, 2], [1, 2], [0, 1, 2]]) {
    await weft.verifyGrad((x) => pt.sum(x, { axis }), [b]);
    await weft.verifyGrad((x) => pt.max(x, { axis }), [b]);
    await weft.verifyGrad((x) => pt.var(x, { axis }), [b]);
  }
  await weft.verifyGrad((x) => pt.sum(x.T, { axis: 0 }), [a]);
  await weft.verifyGrad((x) => pt.mean(x), [r.normal([3, 4], { dtype: 'float32' })]);
  // The max gradient goes to the position of the maximum only.
  const x = pt.matrix('x');
  const g = weft.grad(pt.sum(pt.max(x, { axis: 1 })), x);
  near(t, await run([x], g, [[[1, 5, 2], [7, 0, 3]]]), [[0, 1, 0], [1, 0, 0]]);
  const gs = weft.grad(pt.sum(pt.sum(x, { axis: 0 }).mul([1, 2, 3])), x);
  near(t, await run([x], gs, [[[1, 5, 2], [7, 0, 3]]]), [[1, 2, 3], [1, 2, 3]]);
});

t.test('gradients: prod, without zeros, with one zero and with two zeros in a block', async (t) => {
  const r = rng(22);
  await weft.verifyGrad((x) => pt.prod(x, { axis: 1 }), [r.uniform([3, 4], { low: 0.5, high: 2 })]);
  await weft.verifyGrad((x) => pt.prod(x), [r.uniform([2, 3], { low: -2, high: 2 })]);
  await weft.verifyGrad((x) => pt.prod(x, { axis: [0, 2], keepdims: true }), [r.uniform([2, 3, 2], { low: 0.5, high: 2 })]);
  // Row 0 has one zero, row 1 two zeros, row 2 none.
  const value = [[2, 0, 3], [0, 0, 5], [1, 2, 4]];
  const point = ndarray(new Float64Array(value.flat()), [3, 3]);
  await weft.verifyGrad((x) => pt.prod(x, { axis: 1 }), [point]);
  await weft.verifyGrad((x) => pt.prod(x, { axis: 0 }), [point]);
  const x = pt.matrix('x');
  near(t, await run([x], weft.grad(pt.sum(pt.prod(x, { axis: 1 })), x), [value]), [[0, 6, 0], [0, 0, 0], [8, 4, 2]]);
  // Over axis 0: column 0 has one zero, column 1 two, column 2 none.
  near(t, await run([x], weft.grad(pt.sum(pt.prod(x, { axis: 0 })), x), [value]), [[0, 0, 20], [2, 0, 12], [0, 0, 15]]);
  near(t, await run([x], weft.grad(pt.prod(x), x), [[[1, 2], [3, 0]]]), [[0, 0], [0, 6]]);
});

t.test('Rop: sum, prod, max, min, mean', async (t) => {
  const r = rng(23);
  const a = r.normal([3, 4]);
  for (const axis of [undefined, 0, [1]]) {
    await weft.checkRop((x) => pt.sum(x, { axis }), [a]);
    await weft.checkRop((x) => pt.prod(x, { axis }), [a]);
    await weft.checkRop((x) => pt.max(x, { axis }), [a]);
    await weft.checkRop((x) => pt.min(x, { axis, keepdims: true }), [a]);
    await weft.checkRop((x) => pt.mean(x, { axis }), [a]);
  }
  await weft.checkRop((x) => pt.prod(x, { axis: 1 }), [ndarray(new Float64Array([2, 0, 3, 0, 0, 5]), [2, 3])]);
});

t.test('bad axes are refused with exact messages', async (t) => {
  const x = pt.tensor3('x');
  const s = pt.scalar('s');
  await throwsExactly(t, () => pt.sum(x, { axis: 3 }), RangeError, 'sum: axis 3 is out of range for a 3-d input (axes are -3..2)');
  await throwsExactly(t, () => x.max({ axis: [0, -4] }), RangeError, 'max: axis -4 is out of range for a 3-d input (axes are -3..2)');
  await throwsExactly(t, () => pt.argmax(x, { axis: 5 }), RangeError, 'argmax: axis 5 is out of range for a 3-d input (axes are -3..2)');
  await throwsExactly(t, () => pt.sum(s, { axis: 0 }), RangeError, 'sum: axis 0 is out of range for a 0-d input (it has no axes)');
  await throwsExactly(t, () => pt.sum(x, { axis: [0, -3] }), RangeError, 'sum: axis [0, -3] repeats an axis');
  await throwsExactly(t, () => pt.argmin(x, { axis: [1, 1] }), RangeError, 'argmin: axis [1, 1] repeats an axis');
  await throwsExactly(t, () => pt.mean(x, { axis: [2, -1] }), RangeError, 'mean: axis [2, -1] repeats an axis');
  await throwsExactly(t, () => pt.std(x, { axis: 4 }), RangeError, 'std: axis 4 is out of range for a 3-d input (axes are -3..2)');
  await throwsExactly(t, () => pt.var(x, { axis: 0.5 }), TypeError, 'var: axis 0.5 is not an integer');
});

t.test('max, min, argmax and argmin over an empty axis fail at run time', async (t) => {
  const x = pt.matrix('x');
  const e = ndarray(new Float64Array(0), [0, 3]);
  const tail = '\n  in node 0: %s(x)\n  input values: float64 [0, 3]';
  await throwsExactly(t, () => run([x], pt.max(x, { axis: 0 }), [e]), weft.NodeError,
    'Max{axis=[0]}: axis 0 has length 0, and the maximum of no elements is undefined' + tail.replace('%s', 'Max{axis=[0]}'));
  await throwsExactly(t, () => run([x], pt.min(x), [e]), weft.NodeError,
    'Min{axis=[0,1]}: axis 0 has length 0, and the minimum of no elements is undefined' + tail.replace('%s', 'Min{axis=[0,1]}'));
  await throwsExactly(t, () => run([x], pt.argmax(x, { axis: 0 }), [e]), weft.NodeError,
    'Argmax{axis=[0]}: axis 0 has length 0, so there is no position to return' + tail.replace('%s', 'Argmax{axis=[0]}'));
  await throwsExactly(t, () => run([x], pt.argmin(x), [e]), weft.NodeError,
    'Argmin{axis=[0,1]}: axis 0 has length 0, so there is no position to return' + tail.replace('%s', 'Argmin{axis=[0,1]}'));
});

t.test('the ops keep their axes normalized', async (t) => {
  t.ok(new CAReduce('sum', [2, 0]).equals(new CAReduce('sum', [0, 2])), 'axis order does not matter');
  t.notOk(new CAReduce('sum', [0]).equals(new CAReduce('prod', [0])));
  t.equal(String(new CAReduce('max', [2, 0])), 'Max{axis=[0,2]}');
  t.equal(pt.sum(pt.tensor3(), { axis: [2, -3] }).owner!.op.equals(new CAReduce('sum', [0, 2])), true);
  await throwsExactly(t, () => new CAReduce('sum', [0, 0]), RangeError, 'Sum: axes must be distinct non-negative integers, got [0, 0] (normalize them first)');
  await throwsExactly(t, () => new ArgReduce('min', [-1]), RangeError, 'Argmin: axes must be distinct non-negative integers, got [-1] (normalize them first)');
  await throwsExactly(t, () => new CAReduce('any', [3]).call(pt.matrix('m')), RangeError,
    'Any{axis=[3]}: axis [3] is out of range for m (TensorType(float64, (?, ?)))');
  await throwsExactly(t, () => new ArgReduce('max', [2]).call(pt.vector('v')), RangeError,
    'Argmax{axis=[2]}: axis [2] is out of range for v (TensorType(float64, (?,)))');
});
