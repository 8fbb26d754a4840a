// LU factorization with partial pivoting and the solves from it, on row-major float64 arrays:
// the routines that solve, inv, det, lu, expm and the blocked solve's last step share, and the
// error linear-algebra kernels throw.

export class LinalgError extends RangeError {
  override name = 'LinalgError';
}

/**
 * LU factorization with partial pivoting of the m x n row-major `a`, in place (L's multipliers
 * below the diagonal, U on and above); `piv[k]` the row swapped with row k, for k < min(m, n).
 * Returns the sign of the permutation, or 0 when a pivot is exactly 0 and `stopAtZero` (a
 * singular square matrix); without it a zero column is skipped (no swap, no elimination), as
 * LAPACK's getrf does.
 */
export function luFactor(a: Float64Array, m: number, n: number, piv: Int32Array, stopAtZero = true): number {
  let sign = 1;
  for (let k = 0; k < Math.min(m, n); k++) {
    let p = k;
    let best = Math.abs(a[k * n + k]!);
    for (let i = k + 1; i < m; i++) {
      const v = Math.abs(a[i * n + k]!);
      if (v > best) [best, p] = [v, i];
    }
    piv[k] = p;
    if (best === 0 || best !== best) {
      if (stopAtZero) return 0;
      continue;
    }
    if (p !== k) {
      sign = -sign;
      for (let j = 0; j < n; j++) [a[k * n + j], a[p * n + j]] = [a[p * n + j]!, a[k * n + j]!];
    }
    const d = a[k * n + k]!;
    for (let i = k + 1; i < m; i++) {
      const f = (a[i * n + k]! /= d);
      if (f === 0) continue;
      for (let j = k + 1; j < n; j++) a[i * n + j]! -= f * a[k * n + j]!;
    }
  }
  return sign;
}

/** Solves (LU) X = P B for the n x m row-major `b`, in place. */
export function luSolve(a: Float64Array, n: number, piv: Int32Array, b: Float64Array, m: number): void {
  for (let k = 0; k < n; k++) {
    const p = piv[k]!;
    if (p !== k) for (let j = 0; j < m; j++) [b[k * m + j], b[p * m + j]] = [b[p * m + j]!, b[k * m + j]!];
  }
  for (let i = 0; i < n; i++) for (let k = 0; k < i; k++) {
    const f = a[i * n + k]!;
    if (f !== 0) for (let j = 0; j < m; j++) b[i * m + j]! -= f * b[k * m + j]!;
  }
  for (let i = n - 1; i >= 0; i--) {
    for (let k = i + 1; k < n; k++) {
      const f = a[i * n + k]!;
      if (f !== 0) for (let j = 0; j < m; j++) b[i * m + j]! -= f * b[k * m + j]!;
    }
    const d = a[i * n + i]!;
    for (let j = 0; j < m; j++) b[i * m + j]! /= d;
  }
}
