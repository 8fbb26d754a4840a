// Seeded choices for the differential fuzzer: a thin layer over weft.Rng that picks numbers,
// elements and weighted alternatives, so that a graph is a pure function of its seed.
import { copyView } from '../../src/kernels/copy.js';
import { makeNdArray } from '../../src/tensor/core/ndarray.js';
import { weft } from '../helpers.js';

/** Elements of each dtype's random stream. */
const NOISE = 1 << 19;
const streams = new Map<weft.Dtype, weft.TypedArray>();

/** The random stream of a dtype (made once, from a fixed seed). */
function noise(dtype: weft.Dtype): weft.TypedArray {
  let s = streams.get(dtype);
  if (!s) {
    const r = new weft.Rng(0x5eed + streams.size);
    const shape = [NOISE];
    const values =
      dtype === 'float32' || dtype === 'float64'
        ? r.normal(shape, { dtype, std: 1.5 })
        : dtype === 'bool'
          ? r.integers(shape, 0, 2, 'bool')
          : dtype.startsWith('uint')
            ? r.integers(shape, 0, 40, dtype)
            : r.integers(shape, dtype === 'int8' ? -20 : -60, dtype === 'int8' ? 21 : 61, dtype);
    s = values.data;
    streams.set(dtype, s);
  }
  return s;
}

export class Chooser {
  readonly #rng: weft.Rng;

  constructor(readonly seed: number) {
    this.#rng = new weft.Rng(seed);
  }

  /** A uniform float in [0, 1). */
  float(): number {
    return this.#rng.random();
  }

  /** A uniform integer in [lo, hi] (both included). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.float() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new RangeError('Chooser.pick: nothing to pick from');
    return xs[Math.floor(this.float() * xs.length)]!;
  }

  /** One of the alternatives, with probability proportional to its weight. */
  weighted<T>(alternatives: ReadonlyArray<readonly [T, number]>): T {
    const total = alternatives.reduce((s, [, w]) => s + w, 0);
    let x = this.float() * total;
    for (const [value, w] of alternatives) {
      if (x < w) return value;
      x -= w;
    }
    return alternatives[alternatives.length - 1]![0];
  }

  shuffle<T>(xs: readonly T[]): T[] {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.float() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  /**
   * Random values of a dtype: normal floats, small integers, booleans. They are windows, at a
   * seeded offset, of one long random stream per dtype, since drawing every element of large
   * inputs anew would cost more than the rest of the fuzzer.
   */
  values(shape: readonly number[], dtype: weft.Dtype): weft.NdArray {
    const n = shape.reduce((a, b) => a * b, 1);
    const stream = noise(dtype);
    const data = new (stream.constructor as new (n: number) => weft.TypedArray)(n);
    let at = this.int(0, NOISE - 1);
    for (let filled = 0; filled < n; ) {
      const take = Math.min(n - filled, NOISE - at);
      data.set(stream.subarray(at, at + take), filled);
      filled += take;
      at = 0;
    }
    return makeNdArray(data, shape);
  }
}

/**
 * The same values laid out in Fortran order at a non-zero offset: a value the caller did not
 * make contiguous, which the runtime must read through its strides.
 */
export function stridedCopy(x: weft.NdArray): weft.NdArray {
  const n = x.shape.reduce((a, b) => a * b, 1);
  const data = new (x.data.constructor as new (n: number) => weft.TypedArray)(n + 3);
  const stride: number[] = [];
  let acc = 1;
  for (const d of x.shape) {
    stride.push(acc);
    acc *= d;
  }
  const out = makeNdArray(data, x.shape, stride, 3);
  copyView(x, out);
  return out;
}
