// The shape of an op test, on add: values against independent arithmetic, broadcasting,
// inferShape against real shapes, verifyGrad, Rop, and bad input with its exact message.
import t from 'tap';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

t.test('add: values and broadcasting', async (t) => {
  const x = pt.matrix('x');
  const y = pt.tensor({ shape: [1, null], name: 'y' });
  const out = await run([x, y], pt.add(x, y), [[[1, 2], [3, 4]], [[10, 20]]]);
  near(t, out, [[11, 22], [13, 24]]);
});

t.test('add: inferShape, grad and Rop', async (t) => {
  const r = rng(1);
  const a = r.normal([3, 4]);
  const b = r.normal([3, 4]);
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  t.equal(await weft.checkInferShape([x, y], [pt.add(x, y)], [a, b]), 1);
  await weft.verifyGrad((p, q) => pt.add(p, q), [a, b]);
  await weft.checkRop((p, q) => pt.add(p, q), [a, b]);
});

t.test('add: runtime broadcasting of a non-broadcastable axis is refused', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  await throwsExactly(
    t,
    () => run([x, y], pt.add(x, y), [[[1, 2], [3, 4]], [[10, 20]]]),
    weft.NodeError,
    'Elemwise{add}: input 1 (y) has length 1 on axis 0 where input 0 has 2, but its type TensorType(float64, (?, ?)) ' +
      'does not mark that axis broadcastable; give it a static length of 1 (e.g. pt.tensor({ shape: [1, null] }) or x.dimshuffle)' +
      '\n  in node 0: Elemwise{add}(x, y)\n  input values: float64 [2, 2], float64 [1, 2]',
  );
});
