// Matrix decompositions, batched over leading axes like the other linear-algebra kernels: QR by
// Householder reflections (LAPACK's sign convention, so R matches NumPy's), the symmetric
// eigendecomposition by cyclic Jacobi rotations, the SVD by one-sided Jacobi (Hestenes), LU with
// partial pivoting as P, L, U, and expm by Pade 13 with scaling and squaring (Higham 2005).
// Jacobi methods are slower than LAPACK's QR iterations for large n but accurate to a few ulp
// in every eigenvalue and singular value, small ones included. Work is float64 throughout.
import { luFactor, luSolve } from './lu.js';
import { batchOf, loadMatrix, matricesOf, storeItem, WorkArray } from './matrix-batch.js';
import { registerKernel } from './registry.js';
import type { Range, TensorView } from './view.js';

const EPS = 2 ** -52;
const input = new WorkArray();
const left = new WorkArray();
const right = new WorkArray();
const values = new WorkArray();

/** The matrices of `a`'s batch that this task computes (the first output's axis 0 is the batch's first axis, when batched). */
function matricesFor(a: TensorView, firstOut: TensorView, range: Range | undefined): Range {
  return matricesOf(batchOf(a), a.shape.length > 2 ? firstOut.shape[0]! : 1, range);
}

/** Row and column counts of the matrices of `a`. */
const dims = (a: TensorView): [number, number] => [a.shape[a.shape.length - 2]!, a.shape[a.shape.length - 1]!];

// ---- QR ---------------------------------------------------------------------------------------

/**
 * Householder QR of the m x n row-major `a` in place: R on and above the diagonal, reflector k's
 * vector below it (its first component 1 implied); tau[k] its factor (H = I - tau v v^T).
 */
function householderQr(a: Float64Array, m: number, n: number, tau: Float64Array): void {
  for (let k = 0; k < Math.min(m, n); k++) {
    let norm2 = 0;
    for (let i = k + 1; i < m; i++) norm2 += a[i * n + k]! ** 2;
    const alpha = a[k * n + k]!;
    if (norm2 === 0) {
      tau[k] = 0;
      continue;
    }
    const beta = -Math.sign(alpha || 1) * Math.hypot(alpha, Math.sqrt(norm2));
    tau[k] = (beta - alpha) / beta;
    const scale = 1 / (alpha - beta);
    for (let i = k + 1; i < m; i++) a[i * n + k]! *= scale;
    a[k * n + k] = beta;
    for (let j = k + 1; j < n; j++) {
      let dot = a[k * n + j]!;
      for (let i = k + 1; i < m; i++) dot += a[i * n + k]! * a[i * n + j]!;
      const f = tau[k]! * dot;
      a[k * n + j]! -= f;
      for (let i = k + 1; i < m; i++) a[i * n + j]! -= f * a[i * n + k]!;
    }
  }
}

/** Q's first `cols` columns (m x cols, row-major, into `q`) from the reflectors in `a`. */
function formQ(a: Float64Array, m: number, n: number, tau: Float64Array, q: Float64Array, cols: number): void {
  q.fill(0, 0, m * cols);
  for (let i = 0; i < Math.min(m, cols); i++) q[i * cols + i] = 1;
  for (let k = Math.min(m, n) - 1; k >= 0; k--) {
    const t = tau[k]!;
    if (t === 0) continue;
    for (let j = 0; j < cols; j++) {
      let dot = q[k * cols + j]!;
      for (let i = k + 1; i < m; i++) dot += a[i * n + k]! * q[i * cols + j]!;
      const f = t * dot;
      q[k * cols + j]! -= f;
      for (let i = k + 1; i < m; i++) q[i * cols + j]! -= f * a[i * n + k]!;
    }
  }
}

export type QrMode = 'reduced' | 'complete' | 'r';

/** qr: outputs [Q, R] (reduced: m x k and k x n; complete: m x m and m x n) or [R] (mode 'r', k x n). */
registerKernel('qr', ([a], outs, params, range) => {
  const mode = params['mode'] as QrMode;
  const [m, n] = dims(a!);
  const k = Math.min(m, n);
  const rRows = mode === 'complete' ? m : k;
  const qCols = mode === 'complete' ? m : k;
  const r = outs[mode === 'r' ? 0 : 1]!;
  const { start, end } = matricesFor(a!, outs[0]!, range);
  const work = input.get(m * n);
  const tau = values.get(k);
  for (let b = start; b < end; b++) {
    loadMatrix(a!, b, work, m, n);
    householderQr(work, m, n, tau);
    const o = r.offset + b * rRows * n;
    for (let i = 0; i < rRows; i++) for (let j = 0; j < n; j++) r.data[o + i * n + j] = j >= i ? work[i * n + j]! : 0;
    if (mode === 'r') continue;
    const q = left.get(m * qCols);
    formQ(work, m, n, tau, q, qCols);
    storeItem(outs[0]!, b, q, m * qCols);
  }
});

// ---- Symmetric eigendecomposition ---------------------------------------------------------------

/**
 * The Jacobi rotation (c, s) for the ratio x of a 2 x 2 problem: t = tan(theta), the smaller
 * root of t^2 + 2 x t - 1 (Golub and Van Loan's sym.schur2), c = cos(theta), s = sin(theta).
 */
function jacobiRotation(x: number): [number, number] {
  const t = Math.sign(x || 1) / (Math.abs(x) + Math.sqrt(x * x + 1));
  const c = 1 / Math.sqrt(t * t + 1);
  return [c, t * c];
}

/** Columns p and q of the rows x cols row-major `m` rotated by (c, s): [p, q] := [c p - s q, s p + c q]. */
function rotateColumns(m: Float64Array, rows: number, cols: number, p: number, q: number, c: number, s: number): void {
  for (let i = 0; i < rows; i++) {
    const x = m[i * cols + p]!;
    const y = m[i * cols + q]!;
    m[i * cols + p] = c * x - s * y;
    m[i * cols + q] = s * x + c * y;
  }
}

/**
 * Cyclic Jacobi on the symmetric n x n `a` (destroyed): eigenvalues into `w`, eigenvectors as
 * the columns of `v` (n x n, row-major), unsorted. Sweeps until no off-diagonal element matters
 * against its diagonal pair (at most 60; quadratic convergence makes 6-10 typical).
 */
function jacobiEigen(a: Float64Array, n: number, w: Float64Array, v: Float64Array): void {
  v.fill(0, 0, n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  for (let sweep = 0; sweep < 60; sweep++) {
    let rotated = false;
    for (let p = 0; p < n - 1; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q]!;
        if (apq === 0) continue;
        const app = a[p * n + p]!;
        const aqq = a[q * n + q]!;
        if (Math.abs(apq) <= EPS * 0.5 * Math.sqrt(Math.abs(app * aqq))) {
          a[p * n + q] = a[q * n + p] = 0;
          continue;
        }
        rotated = true;
        // The rotation that zeroes a[p][q]: A J on the columns, J^T (A J) on the rows, V J.
        const [c, s] = jacobiRotation((aqq - app) / (2 * apq));
        rotateColumns(a, n, n, p, q, c, s);
        for (let k = 0; k < n; k++) {
          const apk = a[p * n + k]!;
          const aqk = a[q * n + k]!;
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        a[p * n + q] = a[q * n + p] = 0;
        rotateColumns(v, n, n, p, q, c, s);
      }
    }
    if (!rotated) break;
  }
  for (let i = 0; i < n; i++) w[i] = a[i * n + i]!;
}

/**
 * The order that sorts `key` (ascending, or descending), and column signs that make each
 * column's largest-magnitude component (the first such) positive: a convention of weft's, since
 * eigenvectors and singular vectors are defined up to sign.
 */
function sortedOrder(key: Float64Array, count: number, descending: boolean): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  order.sort((x, y) => (descending ? key[y]! - key[x]! : key[x]! - key[y]!) || x - y);
  return order;
}

/** The sign (+1 or -1) that makes column j of the rows x cols row-major `m` have its largest-magnitude component positive. */
function columnSign(m: Float64Array, rows: number, cols: number, j: number): number {
  let best = 0;
  for (let i = 0; i < rows; i++) if (Math.abs(m[i * cols + j]!) > Math.abs(best)) best = m[i * cols + j]!;
  return best < 0 ? -1 : 1;
}

/** eigh: outputs [w (ascending), v (eigenvectors as columns)] of the symmetric matrix read from one triangle. */
registerKernel('eigh', ([a], [w, v], params, range) => {
  const lower = params['lower'] as boolean;
  const [n] = dims(a!);
  const { start, end } = matricesFor(a!, w!, range);
  const work = input.get(n * n);
  const vecs = left.get(n * n);
  const vals = values.get(n);
  for (let b = start; b < end; b++) {
    loadMatrix(a!, b, work, n, n);
    for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) {
      if (lower) work[j * n + i] = work[i * n + j]!;
      else work[i * n + j] = work[j * n + i]!;
    }
    jacobiEigen(work, n, vals, vecs);
    const order = sortedOrder(vals, n, false);
    const wo = w!.offset + b * n;
    const vo = v!.offset + b * n * n;
    order.forEach((src, j) => {
      w!.data[wo + j] = vals[src]!;
      const sign = columnSign(vecs, n, n, src);
      for (let i = 0; i < n; i++) v!.data[vo + i * n + j] = sign * vecs[i * n + src]!;
    });
  }
});

// ---- SVD -------------------------------------------------------------------------------------

/**
 * One-sided Jacobi on the m x n row-major `u` (m >= n), in place: its columns become orthogonal
 * (U S), and `v` (n x n) accumulates the rotations, so that the input equals u v^T.
 */
function oneSidedJacobi(u: Float64Array, m: number, n: number, v: Float64Array): void {
  v.fill(0, 0, n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  for (let sweep = 0; sweep < 60; sweep++) {
    let rotated = false;
    for (let p = 0; p < n - 1; p++) {
      for (let q = p + 1; q < n; q++) {
        let alpha = 0;
        let beta = 0;
        let gamma = 0;
        for (let i = 0; i < m; i++) {
          const x = u[i * n + p]!;
          const y = u[i * n + q]!;
          alpha += x * x;
          beta += y * y;
          gamma += x * y;
        }
        if (gamma === 0 || Math.abs(gamma) <= EPS * Math.sqrt(alpha * beta)) continue;
        rotated = true;
        const [c, s] = jacobiRotation((beta - alpha) / (2 * gamma));
        rotateColumns(u, m, n, p, q, c, s);
        rotateColumns(v, n, n, p, q, c, s);
      }
    }
    if (!rotated) break;
  }
}

/**
 * Makes the first `have` columns of the rows x cols row-major `q` (orthonormal) into `want`
 * orthonormal columns: each missing column is the first unit vector left after Gram-Schmidt
 * (twice, for orthogonality to working precision) against the columns so far.
 */
function completeColumns(q: Float64Array, rows: number, cols: number, have: readonly number[], missing: readonly number[]): void {
  const done = [...have];
  let candidate = 0;
  for (const j of missing) {
    for (; candidate < rows; candidate++) {
      for (let i = 0; i < rows; i++) q[i * cols + j] = i === candidate ? 1 : 0;
      for (let pass = 0; pass < 2; pass++) {
        for (const d of done) {
          let dot = 0;
          for (let i = 0; i < rows; i++) dot += q[i * cols + d]! * q[i * cols + j]!;
          for (let i = 0; i < rows; i++) q[i * cols + j]! -= dot * q[i * cols + d]!;
        }
      }
      let norm = 0;
      for (let i = 0; i < rows; i++) norm += q[i * cols + j]! ** 2;
      norm = Math.sqrt(norm);
      if (norm > 0.5) {
        for (let i = 0; i < rows; i++) q[i * cols + j]! /= norm;
        candidate++;
        break;
      }
    }
    done.push(j);
  }
}

/** One SVD, row-major: U (m x uCols), s (k, descending), Vh (vhRows x n). */
interface Factors {
  readonly u: Float64Array;
  readonly s: Float64Array;
  readonly vh: Float64Array;
  readonly uCols: number;
  readonly vhRows: number;
}

const uArray = new WorkArray();
const vhArray = new WorkArray();
const pinvArray = new WorkArray();

/**
 * The SVD of matrix b of `a` (m x n): s descending, and with `computeUv` U and Vh (full or
 * reduced). The tall one of A and A^T is decomposed by one-sided Jacobi: tall = W S Z^T.
 */
function decompose(a: TensorView, b: number, fullMatrices: boolean, computeUv: boolean): Factors {
  const [m, n] = dims(a);
  const wide = m < n;
  const [big, small] = wide ? [n, m] : [m, n];
  const k = small;
  const bigCols = fullMatrices ? big : k;
  const [uCols, vhRows] = [fullMatrices ? m : k, fullMatrices ? n : k];
  const w = left.get(big * bigCols);
  const z = right.get(small * small);
  const tall = input.get(big * small);
  const sv = values.get(2 * small);
  const s = sv.subarray(small, 2 * small);
  const u = uArray.get(m * uCols);
  const vh = vhArray.get(vhRows * n);
  loadMatrix(a, b, tall, m, n);
  if (wide) transposeInPlace(tall, m, n, w);
  oneSidedJacobi(tall, big, small, z);
  for (let j = 0; j < small; j++) {
    let norm = 0;
    for (let i = 0; i < big; i++) norm += tall[i * small + j]! ** 2;
    sv[j] = Math.sqrt(norm);
  }
  const order = sortedOrder(sv, small, true);
  order.forEach((src, j) => (s[j] = sv[src]!));
  if (!computeUv) return { u, s, vh, uCols, vhRows };
  // W's columns (the tall matrix's left vectors) normalized and sorted; those of zero singular values completed.
  w.fill(0, 0, big * bigCols);
  const have: number[] = [];
  const missing: number[] = [];
  const tiny = (s[0] ?? 0) * EPS * big;
  order.forEach((src, j) => {
    const sj = sv[src]!;
    if (!(sj > tiny)) return missing.push(j);
    for (let i = 0; i < big; i++) w[i * bigCols + j] = tall[i * small + src]! / sj;
    have.push(j);
  });
  for (let j = k; j < bigCols; j++) missing.push(j);
  completeColumns(w, big, bigCols, have, missing);
  // Signs: the largest component of each right singular vector (Z's columns; W's when wide) positive.
  for (let j = 0; j < bigCols; j++) {
    const src = j < k ? order[j]! : -1;
    const sign = j < k ? (wide ? columnSign(w, big, bigCols, j) : columnSign(z, small, small, src)) : 1;
    for (let i = 0; i < big; i++) {
      const x = sign * w[i * bigCols + j]!;
      if (wide) vh[j * n + i] = x;
      else u[i * uCols + j] = x;
    }
    if (j >= k) continue;
    for (let i = 0; i < small; i++) {
      const x = sign * z[i * small + src]!;
      if (wide) u[i * uCols + j] = x;
      else vh[j * n + i] = x;
    }
  }
  return { u, s, vh, uCols, vhRows };
}

/**
 * svd: outputs [U, s, Vh] (U m x m or m x k, Vh n x n or k x n, with fullMatrices or not) or
 * [s] (without computeUv); s descending.
 */
registerKernel('svd', ([a], outs, params, range) => {
  const fullMatrices = params['fullMatrices'] as boolean;
  const computeUv = params['computeUv'] as boolean;
  const [m, n] = dims(a!);
  const k = Math.min(m, n);
  const { start, end } = matricesFor(a!, outs[0]!, range);
  for (let b = start; b < end; b++) {
    const f = decompose(a!, b, fullMatrices, computeUv);
    storeItem(outs[computeUv ? 1 : 0]!, b, f.s, k);
    if (!computeUv) continue;
    storeItem(outs[0]!, b, f.u, m * f.uCols);
    storeItem(outs[2]!, b, f.vh, f.vhRows * n);
  }
});

/** pinv: the pseudo-inverse (n x m) V diag(1 / s) U^T of each matrix, singular values at most rcond * max(s) (times max(m, n) with timesLength, lstsq's cutoff) taken as zero. */
registerKernel('pinv', ([a], [out], params, range) => {
  const [m, n] = dims(a!);
  const rcond = (params['rcond'] as number) * (params['timesLength'] ? Math.max(m, n) : 1);
  const k = Math.min(m, n);
  const { start, end } = matricesFor(a!, out!, range);
  for (let b = start; b < end; b++) {
    const { u, s, vh } = decompose(a!, b, false, true);
    const cutoff = rcond * (s[0] ?? 0);
    const z = pinvArray.get(n * m);
    z.fill(0, 0, n * m);
    for (let j = 0; j < k; j++) {
      if (!(s[j]! > cutoff)) continue;
      const inv = 1 / s[j]!;
      for (let i = 0; i < n; i++) {
        const f = vh[j * n + i]! * inv;
        if (f !== 0) for (let c = 0; c < m; c++) z[i * m + c]! += f * u[c * k + j]!;
      }
    }
    storeItem(out!, b, z, n * m);
  }
});

/** The m x n row-major `a` transposed (n x m) in place, through `scratch`. */
function transposeInPlace(a: Float64Array, m: number, n: number, scratch: Float64Array): void {
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) scratch[j * m + i] = a[i * n + j]!;
  for (let k = 0; k < m * n; k++) a[k] = scratch[k]!;
}

// ---- LU ----------------------------------------------------------------------------------------

/** luDecomposition: outputs [P (m x m), L (m x k, unit lower), U (k x n)] with A = P L U, as SciPy's lu. */
registerKernel('luDecomposition', ([a], [p, l, u], _params, range) => {
  const [m, n] = dims(a!);
  const k = Math.min(m, n);
  const { start, end } = matricesFor(a!, p!, range);
  const work = input.get(m * n);
  const piv = new Int32Array(k);
  const rows = new Int32Array(m);
  for (let b = start; b < end; b++) {
    loadMatrix(a!, b, work, m, n);
    luFactor(work, m, n, piv, false);
    // rows[i]: the row of A that the factored row i came from.
    for (let i = 0; i < m; i++) rows[i] = i;
    for (let i = 0; i < k; i++) [rows[i], rows[piv[i]!]] = [rows[piv[i]!]!, rows[i]!];
    const po = p!.offset + b * m * m;
    for (let i = 0; i < m * m; i++) p!.data[po + i] = 0;
    for (let i = 0; i < m; i++) p!.data[po + rows[i]! * m + i] = 1;
    const lo = l!.offset + b * m * k;
    for (let i = 0; i < m; i++) for (let j = 0; j < k; j++) l!.data[lo + i * k + j] = j < i ? work[i * n + j]! : j === i ? 1 : 0;
    const uo = u!.offset + b * k * n;
    for (let i = 0; i < k; i++) for (let j = 0; j < n; j++) u!.data[uo + i * n + j] = j >= i ? work[i * n + j]! : 0;
  }
});

// ---- expm --------------------------------------------------------------------------------------

/** Pade 13's coefficients (Higham 2005, table 2.3's b_0 .. b_13). */
const PADE13 = [
  64764752532480000, 32382376266240000, 7771770303897600, 1187353796428800, 129060195264000, 10559470521600, 670442572800, 33522128640, 1323241920, 40840800, 960960,
  16380, 182, 1,
];
/** The largest 1-norm for which Pade 13 alone is accurate to double precision (theta_13). */
const THETA13 = 5.371920351148152;

/** c = a b (n x n row-major). */
function matrixProduct(a: Float64Array, b: Float64Array, c: Float64Array, n: number): void {
  c.fill(0, 0, n * n);
  for (let i = 0; i < n; i++) for (let k = 0; k < n; k++) {
    const f = a[i * n + k]!;
    if (f !== 0) for (let j = 0; j < n; j++) c[i * n + j]! += f * b[k * n + j]!;
  }
}

/** expm: the matrix exponential of each square matrix (Pade 13, scaled by 2^-s so that its 1-norm is at most theta_13, then squared s times). */
registerKernel('expm', ([a], [out], _params, range) => {
  const [n] = dims(a!);
  const { start, end } = matricesFor(a!, out!, range);
  const nn = n * n;
  // Scratch: A, A^2, A^4, A^6, U, V, and a product buffer, n x n each.
  const buf = input.get(7 * nn);
  const [A, A2, A4, A6, U, V, T] = Array.from({ length: 7 }, (_, i) => buf.subarray(i * nn, (i + 1) * nn));
  const piv = new Int32Array(n);
  for (let b = start; b < end; b++) {
    loadMatrix(a!, b, A!, n, n);
    let norm = 0;
    for (let j = 0; j < n; j++) {
      let col = 0;
      for (let i = 0; i < n; i++) col += Math.abs(A![i * n + j]!);
      norm = Math.max(norm, col);
    }
    const squarings = norm > THETA13 ? Math.ceil(Math.log2(norm / THETA13)) : 0;
    if (squarings > 0) for (let i = 0; i < nn; i++) A![i]! /= 2 ** squarings;
    matrixProduct(A!, A!, A2!, n);
    matrixProduct(A2!, A2!, A4!, n);
    matrixProduct(A2!, A4!, A6!, n);
    const c = PADE13;
    // U = A [A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I]
    for (let i = 0; i < nn; i++) T![i] = c[13]! * A6![i]! + c[11]! * A4![i]! + c[9]! * A2![i]!;
    matrixProduct(A6!, T!, U!, n);
    for (let i = 0; i < nn; i++) U![i]! += c[7]! * A6![i]! + c[5]! * A4![i]! + c[3]! * A2![i]!;
    for (let i = 0; i < n; i++) U![i * n + i]! += c[1]!;
    matrixProduct(A!, U!, T!, n);
    U!.set(T!);
    // V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I
    for (let i = 0; i < nn; i++) T![i] = c[12]! * A6![i]! + c[10]! * A4![i]! + c[8]! * A2![i]!;
    matrixProduct(A6!, T!, V!, n);
    for (let i = 0; i < nn; i++) V![i]! += c[6]! * A6![i]! + c[4]! * A4![i]! + c[2]! * A2![i]!;
    for (let i = 0; i < n; i++) V![i * n + i]! += c[0]!;
    // (V - U) X = (V + U), by LU of V - U (A2 and A4 reused as its factor and the right-hand side).
    for (let i = 0; i < nn; i++) {
      A2![i] = V![i]! - U![i]!;
      A4![i] = V![i]! + U![i]!;
    }
    luFactor(A2!, n, n, piv);
    luSolve(A2!, n, piv, A4!, n);
    let x = A4!;
    let y = T!;
    for (let s = 0; s < squarings; s++) {
      matrixProduct(x, x, y, n);
      [x, y] = [y, x];
    }
    storeItem(out!, b, x, nn);
  }
});
