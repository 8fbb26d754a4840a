// Seeded input data for the workloads (mulberry32), so that every system gets the same numbers
// on every run without depending on weft's own generators.

/** A stream of uniform numbers in [0, 1) from a 32-bit seed. */
export function uniformStream(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` float32 numbers uniform in [lo, hi). */
export function uniform(n: number, seed: number, lo = -1, hi = 1): Float32Array {
  const next = uniformStream(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = lo + (hi - lo) * next();
  return out;
}

/** A one-hot float32 matrix [rows, classes] of seeded labels. */
export function oneHot(rows: number, classes: number, seed: number): Float32Array {
  const next = uniformStream(seed);
  const out = new Float32Array(rows * classes);
  for (let r = 0; r < rows; r++) out[r * classes + Math.floor(next() * classes)] = 1;
  return out;
}
