// The W14 model in plain float64 JavaScript, written out by hand (forward, then back through
// time, no library): the independent reference every system's loss and gradients are checked
// against. Model: h_t = tanh(x_t Wx + h_{t-1} Wh + b) for t = 1..T; loss = sum(h_T^2).

export interface RnnShape {
  readonly steps: number;
  readonly batch: number;
  readonly inputs: number;
  readonly hidden: number;
}

export interface RnnParams {
  /** [steps, batch, inputs], the sequence. */
  readonly x: Float32Array;
  /** [batch, hidden], the initial state. */
  readonly h0: Float32Array;
  /** [inputs, hidden]. */
  readonly wx: Float32Array;
  /** [hidden, hidden]. */
  readonly wh: Float32Array;
  /** [hidden]. */
  readonly b: Float32Array;
}

export interface RnnGrads {
  readonly wx: Float64Array;
  readonly wh: Float64Array;
  readonly b: Float64Array;
  readonly h0: Float64Array;
}

/** out[m, n] += a[m, k] · w[k, n], row-major (i-k-j order: the inner loop runs along rows). */
function addProduct(out: Float64Array, a: ArrayLike<number>, aOffset: number, w: ArrayLike<number>, m: number, k: number, n: number): void {
  for (let i = 0; i < m; i++) {
    const row = out.subarray(i * n, (i + 1) * n);
    for (let p = 0; p < k; p++) {
      const aip = a[aOffset + i * k + p]!;
      for (let j = 0; j < n; j++) row[j] += aip * w[p * n + j]!;
    }
  }
}

/** out[k, n] += a[m, k]^T · d[m, n]: the gradient of a weight from its input rows and the rows' gradients. */
function addTransposedProduct(out: Float64Array, a: ArrayLike<number>, aOffset: number, d: Float64Array, m: number, k: number, n: number): void {
  for (let i = 0; i < m; i++) {
    const drow = d.subarray(i * n, (i + 1) * n);
    for (let p = 0; p < k; p++) {
      const aip = a[aOffset + i * k + p]!;
      const row = out.subarray(p * n, (p + 1) * n);
      for (let j = 0; j < n; j++) row[j] += aip * drow[j]!;
    }
  }
}

/** The loss and its gradients with respect to Wx, Wh, b and h0. */
export function rnnLossAndGrads(s: RnnShape, p: RnnParams): { loss: number; grads: RnnGrads } {
  const { steps: T, batch: B, inputs: I, hidden: H } = s;
  const BH = B * H;
  // Every state is kept (hs[t] is h_t, hs[0] = h0): the backward pass reads them all.
  const hs = new Float64Array((T + 1) * BH);
  hs.set(p.h0);
  for (let t = 1; t <= T; t++) {
    const pre = new Float64Array(BH);
    for (let r = 0; r < B; r++) pre.set(p.b, r * H);
    addProduct(pre, p.x, (t - 1) * B * I, p.wx, B, I, H);
    addProduct(pre, hs, (t - 1) * BH, p.wh, B, H, H);
    for (let i = 0; i < BH; i++) hs[t * BH + i] = Math.tanh(pre[i]!);
  }
  let loss = 0;
  const dh = new Float64Array(BH);
  for (let i = 0; i < BH; i++) {
    const h = hs[T * BH + i]!;
    loss += h * h;
    dh[i] = 2 * h;
  }
  const grads: RnnGrads = { wx: new Float64Array(I * H), wh: new Float64Array(H * H), b: new Float64Array(H), h0: dh };
  const dpre = new Float64Array(BH);
  for (let t = T; t >= 1; t--) {
    for (let i = 0; i < BH; i++) {
      const h = hs[t * BH + i]!;
      dpre[i] = dh[i]! * (1 - h * h);
    }
    for (let i = 0; i < BH; i++) grads.b[i % H] += dpre[i]!;
    addTransposedProduct(grads.wx, p.x, (t - 1) * B * I, dpre, B, I, H);
    addTransposedProduct(grads.wh, hs, (t - 1) * BH, dpre, B, H, H);
    // dh_{t-1} = dpre Wh^T: row r, column i is the dot product of dpre's row r with Wh's row i.
    for (let r = 0; r < B; r++) {
      for (let i = 0; i < H; i++) {
        let sum = 0;
        for (let j = 0; j < H; j++) sum += dpre[r * H + j]! * p.wh[i * H + j]!;
        dh[r * H + i] = sum;
      }
    }
  }
  return { loss, grads };
}
