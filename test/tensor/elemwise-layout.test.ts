// Element-wise ops over memory layouts: broadcasting with static 1s, rank padding, 0-d and empty
// arrays, non-contiguous inputs (x.T, dimshuffle, reversed slices), inferShape; and the kernel
// itself: the contiguous fast loop and the strided general loop must give identical results for
// any layout and any split of the work into ranges.
import t from 'tap';
import { STORAGE, type Dtype } from '../../src/kernels/dtype.js';
import { runElemwise } from '../../src/kernels/elemwise.js';
import type { TensorView } from '../../src/kernels/view.js';
import { Elemwise } from '../../src/tensor/elemwise/elemwise.js';
import { near, pt, rng, run, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
const r = rng(5);

/** Nested arrays of a function of the index, for expectations. */
function tabulate(shape: readonly number[], f: (idx: number[]) => number): unknown {
  const build = (prefix: number[]): unknown =>
    prefix.length === shape.length ? f(prefix) : Array.from({ length: shape[prefix.length]! }, (_, i) => build([...prefix, i]));
  return build([]);
}

t.test('non-contiguous inputs: transpose and dimshuffle with a new axis', async (t) => {
  const x = pt.matrix('x');
  const y = pt.tensor3('y');
  const xv = [[1, 2], [3, 4], [5, 6]]; // (3, 2)
  const yv = tabulate([2, 4, 3], ([i, j, k]) => 100 * i! + 10 * j! + k!) as number[][][];
  // x.dimshuffle(1, 'x', 0) has shape (2, 1, 3) and strides (1, 0, 2): broadcast along axis 1
  const out = await run([x, y], pt.add(x.dimshuffle(1, 'x', 0), y), [xv, yv]);
  near(t, out, tabulate([2, 4, 3], ([i, j, k]) => xv[k!]![i!]! + yv[i!]![j!]![k!]!) as number[][][], 0);
  const out2 = await run([x], pt.mul(x.T, x.T), [xv]);
  near(t, out2, [[1, 9, 25], [4, 16, 36]], 0);
  const out3 = await run([x], pt.sub(x, x.T.T), [xv]);
  near(t, out3, [[0, 0], [0, 0], [0, 0]], 0);
});

t.test('non-contiguous inputs: reversed and strided slices', async (t) => {
  const x = pt.vector('x');
  const m = pt.matrix('m');
  near(t, await run([x], pt.add(x.get(weft.slice(null, null, -1)), x), [[1, 2, 3, 4]]), [5, 5, 5, 5], 0);
  near(t, await run([x], pt.mul(x.get(weft.slice(null, null, 2)), 10), [[1, 2, 3, 4, 5]]), [10, 30, 50], 0);
  const mv = [[1, 2, 3], [4, 5, 6]];
  near(t, await run([m], pt.neg(m.get(weft.slice(null, null, -1), weft.slice(null, null, -2))), [mv]), [[-6, -4], [-3, -1]], 0);
  near(t, await run([m], pt.maximum(m.get(weft.slice(null, null, -1)), m), [mv]), [[4, 5, 6], [4, 5, 6]], 0);
});

t.test('broadcasting: static 1s, rank padding, 0-d, empty', async (t) => {
  const m = pt.matrix('m');
  const v = pt.vector('v');
  const s = pt.scalar('s');
  const col = pt.tensor({ shape: [null, 1], name: 'col' });
  const mv = [[1, 2, 3], [4, 5, 6]];
  near(t, await run([m, v], pt.add(m, v), [mv, [10, 20, 30]]), [[11, 22, 33], [14, 25, 36]], 0);
  near(t, await run([m, s], pt.mul(m, s), [mv, 2]), [[2, 4, 6], [8, 10, 12]], 0);
  near(t, await run([m, col], pt.sub(m, col), [mv, [[1], [4]]]), [[0, 1, 2], [0, 1, 2]], 0);
  near(t, await run([v, col], pt.add(v, col), [[1, 2, 3], [[10], [20]]]), [[11, 12, 13], [21, 22, 23]], 0);
  near(t, await run([s], pt.add(s, s), [1.5]), 3, 0);
  t.equal(pt.add(s, s).ndim, 0);
  t.same(pt.add(m, v).type.shape, [null, null]);
  t.same(pt.add(col, pt.tensor({ shape: [1, 4] })).type.shape, [null, 4]);
  t.same(pt.add(pt.tensor({ shape: [1, 1] }), s).type.shape, [1, 1]);
  // empty arrays broadcast like any other length
  const e = await run([m, col], pt.add(m, col), [[[], []], [[1], [2]]]);
  t.same(e.shape, [2, 0]);
  const zeroRows = pt.tensor({ shape: [null, 3], name: 'z' });
  const e2 = await run([zeroRows, v], pt.mul(zeroRows, v), [r.normal([0, 3]), [1, 2, 3]]);
  t.same(e2.shape, [0, 3]);
  const e3 = await run([zeroRows, s], pt.add(zeroRows, s), [r.normal([0, 3]), 1]);
  t.same(e3.shape, [0, 3]);
});

t.test('inferShape with unknown lengths and rank padding', async (t) => {
  const m = pt.matrix('m');
  const v = pt.vector('v');
  const row = pt.tensor({ shape: [1, null], name: 'row' });
  const c = pt.tensor({ shape: [null, 1], name: 'c' });
  const values = [r.normal([3, 4]), r.normal([4]), r.normal([1, 4]), r.normal([3, 1])];
  t.ok((await weft.checkInferShape([m, v, row, c], [pt.add(m, v), pt.mul(row, c), pt.clip(m, row, c), pt.where(pt.gt(c, 0), row, v)], values)) >= 4);
  t.ok((await weft.checkInferShape([row, c], [pt.add(row, c)], [r.normal([1, 4]), r.normal([3, 1])], Elemwise)) === 1);
});

t.test('the output is a new array; inputs are left unchanged', async (t) => {
  const x = pt.vector('x');
  const value = new Float64Array([1, 2, 3]);
  const fn = await weft.compile([x], pt.exp(x));
  const out = await fn(value);
  t.same([...value], [1, 2, 3]);
  t.not(out.data.buffer, value.buffer);
});

// ---------------------------------------------------------------------------------------------
// The kernel: fast and general loops on the same values in different layouts

interface Layout {
  readonly name: string;
  /** Order in which the axes are laid out in memory (outermost first). */
  readonly order: readonly number[];
  /** Axes stored backwards (negative strides). */
  readonly reversed?: readonly number[];
  /** Elements before the first one. */
  readonly pad?: number;
}

/** A view of `values` (C order over `shape`) stored with the given layout. */
function viewOf(dtype: Dtype, shape: readonly number[], values: ArrayLike<number>, layout: Layout): TensorView {
  const nd = shape.length;
  const pad = layout.pad ?? 0;
  const n = shape.reduce((p, d) => p * d, 1);
  const stride = new Array<number>(nd).fill(0);
  let acc = 1;
  for (let k = nd - 1; k >= 0; k--) {
    stride[layout.order[k]!] = acc;
    acc *= shape[layout.order[k]!]!;
  }
  let offset = pad;
  for (const a of layout.reversed ?? []) {
    offset += (shape[a]! - 1) * stride[a]!;
    stride[a] = -stride[a]!;
  }
  const data = new STORAGE[dtype](n + 2 * pad);
  const idx = new Array<number>(nd).fill(0);
  for (let i = 0; i < n; i++) {
    let pos = offset;
    for (let a = 0; a < nd; a++) pos += idx[a]! * stride[a]!;
    data[pos] = values[i]!;
    for (let a = nd - 1; a >= 0; a--) {
      if (++idx[a]! < shape[a]!) break;
      idx[a] = 0;
    }
  }
  return { data, offset, shape, stride };
}

/** The elements of a view in C order. */
function read(v: TensorView): number[] {
  const n = v.shape.reduce((p, d) => p * d, 1);
  const out: number[] = [];
  const idx = new Array<number>(v.shape.length).fill(0);
  for (let i = 0; i < n; i++) {
    let pos = v.offset;
    idx.forEach((j, a) => (pos += j * v.stride[a]!));
    out.push(v.data[pos]!);
    for (let a = v.shape.length - 1; a >= 0; a--) {
      if (++idx[a]! < v.shape[a]!) break;
      idx[a] = 0;
    }
  }
  return out;
}

const LAYOUTS: readonly Layout[] = [
  { name: 'C order', order: [0, 1, 2] },
  { name: 'C order with an offset', order: [0, 1, 2], pad: 3 },
  { name: 'Fortran order', order: [2, 1, 0] },
  { name: 'permuted', order: [1, 2, 0] },
  { name: 'reversed axes', order: [0, 1, 2], reversed: [0, 2] },
  { name: 'permuted and reversed', order: [2, 0, 1], reversed: [1], pad: 1 },
];

type Build = (xs: TV[]) => TV;
const KERNEL_OPS: ReadonlyArray<[string, Dtype[], Build]> = [
  ['add', ['float64', 'float64'], ([a, b]) => pt.add(a!, b!)],
  ['mul float32', ['float32', 'float32'], ([a, b]) => pt.mul(a!, b!)],
  ['mul int32', ['int32', 'int32'], ([a, b]) => pt.mul(a!, b!)],
  ['mod int8 uint8', ['int8', 'uint8'], ([a, b]) => pt.mod(a!, b!)],
  ['pow', ['float64', 'float64'], ([a, b]) => pt.pow(a!, b!)],
  ['erf', ['float64'], ([a]) => pt.erf(a!)],
  ['where', ['bool', 'float32', 'float64'], ([c, a, b]) => pt.where(c!, a!, b!)],
  ['lt uint16 int16', ['uint16', 'int16'], ([a, b]) => pt.lt(a!, b!)],
  ['cast to uint8', ['float64'], ([a]) => pt.cast(a!, 'uint8')],
];

function randomValues(dtype: Dtype, n: number): number[] {
  const values: number[] = [];
  for (let i = 0; i < n; i++) {
    const u = r.random();
    values.push(dtype === 'bool' ? (u < 0.5 ? 0 : 1) : dtype.startsWith('float') ? 20 * u - 10 : Math.floor(u * 200) - (dtype.startsWith('u') ? 0 : 100));
  }
  return values;
}

t.test('kernel: fast and general loops agree bit for bit over layouts and ranges', async (t) => {
  const shape = [3, 4, 5];
  const n = 60;
  for (const [name, dtypes, build] of KERNEL_OPS) {
    const vars = dtypes.map((d, i) => pt.tensor3(`x${i}`, d));
    const node = build(vars).owner!;
    const op = node.op as Elemwise;
    const src = op.source(node);
    const outDtype = (node.outputs[0] as TV).dtype;
    const values = dtypes.map((d) => randomValues(d, n));
    const run1 = (layout: Layout, outLayout: Layout, ranges: ReadonlyArray<[number, number]>): number[] => {
      const ins = dtypes.map((d, i) => viewOf(d, shape, values[i]!, layout));
      const out = viewOf(outDtype, shape, new Array<number>(n).fill(0), outLayout);
      for (const [start, end] of ranges) runElemwise(src, ins, [out], { start, end });
      return read(out);
    };
    const reference = run1(LAYOUTS[0]!, LAYOUTS[0]!, [[0, n]]);
    const failures: string[] = [];
    for (const layout of LAYOUTS) {
      for (const outLayout of [LAYOUTS[0]!, LAYOUTS[3]!]) {
        for (const ranges of [[[0, n]], [[0, 7], [7, 33], [33, 60]], [[0, 1], [1, 59], [59, 60]]] as Array<Array<[number, number]>>) {
          const got = run1(layout, outLayout, ranges);
          if (got.some((g, i) => !Object.is(g, reference[i]))) failures.push(`${layout.name} -> ${outLayout.name}, ranges ${JSON.stringify(ranges)}`);
        }
      }
    }
    t.same(failures, [], `${name}: identical results`);
  }
});

t.test('kernel: broadcast scalars on the fast path agree with stride-0 views on the general path', async (t) => {
  const x = pt.matrix('x');
  const s = pt.tensor({ shape: [1, 1], name: 's' });
  const node = pt.add(x, s).owner!;
  const src = (node.op as Elemwise).source(node);
  const values = randomValues('float64', 12);
  const xs = viewOf('float64', [3, 4], values, { name: 'C', order: [0, 1] });
  const xt = viewOf('float64', [3, 4], values, { name: 'F', order: [1, 0] });
  const scalar: TensorView = { data: new Float64Array([0.125]), offset: 0, shape: [3, 4], stride: [0, 0] };
  const a = viewOf('float64', [3, 4], new Array<number>(12).fill(0), { name: 'C', order: [0, 1] });
  const b = viewOf('float64', [3, 4], new Array<number>(12).fill(0), { name: 'C', order: [0, 1] });
  runElemwise(src, [xs, scalar], [a]); // contiguous + scalar: fast loop
  runElemwise(src, [xt, scalar], [b]); // transposed: general loop
  t.same(read(a), read(b));
  t.same(read(a), values.map((v) => v + 0.125));
  // 0-d and empty outputs
  const z: TensorView = { data: new Float64Array(1), offset: 0, shape: [], stride: [] };
  runElemwise(src, [{ data: new Float64Array([2]), offset: 0, shape: [], stride: [] }, { data: new Float64Array([3]), offset: 0, shape: [], stride: [] }], [z]);
  t.equal(z.data[0], 5);
  const empty: TensorView = { data: new Float64Array(0), offset: 0, shape: [0, 4], stride: [4, 1] };
  runElemwise(src, [empty, { ...scalar, shape: [0, 4] }], [empty]);
  t.pass('an empty output runs no iteration');
});

t.test('kernel: blocks repeated along leading axes and elements repeated along trailing axes', async (t) => {
  // Inputs broadcast to [3, 4, 5] by stride 0: a bias-like block read as element i mod P, a
  // column-like input read as element i / P, and one the fast path cannot flatten ([0, 1, 0]).
  const shape = [3, 4, 5];
  const n = 60;
  const node = pt.sub(pt.tensor3('x0'), pt.tensor3('x1')).owner!;
  const src = (node.op as Elemwise).source(node);
  const cases: ReadonlyArray<[string, readonly number[]]> = [
    ['row of 20 repeated', [0, 5, 1]],
    ['row of 5 repeated', [0, 0, 1]],
    ['each of 3 repeated 20 times', [1, 0, 0]],
    ['each of 12 repeated 5 times', [4, 1, 0]],
    ['middle axis only', [0, 1, 0]],
    ['scalar', [0, 0, 0]],
  ];
  const dense = randomValues('float64', n);
  const contiguous = viewOf('float64', shape, dense, LAYOUTS[0]!);
  const at = (stride: readonly number[], i: number): number => {
    const idx = [Math.floor(i / 20), Math.floor(i / 5) % 4, i % 5];
    return idx.reduce((p, j, a) => p + j * stride[a]!, 0);
  };
  const column = new Float64Array(randomValues('float64', 12));
  const each12: TensorView = { data: column, offset: 0, shape, stride: [4, 1, 0] };
  for (const [name, stride] of cases) {
    // An offset, so that reads must start from the view's offset.
    const data = new Float64Array([99, ...randomValues('float64', 20)]);
    const broadcast: TensorView = { data, offset: 1, shape, stride };
    const value = (i: number): number => data[1 + at(stride, i)]!;
    const pairs: ReadonlyArray<[string, TensorView, (i: number) => number]> = [
      ['minus a contiguous input', contiguous, (i) => dense[i]!],
      ['minus each of 12 repeated', each12, (i) => column[at([4, 1, 0], i)]!],
    ];
    for (const [second, other, otherValue] of pairs) {
      const want = Array.from({ length: n }, (_, i) => value(i) - otherValue(i));
      for (const outLayout of [LAYOUTS[0]!, LAYOUTS[3]!]) {
        for (const ranges of [[[0, n]], [[0, 7], [7, 33], [33, 60]], [[0, 1], [1, 59], [59, 60]]] as Array<Array<[number, number]>>) {
          const out = viewOf('float64', shape, new Array<number>(n).fill(0), outLayout);
          for (const [start, end] of ranges) runElemwise(src, [broadcast, other], [out], { start, end });
          const got = read(out);
          t.ok(got.every((g, i) => Object.is(g, want[i])), `${name} ${second} -> ${outLayout.name}, ranges ${JSON.stringify(ranges)}`);
        }
      }
    }
  }
});

t.test('large arrays: the compiled function on contiguous and transposed inputs', async (t) => {
  const a = r.normal([300, 200]);
  const b = r.normal([200, 300]);
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const f = await weft.compile([x, y], pt.add(pt.mul(x, 2), pt.exp(y.T)));
  const out = await f(a, b);
  let bad = 0;
  for (let i = 0; i < 300; i++) {
    for (let j = 0; j < 200; j++) {
      const want = a.data[i * 200 + j]! * 2 + Math.exp(b.data[j * 300 + i]!);
      if (out.data[i * 200 + j] !== want) bad++;
    }
  }
  t.equal(bad, 0);
});

t.test('an inplace Elemwise writes into the input it destroys when it can', async (t) => {
  const x = pt.matrix('x');
  const y = pt.tensor({ shape: [1, null], name: 'y' });
  const scalarAdd = (pt.add(x, y).owner!.op as Elemwise).scalarOp;
  const inplace = new Elemwise(scalarAdd, { 0: 0 });
  t.same(inplace.destroyMap, { 0: [0] });
  t.equal(String(inplace), 'Elemwise{add,inplace}');
  const node = inplace.call(x, y).owner!;
  const a = r.normal([2, 3]);
  const before = [...a.data];
  const b = r.normal([1, 3]);
  const [out] = inplace.perform(node, [a, b]);
  t.equal(out, a, 'the output is the destroyed input');
  t.same([...a.data], before.map((v, k) => v + b.data[k % 3]!));
  // the broadcast input cannot hold the output: a new array
  const node2 = new Elemwise(scalarAdd, { 0: 1 }).call(x, y).owner!;
  const [out2] = (node2.op as Elemwise).perform(node2, [a, b]);
  t.not(out2, b);
  t.same(out2!.shape, [2, 3]);
});
