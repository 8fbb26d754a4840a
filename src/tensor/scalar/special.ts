// The scalar ops of pt.special (SciPy's special functions as PyTensor names them): element-wise,
// so they fuse; float32 in gives float32 out (computed in float64 and rounded once), integers
// give float64. Their code calls kernels/special-functions.ts (JS: they have no WebAssembly form,
// so a Composite holding one runs the JS loops). Gradients as PyTensor's, where it has them.
import { disconnected } from '../../graph/gradient.js';
import type { Variable } from '../../graph/variable.js';
import { isIntDtype, type Dtype } from '../../kernels/dtype.js';
import { constant } from '../core/as-tensor.js';
import type { TensorVariable } from '../core/variable.js';
import { elemwise } from '../elemwise/elemwise.js';
import * as m from '../elemwise/math.js';
import { ScalarOp, toFloat, type ScalarGrad } from './scalar-op.js';

const SQRT_PI_OVER_2 = Math.sqrt(Math.PI) / 2;
const TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);

function special(name: string, nin: number, grad?: ScalarGrad, extra: { checkInputs?: (ins: readonly Dtype[]) => string | undefined; libName?: string } = {}): ScalarOp {
  const fn = extra.libName ?? name;
  return new ScalarOp({ name, nin, outputDtype: toFloat, code: (args) => `L.${fn}(${args.join(', ')})`, grad, checkInputs: extra.checkInputs });
}

const ew = (op: ScalarOp, ...xs: TensorVariable[]): TensorVariable => elemwise(op, ...xs);

/** gz * f'(x) where x is 0 would give 0/0: `atZero` there instead (the limit). */
function withLimitAtZero(x: TensorVariable, value: TensorVariable, atZero: number): TensorVariable {
  return m.where(m.eq(x, 0), atZero, value);
}

export const gamma: ScalarOp = special('gamma', 1, ([x], z, gz) => [m.mul(gz, z, ew(psi, x!))]);
/** log|gamma(x)| (scipy's gammaln). */
export const gammaln: ScalarOp = special('gammaln', 1, ([x], _z, gz) => [m.mul(gz, ew(psi, x!))]);
/** The digamma function, gammaln's derivative. */
export const psi: ScalarOp = special('psi', 1, ([x], _z, gz) => [m.mul(gz, ew(polygamma, constant(1, { dtype: 'int32' }), x!))]);
/** The n-th derivative of psi; n is an integer (no gradient for it). */
export const polygamma: ScalarOp = special('polygamma', 2, ([n, x], _z, gz): Variable[] => [disconnected(), m.mul(gz, ew(polygamma, m.add(n!, 1), x!))], {
  checkInputs: ([n]) => (n !== undefined && !isIntDtype(n) ? `polygamma: the order n must be an integer tensor, got ${n}` : undefined),
});
export const erfinv: ScalarOp = special('erfinv', 1, (_i, z, gz) => [m.mul(gz, SQRT_PI_OVER_2, m.exp(m.sqr(z)))]);
export const erfcinv: ScalarOp = special('erfcinv', 1, (_i, z, gz) => [m.mul(gz, -SQRT_PI_OVER_2, m.exp(m.sqr(z)))]);
/** exp(x^2) erfc(x), without overflow or loss for large x. */
export const erfcx: ScalarOp = special('erfcx', 1, ([x], z, gz) => [m.mul(gz, m.sub(m.mul(2, x!, z), TWO_OVER_SQRT_PI))]);
/** log(B(a, b)). */
export const betaln: ScalarOp = special('betaln', 2, ([a, b], _z, gz) => {
  const both = ew(psi, m.add(a!, b!));
  return [m.mul(gz, m.sub(ew(psi, a!), both)), m.mul(gz, m.sub(ew(psi, b!), both))];
});
/** The regularized incomplete beta function I_x(a, b). */
export const betainc: ScalarOp = special('betainc', 3, ([a, b, x], _z, gz) => {
  // d/dx = x^(a-1) (1-x)^(b-1) / B(a, b), in logs.
  const logDensity = m.sub(m.add(m.mul(m.sub(a!, 1), m.log(x!)), m.mul(m.sub(b!, 1), m.log1p(m.neg(x!)))), ew(betaln, a!, b!));
  return [m.mul(gz, ew(betaincDa, a!, b!, x!)), m.mul(gz, ew(betaincDb, a!, b!, x!)), m.mul(gz, m.exp(logDensity))];
});
/** The regularized lower incomplete gamma function P(k, x). */
export const gammainc: ScalarOp = special('gammainc', 2, ([k, x], _z, gz) => [m.mul(gz, ew(gammaincDk, k!, x!)), m.mul(gz, gammaDensity(k!, x!))]);
/** The regularized upper incomplete gamma function Q(k, x) = 1 - P(k, x). */
export const gammaincc: ScalarOp = special('gammaincc', 2, ([k, x], _z, gz) => [m.neg(m.mul(gz, ew(gammaincDk, k!, x!))), m.neg(m.mul(gz, gammaDensity(k!, x!)))]);

/** x^(k-1) e^-x / gamma(k), dP/dx, in logs. */
function gammaDensity(k: TensorVariable, x: TensorVariable): TensorVariable {
  return m.exp(m.sub(m.sub(m.mul(m.sub(k, 1), m.log(x)), x), ew(gammaln, k)));
}

/** dP(k, x)/dk (PyTensor's GammaIncDer); no gradient of its own. */
export const gammaincDk: ScalarOp = special('gammaincDk', 2);
/** dI_x(a, b)/da and dI_x(a, b)/db (PyTensor's BetaIncDer); no gradients of their own. */
export const betaincDa: ScalarOp = special('betaincDa', 3);
export const betaincDb: ScalarOp = special('betaincDb', 3);

/** The modified Bessel functions of the first kind, orders 0 and 1, and their scaled forms e^-|x| I(x). */
export const i0: ScalarOp = special('i0', 1, ([x], _z, gz) => [m.mul(gz, ew(i1, x!))]);
export const i1: ScalarOp = special('i1', 1, ([x], z, gz) => [m.mul(gz, withLimitAtZero(x!, m.sub(ew(i0, x!), m.trueDiv(z, x!)), 0.5))]);
export const i0e: ScalarOp = special('i0e', 1, ([x], z, gz) => [m.mul(gz, m.sub(ew(i1e, x!), m.mul(m.sign(x!), z)))]);
export const i1e: ScalarOp = special('i1e', 1, ([x], z, gz) => [
  m.mul(gz, withLimitAtZero(x!, m.sub(ew(i0e, x!), m.mul(z, m.add(m.sign(x!), m.trueDiv(1, x!)))), 0.5)),
]);
/** The Bessel functions of the first kind, orders 0 and 1. */
export const j0: ScalarOp = special('j0', 1, ([x], _z, gz) => [m.neg(m.mul(gz, ew(j1, x!)))]);
export const j1: ScalarOp = special('j1', 1, ([x], z, gz) => [m.mul(gz, withLimitAtZero(x!, m.sub(ew(j0, x!), m.trueDiv(z, x!)), 0.5))]);
