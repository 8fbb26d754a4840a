// Habits PyTensor users bring (issue 21): an axis given alone to a reduction (and to cumsum, sort,
// take, topk, squeeze, flip), a number as a 1-d shape, and eval with an object keyed by input
// names. Each once gave a silent wrong answer or a raw JS error; now each works as in PyTensor,
// and anything else (a misspelt option among them) is refused with a clear error.
import t from 'tap';
import { near, pt, throwsExactly, weft } from '../helpers.js';

const v = [
  [1, 2, 3],
  [4, 5, 6],
];

t.test('a reduction takes its axis alone, as x.sum(axis=1) in PyTensor (not the total)', async (t) => {
  const x = pt.matrix('x');
  const cases: Array<[string, weft.TensorVariable, unknown]> = [
    ['x.sum(1)', x.sum(1), [6, 15]],
    ['pt.sum(x, 1)', pt.sum(x, 1), [6, 15]],
    ['x.sum(-1)', x.sum(-1), [6, 15]],
    ['x.sum([0, 1])', x.sum([0, 1]), 21],
    ['x.mean(0)', x.mean(0), [2.5, 3.5, 4.5]],
    ['pt.mean(x, 1)', pt.mean(x, 1), [2, 5]],
    ['x.prod(1)', x.prod(1), [6, 120]],
    ['x.max(0)', x.max(0), [4, 5, 6]],
    ['x.min(1)', x.min(1), [1, 4]],
    ['x.argmax(1)', x.argmax(1), [2, 2]],
    ['x.argmin(0)', x.argmin(0), [0, 0, 0]],
    ['x.var(1)', x.var(1), [2 / 3, 2 / 3]],
    ['x.std(0)', x.std(0), [1.5, 1.5, 1.5]],
    ['x.gt(2).any(1)', x.gt(2).any(1), [true, true]],
    ['x.gt(2).all(1)', x.gt(2).all(1), [false, true]],
    ['options still work: x.sum({ axis: 1, keepdims: true })', x.sum({ axis: 1, keepdims: true }), [[6], [15]]],
  ];
  for (const [what, e, want] of cases) near(t, await e.eval({ x: v }), want as number[], 1e-12, what);
});

t.test('a reduction refuses an axis that is neither a number, an array nor options', async (t) => {
  const x = pt.matrix('x');
  await throwsExactly(t, () => x.sum('1' as never), TypeError, 'sum: expected an axis (a number or an array of numbers) or options such as { axis, keepdims }, got string 1');
  await throwsExactly(t, () => pt.mean(x, true as never), TypeError, 'mean: expected an axis (a number or an array of numbers) or options such as { axis, keepdims }, got boolean true');
  await throwsExactly(t, () => x.sum(5), RangeError, 'sum: axis 5 is out of range for a 2-d input (axes are -2..1)');
});

t.test('a number is a 1-d shape: pt.zeros(3), pt.ones(2), reshape(6), stream.uniform(4)', async (t) => {
  near(t, await pt.zeros(3).eval(), [0, 0, 0], 0, 'zeros(3)');
  near(t, await pt.ones(2, 'int32').eval(), [1, 1], 0, 'ones(2)');
  t.equal(String(pt.zeros(3).type), 'TensorType(float64, (3,))');
  const x = pt.matrix('x');
  near(t, await x.reshape(6).eval({ x: v }), [1, 2, 3, 4, 5, 6], 0, 'reshape(6)');
  const draw = new weft.RandomStream(3).uniform(4);
  t.same((await draw.eval()).shape, [4], 'uniform(4) draws 4 numbers');
  await throwsExactly(t, () => pt.zeros('3' as never), TypeError, 'zeros: the shape must be a number, an array of lengths or a vector variable, got 3');
});

t.test("eval takes an object keyed by input names, as PyTensor's eval({'x': ...})", async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  near(t, await x.mul(y).eval({ x: [1, 2], y: [3, 4] }), [3, 8], 0, 'by name');
  near(t, await x.mul(y).eval(new Map([[x, [1, 2]], [y, [3, 4]]])), [3, 8], 0, 'a Map still works');
  await throwsExactly(t, () => x.mul(y).eval({ z: [1] }), TypeError, "Elemwise{mul}.out.eval: givens key 'z': no input has that name; the named inputs are x, y");
  const twin = pt.vector('x');
  await throwsExactly(
    t,
    () => x.add(twin).eval({ x: [1] }),
    TypeError,
    "Elemwise{add}.out.eval: givens key 'x': 2 inputs have that name (give a Map of variables instead); the named inputs are x, x",
  );
  await throwsExactly(
    t,
    () => x.eval([[x, [1]]] as never),
    TypeError,
    'x.eval: givens must be a Map from variables to values or an object keyed by input names ({ x: [1, 2] }), got an array',
  );
});

t.test("cumsum, cumprod, sort, argsort, take, topk, argtopk, squeeze and flip take their axis alone, as PyTensor's positional axis (cumsum(x, 0) once summed the flattened array)", async (t) => {
  const x = pt.matrix('x');
  const m = [
    [3, 1, 2],
    [0, 5, 4],
  ];
  const cases: Array<[string, weft.TensorVariable, unknown]> = [
    ['pt.cumsum(x, 0)', pt.cumsum(x, 0), [[3, 1, 2], [3, 6, 6]]],
    ['pt.cumsum(x, 1)', pt.cumsum(x, 1), [[3, 4, 6], [0, 5, 9]]],
    ['pt.cumprod(x, -1)', pt.cumprod(x, -1), [[3, 3, 6], [0, 0, 0]]],
    ['pt.sort(x, 0)', pt.sort(x, 0), [[0, 1, 2], [3, 5, 4]]],
    ['pt.argsort(x, 0)', pt.argsort(x, 0), [[1, 0, 0], [0, 1, 1]]],
    ['pt.take(x, [1, 0], 1)', pt.take(x, [1, 0], 1), [[1, 3], [5, 0]]],
    ['pt.topk(x, 1, 0)', pt.topk(x, 1, 0), [[3, 5, 4]]],
    ['pt.argtopk(x, 1, 0)', pt.argtopk(x, 1, 0), [[0, 1, 1]]],
    ['pt.flip(x, 1)', pt.flip(x, 1), [[2, 1, 3], [4, 5, 0]]],
    ['pt.flip(x, [0, 1])', pt.flip(x, [0, 1]), [[4, 5, 0], [2, 1, 3]]],
    ['options still work: pt.cumsum(x, { axis: 1 })', pt.cumsum(x, { axis: 1 }), [[3, 4, 6], [0, 5, 9]]],
    ['no axis: pt.cumsum(x) runs over the flattened array', pt.cumsum(x), [3, 4, 6, 6, 11, 15]],
  ];
  for (const [what, y, want] of cases) near(t, await y.eval({ x: m }), want as never, 0, what);
  const y = pt.tensor({ name: 'y', shape: [1, null, 1] });
  near(t, await pt.squeeze(y, 2).eval({ y: [[[1], [2]]] }), [[1, 2]], 0, 'pt.squeeze(y, 2)');
  near(t, await pt.squeeze(y, [0, 2]).eval({ y: [[[1], [2]]] }), [1, 2], 0, 'pt.squeeze(y, [0, 2])');
});

t.test('options are refused when they are neither an axis nor a plain object of known keys (a misspelt key once left the default in place)', async (t) => {
  const x = pt.matrix('x');
  await throwsExactly(t, () => pt.cumsum(x, '0' as never), TypeError, 'cumsum: expected an axis (a number) or options such as { axis }, got string 0');
  await throwsExactly(t, () => pt.sort(x, [0] as never), TypeError, 'sort: expected an axis (a number) or options such as { axis }, got Array 0');
  await throwsExactly(t, () => pt.flip(x, null as never), TypeError, 'flip: expected an axis (a number or an array of numbers) or options such as { axis }, got null');
  await throwsExactly(t, () => pt.cumsum(x, { axes: 0 } as never), TypeError, "cumsum: unknown option 'axes' (the options are axis)");
  await throwsExactly(t, () => pt.take(x, [0], { axes: 1 } as never), TypeError, "take: unknown option 'axes' (the options are axis)");
  await throwsExactly(t, () => x.sum({ axes: 1 } as never), TypeError, "sum: unknown option 'axes' (the options are axis, keepdims)");
  await throwsExactly(t, () => pt.mean(x, { axis: 0, ddof: 1 } as never), TypeError, "mean: unknown option 'ddof' (the options are axis, keepdims)");
  near(t, await pt.var(x, { axis: 1, ddof: 1 }).eval({ x: v }), [1, 1], 1e-12, 'var takes ddof');
  await throwsExactly(t, () => pt.searchsorted(pt.vector('s'), pt.vector('w'), 'right' as never), TypeError, 'searchsorted: expected options such as { side }, got string right');
  await throwsExactly(t, () => pt.searchsorted(pt.vector('s'), pt.vector('w'), { sides: 'right' } as never), TypeError, "searchsorted: unknown option 'sides' (the options are side)");
});
