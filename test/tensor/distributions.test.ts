// The RandomStream distributions (issue 15): for each, 100k seeded draws against the exact
// distribution (Kolmogorov-Smirnov for continuous ones, chi-square over bins of expected count
// >= 5 for discrete ones, each at a false-failure rate of 1e-4: D > sqrt(ln(2 / 1e-4) / 2n), or
// a chi-square p-value below 1e-4), mean and variance within 5 standard errors; PyTensor's
// parameter broadcasting and size; the same bits on 0, 1 and 2 workers and in DebugMode (which
// also runs the kernel in chunks); reparameterization gradients (verifyGrad with the state held,
// and the implicit gradients of gamma and beta keeping the draw's quantile); exact errors for bad
// parameters, at run time naming the draw.
import betainc from '@stdlib/math-base-special-betainc';
import gammaln from '@stdlib/math-base-special-gammaln';
import t from 'tap';
import { gammainc, gammaincc } from '../../src/kernels/incomplete-gamma-beta.js';
import { scalarLib } from '../../src/kernels/scalar-lib.js';
import { pt, rng, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
const N = 100_000;
const ALPHA = 1e-4;
const erfc = scalarLib.erfc as (x: number) => number;
const phi = (z: number): number => 0.5 * erfc(-z / Math.SQRT2);

async function drawsOf(v: TV): Promise<Float64Array> {
  const out = await (await weft.compile([], v))();
  return Float64Array.from((out as weft.NdArray).data as ArrayLike<number>, Number);
}

const meanOf = (xs: Float64Array): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const varOf = (xs: Float64Array): number => {
  const m = meanOf(xs);
  return xs.reduce((a, b) => a + (b - m) ** 2, 0) / xs.length;
};

/** The Kolmogorov-Smirnov statistic of the draws against the CDF. */
function ksStatistic(xs: Float64Array, cdf: (x: number) => number): number {
  const sorted = Float64Array.from(xs).sort();
  let d = 0;
  sorted.forEach((x, i) => {
    const f = cdf(x);
    d = Math.max(d, Math.abs(f - i / sorted.length), Math.abs((i + 1) / sorted.length - f));
  });
  return d;
}

/** The chi-square p-value of integer draws against a PMF on lowest, lowest + 1, ...: bins of expected count >= 5, the tail one bin. */
function chiSquarePValue(xs: Float64Array, pmf: (k: number) => number, lowest = 0): number {
  const counts = new Map<number, number>();
  for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1);
  const n = xs.length;
  let [chi2, bins, observed, expected, mass, k] = [0, 0, 0, 0, 0, lowest];
  for (; n * (1 - mass) >= 10; k++) {
    const p = pmf(k);
    mass += p;
    observed += counts.get(k) ?? 0;
    expected += n * p;
    if (expected >= 5) {
      chi2 += (observed - expected) ** 2 / expected;
      bins += 1;
      [observed, expected] = [0, 0];
    }
  }
  // The tail: every draw from k on (and what the last bin had gathered).
  for (const [v, c] of counts) if (v >= k || v < lowest) observed += c;
  expected += n * Math.max(0, 1 - mass);
  if (expected > 1e-9) {
    chi2 += (observed - expected) ** 2 / expected;
    bins += 1;
  } else if (observed > 0) return 0;
  return gammaincc((bins - 1) / 2, chi2 / 2);
}

const KS_CRITICAL = Math.sqrt(Math.log(2 / ALPHA) / 2) / Math.sqrt(N);
const logChoose = (n: number, k: number): number => gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1);

interface Continuous {
  readonly name: string;
  readonly draw: (s: weft.RandomStream) => TV;
  readonly cdf: (x: number) => number;
  readonly mean?: number;
  readonly variance?: number;
}

const continuous: Continuous[] = [
  { name: 'uniform(-1, 3)', draw: (s) => s.uniform([N], { low: -1, high: 3 }), cdf: (x) => (x + 1) / 4, mean: 1, variance: 16 / 12 },
  { name: 'normal(2, 3)', draw: (s) => s.normal([N], { mean: 2, std: 3 }), cdf: (x) => phi((x - 2) / 3), mean: 2, variance: 9 },
  { name: 'standardNormal', draw: (s) => s.standardNormal({ size: [N] }), cdf: phi, mean: 0, variance: 1 },
  { name: 'gamma(2.5, 2)', draw: (s) => s.gamma(2.5, 2, { size: [N] }), cdf: (x) => gammainc(2.5, x / 2), mean: 5, variance: 10 },
  { name: 'gamma(0.3, 1) (boosted below 1)', draw: (s) => s.gamma(0.3, 1, { size: [N] }), cdf: (x) => gammainc(0.3, x), mean: 0.3, variance: 0.3 },
  { name: 'beta(2, 5)', draw: (s) => s.beta(2, 5, { size: [N] }), cdf: (x) => betainc(x, 2, 5), mean: 2 / 7, variance: 10 / (49 * 8) },
  { name: 'beta(0.4, 0.6)', draw: (s) => s.beta(0.4, 0.6, { size: [N] }), cdf: (x) => betainc(x, 0.4, 0.6), mean: 0.4, variance: 0.24 / 2 },
  { name: 'exponential(2)', draw: (s) => s.exponential(2, { size: [N] }), cdf: (x) => 1 - Math.exp(-x / 2), mean: 2, variance: 4 },
  { name: 'laplace(1, 2)', draw: (s) => s.laplace(1, 2, { size: [N] }), cdf: (x) => (x < 1 ? 0.5 * Math.exp((x - 1) / 2) : 1 - 0.5 * Math.exp(-(x - 1) / 2)), mean: 1, variance: 8 },
  { name: 'logistic(1, 2)', draw: (s) => s.logistic(1, 2, { size: [N] }), cdf: (x) => 1 / (1 + Math.exp(-(x - 1) / 2)), mean: 1, variance: (Math.PI ** 2 * 4) / 3 },
  { name: 'lognormal(0, 0.5)', draw: (s) => s.lognormal(0, 0.5, { size: [N] }), cdf: (x) => phi(Math.log(x) / 0.5), mean: Math.exp(0.125), variance: (Math.exp(0.25) - 1) * Math.exp(0.25) },
  { name: 'halfNormal(0, 1.5)', draw: (s) => s.halfNormal(0, 1.5, { size: [N] }), cdf: (x) => 1 - erfc(x / (1.5 * Math.SQRT2)), mean: 1.5 * Math.sqrt(2 / Math.PI), variance: 2.25 * (1 - 2 / Math.PI) },
  {
    name: 'studentT(5, 1, 2)',
    draw: (s) => s.studentT(5, 1, 2, { size: [N] }),
    cdf: (x) => {
      const z = (x - 1) / 2;
      const tail = 0.5 * betainc(5 / (5 + z * z), 2.5, 0.5);
      return z > 0 ? 1 - tail : tail;
    },
    mean: 1,
    variance: (4 * 5) / 3,
  },
  { name: 'cauchy(0, 1) (no moments)', draw: (s) => s.cauchy(0, 1, { size: [N] }), cdf: (x) => 0.5 + Math.atan(x) / Math.PI },
];

interface Discrete {
  readonly name: string;
  readonly draw: (s: weft.RandomStream) => TV;
  readonly pmf: (k: number) => number;
  readonly lowest?: number;
  readonly mean: number;
  readonly variance: number;
}

const binomialPmf = (n: number, p: number) => (k: number): number => (k > n ? 0 : Math.exp(logChoose(n, k) + k * Math.log(p) + (n - k) * Math.log1p(-p)));
const poissonPmf = (lam: number) => (k: number): number => Math.exp(k * Math.log(lam) - lam - gammaln(k + 1));
const discrete: Discrete[] = [
  { name: 'integers(-3, 4)', draw: (s) => s.integers([N], -3, 4), pmf: (k) => (k < 4 ? 1 / 7 : 0), lowest: -3, mean: 0, variance: 4 },
  { name: 'bernoulli(0.3)', draw: (s) => s.bernoulli(0.3, { size: [N] }), pmf: (k) => (k === 0 ? 0.7 : k === 1 ? 0.3 : 0), mean: 0.3, variance: 0.21 },
  { name: 'binomial(20, 0.3) (inversion)', draw: (s) => s.binomial(20, 0.3, { size: [N] }), pmf: binomialPmf(20, 0.3), mean: 6, variance: 4.2 },
  { name: 'binomial(1000, 0.4) (order statistics)', draw: (s) => s.binomial(1000, 0.4, { size: [N] }), pmf: binomialPmf(1000, 0.4), mean: 400, variance: 240 },
  { name: 'binomial(500, 0.9) (symmetric)', draw: (s) => s.binomial(500, 0.9, { size: [N] }), pmf: binomialPmf(500, 0.9), mean: 450, variance: 45 },
  { name: 'poisson(4) (inversion)', draw: (s) => s.poisson(4, { size: [N] }), pmf: poissonPmf(4), mean: 4, variance: 4 },
  { name: 'poisson(60) (PTRS)', draw: (s) => s.poisson(60, { size: [N] }), pmf: poissonPmf(60), mean: 60, variance: 60 },
  { name: 'geometric(0.25)', draw: (s) => s.geometric(0.25, { size: [N] }), pmf: (k) => (k < 1 ? 0 : 0.25 * 0.75 ** (k - 1)), lowest: 1, mean: 4, variance: 12 },
];

const withinStandardErrors = (m: number, v: number, want: { mean?: number; variance?: number }, xs: Float64Array): [boolean, boolean] => {
  const n = xs.length;
  const meanOk = Math.abs(m - want.mean!) < 5 * Math.sqrt(want.variance! / n);
  // The variance of the sample variance is (mu4 - sigma^4) / n; mu4 from the draws themselves.
  const mu4 = xs.reduce((a, x) => a + (x - m) ** 4, 0) / n;
  const varOk = Math.abs(v - want.variance!) < 5 * Math.sqrt(Math.max(mu4 - v * v, 1e-300) / n);
  return [meanOk, varOk];
};

t.test(`continuous draws: Kolmogorov-Smirnov against the exact CDF (D < ${KS_CRITICAL.toFixed(5)}), mean and variance`, async (t) => {
  const stream = new weft.RandomStream(2026);
  for (const c of continuous) {
    const xs = await drawsOf(c.draw(stream));
    const d = ksStatistic(xs, c.cdf);
    t.ok(d < KS_CRITICAL, `${c.name}: D = ${d.toFixed(5)}`);
    if (c.mean === undefined) continue; // Cauchy draws have no mean or variance to compare.
    const [m, v] = [meanOf(xs), varOf(xs)];
    const [meanOk, varOk] = withinStandardErrors(m, v, c, xs);
    t.ok(meanOk && varOk, `${c.name}: mean ${m.toFixed(4)} (${c.mean.toFixed(4)}), variance ${v.toFixed(4)} (${c.variance?.toFixed(4)})`);
  }
});

t.test(`discrete draws: chi-square against the exact PMF (p-value > ${ALPHA}), mean and variance`, async (t) => {
  const stream = new weft.RandomStream(2027);
  for (const c of discrete) {
    const xs = await drawsOf(c.draw(stream));
    const p = chiSquarePValue(xs, c.pmf, c.lowest ?? 0);
    t.ok(p > ALPHA, `${c.name}: p-value ${p.toExponential(3)}`);
    const [m, v] = [meanOf(xs), varOf(xs)];
    const [meanOk, varOk] = withinStandardErrors(m, v, c, xs);
    t.ok(meanOk && varOk, `${c.name}: mean ${m.toFixed(4)} (${c.mean}), variance ${v.toFixed(4)} (${c.variance})`);
  }
  // A test that can fail: a biased coin is refused.
  const biased = await drawsOf(stream.bernoulli(0.31, { size: [N] }));
  t.ok(chiSquarePValue(biased, (k) => (k === 0 ? 0.7 : k === 1 ? 0.3 : 0)) < ALPHA, 'bernoulli(0.31) against p = 0.3 fails the test');
});

t.test("parameters broadcast as PyTensor's; size; dtypes", async (t) => {
  const stream = new weft.RandomStream(3);
  const lam = pt.vector('lam');
  const p = stream.poisson(lam);
  t.same([p.ndim, p.dtype], [1, 'int32'], 'without size: the parameters\' shape, int32 counts');
  const scale = pt.matrix('scale');
  const g = stream.gamma(pt.constant([1, 2, 3]), scale);
  const fn = await weft.compile([lam, scale], [p, g]);
  const [pv, gv] = await fn([1, 1000, 1e6], [[1], [2]]);
  t.same(gv!.shape, [2, 3], 'shape (3,) against scale (2, 1): (2, 3)');
  t.ok(Math.abs(pv!.data[2]! - 1e6) < 6000, `poisson(1e6) near 1e6: ${pv!.data[2]}`);
  const sized = stream.normal([2, 3], { mean: pt.constant([0, 10, 100]) });
  t.same(sized.type.shape, [2, 3]);
  const b = stream.bernoulli(0.5, { size: [4], dtype: 'bool' });
  t.equal(b.dtype, 'bool', 'bernoulli as bool');
  const f32 = stream.beta(2, 2, { size: [3], dtype: 'float32' });
  t.equal((await f32.eval()).dtype, 'float32');
  const st = stream.studentT(pt.constant([[1], [30]]), 0, 1);
  t.same(st.type.shape, [2, 1]);
  const m = pt.matrix('m');
  const shaped = [stream.gamma(m, 2), stream.poisson(m.abs()), stream.studentT(3, m, 1), stream.binomial(5, 0.5, { size: pt.shape(m) }), stream.beta(1, m.abs().add(1), { size: [4, m.shape.get(1)] })];
  await weft.checkInferShape([m], shaped, [weft.ndarray(Float64Array.from([1, 2, 3, 4, 5, 6, 7, 8]), [4, 2])]);
  await throwsExactly(t, () => stream.gamma(1, 1, { size: [2], dtype: 'int32' }), TypeError, 'GammaRV: dtype must be float32 or float64, got int32');
  await throwsExactly(t, () => stream.poisson(1, { dtype: 'float64' }), TypeError, 'PoissonRV: dtype must be an integer dtype, got float64');
  await throwsExactly(t, () => stream.bernoulli(0.5, { dtype: 'float32' }), TypeError, 'BernoulliRV: dtype must be an integer dtype or bool, got float32');
});

t.test('the same bits on 0, 1 and 2 workers and in DebugMode (the kernel also run in chunks)', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const make = (): TV[] => {
    const s = new weft.RandomStream(99);
    const size = { size: [200_000] };
    return [s.normal([200_000]), s.gamma(0.7, 1, size), s.beta(0.5, 2, size), s.binomial(800, 0.3, size), s.poisson(25, size), s.studentT(3, 0, 1, size), s.cauchy(0, 1, size), s.integers([200_000], 0, 1000)];
  };
  const results: weft.NdArray[][] = [];
  let threads = new Set<number>();
  for (const workers of [0, 1, 2]) {
    const fn = await weft.compile([], make(), { pool, workers, profile: true });
    results.push(await fn());
    if (workers === 2) threads = new Set(fn.profile!.events.filter((e) => e.node.op instanceof weft.RandomVariable).map((e) => e.thread));
  }
  results.push(await (await weft.compile([], make(), { mode: 'DebugMode' }))());
  for (const [k, other] of results.slice(1).entries()) {
    results[0]!.forEach((v, i) => t.ok(v.data.every((e, j) => Object.is(e, other[i]!.data[j])), `${['1 worker', '2 workers', 'DebugMode'][k]}: draw ${i} bitwise equal to workers 0`));
  }
  t.ok(threads.size === 2, `on 2 workers the draws ran on both (${[...threads]})`);
});

t.test('reparameterization gradients: location-scale families by verifyGrad with the state held; gamma and beta keep the quantile', async (t) => {
  const state = pt.constant(weft.randomState(11));
  const o = { rng: rng(12) };
  const families: Array<[string, new (dtype: 'float64', ndim: number) => weft.RandomVariable]> = [
    ['normal', weft.NormalRV], ['laplace', weft.LaplaceRV], ['logistic', weft.LogisticRV], ['halfNormal', weft.HalfNormalRV], ['cauchy', weft.CauchyRV], ['lognormal', weft.LognormalRV],
  ];
  for (const [name, RV] of families) {
    await weft.verifyGrad((loc: TV, scale: TV) => (new RV('float64', 1).call(state, 5, loc, scale) as TV[])[1]!, [rng(1).normal([5]), weft.ndarray(Float64Array.from([0.5, 1, 1.5, 2, 2.5]), [5])], o);
    t.pass(`${name}: d/dloc and d/dscale`);
  }
  await weft.verifyGrad((low: TV, high: TV) => (new weft.UniformRV('float64', 1).call(state, 4, low, high) as TV[])[1]!, [weft.ndarray(Float64Array.from([-1, 0, 1, 2]), [4]), weft.ndarray(Float64Array.from([3, 4, 5, 6]), [4])], o);
  await weft.verifyGrad((scale: TV) => (new weft.ExponentialRV('float64', 1).call(state, 4, scale) as TV[])[1]!, [weft.ndarray(Float64Array.from([0.5, 1, 2, 4]), [4])], o);
  await weft.verifyGrad((loc: TV, scale: TV) => (new weft.StudentTRV('float64', 1).call(state, 3, 4, loc, scale) as TV[])[1]!, [rng(2).normal([3]), weft.ndarray(Float64Array.from([1, 2, 3]), [3])], o);
  // A scalar parameter broadcast to the draws gets the summed gradient.
  await weft.verifyGrad((mu: TV) => (new weft.NormalRV('float64', 1).call(state, 6, mu, 2) as TV[])[1]!, [weft.ndarray(Float64Array.from([0.3]), [])], o);
  // Gamma and beta: the implicit gradient moves the draw so that its CDF value stays (to first order).
  const a = pt.scalar('a');
  const sc = pt.scalar('sc');
  const [, gx] = new weft.GammaRV('float64', 1).call(state, 200, a, sc) as TV[];
  const [ga, gs] = weft.grad(gx!.sum(), [a, sc]) as TV[];
  const perDraw = await weft.compile([a, sc], [gx!, weft.grad(gx!.get(0), a) as TV, weft.grad(gx!.get(0), sc) as TV, ga!, gs!]);
  for (const shape of [0.4, 3]) {
    const [xv, d0, s0] = await perDraw(shape, 2);
    const x0 = xv!.data[0]!;
    const eps = 1e-6;
    const moved = gammainc(shape + eps, (x0 + eps * d0!.data[0]!) / 2) - gammainc(shape, x0 / 2);
    const still = gammainc(shape + eps, x0 / 2) - gammainc(shape, x0 / 2);
    t.ok(Math.abs(moved) < 1e-3 * Math.abs(still), `gamma(${shape}): F(x + eps dx/da; a + eps) - F(x; a) = ${moved.toExponential(2)} against ${still.toExponential(2)} unmoved`);
    t.ok(Math.abs(s0!.data[0]! - x0 / 2) < 1e-15 * x0, 'gamma: dx/dscale = x / scale');
  }
  const [, bx] = new weft.BetaRV('float64', 1).call(state, 50, a, sc) as TV[];
  const bFn = await weft.compile([a, sc], [bx!, ...(weft.grad(bx!.get(0), [a, sc]) as TV[])]);
  const [bv, da, db] = await bFn(0.7, 2.5);
  const x0 = bv!.data[0]!;
  const eps = 1e-6;
  for (const [which, d, shift] of [['alpha', da!, [eps, 0]], ['beta', db!, [0, eps]]] as const) {
    const moved = betainc(x0 + eps * d.data[0]!, 0.7 + shift[0], 2.5 + shift[1]) - betainc(x0, 0.7, 2.5);
    const still = betainc(x0, 0.7 + shift[0], 2.5 + shift[1]) - betainc(x0, 0.7, 2.5);
    t.ok(Math.abs(moved) < 1e-3 * Math.abs(still), `beta, d/d${which}: ${moved.toExponential(2)} against ${still.toExponential(2)} unmoved`);
  }
  // Integer draws: their cast to floats has no gradient (as in PyTensor), so nothing reaches p.
  const p = pt.scalar('p');
  const gp = weft.grad((new weft.BinomialRV('int32', 1).call(state, 3, 10, p) as TV[])[1]!.astype('float64').sum(), p, { disconnectedInputs: 'ignore' }) as TV;
  t.equal(weft.tolist(await (await weft.compile([p], gp, { onUnusedInput: 'ignore' }))(0.5)), 0, 'binomial draws: zero gradient in p');
});

t.test('bad parameters: exact errors, when built from constants and at run time naming the draw', async (t) => {
  const stream = new weft.RandomStream(5);
  await throwsExactly(t, () => stream.gamma(-1, 1, { size: [2] }), RangeError, 'GammaRV{dtype=float64, ndim=1}: shape must be positive and finite, got -1');
  await throwsExactly(t, () => stream.bernoulli(1.5, { size: [2] }), RangeError, 'BernoulliRV{dtype=int32, ndim=1}: p must be in [0, 1], got 1.5');
  await throwsExactly(t, () => stream.binomial(2.5, 0.5), RangeError, 'BinomialRV{dtype=int32, ndim=0}: n must be a non-negative integer (below 2^31), got 2.5');
  await throwsExactly(t, () => stream.geometric(0), RangeError, 'GeometricRV{dtype=int32, ndim=0}: p must be in (0, 1], got 0');
  await throwsExactly(t, () => stream.exponential(-2), RangeError, 'ExponentialRV{dtype=float64, ndim=0}: scale must be non-negative and finite, got -2');
  await throwsExactly(t, () => stream.poisson(-1), RangeError, 'PoissonRV{dtype=int32, ndim=0}: lam must be non-negative and below 1e10, got -1');
  await throwsExactly(t, () => stream.studentT(0), RangeError, 'StudentTRV{dtype=float64, ndim=0}: df must be positive and finite, got 0');
  await throwsExactly(t, () => stream.beta(1, 0), RangeError, 'BetaRV{dtype=float64, ndim=0}: beta must be positive and finite, got 0');
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const scale = pt.vector('scale');
  const p = pt.scalar('p');
  const draws = [stream.laplace(0, scale, { name: 'noise' }), stream.bernoulli(p, { size: [300_000], name: 'mask' })];
  const fn = await weft.compile([scale, p], draws, { pool });
  await t.rejects(fn([1, -0.5, 2], 0.5), { message: /^LaplaceRV\{dtype=float64, ndim=1\} \(draw 'noise'\): scale must be non-negative and finite, got -0\.5\n {2}in node/ });
  await t.rejects(fn([1, 1, 1], -0.1), { message: /^BernoulliRV\{dtype=int32, ndim=1\} \(draw 'mask'\): p must be in \[0, 1\], got -0\.1\n {2}in node/ });
  const [ok] = await fn([1, 2, 3], 0.5);
  t.equal(ok!.shape[0], 3, 'the pool draws after the errors');
});

t.test('vector draws: categorical, multinomial, dirichlet and multivariate normal against their exact marginals; choice and permutation', async (t) => {
  const stream = new weft.RandomStream(2028);
  const probs = [0.2, 0.5, 0.3];
  const [cat, mult, dir, mvn, pick, pickP, noReplace] = (await (await weft.compile([], [
    stream.categorical(pt.constant(probs), { size: [N] }),
    stream.multinomial(10, pt.constant(probs), { size: [N] }),
    stream.dirichlet(pt.constant([1, 2, 3]), { size: [N] }),
    stream.multivariateNormal(pt.constant([1, -1]), pt.constant([[2, 0.6], [0.6, 1]]), { size: [N] }),
    stream.choice(5, { size: [N] }),
    stream.choice(pt.constant([10, 20, 30]), { size: [N], p: pt.constant([0.1, 0.6, 0.3]) }),
    stream.choice(10, { size: [7], replace: false }),
  ]))()) as weft.NdArray[];
  const column = (a: weft.NdArray, j: number, k: number): Float64Array => Float64Array.from({ length: a.data.length / k }, (_, i) => Number(a.data[i * k + j]));
  const values = (a: weft.NdArray): Float64Array => Float64Array.from(a.data as ArrayLike<number>, Number);
  t.ok(chiSquarePValue(values(cat!), (k) => probs[k] ?? 0) > ALPHA, 'categorical: chi-square against p');
  t.ok(chiSquarePValue(column(mult!, 0, 3), binomialPmf(10, 0.2)) > ALPHA, 'multinomial: the first count is binomial(10, 0.2)');
  t.ok(chiSquarePValue(column(mult!, 2, 3), binomialPmf(10, 0.3)) > ALPHA, 'multinomial: the last count is binomial(10, 0.3)');
  t.ok(Array.from({ length: N }, (_, i) => mult!.data[3 * i]! + mult!.data[3 * i + 1]! + mult!.data[3 * i + 2]!).every((n) => n === 10), 'multinomial: the counts sum to n');
  t.ok(ksStatistic(column(dir!, 0, 3), (x) => betainc(x, 1, 5)) < KS_CRITICAL, 'dirichlet: x0 is beta(1, 5)');
  t.ok(ksStatistic(column(dir!, 2, 3), (x) => betainc(x, 3, 3)) < KS_CRITICAL, 'dirichlet: x2 is beta(3, 3)');
  t.ok(Array.from({ length: N }, (_, i) => dir!.data[3 * i]! + dir!.data[3 * i + 1]! + dir!.data[3 * i + 2]!).every((x) => Math.abs(x - 1) < 1e-14), 'dirichlet: on the simplex');
  const x0 = column(mvn!, 0, 2);
  const x1 = column(mvn!, 1, 2);
  t.ok(ksStatistic(x0, (x) => phi((x - 1) / Math.SQRT2)) < KS_CRITICAL, 'multivariate normal: x0 is normal(1, sqrt 2)');
  // x1 given x0 is normal with mean -1 + 0.3 (x0 - 1) and variance 1 - 0.18: its residual is standard.
  const residual = x1.map((v, i) => (v - (-1 + 0.3 * (x0[i]! - 1))) / Math.sqrt(0.82));
  t.ok(ksStatistic(residual, phi) < KS_CRITICAL, 'multivariate normal: x1 given x0, as the covariance says');
  t.ok(chiSquarePValue(values(pick!), (k) => (k < 5 ? 0.2 : 0)) > ALPHA, 'choice(5): uniform over 0..4');
  t.ok(chiSquarePValue(values(pickP!).map((v) => v / 10 - 1), (k) => [0.1, 0.6, 0.3][k] ?? 0) > ALPHA, 'choice by p');
  t.equal(new Set(values(noReplace!)).size, 7, 'without replacement: 7 distinct picks');
  // Permutations: a permutation each call, and every position equally likely for an element.
  const perm = await weft.compile([], stream.permutation(6));
  const firsts = new Float64Array(3000);
  for (let i = 0; i < firsts.length; i++) {
    const v = Array.from((await perm()).data as ArrayLike<number>, Number);
    if (i < 5) t.same([...v].sort(), [0, 1, 2, 3, 4, 5], `call ${i}: a permutation of arange(6)`);
    firsts[i] = v.indexOf(0);
  }
  t.ok(chiSquarePValue(firsts, (k) => (k < 6 ? 1 / 6 : 0)) > ALPHA, "the position of 0 is uniform over 3000 permutations");
  const rows = (await stream.permutation(pt.constant([[1, 2], [3, 4], [5, 6]])).eval()).data;
  t.same([0, 2, 4].map((i) => [rows[i], rows[i + 1]]).sort(), [[1, 2], [3, 4], [5, 6]], 'a matrix is permuted by rows');
});

t.test('vector draws: batches broadcast, inferShape, the same bits on 0 and 2 workers, exact errors', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const make = (): TV[] => {
    const s = new weft.RandomStream(7);
    return [
      s.categorical(pt.constant([[0.5, 0.5], [0.1, 0.9]]).dimshuffle(0, 'x', 1), { size: [2, 60_000] }),
      s.multinomial(pt.constant([5, 50]).dimshuffle(0, 'x'), pt.constant([0.3, 0.3, 0.4]), { size: [2, 30_000] }),
      s.dirichlet(pt.constant([0.5, 0.5, 2]), { size: [50_000] }),
      s.multivariateNormal(pt.constant([[0, 0, 0], [5, 5, 5]]).dimshuffle(0, 'x', 1), pt.eye(3).mul(2), { size: [2, 20_000] }),
    ];
  };
  const [a, b] = [await (await weft.compile([], make(), { workers: 0 }))(), await (await weft.compile([], make(), { pool }))()];
  a.forEach((v, i) => t.ok(v.data.every((e, j) => Object.is(e, b[i]!.data[j])), `draw ${i}: equal bits`));
  t.same(a.map((v) => v.shape), [[2, 60000], [2, 30000, 3], [50000, 3], [2, 20000, 3]], 'batch shapes');
  t.ok(Math.abs(meanOf(Float64Array.from(a[0]!.data.slice(60000), Number)) - 0.9) < 0.01, 'the second row of p applies to the second batch row');
  const s = new weft.RandomStream(8);
  const p = pt.matrix('p');
  const cov = pt.matrix('cov');
  const mean = pt.vector('mean');
  const n = pt.scalar('n', 'int32');
  const outs = [s.categorical(p), s.multinomial(n, p), s.dirichlet(p), s.multivariateNormal(mean, cov, { size: [4] }), s.choice(mean, { size: [3, 2] }), s.permutation(mean)];
  const args: [weft.NdArray, number, weft.NdArray, weft.NdArray] = [weft.ndarray(Float64Array.from([0.5, 0.5, 0.2, 0.8]), [2, 2]), 3, weft.ndarray(Float64Array.from([1, 0, 0, 1]), [2, 2]), weft.ndarray(Float64Array.from([0, 1]), [2])];
  await weft.checkInferShape([p, n, cov, mean], outs, args);
  const fn = await weft.compile([p, n, cov, mean], outs, { pool });
  await t.rejects(fn(weft.ndarray(Float64Array.from([0.5, 0.4, 0.2, 0.8]), [2, 2]), args[1], args[2], args[3]), { message: /^CategoricalRV\{dtype=int32, ndim=1\}: p must sum to 1, got a sum of 0\.9 \(batch item 0\)/ });
  await t.rejects(fn(args[0]!, 3, weft.ndarray(Float64Array.from([1, 2, 2, 1]), [2, 2]), args[3]!), { message: /^MultivariateNormalRV\{dtype=float64, ndim=1\}: cov is not positive definite \(the pivot of column 1 is not positive\)/ });
  await t.rejects(fn(args[0]!, -1, args[2]!, args[3]!), { message: /^MultinomialRV\{dtype=int32, ndim=1\}: n must be a non-negative integer \(below 2\^31\), got -1/ });
  const tooMany = await weft.compile([], s.choice(3, { size: [4], replace: false, name: 'pick' }));
  await t.rejects(tooMany(), { message: /^ChoiceRV\{dtype=int32, ndim=1, replace=false, count=true\} \(draw 'pick'\): cannot take 4 draws without replacement from a population of 3/ });
  await throwsExactly(t, () => s.categorical(pt.scalar('q')), TypeError, 'CategoricalRV{dtype=int32, ndim=0}: p needs at least 1 axes (its core), got q (TensorType(float64, ()))');
  t.equal((await fn(...args)).length, 6, 'the pool draws after the errors');
});

t.teardown(() => weft.shutdown());
