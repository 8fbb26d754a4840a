// Map: an inner graph evaluated per index and stacked (the loop behind jacobian and hessian).
import t from 'tap';
import { MapOp, map } from '../../src/tensor/inner/map.js';
import { near, pt, run, throwsExactly, weft } from '../helpers.js';

t.test('map: values, captured variables and static length', async (t) => {
  const x = pt.vector('x');
  const [rows] = map(3, (i) => x.mul(pt.cast(i, 'float64')).add(x.get(i)));
  t.equal(String(rows!.type), 'TensorType(float64, (3, ?))');
  const X = [1, 2, 3];
  near(t, await run([x], rows!, [X]), [0, 1, 2].map((i) => X.map((v) => v * i + X[i]!)));
  const n = pt.scalar('n', 'int32');
  const [squares, cubes] = map(n, (i) => {
    const f = pt.cast(i, 'float64');
    return [pt.sqr(f), pt.mul(f, f, f)];
  });
  const fn = await weft.compile([n], [squares!, cubes!]);
  const [s, c] = await fn(4);
  near(t, s!, [0, 1, 4, 9]);
  near(t, c!, [0, 1, 8, 27]);
  t.same((await fn(0))[0]!.shape, [0], 'zero iterations give an empty result');
});

t.test('map: inferShape without running the loop', async (t) => {
  const x = pt.matrix('x');
  const n = pt.scalar('n', 'int32');
  const [out] = map(n, (i) => x.mul(pt.cast(i, 'float64')));
  t.equal(await weft.checkInferShape([x, n], [out!], [[[1, 2, 3], [4, 5, 6]], 5], MapOp), 1);
});

t.test('map: iterations of different shapes are refused', async (t) => {
  const x = pt.vector('x');
  const [out] = map(2, (i) => x.get(weft.slice(i, null)));
  await throwsExactly(
    t,
    () => run([x], out!, [[1, 2, 3]]),
    weft.NodeError,
    `Map{${(out!.owner!.op as MapOp).id}}: iteration 1 gave shape [2] for output 0, iteration 0 gave [3]` +
      `\n  in node 0: ${out!.owner}\n  input values: int32 [], float64 [3]`,
  );
});
