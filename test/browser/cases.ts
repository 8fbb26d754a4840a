// Graphs that the browser test builds both in Chromium (served to the page as JavaScript) and in
// Node, from the `weft` each side has: an MLP-like expression big enough to be chunked over the
// workers, and a small one that runs on the calling thread. Values are exact formulas, no RNG.
import type * as Weft from '../../src/index.js';

export interface Case {
  readonly inputs: Weft.pt.TensorVariable[];
  readonly outputs: Weft.pt.TensorVariable[];
  /** Argument values of call `k`. */
  readonly values: (k: number) => Array<Float64Array | Float32Array>;
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

/**
 * weft's own math functions and reductions on both kinds of loop, in `dtype`: exp, tanh, log,
 * log1p, log2, log10, expm1, sinh, cosh, sigmoid, softplus, erf, erfc, arctan, arctan2, arcsin,
 * arccos, the inverse hyperbolic functions, logaddexp, log1mexp, logit, xlogx, xlogy0, exp2, sqrt, sin, cos and tan (also of arguments beyond 2^32, which the JS loops reduce), pow,
 * sums over either axis, prod, max, softmax and log-softmax of a 256x96 matrix (chunked over the
 * workers), whose bits must not depend on the engine.
 */
export function catalog(weft: typeof Weft, dtype: 'float32' | 'float64'): Case {
  const { pt } = weft;
  const [rows, cols] = [256, 96];
  const flat = pt.vector('x', dtype);
  const x = flat.reshape([rows, cols]).mul(4);
  const a = pt.abs(x);
  const elementwise = pt.exp(x.div(2)).add(pt.tanh(x)).add(pt.log(a.add(1e-3))).add(pt.log1p(a)).add(pt.expm1(x.div(4)));
  const logistic = pt.sigmoid(x).mul(pt.softplus(x)).add(pt.sqrt(a)).add(pt.arctan(x)).add(pt.arctan2(x, a.sub(2)));
  const more = pt.log2(a.add(1)).add(pt.log10(a.add(2))).add(pt.sinh(x.div(4))).add(pt.cosh(x.div(4))).add(pt.erf(x)).add(pt.erfc(x));
  const inverse = pt.arcsin(pt.tanh(x)).add(pt.arccos(pt.tanh(x.div(2)))).add(pt.arcsinh(x)).add(pt.arccosh(a.add(1))).add(pt.arctanh(pt.tanh(x).mul(0.9)));
  const logs = pt.logaddexp(x, a.neg()).add(pt.log1mexp(a.neg().sub(0.01))).add(pt.logit(pt.sigmoid(x))).add(pt.xlogx(a)).add(pt.xlogy0(x, a.add(1))).add(pt.exp2(x.div(8)));
  const trig = pt.sin(x).add(pt.cos(x.mul(1e10))).add(pt.tan(x.div(3))).add(pt.pow(a.add(0.5), x.div(4)));
  const softmax = pt.softmax(x);
  return {
    inputs: [flat],
    outputs: [elementwise, logistic, more, inverse, logs, trig, softmax, pt.logSoftmax(x), x.sum({ axis: 0 }), x.sum({ axis: 1 }), x.prod({ axis: 1 }), x.max({ axis: 0 }), softmax.sum()],
    values: (k) => [dtype === 'float32' ? Float32Array.from(filled(rows * cols, 400 + k)) : filled(rows * cols, 400 + k)],
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
