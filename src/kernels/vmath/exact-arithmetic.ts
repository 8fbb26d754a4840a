// Exact arithmetic on floats, written against FloatOps as the vmath functions are: Veltkamp's
// split, Dekker's product and Knuth's two-sum, from which the functions build double-double
// values where one float's precision would not do (pow's logarithm, erfc's tail, arcsin's root,
// the trigonometric functions' reduction and quotient).
import type { FloatOps } from './functions.js';

/** A double-double value hi + lo, or an exact split of a double into two halves. */
export type Pair<F> = readonly [F, F];

/** Veltkamp's constant 2^27 + 1: (a C) - ((a C) - a) is a rounded to 26 bits, the rest fits in 26 more. */
export const SPLIT = 134217729;

/** a's two halves (Veltkamp): each of at most 26 significant bits, so their products are exact. */
export function split<F, M>(o: FloatOps<F, M>, a: F): Pair<F> {
  const p = o.mul(a, o.c(SPLIT));
  const hi = o.sub(p, o.sub(p, a));
  return [hi, o.sub(a, hi)];
}

/** A constant's halves, split by the same operations once, at load. */
export function splitConstant(a: number): Pair<number> {
  const p = a * SPLIT;
  const hi = p - (p - a);
  return [hi, a - hi];
}

/** a b = p + e exactly (Dekker's product, from the halves of a and of b), for |a b| well inside the range. */
export function twoProduct<F, M>(o: FloatOps<F, M>, a: F, as: Pair<F>, b: F, bs: Pair<F>): Pair<F> {
  const p = o.mul(a, b);
  const e = o.add(o.add(o.add(o.sub(o.mul(as[0], bs[0]), p), o.mul(as[0], bs[1])), o.mul(as[1], bs[0])), o.mul(as[1], bs[1]));
  return [p, e];
}

/** a - b = s + e exactly, for any a and b (Knuth's two-sum of a and -b). */
export function twoDifference<F, M>(o: FloatOps<F, M>, a: F, b: F): Pair<F> {
  const s = o.sub(a, b);
  const v = o.sub(s, a);
  return [s, o.sub(o.sub(a, o.sub(s, v)), o.add(b, v))];
}

/** a + b = s + e exactly, for any a and b (Knuth's two-sum). */
export function twoSum<F, M>(o: FloatOps<F, M>, a: F, b: F): Pair<F> {
  const s = o.add(a, b);
  const bv = o.sub(s, a);
  return [s, o.add(o.sub(a, o.sub(s, bv)), o.sub(b, bv))];
}
