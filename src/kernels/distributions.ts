// The element-wise random distributions: each a sampler of one element from its parameters and
// that element's Philox stream (philox.ts), and a check of the parameters with the message a bad
// one gets. The 'randomDraws' kernel draws a chunk of elements of any of them, so a draw is cut
// into tasks like any element-wise op and its bits do not depend on the cut. Methods: inversion
// where it is exact and cheap, Box-Muller for normals, Marsaglia and Tsang (2000) for gamma,
// Hormann's PTRS (1993) for Poisson (as NumPy), Devroye's order-statistic recursion then
// inversion for the binomial, and gamma ratios (in logs) for beta.
import { advanced, doubleOf, ElementStream, normalOf } from './philox.js';
import { FILL_BLOCKS, philoxFiller } from './philox-wasm.js';
import { registerKernel } from './registry.js';
import { gammaln } from './stdlib.js';
import { broadcastView, positionOf, sizeOf } from './view.js';

type Params = readonly number[];

export interface Distribution {
  /** The parameters' names, in order. */
  readonly params: readonly string[];
  /** The problem with these parameter values, as the error says it (undefined when they are fine). */
  check(p: Params): string | undefined;
  sample(s: ElementStream, p: Params): number;
}

const nonNegative = (name: string, v: number): string | undefined => (v >= 0 && v < Infinity ? undefined : `${name} must be non-negative and finite, got ${v}`);
const positive = (name: string, v: number): string | undefined => (v > 0 && v < Infinity ? undefined : `${name} must be positive and finite, got ${v}`);
const probability = (name: string, v: number): string | undefined => (v >= 0 && v <= 1 ? undefined : `${name} must be in [0, 1], got ${v}`);
const finite = (name: string, v: number): string | undefined => (Number.isFinite(v) ? undefined : `${name} must be finite, got ${v}`);
const first = (...problems: (string | undefined)[]): string | undefined => problems.find((p) => p !== undefined);

/** A location-scale family: loc + scale * (a standard draw). */
function locationScale(standard: (s: ElementStream) => number): Distribution {
  return {
    params: ['loc', 'scale'],
    check: ([loc, scale]) => first(finite('loc', loc!), nonNegative('scale', scale!)),
    sample: (s, [loc, scale]) => loc! + scale! * standard(s),
  };
}

/** A standard gamma draw (scale 1) of shape a > 0: Marsaglia and Tsang, boosted by u^(1/a) below 1. */
export function standardGamma(s: ElementStream, a: number): number {
  if (a < 1) return standardGamma(s, a + 1) * Math.pow(s.nextOpen(), 1 / a);
  const d = a - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const x = s.nextNormal();
    let v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    const u = s.nextOpen();
    if (u < 1 - 0.0331 * x * x * x * x || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}

/** log of a standard gamma draw, without underflow for small shapes (log G(a + 1) + log(u) / a). */
export function logStandardGamma(s: ElementStream, a: number): number {
  return a < 1 ? Math.log(standardGamma(s, a + 1)) + Math.log(s.nextOpen()) / a : Math.log(standardGamma(s, a));
}

/** Beta(a, b) as X / (X + Y) for gamma X, Y, from their logarithms. */
function betaDraw(s: ElementStream, a: number, b: number): number {
  const lx = logStandardGamma(s, a);
  const ly = logStandardGamma(s, b);
  return 1 / (1 + Math.exp(ly - lx));
}

/** Binomial(n, p) by inversion (sequential search from 0) for n p small. */
function binomialInversion(s: ElementStream, n: number, p: number): number {
  if (p === 0 || n === 0) return 0;
  const q = 1 - p;
  const ratio = p / q;
  let prob = Math.pow(q, n);
  let u = s.nextDouble();
  let x = 0;
  while (u > prob && x < n) {
    u -= prob;
    x += 1;
    prob *= ((n - x + 1) / x) * ratio;
  }
  return x;
}

/** Binomial(n, p), exactly: Devroye's recursion on the order statistics of n uniforms (beta draws) until n p is small, then inversion. */
export function binomialDraw(s: ElementStream, n: number, p: number): number {
  if (p > 0.5) return n - binomialDraw(s, n, 1 - p);
  let result = 0;
  while (n * Math.min(p, 1 - p) > 30) {
    // The i-th smallest of n uniforms is Beta(i, n + 1 - i): the count below p is i plus the
    // count among the n - i above it, or the count among the i - 1 below it.
    const i = Math.floor((n + 1) / 2);
    const x = betaDraw(s, i, n + 1 - i);
    if (x <= p) {
      result += i;
      n -= i;
      p = (p - x) / (1 - x);
    } else {
      n = i - 1;
      p /= x;
    }
  }
  return p > 0.5 ? result + n - binomialInversion(s, n, 1 - p) : result + binomialInversion(s, n, p);
}

/** Poisson(lam): inversion below 10, else PTRS (Hormann 1993, the transformed rejection NumPy uses). */
function poissonDraw(s: ElementStream, lam: number): number {
  if (lam === 0) return 0;
  if (lam < 10) {
    let prob = Math.exp(-lam);
    let u = s.nextDouble();
    let x = 0;
    while (u > prob && x < 1000) {
      u -= prob;
      x += 1;
      prob *= lam / x;
    }
    return x;
  }
  const slam = Math.sqrt(lam);
  const loglam = Math.log(lam);
  const b = 0.931 + 2.53 * slam;
  const a = -0.059 + 0.02483 * b;
  const invalpha = 1.1239 + 1.1328 / (b - 3.4);
  const vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const u = s.nextDouble() - 0.5;
    const v = s.nextDouble();
    const us = 0.5 - Math.abs(u);
    const k = Math.floor(((2 * a) / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (Math.log(v) + Math.log(invalpha) - Math.log(a / (us * us) + b) <= -lam + k * loglam - gammaln(k + 1)) return k;
  }
}

/** The element-wise distributions by name (the ops' `distribution`). */
export const DISTRIBUTIONS: Readonly<Record<string, Distribution>> = Object.freeze({
  uniform: {
    params: ['low', 'high'],
    check: ([low, high]) => (low! <= high! && Number.isFinite(high! - low!) ? undefined : `low and high must be finite with low <= high, got low=${low} and high=${high}`),
    sample: (s, [low, high]) => low! + (high! - low!) * s.nextDouble(),
  },
  normal: {
    params: ['mean', 'std'],
    check: ([mean, std]) => first(finite('mean', mean!), std! >= 0 ? undefined : `std must be non-negative, got ${std}`),
    sample: (s, [mean, std]) => mean! + std! * s.nextNormal(),
  },
  integers: {
    params: ['low', 'high'],
    check: ([low, high]) => (Number.isInteger(low) && Number.isInteger(high) && low! < high! && high! - low! <= 2 ** 32 ? undefined : `low and high must be integers with low < high, got low=${low} and high=${high}`),
    sample: (s, [low, high]) => low! + s.nextBelow(high! - low!),
  },
  standardNormal: { params: [], check: () => undefined, sample: (s) => s.nextNormal() },
  bernoulli: { params: ['p'], check: ([p]) => probability('p', p!), sample: (s, [p]) => (s.nextDouble() < p! ? 1 : 0) },
  binomial: {
    params: ['n', 'p'],
    check: ([n, p]) => first(Number.isInteger(n) && n! >= 0 && n! < 2 ** 31 ? undefined : `n must be a non-negative integer (below 2^31), got ${n}`, probability('p', p!)),
    sample: (s, [n, p]) => binomialDraw(s, n!, p!),
  },
  poisson: { params: ['lam'], check: ([lam]) => (lam! >= 0 && lam! < 1e10 ? undefined : `lam must be non-negative and below 1e10, got ${lam}`), sample: (s, [lam]) => poissonDraw(s, lam!) },
  gamma: {
    params: ['shape', 'scale'],
    check: ([shape, scale]) => first(positive('shape', shape!), positive('scale', scale!)),
    sample: (s, [shape, scale]) => scale! * standardGamma(s, shape!),
  },
  beta: { params: ['alpha', 'beta'], check: ([a, b]) => first(positive('alpha', a!), positive('beta', b!)), sample: (s, [a, b]) => betaDraw(s, a!, b!) },
  exponential: { params: ['scale'], check: ([scale]) => nonNegative('scale', scale!), sample: (s, [scale]) => -scale! * Math.log(s.nextOpen()) },
  laplace: locationScale((s) => {
    const u = s.nextOpen() - 0.5;
    return -Math.sign(u) * Math.log(1 - 2 * Math.abs(u));
  }),
  logistic: locationScale((s) => {
    const u = s.nextOpen();
    return Math.log(u / (1 - u));
  }),
  lognormal: {
    params: ['mean', 'sigma'],
    check: ([mean, sigma]) => first(finite('mean', mean!), nonNegative('sigma', sigma!)),
    sample: (s, [mean, sigma]) => Math.exp(mean! + sigma! * s.nextNormal()),
  },
  geometric: {
    params: ['p'],
    check: ([p]) => (p! > 0 && p! <= 1 ? undefined : `p must be in (0, 1], got ${p}`),
    sample: (s, [p]) => (p === 1 ? 1 : Math.max(1, Math.ceil(Math.log(s.nextOpen()) / Math.log1p(-p!)))),
  },
  halfNormal: locationScale((s) => Math.abs(s.nextNormal())),
  studentT: {
    params: ['df', 'loc', 'scale'],
    check: ([df, loc, scale]) => first(positive('df', df!), finite('loc', loc!), nonNegative('scale', scale!)),
    // N / sqrt(chi2(df) / df), chi2(df) = 2 G(df / 2).
    sample: (s, [df, loc, scale]) => loc! + (scale! * s.nextNormal()) / Math.sqrt((2 * standardGamma(s, df! / 2)) / df!),
  },
  cauchy: locationScale((s) => Math.tan(Math.PI * (s.nextOpen() - 0.5))),
});

const f32 = new Float32Array(1);
const f32Bits = new Int32Array(f32.buffer);
const f64 = new Float64Array(1);
const f64Bits = new BigInt64Array(f64.buffer);

/** The largest value of the dtype below x, a nonzero float of it (for a draw that rounding carried to its open bound). */
function largestBelow(x: number, float32: boolean): number {
  if (float32) {
    f32[0] = x;
    f32Bits[0]! += x > 0 ? -1 : 1;
    return f32[0]!;
  }
  f64[0] = x;
  f64Bits[0]! += x > 0 ? -1n : 1n;
  return f64[0]!;
}

export interface RandomDrawsParams {
  readonly distribution: string;
  /** The op (and draw) the errors name. */
  readonly label: string;
  readonly dtype: string;
  /** The number of length inputs between the state and the parameters. */
  readonly ndim: number;
  /** For integer draws: the dtype's smallest and largest values, which [low, high) must fit. */
  readonly range?: readonly [number, number];
}

const stream = new ElementStream();

/**
 * Inputs: the state [k0, k1, base0, base1], the draws' `ndim` lengths, then the parameters (broadcasting to the draws);
 * outputs: the next state (its base moved past the draws, written by the task with element 0)
 * and the draws. A range cuts the draws' flat elements.
 */
registerKernel('randomDraws', ([state, ...rest], [next, draws], p, range) => {
  const { distribution, label, dtype, ndim, range: fits } = p as unknown as RandomDrawsParams;
  const params = rest.slice(ndim);
  const dist = DISTRIBUTIONS[distribution];
  if (dist === undefined) throw new Error(`randomDraws: unknown distribution '${distribution}'`);
  const shape = draws!.shape;
  const n = sizeOf(shape);
  const step = state!.stride[0] ?? 1;
  const words = [0, 1, 2, 3].map((i) => state!.data[state!.offset + i * step]! >>> 0);
  const start = range?.start ?? 0;
  const end = range?.end ?? n;
  if (start === 0) {
    const out = new Uint32Array(4);
    advanced(words, n, out);
    for (let i = 0; i < 4; i++) next!.data[next!.offset + i * (next!.stride[0] ?? 1)] = out[i]!;
  }
  // Each parameter as a constant, or read through its broadcast layout.
  const readers = params.map((v) => {
    if (sizeOf(v!.shape) === 1) {
      const c = Number(v!.data[v!.offset]);
      return (): number => c;
    }
    const b = broadcastView(v!, shape);
    return (i: number): number => Number(b.data[positionOf(shape, b.stride, b.offset, i)]);
  });
  const values = new Array<number>(params.length);
  const constant = params.every((v) => sizeOf(v!.shape) === 1);
  if (constant && end > start) {
    for (let k = 0; k < readers.length; k++) values[k] = readers[k]!(0);
    check(values);
  }
  const f32 = dtype === 'float32';
  const uniform = distribution === 'uniform';
  const out = draws!.data;
  const filler = philoxFiller();
  for (let first = start; first < end; first += FILL_BLOCKS) {
    const count = Math.min(FILL_BLOCKS, end - first);
    // The first block of each element, many at once; further blocks (rejection methods) in JS.
    if (filler) {
      const pos = words[2]! + first;
      filler.fill(count, pos >>> 0, (words[3]! + Math.floor(pos / 4294967296)) >>> 0, 0, words[0]!, words[1]!);
    }
    // Normal and uniform draws of constant parameters straight from the words (the same arithmetic as their samplers).
    if (filler && constant && (distribution === 'normal' || distribution === 'standardNormal' || (distribution === 'uniform' && !f32))) {
      const w = filler.words;
      const [a, b] = distribution === 'standardNormal' ? [0, 1] : [values[0]!, values[1]!];
      const o = draws!.offset + first;
      if (distribution === 'uniform') {
        const span = b - a;
        for (let j = 0; j < count; j++) {
          const x = a + span * doubleOf(w[4 * j]!, w[4 * j + 1]!);
          out[o + j] = x >= b && b > a ? (b === 0 ? -Number.MIN_VALUE : Math.max(largestBelow(b, false), a)) : x;
        }
      } else if (distribution === 'standardNormal') {
        for (let j = 0; j < count; j++) out[o + j] = normalOf(w[4 * j]!, w[4 * j + 1]!, w[4 * j + 2]!, w[4 * j + 3]!);
      } else {
        for (let j = 0; j < count; j++) out[o + j] = a + b * normalOf(w[4 * j]!, w[4 * j + 1]!, w[4 * j + 2]!, w[4 * j + 3]!);
      }
      continue;
    }
    for (let j = 0; j < count; j++) {
      const i = first + j;
      if (!constant) {
        for (let k = 0; k < readers.length; k++) values[k] = readers[k]!(i);
        check(values);
      }
      if (filler) stream.resetWithBlock(words[0]!, words[1]!, words[2]!, words[3]!, i, filler.words, 4 * j);
      else stream.reset(words[0]!, words[1]!, words[2]!, words[3]!, i);
      let x = dist.sample(stream, values);
      if (f32) x = Math.fround(x);
      // Rounding may carry a uniform draw up to its open bound: the largest value below it stands instead.
      if (uniform && x >= values[1]! && values[1]! > values[0]!) x = values[1] === 0 ? -Number.MIN_VALUE : Math.max(largestBelow(values[1]!, f32), f32 ? Math.fround(values[0]!) : values[0]!);
      out[draws!.offset + i] = x;
    }
  }

  function check(v: readonly number[]): void {
    const problem = dist!.check(v) ?? (fits && (v[0]! < fits[0] || v[1]! - 1 > fits[1]) ? `[${v[0]}, ${v[1]}) does not fit ${dtype} (integers from ${fits[0]} to ${fits[1]})` : undefined);
    if (problem !== undefined) throw new RangeError(`${label}: ${problem}`);
  }
});

/** Checks known parameter values (a draw's constants) as the kernel would. */
export function parameterProblem(distribution: string, values: Params): string | undefined {
  return DISTRIBUTIONS[distribution]?.check(values);
}
