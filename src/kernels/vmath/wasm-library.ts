// The vector math library as functions of a WebAssembly module: each of weft's math functions
// (vmath) emitted once per module on demand, on an f64 or f64x2 lanes, and for float32 values on
// f32x4 lanes in float32 arithmetic (exp, tanh) or promoted to float64 and rounded once.
import { exp32Of, lanes32Ops, tanh32Of } from './float32.js';
import { atan2Of, atanOf } from './arctangent.js';
import { acosOf, asinOf } from './arcsine.js';
import { erfcOf, erfOf } from './error-function.js';
import { expOf, tanhOf } from './functions.js';
import { powOf } from './power.js';
import type { BinaryMathFunctionOf, MathFunctionOf } from './js-compile.js';
import { Lanes, type FArg, type M } from './lanes.js';
import { lanesOps } from './lanes-ops.js';
import { coshOf, sinhOf } from './hyperbolic.js';
import { acoshOf, asinhOf, atanhOf } from './inverse-hyperbolic.js';
import { log1mexpOf, logaddexpOf, logitOf, xlogxOf, xlogy0Of } from './log-sums.js';
import { expm1Of, log10Of, log1pOf, log2Of, logOf, sigmoidOf, softplusOf } from './logarithms.js';
import { cosOf, sinOf, tanOf, TRIG_REDUCTION_LIMIT } from './trigonometric.js';
import { Body, F32, F64, HIGH_HALF, LOW_HALVES, V128, type ModuleBuilder } from '../wasm-emit.js';

/** The vector math library's functions (in float64, or in float32 for float32 programs). */
export type MathFunction =
  | 'exp' | 'tanh' | 'expm1' | 'log' | 'log1p' | 'log2' | 'log10' | 'sinh' | 'cosh' | 'sigmoid' | 'softplus' | 'erf' | 'erfc'
  | 'arctan' | 'arcsin' | 'arccos' | 'sin' | 'cos' | 'tan' | 'arcsinh' | 'arccosh' | 'arctanh' | 'log1mexp' | 'logit' | 'xlogx';

const FUNCTIONS: Record<MathFunction, MathFunctionOf> = {
  exp: expOf,
  tanh: tanhOf,
  expm1: expm1Of,
  log: logOf,
  log1p: log1pOf,
  log2: log2Of,
  log10: log10Of,
  sinh: sinhOf,
  cosh: coshOf,
  sigmoid: sigmoidOf,
  softplus: softplusOf,
  erf: erfOf,
  erfc: erfcOf,
  arctan: atanOf,
  arcsin: asinOf,
  arccos: acosOf,
  sin: sinOf,
  cos: cosOf,
  tan: tanOf,
  arcsinh: asinhOf,
  arccosh: acoshOf,
  arctanh: atanhOf,
  log1mexp: log1mexpOf,
  logit: logitOf,
  xlogx: xlogxOf,
};

/** The library's functions of two floats. */
export type BinaryMathFunction = 'arctan2' | 'pow' | 'logaddexp' | 'xlogy0';

const BINARY_FUNCTIONS: Record<BinaryMathFunction, BinaryMathFunctionOf> = {
  arctan2: atan2Of,
  pow: powOf,
  logaddexp: logaddexpOf,
  xlogy0: xlogy0Of,
};

export function isMathFunction(op: string): op is MathFunction {
  return Object.hasOwn(FUNCTIONS, op);
}

export function isBinaryMathFunction(op: string): op is BinaryMathFunction {
  return Object.hasOwn(BINARY_FUNCTIONS, op);
}

/** How many arguments a library function takes (undefined for names that are not its functions). */
export function mathArity(op: string): number | undefined {
  return isMathFunction(op) ? 1 : isBinaryMathFunction(op) ? 2 : undefined;
}

/**
 * The magnitude from which a function's WebAssembly form is not exact, for functions that have
 * one: the loops hand finite arguments at or beyond it to the JS functions (sin, cos and tan
 * reduce such arguments exactly there, vmath/trigonometric.ts).
 */
export function argumentLimit(op: string): number | undefined {
  return op === 'sin' || op === 'cos' || op === 'tan' ? TRIG_REDUCTION_LIMIT : undefined;
}

/** The module function computing `name` on an f64 (scalar) or on f64x2 lanes: its index. */
export function mathFunction(module: ModuleBuilder, name: MathFunction, simd: boolean): number {
  return module.function(`${name}.${simd ? 'f64x2' : 'f64'}`, () => {
    const t = simd ? V128 : F64;
    const body = new Body([t], [t]);
    const lanes = new Lanes(body, simd);
    const result = lanes.val(FUNCTIONS[name]<FArg, M>(lanesOps(lanes), lanes.param(0)));
    body.get(result.f);
    return body;
  });
}

/** `name` of the f64x2 on the stack, emitted in place into `body` (its result left on the stack). */
export function inlineMathFunction(body: Body, name: MathFunction): void {
  const x = body.local(V128);
  body.set(x);
  const lanes = new Lanes(body, true);
  body.get(lanes.val(FUNCTIONS[name]<FArg, M>(lanesOps(lanes), { f: x })).f);
}

/** The functions float32 programs compute in float32 lanes; the others run in float64 and round once. */
const FUNCTIONS32: Partial<Record<MathFunction, typeof exp32Of>> = { exp: exp32Of, tanh: tanh32Of };

/** The module function computing `name` in float32 arithmetic on an f32 or on f32x4 lanes: its index. */
function float32Function(module: ModuleBuilder, name: MathFunction, simd: boolean): number {
  return module.function(`${name}.${simd ? 'f32x4' : 'f32'}`, () => {
    const t = simd ? V128 : F32;
    const body = new Body([t], [t]);
    const result = FUNCTIONS32[name]!(lanes32Ops(body, simd), { f: 0 });
    if (typeof result === 'number') body.f32(result);
    else body.get(result.f);
    return body;
  });
}

/**
 * A math function of the value on the stack, in the step's form: float32 in float32 lanes (four
 * at a time, vmath/float32.ts) or promoted to float64, float64 in float64 lanes; the SIMD forms
 * inline, the scalar tail's and the promoted ones as calls of functions emitted once per module.
 */
export function emitFunction(body: Body, name: MathFunction, prefix: 'f32' | 'f64' | 'f32x4' | 'f64x2', module: ModuleBuilder): void {
  const simd = prefix === 'f32x4' || prefix === 'f64x2';
  const float32 = prefix === 'f32' || prefix === 'f32x4';
  // SIMD code is emitted in place rather than called: in a program of several functions the calls
  // cost their live vectors (a fused exp(x) * y + tanh(w) ran 1.45x faster in float32 inlined).
  const inline = simd;
  if (!float32 && inline) inlineMathFunction(body, name);
  else if (!float32) body.call(mathFunction(module, name, simd));
  else if (FUNCTIONS32[name] && inline) {
    const x = body.local(V128);
    body.set(x);
    const result = FUNCTIONS32[name]!(lanes32Ops(body, true), { f: x });
    if (typeof result === 'number') body.f32x4(result);
    else body.get(result.f);
  } else if (FUNCTIONS32[name]) body.call(float32Function(module, name, simd));
  else body.call(promotedFunction(module, name, simd));
}

/** The module function computing binary `name` of two f64 (or f64x2 lanes): its index. */
function binaryFunction(module: ModuleBuilder, name: BinaryMathFunction, simd: boolean): number {
  return module.function(`${name}.${simd ? 'f64x2' : 'f64'}`, () => {
    const t = simd ? V128 : F64;
    const body = new Body([t, t], [t]);
    const lanes = new Lanes(body, simd);
    body.get(lanes.val(BINARY_FUNCTIONS[name]<FArg, M>(lanesOps(lanes), lanes.param(0), lanes.param(1))).f);
    return body;
  });
}

/**
 * Binary `name` of the two values on the stack, in the step's form (a call of a function emitted
 * once per module): float64 as it is, float32 computed in float64 and rounded once.
 */
export function emitBinaryFunction(body: Body, name: BinaryMathFunction, prefix: 'f32' | 'f64' | 'f32x4' | 'f64x2', module: ModuleBuilder): void {
  const simd = prefix === 'f32x4' || prefix === 'f64x2';
  if (prefix === 'f64' || prefix === 'f64x2') {
    body.call(binaryFunction(module, name, simd));
    return;
  }
  body.call(module.function(`${name}.${prefix}.promoted`, () => {
    const f64 = binaryFunction(module, name, simd);
    const b = new Body([simd ? V128 : F32, simd ? V128 : F32], [simd ? V128 : F32]);
    if (!simd) {
      b.get(0).op('f64.promote_f32').get(1).op('f64.promote_f32').call(f64).op('f32.demote_f64');
      return b;
    }
    b.get(0).op('f64x2.promote_low_f32x4').get(1).op('f64x2.promote_low_f32x4').call(f64).op('f32x4.demote_f64x2_zero');
    b.get(0).get(0).shuffle(HIGH_HALF).op('f64x2.promote_low_f32x4').get(1).get(1).shuffle(HIGH_HALF).op('f64x2.promote_low_f32x4');
    b.call(f64).op('f32x4.demote_f64x2_zero').shuffle(LOW_HALVES);
    return b;
  }));
}


/**
 * `name` of float32 values computed in float64 and rounded once (as the JS loops compute them):
 * an f32 promoted, or four f32x4 lanes as two f64x2 halves, each demoted and packed back.
 */
function promotedFunction(module: ModuleBuilder, name: MathFunction, simd: boolean): number {
  return module.function(`${name}.${simd ? 'f32x4' : 'f32'}.promoted`, () => {
    const f64 = mathFunction(module, name, simd);
    const body = new Body([simd ? V128 : F32], [simd ? V128 : F32]);
    if (!simd) {
      body.get(0).op('f64.promote_f32').call(f64).op('f32.demote_f64');
      return body;
    }
    body.get(0).op('f64x2.promote_low_f32x4').call(f64).op('f32x4.demote_f64x2_zero');
    body.get(0).get(0).shuffle(HIGH_HALF).op('f64x2.promote_low_f32x4').call(f64).op('f32x4.demote_f64x2_zero');
    body.shuffle(LOW_HALVES);
    return body;
  });
}
