// pt.special (issue 15): values against tables computed with mpmath at 40 digits
// (fixtures/special-values.py makes fixtures/special-values.json), the error bounds that
// docs/special.md states, SciPy's special values, float32 (computed in float64, rounded once),
// gradients (verifyGrad, the incomplete gamma and beta functions' parameters included), Rop,
// inferShape, fusion, the same bits on 0 and 2 workers, and the refusal of a float order.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { pt, rng, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
type Row = [number[], string];
const tables = JSON.parse(readFileSync(new URL('../fixtures/special-values.json', import.meta.url), 'utf8')) as Record<string, Row[]>;
const sp = pt.special;

type Fn = (...xs: TV[]) => TV;
/** pt.special's functions by name (the tables are named as they are). */
const FUNCTIONS = Object.fromEntries(Object.keys(tables).filter((n) => n in sp).map((n) => [n, (sp as unknown as Record<string, Fn>)[n]!]));

/**
 * The bound each function keeps (docs/special.md): relative error, but for erfcx of negative x
 * (relative to its condition number 2 x^2), j0, j1 and gammaln near their zeros (absolute below
 * 0.01), and the incomplete functions, whose deep tails and small-k complements allow 5e-13.
 */
function within(name: string, args: readonly number[], got: number, want: number): boolean {
  if (Object.is(got, want)) return true;
  const x = args[args.length - 1]!;
  let scale = Math.abs(want);
  let tol = 1e-14;
  if (name === 'erfcx' && x < 0) tol *= Math.max(1, 2 * x * x);
  if (name === 'j0' || name === 'j1' || name === 'gammaln') scale = Math.max(scale, 0.01);
  if (name === 'betainc' || name === 'gammainc' || name === 'gammaincc') tol = 5e-13;
  return Math.abs(got - want) <= tol * scale;
}

t.test('float64 values against mpmath, within the bounds docs/special.md states', async (t) => {
  t.same(Object.keys(sp).filter((n) => !(n in FUNCTIONS)), [], 'every function of pt.special has a table');
  for (const [name, fn] of Object.entries(FUNCTIONS)) {
    const rows = tables[name]!;
    const nin = rows[0]![0].length;
    const inputs = [...Array(nin).keys()].map((i) => (name === 'polygamma' && i === 0 ? pt.vector('n', 'int32') : pt.vector(`a${i}`)));
    const compiled = await weft.compile(inputs, fn(...inputs));
    const args = inputs.map((_, i) => (name === 'polygamma' && i === 0 ? Int32Array.from(rows, (r) => r[0][i]!) : Float64Array.from(rows, (r) => r[0][i]!)));
    const got = ((await compiled(...args)) as weft.NdArray).data;
    const bad = rows.flatMap(([a, w], k) => (within(name, a, got[k]!, Number(w)) ? [] : [`${name}(${a.join(', ')}) = ${got[k]} (mpmath ${w})`]));
    t.same(bad.slice(0, 3), [], `${name}: ${rows.length} points`);
  }
});

t.test('SciPy\'s special values: poles, limits, infinities, NaN outside the domain', async (t) => {
  const inf = Infinity;
  const cases: Array<[string, number[][], number[]]> = [
    ['gamma', [[0], [-0], [-1], [171.7], [inf], [-inf], [NaN]], [inf, -inf, NaN, inf, inf, NaN, NaN]],
    ['gammaln', [[0], [-1], [1], [2], [inf]], [inf, inf, 0, 0, inf]],
    ['psi', [[0], [-0], [-1], [inf], [-inf]], [-inf, inf, NaN, inf, NaN]],
    ['polygamma', [[1, 0], [2, -1], [3, -2], [1, inf]], [inf, -inf, inf, 0]],
    ['erfinv', [[-1], [1], [0], [1.5]], [-inf, inf, 0, NaN]],
    ['erfcinv', [[0], [2], [1], [-0.5], [2.5]], [inf, -inf, -0, NaN, NaN]],
    ['erfcx', [[inf], [-inf], [0], [-30]], [0, inf, 1, inf]],
    ['betaln', [[0, 1], [inf, 1]], [inf, -inf]],
    ['betainc', [[1, 1, 0.5], [2, 3, 0], [0, 1, 0.5], [2, 0, 0.5], [0, 0, 0.5], [1, 1, 1.5], [-1, 1, 0.5]], [0.5, 0, 1, 0, NaN, NaN, NaN]],
    ['gammainc', [[1, 0], [0, 1], [1, inf], [inf, 1], [0, 0], [2, -1]], [0, 1, 1, 0, NaN, NaN]],
    ['gammaincc', [[1, 0], [0, 1], [1, inf], [-1, 1]], [1, 0, 0, NaN]],
    ['i0', [[0], [713], [inf]], [1, inf, NaN]],
    ['i1', [[0], [-713]], [0, -inf]],
    ['i0e', [[inf], [-inf]], [0, 0]],
    ['i1e', [[-inf], [0]], [-0, 0]],
    ['j0', [[0], [inf]], [1, NaN]],
    ['j1', [[0], [-inf]], [0, NaN]],
  ];
  for (const [name, args, want] of cases) {
    const nin = args[0]!.length;
    const inputs = [...Array(nin).keys()].map((i) => (name === 'polygamma' && i === 0 ? pt.scalar('n', 'int32') : pt.scalar(`a${i}`)));
    const fn = await weft.compile(inputs, FUNCTIONS[name]!(...inputs));
    for (let k = 0; k < args.length; k++) {
      const got = ((await fn(...args[k]!)) as weft.NdArray).data[0]!;
      t.ok(Object.is(got, want[k]) || Math.abs(got - want[k]!) < 1e-15, `${name}(${args[k]!.join(', ')}) = ${got} (SciPy: ${want[k]})`);
    }
  }
});

t.test('float32: computed in float64 and rounded once: each element is the float64 value rounded to float32', async (t) => {
  for (const [name, fn] of Object.entries(FUNCTIONS)) {
    if (name === 'polygamma') continue;
    const rows = tables[name]!.slice(0, 40);
    const nin = rows[0]![0].length;
    const f32 = [...Array(nin).keys()].map((i) => pt.vector(`a${i}`, 'float32'));
    const f64 = [...Array(nin).keys()].map((i) => pt.vector(`b${i}`));
    const single = await weft.compile(f32, fn(...f32));
    const double = await weft.compile(f64, fn(...f64));
    const args = [...Array(nin).keys()].map((i) => Float32Array.from(rows, (row) => row[0][i]!));
    const got = (await single(...args)) as weft.NdArray;
    const ref = ((await double(...args.map((a) => Float64Array.from(a)))) as weft.NdArray).data;
    t.equal(got.dtype, 'float32', `${name}: float32 out`);
    const bad = Array.from(got.data, (g, k) => (Object.is(g, Math.fround(ref[k]!)) ? '' : `${k}: ${g} vs ${Math.fround(ref[k]!)}`)).filter(Boolean);
    t.same(bad.slice(0, 3), [], `${name}: every element is the float64 value rounded`);
  }
  t.equal(sp.gammaln(pt.vector('i', 'int32')).dtype, 'float64', 'integers give float64');
});

t.test('gradients (verifyGrad): PyTensor\'s, the incomplete gamma and beta functions\' parameters included', async (t) => {
  const v = (...xs: number[]): weft.NdArray => weft.ndarray(Float64Array.from(xs), [xs.length]);
  const r = { rng: rng(41) };
  await weft.verifyGrad(sp.gamma, [v(0.7, 2.5, -1.5, 4)], r);
  await weft.verifyGrad(sp.gammaln, [v(0.3, 2.5, -1.5, 40)], r);
  await weft.verifyGrad(sp.psi, [v(0.3, 2.5, -1.5, 40)], r);
  await weft.verifyGrad((x: TV) => sp.polygamma(2, x), [v(0.6, 2.5, 10)], r);
  await weft.verifyGrad(sp.erfinv, [v(-0.9, -0.2, 0.4, 0.95)], r);
  await weft.verifyGrad(sp.erfcinv, [v(0.05, 0.7, 1.3, 1.9)], r);
  await weft.verifyGrad(sp.erfcx, [v(-2, 0.1, 3, 30)], r);
  await weft.verifyGrad(sp.betaln, [v(0.5, 2, 30), v(1.5, 0.3, 7)], r);
  await weft.verifyGrad(sp.betainc, [v(0.5, 2, 30, 3), v(1.5, 0.3, 7, 40), v(0.3, 0.6, 0.85, 0.05)], r);
  await weft.verifyGrad(sp.gammainc, [v(0.5, 2, 30, 3), v(0.2, 3, 25, 9)], r);
  await weft.verifyGrad(sp.gammaincc, [v(0.5, 2, 30, 3), v(0.2, 3, 25, 9)], r);
  for (const f of [sp.i0, sp.i1, sp.i0e, sp.i1e, sp.j0, sp.j1]) await weft.verifyGrad(f, [v(-3, -0.4, 0.5, 2, 35)], r);
  // At 0 the derivatives of i1, i1e and j1 are their limits, 1/2 (the formulas divide by x).
  const x = pt.scalar('x');
  const at0 = await weft.compile([x], [sp.i1, sp.i1e, sp.j1].map((f) => weft.grad(f(x), x) as TV));
  t.same((await at0(0)).map((a) => a.data[0]), [0.5, 0.5, 0.5], 'd/dx at 0: 1/2');
  // polygamma's order is an integer: its gradient is zero, as for every discrete input.
  const n = pt.scalar('n', 'int32');
  const gn = await weft.compile([n, x], weft.grad(sp.polygamma(n, x), n) as TV, { onUnusedInput: 'ignore' });
  t.same(Array.from(((await gn(1, 2.5)) as weft.NdArray).data), [0], 'a zero gradient for the order');
});

t.test('Rop, inferShape with broadcasting, fusion with the element-wise work around them', async (t) => {
  const r = rng(43);
  const x = pt.matrix('x');
  const k = pt.vector('k');
  await weft.checkRop((a: TV, b: TV) => sp.gammainc(b, a), [weft.ndarray(Float64Array.from({ length: 6 }, (_, i) => 0.5 + i), [2, 3]), weft.ndarray(Float64Array.from([1.5, 2, 4]), [3])]);
  await weft.checkRop((a: TV) => sp.i0e(a).mul(sp.gammaln(a)), [r.uniform([2, 3], { low: 0.5, high: 3 })]);
  const y = sp.betainc(k, 2, x.exp().trueDiv(x.exp().add(1)));
  await weft.checkInferShape([x, k], [y], [r.normal([4, 3]), r.uniform([3], { low: 0.5, high: 2 })]);
  const fn = await weft.compile([x], sp.gammaln(x.abs().add(1)).mul(2).exp());
  const nodes = fn.fgraph.toposort().map((n) => String(n.op));
  t.same(nodes.length, 1, 'one node');
  t.match(nodes[0], /^Composite\{.*gammaln/, 'gammaln fused with abs, add, mul and exp');
});

t.test('float32 and float64 on 2 workers: the bits of the calling thread', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const r = rng(47);
  for (const dtype of ['float32', 'float64'] as const) {
    const a = pt.vector('a', dtype);
    const b = pt.vector('b', dtype);
    const outs = [sp.gammainc(a, b), sp.betainc(a, b, sp.erfcx(b).mul(0.1)), sp.i1e(b.sub(a)), sp.psi(a).add(sp.j0(b)), sp.erfinv(b.trueDiv(b.abs().add(1)))];
    const av = r.uniform([60000], { low: 0.1, high: 20, dtype });
    const bv = r.uniform([60000], { low: 0.01, high: 30, dtype });
    const inline = (await (await weft.compile([a, b], outs, { workers: 0 }))(av, bv)) as weft.NdArray[];
    const team = (await (await weft.compile([a, b], outs, { pool }))(av, bv)) as weft.NdArray[];
    inline.forEach((v, k) => t.ok(v.data.every((e, i) => Object.is(e, team[k]!.data[i])), `${dtype} output ${k}: equal bits`));
  }
});

t.test('bad input: a float order for polygamma is refused where the graph is built', async (t) => {
  await throwsExactly(t, () => sp.polygamma(pt.scalar('n'), pt.vector('x')), TypeError, 'Elemwise{polygamma}: polygamma: the order n must be an integer tensor, got float64');
});

t.teardown(() => weft.shutdown());
