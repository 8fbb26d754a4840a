// Rng: seeded random ndarrays for tests, examples and verifyGrad (weft.Rng). It makes values,
// not graph nodes.
import { intRange, isFloatDtype, STORAGE, type Dtype } from '../../kernels/dtype.js';
import { Prng } from '../../kernels/prng.js';
import { sizeOf } from '../../kernels/view.js';
import { config } from '../core/config.js';
import { makeNdArray, type NdArray } from '../core/ndarray.js';

export class Rng {
  readonly #prng: Prng;

  constructor(readonly seed: number) {
    if (!(Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff)) throw new RangeError(`Rng: the seed must be an integer from 0 to 4294967295, got ${seed}`);
    this.#prng = new Prng(seed);
  }

  #fill(shape: readonly number[], dtype: Dtype, draw: () => number): NdArray {
    const data = new STORAGE[dtype](sizeOf(shape));
    for (let i = 0; i < data.length; i++) data[i] = draw();
    return makeNdArray(data, shape);
  }

  /** Uniform values in [low, high). */
  uniform(shape: readonly number[], options: { low?: number; high?: number; dtype?: Dtype } = {}): NdArray {
    const { low = 0, high = 1, dtype = config.floatX } = options;
    if (!isFloatDtype(dtype)) throw new TypeError(`Rng.uniform: dtype must be a float dtype, got ${dtype}`);
    return this.#fill(shape, dtype, () => low + (high - low) * this.#prng.nextFloat());
  }

  /** Normally distributed values. */
  normal(shape: readonly number[], options: { mean?: number; std?: number; dtype?: Dtype } = {}): NdArray {
    const { mean = 0, std = 1, dtype = config.floatX } = options;
    if (!isFloatDtype(dtype)) throw new TypeError(`Rng.normal: dtype must be a float dtype, got ${dtype}`);
    return this.#fill(shape, dtype, () => mean + std * this.#prng.nextNormal());
  }

  /** Uniform integers in [low, high). */
  integers(shape: readonly number[], low: number, high: number, dtype: Dtype = 'int32'): NdArray {
    if (!(Number.isInteger(low) && Number.isInteger(high) && high > low)) {
      throw new RangeError(`Rng.integers: expected integers low < high, got ${low} and ${high}`);
    }
    if (!isFloatDtype(dtype) && (low < intRange(dtype)[0] || high - 1 > intRange(dtype)[1])) throw new RangeError(`Rng.integers: [${low}, ${high}) does not fit ${dtype} (integers from ${intRange(dtype)[0]} to ${intRange(dtype)[1]})`);
    return this.#fill(shape, dtype, () => low + Math.floor(this.#prng.nextFloat() * (high - low)));
  }

  /** One uniform float in [0, 1). */
  random(): number {
    return this.#prng.nextFloat();
  }
}
