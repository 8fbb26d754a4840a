// weft.RandomStream (PyTensor's RandomStream): draws as graph nodes. Each draw gets a state of
// its own, a shared variable seeded from the stream's seed sequence, whose default update is the
// draw's next state: every call of a compiled function draws new numbers, and re-seeding the
// stream (or making it again with the same seed) gives the same numbers again.
import type { Dtype } from '../../kernels/dtype.js';
import { STATE_WORDS, Xoshiro128 } from '../../kernels/prng.js';
import { constant } from '../core/as-tensor.js';
import { config } from '../core/config.js';
import { empty } from '../core/ndarray.js';
import { IntegersRV, NormalRV, UniformRV, randomState, randomStateType, type RandomVariable } from './random.js';
import { Shape, shapeOf } from '../shape/shape.js';
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

  #draw(op: RandomVariable, lengths: ReadonlyArray<number | TensorVariable>, a: TensorLike, b: TensorLike, name: string | undefined): TensorVariable {
    // The state takes its seed once the draw is made: a refused draw leaves the seed sequence as it was.
    const state = new TensorSharedVariable(randomStateType(), randomState(0), name === undefined ? 'rng' : `${name}.rng`);
    const [next, draws] = op.call(state, ...lengths, param(a), param(b)) as [TensorVariable, TensorVariable];
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
    return this.#draw(op, lengths, options.low ?? 0, options.high ?? 1, options.name);
  }

  /** Normally distributed floats (default mean 0, std 1) of this shape. */
  normal(shape: ShapeLike, options: NormalOptions = {}): TensorVariable {
    const lengths = lengthsOf(shape, 'RandomStream.normal');
    const op = new NormalRV(options.dtype ?? config.floatX, lengths.length);
    return this.#draw(op, lengths, options.mean ?? 0, options.std ?? 1, options.name);
  }

  /** Uniform integers in [low, high) of this shape, of an integer dtype (int32 by default). */
  integers(shape: ShapeLike, low: TensorLike, high: TensorLike, dtype: Dtype = 'int32', options: { readonly name?: string } = {}): TensorVariable {
    const lengths = lengthsOf(shape, 'RandomStream.integers');
    return this.#draw(new IntegersRV(dtype, lengths.length), lengths, low, high, options.name);
  }
}
