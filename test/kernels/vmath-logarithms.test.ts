// weft's own log, log1p, expm1, sigmoid and softplus (kernels/vmath/logarithms.ts, issue 12) and
// log2, log10, erf and erfc (vmath/error-function.ts), sinh and cosh (vmath/hyperbolic.ts), the
// inverse hyperbolic functions and the log sums (inverse-hyperbolic.ts, log-sums.ts):
// special values exactly, and the JS functions the kernels call (compiled from the generic
// algorithm) give the generic algorithm's bits over jsOps. Their error is measured in
// vmath-accuracy.test.ts.
import t from 'tap';
import { sameNumber, uniformStream } from '../helpers.js';
import { scalarLib } from '../../src/kernels/scalar-lib.js';
import { jsOps } from '../../src/kernels/vmath/functions.js';
import { erfcOf, erfOf } from '../../src/kernels/vmath/error-function.js';
import { atanOf } from '../../src/kernels/vmath/arctangent.js';
import { acosOf, asinOf } from '../../src/kernels/vmath/arcsine.js';
import { coshOf, sinhOf } from '../../src/kernels/vmath/hyperbolic.js';
import { expm1Of, log10Of, log1pOf, log2Of, logOf, sigmoidOf, softplusOf } from '../../src/kernels/vmath/logarithms.js';
import { acoshOf, asinhOf, atanhOf } from '../../src/kernels/vmath/inverse-hyperbolic.js';
import { log1mexpOf, logaddexpOf, logitOf, xlogxOf, xlogy0Of } from '../../src/kernels/vmath/log-sums.js';

const FUNCTIONS = {
  log: [scalarLib.log, logOf],
  log1p: [scalarLib.log1p, log1pOf],
  expm1: [scalarLib.expm1, expm1Of],
  sigmoid: [scalarLib.sigmoid, sigmoidOf],
  softplus: [scalarLib.softplus, softplusOf],
  erf: [scalarLib.erf, erfOf],
  erfc: [scalarLib.erfc, erfcOf],
  log2: [scalarLib.log2, log2Of],
  log10: [scalarLib.log10, log10Of],
  sinh: [scalarLib.sinh, sinhOf],
  cosh: [scalarLib.cosh, coshOf],
  atan: [scalarLib.atan, atanOf],
  asin: [scalarLib.asin, asinOf],
  acos: [scalarLib.acos, acosOf],
  arcsinh: [scalarLib.arcsinh, asinhOf],
  arccosh: [scalarLib.arccosh, acoshOf],
  arctanh: [scalarLib.arctanh, atanhOf],
  log1mexp: [scalarLib.log1mexp, log1mexpOf],
  logit: [scalarLib.logit, logitOf],
  xlogx: [scalarLib.xlogx, xlogxOf],
} as const;

const BINARY = {
  logaddexp: [scalarLib.logaddexp, logaddexpOf],
  xlogy0: [scalarLib.xlogy0, xlogy0Of],
} as const;


t.test('special values, exactly', async (t) => {
  const cases: Array<[keyof typeof FUNCTIONS, number, number]> = [
    ['log', 1, 0], ['log', 0, -Infinity], ['log', -0, -Infinity], ['log', Infinity, Infinity], ['log', -1, NaN], ['log', -Infinity, NaN],
    ['log', NaN, NaN], ['log', 5e-324, -744.4400719213812], ['log', Math.E, 1], ['log', 2, Math.LN2],
    ['log1p', 0, 0], ['log1p', -0, -0], ['log1p', -1, -Infinity], ['log1p', -2, NaN], ['log1p', Infinity, Infinity], ['log1p', NaN, NaN],
    ['log1p', 1e-300, 1e-300], ['log1p', -5e-324, -5e-324], ['log1p', 1, Math.LN2],
    ['expm1', 0, 0], ['expm1', -0, -0], ['expm1', Infinity, Infinity], ['expm1', -Infinity, -1], ['expm1', NaN, NaN], ['expm1', 1e-300, 1e-300],
    ['expm1', -5e-324, -5e-324], ['expm1', 710, Infinity], ['expm1', -50, -1],
    ['sigmoid', 0, 0.5], ['sigmoid', -0, 0.5], ['sigmoid', Infinity, 1], ['sigmoid', -Infinity, 0], ['sigmoid', NaN, NaN], ['sigmoid', 40, 1],
    ['sigmoid', -800, 0],
    ['softplus', Infinity, Infinity], ['softplus', -Infinity, 0], ['softplus', NaN, NaN], ['softplus', 0, Math.LN2], ['softplus', 1000, 1000],
    ['softplus', -800, 0],
    ['erf', 0, 0], ['erf', -0, -0], ['erf', Infinity, 1], ['erf', -Infinity, -1], ['erf', NaN, NaN], ['erf', 6, 1], ['erf', 1e-300, 1.1283791670955126e-300],
    ['erfc', 0, 1], ['erfc', Infinity, 0], ['erfc', -Infinity, 2], ['erfc', NaN, NaN], ['erfc', 30, 0], ['erfc', -6, 2],
    ['log2', 8, 3], ['log2', 1, 0], ['log2', 0.5, -1], ['log2', 5e-324, -1074], ['log2', 2 ** 1023, 1023], ['log2', 0, -Infinity], ['log2', -1, NaN], ['log2', Infinity, Infinity],
    ['log10', 1, 0], ['log10', 0, -Infinity], ['log10', -1, NaN], ['log10', Infinity, Infinity], ['log10', NaN, NaN],
    ['sinh', 0, 0], ['sinh', -0, -0], ['sinh', Infinity, Infinity], ['sinh', -Infinity, -Infinity], ['sinh', NaN, NaN], ['sinh', 711, Infinity], ['sinh', -711, -Infinity], ['sinh', 1e-300, 1e-300],
    ['atan', 0, 0], ['atan', -0, -0], ['atan', Infinity, Math.PI / 2], ['atan', -Infinity, -Math.PI / 2], ['atan', NaN, NaN], ['atan', 1, Math.PI / 4], ['atan', 1e-300, 1e-300],
    ['asin', 0, 0], ['asin', -0, -0], ['asin', 1, Math.PI / 2], ['asin', -1, -Math.PI / 2], ['asin', 1.5, NaN], ['asin', NaN, NaN], ['asin', 1e-300, 1e-300],
    ['acos', 1, 0], ['acos', -1, Math.PI], ['acos', 0, Math.PI / 2], ['acos', 1.5, NaN], ['acos', -Infinity, NaN], ['acos', NaN, NaN],
    ['arcsinh', 0, 0], ['arcsinh', -0, -0], ['arcsinh', Infinity, Infinity], ['arcsinh', -Infinity, -Infinity], ['arcsinh', NaN, NaN], ['arcsinh', 1e-300, 1e-300],
    ['arcsinh', 1e300, 691.4686750787736], ['arcsinh', -1e300, -691.4686750787736],
    ['arccosh', 1, 0], ['arccosh', 0.5, NaN], ['arccosh', -Infinity, NaN], ['arccosh', Infinity, Infinity], ['arccosh', NaN, NaN], ['arccosh', 1e300, 691.4686750787736],
    ['arctanh', 0, 0], ['arctanh', -0, -0], ['arctanh', 1, Infinity], ['arctanh', -1, -Infinity], ['arctanh', 1.5, NaN], ['arctanh', -Infinity, NaN], ['arctanh', NaN, NaN], ['arctanh', 1e-300, 1e-300],
    ['log1mexp', 0, -Infinity], ['log1mexp', -0, -Infinity], ['log1mexp', -Infinity, 0], ['log1mexp', 1, NaN], ['log1mexp', NaN, NaN], ['log1mexp', -Math.LN2, -Math.LN2],
    ['logit', 0.5, 0], ['logit', 0, -Infinity], ['logit', 1, Infinity], ['logit', 2, NaN], ['logit', -1, NaN], ['logit', NaN, NaN],
    ['xlogx', 0, 0], ['xlogx', -0, 0], ['xlogx', 1, 0], ['xlogx', Infinity, Infinity], ['xlogx', -1, NaN], ['xlogx', NaN, NaN],
    ['cosh', 0, 1], ['cosh', -0, 1], ['cosh', Infinity, Infinity], ['cosh', -Infinity, Infinity], ['cosh', NaN, NaN], ['cosh', 711, Infinity], ['cosh', 1e-300, 1],
  ];
  for (const [name, x, want] of cases) {
    const got = FUNCTIONS[name][0](x);
    t.ok(sameNumber(got, want), `${name}(${x}) = ${got} (${want})`);
  }
  // NumPy's logaddexp: equal arguments give a + ln 2 (two infinities stay one), NaN propagates;
  // xlogy0 is 0 wherever x is 0, even for a NaN or zero y (PyTensor's XlogY0).
  const binary: Array<[keyof typeof BINARY, number, number, number]> = [
    ['logaddexp', 0, 0, Math.LN2], ['logaddexp', -Infinity, -Infinity, -Infinity], ['logaddexp', Infinity, Infinity, Infinity], ['logaddexp', Infinity, -Infinity, Infinity],
    ['logaddexp', -Infinity, 3, 3], ['logaddexp', 1000, 1000, 1000 + Math.LN2], ['logaddexp', 1000, -1000, 1000], ['logaddexp', NaN, 1, NaN], ['logaddexp', 1, NaN, NaN],
    ['xlogy0', 0, NaN, 0], ['xlogy0', 0, 0, 0], ['xlogy0', 2, 1, 0], ['xlogy0', 1, 0, -Infinity], ['xlogy0', NaN, 1, NaN], ['xlogy0', 3, -1, NaN],
  ];
  for (const [name, a, b, want] of binary) {
    const got = BINARY[name][0](a, b);
    t.ok(sameNumber(got, want), `${name}(${a}, ${b}) = ${got} (${want})`);
  }
  t.equal(scalarLib.sigmoid(-740), Math.exp(-740) / (1 + Math.exp(-740)), 'sigmoid of a very negative value is subnormal, not 0');
  t.ok(scalarLib.softplus(-740) > 0, 'softplus of a very negative value is e^x (subnormal), not 0');
});

t.test('the compiled JS functions are the generic algorithms over jsOps, bit for bit', async (t) => {
  const u = uniformStream(5);
  const xs = [
    ...Array.from({ length: 200_000 }, () => (u() - 0.5) * 80),
    ...Array.from({ length: 100_000 }, () => (u() < 0.5 ? -1 : 1) * 10 ** (-320 + 630 * u())),
    0, -0, 1, -1, 2 ** -54, -(2 ** -54), 37, 40, -40, 709.8, -745.2, Infinity, -Infinity, NaN, 5e-324,
  ];
  for (const [name, [compiled, generic]] of Object.entries(FUNCTIONS)) {
    let bad = 0;
    for (const x of xs) if (!sameNumber(compiled(x), generic(jsOps, x))) bad++;
    t.equal(bad, 0, `${name}: ${xs.length} inputs`);
  }
  for (const [name, [compiled, generic]] of Object.entries(BINARY)) {
    let bad = 0;
    for (let i = 0; i < xs.length; i++) {
      const [a, b] = [xs[i]!, xs[(i * 7 + 3) % xs.length]!];
      if (!sameNumber(compiled(a, b), generic(jsOps, a, b))) bad++;
    }
    t.equal(bad, 0, `${name}: ${xs.length} pairs`);
  }
});
