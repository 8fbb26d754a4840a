// A kernel may ask for contiguous inputs (KernelCall.contiguousInputs, issue 21 item 4): an input
// in another layout (transposed, sliced with steps or backwards) is copied into contiguous memory
// first, by the planner on the workers and by perform on the calling thread; a contiguous input
// is not copied. The kernel under test ignores strides, so without the request it reads the
// wrong elements: the test shows that too.
import t from 'tap';
import { Apply } from '../../src/graph/apply.js';
import type { KernelCall } from '../../src/graph/op.js';
import type { TensorView } from '../../src/kernels/view.js';
import { PlannedExecutor } from '../../src/scheduler/planned-executor.js';
import { makeNdArray } from '../../src/tensor/core/ndarray.js';
import { near, pt, weft } from '../helpers.js';

/** factor * x, by a kernel that reads x as flat memory from its offset (strides ignored). */
class FlatScale extends weft.Op {
  static override readonly props = ['factor', 'contiguous'] as const;
  constructor(
    readonly factor: number,
    readonly contiguous: boolean,
  ) {
    super();
  }
  override makeNode(x: unknown): Apply {
    const v = pt.asTensorVariable(x as weft.TensorLike);
    return new Apply(this, [v], [new weft.TensorType(v.dtype, v.type.shape).makeVariable()]);
  }
  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }
  override kernel(): KernelCall {
    return {
      name: 'source',
      params: {
        key: 'test.flat-scale',
        version: 1,
        factor: this.factor,
        source: `const [x] = inputs, [out] = outputs;
          const n = out.shape.reduce((a, b) => a * b, 1);
          for (let i = range ? range.start : 0; i < (range ? range.end : n); i++) out.data[out.offset + i] = params.factor * x.data[x.offset + i];`,
      },
      chunking: { by: 'elements' },
      ...(this.contiguous ? { contiguousInputs: true } : {}),
    };
  }
}

const n = 300; // 300 x 300: 90k elements, chunked on the workers
const values = Float64Array.from({ length: n * n }, (_, i) => (i % 977) / 7);
const matrix = makeNdArray(values, [n, n]);
const at = (i: number, j: number): number => values[i * n + j]!;

t.test('strided inputs are copied for a kernel that asks for contiguous inputs', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const m = pt.matrix('m');
  const cases: Array<[string, weft.TensorVariable, (i: number, j: number) => number, weft.NdArray]> = [
    ['a transposed matrix', m.T, (i, j) => at(j, i), matrix],
    ['every other column', m.get(weft.slice(), weft.slice(null, null, 2)), (i, j) => at(i, 2 * j), matrix],
    ['the rows reversed (a negative stride)', m.get(weft.slice(null, null, -1)), (i, j) => at(n - 1 - i, j), matrix],
  ];
  for (const [what, input, want, value] of cases) {
    const inputVar = m;
    for (const workers of [0, 2]) {
      const f = await weft.compile([inputVar], new FlatScale(3, true).call(input), { pool, workers });
      const got = await f(value);
      const shape = got.shape;
      const expected = Array.from({ length: shape[0]! }, (_, i) => Array.from({ length: shape[1]! }, (_, j) => 3 * want(i, j)));
      near(t, got, expected, 0, `${what}, workers ${workers}`);
    }
    // The calling thread's perform (DebugMode compares it with the plan).
    const debug = await weft.compile([inputVar], new FlatScale(3, true).call(input), { pool, mode: 'DebugMode' });
    t.ok((await debug(value)).shape.length === 2, `${what}: DebugMode agrees`);
  }
});

t.test('without the request the same kernel reads a transposed input wrongly (the test can fail)', async (t) => {
  const m = pt.matrix('m');
  const f = await weft.compile([m], new FlatScale(1, false).call(m.T), { workers: 0 });
  const got = await f([[1, 2], [3, 4]]);
  t.notSame(weft.tolist(got), [[1, 3], [2, 4]], 'the strides were ignored');
  const g = await weft.compile([m], new FlatScale(1, true).call(m.T), { workers: 0 });
  t.same(weft.tolist(await g([[1, 2], [3, 4]])), [[1, 3], [2, 4]], 'with contiguousInputs: the transposed values');
});

t.test('a contiguous input is not copied; a strided one costs one copy call of the node', async (t) => {
  const m = pt.matrix('m');
  const copiesIn = (y: weft.TensorVariable): number => {
    const fg = new weft.FunctionGraph([m], [y]);
    const executor = new PlannedExecutor(fg, undefined, { workers: 0 });
    const { plan } = executor.planFor([matrix]);
    executor.dispose();
    return plan.descriptor.calls.filter((c) => c.label.startsWith('contiguous copy')).length;
  };
  t.equal(copiesIn(new FlatScale(2, true).call(m)), 0, 'm itself: no copy');
  t.equal(copiesIn(new FlatScale(2, true).call(m.T)), 1, 'm.T: one copy');
});
