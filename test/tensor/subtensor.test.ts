// Subtensor (x.get): values against hand-computed NumPy results and a loop-based reference of
// Python slicing, views that share the input's data, static and inferred shapes, gradients, Rop,
// and bad input with exact messages. setSubtensor / incSubtensor are in subtensor-inc.test.ts.
import t from 'tap';
import { Subtensor } from '../../src/tensor/shape/subtensor.js';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

const { slice } = weft;

type Bound = number | null;

/** The indices Python's a[start:stop:step] visits, by walking them one at a time. */
function pyIndices(len: number, start: Bound, stop: Bound, step: Bound): number[] {
  const k = step ?? 1;
  const norm = (b: number, lo: number, hi: number): number => {
    let v = b < 0 ? b + len : b;
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return v;
  };
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

const m34 = [
  [0, 1, 2, 3],
  [10, 11, 12, 13],
  [20, 21, 22, 23],
];

t.test('get: integers, slices, negative steps, clipped and empty slices (hand-computed)', async (t) => {
  const x = pt.matrix('x');
  const cases: Array<[string, weft.pt.TensorVariable, unknown]> = [
    ['x[1]', x.get(1), [10, 11, 12, 13]],
    ['x[-1]', x.get(-1), [20, 21, 22, 23]],
    ['x[1, 2]', x.get(1, 2), 12],
    ['x[-3, -4]', x.get(-3, -4), 0],
    ['x[:, 1]', x.get(slice(), 1), [1, 11, 21]],
    ['x[1:]', x.get(slice(1, null)), [[10, 11, 12, 13], [20, 21, 22, 23]]],
    ['x[:2, ::2]', x.get(slice(2), slice(null, null, 2)), [[0, 2], [10, 12]]],
    ['x[::-1, -1]', x.get(slice(null, null, -1), -1), [23, 13, 3]],
    ['x[2, 3:0:-2]', x.get(2, slice(3, 0, -2)), [23, 21]],
    ['x[-10:10, 1]', x.get(slice(-10, 10), 1), [1, 11, 21]],
    ['x[10:-10:-1, 0]', x.get(slice(10, -10, -1), 0), [20, 10, 0]],
    ['x[2:1]', x.get(slice(2, 1)), '[0,4]'],
    ['x[1:2:-1, 0]', x.get(slice(1, 2, -1), 0), '[0]'],
    ['x[:, 5:]', x.get(slice(), slice(5, null)), '[3,0]'],
    ['x[1, ::3]', x.get(1, slice(null, null, 3)), [10, 13]],
    ['x[-1e12:1e12, 0] (bounds beyond int32 clip)', x.get(slice(-1e12, 1e12), 0), [0, 10, 20]],
    ['x[-1:-3:-1, -2:]', x.get(slice(-1, -3, -1), slice(-2, null)), [[22, 23], [12, 13]]],
  ];
  const f = await weft.compile([x], cases.map((c) => c[1]));
  const outs = await f(m34);
  cases.forEach(([label, , want], i) => {
    if (typeof want === 'string') t.same(outs[i]!.shape, JSON.parse(want), `${label}: empty, shape ${want}`);
    else near(t, outs[i]!, want as number, 0, label);
  });
});

t.test('get: new axes, 0-d results, fewer entries than axes, tensor3', async (t) => {
  const x = pt.tensor3('x');
  const v = [...Array(24).keys()];
  const nested = [0, 1].map((a) => [0, 1, 2].map((b) => [0, 1, 2, 3].map((c) => v[a * 12 + b * 4 + c]!)));
  const cases: Array<[string, weft.pt.TensorVariable, Array<number | null>]> = [
    ['x[1]', x.get(1), [null, null]],
    ['x[None]', x.get(null), [1, null, null, null]],
    ['x[:, None, 2]', x.get(slice(), null, 2), [null, 1, null]],
    ['x[1, 2, 3]', x.get(1, 2, 3), []],
    ['x[1, None, 2, None, 3, None]', x.get(1, null, 2, null, 3, null), [1, 1, 1]],
    ['x[:, ::-1]', x.get(slice(), slice(null, null, -1)), [null, null, null]],
  ];
  for (const [label, e, shape] of cases) t.same(e.type.shape, shape, `${label}: static shape`);
  const outs = await weft.compile([x], cases.map((c) => c[1])).then((f) => f(nested));
  near(t, outs[0]!, nested[1]!, 0, 'x[1]');
  near(t, outs[1]!, [nested], 0, 'x[None]');
  near(t, outs[2]!, [[nested[0]![2]!], [nested[1]![2]!]], 0, 'x[:, None, 2]');
  t.same(outs[3]!.shape, [], 'x[1, 2, 3]: 0-d');
  t.equal(weft.tolist(outs[3]!), 23, 'x[1, 2, 3]: value');
  near(t, outs[4]!, [[[23]]], 0, 'x[1, None, 2, None, 3, None]');
  near(t, outs[5]!, nested.map((m) => [...m].reverse()), 0, 'x[:, ::-1]');
  // a vector indexed to 0-d, and a 0-d tensor indexed by nothing or by new axes
  const s = pt.scalar('s');
  const w = pt.vector('w');
  near(t, await run([w], w.get(-2), [[5, 6, 7]]), 6, 0, 'w[-2]');
  near(t, await run([s], s.get(), [4.5]), 4.5, 0, 's[()]');
  near(t, await run([s], s.get(null, null), [4.5]), [[4.5]], 0, 's[None, None]');
});

t.test('get: every slice of short vectors against a loop-based reference (constant bounds)', async (t) => {
  const bounds: Bound[] = [null, -7, -5, -3, -2, -1, 0, 1, 2, 3, 5, 7];
  const steps: Bound[] = [null, -3, -2, -1, 1, 2, 3];
  let checked = 0;
  const bad: string[] = [];
  for (const n of [0, 1, 2, 5]) {
    const data = [...Array(n).keys()].map((i) => i * 10 + 1);
    const x = pt.tensor({ shape: [n], name: 'x' });
    const outs: weft.pt.TensorVariable[] = [];
    const wants: number[][] = [];
    for (const s of bounds) {
      for (const e of bounds) {
        for (const k of steps) {
          const out = x.get(slice(s, e, k));
          const want = pyIndices(n, s, e, k).map((i) => data[i]!);
          if (out.type.shape[0] !== want.length) bad.push(`n=${n} [${s}:${e}:${k}] static length ${out.type.shape[0]}, expected ${want.length}`);
          outs.push(out);
          wants.push(want);
        }
      }
    }
    const got = await (await weft.compile([x], outs))(data);
    got.forEach((g, i) => {
      const list = weft.tolist(g) as number[];
      if (JSON.stringify(list) !== JSON.stringify(wants[i])) bad.push(`n=${n} case ${i}: got ${JSON.stringify(list)}, expected ${JSON.stringify(wants[i])}`);
      checked++;
    });
  }
  t.same(bad.slice(0, 5), [], `${checked} slices: values and static lengths`);
});

t.test('get: symbolic bounds and steps against the reference, values and inferShape', async (t) => {
  const x = pt.vector('x');
  const a = pt.scalar('a', 'int32');
  const b = pt.scalar('b', 'int32');
  const c = pt.scalar('c', 'int32');
  const vals: number[] = [-7, -4, -2, -1, 0, 1, 2, 4, 7];
  const steps: number[] = [-3, -2, -1, 1, 2, 3];
  const bad: string[] = [];
  let checked = 0;
  // every presence pattern of the three bounds, each compiled once with its inferred length
  for (let mask = 0; mask < 8; mask++) {
    const has = [mask & 1, mask & 2, mask & 4].map(Boolean) as [boolean, boolean, boolean];
    const out = x.get(slice(has[0] ? a : null, has[1] ? b : null, has[2] ? c : null));
    t.same(out.type.shape, [null], `mask ${mask}: unknown static length`);
    const node = out.owner!;
    const [len] = node.op.inferShape!(node, [[pt.shape(x).get(0)]]) as weft.pt.TensorVariable[][];
    const fn = await weft.compile([x, a, b, c], [out, len![0]!], { onUnusedInput: 'ignore' });
    for (const n of [0, 1, 3, 5]) {
      const data = [...Array(n).keys()].map((i) => i + 100);
      for (const s of has[0] ? vals : [0]) {
        for (const e of has[1] ? vals : [0]) {
          for (const k of has[2] ? steps : [1]) {
            const [got, inferred] = await fn(data, s, e, k);
            const want = pyIndices(n, has[0] ? s : null, has[1] ? e : null, has[2] ? k : null).map((i) => data[i]!);
            const list = weft.tolist(got!) as number[];
            if (JSON.stringify(list) !== JSON.stringify(want)) bad.push(`n=${n} mask=${mask} [${s}:${e}:${k}] got ${JSON.stringify(list)}, expected ${JSON.stringify(want)}`);
            if (weft.tolist(inferred!) !== want.length) bad.push(`n=${n} mask=${mask} [${s}:${e}:${k}] inferred ${weft.tolist(inferred!)}, expected ${want.length}`);
            checked++;
          }
        }
      }
    }
  }
  t.same(bad.slice(0, 5), [], `${checked} symbolic slices: values and inferred lengths`);
});

t.test('get: symbolic integer indices, of any integer dtype, and constants', async (t) => {
  const x = pt.matrix('x');
  const i = pt.scalar('i', 'int32');
  const j = pt.scalar('j', 'uint8');
  const f = await weft.compile([x, i, j], [x.get(i), x.get(i, j), x.get(slice(), pt.constant(2, { dtype: 'int8' }))]);
  const [r, e, col] = await f(m34, -1, 3);
  near(t, r!, [20, 21, 22, 23], 0, 'x[i], i = -1');
  near(t, e!, 23, 0, 'x[i, j]');
  near(t, col!, [2, 12, 22], 0, 'x[:, int8 constant 2]');
  t.equal((x.get(i, j).owner!.inputs[2]!.type as weft.TensorType).dtype, 'int32', 'index inputs are int32 (a uint8 index is cast)');
  t.equal(x.get(slice(), pt.constant(2, { dtype: 'int8' })).type.shape[0], null, 'static length of an unknown axis stays unknown');
});

t.test('get: the op holds the index structure; values are inputs', async (t) => {
  const x = pt.matrix('x');
  const g1 = x.get(1);
  const g2 = x.get(2);
  t.ok(g1.owner!.op.equals(g2.owner!.op), 'x.get(1) and x.get(2) are the same op');
  t.not(g1.owner!.inputs[1], g2.owner!.inputs[1], 'on different index inputs');
  t.ok(x.get(1, slice()).owner!.op.equals(g1.owner!.op), 'trailing full slices are dropped');
  t.notOk(x.get(slice(1, null)).owner!.op.equals(x.get(slice(null, 1)).owner!.op), '1: and :1 differ');
  t.equal(String(x.get(1, slice(null, null, -1)).owner!.op), 'Subtensor{i, ::step}');
  t.equal(String(x.get(null, slice(1, 2)).owner!.op), 'Subtensor{newaxis, start:stop}');
  t.same(g1.owner!.op.viewMap, { 0: [0] }, 'a view of input 0');
  t.same(pt.tensor({ shape: [3, 4] }).get(slice(null, null, -2), null, 1).type.shape, [2, 1], 'static shape from constant indices');
  t.same(pt.tensor({ shape: [null, 4] }).get(slice(), slice(1, -1)).type.shape, [null, 2], 'static shape per axis');
});

t.test('get: the perform result is a view of the input; compiled outputs are copies', async (t) => {
  const x = pt.matrix('x');
  const out = x.get(slice(null, null, -1), 1);
  const node = out.owner!;
  const xv = weft.pt.constant(m34).data;
  const values = node.inputs.slice(1).map((v) => (v as weft.pt.TensorConstant).data);
  const [view] = node.op.perform(node, [xv, ...values]) as weft.NdArray[];
  t.equal(view!.data, xv.data, 'perform returns an ndarray over the input data');
  t.same(weft.tolist(view!), [21, 11, 1]);
  view!.set(0, -5);
  t.equal(xv.get(2, 1), -5, 'writing through the view changes the input');

  const input = weft.pt.constant(m34).data;
  const fn = await weft.compile([x], out);
  const res = await fn(input);
  t.not(res.data, input.data, 'the compiled output does not share the input data');
  res.data.fill(99);
  t.same(weft.tolist(input), m34, 'changing the output leaves the input alone');
  near(t, await fn(input), [21, 11, 1], 0, 'a second call');
});

t.test('get: dtypes and non-contiguous inputs', async (t) => {
  for (const dtype of ['float32', 'int32', 'uint8', 'bool'] as const) {
    const x = pt.matrix('x', dtype);
    const value = dtype === 'bool' ? [[true, false, true], [false, false, true]] : [[1, 2, 3], [4, 5, 6]];
    const out = await run([x], x.get(slice(null, null, -1), 2), [value]);
    t.equal(x.get(0).dtype, dtype, `${dtype}: dtype kept`);
    near(t, out, dtype === 'bool' ? [1, 1] : [6, 3], 0, `${dtype}: x[::-1, 2]`);
  }
  const x = pt.matrix('x');
  // x.T is a strided view; index it again
  near(t, await run([x], x.T.get(slice(1, null), slice(null, null, -2)), [m34]), [[21, 1], [22, 2], [23, 3]], 0, 'x.T[1:, ::-2]');
  near(t, await run([x], x.T.get(-1).get(slice(null, null, -1)), [m34]), [23, 13, 3], 0, 'x.T[-1][::-1]');
});

t.test('get: inferShape with constant and symbolic bounds', async (t) => {
  const r = rng(3);
  const a = r.normal([5, 6]);
  const x = pt.matrix('x');
  const i = pt.scalar('i', 'int32');
  const j = pt.scalar('j', 'int32');
  const k = pt.scalar('k', 'int32');
  t.equal(await weft.checkInferShape([x], [x.get(slice(1, -1), slice(null, null, -2))], [a], Subtensor), 1, 'constant bounds');
  t.equal(await weft.checkInferShape([x], [x.get(null, 2, null, slice(4, 0, -1))], [a], Subtensor), 1, 'new axes and an integer');
  t.equal(await weft.checkInferShape([x, i, j, k], [x.get(slice(i, j, k), i)], [a, -2, -6, -1], Subtensor), 1, 'symbolic bounds, negative step');
  t.equal(await weft.checkInferShape([x, i, j, k], [x.get(slice(i, j, k))], [a, 1, 10, 2], Subtensor), 1, 'symbolic bounds, positive step');
  t.equal(await weft.checkInferShape([x, i, j], [x.get(slice(j, null), slice(i))], [a, -2, 7], Subtensor), 1, 'symbolic start and stop');
  t.equal(await weft.checkInferShape([x], [x.get(slice(4, 2))], [a], Subtensor), 1, 'an empty slice');
});

t.test('get: grad and Rop', async (t) => {
  const r = rng(5);
  const a = r.normal([4, 5]);
  await weft.verifyGrad((x) => x.get(slice(1, null), slice(null, null, -2)), [a]);
  await weft.verifyGrad((x) => x.get(-1, null), [a]);
  await weft.verifyGrad((x) => x.get(2, 3), [a]);
  await weft.verifyGrad((x) => x.get(slice(5, 0, -1)).mul(x.get(slice(0, 5))).sum(), [r.normal([6])]);
  await weft.verifyGrad((x) => x.get(slice(1, 3)), [r.normal([5], { dtype: 'float32' })]);
  await weft.checkRop((x) => x.get(slice(null, null, -1), 2), [a]);
  await weft.checkRop((x) => x.get(null, slice(1, -1)), [a]);

  // gradient with symbolic indices; the indices themselves get no gradient
  const x = pt.matrix('x');
  const i = pt.scalar('i', 'int32');
  const g = weft.grad(x.get(slice(i, null)).sum(), x);
  near(t, await run([x, i], g, [[[1, 2], [3, 4], [5, 6]], -2]), [[0, 0], [1, 1], [1, 1]], 0, 'grad of x[i:].sum(), i = -2');
  const node = x.get(i, 0).owner!;
  t.same(node.op.connectionPattern!(node), [[true], [false], [false]], 'the index inputs are disconnected');
});

t.test('get: bad input', async (t) => {
  const x = pt.matrix('x');
  const xs = pt.tensor({ shape: [3, 4], name: 'xs' });
  const w = pt.vector('w');
  const f = pt.scalar('f');
  const i = pt.scalar('i', 'int32');
  await throwsExactly(
    t,
    () => x.get(1, 2, 3),
    TypeError,
    'Subtensor{i, i, i}: too many indices for x (TensorType(float64, (?, ?))): it has 2 axes but 3 were indexed',
  );
  await throwsExactly(
    t,
    () => x.get(null, slice(), null, 0, 0),
    TypeError,
    'Subtensor{newaxis, :, newaxis, i, i}: too many indices for x (TensorType(float64, (?, ?))): it has 2 axes but 3 were indexed',
    'new axes do not count',
  );
  await throwsExactly(t, () => xs.get(0, 4), RangeError, 'Subtensor{i, i}: index 4 is out of bounds for axis 1 with length 4', 'static bounds');
  await throwsExactly(t, () => xs.get(-4), RangeError, 'Subtensor{i}: index -4 is out of bounds for axis 0 with length 3');
  await throwsExactly(
    t,
    () => run([x], x.get(slice(), -5), [m34]),
    weft.NodeError,
    'Subtensor{:, i}: index -5 is out of bounds for axis 1 with length 4\n  in node 0: Subtensor{:, i}(x, TensorConstant{-5})' +
      '\n  input values: float64 [3, 4], int32 []',
    'runtime bounds',
  );
  await throwsExactly(
    t,
    () => run([w, i], w.get(i), [[], 0]),
    weft.NodeError,
    'Subtensor{i}: index 0 is out of bounds for axis 0 with length 0\n  in node 0: Subtensor{i}(w, i)\n  input values: float64 [0], int32 []',
    'an empty axis',
  );
  await throwsExactly(t, () => x.get(slice(null, null, 0)), RangeError, 'Subtensor{::step}: slice step cannot be zero (axis 0)');
  await throwsExactly(
    t,
    () => run([x, i], x.get(1, slice(null, null, i)), [m34, 0]),
    weft.NodeError,
    'Subtensor{i, ::step}: slice step cannot be zero (axis 1)\n  in node 0: Subtensor{i, ::step}(x, TensorConstant{1}, i)' +
      '\n  input values: float64 [3, 4], int32 [], int32 []',
    'a symbolic zero step',
  );
  await throwsExactly(
    t,
    () => x.get(f),
    TypeError,
    'Subtensor: index entry 0 must be an integer or a scalar integer variable, got f (TensorType(float64, ()))',
  );
  await throwsExactly(t, () => x.get(2 ** 40), RangeError, 'Subtensor: index entry 0 is 1099511627776, outside the int32 range (no axis is that long)');
  await throwsExactly(t, () => x.get(0, 1.5), TypeError, 'Subtensor: index entry 1 must be an integer or a scalar integer variable, got 1.5');
  await throwsExactly(
    t,
    () => x.get(slice(0, pt.vector('v', 'int32'))),
    TypeError,
    'Subtensor: the stop of the slice at entry 0 must be an integer or a scalar integer variable (or null), got v (TensorType(int32, (?,)))',
  );
  await throwsExactly(
    t,
    () => x.get('1' as unknown as number),
    TypeError,
    'Subtensor: index entry 0 must be an integer, a scalar integer variable, a weft.slice(...) or null, got a value of type string',
  );
  await throwsExactly(
    t,
    () => x.get(pt.scalar('b', 'bool')),
    TypeError,
    'Subtensor: index entry 0 must be an integer or a scalar integer variable, got b (TensorType(bool, ()))',
  );
  await throwsExactly(
    t,
    () => new Subtensor(['int']).call(x),
    TypeError,
    'Subtensor{i}: expected 1 index values after the tensor inputs, got 0',
    'direct op use, missing index value',
  );
});
