// verifyGrad: checks symbolic gradients against central finite differences, as Theano's
// verify_grad does. The output is projected on a seeded random tensor to get a scalar cost;
// then, for each input and each test, the symbolic directional derivative along a random
// direction is compared with (cost(x + eps v) - cost(x - eps v)) / (2 eps).
import { dtypeOfTypedArray, isFloatDtype, type Dtype } from '../kernels/dtype.js';
import { constant } from '../tensor/core/as-tensor.js';
import { config } from '../tensor/core/config.js';
import { grad } from '../tensor/gradient/grad.js';
import { sum } from '../tensor/elemwise/reduce.js';
import { mul } from '../tensor/elemwise/math.js';
import { copyArray, flatValues, isNdArray, ndarrayDtype, nestedShape, shapeText, type NdArray } from '../tensor/core/ndarray.js';
import { Rng } from '../tensor/random/rng.js';
import { TensorType } from '../tensor/core/type.js';
import { isTensorVariable, type TensorLike, type TensorVariable } from '../tensor/core/variable.js';
import { compile } from './function.js';

export interface VerifyGradOptions {
  /** A seeded Rng, or a seed (default 42). */
  readonly rng?: Rng | number;
  /** Finite-difference step (default 1e-6 for float64, 1e-3 for float32). */
  readonly eps?: number;
  /** Absolute tolerance (default 1e-4 for float64, 1e-2 for float32). */
  readonly absTol?: number;
  /** Relative tolerance (default 1e-4 for float64, 1e-2 for float32). */
  readonly relTol?: number;
  /** Random directions tried per input (default 2). */
  readonly nTests?: number;
}

export class GradientMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GradientMismatchError';
  }
}

const DEFAULTS: Record<'float32' | 'float64', { eps: number; tol: number }> = {
  float32: { eps: 1e-3, tol: 1e-2 },
  float64: { eps: 1e-6, tol: 1e-4 },
};

function pointDtype(p: unknown): Dtype {
  if (isNdArray(p)) return ndarrayDtype(p, 'verifyGrad') ?? config.floatX;
  if (ArrayBuffer.isView(p)) return dtypeOfTypedArray(p) ?? config.floatX;
  return config.floatX;
}

function dotValues(a: NdArray, b: NdArray): number {
  const x = flatValues(a);
  const y = flatValues(b);
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]! * y[i]!;
  return s;
}

function shifted(x: NdArray, v: NdArray, step: number): NdArray {
  const out = copyArray(x);
  const d = out.data;
  const dv = flatValues(v);
  for (let i = 0; i < d.length; i++) d[i] = d[i]! + step * dv[i]!;
  return out;
}

export async function verifyGrad(
  fn: (...xs: TensorVariable[]) => TensorVariable,
  points: readonly TensorLike[],
  options: VerifyGradOptions = {},
): Promise<void> {
  const rng = options.rng instanceof Rng ? options.rng : new Rng(options.rng ?? 42);
  const values = points.map((p, i) => {
    if (isTensorVariable(p)) throw new TypeError(`verifyGrad: point ${i} must be a value, not a variable`);
    const dtype = pointDtype(p);
    if (!isFloatDtype(dtype)) throw new TypeError(`verifyGrad: point ${i} has dtype ${dtype}; gradients are checked at float points`);
    const shape = isNdArray(p) ? p.shape : ArrayBuffer.isView(p) ? [(p as Float64Array).length] : nestedShape(p, `verifyGrad: point ${i}`);
    return new TensorType(dtype, shape.map((d) => (d === 1 ? 1 : null))).filter(p, { what: `verifyGrad: point ${i}` });
  });
  const inputs = values.map((v, i) => new TensorType(pointDtype(v), v.shape.map((d) => (d === 1 ? 1 : null))).makeVariable(`x${i}`));
  const out = fn(...inputs);
  if (!isTensorVariable(out)) throw new TypeError('verifyGrad: fn must return a tensor variable');
  if (!isFloatDtype(out.dtype)) throw new TypeError(`verifyGrad: fn returned ${out.dtype} values; gradients need a float output`);

  const outValue = await (await compile(inputs, out, { onUnusedInput: 'ignore', name: 'verifyGrad output' }))(...values);
  const projection = constant(rng.uniform(outValue.shape, { dtype: out.dtype, low: 0.5, high: 1.5 }));
  const cost = sum(mul(out, projection));
  const grads = grad(cost, inputs, { disconnectedInputs: 'ignore' });
  const costFn = await compile(inputs, cost, { onUnusedInput: 'ignore', name: 'verifyGrad cost' });
  const gradFn = await compile(inputs, grads, { onUnusedInput: 'ignore', name: 'verifyGrad grads' });
  const symbolic = await gradFn(...values);

  const dtype = out.dtype as 'float32' | 'float64';
  const worst = inputs.some((x) => x.dtype === 'float32') ? 'float32' : dtype;
  const eps = options.eps ?? DEFAULTS[worst].eps;
  const absTol = options.absTol ?? DEFAULTS[worst].tol;
  const relTol = options.relTol ?? DEFAULTS[worst].tol;
  const nTests = options.nTests ?? 2;
  if (!(Number.isInteger(nTests) && nTests >= 1)) throw new RangeError(`verifyGrad: nTests must be a positive integer, got ${nTests}`);
  if (!(eps > 0)) throw new RangeError(`verifyGrad: eps must be positive, got ${eps}`);

  for (let t = 0; t < nTests; t++) {
    for (let i = 0; i < values.length; i++) {
      const x = values[i]!;
      const direction = rng.normal(x.shape, { dtype: 'float64' });
      const analytic = dotValues(symbolic[i]!, direction);
      const plus = values.map((v, j) => (j === i ? shifted(v, direction, eps) : v));
      const minus = values.map((v, j) => (j === i ? shifted(v, direction, -eps) : v));
      const fPlus = flatValues(await costFn(...plus))[0]!;
      const fMinus = flatValues(await costFn(...minus))[0]!;
      const numeric = (fPlus - fMinus) / (2 * eps);
      const absErr = Math.abs(analytic - numeric);
      const relErr = absErr / Math.max(Math.abs(analytic) + Math.abs(numeric), 1e-300);
      if (!(absErr <= absTol || relErr <= relTol)) {
        throw new GradientMismatchError(
          `verifyGrad: the gradient with respect to input ${i} (${x.shape.length}-d ${inputs[i]!.dtype}, shape ${shapeText(x.shape)}) ` +
            `does not match finite differences along random direction ${t}: symbolic ${analytic}, numeric ${numeric}; ` +
            `absolute error ${absErr.toExponential(3)} (absTol ${absTol}), relative error ${relErr.toExponential(3)} (relTol ${relTol}), eps ${eps}`,
        );
      }
    }
  }
}
