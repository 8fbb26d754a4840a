// The regularized incomplete gamma functions P(k, x), Q(k, x) and their derivatives with respect
// to k, and the derivatives of the regularized incomplete beta function I_x(a, b) with respect to
// a and b. The classical expansions (the power series of P below x = k + 1, Legendre's continued
// fraction of Q above it; the continued fraction of I_x(a, b) on the side of x where it
// converges) are evaluated with forward-mode derivatives carried through every step, as Boik
// and Robison-Cox do for the beta function: the derivative is that of the very expansion that
// gives the value, with no division by x or by a parameter that could vanish.
import { digamma as psi, gammaln } from './stdlib.js';

const EPS = 1e-16;
const TINY = 1e-300;
const MAX_STEPS = 100_000;

/** log1p(t) - t for |t| <= 1/2, without the cancellation of the plain formula for small t. */
function log1pmx(t: number): number {
  // -t^2/2 + t^3/3 - t^4/4 + ...: term n is (-1)^(n+1) t^n.
  let term = t;
  let sum = 0;
  for (let n = 2; n < 200; n++) {
    term *= -t;
    const add = term / n;
    sum += add;
    if (Math.abs(add) <= Math.abs(sum) * EPS) break;
  }
  return sum;
}

/** log(gamma(k)) - ((k - 1/2) log k - k + log(2 pi) / 2), Stirling's remainder, for k >= 10. */
function stirlingRemainder(k: number): number {
  const r = 1 / (k * k);
  return (1 / k) * (1 / 12 - r * (1 / 360 - r * (1 / 1260 - r * (1 / 1680 - r * (1 / 1188 - r * (691 / 360360 - r / 156))))));
}

/**
 * log(x^k e^-x / gamma(k)), the prefactor of P and Q. For k >= 10 it is written around x = k
 * (k log1pmx(x/k - 1) plus Stirling's series), where the plain sum of logs loses k log k digits.
 */
function logPrefactor(k: number, x: number): number {
  if (k < 10) return k * Math.log(x) - x - gammaln(k);
  // log(x / k) - (x / k - 1); far from x = k, log(x / k) itself (1 + t would lose x / k's digits).
  const t = (x - k) / k;
  const around = Math.abs(t) > 0.5 ? Math.log(x / k) - t : log1pmx(t);
  return k * around + 0.5 * Math.log(k / (2 * Math.PI)) - stirlingRemainder(k);
}

/** [value, d/dk] of the sum of P's power series, sum over n of x^n / (k (k+1) ... (k+n)). */
function gammaSeries(k: number, x: number): [number, number] {
  let term = 1 / k;
  let dterm = -1 / (k * k);
  let sum = term;
  let dsum = dterm;
  for (let n = 1; n < MAX_STEPS; n++) {
    const q = x / (k + n);
    dterm = dterm * q - (term * q) / (k + n);
    term *= q;
    sum += term;
    dsum += dterm;
    if (Math.abs(term) <= Math.abs(sum) * EPS && Math.abs(dterm) <= Math.abs(dsum) * EPS) break;
  }
  return [sum, dsum];
}

/** [value, d/dk] of Legendre's continued fraction of Q, by the modified Lentz method. */
function gammaFraction(k: number, x: number): [number, number] {
  // b_i = x + 2i + 1 - k, a_i = -i (i - k): db/dk = -1, da_i/dk = i.
  let b = x + 1 - k;
  const db = -1;
  let c = 1 / TINY;
  let dc = 0;
  let d = 1 / b;
  let dd = -db / (b * b);
  let h = d;
  let dh = dd;
  for (let i = 1; i < MAX_STEPS; i++) {
    const an = -i * (i - k);
    const dan = i;
    b += 2;
    // d = 1 / (an d + b), c = b + an / c, with their derivatives.
    let den = an * d + b;
    let dden = dan * d + an * dd + db;
    if (Math.abs(den) < TINY) den = TINY;
    d = 1 / den;
    dd = -dden / (den * den);
    const cNew = b + an / c;
    dc = db + dan / c - (an * dc) / (c * c);
    c = Math.abs(cNew) < TINY ? TINY : cNew;
    const delta = d * c;
    const ddelta = dd * c + d * dc;
    dh = dh * delta + h * ddelta;
    h *= delta;
    if (Math.abs(delta - 1) <= EPS && Math.abs(ddelta) <= Math.abs(dh) * EPS) break;
  }
  return [h, dh];
}

/** [P, Q, dP/dk] for k >= 0, x >= 0 (not NaN), not both 0; SciPy's limits at k = 0 and the infinities. */
function incompleteGamma(k: number, x: number): [number, number, number] {
  if (x === 0) return [0, 1, 0];
  if (k === 0 || x === Infinity) return [1, 0, 0];
  if (k === Infinity) return [0, 1, 0];
  const logPre = logPrefactor(k, x);
  const pre = Math.exp(logPre);
  // d(log prefactor)/dk = log x - psi(k).
  const dLogPre = Math.log(x) - psi(k);
  if (x < k + 1) {
    const [s, ds] = gammaSeries(k, x);
    const p = pre * s;
    return [p, 1 - p, pre * (dLogPre * s + ds)];
  }
  const [h, dh] = gammaFraction(k, x);
  const q = pre * h;
  return [1 - q, q, -pre * (dLogPre * h + dh)];
}

/** P(k, x), scipy's gammainc. */
/** k and x where P and Q are defined: k, x >= 0 and not both 0. */
const inDomain = (k: number, x: number): boolean => k >= 0 && x >= 0 && !(k === 0 && x === 0);

export function gammainc(k: number, x: number): number {
  if (!inDomain(k, x)) return NaN;
  return incompleteGamma(k, x)[0];
}

/** Q(k, x) = 1 - P(k, x), scipy's gammaincc. */
export function gammaincc(k: number, x: number): number {
  if (!inDomain(k, x)) return NaN;
  return incompleteGamma(k, x)[1];
}

/** dP(k, x)/dk (the negative of dQ/dk). */
export function gammaincDk(k: number, x: number): number {
  if (!(k > 0) || !(x >= 0)) return NaN;
  if (k === Infinity) return 0;
  return incompleteGamma(k, x)[2];
}

/**
 * [h, dh/da, dh/db] of the continued fraction of I_x(a, b) = front * h, front = x^a (1-x)^b /
 * (a B(a, b)) (modified Lentz), for x < (a + 1) / (a + b + 2), where it converges quickly.
 */
function betaFraction(a: number, b: number, x: number): [number, number, number] {
  // Values with their two derivatives, as [v, da, db].
  type D = [number, number, number];
  const mul = (p: D, q: D): D => [p[0] * q[0], p[1] * q[0] + p[0] * q[1], p[2] * q[0] + p[0] * q[2]];
  const inv = (p: D): D => {
    const v = Math.abs(p[0]) < TINY ? TINY : p[0];
    return [1 / v, -p[1] / (v * v), -p[2] / (v * v)];
  };
  const plus1 = (p: D): D => [1 + p[0], p[1], p[2]];
  let c: D = [1, 0, 0];
  // d = 1 / (1 - (a + b) x / (a + 1)).
  const r = (a + b) / (a + 1);
  let d = inv([1 - r * x, -x * ((a + 1) - (a + b)) / ((a + 1) * (a + 1)), -x / (a + 1)]);
  let h: D = d;
  for (let m = 1; m < MAX_STEPS; m++) {
    const m2 = 2 * m;
    // Even step: m (b - m) x / ((a + 2m - 1) (a + 2m)).
    const pe = a + m2 - 1;
    const qe = a + m2;
    const even = (m * (b - m) * x) / (pe * qe);
    const evenTerm: D = [even, -even * (1 / pe + 1 / qe), (m * x) / (pe * qe)];
    d = inv(plus1(mul(evenTerm, d)));
    c = plus1(mul(evenTerm, inv(c)));
    h = mul(h, mul(d, c));
    // Odd step: -(a + m) (a + b + m) x / ((a + 2m) (a + 2m + 1)).
    const po = a + m2;
    const qo = a + m2 + 1;
    const odd = (-(a + m) * (a + b + m) * x) / (po * qo);
    const oddTerm: D = [
      odd,
      (-x * ((a + b + m) + (a + m))) / (po * qo) - odd * (1 / po + 1 / qo),
      (-(a + m) * x) / (po * qo),
    ];
    d = inv(plus1(mul(oddTerm, d)));
    c = plus1(mul(oddTerm, inv(c)));
    const delta = mul(d, c);
    h = mul(h, delta);
    if (Math.abs(delta[0] - 1) <= EPS && Math.abs(delta[1]) <= EPS * Math.abs(h[1]) + TINY && Math.abs(delta[2]) <= EPS * Math.abs(h[2]) + TINY) break;
  }
  return h;
}

/** [dI/da, dI/db] on the side of x where the fraction converges (no symmetry applied). */
function betaDerivativesDirect(a: number, b: number, x: number): [number, number] {
  const ab = psi(a + b);
  const logFront = a * Math.log(x) + b * Math.log1p(-x) - Math.log(a) - (gammaln(a) + gammaln(b) - gammaln(a + b));
  const front = Math.exp(logFront);
  const [h, ha, hb] = betaFraction(a, b, x);
  const dLa = ab - psi(a) + Math.log(x) - 1 / a;
  const dLb = ab - psi(b) + Math.log1p(-x);
  return [front * (dLa * h + ha), front * (dLb * h + hb)];
}

/** [dI_x(a, b)/da, dI_x(a, b)/db]. */
function betaDerivatives(a: number, b: number, x: number): [number, number] {
  if (!(a > 0 && b > 0) || !(x >= 0 && x <= 1)) return [NaN, NaN];
  if (x === 0 || x === 1) return [0, 0];
  if (x < (a + 1) / (a + b + 2)) return betaDerivativesDirect(a, b, x);
  // I_x(a, b) = 1 - I_{1-x}(b, a).
  const [db, da] = betaDerivativesDirect(b, a, 1 - x);
  return [-da, -db];
}

export function betaincDa(a: number, b: number, x: number): number {
  return betaDerivatives(a, b, x)[0];
}

export function betaincDb(a: number, b: number, x: number): number {
  return betaDerivatives(a, b, x)[1];
}
