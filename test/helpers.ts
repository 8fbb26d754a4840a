// Shared test helpers: seeded values, compile-and-run, approximate comparison of ndarrays with
// expected nested arrays, and exact error-message assertions.
import type { Test } from 'tap';
import * as weft from '../src/index.js';

export { weft };
export const pt = weft.pt;

export function rng(seed = 1234): weft.Rng {
  return new weft.Rng(seed);
}

/**
 * A seeded stream of doubles in [0, 1) with 53 random bits each (two steps of a 32-bit
 * mulberry-style generator), for tests that draw millions of scalars one at a time.
 */
/** The same float: equal bits (so -0 is not 0), or both NaN (whose payloads may differ). */
export const sameNumber = (a: number, b: number): boolean => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));

export function uniformStream(seed: number): () => number {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
  return () => ((next() >>> 5) * 67108864 + (next() >>> 6)) / 9007199254740992;
}

/** Compiles `outputs` as a function of `inputs` and calls it once with `values`. */
export async function run(
  inputs: readonly weft.pt.TensorVariable[],
  outputs: weft.pt.TensorVariable,
  values: readonly unknown[],
  options?: weft.CompileOptions,
): Promise<weft.NdArray> {
  const fn = await weft.compile(inputs, outputs, { onUnusedInput: 'ignore', ...options });
  return fn(...(values as weft.InputValue[]));
}

type Nested = number | boolean | readonly Nested[];

function flatten(x: Nested): number[] {
  return Array.isArray(x) ? (x as readonly Nested[]).flatMap(flatten) : [Number(x)];
}

function shapeOfNested(x: Nested): number[] {
  const s: number[] = [];
  let v: Nested = x;
  while (Array.isArray(v)) {
    s.push(v.length);
    v = (v as readonly Nested[])[0]!;
  }
  return s;
}

/**
 * Checks that `actual` has the shape of `expected` and equal values within `tol` (relative to
 * the magnitude, absolute near zero). NaNs must match NaNs; infinities must match exactly.
 */
export function near(t: Test, actual: weft.NdArray, expected: Nested, tol = 1e-12, msg = 'values'): void {
  const shape = shapeOfNested(expected);
  t.same(actual.shape, shape, `${msg}: shape`);
  const got = flatten(weft.tolist(actual) as Nested);
  const want = flatten(expected);
  const bad: string[] = [];
  want.forEach((w, i) => {
    const g = got[i]!;
    const ok = Number.isNaN(w) ? Number.isNaN(g) : !Number.isFinite(w) ? g === w : Math.abs(g - w) <= tol * Math.max(1, Math.abs(w));
    if (!ok && bad.length < 5) bad.push(`[${i}] got ${g}, expected ${w}`);
  });
  t.same(bad, [], `${msg}${bad.length ? '' : ` within ${tol}`}`);
}

/** The storage dtype name of an output ndarray's data (bool outputs read as uint8). */
export function dataKind(a: weft.NdArray): string {
  return a.data.constructor.name;
}

/** Asserts that `fn` throws (or rejects with) an instance of `cls` with exactly `message`. */
export async function throwsExactly(
  t: Test,
  fn: () => unknown,
  cls: abstract new (...args: never[]) => Error,
  message: string,
  what = 'error',
): Promise<void> {
  try {
    await fn();
  } catch (e) {
    t.type(e, cls, `${what}: ${cls.name}`);
    t.equal((e as Error).message, message, `${what}: message`);
    return;
  }
  t.fail(`${what}: expected ${cls.name} "${message}", nothing was thrown`);
}

/**
 * A one-worker pool whose arena has room for exactly one region of 144 MiB (3.75 GiB are held,
 * as address space only), and a float32 input of 64 MB: each call of `x * k` needs such a region
 * (64 MB in, 64 MB out and the queues, in a block of 9/16 of 256 MiB).
 */
export function nearlyFullPool(t: Test): { pool: weft.Pool; x: weft.pt.TensorVariable; n: number; big: Float32Array } {
  const pool = weft.createPool({ workers: 1 });
  t.teardown(() => pool.close());
  for (const bytes of [2 ** 31, 2 ** 30, 2 ** 29, 2 ** 28]) pool.arena.allocate(bytes);
  const n = 2 ** 24;
  return { pool, x: weft.pt.vector('x', 'float32'), n, big: new Float32Array(n).fill(0.5) };
}

// Tests that need a program a fresh machine lacks (Chromium, redis-server) ask for it through
// requires(): skipped without it, failed under its required variable (.ci/run sets it).
export { requires, CHROMIUM, type Program } from './requires.js';
