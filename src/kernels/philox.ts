// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), the
// counter-based generator of weft's random draws: a block of four random words is a pure function
// of a 2-word key and a 4-word counter. A draw's element i reads the blocks of counter
// (base + i, sub, 0) for sub = 0, 1, ..., so its numbers depend only on the stream's key, the
// stream's position and i: any worker may draw any chunk of elements, in any order.

const M0 = 0xd2511f53;
const M1 = 0xcd9e8d57;
const W0 = 0x9e3779b9;
const W1 = 0xbb67ae85;
const TWO_POW_16 = 65536;
const TWO_POW_32 = 4294967296;

/** The high 32 bits of the 64-bit product of two uint32 (exact in doubles: the halves of b). */
function mulhi(a: number, b: number): number {
  const low = a * (b & 0xffff);
  return Math.floor((a * (b >>> 16) + Math.floor(low / TWO_POW_16)) / TWO_POW_16) >>> 0;
}

/** Philox4x32 with 10 rounds: the block for counter (c0, c1, c2, c3) and key (k0, k1), into `out`. */
export function philox4x32(c0: number, c1: number, c2: number, c3: number, k0: number, k1: number, out: Uint32Array): void {
  for (let round = 0; round < 10; round++) {
    if (round > 0) {
      k0 = (k0 + W0) >>> 0;
      k1 = (k1 + W1) >>> 0;
    }
    const hi0 = mulhi(M0, c0);
    const lo0 = Math.imul(M0, c0) >>> 0;
    const hi1 = mulhi(M1, c2);
    const lo1 = Math.imul(M1, c2) >>> 0;
    c0 = (hi1 ^ c1 ^ k0) >>> 0;
    c1 = lo1;
    c2 = (hi0 ^ c3 ^ k1) >>> 0;
    c3 = lo0;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/** A uniform double in [0, 1) from two words (53 bits: 27 of the first, 26 of the second). */
export const doubleOf = (a: number, b: number): number => ((a >>> 5) * 67108864 + (b >>> 6)) / 9007199254740992;

/** A uniform double in (0, 1) from two words (52 bits, the midpoints of their intervals). */
export const openOf = (a: number, b: number): number => ((a >>> 6) * 67108864 + (b >>> 6) + 0.5) / 4503599627370496;

/** A standard normal from four words: Box-Muller's cosine branch, radius from the first two. */
export const normalOf = (a: number, b: number, c: number, d: number): number => Math.sqrt(-2 * Math.log(openOf(a, b))) * Math.cos(2 * Math.PI * doubleOf(c, d));

/**
 * The numbers of one element of a draw: the words of its blocks in order. A sampler asks for as
 * many as it needs (rejection methods a varying number); no other element reads them.
 */
export class ElementStream {
  readonly #block = new Uint32Array(4);
  #k0 = 0;
  #k1 = 0;
  #c0 = 0;
  #c1 = 0;
  #sub = 0;
  #used = 4;

  /** Points the stream at element `index` of a draw whose stream key and base position are given. */
  reset(k0: number, k1: number, base0: number, base1: number, index: number): void {
    const lo = base0 + (index % TWO_POW_32);
    this.#k0 = k0;
    this.#k1 = k1;
    this.#c0 = lo >>> 0;
    this.#c1 = (base1 + Math.floor(index / TWO_POW_32) + (lo >= TWO_POW_32 ? 1 : 0)) >>> 0;
    this.#sub = 0;
    this.#used = 4;
  }

  /** As reset, with the element's first block (sub 0) already computed (philox-wasm.ts fills them many at a time). */
  resetWithBlock(k0: number, k1: number, base0: number, base1: number, index: number, words: Uint32Array, at: number): void {
    this.reset(k0, k1, base0, base1, index);
    this.#block[0] = words[at]!;
    this.#block[1] = words[at + 1]!;
    this.#block[2] = words[at + 2]!;
    this.#block[3] = words[at + 3]!;
    this.#sub = 1;
    this.#used = 0;
  }

  nextUint32(): number {
    if (this.#used === 4) {
      philox4x32(this.#c0, this.#c1, this.#sub, 0, this.#k0, this.#k1, this.#block);
      this.#sub = (this.#sub + 1) >>> 0;
      this.#used = 0;
    }
    return this.#block[this.#used++]!;
  }

  /** A uniform double in [0, 1) with 53 random bits. */
  nextDouble(): number {
    const a = this.nextUint32();
    return doubleOf(a, this.nextUint32());
  }

  /** A uniform double in (0, 1) (52 random bits, the midpoints of their intervals): never 0 or 1, so that logarithms are finite. */
  nextOpen(): number {
    const a = this.nextUint32();
    return openOf(a, this.nextUint32());
  }

  /** A uniform integer in [0, range) for 1 <= range <= 2^32, without bias (rejection of the tail). */
  nextBelow(range: number): number {
    const limit = TWO_POW_32 - (TWO_POW_32 % range);
    let x = this.nextUint32();
    while (x >= limit) x = this.nextUint32();
    return x % range;
  }

  /** A standard normal draw (Box-Muller, the cosine branch: one per two uniforms, no state kept between draws). */
  nextNormal(): number {
    const [a, b, c] = [this.nextUint32(), this.nextUint32(), this.nextUint32()];
    return normalOf(a, b, c, this.nextUint32());
  }
}

/** The state after `count` elements drawn from `state` [k0, k1, base0, base1]: the base moved on. */
export function advanced(state: ArrayLike<number>, count: number, out: Uint32Array): void {
  const lo = state[2]! + (count % TWO_POW_32);
  out[0] = state[0]!;
  out[1] = state[1]!;
  out[2] = lo >>> 0;
  out[3] = (state[3]! + Math.floor(count / TWO_POW_32) + (lo >= TWO_POW_32 ? 1 : 0)) >>> 0;
}
