// weft's own log, log1p, expm1, sigmoid and softplus (kernels/vmath/logarithms.ts, issue 12) and
// log2, log10, erf and erfc (vmath/error-function.ts), sinh and cosh (vmath/hyperbolic.ts):
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
    ['cosh', 0, 1], ['cosh', -0, 1], ['cosh', Infinity, Infinity], ['cosh', -Infinity, Infinity], ['cosh', NaN, NaN], ['cosh', 711, Infinity], ['cosh', 1e-300, 1],
  ];
  for (const [name, x, want] of cases) {
    const got = FUNCTIONS[name][0](x);
    t.ok(sameNumber(got, want), `${name}(${x}) = ${got} (${want})`);
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
});
