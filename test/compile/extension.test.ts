// The extension API: asOp (planned as a calling-thread task with inferShape, in stages without),
// a custom op with a worker kernel from a user's module, a kernel given as source with a version
// key, and params as part of an op's identity.
import ndarray from 'ndarray';
import t from 'tap';
import { Apply } from '../../src/graph/apply.js';
import type { KernelCall } from '../../src/graph/op.js';
import type { TensorView } from '../../src/kernels/view.js';
import { near, pt, rng, throwsExactly, weft } from '../helpers.js';

const BIG = 1 << 16;
const scaleKernels = new URL('../fixtures/scale-kernel.mjs', import.meta.url).href;

t.test('asOp: values, types, and a calling-thread task in a planned call', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  let calls = 0;
  const cumsum = weft.asOp(
    { itypes: [new weft.TensorType('float64', [null])], otypes: [new weft.TensorType('float64', [null])], inferShape: ([s]) => [s!] },
    function cumsum(x) {
      calls += 1;
      const out = new Float64Array(x.shape[0]!);
      let acc = 0;
      for (let i = 0; i < out.length; i++) out[i] = acc += x.get(i);
      return out;
    },
  );
  const x = pt.vector('x');
  const y = cumsum.call(x.exp()) as weft.pt.TensorVariable;
  const values = [rng(1).normal([BIG])] as const;
  const xs = Array.from(values[0]!.data as Float64Array);
  let acc = 0;
  const expected = xs.map((v) => (acc += Math.exp(v)));
  for (const workers of [0, 2]) {
    const fn = await weft.compile([x], y.mul(2), { pool, workers, profile: true });
    near(t, await fn(...values), expected.map((v) => 2 * v), 1e-12, `workers ${workers}`);
    t.equal(fn.profile!.fallback, undefined, 'planned, not the reference executor');
  }
  t.ok(calls >= 2);
  t.equal(String(cumsum), 'AsOp{cumsum}');
  await throwsExactly(t, () => cumsum.call(pt.matrix('m')), TypeError, 'AsOp{cumsum}: input 0 (m) has type TensorType(float64, (?, ?)), expected TensorType(float64, (?,))');
  await throwsExactly(t, () => cumsum.call(x, x), TypeError, 'AsOp{cumsum}: expected 1 input, got 2');
});

t.test('asOp: a returned view of an array the function keeps (an ndarray over an ndarray) is copied, as the array itself is', async (t) => {
  // A later in-place add writes into the op's output: were it the table's memory, the next call
  // would start from a changed table.
  const table = weft.ndarray(Float64Array.from([1, 2, 3]));
  const lookup = weft.asOp(
    { itypes: [new weft.TensorType('float64', [null])], otypes: [new weft.TensorType('float64', [null])], inferShape: ([s]) => [s!], name: 'lookup' },
    () => ndarray(table as unknown as Float64Array, [3]) as unknown as weft.NdArray,
  );
  const x = pt.vector('x');
  const fn = await weft.compile([x], (lookup.call(x) as weft.pt.TensorVariable).add(x), { workers: 0 });
  t.same(weft.tolist(await fn([10, 20, 30])), [11, 22, 33]);
  t.same(weft.tolist(await fn([10, 20, 30])), [11, 22, 33], 'the same result again');
  t.same(Array.from(table.data), [1, 2, 3], 'the table is unchanged');
});

t.test('asOp without inferShape: calls are planned in stages around it', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const positives = weft.asOp(
    { itypes: [new weft.TensorType('float64', [null])], otypes: [new weft.TensorType('float64', [null])], name: 'positives' },
    (x) => Float64Array.from(x.data as Float64Array).filter((v) => v > 0),
  );
  const x = pt.vector('x');
  const kept = positives.call(x.mul(3)) as weft.pt.TensorVariable;
  const out = [kept.sum(), kept.shape, x.sum()];
  const fn = await weft.compile([x], out, { pool, profile: true });
  const values = [rng(2).normal([BIG])] as const;
  const xs = Array.from(values[0]!.data as Float64Array);
  const pos = xs.filter((v) => v > 0);
  const [s, shape, total] = await fn(...values);
  t.ok(Math.abs((weft.tolist(s!) as number) - 3 * pos.reduce((a, b) => a + b, 0)) < 1e-6);
  t.same(weft.tolist(shape!), [pos.length]);
  t.ok(Math.abs((weft.tolist(total!) as number) - xs.reduce((a, b) => a + b, 0)) < 1e-6);
  t.equal(fn.profile!.fallback, undefined, 'staged plans, not the reference executor');
  t.ok(fn.profile!.events.some((e) => e.thread !== 0), 'some tasks ran in the workers');
});

/** A custom op whose worker kernel comes from a user's module. */
class Scale extends weft.Op {
  static override readonly props = ['factor'] as const;
  constructor(readonly factor: number) {
    super();
  }
  override makeNode(x: unknown): Apply {
    const v = pt.asTensorVariable(x as weft.pt.TensorVariable);
    return new Apply(this, [v], [v.type.makeVariable()]);
  }
  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }
  override kernel(): KernelCall {
    return { name: 'test.scale', params: { factor: this.factor }, chunking: { by: 'elements' } };
  }
  override grad(_inputs: readonly weft.pt.TensorVariable[], [gz]: readonly weft.pt.TensorVariable[]) {
    return [gz!.mul(this.factor)];
  }
}

t.test('a custom op with a kernel from a module every worker imports', async (t) => {
  const pool = weft.createPool({ workers: 2, kernelModules: [scaleKernels] });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const y = new Scale(3).call(x.add(1));
  const fn = await weft.compile([x], y, { pool, profile: true });
  const values = [rng(3).normal([4 * BIG])] as const;
  const xs = Array.from(values[0]!.data as Float64Array);
  near(t, await fn(...values), xs.map((v) => 3 * (v + 1)), 1e-12);
  t.ok(fn.profile!.events.some((e) => e.node.op instanceof Scale && e.thread !== 0), 'the kernel ran in the workers');
  t.ok(new Scale(3).equals(new Scale(3)), 'equal params: equal ops');
  t.notOk(new Scale(3).equals(new Scale(4)), 'params are part of the identity');
  // (Large enough to run in the workers: the kernel module is loaded there.)
  const g = weft.grad(new Scale(3).call(x).sum(), x);
  near(t, await (await weft.compile([x], g, { pool }))(new Float64Array(BIG)), Array(BIG).fill(3), 0, 'its gradient');
});

t.test('kernel modules load on the calling thread too: small calls on such a pool run there (issue 21, item 3)', async (t) => {
  const pool = weft.createPool({ workers: 2, kernelModules: [new URL('../fixtures/scale-kernel.mjs', import.meta.url)] });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const fn = await weft.compile([x], new Scale(2).call(x), { pool, profile: true });
  near(t, await fn([1, 2, 3]), [2, 4, 6], 0, 'a URL object; a call too small for the workers');
  t.ok(fn.profile!.events.every((e) => e.thread === 0), 'it ran on the calling thread');
  const inline = await weft.compile([x], new Scale(5).call(x), { pool, workers: 0 });
  near(t, await inline([1, -1]), [5, -5], 0, 'workers: 0 on that pool');
});

t.test('kernel modules: a relative path is refused (it would depend on the working directory); absolute paths are taken', async (t) => {
  await throwsExactly(
    t,
    () => weft.createPool({ workers: 1, kernelModules: ['./scale-kernel.mjs'] }),
    RangeError,
    "createPool: the kernel module './scale-kernel.mjs' is a relative path, which would depend on the working directory; give a URL relative to your module (new URL('./scale-kernel.mjs', import.meta.url)) or an absolute path",
  );
  const pool = weft.createPool({ workers: 1, kernelModules: [new URL('../fixtures/scale-kernel.mjs', import.meta.url).pathname] });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  near(t, await (await weft.compile([x], new Scale(3).call(x), { pool }))([2]), [6], 0);
});

t.test('a kernel nobody registered: the error names the kernel and the thread that lacks it', async (t) => {
  class Missing extends Scale {
    override kernel(): KernelCall {
      return { name: 'test.nowhere', params: {}, chunking: { by: 'elements' } };
    }
  }
  const x = pt.vector('x');
  const fn = await weft.compile([x], new Missing(1).call(x), { workers: 0 });
  await t.rejects(fn([1]), {
    message: /no kernel is registered as 'test\.nowhere' on the calling thread \(load the module that registers it with createPool\(\{ kernelModules \}\): every worker and the calling thread import them\)/,
  });
  const pool = weft.createPool({ workers: 1 });
  t.teardown(() => pool.close());
  const big = await weft.compile([x], new Missing(1).call(x.add(1)), { pool });
  await t.rejects(big(new Float64Array(4 * BIG)), { message: /no kernel is registered as 'test\.nowhere' on worker thread \d+/ });
});

/** A custom op whose kernel is given as source. */
class Offset extends weft.Op {
  static override readonly props = ['amount', 'version'] as const;
  constructor(
    readonly amount: number,
    readonly version = 1,
    readonly body = 'out.data[out.offset + i] = x.data[x.offset + i] + params.amount;',
  ) {
    super();
  }
  override makeNode(x: unknown): Apply {
    const v = pt.asTensorVariable(x as weft.pt.TensorVariable);
    return new Apply(this, [v], [v.type.makeVariable()]);
  }
  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }
  override kernel(): KernelCall {
    const source = `const [x] = inputs, [out] = outputs;
      const n = out.shape.reduce((a, b) => a * b, 1);
      for (let i = range ? range.start : 0; i < (range ? range.end : n); i++) { ${this.body} }`;
    return { name: 'source', params: { key: 'test.offset', version: this.version, amount: this.amount, source }, chunking: { by: 'elements' } };
  }
}

t.test('a kernel given as source, compiled once per key and version', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  for (const workers of [0, 2]) {
    const fn = await weft.compile([x], new Offset(0.5).call(x), { pool, workers });
    near(t, await fn(new Float64Array(BIG).fill(1)), Array(BIG).fill(1.5), 0, `workers ${workers}`);
  }
  const changed = await weft.compile([x], new Offset(0.5, 1, 'out.data[out.offset + i] = 0;').call(x), { workers: 0 });
  await t.rejects(changed([1, 2]), /source kernel test\.offset@1: the source changed but the version did not/);
  const bumped = await weft.compile([x], new Offset(0.5, 2, 'out.data[out.offset + i] = -x.data[x.offset + i];').call(x), { workers: 0 });
  near(t, await bumped([1, 2]), [-1, -2], 0, 'a new version compiles the new source');
});
