// The element-wise functions of wave 2 (issue 14): arcsinh, arccosh, arctanh, reciprocal, exp2,
// trunc, isnan, isinf, logaddexp, log1mexp, logit, xlogx, xlogy0, through the broadcast tester
// (values against JS's Math or the textbook formula, the dtypes NumPy gives, transposed inputs,
// inferShape, verifyGrad, Rop), their special values, a fused chain of them in one WebAssembly
// loop with the bits of the calling thread's JS loops on 0 and 2 workers, and logsumexp (stable,
// over any axes, keepdims, its gradient the softmax), after PyTensor's test_math.py.
import t, { type Test } from 'tap';
import type { Dtype } from '../../src/kernels/dtype.js';
import { ReferenceExecutor } from '../../src/graph/reference-executor.js';
import { arr, domain, dtypeRules, gradCases, makeBroadcastTester, standardCases, type GoodCase } from '../elemwise-tester.js';
import { pt, rng, run, sameNumber, throwsExactly, weft } from '../helpers.js';
import * as reference from '../kernels/reference-math.js';

const r = rng(1414);
const INTS: readonly Dtype[] = ['int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'bool'];
type TV = weft.pt.TensorVariable;

interface UnarySpec {
  readonly op: (x: TV) => TV;
  readonly f: (x: number) => number;
  readonly range: readonly [number, number];
  readonly gradRange?: readonly [number, number];
  readonly specials?: readonly number[];
  readonly rule?: (ds: readonly Dtype[]) => Dtype;
  readonly ints?: readonly Dtype[];
  readonly tol?: number;
}

function unaryTester(s: UnarySpec): ReturnType<typeof makeBroadcastTester> {
  const good: Record<string, GoodCase> = standardCases(1, domain(r, [s.range]), s.rule ?? dtypeRules.float, { ints: s.ints ?? INTS });
  if (s.specials) good.specials = { args: [arr('float64', [...s.specials])], dtype: (s.rule ?? dtypeRules.float)(['float64']) };
  return makeBroadcastTester({
    op: s.op,
    expected: ([x]) => s.f(x!),
    good,
    tol: s.tol,
    tol32: 1.2e-7,
    grad: s.gradRange ? gradCases(1, domain(r, [s.gradRange])) : undefined,
  });
}

const SPECIALS = [NaN, Infinity, -Infinity, 0, -0, 1e-300, -1e-300, 1e300];
// weft's inverse hyperbolic functions are within 1.9 ulp of the true value (vmath-accuracy.test.ts),
// V8's Math functions within about 1: they may differ by 2 ulp (4.5e-16 relative).
t.test('arcsinh', unaryTester({ op: pt.arcsinh, f: Math.asinh, range: [-10, 10], gradRange: [-3, 3], specials: [...SPECIALS, 2, -2, 2 ** 28, 3e8], tol: 4.5e-16 }));
t.test('arccosh', unaryTester({ op: pt.arccosh, f: Math.acosh, range: [1, 10], gradRange: [1.5, 5], specials: [...SPECIALS, 1, 2, 0.5, 3e8], tol: 4.5e-16, ints: ['int8', 'uint8', 'int16', 'int32'] }));
t.test('arctanh', unaryTester({ op: pt.arctanh, f: Math.atanh, range: [-1, 1], gradRange: [-0.8, 0.8], specials: [...SPECIALS, 1, -1, 0.5, -0.75, 1.5], tol: 4.5e-16, ints: ['int8', 'bool'] }));
t.test('reciprocal', unaryTester({ op: pt.reciprocal, f: (x) => 1 / x, range: [-10, 10], gradRange: [0.5, 3], specials: SPECIALS }));
t.test('exp2', unaryTester({ op: pt.exp2, f: (x) => 2 ** x, range: [-20, 20], gradRange: [-3, 3], specials: [...SPECIALS, 1024, -1074, -1075, 0.5], tol: 2.3e-16 }));
t.test('log1mexp', unaryTester({
  op: pt.log1mexp,
  f: (x) => (x < -Math.LN2 ? Math.log1p(-Math.exp(x)) : Math.log(-Math.expm1(x))),
  range: [-20, 0],
  gradRange: [-5, -0.1],
  specials: [NaN, -Infinity, 0, -0, -1e-300, -Math.LN2, 1, -800],
  tol: 4.5e-16,
  ints: ['int8', 'int16', 'int32'],
}));
t.test('logit', unaryTester({
  op: pt.logit,
  f: (x) => Math.log(x / (1 - x)),
  range: [0.01, 0.99],
  gradRange: [0.1, 0.9],
  specials: [NaN, 0, 1, 0.5, 1e-300, 2, -1],
  // Near 1/2 weft's logit is accurate (2 arctanh(2x - 1)) where the formula cancels.
  tol: 1e-13,
  ints: ['bool'],
}));
t.test('xlogx', unaryTester({ op: pt.xlogx, f: (x) => (x === 0 ? 0 : x * Math.log(x)), range: [0, 10], gradRange: [0.5, 5], specials: [NaN, Infinity, 0, -0, 1, -1, 1e-300], tol: 4.5e-16 }));

t.test('trunc', makeBroadcastTester({
  op: pt.trunc,
  expected: ([x]) => Math.trunc(x!),
  good: {
    ...standardCases(1, domain(r, [[-10, 10]]), dtypeRules.numpy, { ints: INTS }),
    specials: { args: [arr('float64', [NaN, Infinity, -Infinity, -0, 0.5, -0.5, 1.5, -2.7, 4503599627370495.5, 1e300])], dtype: 'float64' },
    int32_large: { args: [arr('int32', [2147483647, -2147483648])], dtype: 'int32' },
  },
  grad: gradCases(1, domain(r, [[0.2, 0.8]])),
}));

for (const [name, op, f] of [
  ['isnan', pt.isnan, (x: number) => Number.isNaN(x)],
  ['isinf', pt.isinf, (x: number) => Math.abs(x) === Infinity],
] as const) {
  t.test(name, makeBroadcastTester({
    op,
    expected: ([x]) => f(x!),
    good: {
      ...standardCases(1, domain(r, [[-10, 10]]), dtypeRules.bool, { ints: INTS }),
      specials: { args: [arr('float64', SPECIALS)], dtype: 'bool' },
      specials32: { args: [arr('float32', SPECIALS)], dtype: 'bool' },
    },
  }));
}

t.test('logaddexp', makeBroadcastTester({
  op: (a, b) => pt.logaddexp(a, b),
  expected: ([a, b]) => (a === b ? a! + Math.LN2 : Math.max(a!, b!) + Math.log1p(Math.exp(-Math.abs(a! - b!)))),
  good: {
    ...standardCases(2, domain(r, [[-30, 30]]), dtypeRules.float, { ints: ['int8', 'int16', 'int32', 'uint8'] }),
    large: { args: [arr('float64', [1000, -1000, 800, Infinity, -Infinity, -Infinity, NaN]), arr('float64', [1000, -1000, -800, Infinity, -Infinity, 5, 1])], dtype: 'float64' },
  },
  tol: 4.5e-16,
  tol32: 1.2e-7,
  grad: gradCases(2, domain(r, [[-3, 3]])),
}));

t.test('xlogy0', makeBroadcastTester({
  op: (x, y) => pt.xlogy0(x, y),
  expected: ([x, y]) => (x === 0 ? 0 : x! * Math.log(y!)),
  good: {
    ...standardCases(2, domain(r, [[-5, 5], [0, 10]]), dtypeRules.float, { ints: ['int8', 'int16', 'int32', 'uint8'] }),
    zeros: { args: [arr('float64', [0, 0, 0, 1, 2]), arr('float64', [NaN, 0, -1, 0, 1])], dtype: 'float64' },
  },
  tol: 4.5e-16,
  tol32: 1.2e-7,
  grad: gradCases(2, domain(r, [[-3, 3], [0.5, 3]])),
}));

t.test('values against the double-double reference, within 2 ulp', async (t) => {
  const x = pt.vector('x');
  const cases: Array<[(v: TV) => TV, (v: number) => reference.DD, number[]]> = [
    [pt.arcsinh, reference.asinh, [0.5, 1e-10, 1e10, -3, 2.5, 3e8]],
    [pt.arccosh, reference.acosh, [1.5, 1 + 2 ** -40, 1e10, 2.5, 3e8]],
    [pt.arctanh, reference.atanh, [0.5, -0.999, 1e-10, 0.25, -0.75]],
    [pt.log1mexp, (v) => (v < -Math.LN2 ? reference.log1pDD(reference.neg(reference.exp(v))) : reference.logDD(reference.neg(reference.expm1(v)))), [-1e-20, -1, -50, -0.5]],
    [pt.logit, (v) => reference.logDD(reference.div(reference.fromNumber(v), reference.twoSum(1, -v))), [0.5 + 2 ** -40, 0.9, 1e-5, 0.3]],
  ];
  for (const [op, ref, xs] of cases) {
    const got = (await run([x], op(x), [xs])).data;
    const errors = xs.map((v, i) => reference.ulpError(got[i]!, ref(v)));
    t.ok(errors.every((e) => e <= 2), `${op.name}: ${errors.map((e) => e.toFixed(2)).join(', ')} ulp`);
  }
});

t.test('a fused chain of them: one loop, in WebAssembly on the pool, the bits of the JS loops on 0 and 2 workers', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  for (const dtype of ['float32', 'float64'] as const) {
    const x = pt.vector('x', dtype);
    const y = pt.vector('y', dtype);
    const p = pt.sigmoid(x);
    const z = pt.arcsinh(x).add(pt.logaddexp(x, y)).sub(pt.logit(p)).add(pt.xlogy0(p, pt.exp2(y.mul(0.1))))
      .add(pt.where(pt.isnan(x).or(pt.isinf(y)), 0, pt.trunc(y))).add(pt.reciprocal(pt.arccosh(pt.abs(x).add(1)))).add(pt.arctanh(p.mul(0.9)))
      .add(pt.log1mexp(pt.abs(y).neg().sub(0.01))).add(pt.xlogx(p));
    const fn = await weft.compile([x, y], z, { pool });
    // sigmoid(x) is read by four steps: it is computed once, the rest is one loop.
    const nodes = fn.fgraph.toposort().filter((n) => n.op instanceof weft.Composite);
    t.equal(nodes.length, 1, `${dtype}: one fused node (${fn.fgraph.toposort().map((n) => String(n.op)).join(', ')})`);
    t.ok((nodes[0]!.op as weft.Elemwise).source(nodes[0]!).program, `${dtype}: its loop is a WebAssembly program`);
    const n = 1 << 16;
    const g = r.normal([2, n]).data as Float64Array;
    g.set([NaN, Infinity, -Infinity, 0, -0, 1e300, -1e-310], 0);
    const [xs, ys] = [g.subarray(0, n), g.subarray(n)].map((a) => (dtype === 'float32' ? Float32Array.from(a, (v) => v * 5) : Float64Array.from(a, (v) => v * 5)));
    const want = (new ReferenceExecutor(new weft.FunctionGraph([x, y], [z])).run([weft.ndarray(xs!), weft.ndarray(ys!)])[0] as weft.NdArray).data;
    for (const workers of [0, 2]) {
      const got = (await (await weft.compile([x, y], z, { pool, workers }))(xs!, ys!)).data;
      let bad = 0;
      for (let i = 0; i < n; i++) if (!sameNumber(got[i]!, want[i]!)) bad++;
      t.equal(bad, 0, `${dtype}, workers ${workers}: equal bits`);
    }
  }
});

t.test('bad inputs: the exact errors', async (t) => {
  const call = (f: unknown, ...args: unknown[]) => () => (f as (...a: unknown[]) => TV)(...args);
  await throwsExactly(t, call(pt.logaddexp, pt.vector('a')), TypeError, 'Elemwise{logaddexp}: expected 2 inputs, got 1');
  await throwsExactly(t, call(pt.isnan, pt.vector('a'), pt.vector('b')), TypeError, 'Elemwise{isnan}: expected 1 input, got 2');
  await throwsExactly(t, call(pt.xlogy0, pt.vector('a'), 'b'), TypeError, 'Elemwise{xlogy0}: argument 1: constant: cannot make a constant from string');
});

// ---------------------------------------------------------------------------------------------
// logsumexp

/** Equal within `tol` relative (infinities and NaN exactly). */
function closeTo(t: Test, got: ArrayLike<number>, want: readonly number[], tol: number, msg: string): void {
  const bad = want.flatMap((w, i) => (sameNumber(got[i]!, w) || Math.abs(got[i]! - w) <= tol * Math.max(1, Math.abs(w)) ? [] : [`[${i}] ${got[i]} vs ${w}`]));
  t.same(bad.slice(0, 5), [], msg);
}

/** log(sum(exp(row))) in float64 with the maximum taken out (the expectation, written apart from weft's). */
function lse(values: readonly number[]): number {
  const m = Math.max(...values);
  if (!Number.isFinite(m)) return m === -Infinity ? -Infinity : Number.isNaN(m) ? NaN : Infinity;
  return m + Math.log(values.reduce((s, v) => s + Math.exp(v - m), 0));
}

t.test('logsumexp: over every axis set, keepdims, large and -inf values (PyTensor test_logsumexp)', async (t) => {
  const m = pt.tensor3('m');
  const shape = [3, 4, 5];
  const v = r.normal(shape);
  const flat = Array.from(v.data as Float64Array, (x) => x * 300);
  flat.fill(-Infinity, 0, 5); // one row of -inf: -inf, not NaN
  const value = weft.ndarray(Float64Array.from(flat), shape);
  for (const axis of [[0], [1], [2], [0, 2], [0, 1, 2]]) {
    for (const keepdims of [false, true]) {
      const got = await run([m], pt.logsumexp(m, { axis, keepdims }), [value]);
      const kept = [0, 1, 2].filter((a) => !axis.includes(a));
      t.same(got.shape, keepdims ? shape.map((d, a) => (axis.includes(a) ? 1 : d)) : kept.map((a) => shape[a]!), `axis [${axis}] keepdims ${keepdims}: shape`);
      const want: number[] = [];
      const count = kept.reduce((p, a) => p * shape[a]!, 1);
      for (let o = 0; o < count; o++) {
        const at = [0, 0, 0];
        let rest = o;
        for (let k = kept.length - 1; k >= 0; k--) {
          at[kept[k]!] = rest % shape[kept[k]!]!;
          rest = Math.floor(rest / shape[kept[k]!]!);
        }
        const group: number[] = [];
        const walk = (d: number): void => {
          if (d === 3) return void group.push(flat[(at[0]! * 4 + at[1]!) * 5 + at[2]!]!);
          if (!axis.includes(d)) return walk(d + 1);
          for (let q = 0; q < shape[d]!; q++) {
            at[d] = q;
            walk(d + 1);
          }
        };
        walk(0);
        want.push(lse(group));
      }
      closeTo(t, got.data, want, 1e-14, `axis [${axis}] keepdims ${keepdims}`);
    }
  }
  const all = await run([m], pt.logsumexp(m), [value]);
  closeTo(t, all.data, [lse(flat)], 1e-14, 'all axes');
  t.equal((await run([m], pt.logsumexp(m, 2), [weft.ndarray(new Float64Array(60).fill(Infinity), shape)])).data[0], Infinity, '+inf stays +inf');
});

t.test('logsumexp: dtypes, gradient (the softmax), inferShape, Rop', async (t) => {
  const x = pt.matrix('x');
  const xv = r.normal([3, 4]);
  await weft.verifyGrad((a: TV) => pt.logsumexp(a, 1), [xv], { rng: rng(3) });
  await weft.checkRop((a: TV) => pt.logsumexp(a, 0), [xv]);
  const g = weft.grad(pt.logsumexp(x, 1).sum(), x) as TV;
  const gv = await run([x], g, [xv]);
  const soft = await run([x], pt.softmax(x, 1), [xv]);
  closeTo(t, gv.data, Array.from(soft.data), 1e-15, 'the gradient is the softmax');
  await weft.checkInferShape([x], [pt.logsumexp(x, { axis: 1, keepdims: true })], [xv]);
  const i = pt.vector('i', 'int32');
  const li = pt.logsumexp(i);
  t.equal(li.dtype, 'float64', 'integers in float64');
  closeTo(t, (await run([i], li, [new Int32Array([1, 2, 3])])).data, [lse([1, 2, 3])], 1e-15, 'int32 values');
  const f = pt.vector('f', 'float32');
  t.equal(pt.logsumexp(f).dtype, 'float32');
  await throwsExactly(t, () => pt.logsumexp(x, 2), RangeError, 'logsumexp: axis 2 is out of range for a 2-d input (axes are -2..1)');
});

t.teardown(() => weft.shutdown());
