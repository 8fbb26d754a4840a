// Differentiation of tensor graphs: grad, Lop, Rop, jacobian and hessian, binding the graph
// layer's generic machinery to tensor zeros, ones, sums and casts.
import { isDiscreteDtype, isFloatDtype } from '../../kernels/dtype.js';
import { gradWith, isDisconnected, isNullGrad, ropWith, type GradAlgebra, type GradOptions } from '../../graph/gradient.js';
import { Variable } from '../../graph/variable.js';
import { onesLike, zeroTangent } from '../shape/alloc.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { map } from '../inner/map.js';
import { add, cast } from '../elemwise/math.js';
import { shapeI } from '../shape/shape.js';
import { TensorType } from '../core/type.js';
import { isTensorVariable, type TensorVariable } from '../core/variable.js';

const tensorAlgebra: GradAlgebra = {
  onesLike: (v) => onesLike(v as TensorVariable),
  zerosLike: (v) => zeroTangent(v as TensorVariable),
  add: (terms) => add(...(terms as TensorVariable[])),
  isDiscrete: (v) => !(v.type instanceof TensorType) || isDiscreteDtype(v.type.dtype),
  castLike: (g, like) => {
    const t = like.type as TensorType;
    return (g.type as TensorType).dtype === t.dtype ? g : cast(g as TensorVariable, t.dtype);
  },
};

function checkTensor(v: unknown, what: string): TensorVariable {
  if (!isTensorVariable(v)) throw new TypeError(`${what} must be a tensor variable, got ${String(v)}`);
  return v;
}

/**
 * Checks that `g` can be the gradient of `v` (given by the caller, as knownGrads or a Lop
 * evaluation point): a float tensor of v's rank whose static lengths do not contradict v's.
 */
function checkGradientFor(v: TensorVariable, g: unknown, what: string): Variable {
  if (g instanceof Variable && (isDisconnected(g) || isNullGrad(g))) return g;
  const gv = checkTensor(g, what);
  const problem =
    gv.ndim !== v.ndim
      ? `it has ${gv.ndim} dimensions where ${v} has ${v.ndim}`
      : !isFloatDtype(gv.dtype)
        ? 'a gradient must have a float dtype'
        : gv.type.shape.some((d, a) => d !== null && v.type.shape[a] !== null && d !== v.type.shape[a])
          ? 'their static shapes differ'
          : undefined;
  if (problem) throw new TypeError(`${what} (${gv}, ${gv.type}) cannot be the gradient of ${v} (${v.type}): ${problem}`);
  return gv;
}

function checkKnownGrads(known: GradOptions['knownGrads']): Array<[Variable, Variable]> {
  const pairs = known instanceof Map ? [...known] : [...((known ?? []) as ReadonlyArray<readonly [Variable, Variable]>)];
  return pairs.map(([v, g], i) => {
    const tv = checkTensor(v, `grad: knownGrads[${i}] key`);
    return [tv, checkGradientFor(tv, g, `grad: knownGrads[${i}]`)];
  });
}

/**
 * The gradient of the scalar `cost` with respect to each variable of `wrt` (a variable or an
 * array; the result has the same form).
 */
export function grad(cost: TensorVariable | null, wrt: TensorVariable, options?: GradOptions): TensorVariable;
export function grad(cost: TensorVariable | null, wrt: readonly TensorVariable[], options?: GradOptions): TensorVariable[];
export function grad(
  cost: TensorVariable | null,
  wrt: TensorVariable | readonly TensorVariable[],
  options: GradOptions = {},
): TensorVariable | TensorVariable[] {
  if (cost !== null) {
    checkTensor(cost, 'grad: the cost');
    if (cost.ndim !== 0) {
      throw new TypeError(`grad: the cost must be a scalar (0-d), got ${cost} (${cost.type}); reduce it first, e.g. cost.sum()`);
    }
    if (isDiscreteDtype(cost.dtype)) {
      throw new TypeError(`grad: the cost ${cost} has the discrete dtype ${cost.dtype}; its gradient is zero everywhere (cast it to a float dtype)`);
    }
  }
  const list = Array.isArray(wrt) ? (wrt as readonly TensorVariable[]) : [wrt as TensorVariable];
  list.forEach((v, i) => checkTensor(v, `grad: wrt[${i}]`));
  const knownGrads = checkKnownGrads(options.knownGrads);
  const grads = gradWith(tensorAlgebra, cost, list, { ...options, knownGrads }) as Array<TensorVariable | null>;
  return (Array.isArray(wrt) ? grads : grads[0]) as TensorVariable | TensorVariable[];
}

function asList(v: TensorVariable | readonly TensorVariable[]): readonly TensorVariable[] {
  return Array.isArray(v) ? (v as readonly TensorVariable[]) : [v as TensorVariable];
}

/**
 * Left product with the Jacobian (vector-Jacobian product): for each `wrt`, the sum over `f` of
 * evalPoint_f * d f / d wrt. `evalPoints` has the form and types of `f`.
 */
export function Lop(
  f: TensorVariable | readonly TensorVariable[],
  wrt: TensorVariable | readonly TensorVariable[],
  evalPoints: TensorVariable | readonly TensorVariable[],
): TensorVariable | TensorVariable[] {
  const fs = asList(f);
  const evs = asList(evalPoints);
  if (fs.length !== evs.length) throw new Error(`Lop: ${fs.length} expressions but ${evs.length} evaluation points`);
  const known = fs.map((v, i): [Variable, Variable] => {
    const fv = checkTensor(v, `Lop: expression ${i}`);
    return [fv, checkGradientFor(fv, asTensorVariable(evs[i]!), `Lop: evaluation point ${i}`)];
  });
  const grads = gradWith(tensorAlgebra, null, asList(wrt), { knownGrads: known, disconnectedInputs: 'ignore' });
  return (Array.isArray(wrt) ? grads : grads[0]) as TensorVariable | TensorVariable[];
}

/**
 * Right product with the Jacobian (Jacobian-vector product): for each `f`, the directional
 * derivative along `evalPoints` (one per `wrt`, of its type).
 */
export function Rop(
  f: TensorVariable | readonly TensorVariable[],
  wrt: TensorVariable | readonly TensorVariable[],
  evalPoints: TensorVariable | readonly TensorVariable[],
): TensorVariable | TensorVariable[] {
  const out = ropWith(tensorAlgebra, asList(f), asList(wrt), asList(evalPoints)) as TensorVariable[];
  return Array.isArray(f) ? out : out[0]!;
}

/**
 * The Jacobian of the vector (or scalar) `expression` with respect to each `wrt`: an array of
 * shape [expression.length, ...wrt.shape] per variable.
 */
export function jacobian(expression: TensorVariable, wrt: TensorVariable, options?: GradOptions): TensorVariable;
export function jacobian(expression: TensorVariable, wrt: readonly TensorVariable[], options?: GradOptions): TensorVariable[];
export function jacobian(
  expression: TensorVariable,
  wrt: TensorVariable | readonly TensorVariable[],
  options: GradOptions = {},
): TensorVariable | TensorVariable[] {
  const y = checkTensor(expression, 'jacobian: the expression');
  const list = asList(wrt);
  let result: TensorVariable[];
  if (y.ndim === 0) result = grad(y, list, options);
  else if (y.ndim === 1) {
    // One gradient per element of y, evaluated by a Map over the elements' indices.
    result = map(shapeI(y, 0), (i) => grad(y.get(i), list, { disconnectedInputs: 'ignore', ...options }));
  } else {
    throw new TypeError(`jacobian: the expression must be a scalar or a vector, got ${y} (${y.type}); flatten it first`);
  }
  return Array.isArray(wrt) ? result : result[0]!;
}

/** The Hessian of the scalar `cost` with respect to each vector `wrt`. */
export function hessian(cost: TensorVariable, wrt: TensorVariable, options?: GradOptions): TensorVariable;
export function hessian(cost: TensorVariable, wrt: readonly TensorVariable[], options?: GradOptions): TensorVariable[];
export function hessian(
  cost: TensorVariable,
  wrt: TensorVariable | readonly TensorVariable[],
  options: GradOptions = {},
): TensorVariable | TensorVariable[] {
  const result = asList(wrt).map((x, i) => {
    if (x.ndim !== 1) throw new TypeError(`hessian: wrt[${i}] must be a vector, got ${x} (${x.type})`);
    return jacobian(grad(cost, x, options), x, { disconnectedInputs: 'ignore' });
  });
  return Array.isArray(wrt) ? result : result[0]!;
}
