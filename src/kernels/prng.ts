// The one pseudo-random generator of weft: xoshiro128** over four uint32 words, seeded through
// splitmix32, so that a seed gives the same numbers on every platform. Xoshiro128 loads and saves
// its state (random draws in graphs keep it in a state value); Prng is the seeded convenience
// behind weft.Rng, verifyGrad and the tests.

/** Words in a generator state. */
export const STATE_WORDS = 4;

const TWO_POW_32 = 4294967296;

/** The state of the generator seeded with `seed`: four outputs of splitmix32 (never all zero). */
export function seedWords(seed: number): Uint32Array {
  const words = new Uint32Array(STATE_WORDS);
  let x = seed >>> 0;
  for (let i = 0; i < STATE_WORDS; i++) {
    x = (x + 0x9e3779b9) >>> 0;
    let z = x;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    words[i] = (z ^ (z >>> 16)) >>> 0;
  }
  // splitmix32 is a bijection of its counter, so four zero outputs cannot happen; the check is cheap.
  if (words.every((w) => w === 0)) words[0] = 1;
  return words;
}

export class Xoshiro128 {
  #s0: number;
  #s1: number;
  #s2: number;
  #s3: number;

  /** A generator in the state `words[at], words[at + step], ...` (4 words, not all zero). */
  constructor(words: ArrayLike<number>, at = 0, step = 1) {
    this.#s0 = words[at]! >>> 0;
    this.#s1 = words[at + step]! >>> 0;
    this.#s2 = words[at + 2 * step]! >>> 0;
    this.#s3 = words[at + 3 * step]! >>> 0;
  }

  /** The generator that a seed gives: its state is four outputs of splitmix32 from the seed. */
  static fromSeed(seed: number): Xoshiro128 {
    return new Xoshiro128(seedWords(seed));
  }

  /** Writes the current state into `out` (4 words). */
  save(out: Uint32Array): void {
    out[0] = this.#s0;
    out[1] = this.#s1;
    out[2] = this.#s2;
    out[3] = this.#s3;
  }

  /** A uniformly distributed 32-bit unsigned integer. */
  nextUint32(): number {
    const s1 = this.#s1;
    const m = Math.imul(s1, 5);
    const result = Math.imul((m << 7) | (m >>> 25), 9) >>> 0;
    const t = s1 << 9;
    this.#s2 ^= this.#s0;
    this.#s3 ^= s1;
    this.#s1 = (s1 ^ this.#s2) >>> 0;
    this.#s0 = (this.#s0 ^ this.#s3) >>> 0;
    this.#s2 = (this.#s2 ^ t) >>> 0;
    this.#s3 = ((this.#s3 << 11) | (this.#s3 >>> 21)) >>> 0;
    return result;
  }

  /** A uniform double in [0, 1) with 53 random bits. */
  nextDouble(): number {
    const hi = this.nextUint32() >>> 5;
    const lo = this.nextUint32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** A uniform integer in [0, range) for 1 <= range <= 2^32, without bias (rejection of the tail). */
  nextBelow(range: number): number {
    // Values at or above `limit` would favour the small residues; they are drawn again.
    const limit = TWO_POW_32 - (TWO_POW_32 % range);
    let x = this.nextUint32();
    while (x >= limit) x = this.nextUint32();
    return x % range;
  }
}

/** The generator seeded with `seed`, with the draws weft.Rng makes from it. */
export class Prng extends Xoshiro128 {
  constructor(seed: number) {
    super(seedWords(seed));
  }

  /** A uniform float in [0, 1) with 53 random bits (the same as nextDouble). */
  nextFloat(): number {
    return this.nextDouble();
  }

  /** A standard normal sample (Box-Muller). */
  nextNormal(): number {
    let u = 0;
    while (u === 0) u = this.nextFloat();
    const v = this.nextFloat();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
}
