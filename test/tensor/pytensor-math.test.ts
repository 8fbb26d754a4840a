// PyTensor's tests of tensor math (tests/tensor/test_math.py) mirrored through weft's public
// API with PyTensor's expected values: the gradient of maximum and minimum at a tie.
import t from 'tap';
import { near, pt, weft } from '../helpers.js';

t.test('test_maximum_minimum_grad (pytensor tests/tensor/test_math.py): at a tie only the first input gets the gradient', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  for (const op of [pt.maximum, pt.minimum]) {
    const o = op(x, y);
    const g = weft.grad(o.sum(), [x, y]);
    const f = await weft.compile([x, y], g);
    const [gx, gy] = await f([1], [1]);
    near(t, gx!, [1], 0, `${op.name}: x`);
    near(t, gy!, [0], 0, `${op.name}: y`);
  }
});

t.test('maximum(x, x) and minimum(x, x) have gradient 1, as in PyTensor (the first input takes it all)', async (t) => {
  const x = pt.vector('x');
  for (const op of [pt.maximum, pt.minimum]) {
    const g = weft.grad(op(x, x).sum(), x);
    near(t, await (await weft.compile([x], g))([2, -3, 0]), [1, 1, 1], 0, op.name);
  }
});

t.test('maximum and minimum away from ties, with NaN, and in float32', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const xv = [3, 1, 2, NaN, 0];
  const yv = [1, 3, 2, 0, NaN];
  // maximum: x where x >= y; a NaN on either side sends the gradient to y (ge is false), as PyTensor's.
  const fmax = await weft.compile([x, y], weft.grad(pt.maximum(x, y).sum(), [x, y]));
  const [ax, ay] = await fmax(xv, yv);
  near(t, ax!, [1, 0, 1, 0, 0], 0, 'maximum: x');
  near(t, ay!, [0, 1, 0, 1, 1], 0, 'maximum: y');
  const fmin = await weft.compile([x, y], weft.grad(pt.minimum(x, y).sum(), [x, y]));
  const [bx, by] = await fmin(xv, yv);
  near(t, bx!, [0, 1, 1, 0, 0], 0, 'minimum: x');
  near(t, by!, [1, 0, 0, 1, 1], 0, 'minimum: y');
  const f32 = pt.vector('f', 'float32');
  const g32 = weft.grad(pt.maximum(f32, f32).sum(), f32);
  t.equal(g32.dtype, 'float32', 'a float32 gradient stays float32');
  near(t, await (await weft.compile([f32], g32))(new Float32Array([1, 2])), [1, 1], 0, 'float32 tie');
  await weft.verifyGrad((a, b) => pt.maximum(a, b), [[0.3, -1.7, 2.5], [1.5, -2, 0.25]]);
  await weft.verifyGrad((a, b) => pt.minimum(a, b), [[0.3, -1.7, 2.5], [1.5, -2, 0.25]]);
});

t.test('Rop of maximum and minimum follows the same rule: at a tie the tangent of the first input', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const vx = pt.vector('vx');
  const vy = pt.vector('vy');
  for (const [op, want] of [[pt.maximum, [10, 200, 10]], [pt.minimum, [100, 20, 10]]] as const) {
    const r = weft.Rop(op(x, y), [x, y], [vx, vy]) as weft.pt.TensorVariable;
    const f = await weft.compile([x, y, vx, vy], r);
    near(t, await f([3, 1, 2], [1, 3, 2], [10, 20, 10], [100, 200, 100]), [...want], 0, op.name);
  }
});
