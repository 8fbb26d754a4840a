// A small seeded pseudo-random generator (xoshiro128**, seeded through splitmix32): the same
// seed gives the same numbers on every platform, which tests and verifyGrad rely on.

export class Prng {
  #s0: number;
  #s1: number;
  #s2: number;
  #s3: number;

  constructor(seed: number) {
    let x = seed >>> 0;
    const next = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.#s0 = next();
    this.#s1 = next();
    this.#s2 = next();
    this.#s3 = next();
  }

  /** A uniformly distributed 32-bit unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(((Math.imul(this.#s1, 5) << 7) | (Math.imul(this.#s1, 5) >>> 25)) >>> 0, 9) >>> 0;
    const t = (this.#s1 << 9) >>> 0;
    this.#s2 ^= this.#s0;
    this.#s3 ^= this.#s1;
    this.#s1 ^= this.#s2;
    this.#s0 ^= this.#s3;
    this.#s2 ^= t;
    this.#s3 = ((this.#s3 << 11) | (this.#s3 >>> 21)) >>> 0;
    this.#s0 >>>= 0;
    this.#s1 >>>= 0;
    this.#s2 >>>= 0;
    return result;
  }

  /** A uniform float in [0, 1) with 53 random bits. */
  nextFloat(): number {
    const hi = this.nextUint32() >>> 5;
    const lo = this.nextUint32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** A standard normal sample (Box-Muller). */
  nextNormal(): number {
    let u = 0;
    while (u === 0) u = this.nextFloat();
    const v = this.nextFloat();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
}
