// ARange and Eye: values against hand-written ranges and matrices, NumPy's lengths (negative
// steps, empty ranges, float steps), default dtypes, static shapes, symbolic arguments,
// inferShape, gradients wrt start and step, Rop and bad input with exact messages.
import ndarray from 'ndarray';
import t from 'tap';
import { ARange, Eye } from '../../src/tensor/shape/creation.js';
import { dataKind, near, pt, run, throwsExactly, weft } from '../helpers.js';

async function value(v: weft.pt.TensorVariable): Promise<weft.NdArray> {
  return run([], v, []);
}

t.test('arange: integer ranges', async (t) => {
  near(t, await value(pt.arange(5)), [0, 1, 2, 3, 4]);
  near(t, await value(pt.arange(2, 8, 2)), [2, 4, 6]);
  near(t, await value(pt.arange(2, 9, 2)), [2, 4, 6, 8]);
  near(t, await value(pt.arange(10, 0, -3)), [10, 7, 4, 1]);
  near(t, await value(pt.arange(-3, 2)), [-3, -2, -1, 0, 1]);
  t.same((await value(pt.arange(1, 1))).shape, [0], 'start == stop');
  t.same((await value(pt.arange(5, 1))).shape, [0], 'stop below start');
  t.same((await value(pt.arange(1, 5, -1))).shape, [0], 'a negative step away from stop');
  const out = await value(pt.arange(3));
  t.equal(dataKind(out), 'Int32Array');
  t.equal(pt.arange(3).dtype, 'int32');
});

t.test('arange: float ranges and dtypes', async (t) => {
  near(t, await value(pt.arange(0, 1, 0.25)), [0, 0.25, 0.5, 0.75]);
  near(t, await value(pt.arange(0.5, 3)), [0.5, 1.5, 2.5]);
  near(t, await value(pt.arange(1, -1, -0.5)), [1, 0.5, 0, -0.5]);
  near(t, await value(pt.arange(0, 1, 0.3)), [0, 0.3, 0.6, 0.9], 1e-15, 'ceil(1 / 0.3) = 4 elements');
  t.equal(pt.arange(2.5).dtype, weft.config.floatX);
  t.equal(pt.arange(pt.scalar('f', 'float32')).dtype, 'float32', 'from a float32 argument, literals are weak');
  t.equal(pt.arange(pt.scalar('i', 'int16'), 10).dtype, 'int32');
  t.equal(pt.arange(pt.scalar('i', 'int32'), 10, 0.5).dtype, 'float64');
  const f32 = await value(pt.arange(0, 1, 0.25, 'float32'));
  t.equal(dataKind(f32), 'Float32Array');
  near(t, f32, [0, 0.25, 0.5, 0.75]);
  const u8 = await value(pt.arange(3, 6, 1, 'uint8'));
  t.equal(dataKind(u8), 'Uint8Array');
  near(t, u8, [3, 4, 5]);
});

t.test('arange: symbolic arguments and static lengths', async (t) => {
  const n = pt.scalar('n', 'int32');
  const a = pt.scalar('a');
  const b = pt.scalar('b');
  const s = pt.scalar('s');
  near(t, await run([n], pt.arange(n), [4]), [0, 1, 2, 3]);
  t.same((await run([n], pt.arange(n), [-2])).shape, [0], 'a negative stop gives an empty range');
  near(t, await run([a, b, s], pt.arange(a, b, s), [1, 2, 0.25]), [1, 1.25, 1.5, 1.75]);
  near(t, await run([a, b, s], pt.arange(a, b, s), [2, 1, -0.5]), [2, 1.5]);
  t.same(pt.arange(7).type.shape, [7]);
  t.same(pt.arange(0, 1, 0.3).type.shape, [4]);
  t.same(pt.arange(5, 1).type.shape, [0]);
  t.same(pt.arange(n).type.shape, [null]);
  t.equal(String(pt.arange(n).owner!.op), 'ARange{dtype=int32}');
});

t.test('arange: inferShape', async (t) => {
  const n = pt.scalar('n', 'int32');
  const m = pt.scalar('m', 'int32');
  const a = pt.scalar('a');
  const b = pt.scalar('b');
  const s = pt.scalar('s');
  t.equal(await weft.checkInferShape([n], [pt.arange(n)], [5], ARange), 1);
  t.equal(await weft.checkInferShape([n], [pt.arange(n)], [-5], ARange), 1, 'empty');
  t.equal(await weft.checkInferShape([n, m], [pt.arange(n, m, 3)], [1, 11], ARange), 1);
  t.equal(await weft.checkInferShape([n, m], [pt.arange(n, m, -3)], [11, 1], ARange), 1);
  t.equal(await weft.checkInferShape([a, b, s], [pt.arange(a, b, s)], [0, 1, 0.3], ARange), 1);
  t.equal(await weft.checkInferShape([a, b, s], [pt.arange(a, b, s)], [0, 1, -0.3], ARange), 1);
  t.equal(await weft.checkInferShape([n], [pt.arange(-2147483648, n, 1000000000)], [2147483647], ARange), 1, 'no int overflow');
});

t.test('arange: gradients wrt start and step; stop is disconnected', async (t) => {
  await weft.verifyGrad((a, s) => pt.arange(a, 5, s), [0.3, 0.7]);
  await weft.verifyGrad((a, s) => pt.arange(a, -4, s).sqr(), [1.2, -0.9]);
  await weft.verifyGrad((a) => pt.arange(a, 3, 0.5, 'float32').exp(), [ndarray(Float32Array.of(0.2), [])]);
  const a = pt.scalar('a');
  const b = pt.scalar('b');
  const s = pt.scalar('s');
  const cost = pt.arange(a, b, s).sqr().sum();
  // cost = sum_i (a + i s)^2: d/da = 2 sum_i (a + i s), d/ds = 2 sum_i i (a + i s)
  const [ga, gs] = weft.grad(cost, [a, s]);
  const fn = await weft.compile([a, b, s], [ga!, gs!], { onUnusedInput: 'ignore' });
  const [va, vs] = await fn(1, 4, 0.5); // elements 1, 1.5, ..., 3.5 (i = 0..5)
  let da = 0;
  let ds = 0;
  for (let i = 0; i < 6; i++) {
    da += 2 * (1 + 0.5 * i);
    ds += 2 * i * (1 + 0.5 * i);
  }
  near(t, va!, da);
  near(t, vs!, ds);
  await throwsExactly(
    t,
    () => weft.grad(cost, b),
    weft.DisconnectedInputError,
    'grad was asked for the gradient with respect to b, which is not part of the graph of the cost or is used only by ' +
      'non-differentiable operations (pass disconnectedInputs: "ignore" or "warn" to allow this)',
  );
  const intCost = pt.arange(a, 5, 1, 'int32').astype('float64').sum();
  near(t, await run([a], weft.grad(intCost, a, { disconnectedInputs: 'ignore' }), [0.5]), 0, 0, 'an int range has no gradient');
  await weft.checkRop((p, q) => pt.arange(p, 6, q), [ndarray(Float64Array.of(0.25), []), ndarray(Float64Array.of(1.1), [])]);
});

t.test('arange: Lop and Rop of an int range are zeros', async (t) => {
  const a = pt.scalar('a');
  const out = pt.arange(a, 4, 1, 'int32');
  const node = out.owner!;
  t.same(node.op.connectionPattern!(node), [[true], [false], [true]]);
  const [ga, gb, gs] = node.op.Lop!(node.inputs, node.outputs, [pt.vector('gz')]);
  t.ok(gb!.type instanceof weft.DisconnectedType, 'stop is disconnected');
  near(t, await run([a], ga as weft.pt.TensorVariable, [0.5]), 0);
  near(t, await run([a], gs as weft.pt.TensorVariable, [0.5]), 0);
  const [tangent] = node.op.rop!(node.inputs, [pt.scalar('ea'), pt.scalar('eb'), pt.scalar('es')]);
  near(t, await run([a], tangent as weft.pt.TensorVariable, [0.5]), [0, 0, 0, 0]);
});

t.test('eye: values', async (t) => {
  near(t, await value(pt.eye(3)), [[1, 0, 0], [0, 1, 0], [0, 0, 1]]);
  near(t, await value(pt.eye(2, 4, 1)), [[0, 1, 0, 0], [0, 0, 1, 0]]);
  near(t, await value(pt.eye(4, 2, -1)), [[0, 0], [1, 0], [0, 1], [0, 0]]);
  near(t, await value(pt.eye(2, 3, 5)), [[0, 0, 0], [0, 0, 0]], 0, 'a diagonal outside the matrix');
  near(t, await value(pt.eye(2, 3, -2)), [[0, 0, 0], [0, 0, 0]]);
  t.same((await value(pt.eye(0))).shape, [0, 0]);
  t.same((await value(pt.eye(0, 3))).shape, [0, 3]);
  t.equal(dataKind(await value(pt.eye(2))), weft.config.floatX === 'float64' ? 'Float64Array' : 'Float32Array');
  for (const [dtype, kind] of [['float32', 'Float32Array'], ['int32', 'Int32Array'], ['bool', 'Uint8Array']] as const) {
    const out = await value(pt.eye(2, null, 0, dtype));
    t.equal(dataKind(out), kind, dtype);
    near(t, out, [[1, 0], [0, 1]], 0, dtype);
  }
});

t.test('eye: symbolic arguments, static shapes, inferShape', async (t) => {
  const n = pt.scalar('n', 'int32');
  const m = pt.scalar('m', 'int8');
  const k = pt.scalar('k', 'int32');
  near(t, await run([n, m, k], pt.eye(n, m, k), [3, 2, -1]), [[0, 0], [1, 0], [0, 1]]);
  near(t, await run([n], pt.eye(n), [2]), [[1, 0], [0, 1]]);
  t.same(pt.eye(3).type.shape, [3, 3]);
  t.same(pt.eye(3, 5).type.shape, [3, 5]);
  t.same(pt.eye(n, 4).type.shape, [null, 4]);
  t.same(pt.eye(n).type.shape, [null, null]);
  t.equal(String(pt.eye(n).owner!.op), `Eye{dtype=${weft.config.floatX}}`);
  t.equal(await weft.checkInferShape([n, m, k], [pt.eye(n, m, k)], [3, 2, 1], Eye), 1);
  t.equal(await weft.checkInferShape([n], [pt.eye(n)], [0], Eye), 1);
});

t.test('eye: no gradient wrt its int arguments', async (t) => {
  const n = pt.scalar('n', 'int32');
  const x = pt.matrix('x');
  const node = pt.eye(n).owner!;
  t.same(node.op.connectionPattern!(node), [[false], [false], [false]]);
  const g = weft.grad(pt.eye(n).mul(x).sum(), x);
  near(t, await run([n, x], g, [2, [[5, 6], [7, 8]]]), [[1, 0], [0, 1]]);
  await weft.verifyGrad((y) => pt.eye(2, 3, 1).mul(y), [[[1, 2, 3], [4, 5, 6]]]);
  await weft.checkRop((y) => pt.eye(2, 2).mul(y), [ndarray(Float64Array.of(1, 2, 3, 4), [2, 2])]);
});

t.test('arange and eye: bad input', async (t) => {
  await throwsExactly(t, () => pt.arange(0, 5, 0), RangeError, 'ARange{dtype=int32}: step must not be 0');
  await throwsExactly(
    t,
    () => pt.arange(0, Infinity),
    RangeError,
    `ARange{dtype=${weft.config.floatX}}: the range from 0 to Infinity with step 1 has no finite length`,
  );
  await throwsExactly(
    t,
    () => pt.arange(pt.vector('v')),
    TypeError,
    'arange: stop must be a scalar number, got v (TensorType(float64, (?,)))',
  );
  await throwsExactly(
    t,
    () => pt.arange(pt.scalar('b', 'bool')),
    TypeError,
    'arange: stop must be a scalar number, got b (TensorType(bool, ()))',
  );
  await throwsExactly(t, () => pt.arange(3, null, null, 'bool'), TypeError, 'ARange: dtype must be a numeric dtype, got "bool"');
  await throwsExactly(t, () => pt.eye(-1), RangeError, `Eye{dtype=${weft.config.floatX}}: n must be non-negative, got -1`);
  await throwsExactly(t, () => pt.eye(2, -3), RangeError, `Eye{dtype=${weft.config.floatX}}: m must be non-negative, got -3`);
  await throwsExactly(t, () => pt.eye(2.5), TypeError, `Eye{dtype=${weft.config.floatX}}: n: expected an integer, got 2.5`);
  await throwsExactly(
    t,
    () => pt.eye(3, null, pt.scalar('f')),
    TypeError,
    `Eye{dtype=${weft.config.floatX}}: k: expected an integer or a scalar integer variable, got f (TensorType(float64, ()))`,
  );
});

t.test('arange and eye: bad values at run time', async (t) => {
  const s = pt.scalar('s', 'int32');
  await throwsExactly(
    t,
    () => run([s], pt.arange(0, 5, s), [0]),
    weft.NodeError,
    'ARange{dtype=int32}: step must not be 0\n  in node 0: ARange{dtype=int32}(TensorConstant{0}, TensorConstant{5}, s)\n' +
      '  input values: int32 [], int32 [], int32 []',
  );
  const f = pt.scalar('f');
  await throwsExactly(
    t,
    () => run([f], pt.arange(f), [NaN]),
    weft.NodeError,
    `ARange{dtype=float64}: the range from 0 to NaN with step 1 has no finite length\n  in node 0: ARange{dtype=float64}(TensorConstant{0}, f, TensorConstant{1})\n` +
      '  input values: float64 [], float64 [], float64 []',
  );
  const n = pt.scalar('n', 'int32');
  await throwsExactly(
    t,
    () => run([n], pt.eye(n, 2), [-1]),
    weft.NodeError,
    `Eye{dtype=${weft.config.floatX}}: n must be non-negative, got -1\n  in node 0: Eye{dtype=${weft.config.floatX}}(n, TensorConstant{2}, TensorConstant{0})\n` +
      '  input values: int32 [], int32 [], int32 []',
  );
});
