// The random distributions whose draws are vectors, or pick from vectors: categorical (an index
// per draw), multinomial counts, dirichlet and multivariate normal vectors (one per item of the
// batch, each item from its own Philox stream, so the batch is cut into tasks like lanes), and
// choice and permutation (one sequential draw: one task). Parameters broadcast over the batch.
import { choleskyFactor } from './dense-linalg.js';
import { binomialDraw, logStandardGamma } from './distributions.js';
import { advanced, ElementStream } from './philox.js';
import { registerKernel } from './registry.js';
import { broadcastView, positionOf, sizeOf, type TensorView } from './view.js';

export interface VectorDrawsParams {
  readonly distribution: 'categorical' | 'multinomial' | 'dirichlet' | 'multivariateNormal';
  readonly label: string;
  /** Lengths between the state and the parameters. */
  readonly ndim: number;
}

const stream = new ElementStream();

/** The state's four words. */
function wordsOf(state: TensorView): number[] {
  const step = state.stride[0] ?? 1;
  return [0, 1, 2, 3].map((i) => state.data[state.offset + i * step]! >>> 0);
}

/** Writes the state moved on by `count` items into `next`. */
function writeNext(words: readonly number[], count: number, next: TensorView): void {
  const out = new Uint32Array(4);
  advanced(words, count, out);
  for (let i = 0; i < 4; i++) next.data[next.offset + i * (next.stride[0] ?? 1)] = out[i]!;
}

/** Reads item b's core part (the last `core` axes) of a parameter broadcast to `batch` + its core shape, into `dst`. */
function itemReader(p: TensorView, batch: readonly number[], core: number): (b: number, dst: Float64Array) => void {
  const coreShape = p.shape.slice(p.shape.length - core);
  const full = broadcastView(p, [...batch, ...coreShape]);
  const coreStride = full.stride.slice(batch.length);
  const size = sizeOf(coreShape);
  return (b, dst) => {
    const o = positionOf(full.shape, full.stride, full.offset, b, batch.length);
    for (let k = 0; k < size; k++) dst[k] = Number(full.data[positionOf(coreShape, coreStride, o, k)]);
  };
}

/**
 * Inputs: the state, the batch's `ndim` lengths, the parameters (categorical p; multinomial n, p;
 * dirichlet alpha; multivariate normal mean, cov). Outputs: the next state (from the task with
 * item 0) and the draws ([batch] or [batch, k]). A range cuts the batch's items.
 */
registerKernel('randomVectorDraws', ([state, ...rest], [next, draws], params, range) => {
  const { distribution, label, ndim } = params as unknown as VectorDrawsParams;
  const ps = rest.slice(ndim);
  const vectorOut = distribution !== 'categorical';
  const batch = vectorOut ? draws!.shape.slice(0, -1) : draws!.shape;
  const items = sizeOf(batch);
  const words = wordsOf(state!);
  const [start, end] = [range?.start ?? 0, range?.end ?? items];
  if (start === 0) writeNext(words, items, next!);
  const fail = (why: string, b: number): never => {
    throw new RangeError(`${label}: ${why}${items > 1 ? ` (batch item ${b})` : ''}`);
  };
  const out = draws!.data;
  const o = draws!.offset;
  if (distribution === 'categorical' || distribution === 'multinomial' || distribution === 'dirichlet') {
    const pv = ps[distribution === 'multinomial' ? 1 : 0]!;
    const k = pv.shape[pv.shape.length - 1]!;
    const p = new Float64Array(k);
    const readP = itemReader(pv, batch, 1);
    const readN = distribution === 'multinomial' ? itemReader(ps[0]!, batch, 0) : undefined;
    const n = new Float64Array(1);
    for (let b = start; b < end; b++) {
      readP(b, p);
      stream.reset(words[0]!, words[1]!, words[2]!, words[3]!, b);
      if (distribution === 'dirichlet') {
        if (!p.every((a) => a > 0 && a < Infinity)) fail(`alpha must be positive and finite, got [${Array.from(p).join(', ')}]`, b);
        const logs = Array.from(p, (a) => logStandardGamma(stream, a));
        const top = Math.max(...logs);
        const e = logs.map((l) => Math.exp(l - top));
        const total = e.reduce((x, y) => x + y, 0);
        e.forEach((v, j) => (out[o + b * k + j] = v / total));
        continue;
      }
      let total = 0;
      for (const q of p) {
        if (!(q >= 0)) fail(`p must be non-negative, got [${Array.from(p).join(', ')}]`, b);
        total += q;
      }
      if (!(Math.abs(total - 1) <= 1e-8)) fail(`p must sum to 1, got a sum of ${total}`, b);
      if (distribution === 'categorical') {
        const u = stream.nextDouble() * total;
        let j = 0;
        let acc = p[0]!;
        while (u >= acc && j < k - 1) acc += p[++j]!;
        // Rounding cannot pick an index of probability 0: step back to the last one that has some.
        while (p[j] === 0 && j > 0) j--;
        out[o + b] = j;
        continue;
      }
      readN!(b, n);
      const count = n[0]!;
      if (!(Number.isInteger(count) && count >= 0 && count < 2 ** 31)) fail(`n must be a non-negative integer (below 2^31), got ${count}`, b);
      // Counts one category at a time: binomial in what remains, of the probability left.
      let remaining = count;
      let mass = total;
      for (let j = 0; j < k - 1; j++) {
        const c = remaining === 0 || p[j] === 0 ? 0 : binomialDraw(stream, remaining, Math.min(1, p[j]! / mass));
        out[o + b * k + j] = c;
        remaining -= c;
        mass -= p[j]!;
      }
      out[o + b * k + k - 1] = remaining;
    }
    return;
  }
  // Multivariate normal: mean + L z, L the Cholesky factor of cov (factored once when cov is shared by the batch).
  const [meanV, covV] = [ps[0]!, ps[1]!];
  const k = draws!.shape[draws!.shape.length - 1]!;
  const readMean = itemReader(meanV, batch, 1);
  const readCov = itemReader(covV, batch, 2);
  const shared = covV.shape.length === 2;
  const mean = new Float64Array(k);
  const cov = new Float64Array(k * k);
  const z = new Float64Array(k);
  let factored = false;
  for (let b = start; b < end; b++) {
    readMean(b, mean);
    if (!(shared && factored)) {
      readCov(b, cov);
      const bad = choleskyFactor(cov, k);
      if (bad >= 0) fail(`cov is not positive definite (the pivot of column ${bad} is not positive)`, b);
      factored = true;
    }
    stream.reset(words[0]!, words[1]!, words[2]!, words[3]!, b);
    for (let j = 0; j < k; j++) z[j] = stream.nextNormal();
    for (let i = 0; i < k; i++) {
      let s = mean[i]!;
      for (let j = 0; j <= i; j++) s += cov[i * k + j]! * z[j]!;
      out[o + b * k + i] = s;
    }
  }
});

/**
 * choice and permutation, one sequential draw (one task): inputs the state, the draws' lengths,
 * then the population (a vector, or for `count` its size as a scalar) and (choice) p or an empty
 * vector. Permutation: a Fisher-Yates shuffle of the population's first axis; choice: `size`
 * picks, with replacement (uniform or by p) or without (a partial shuffle, or sequential picks by p).
 */
registerKernel('randomPick', ([state, ...rest], [next, draws], params) => {
  const { label, ndim, mode, replace, count } = params as unknown as { label: string; ndim: number; mode: 'choice' | 'permutation'; replace: boolean; count: boolean };
  const [population, pv] = [rest[ndim]!, rest[ndim + 1]];
  const words = wordsOf(state!);
  writeNext(words, 1, next!);
  stream.reset(words[0]!, words[1]!, words[2]!, words[3]!, 0);
  const n = count ? Number(population.data[population.offset]) : population.shape[0]!;
  // Rows of the population (a row is everything after axis 0), copied out by index.
  const rowSize = count ? 1 : sizeOf(population.shape.slice(1));
  const put = (dst: number, src: number): void => {
    if (count) {
      draws!.data[draws!.offset + dst] = src;
      return;
    }
    for (let k = 0; k < rowSize; k++) draws!.data[draws!.offset + dst * rowSize + k] = population.data[positionOf(population.shape, population.stride, population.offset, src * rowSize + k)]!;
  };
  const picks = mode === 'permutation' ? n : sizeOf(draws!.shape) / rowSize;
  const probs = pv && sizeOf(pv.shape) > 0 ? Float64Array.from({ length: n }, (_, i) => Number(pv.data[pv.offset + i * (pv.stride[0] ?? 1)])) : undefined;
  if (probs) {
    if (probs.length !== n) throw new RangeError(`${label}: p has ${probs.length} probabilities for a population of ${n}`);
    const total = probs.reduce((a, b) => a + b, 0);
    if (!probs.every((q) => q >= 0) || !(Math.abs(total - 1) <= 1e-8)) throw new RangeError(`${label}: p must be non-negative and sum to 1, got a sum of ${total}`);
  }
  if (n === 0 && picks > 0) throw new RangeError(`${label}: cannot choose from an empty population`);
  if (mode === 'choice' && !replace && picks > n) throw new RangeError(`${label}: cannot take ${picks} draws without replacement from a population of ${n}`);
  if (mode === 'choice' && replace) {
    for (let i = 0; i < picks; i++) put(i, probs ? pickBy(probs, stream.nextDouble()) : stream.nextBelow(n));
    return;
  }
  if (probs) {
    // Without replacement by p: each pick by the probabilities left, renormalized.
    const left = Float64Array.from(probs);
    for (let i = 0; i < picks; i++) {
      const total = left.reduce((a, b) => a + b, 0);
      if (!(total > 0)) throw new RangeError(`${label}: fewer than ${picks} entries of p are nonzero`);
      const j = pickBy(left, stream.nextDouble() * total);
      put(i, j);
      left[j] = 0;
    }
    return;
  }
  // Fisher-Yates on the indices: position i gets a uniform pick of those not yet placed.
  const order = Int32Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < picks; i++) {
    const j = i + stream.nextBelow(n - i);
    [order[i], order[j]] = [order[j]!, order[i]!];
    put(i, order[i]!);
  }
});

/** The index whose cumulative probability first exceeds u (never one of probability 0). */
function pickBy(p: Float64Array, u: number): number {
  let j = 0;
  let acc = p[0]!;
  while (u >= acc && j < p.length - 1) acc += p[++j]!;
  while (p[j] === 0 && j > 0) j--;
  return j;
}
