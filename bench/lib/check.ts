// Agreement checks before timing: a system's numbers against an independent float64 reference.
// Float32 systems round each operation (weft accumulates float32 products in float64, the peers
// mostly in float32), so the tolerance is relative, with a floor scaled to the data's magnitude
// so that values near zero (after cancellation) are judged against the typical size.

export interface CheckResult {
  readonly ok: boolean;
  /** The largest error in units of the tolerance (ok when <= 1). */
  readonly worst: number;
  readonly detail: string;
}

export interface Tolerance {
  /** Relative tolerance. */
  readonly rtol: number;
  /** Absolute floor as a fraction of the reference's root mean square (default: rtol). */
  readonly floor?: number;
}

type Numbers = ArrayLike<number>;

function rms(xs: Numbers): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i]! * xs[i]!;
  return Math.sqrt(s / Math.max(1, xs.length));
}

/** Compares `got` with `want` element by element: |got - want| <= max(rtol * |want|, floor * rms(want)). */
export function compare(what: string, got: Numbers, want: Numbers, tol: Tolerance): CheckResult {
  if (got.length !== want.length) {
    return { ok: false, worst: Infinity, detail: `${what}: ${got.length} values, expected ${want.length}` };
  }
  const floor = (tol.floor ?? tol.rtol) * rms(want);
  let worst = 0;
  let at = -1;
  for (let i = 0; i < want.length; i++) {
    const g = got[i]!;
    const w = want[i]!;
    const err = Math.abs(g - w) / Math.max(tol.rtol * Math.abs(w), floor, Number.MIN_VALUE);
    if (!(err <= worst)) {
      worst = Number.isNaN(err) ? Infinity : err;
      at = i;
    }
  }
  const ok = worst <= 1;
  const where = at >= 0 ? ` (worst at [${at}]: ${got[at]} vs ${want[at]})` : '';
  return { ok, worst, detail: `${what}: max error ${worst.toFixed(3)} x tolerance (rtol ${tol.rtol})${where}` };
}

/** All of `results` must hold; the worst one is reported. */
export function all(results: readonly CheckResult[]): CheckResult {
  const worst = results.reduce((a, b) => (b.worst > a.worst || !b.ok ? b : a));
  return { ok: results.every((r) => r.ok), worst: worst.worst, detail: results.filter((r) => !r.ok).map((r) => r.detail).join('; ') || worst.detail };
}

/** Sampled entries of a matrix product checked against float64 sums of the same factors. */
export function compareProduct(
  what: string,
  got: Numbers,
  a: Numbers,
  b: Numbers,
  n: number,
  samples: number,
  rtol: number,
): CheckResult {
  let worst = 0;
  let detail = '';
  for (let s = 0; s < samples; s++) {
    // A fixed scatter of positions (a multiplicative hash), the corners included.
    const i = s === 0 ? 0 : s === 1 ? n - 1 : (s * 2654435761) % n;
    const j = s === 0 ? 0 : s === 1 ? n - 1 : (s * 40503 + 17) % n;
    let sum = 0;
    let magnitude = 0;
    for (let p = 0; p < n; p++) {
      const t = a[i * n + p]! * b[p * n + j]!;
      sum += t;
      magnitude += Math.abs(t);
    }
    // Rounding error of a float32 dot product grows with the sum of the terms' magnitudes.
    const err = Math.abs(got[i * n + j]! - sum) / (rtol * magnitude);
    if (!(err <= worst)) {
      worst = Number.isNaN(err) ? Infinity : err;
      detail = ` (worst at [${i}, ${j}]: ${got[i * n + j]} vs ${sum})`;
    }
  }
  return { ok: worst <= 1, worst, detail: `${what}: max error ${worst.toFixed(3)} x tolerance (rtol ${rtol} of sum |a b|, ${samples} sampled entries)${detail}` };
}
