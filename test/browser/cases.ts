// Graphs that the browser test builds both in Chromium (served to the page as JavaScript) and in
// Node, from the `weft` each side has: an MLP-like expression big enough to be chunked over the
// workers, and a small one that runs on the calling thread. Values are exact formulas, no RNG.
import type * as Weft from '../../src/index.js';

export interface Case {
  readonly inputs: Weft.pt.TensorVariable[];
  readonly outputs: Weft.pt.TensorVariable[];
  /** Argument values of call `k`. */
  readonly values: (k: number) => Float64Array[];
}

/** n values in [-1, 1], exact in binary64 and the same on every platform. */
export function filled(n: number, seed: number): Float64Array {
  const a = new Float64Array(n);
  for (let i = 0; i < n; i++) a[i] = ((i * 7919 + seed * 104729) % 2001) / 1000 - 1;
  return a;
}

/**
 * Activations of the hidden layer: softsign, x / (1 + |x|), whose operations IEEE 754 rounds
 * exactly on every engine, and tanh, which is weft's own (kernels/vmath) where Node's and
 * Chromium's Math.tanh differ in the last bits: both must give Node's bits in the browser.
 */
export type Activation = 'softsign' | 'tanh';

/**
 * act(x·W1 + b1)·W2, its sum, and the sum of squares of the hidden layer per unit; the inputs
 * are flat vectors (typed arrays), reshaped in the graph. 256 rows: chunked over the workers.
 */
export function mlp(weft: typeof Weft, activation: Activation = 'softsign', rows = 256): Case {
  const { pt } = weft;
  const [x, w1, b1, w2] = ['x', 'w1', 'b1', 'w2'].map((name) => pt.vector(name));
  const a = x!.reshape([rows, 64]).dot(w1!.reshape([64, 128])).add(b1!);
  const h = activation === 'tanh' ? pt.tanh(a) : a.trueDiv(pt.abs(a).add(1));
  const y = h.dot(w2!.reshape([128, 10]));
  return {
    inputs: [x!, w1!, b1!, w2!],
    outputs: [y, y.sum(), h.sqr().sum({ axis: 0 })],
    values: (k) => [filled(rows * 64, k), filled(64 * 128, 100 + k), filled(128, 200 + k), filled(128 * 10, 300 + k)],
  };
}

/** A graph too small for the workers: (2x + 1)² and its sum. */
export function small(weft: typeof Weft): Case {
  const x = weft.pt.vector('x');
  const z = x.mul(2).add(1).sqr();
  return { inputs: [x], outputs: [z, z.sum()], values: (k) => [filled(5, k)] };
}

/** An output as the two sides compare it: its shape, dtype and bytes (hex). */
export interface Encoded {
  readonly shape: readonly number[];
  readonly dtype: string;
  readonly hex: string;
}

export function encode(nd: Weft.NdArray): Encoded {
  const bytes = new Uint8Array(nd.data.buffer, nd.data.byteOffset, nd.data.byteLength);
  let hex = '';
  for (const b of bytes) hex += b.toString(16).padStart(2, '0');
  return { shape: [...nd.shape], dtype: nd.dtype, hex };
}
