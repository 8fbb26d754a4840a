// The W4 model in plain float64 JavaScript, written out by hand (forward, backward, no library):
// the independent reference that every system's first training step is checked against.
// Model: h = relu(x W1 + b1); logits = h W2 + b2; loss = -mean over rows of sum(y * logSoftmax).

export interface MlpShape {
  readonly batch: number;
  readonly inputs: number;
  readonly hidden: number;
  readonly classes: number;
}

export interface MlpParams {
  readonly w1: Float32Array;
  readonly b1: Float32Array;
  readonly w2: Float32Array;
  readonly b2: Float32Array;
}

export interface MlpStep {
  readonly loss: number;
  /** The gradient of the loss for each parameter, in MlpParams order. */
  readonly grads: { readonly w1: Float64Array; readonly b1: Float64Array; readonly w2: Float64Array; readonly b2: Float64Array };
}

/** out[m, n] = a[m, k] · b[k, n] (+ bias[n]), row-major, float64. */
function affine(a: ArrayLike<number>, b: ArrayLike<number>, bias: ArrayLike<number> | undefined, m: number, k: number, n: number): Float64Array {
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    const row = out.subarray(i * n, (i + 1) * n);
    if (bias) for (let j = 0; j < n; j++) row[j] = bias[j]!;
    for (let p = 0; p < k; p++) {
      const aip = a[i * k + p]!;
      if (aip === 0) continue;
      for (let j = 0; j < n; j++) row[j] += aip * b[p * n + j]!;
    }
  }
  return out;
}

/** The loss and gradients at `p` for the batch (x [batch, inputs], y one-hot [batch, classes]). */
export function mlpStep(s: MlpShape, p: MlpParams, x: Float32Array, y: Float32Array): MlpStep {
  const { batch: B, inputs: I, hidden: H, classes: C } = s;
  const z1 = affine(x, p.w1, p.b1, B, I, H);
  const h = z1.map((v) => (v > 0 ? v : 0));
  const z2 = affine(h, p.w2, p.b2, B, H, C);
  let loss = 0;
  const dz2 = new Float64Array(B * C);
  for (let r = 0; r < B; r++) {
    let max = -Infinity;
    for (let c = 0; c < C; c++) max = Math.max(max, z2[r * C + c]!);
    let sum = 0;
    for (let c = 0; c < C; c++) sum += Math.exp(z2[r * C + c]! - max);
    const logSum = max + Math.log(sum);
    for (let c = 0; c < C; c++) {
      const logp = z2[r * C + c]! - logSum;
      loss -= y[r * C + c]! * logp;
      dz2[r * C + c] = (Math.exp(logp) - y[r * C + c]!) / B;
    }
  }
  loss /= B;
  // Backward: dW2 = h^T dz2, db2 = column sums of dz2, dh = dz2 W2^T, dz1 = dh where z1 > 0.
  const w2 = new Float64Array(H * C);
  const b2 = new Float64Array(C);
  const dz1 = new Float64Array(B * H);
  for (let r = 0; r < B; r++) {
    for (let c = 0; c < C; c++) {
      const g = dz2[r * C + c]!;
      b2[c] += g;
      for (let j = 0; j < H; j++) w2[j * C + c] += h[r * H + j]! * g;
    }
    for (let j = 0; j < H; j++) {
      if (z1[r * H + j]! <= 0) continue;
      let g = 0;
      for (let c = 0; c < C; c++) g += dz2[r * C + c]! * p.w2[j * C + c]!;
      dz1[r * H + j] = g;
    }
  }
  const w1 = new Float64Array(I * H);
  const b1 = new Float64Array(H);
  for (let r = 0; r < B; r++) {
    for (let j = 0; j < H; j++) b1[j] += dz1[r * H + j]!;
    for (let i = 0; i < I; i++) {
      const xi = x[r * I + i]!;
      if (xi === 0) continue;
      const row = w1.subarray(i * H, (i + 1) * H);
      for (let j = 0; j < H; j++) row[j] += xi * dz1[r * H + j]!;
    }
  }
  return { loss, grads: { w1, b1, w2, b2 } };
}
