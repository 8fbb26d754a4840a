// The order in which weft sums (and multiplies) a contiguous row of float64 accumulations: eight
// partials, then the tail. The WebAssembly blocks (reduce-wasm.ts, softmax-wasm.ts) use the same
// order, so that either gives the same bits; eight independent partials also let JS overlap them.
import type { TypedArray } from './dtype.js';

/** Partials of a row (four f64x2 accumulators in WebAssembly). */
export const ROW_PARTIALS = 8;

/**
 * `s` plus the contiguous row d[p, p + n) in the order of reduce-wasm.ts: element j into partial
 * j mod 8, s plus the partials combined as ((s0+s2)+(s4+s6)) + ((s1+s3)+(s5+s7)), then the tail
 * one by one. A row shorter than 8 is so added one by one, as a row of any other layout (s + 0 is
 * s: weft's sums start at +0, so s is never -0): the loop nest may swap such a row with a kept
 * axis in one chunk and not in another.
 */
export function sumRow(s: number, d: TypedArray, p: number, n: number): number {
  let [s0, s1, s2, s3, s4, s5, s6, s7] = [0, 0, 0, 0, 0, 0, 0, 0];
  const end8 = p + n - (n % ROW_PARTIALS);
  for (; p < end8; p += 8) {
    s0 += d[p]!;
    s1 += d[p + 1]!;
    s2 += d[p + 2]!;
    s3 += d[p + 3]!;
    s4 += d[p + 4]!;
    s5 += d[p + 5]!;
    s6 += d[p + 6]!;
    s7 += d[p + 7]!;
  }
  s += s0 + s2 + (s4 + s6) + (s1 + s3 + (s5 + s7));
  for (const end = end8 + (n % ROW_PARTIALS); p < end; p++) s += d[p]!;
  return s;
}

/** `s` times the product of a contiguous row, in sumRow's order. */
export function prodRow(s: number, d: TypedArray, p: number, n: number): number {
  let [s0, s1, s2, s3, s4, s5, s6, s7] = [1, 1, 1, 1, 1, 1, 1, 1];
  const end8 = p + n - (n % ROW_PARTIALS);
  for (; p < end8; p += 8) {
    s0 *= d[p]!;
    s1 *= d[p + 1]!;
    s2 *= d[p + 2]!;
    s3 *= d[p + 3]!;
    s4 *= d[p + 4]!;
    s5 *= d[p + 5]!;
    s6 *= d[p + 6]!;
    s7 *= d[p + 7]!;
  }
  s *= s0 * s2 * (s4 * s6) * (s1 * s3 * (s5 * s7));
  for (const end = end8 + (n % ROW_PARTIALS); p < end; p++) s *= d[p]!;
  return s;
}
