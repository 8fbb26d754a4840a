// A user's scalar op (the guide's "Scalar/Elemwise/Reduction Ops": a new scalar op gets Elemwise,
// fusion and inplace for free): weft.ScalarOp with its code, dtype rule and gradient, applied
// with new weft.Elemwise(op), in a fused chain, inplace, on two workers with the bits of the
// calling thread, differentiated, and refused by serialize (documents name catalog ops only).
import t from 'tap';
import { ReferenceExecutor } from '../../src/graph/reference-executor.js';
import { pt, rng, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;

/** x^3 - x, for floats: one element's JS code, and its derivative 3x^2 - 1 with tensor ops. */
const cubic = new weft.ScalarOp({
  name: 'test.cubic',
  nin: 1,
  outputDtype: ([d]) => (d === 'float32' ? 'float32' : 'float64'),
  checkInputs: ([d]) => (d === 'float32' || d === 'float64' ? undefined : `test.cubic takes float32 or float64, got ${d}`),
  code: ([x]) => `(${x} * ${x} * ${x} - ${x})`,
  grad: ([x], _out, gz) => [gz.mul(pt.sqr(x!).mul(3).sub(1))],
});
const cubicOf = (v: TV): TV => new weft.Elemwise(cubic).call(v) as TV;
const f64 = (v: number): number => v * v * v - v;

const r = rng(2027);
const xs = r.normal([4096]);

t.test('values: float64 exactly as the JS expression, float32 rounded as Math.fround', async (t) => {
  const x = pt.vector('x');
  const fn = await weft.compile([x], cubicOf(x), { workers: 0 });
  const out = (await fn(xs)).data as Float64Array;
  const wrong = Array.from(xs.data as Float64Array).filter((v, i) => !Object.is(out[i], f64(v)));
  t.same(wrong, [], 'every element');
  const x32 = pt.vector('x32', 'float32');
  const fn32 = await weft.compile([x32], cubicOf(x32), { workers: 0 });
  const in32 = Float32Array.from(xs.data as Float64Array);
  const out32 = (await fn32(in32)).data;
  t.equal(out32.constructor, Float32Array, 'float32 out');
  const f32 = (v: number): number => Math.fround(v * v * v - v);
  t.same(Array.from(in32).filter((v, i) => !Object.is(out32[i], f32(v))), []);
});

t.test('in a chain of element-wise ops it fuses into one Composite, on 2 workers with the bits of 0', async (t) => {
  const x = pt.vector('x');
  const y = pt.exp(cubicOf(x.mul(0.5))).add(1);
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const onWorkers = await weft.compile([x], y, { pool });
  const nodes = onWorkers.fgraph.toposort().map((n) => String(n.op));
  t.equal(nodes.filter((n) => n.startsWith('Composite')).length, 1, `one fused node (${nodes.join(', ')})`);
  t.match(nodes.find((n) => n.startsWith('Composite')), /test\.cubic/, 'the user op is one of its steps');
  const inline = await weft.compile([x], y, { workers: 0 });
  const big = r.normal([1 << 17]);
  const sent = pool.jobsSent.ring + pool.jobsSent.messages;
  const a = (await onWorkers(big)).data;
  t.ok(pool.jobsSent.ring + pool.jobsSent.messages > sent, 'the call ran on the workers');
  const b = (await inline(big)).data;
  t.ok(
    a.every((v, i) => Object.is(v, b[i])),
    'equal bits on two workers and on the calling thread',
  );
  const want = Array.from(big.data as Float64Array, (v) => Math.exp(f64(v * 0.5)) + 1);
  t.ok(
    Array.from(a).every((v, i) => Math.abs(v - want[i]!) <= 4e-16 * Math.abs(want[i]!)),
    'and the values of the formula',
  );
});

t.test('unfused, it runs inplace on an intermediate, as a catalog op would', async (t) => {
  const x = pt.vector('x');
  const fn = await weft.compile([x], cubicOf(pt.exp(x)), { mode: new weft.Mode({ excluding: ['fusion'] }) });
  const node = fn.fgraph.toposort().find((n) => n.op instanceof weft.Elemwise && n.op.scalarOp === cubic)!;
  t.ok(node, 'its node');
  t.same(node.op.destroyMap, { 0: [0] }, "it writes into exp's output");
  const out = (await fn(xs)).data;
  t.ok(
    Array.from(xs.data as Float64Array).every((v, i) => Object.is(out[i], f64(Math.exp(v))) || Math.abs(out[i]! - f64(Math.exp(v))) <= 1e-15 * Math.abs(f64(Math.exp(v)))),
    'values',
  );
});

t.test('gradient and Rop through the scalar grad', async (t) => {
  const a = r.normal([3, 4]);
  await weft.verifyGrad((v: TV) => cubicOf(v), [a], { rng: rng(7) });
  await weft.checkRop((v: TV) => cubicOf(v), [a]);
  const x = pt.vector('x');
  const g = weft.grad(cubicOf(x).sum(), x) as TV;
  const gv = (await (await weft.compile([x], g))([2, -1])).data;
  t.same(Array.from(gv), [11, 2], '3x^2 - 1');
  await weft.checkInferShape([x], [cubicOf(x)], [xs], weft.Elemwise);
});

t.test('bad inputs and documents', async (t) => {
  await throwsExactly(t, () => cubicOf(pt.vector('i', 'int32')), TypeError, 'Elemwise{test.cubic}: test.cubic takes float32 or float64, got int32');
  await throwsExactly(t, () => new weft.Elemwise(cubic).call(pt.vector('a'), pt.vector('b')), TypeError, 'Elemwise{test.cubic}: expected 1 input, got 2');
  await throwsExactly(
    t,
    () => weft.serialize(cubicOf(pt.vector('x'))),
    TypeError,
    "serialize: the scalar op test.cubic is not one of weft's catalog, so a document cannot name it (register it with weft.registerScalarOp)",
  );
  // Registered, a document names it; the reader finds it by that name (never code).
  weft.registerScalarOp(cubic);
  weft.registerScalarOp(cubic);
  const x = pt.vector('x');
  const fused = await weft.compile([x], pt.exp(cubicOf(x)).add(1));
  const text = weft.serialize(fused);
  t.match(text, /"test\.cubic"/);
  const loaded = weft.deserialize(text);
  const again = await weft.compile(loaded.inputs, loaded.outputs);
  const [a] = (await again([0.5, -2])) as weft.NdArray[];
  const b = (await fused([0.5, -2])) as weft.NdArray;
  t.same(Array.from(a!.data), Array.from(b.data), 'the loaded function computes the same');
  const other = new weft.ScalarOp({ ...cubic.spec });
  await throwsExactly(t, () => weft.registerScalarOp(other), TypeError, 'registerScalarOp: a scalar op named "test.cubic" is already known (weft\'s catalog or an earlier registration)');
  await throwsExactly(t, () => weft.registerScalarOp(new weft.ScalarOp({ ...cubic.spec, name: 'exp' })), TypeError, 'registerScalarOp: a scalar op named "exp" is already known (weft\'s catalog or an earlier registration)');
});

/**
 * softsign x / (1 + |x|) with a WebAssembly form: the JS expression computes in float64 (a
 * float32 result is rounded once), so the form does too: float32 arguments are cast to float64
 * (exact), and the last step casts back (the one rounding Math.fround makes).
 */
const softsignSpec: weft.ScalarOpSpec = {
  name: 'test.softsign',
  nin: 1,
  outputDtype: ([d]) => (d === 'float32' ? 'float32' : 'float64'),
  checkInputs: ([d]) => (d === 'float32' || d === 'float64' ? undefined : `test.softsign takes float32 or float64, got ${d}`),
  code: ([x]) => `(${x} / (1 + Math.abs(${x})))`,
  wasm: ({ output }) => {
    const wide = output === 'float32' ? 1 : 0;
    const x = wide; // the argument as float64: value 0, or the cast (value 1)
    const steps: weft.ProgramStep[] = [
      ...(wide ? [{ op: 'cast' as const, args: [0], dtype: 'float64' as const }] : []),
      { op: 'abs', args: [x], dtype: 'float64' },
      { op: 'const', args: [], dtype: 'float64', value: 1 },
      { op: 'add', args: [wide + 2, wide + 1], dtype: 'float64' },
      { op: 'div', args: [x, wide + 3], dtype: 'float64' },
    ];
    return wide ? [...steps, { op: 'cast', args: [5], dtype: 'float32' }] : steps;
  },
  grad: ([x], _out, gz) => [gz.div(pt.sqr(pt.abs(x!).add(1)))],
};
const softsign = new weft.ScalarOp(softsignSpec);
const softsignOf = (v: TV): TV => new weft.Elemwise(softsign).call(v) as TV;

t.test('a user scalar op with a WebAssembly form: its own and inlined in a fused program, the bits of its JS code on 2 workers', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  for (const dtype of ['float32', 'float64'] as const) {
    const x = pt.vector('x', dtype);
    const alone = softsignOf(x);
    const chain = pt.exp(softsignOf(x.mul(0.5))).add(1);
    const big = r.normal([1 << 17]).data as Float64Array;
    // Every awkward value: zeros of both signs, infinities, NaN, huge and tiny numbers.
    big.set([0, -0, Infinity, -Infinity, NaN, 1e300, -1e-310, 3e38]);
    const arg = dtype === 'float32' ? Float32Array.from(big) : big;
    for (const [what, y] of [['alone', alone], ['in a fused chain', chain]] as const) {
      const onWorkers = await weft.compile([x], y, { pool });
      const node = onWorkers.fgraph.toposort().find((n) => n.op instanceof weft.Elemwise && String(n.op).includes('test.softsign'))!;
      t.ok(node, `${dtype} ${what}: its node (${onWorkers.fgraph.toposort().map((n) => String(n.op)).join(', ')})`);
      t.ok((node.op as weft.Elemwise).source(node).program, `${dtype} ${what}: the loop has a WebAssembly program`);
      // The reference executor runs perform on ordinary memory: the JS loops, its code.
      const a = (await onWorkers(arg)).data;
      const b = ((new ReferenceExecutor(new weft.FunctionGraph([x], [y])).run([weft.ndarray(arg)]))[0] as weft.NdArray).data;
      t.ok(
        a.every((v, i) => Object.is(v, b[i])),
        `${dtype} ${what}: equal bits on two workers (wasm) and in perform on ordinary memory (JS)`,
      );
    }
  }
  const x = pt.vector('x');
  t.same(Array.from((await (await weft.compile([x], softsignOf(x), { pool }))([3, -1, 0])).data), [0.75, -0.5, 0], 'values');
  await weft.verifyGrad((v: TV) => softsignOf(v), [r.normal([3, 4])], { rng: rng(8) });
});

t.test('shared memory runs the form, ordinary memory the code: a form that disagrees gives other values there, and DebugMode names it', async (t) => {
  // code says x + 2, the form x + 1.
  const lying = new weft.ScalarOp({
    name: 'test.lying',
    nin: 1,
    outputDtype: () => 'float64',
    code: ([x]) => `(${x} + 2)`,
    wasm: () => [{ op: 'const', args: [], dtype: 'float64', value: 1 }, { op: 'add', args: [0, 1], dtype: 'float64' }],
  });
  const x = pt.vector('x');
  const y = new weft.Elemwise(lying).call(x) as TV;
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const data = new Float64Array(1 << 16).fill(5);
  t.equal((await (await weft.compile([x], y, { pool }))(data)).data[0], 6, 'a plan (its values in shared memory): the form');
  const reference = new ReferenceExecutor(new weft.FunctionGraph([x], [y]));
  t.equal((reference.run([weft.ndarray(data)])[0] as weft.NdArray).data[0], 7, 'perform on ordinary memory: the code');
  const debug = await weft.compile([x], y, { mode: new weft.DebugMode() });
  await throwsExactly(
    t,
    () => debug([5, 5]),
    weft.DebugModeError,
    "Elemwise{test.lying} (node 0: Elemwise{test.lying}(x)): its kernel 'elemwise' on shared memory (as workers run it, where WebAssembly loops apply) gives 6 at index [0] of output 0 (Elemwise{test.lying}.out), on ordinary memory (the JS loops) 7",
  );
});

t.test('a form that is not an exact program is refused where the graph is built, naming the op, the dtypes and the step', async (t) => {
  const bad = (wasm: weft.ScalarWasmForm): weft.ScalarOp => new weft.ScalarOp({ ...softsignSpec, name: 'test.bad', wasm });
  const compileWith = (op: weft.ScalarOp) => () => new weft.Elemwise(op).call(pt.vector('x', 'float32'));
  await throwsExactly(
    t,
    compileWith(bad(() => [{ op: 'abs', args: [0], dtype: 'float64' }])),
    TypeError,
    'ScalarOp test.bad: its wasm form for (float32) to float32 ends in a float64 step; the last step gives the output',
  );
  await throwsExactly(
    t,
    compileWith(bad(() => [{ op: 'const', args: [], dtype: 'float32', value: 0.1 }, { op: 'add', args: [0, 1], dtype: 'float32' }])),
    TypeError,
    'ScalarOp test.bad: its wasm form for (float32) to float32: step 0 (const to float32): 0.1 is not a float32 value',
  );
  await throwsExactly(
    t,
    compileWith(bad(() => [{ op: 'neg', args: [1], dtype: 'float32' }])),
    TypeError,
    'ScalarOp test.bad: its wasm form for (float32) to float32: step 0 (neg to float32): arguments must be earlier values',
  );
  // A form that has nothing for these dtypes leaves the loop to JS.
  const none = bad(() => undefined);
  const x = pt.vector('x', 'float32');
  const fn = await weft.compile([x], new weft.Elemwise(none).call(x) as TV, { workers: 0 });
  const node = fn.fgraph.toposort()[0]!;
  t.equal((node.op as weft.Elemwise).source(node).program, undefined, 'no program');
  t.same(Array.from((await fn([3])).data), [0.75]);
});

/** max(|a|, |b|): a binary op that keeps its dtype, for a user reduction. */
const maxAbs = new weft.ScalarOp({
  name: 'test.maxAbs',
  nin: 2,
  outputDtype: ([a]) => a!,
  code: ([a, b]) => `Math.max(Math.abs(${a}), Math.abs(${b}))`,
});

t.test('a reduction over a user scalar op (ScalarReduce): values over any axes, equal bits on 2 workers, inferShape', async (t) => {
  const m = pt.tensor3('m');
  const v = r.normal([16, 64, 32]);
  const flat = Array.from(v.data as Float64Array);
  const at = (i: number, j: number, k: number): number => flat[(i * 64 + j) * 32 + k]!;
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  for (const axes of [[1], [0, 2], [0, 1, 2]]) {
    const y = new weft.ScalarReduce(maxAbs, axes, 0).call(m) as TV;
    const inline = (await (await weft.compile([m], y, { workers: 0 }))(v)) as weft.NdArray;
    const pooled = (await (await weft.compile([m], y, { pool }))(v)) as weft.NdArray;
    t.ok(
      inline.data.every((x, i) => Object.is(x, pooled.data[i])),
      `axes [${axes}]: equal bits on two workers`,
    );
    const want: number[] = [];
    const shape = [16, 64, 32];
    const keptAxes = [0, 1, 2].filter((a) => !axes.includes(a));
    const keptShape = keptAxes.map((a) => shape[a]!);
    const n = keptShape.reduce((p, d) => p * d, 1);
    for (let o = 0; o < n; o++) {
      const idx = [0, 0, 0];
      let rest = o;
      for (let k = keptAxes.length - 1; k >= 0; k--) {
        idx[keptAxes[k]!] = rest % keptShape[k]!;
        rest = Math.floor(rest / keptShape[k]!);
      }
      let acc = 0;
      const walk = (d: number): void => {
        if (d === 3) {
          acc = Math.max(acc, Math.abs(at(idx[0]!, idx[1]!, idx[2]!)));
          return;
        }
        if (!axes.includes(d)) return walk(d + 1);
        for (let q = 0; q < shape[d]!; q++) {
          idx[d] = q;
          walk(d + 1);
        }
      };
      walk(0);
      want.push(acc);
    }
    t.same(inline.shape, keptShape, `axes [${axes}]: shape`);
    t.ok(
      Array.from(inline.data).every((x, i) => x === want[i]),
      `axes [${axes}]: values`,
    );
    await weft.checkInferShape([m], [y], [v], weft.ScalarReduce);
  }
  t.ok(new weft.ScalarReduce(maxAbs, [1, 0], 0).equals(new weft.ScalarReduce(maxAbs, [0, 1], 0)), 'axes are part of the identity, sorted');
  await throwsExactly(t, () => new weft.ScalarReduce(cubic, [0], 0), TypeError, 'ScalarReduce: test.cubic takes 1 inputs; a reduction folds with a binary op');
  await throwsExactly(t, () => new weft.ScalarReduce(maxAbs, [3], 0).call(m), RangeError, 'ScalarReduce{test.maxAbs, axis=[3]}: axis [3] is out of range for m (TensorType(float64, (?, ?, ?)))');
});

t.teardown(() => weft.shutdown());
