// weft.RandomStream (PyTensor's RandomStream): draws as graph nodes. Each draw gets a state of
// its own, a shared variable seeded from the stream's seed sequence, whose default update is the
// draw's next state: every call of a compiled function draws new numbers, and re-seeding the
// stream (or making it again with the same seed) gives the same numbers again.
import type { Dtype } from '../../kernels/dtype.js';
import { STATE_WORDS, Xoshiro128 } from '../../kernels/prng.js';
import { constant } from '../core/as-tensor.js';
import { config } from '../core/config.js';
import { empty } from '../core/ndarray.js';
import { maximum } from '../elemwise/math.js';
import {
  BernoulliRV,
  BetaRV,
  BinomialRV,
  CauchyRV,
  ExponentialRV,
  GammaRV,
  GeometricRV,
  HalfNormalRV,
  IntegersRV,
  LaplaceRV,
  LogisticRV,
  LognormalRV,
  NormalRV,
  PoissonRV,
  StandardNormalRV,
  StudentTRV,
  UniformRV,
  randomState,
  randomStateType,
  type RandomVariable,
} from './random.js';
import { CategoricalRV, ChoiceRV, DirichletRV, MultinomialRV, MultivariateNormalRV, PermutationRV } from './vector-random.js';
import { Shape, shapeOf } from '../shape/shape.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { isTensorVariable, TensorSharedVariable, type ShapeLike, type TensorLike, type TensorVariable } from '../core/variable.js';

export interface UniformOptions {
  readonly low?: TensorLike;
  readonly high?: TensorLike;
  readonly dtype?: Dtype;
  readonly name?: string;
}

export interface NormalOptions {
  readonly mean?: TensorLike;
  readonly std?: TensorLike;
  readonly dtype?: Dtype;
  readonly name?: string;
}

/** The options of a draw given by its parameters (PyTensor's `size` and `dtype`). */
export interface DrawOptions {
  /** The draws' shape; by default the parameters' broadcast shape. */
  readonly size?: ShapeLike;
  readonly dtype?: Dtype;
  readonly name?: string;
}

/**
 * The lengths the parameters broadcast to (NumPy's rules: right-aligned, a length 1 or the axis's
 * length), leaving out each parameter's last `cores[i]` axes (its core: a vector of probabilities).
 */
function broadcastLengths(params: readonly TensorLike[], cores: readonly number[] = []): Array<number | TensorVariable> {
  const vs = params.map((p) => asTensorVariable(p));
  const batchNdim = (i: number): number => vs[i]!.ndim - (cores[i] ?? 0);
  const nd = Math.max(0, ...vs.map((_, i) => batchNdim(i)));
  return [...Array(nd).keys()].map((a) => {
    let length: number | TensorVariable = 1;
    for (const [i, v] of vs.entries()) {
      const axis = a - (nd - batchNdim(i));
      if (axis < 0) continue;
      const d = v.type.shape[axis];
      if (d === 1) continue;
      const len = d ?? shapeOf(v)[axis]!;
      // Lengths that broadcast are equal or 1, so the largest is the draws' length.
      length = length === 1 ? len : typeof length === 'number' && typeof len === 'number' ? Math.max(length, len) : maximum(length, len);
    }
    return length;
  });
}

function checkSeed(seed: number, where: string): number {
  if (!(Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff)) {
    throw new RangeError(`${where}: the seed must be an integer from 0 to 4294967295, got ${seed}`);
  }
  return seed;
}

/** The lengths of a draw: numbers, int scalar variables, a vector of static length, or `x.shape`. */
function lengthsOf(shape: ShapeLike, where: string): Array<number | TensorVariable> {
  if (typeof shape === 'number') return [shape];
  if (isTensorVariable(shape)) {
    if (shape.owner?.op instanceof Shape) return shapeOf(shape.owner.inputs[0] as TensorVariable);
    if (shape.ndim !== 1 || shape.type.shape[0] === null) {
      throw new TypeError(`${where}: a shape given as a variable must be a vector of static length, got ${shape} (${shape.type})`);
    }
    return [...Array(shape.type.shape[0]).keys()].map((i) => shape.get(i));
  }
  if (!Array.isArray(shape)) throw new TypeError(`${where}: the shape must be a number, an array of lengths or a vector variable, got ${String(shape)}`);
  return [...(shape as ReadonlyArray<number | TensorVariable>)];
}

/** A number parameter as a constant that holds it exactly (int32 when it is one, else float64). */
function param(p: TensorLike): TensorLike {
  if (typeof p !== 'number') return p;
  const int32 = Number.isInteger(p) && p >= -2147483648 && p <= 2147483647;
  return constant(p, { dtype: int32 ? 'int32' : 'float64' });
}

export class RandomStream {
  #seeder: Xoshiro128;
  readonly #updates: Array<readonly [TensorSharedVariable, TensorVariable]> = [];

  /** A stream seeded with `seed` (an integer from 0 to 2^32 - 1; a random one when omitted). */
  constructor(seed: number = Math.floor(Math.random() * 0x100000000)) {
    this.#seeder = Xoshiro128.fromSeed(checkSeed(seed, 'RandomStream'));
  }

  /** Each draw's state and its next state (the state's default update), in the order of the draws. */
  get stateUpdates(): ReadonlyArray<readonly [TensorSharedVariable, TensorVariable]> {
    return this.#updates;
  }

  /** Re-seeds the stream: every draw made so far gets the state it would have had with this seed. */
  seed(seed: number): void {
    this.#seeder = Xoshiro128.fromSeed(checkSeed(seed, 'RandomStream.seed'));
    for (const [state] of this.#updates) state.setValue(this.#nextState(), { borrow: true });
  }

  /** The next state of the seed sequence: four words of the seeding generator (never all zero). */
  #nextState() {
    const value = empty('uint32', [STATE_WORDS]);
    const words = value.data as Uint32Array;
    do {
      for (let i = 0; i < STATE_WORDS; i++) words[i] = this.#seeder.nextUint32();
    } while (words.every((w) => w === 0));
    return value;
  }

  #draw(op: RandomVariable, lengths: ReadonlyArray<number | TensorVariable>, params: readonly TensorLike[], name: string | undefined): TensorVariable {
    // The state takes its seed once the draw is made: a refused draw leaves the seed sequence as it was.
    const state = new TensorSharedVariable(randomStateType(), randomState(0), name === undefined ? 'rng' : `${name}.rng`);
    const [next, draws] = op.call(state, ...lengths, ...params.map(param)) as [TensorVariable, TensorVariable];
    state.setValue(this.#nextState(), { borrow: true });
    if (name !== undefined) draws.name = name;
    state.defaultUpdate = next;
    this.#updates.push([state, next]);
    return draws;
  }

  /** Uniform floats in [low, high) (default [0, 1)) of this shape. */
  uniform(shape: ShapeLike, options: UniformOptions = {}): TensorVariable {
    const lengths = lengthsOf(shape, 'RandomStream.uniform');
    const op = new UniformRV(options.dtype ?? config.floatX, lengths.length);
    return this.#draw(op, lengths, [options.low ?? 0, options.high ?? 1], options.name);
  }

  /** Normally distributed floats (default mean 0, std 1) of this shape. */
  normal(shape: ShapeLike, options: NormalOptions = {}): TensorVariable {
    const lengths = lengthsOf(shape, 'RandomStream.normal');
    const op = new NormalRV(options.dtype ?? config.floatX, lengths.length);
    return this.#draw(op, lengths, [options.mean ?? 0, options.std ?? 1], options.name);
  }

  /** Uniform integers in [low, high) of this shape, of an integer dtype (int32 by default). */
  integers(shape: ShapeLike, low: TensorLike, high: TensorLike, dtype: Dtype = 'int32', options: { readonly name?: string } = {}): TensorVariable {
    const lengths = lengthsOf(shape, 'RandomStream.integers');
    return this.#draw(new IntegersRV(dtype, lengths.length), lengths, [low, high], options.name);
  }

  /** Draws of `make(dtype, ndim)` with these parameters: of `options.size`, or of the parameters' broadcast shape. */
  #byParams(where: string, make: (dtype: Dtype, ndim: number) => RandomVariable, dtype: Dtype, params: readonly TensorLike[], options: DrawOptions, cores: readonly number[] = []): TensorVariable {
    const lengths = options.size === undefined ? broadcastLengths(params, cores) : lengthsOf(options.size, where);
    return this.#draw(make(options.dtype ?? dtype, lengths.length), lengths, params, options.name);
  }

  /** Standard normal floats. */
  standardNormal(options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.standardNormal', (d, n) => new StandardNormalRV(d, n), config.floatX, [], options);
  }

  /** 1 with probability p, else 0 (int32 by default; bool allowed). */
  bernoulli(p: TensorLike, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.bernoulli', (d, n) => new BernoulliRV(d, n), 'int32', [p], options);
  }

  /** Successes in n trials of probability p (int32). */
  binomial(n: TensorLike, p: TensorLike, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.binomial', (d, k) => new BinomialRV(d, k), 'int32', [n, p], options);
  }

  /** Poisson counts of mean lam (int32). */
  poisson(lam: TensorLike, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.poisson', (d, n) => new PoissonRV(d, n), 'int32', [lam], options);
  }

  /** Gamma draws of this shape and scale. */
  gamma(shape: TensorLike, scale: TensorLike = 1, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.gamma', (d, n) => new GammaRV(d, n), config.floatX, [shape, scale], options);
  }

  /** Beta(alpha, beta) draws. */
  beta(alpha: TensorLike, beta: TensorLike, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.beta', (d, n) => new BetaRV(d, n), config.floatX, [alpha, beta], options);
  }

  /** Exponential draws of mean `scale`. */
  exponential(scale: TensorLike = 1, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.exponential', (d, n) => new ExponentialRV(d, n), config.floatX, [scale], options);
  }

  /** Laplace draws. */
  laplace(loc: TensorLike = 0, scale: TensorLike = 1, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.laplace', (d, n) => new LaplaceRV(d, n), config.floatX, [loc, scale], options);
  }

  /** Logistic draws. */
  logistic(loc: TensorLike = 0, scale: TensorLike = 1, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.logistic', (d, n) => new LogisticRV(d, n), config.floatX, [loc, scale], options);
  }

  /** exp(normal(mean, sigma)). */
  lognormal(mean: TensorLike = 0, sigma: TensorLike = 1, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.lognormal', (d, n) => new LognormalRV(d, n), config.floatX, [mean, sigma], options);
  }

  /** Trials up to the first success, each of probability p (1, 2, ...; int32). */
  geometric(p: TensorLike, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.geometric', (d, n) => new GeometricRV(d, n), 'int32', [p], options);
  }

  /** loc + scale |z|, z standard normal. */
  halfNormal(loc: TensorLike = 0, scale: TensorLike = 1, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.halfNormal', (d, n) => new HalfNormalRV(d, n), config.floatX, [loc, scale], options);
  }

  /** Student's t with df degrees of freedom, shifted and scaled. */
  studentT(df: TensorLike, loc: TensorLike = 0, scale: TensorLike = 1, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.studentT', (d, n) => new StudentTRV(d, n), config.floatX, [df, loc, scale], options);
  }

  /** Cauchy draws. */
  cauchy(loc: TensorLike = 0, scale: TensorLike = 1, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.cauchy', (d, n) => new CauchyRV(d, n), config.floatX, [loc, scale], options);
  }

  /** An index per item, of probabilities p (its last axis; int32). */
  categorical(p: TensorLike, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.categorical', (d, n) => new CategoricalRV(d, n), 'int32', [p], options, [1]);
  }

  /** Counts of n draws over the categories of p, per item (int32). */
  multinomial(n: TensorLike, p: TensorLike, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.multinomial', (d, k) => new MultinomialRV(d, k), 'int32', [n, p], options, [0, 1]);
  }

  /** Vectors on the simplex, Dirichlet(alpha) (alpha's last axis), per item. */
  dirichlet(alpha: TensorLike, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.dirichlet', (d, n) => new DirichletRV(d, n), config.floatX, [alpha], options, [1]);
  }

  /** Normal vectors of this mean (k) and covariance (k x k, positive definite), per item. */
  multivariateNormal(mean: TensorLike, cov: TensorLike, options: DrawOptions = {}): TensorVariable {
    return this.#byParams('RandomStream.multivariateNormal', (d, n) => new MultivariateNormalRV(d, n), config.floatX, [mean, cov], options, [1, 2]);
  }

  /**
   * Picks from a population: a vector, or arange(a) for an integer a; with replacement (the
   * default) or without, uniformly or by probabilities p; one pick unless `size` says more.
   */
  choice(a: TensorLike, options: DrawOptions & { readonly replace?: boolean; readonly p?: TensorLike } = {}): TensorVariable {
    const av = asTensorVariable(typeof a === 'number' ? constant(a, { dtype: 'int32' }) : a);
    const count = av.ndim === 0;
    const lengths = options.size === undefined ? [] : lengthsOf(options.size, 'RandomStream.choice');
    const p = options.p ?? constant(new Float64Array(0));
    const op = new ChoiceRV(options.dtype ?? (count ? 'int32' : av.dtype), lengths.length, options.replace ?? true, count);
    return this.#draw(op, lengths, [av, p], options.name);
  }

  /** x shuffled along its first axis, or a shuffled arange(x) for an integer x. */
  permutation(x: TensorLike, options: { readonly name?: string; readonly dtype?: Dtype } = {}): TensorVariable {
    const xv = asTensorVariable(typeof x === 'number' ? constant(x, { dtype: 'int32' }) : x);
    const count = xv.ndim === 0;
    return this.#draw(new PermutationRV(options.dtype ?? (count ? 'int32' : xv.dtype), count), [], [xv], options.name);
  }
}
