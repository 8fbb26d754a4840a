// Differentiation: grad, Lop, Rop, jacobian and hessian, binding the graph layer's generic
// machinery to tensor zeros, ones, sums and casts, and to a user Type's own (Type.gradient).
import { isDiscreteDtype, isFloatDtype } from '../../kernels/dtype.js';
import { gradWith, isDisconnected, isNullGrad, ropWith, type GradAlgebra, type GradOptions } from '../../graph/gradient.js';
import type { GradientSupport } from '../../graph/type.js';
import { Variable } from '../../graph/variable.js';
import { onesLike, zeroTangent } from '../shape/alloc.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { map } from '../inner/map.js';
import { add, cast } from '../elemwise/math.js';
import { shapeI } from '../shape/shape.js';
import { TensorType } from '../core/type.js';
import { isTensorVariable, type TensorVariable } from '../core/variable.js';

/** The gradient support of a variable of a Type other than tensors (checked where it is needed). */
function supportOf(v: Variable): GradientSupport {
  const support = v.type.gradient;
  if (!support) throw new TypeError(`grad: ${v} has the type ${v.type}, which has no gradients (give the Type a \`gradient\`: ones, zeros, sum)`);
  return support;
}

const algebra: GradAlgebra = {
  onesLike: (v) => (isTensorVariable(v) ? onesLike(v) : supportOf(v).ones(v)),
  zerosLike: (v) => (isTensorVariable(v) ? zeroTangent(v) : supportOf(v).zeros(v)),
  add: (terms) => (isTensorVariable(terms[0]) ? add(...(terms as TensorVariable[])) : supportOf(terms[0]!).sum(terms)),
  isDiscrete: (v) => (v.type instanceof TensorType ? isDiscreteDtype(v.type.dtype) : v.type.gradient === undefined),
  castLike: (g, like) => {
    if (!(like.type instanceof TensorType)) return g;
    const t = like.type;
    return (g.type as TensorType).dtype === t.dtype ? g : cast(g as TensorVariable, t.dtype);
  },
};

function checkTensor(v: unknown, what: string): TensorVariable {
  if (!isTensorVariable(v)) throw new TypeError(`${what} must be a tensor variable, got ${String(v)}`);
  return v;
}

function checkVariable(v: unknown, what: string): Variable {
  if (!(v instanceof Variable)) throw new TypeError(`${what} must be a variable, got ${String(v)}`);
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
export function grad(cost: Variable | null, wrt: Variable, options?: GradOptions): Variable;
export function grad(cost: Variable | null, wrt: readonly Variable[], options?: GradOptions): Variable[];
export function grad(cost: Variable | null, wrt: Variable | readonly Variable[], options: GradOptions = {}): Variable | Variable[] {
  if (cost !== null && !isTensorVariable(cost)) {
    checkVariable(cost, 'grad: the cost');
    if (!cost.type.gradient) throw new TypeError(`grad: the cost ${cost} has the type ${cost.type}, which has no gradients (give the Type a \`gradient\`: ones, zeros, sum)`);
  } else if (cost !== null) {
    if (cost.ndim !== 0) {
      throw new TypeError(`grad: the cost must be a scalar (0-d), got ${cost} (${cost.type}); reduce it first, e.g. cost.sum()`);
    }
    if (isDiscreteDtype(cost.dtype)) {
      throw new TypeError(`grad: the cost ${cost} has the discrete dtype ${cost.dtype}; its gradient is zero everywhere (cast it to a float dtype)`);
    }
  }
  const list = Array.isArray(wrt) ? (wrt as readonly Variable[]) : [wrt as Variable];
  list.forEach((v, i) => checkVariable(v, `grad: wrt[${i}]`));
  const knownGrads = checkKnownGrads(options.knownGrads);
  const grads = gradWith(algebra, cost, list, { ...options, knownGrads });
  return (Array.isArray(wrt) ? grads : grads[0]) as Variable | Variable[];
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
  const grads = gradWith(algebra, null, asList(wrt), { knownGrads: known, disconnectedInputs: 'ignore' });
  return (Array.isArray(wrt) ? grads : grads[0]) as TensorVariable | TensorVariable[];
}

/**
 * Right product with the Jacobian (Jacobian-vector product): for each `f`, the directional
 * derivative along `evalPoints` (one per `wrt`, of its type).
 */
export function Rop(f: TensorVariable | readonly TensorVariable[], wrt: TensorVariable | readonly TensorVariable[], evalPoints: TensorVariable | readonly TensorVariable[]): TensorVariable | TensorVariable[];
export function Rop(f: Variable | readonly Variable[], wrt: Variable | readonly Variable[], evalPoints: Variable | readonly Variable[]): Variable | Variable[];
export function Rop(f: Variable | readonly Variable[], wrt: Variable | readonly Variable[], evalPoints: Variable | readonly Variable[]): Variable | Variable[] {
  const list = <V>(v: V | readonly V[]): readonly V[] => (Array.isArray(v) ? (v as readonly V[]) : [v as V]);
  const out = ropWith(algebra, list(f), list(wrt), list(evalPoints));
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
