// setSubtensor and incSubtensor (the copying IncSubtensor): values against hand-computed NumPy
// results and a loop-based reference, y broadcast onto the region, the input left untouched,
// inferShape, gradients with respect to x and y, Rop, and bad input with exact messages.
import t from 'tap';
import { IncSubtensor } from '../../src/tensor/shape/subtensor.js';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

const { slice } = weft;

type Bound = number | null;

/** The indices Python's a[start:stop:step] visits, by walking them one at a time. */
function pyIndices(len: number, start: Bound, stop: Bound, step: Bound): number[] {
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

const m34 = () => [
  [0, 1, 2, 3],
  [10, 11, 12, 13],
  [20, 21, 22, 23],
];

t.test('setSubtensor / incSubtensor: values (hand-computed)', async (t) => {
  const x = pt.matrix('x');
  const row = pt.tensor({ shape: [1, 4], name: 'row' });
  const cases: Array<[string, weft.pt.TensorVariable, number[][]]> = [
    ['x[1] = 5', pt.setSubtensor(x.get(1), 5), [[0, 1, 2, 3], [5, 5, 5, 5], [20, 21, 22, 23]]],
    [
      'x[:, ::-2] = [[100, 101], [102, 103], [104, 105]]',
      pt.setSubtensor(x.get(slice(), slice(null, null, -2)), [[100, 101], [102, 103], [104, 105]]),
      [[0, 101, 2, 100], [10, 103, 12, 102], [20, 105, 22, 104]],
    ],
    ['x[None, 1:, 2] = [7, 8]', pt.setSubtensor(x.get(null, slice(1, null), 2), [7, 8]), [[0, 1, 2, 3], [10, 11, 7, 13], [20, 21, 8, 23]]],
    ['x[::2] += row', pt.incSubtensor(x.get(slice(null, null, 2)), row), [[1, 3, 5, 7], [10, 11, 12, 13], [21, 23, 25, 27]]],
    ['x[-1, -1] += 0.5', pt.incSubtensor(x.get(-1, -1), 0.5), [[0, 1, 2, 3], [10, 11, 12, 13], [20, 21, 22, 23.5]]],
    ['x[2:1] += 1 (empty)', pt.incSubtensor(x.get(slice(2, 1)), 1), m34()],
    ['x[:, 1:3] += [1, 2]', pt.incSubtensor(x.get(slice(), slice(1, 3)), [1, 2]), [[0, 2, 4, 3], [10, 12, 14, 13], [20, 22, 24, 23]]],
    ['x[] = 0 (the whole tensor)', pt.setSubtensor(x.get(), 0), [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]],
  ];
  const f = await weft.compile([x, row], cases.map((c) => c[1]));
  const input = pt.constant(m34()).data;
  const outs = await f(input, [[1, 2, 3, 4]]);
  cases.forEach(([label, , want], i) => near(t, outs[i]!, want, 0, label));
  t.same(weft.tolist(input), m34(), 'the input is unchanged');
  for (const out of outs) t.not(out.data, input.data, 'each output owns new memory');

  const s = pt.scalar('s');
  near(t, await run([s], pt.setSubtensor(s.get(), 3), [1]), 3, 0, '0-d: s[()] = 3');
  near(t, await run([s], pt.incSubtensor(s.get(null), [2]), [1]), 3, 0, '0-d: s[None] += [2]');
});

t.test('setSubtensor / incSubtensor: every slice of a matrix row against a loop-based reference', async (t) => {
  const r = rng(11);
  const bounds: Bound[] = [null, -6, -2, 0, 1, 3, 6];
  const steps: Bound[] = [null, -2, -1, 1, 3];
  const x = pt.matrix('x');
  const y = pt.vector('y');
  const base = r.normal([3, 5]);
  const baseList = weft.tolist(base) as number[][];
  const bad: string[] = [];
  let checked = 0;
  for (const set of [true, false]) {
    const outs: weft.pt.TensorVariable[] = [];
    const expected: number[][][] = [];
    const ys: weft.NdArray[] = [];
    for (const s of bounds) {
      for (const e of bounds) {
        for (const k of steps) {
          const idx = pyIndices(5, s, e, k);
          const view = x.get(-2, slice(s, e, k));
          outs.push(set ? pt.setSubtensor(view, y) : pt.incSubtensor(view, y));
          const yv = r.normal([idx.length]);
          ys.push(yv);
          const want = baseList.map((row) => [...row]);
          const yl = weft.tolist(yv) as number[];
          idx.forEach((c, n) => (want[1]![c] = set ? yl[n]! : want[1]![c]! + yl[n]!));
          expected.push(want);
        }
      }
    }
    for (let n = 0; n < outs.length; n++) {
      const got = await run([x, y], outs[n]!, [base, ys[n]]);
      const flat = (weft.tolist(got) as number[][]).flat();
      const want = expected[n]!.flat();
      if (flat.some((v, q) => Math.abs(v - want[q]!) > 1e-12)) bad.push(`${set ? 'set' : 'inc'} case ${n}: got ${JSON.stringify(flat)}`);
      checked++;
    }
  }
  t.same(bad.slice(0, 5), [], `${checked} regions`);
});

t.test('setSubtensor / incSubtensor: symbolic indices, aliasing y, dtypes, non-contiguous x', async (t) => {
  const x = pt.matrix('x');
  const i = pt.scalar('i', 'int32');
  const j = pt.scalar('j', 'int32');
  const k = pt.scalar('k', 'int32');
  near(
    t,
    await run([x, i, j, k], pt.setSubtensor(x.get(i, slice(j, null, k)), -1), [m34(), -2, -1, -3]),
    [[0, 1, 2, 3], [-1, 11, 12, -1], [20, 21, 22, 23]],
    0,
    'x[i, j::k] = -1 with i = -2, j = -1, k = -3',
  );
  // y reads x itself: a shift of the rows down by one
  near(
    t,
    await run([x], pt.setSubtensor(x.get(slice(1, null)), x.get(slice(null, -1))), [m34()]),
    [[0, 1, 2, 3], [0, 1, 2, 3], [10, 11, 12, 13]],
    0,
    'x[1:] = x[:-1]',
  );
  near(t, await run([x], pt.incSubtensor(x.get(slice(1, null)), x.get(slice(null, -1))), [m34()]), [[0, 1, 2, 3], [10, 12, 14, 16], [30, 32, 34, 36]], 0, 'x[1:] += x[:-1]');

  const xi = pt.matrix('xi', 'int32');
  const y8 = pt.vector('y8', 'int8');
  const outI = await run([xi, y8], pt.incSubtensor(xi.get(0), y8), [[[1, 2], [3, 4]], [-5, 100]]);
  t.equal(outI.data.constructor.name, 'Int32Array', 'int32 += int8 stays int32');
  near(t, outI, [[-4, 102], [3, 4]], 0, 'int32 += int8');
  const xb = pt.vector('xb', 'bool');
  const yb = pt.vector('yb', 'bool');
  near(t, await run([xb, yb], pt.incSubtensor(xb.get(slice(1, null)), yb), [[true, true, false], [true, false]]), [1, 1, 0], 0, 'bool += bool is or');
  near(t, await run([xb, yb], pt.setSubtensor(xb.get(slice(null, null, -2)), yb), [[true, true, false], [true, false]]), [0, 1, 1], 0, 'bool set');
  const x32 = pt.vector('x32', 'float32');
  const o32 = pt.incSubtensor(x32.get(0), 0.5);
  t.equal(o32.dtype, 'float32', 'a literal y takes x dtype');
  near(t, await run([x32], o32, [new Float32Array([1, 2])]), [1.5, 2], 0, 'float32 += 0.5');

  // x.T is a strided view: the result is indexed the same way
  near(t, await run([x], pt.setSubtensor(x.T.get(slice(1, 3), 0), [7, 8]), [m34()]), [[0, 10, 20], [7, 11, 21], [8, 12, 22], [3, 13, 23]], 0, 'x.T[1:3, 0] = [7, 8]');
});

t.test('setSubtensor / incSubtensor: the op, its props and its perform', async (t) => {
  const x = pt.matrix('x');
  const s1 = pt.setSubtensor(x.get(1), 2);
  const s2 = pt.setSubtensor(x.get(0), 3);
  t.ok(s1.owner!.op.equals(s2.owner!.op), 'one op for any index values');
  t.notOk(s1.owner!.op.equals(pt.incSubtensor(x.get(0), 3).owner!.op), 'set and inc differ');
  t.equal(String(s1.owner!.op), 'SetSubtensor{i}');
  t.equal(String(pt.incSubtensor(x.get(slice(null, null, -1), null), 1).owner!.op), 'IncSubtensor{::step, newaxis}');
  t.same(s1.type.shape, [null, null], 'the output has x type');
  t.same(s1.owner!.op.viewMap, {}, 'not a view');
  t.same(s1.owner!.op.destroyMap, {}, 'does not overwrite x');
  t.equal(s1.owner!.inputs[0], x, 'input 0 is x, not the view');

  const node = s1.owner!;
  const xv = pt.constant(m34()).data;
  const [out] = node.op.perform(node, [xv, ...node.inputs.slice(1).map((v) => (v as weft.pt.TensorConstant).data)]) as weft.NdArray[];
  t.not(out!.data, xv.data, 'perform returns new memory');
  t.same(weft.tolist(xv), m34(), 'perform leaves x alone');
});

t.test('setSubtensor / incSubtensor: inferShape', async (t) => {
  const r = rng(4);
  const a = r.normal([4, 5]);
  const x = pt.matrix('x');
  const y = pt.vector('y');
  const i = pt.scalar('i', 'int32');
  t.equal(await weft.checkInferShape([x, y], [pt.setSubtensor(x.get(slice(1, null), 2), y)], [a, r.normal([3])], IncSubtensor), 1);
  t.equal(await weft.checkInferShape([x, i], [pt.incSubtensor(x.get(slice(i, null, -1)), 1)], [a, 2], IncSubtensor), 1);
});

t.test('setSubtensor / incSubtensor: grad with respect to x and y, and Rop', async (t) => {
  const r = rng(9);
  const a = r.normal([4, 5]);
  await weft.verifyGrad((x, y) => pt.setSubtensor(x.get(slice(1, null), slice(null, null, -2)), y), [a, r.normal([3, 3])]);
  await weft.verifyGrad((x, y) => pt.incSubtensor(x.get(slice(1, null), slice(null, null, -2)), y), [a, r.normal([3, 3])]);
  // y broadcast onto the region: along a leading axis, along a static 1, and a scalar
  await weft.verifyGrad((x, y) => pt.incSubtensor(x.get(slice(null, 3)), y), [a, r.normal([5])]);
  await weft.verifyGrad((x, y) => pt.setSubtensor(x.get(slice(null, 3)), y), [a, r.normal([1, 5])]);
  await weft.verifyGrad((x, y) => pt.incSubtensor(x.get(2, slice(-1, 0, -1)), y), [a, r.normal([])]);
  await weft.verifyGrad((x, y) => pt.setSubtensor(x.get(null, -1), y), [a, r.normal([1, 5])]);
  await weft.verifyGrad((x, y) => pt.setSubtensor(x.get(slice(1, 3)), y), [r.normal([4, 2], { dtype: 'float32' }), r.normal([2, 2], { dtype: 'float32' })]);
  await weft.checkRop((x, y) => pt.setSubtensor(x.get(slice(1, null), 2), y), [a, r.normal([3])]);
  await weft.checkRop((x, y) => pt.incSubtensor(x.get(slice(null, null, -1)), y), [a, r.normal([5])]);

  // hand-checked: d/dx sum(set(x[1:], y) * w) zeroes the region; d/dy sums the broadcast axis
  const x = pt.matrix('x');
  const y = pt.vector('y');
  const cost = pt.setSubtensor(x.get(slice(1, null)), y).sum();
  const [gx, gy] = weft.grad(cost, [x, y]);
  const [gxv, gyv] = await (await weft.compile([x, y], [gx!, gy!]))([[1, 2], [3, 4], [5, 6]], [0, 0]);
  near(t, gxv!, [[1, 1], [0, 0], [0, 0]], 0, 'gx of set');
  near(t, gyv!, [2, 2], 0, 'gy of set (summed over the broadcast axis)');
  const node = pt.setSubtensor(x.get(pt.scalar('i', 'int32')), y).owner!;
  t.same(node.op.connectionPattern!(node), [[true], [true], [false]], 'the index inputs are disconnected');
});

t.test('setSubtensor / incSubtensor: bad input', async (t) => {
  const x = pt.matrix('x');
  const xs = pt.tensor({ shape: [3, 4], name: 'xs' });
  await throwsExactly(
    t,
    () => pt.setSubtensor(x, 1),
    TypeError,
    'setSubtensor: the first argument must be the result of x.get(...), got x (TensorType(float64, (?, ?))), which is not computed by any op',
  );
  await throwsExactly(
    t,
    () => pt.incSubtensor(x.T, 1),
    TypeError,
    'incSubtensor: the first argument must be the result of x.get(...), got DimShuffle{1,0}.out (TensorType(float64, (?, ?))), the output of DimShuffle{1,0}',
  );
  await throwsExactly(
    t,
    () => pt.setSubtensor(3 as unknown as weft.pt.TensorVariable, 1),
    TypeError,
    'setSubtensor: the first argument must be the result of x.get(...), got 3',
  );
  await throwsExactly(
    t,
    () => pt.setSubtensor(xs.get(slice(1, null)), pt.tensor({ shape: [3], name: 'y3' })),
    TypeError,
    'SetSubtensor{start:}: y = y3 (TensorType(float64, (3,))) cannot be broadcast to the indexed region of static shape (2, 4): ' +
      'axis 0 of y has length 3 where the region has 4',
    'static lengths that clash',
  );
  await throwsExactly(
    t,
    () => pt.incSubtensor(x.get(0), pt.matrix('m')),
    TypeError,
    'IncSubtensor{i}: y = m (TensorType(float64, (?, ?))) cannot be broadcast to the indexed region of static shape (?,): y has 2 axes, the region 1',
    'y of higher rank',
  );
  await throwsExactly(
    t,
    () => pt.setSubtensor(pt.matrix('xi', 'int32').get(0), pt.vector('f')),
    TypeError,
    "SetSubtensor{i}: cannot set float64 values y = f into xi of dtype int32 without loss; cast y first (y.astype('int32'))",
    'dtype loss',
  );
  const y = pt.vector('y');
  await throwsExactly(
    t,
    () => run([x, y], pt.setSubtensor(x.get(slice(1, null)), y), [m34(), [1, 2, 3]]),
    weft.NodeError,
    'SetSubtensor{start:}: y of shape [3] cannot be broadcast to the indexed region of shape [2, 4]: axis 0 of y has length 3 where the region has 4' +
      '\n  in node 0: SetSubtensor{start:}(x, y, TensorConstant{1})\n  input values: float64 [3, 4], float64 [3], int32 []',
    'runtime lengths that clash',
  );
  await throwsExactly(
    t,
    () => run([x, y], pt.incSubtensor(x.get(slice(1, null)), y), [m34(), [1]]),
    weft.NodeError,
    'IncSubtensor{start:}: y of shape [1] cannot be broadcast to the indexed region of shape [2, 4]: axis 0 of y has length 1 where the region has 4' +
      ' and that axis of y is not statically broadcastable' +
      '\n  in node 0: IncSubtensor{start:}(x, y, TensorConstant{1})\n  input values: float64 [3, 4], float64 [1], int32 []',
    'runtime length 1 without a static 1',
  );
  await throwsExactly(
    t,
    () => run([x], pt.incSubtensor(x.get(3), 1), [m34()]),
    weft.NodeError,
    'IncSubtensor{i}: index 3 is out of bounds for axis 0 with length 3' +
      '\n  in node 0: IncSubtensor{i}(x, TensorConstant{1}, TensorConstant{3})\n  input values: float64 [3, 4], float64 [], int32 []',
    'index out of bounds',
  );
});
