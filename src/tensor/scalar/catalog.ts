// The element-wise functions of weft: one ScalarOp each, with NumPy's semantics for the code,
// the dtype rule and, where the function is differentiable, the gradient.
import { isFloatDtype, isIntDtype, type Dtype } from '../../kernels/dtype.js';
import type { ProgramDtype, ProgramOp } from '../../kernels/elemwise-wasm.js';
import { zerosLike } from '../shape/alloc.js';
import { constant } from '../core/as-tensor.js';
import * as m from '../elemwise/math.js';
import {
  ScalarOp,
  bitwise,
  integerInputs,
  toBool,
  toFloat,
  trueDivRule,
  upcastNoBool,
  upcastRule,
  type CodeContext,
  type DtypeRule,
  type ScalarGrad,
} from './scalar-op.js';
import type { TensorVariable } from '../core/variable.js';

const zeroGrad: ScalarGrad = (inputs) => inputs.map((x) => zerosLike(x));

function unary(name: string, code: (a: string, ctx: CodeContext) => string, grad?: ScalarGrad, rule: DtypeRule = toFloat): ScalarOp {
  return new ScalarOp({ name, nin: 1, outputDtype: rule, code: (a, ctx) => code(a[0]!, ctx), grad });
}

function binary(
  name: string,
  code: (a: string, b: string, ctx: CodeContext) => string,
  grad: ScalarGrad | undefined,
  rule: DtypeRule = upcastNoBool,
  extra: { commutative?: boolean; checkInputs?: (ins: readonly Dtype[]) => string | undefined } = {},
): ScalarOp {
  return new ScalarOp({ name, nin: 2, outputDtype: rule, code: (a, ctx) => code(a[0]!, a[1]!, ctx), grad, ...extra });
}

/**
 * a0 op a1 op a2 ... from left to right. Partial results are rounded to float32 when the output
 * is float32, so that add(a, b, c) equals add(add(a, b), c) bit for bit (integers wrap at the end:
 * modular arithmetic gives the same result, and sums stay exact in doubles).
 */
function chain(args: readonly string[], op: string, output: Dtype): string {
  let e = args[0]!;
  for (let k = 1; k < args.length; k++) {
    const left = k > 1 && output === 'float32' ? `Math.fround(${e})` : e;
    e = `(${left} ${op} ${args[k]})`;
  }
  return e;
}

/** Integer products wrap modulo 2^32 exactly with Math.imul (a float product loses bits past 2^53). */
function imulChain(args: readonly string[]): string {
  return args.reduce((p, q) => `Math.imul(${p}, ${q})`);
}

// ---------------------------------------------------------------------------------------------
// Arithmetic

/** `op` with an exact WebAssembly form (see ScalarOpSpec.wasm). */
function withWasm(op: ScalarOp, wasm: ProgramOp): ScalarOp {
  return new ScalarOp({ ...op.spec, wasm });
}

export const add = new ScalarOp({
  name: 'add',
  wasm: 'add',
  nin: 'variadic',
  outputDtype: upcastNoBool,
  code: (a, ctx) => chain(a, '+', ctx.output),
  grad: (inputs, _z, gz) => inputs.map(() => gz),
  commutative: true,
  associative: true,
});

export const mul = new ScalarOp({
  name: 'mul',
  wasm: 'mul',
  nin: 'variadic',
  outputDtype: upcastNoBool,
  code: (a, ctx) => (a.length === 1 ? a[0]! : isIntDtype(ctx.output) ? imulChain(a) : chain(a, '*', ctx.output)),
  grad: (inputs, _z, gz) => inputs.map((_, i) => m.mul(gz, ...inputs.filter((_, j) => j !== i))),
  commutative: true,
  associative: true,
});

export const sub = withWasm(
  binary('sub', (a, b) => `(${a} - ${b})`, (_i, _z, gz) => [gz, m.neg(gz)]),
  'sub',
);

export const trueDiv = withWasm(
  binary('trueDiv', (a, b) => `(${a} / ${b})`, ([x, y], _z, gz) => [m.trueDiv(gz, y!), m.neg(m.trueDiv(m.mul(gz, x!), m.sqr(y!)))], trueDivRule),
  'div',
);

/** Floor division (NumPy's //): integers give 0 for a zero divisor, floats inf or NaN. */
export const intDiv = binary(
  'intDiv',
  (a, b, ctx) => (isFloatDtype(ctx.output) ? `L.floorDivFloat(${a}, ${b})` : `L.floorDivInt(${a}, ${b})`),
  zeroGrad,
);

/** Floor modulo (NumPy's %: the sign of the divisor): integers give 0 modulo zero, floats NaN. */
export const mod = binary(
  'mod',
  (a, b, ctx) => (isFloatDtype(ctx.output) ? `L.modFloat(${a}, ${b})` : `L.modInt(${a}, ${b})`),
  ([x, y], _z, gz) => [gz, m.neg(m.mul(gz, m.intDiv(x!, y!)))],
);

// Float pow is weft's own (kernels/vmath/power.ts: within 0.51 ulp, C's special values).
export const pow = withWasm(binary(
  'pow',
  (a, b, ctx) => (isFloatDtype(ctx.output) ? `L.pow(${a}, ${b})` : `L.powInt(${a}, ${b})`),
  ([x, y], z, gz) => {
    const gx = m.mul(gz, y!, m.pow(x!, m.sub(y!, 1)));
    const gy = m.where(m.eq(x!, 0), 0, m.mul(gz, z, m.log(x!)));
    return [gx, gy];
  },
), 'pow');

export const neg = withWasm(unary('neg', (a) => `(-(${a}))`, (_i, _z, gz) => [m.neg(gz)], upcastNoBool), 'neg');
export const abs = withWasm(unary('abs', (a) => `Math.abs(${a})`, ([x], _z, gz) => [m.mul(gz, m.sign(x!))], upcastRule), 'abs');
export const sign = withWasm(unary('sign', (a) => `L.sign(${a})`, zeroGrad, upcastNoBool), 'sign');
export const sqr = withWasm(
  unary('sqr', (a, ctx) => (isIntDtype(ctx.output) ? `Math.imul(${a}, ${a})` : `(${a} * ${a})`), ([x], _z, gz) => [m.mul(gz, x!, 2)], upcastNoBool),
  'sqr',
);

// maximum and minimum propagate NaN (Math.max and Math.min do, as NumPy's). At a tie the whole
// gradient goes to the first input, as in PyTensor: maximum returns x where x >= y.
export const maximum = withWasm(binary('maximum', (a, b) => `Math.max(${a}, ${b})`, ([x, y], _z, gz) => firstWins(m.ge(x!, y!), gz), upcastRule, {
  commutative: true,
}), 'max');

export const minimum = withWasm(binary('minimum', (a, b) => `Math.min(${a}, ${b})`, ([x, y], _z, gz) => firstWins(m.le(x!, y!), gz), upcastRule, {
  commutative: true,
}), 'min');

/**
 * The gradient terms of maximum or minimum: gz to x where `xWins` holds, else to y (so a NaN
 * in either input sends it to y, as PyTensor's (e * gz, (1 - e) * gz)). Testing ge(x, y) rather
 * than eq(z, x) does not depend on z being x recomputed bit for bit.
 */
function firstWins(xWins: TensorVariable, gz: TensorVariable): TensorVariable[] {
  const e = m.cast(xWins, gz.dtype);
  return [m.mul(e, gz), m.mul(m.sub(constant(1, { dtype: gz.dtype }), e), gz)];
}

/** minimum(maximum(x, lo), hi), as NumPy's clip (NaN in any argument gives NaN). */
export const clip = new ScalarOp({
  name: 'clip',
  wasm: 'clip',
  nin: 3,
  outputDtype: upcastRule,
  code: ([x, lo, hi]) => `Math.min(Math.max(${x}, ${lo}), ${hi})`,
  grad: ([x, lo, hi], _z, gz) => [
    m.where(m.and(m.ge(x!, lo!), m.le(x!, hi!)), gz, 0),
    m.where(m.lt(x!, lo!), gz, 0),
    m.where(m.gt(x!, hi!), gz, 0),
  ],
});

/** `a` where the condition is non-zero (NaN counts as true, as in NumPy), else `b`. */
export const where = new ScalarOp({
  name: 'where',
  wasm: 'where',
  nin: 3,
  outputDtype: ([, a, b]) => upcastRule([a!, b!]),
  code: ([c, a, b]) => `(${c} !== 0 ? ${a} : ${b})`,
  grad: ([c], _z, gz) => [zerosLike(c!), m.where(c!, gz, 0), m.where(c!, 0, gz)],
});

// ---------------------------------------------------------------------------------------------
// Exponentials, logarithms, powers

const LN2 = Math.LN2;
const LN10 = Math.LN10;
const TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);

// exp and tanh are weft's own (kernels/vmath/functions.ts): the same bits in the JS and the
// WebAssembly loops and on every engine, which Math.exp and Math.tanh do not promise.
// float32 exp and tanh compute in float32 (vmath/float32.ts: four SIMD lanes instead of two).
export const exp = withWasm(unary('exp', (a, ctx) => (ctx.output === 'float32' ? `L.exp32(${a})` : `L.exp(${a})`), (_i, z, gz) => [m.mul(gz, z)]), 'exp');
// log, log1p, expm1, sigmoid and softplus are weft's own too (vmath/logarithms.ts), computed in
// float64 (float32 rounds once).
export const expm1 = withWasm(unary('expm1', (a) => `L.expm1(${a})`, ([x], _z, gz) => [m.mul(gz, m.exp(x!))]), 'expm1');
export const log = withWasm(unary('log', (a) => `L.log(${a})`, ([x], _z, gz) => [m.trueDiv(gz, x!)]), 'log');
export const log1p = withWasm(unary('log1p', (a) => `L.log1p(${a})`, ([x], _z, gz) => [m.trueDiv(gz, m.add(x!, 1))]), 'log1p');
export const log2 = withWasm(unary('log2', (a) => `L.log2(${a})`, ([x], _z, gz) => [m.trueDiv(gz, m.mul(x!, LN2))]), 'log2');
export const log10 = withWasm(unary('log10', (a) => `L.log10(${a})`, ([x], _z, gz) => [m.trueDiv(gz, m.mul(x!, LN10))]), 'log10');
export const sqrt = withWasm(unary('sqrt', (a) => `Math.sqrt(${a})`, (_i, z, gz) => [m.trueDiv(gz, m.mul(z, 2))]), 'sqrt');

// ---------------------------------------------------------------------------------------------
// Trigonometric and hyperbolic

// sin, cos and tan are weft's own (kernels/vmath/trigonometric.ts: an exact reduction at any size).
export const sin = withWasm(unary('sin', (a) => `L.sin(${a})`, ([x], _z, gz) => [m.mul(gz, m.cos(x!))]), 'sin');
export const cos = withWasm(unary('cos', (a) => `L.cos(${a})`, ([x], _z, gz) => [m.neg(m.mul(gz, m.sin(x!)))]), 'cos');
export const tan = withWasm(unary('tan', (a) => `L.tan(${a})`, (_i, z, gz) => [m.mul(gz, m.add(m.sqr(z), 1))]), 'tan');
export const arcsin = withWasm(unary('arcsin', (a) => `L.asin(${a})`, ([x], _z, gz) => [m.trueDiv(gz, m.sqrt(m.sub(1, m.sqr(x!))))]), 'arcsin');
export const arccos = withWasm(unary('arccos', (a) => `L.acos(${a})`, ([x], _z, gz) => [
  m.neg(m.trueDiv(gz, m.sqrt(m.sub(1, m.sqr(x!))))),
]), 'arccos');
// arcsin, arccos, arctan and arctan2 are weft's own (kernels/vmath/arctangent.ts).
export const arctan = withWasm(unary('arctan', (a) => `L.atan(${a})`, ([x], _z, gz) => [m.trueDiv(gz, m.add(m.sqr(x!), 1))]), 'arctan');
export const arctan2 = withWasm(binary(
  'arctan2',
  (y, x) => `L.atan2(${y}, ${x})`,
  ([y, x], _z, gz) => {
    const r2 = m.add(m.sqr(x!), m.sqr(y!));
    return [m.trueDiv(m.mul(gz, x!), r2), m.neg(m.trueDiv(m.mul(gz, y!), r2))];
  },
  toFloat,
), 'arctan2');
// sinh and cosh are weft's own (kernels/vmath/hyperbolic.ts).
export const sinh = withWasm(unary('sinh', (a) => `L.sinh(${a})`, ([x], _z, gz) => [m.mul(gz, m.cosh(x!))]), 'sinh');
export const cosh = withWasm(unary('cosh', (a) => `L.cosh(${a})`, ([x], _z, gz) => [m.mul(gz, m.sinh(x!))]), 'cosh');
export const tanh = withWasm(unary('tanh', (a, ctx) => (ctx.output === 'float32' ? `L.tanh32(${a})` : `L.tanh(${a})`), (_i, z, gz) => [m.mul(gz, m.sub(1, m.sqr(z)))]), 'tanh');

// ---------------------------------------------------------------------------------------------
// Special functions

export const sigmoid = withWasm(unary('sigmoid', (a) => `L.sigmoid(${a})`, (_i, z, gz) => [m.mul(gz, z, m.sub(1, z))]), 'sigmoid');
export const softplus = withWasm(unary('softplus', (a) => `L.softplus(${a})`, ([x], _z, gz) => [m.mul(gz, m.sigmoid(x!))]), 'softplus');
export const erf = withWasm(unary('erf', (a) => `L.erf(${a})`, ([x], _z, gz) => [m.mul(gz, m.exp(m.neg(m.sqr(x!))), TWO_OVER_SQRT_PI)]), 'erf');
export const erfc = withWasm(unary('erfc', (a) => `L.erfc(${a})`, ([x], _z, gz) => [
  m.mul(gz, m.exp(m.neg(m.sqr(x!))), -TWO_OVER_SQRT_PI),
]), 'erfc');

// arcsinh, arccosh and arctanh are weft's own (kernels/vmath/inverse-hyperbolic.ts).
export const arcsinh = withWasm(unary('arcsinh', (a) => `L.arcsinh(${a})`, ([x], _z, gz) => [m.trueDiv(gz, m.sqrt(m.add(m.sqr(x!), 1)))]), 'arcsinh');
export const arccosh = withWasm(unary('arccosh', (a) => `L.arccosh(${a})`, ([x], _z, gz) => [m.trueDiv(gz, m.sqrt(m.sub(m.sqr(x!), 1)))]), 'arccosh');
export const arctanh = withWasm(unary('arctanh', (a) => `L.arctanh(${a})`, ([x], _z, gz) => [m.trueDiv(gz, m.sub(1, m.sqr(x!)))]), 'arctanh');

// The log sums and products (kernels/vmath/log-sums.ts): stable where the plain formula is not.
/** log(e^a + e^b), NumPy's logaddexp. */
export const logaddexp = withWasm(binary(
  'logaddexp',
  (a, b) => `L.logaddexp(${a}, ${b})`,
  ([a, b], z, gz) => [m.mul(gz, m.exp(m.sub(a!, z))), m.mul(gz, m.exp(m.sub(b!, z)))],
  toFloat,
  { commutative: true },
), 'logaddexp');
/** log(1 - e^x) for x <= 0, PyTensor's log1mexp; its derivative -1 / expm1(-x). */
export const log1mexp = withWasm(unary('log1mexp', (a) => `L.log1mexp(${a})`, ([x], _z, gz) => [m.neg(m.trueDiv(gz, m.expm1(m.neg(x!))))]), 'log1mexp');
/** log(x / (1 - x)), the inverse of sigmoid. */
export const logit = withWasm(unary('logit', (a) => `L.logit(${a})`, ([x], _z, gz) => [m.trueDiv(gz, m.mul(x!, m.sub(1, x!)))]), 'logit');
/** x log x, 0 at 0 (PyTensor's XlogX). */
export const xlogx = withWasm(unary('xlogx', (a) => `L.xlogx(${a})`, ([x], _z, gz) => [m.mul(gz, m.add(m.log(x!), 1))]), 'xlogx');
/** x log y, 0 where x is 0 (PyTensor's XlogY0). */
export const xlogy0 = withWasm(binary(
  'xlogy0',
  (a, b) => `L.xlogy0(${a}, ${b})`,
  ([x, y], _z, gz) => [m.mul(gz, m.log(y!)), m.trueDiv(m.mul(gz, x!), y!)],
  toFloat,
), 'xlogy0');

/** 1 / x in the float dtype of x: in WebAssembly a division of the constant 1. */
export const reciprocal = new ScalarOp({
  name: 'reciprocal',
  nin: 1,
  outputDtype: toFloat,
  code: ([a]) => `(1 / ${a})`,
  wasm: ({ output }) => [{ op: 'const', args: [], dtype: output as ProgramDtype, value: 1 }, { op: 'div', args: [1, 0], dtype: output as ProgramDtype }],
  grad: (_i, z, gz) => [m.neg(m.mul(gz, m.sqr(z)))],
});

/** 2^x, as weft's pow of 2 (so it has pow's bits in JS and WebAssembly). */
export const exp2 = new ScalarOp({
  name: 'exp2',
  nin: 1,
  outputDtype: toFloat,
  code: ([a]) => `L.pow(2, ${a})`,
  wasm: ({ output }) => [{ op: 'const', args: [], dtype: output as ProgramDtype, value: 2 }, { op: 'pow', args: [1, 0], dtype: output as ProgramDtype }],
  grad: (_i, z, gz) => [m.mul(gz, z, LN2)],
});

// ---------------------------------------------------------------------------------------------
// Rounding (gradient zero almost everywhere; integers and bools pass through unchanged)

function rounding(name: string, fn: string, wasm: ProgramOp): ScalarOp {
  return withWasm(unary(name, (a, ctx) => (isFloatDtype(ctx.output) ? `${fn}(${a})` : a), zeroGrad, upcastRule), wasm);
}

// In WebAssembly as IEEE's floor, ceil and roundTiesToEven (on floats; integers stay in the JS loops).
export const floor = rounding('floor', 'Math.floor', 'floor');
export const ceil = rounding('ceil', 'Math.ceil', 'ceil');
/** Half to even, as NumPy's round. */
export const round = rounding('round', 'L.roundHalfEven', 'round');
/** Toward zero (-0.5 gives -0). */
export const trunc = rounding('trunc', 'Math.trunc', 'trunc');

/** Whether x is NaN: x != x (never for integers and bools). */
export const isnan = new ScalarOp({
  name: 'isnan',
  nin: 1,
  outputDtype: toBool,
  code: ([a]) => `(${a} !== ${a})`,
  wasm: () => [{ op: 'ne', args: [0, 0], dtype: 'bool' }],
  grad: zeroGrad,
});

/** Whether x is an infinity (never for integers and bools). */
export const isinf = new ScalarOp({
  name: 'isinf',
  nin: 1,
  outputDtype: toBool,
  code: ([a]) => `(Math.abs(${a}) === Infinity)`,
  wasm: ({ inputs: [d] }) => {
    if (d !== 'float32' && d !== 'float64') return [{ op: 'const', args: [], dtype: 'bool', value: 0 }];
    return [{ op: 'abs', args: [0], dtype: d }, { op: 'const', args: [], dtype: d, value: Infinity }, { op: 'eq', args: [1, 2], dtype: 'bool' }];
  },
  grad: zeroGrad,
});

// ---------------------------------------------------------------------------------------------
// Comparisons and logic (discrete outputs: no gradient flows through them)

// In a fused float computation, comparisons run in WebAssembly as masks (see ProgramOp).
export const eq = withWasm(binary('eq', (a, b) => `(${a} === ${b})`, zeroGrad, toBool, { commutative: true }), 'eq');
export const neq = withWasm(binary('neq', (a, b) => `(${a} !== ${b})`, zeroGrad, toBool, { commutative: true }), 'ne');
export const lt = withWasm(binary('lt', (a, b) => `(${a} < ${b})`, zeroGrad, toBool), 'lt');
export const le = withWasm(binary('le', (a, b) => `(${a} <= ${b})`, zeroGrad, toBool), 'le');
export const gt = withWasm(binary('gt', (a, b) => `(${a} > ${b})`, zeroGrad, toBool), 'gt');
export const ge = withWasm(binary('ge', (a, b) => `(${a} >= ${b})`, zeroGrad, toBool), 'ge');

// Bitwise on integers, logical on bools (stored as 0 and 1, where bitwise is logical); on int32
// and bools they run in WebAssembly (v128 bitwise operations on masks and integers).
export const and = withWasm(binary('and', (a, b) => `(${a} & ${b})`, zeroGrad, bitwise, {
  commutative: true,
  checkInputs: integerInputs('and'),
}), 'and');
export const or = withWasm(binary('or', (a, b) => `(${a} | ${b})`, zeroGrad, bitwise, {
  commutative: true,
  checkInputs: integerInputs('or'),
}), 'or');
export const xor = withWasm(binary('xor', (a, b) => `(${a} ^ ${b})`, zeroGrad, bitwise, {
  commutative: true,
  checkInputs: integerInputs('xor'),
}), 'xor');
export const not = new ScalarOp({
  name: 'not',
  wasm: 'not',
  nin: 1,
  outputDtype: ([d]) => d!,
  checkInputs: integerInputs('not'),
  code: ([a], ctx) => (ctx.output === 'bool' ? `(${a} === 0)` : `(~(${a}))`),
  grad: zeroGrad,
});

// ---------------------------------------------------------------------------------------------
// Casts: one ScalarOp per target dtype

const casts = new Map<Dtype, ScalarOp>();

/**
 * The ScalarOp converting to `dtype`, as NumPy's astype: floats to integers truncate toward zero,
 * integers wrap to the target width, and any non-zero value (NaN included) is true.
 */
export function castTo(dtype: Dtype): ScalarOp {
  let op = casts.get(dtype);
  if (!op) {
    op = new ScalarOp({
      name: `cast{${dtype}}`,
      // In WebAssembly where exact (kernels/elemwise-program.ts: not from floats to int32).
      wasm: 'cast',
      nin: 1,
      outputDtype: () => dtype,
      // asDtype does the truncation, wrapping and rounding; bool needs an explicit test (NaN).
      code: ([a]) => (dtype === 'bool' ? `(${a} !== 0)` : a!),
      grad: ([x], _z, gz) => [isFloatDtype(x!.dtype) ? m.cast(gz, x!.dtype) : zerosLike(x!)],
    });
    casts.set(dtype, op);
  }
  return op;
}

/** Every ScalarOp of the catalog by name (casts excluded). */
export type CatalogName =
  | 'add' | 'mul' | 'sub' | 'trueDiv' | 'intDiv' | 'mod' | 'pow' | 'neg' | 'abs' | 'sign' | 'sqr'
  | 'maximum' | 'minimum' | 'clip' | 'where' | 'exp' | 'expm1' | 'log' | 'log1p' | 'log2' | 'log10'
  | 'sqrt' | 'sin' | 'cos' | 'tan' | 'arcsin' | 'arccos' | 'arctan' | 'arctan2' | 'sinh' | 'cosh'
  | 'tanh' | 'sigmoid' | 'softplus' | 'erf' | 'erfc' | 'floor' | 'ceil' | 'round' | 'eq' | 'neq'
  | 'lt' | 'le' | 'gt' | 'ge' | 'and' | 'or' | 'xor' | 'not' | 'arcsinh' | 'arccosh' | 'arctanh'
  | 'logaddexp' | 'log1mexp' | 'logit' | 'xlogx' | 'xlogy0' | 'reciprocal' | 'exp2' | 'trunc'
  | 'isnan' | 'isinf';

// The special functions of pt.special, in the catalog too (documents name them like the others).
export * from './special.js';

export type { TensorVariable };
