// Installs TensorMethods (x.add(y), x.sum(), x.T, x.get(...), ...) on the three tensor variable
// classes. Each method is the pt function of the same name with `this` as first argument.
import type { Dtype } from '../kernels/dtype.js';
import { dimshuffle, transpose } from './shape/dimshuffle.js';
import { dot, matmul } from './linalg/linalg.js';
import * as m from './elemwise/math.js';
import * as r from './elemwise/reduce.js';
import { flatten, reshape } from './shape/reshape.js';
import { shape } from './shape/shape.js';
import { get } from './shape/indexing.js';
import { squeeze, swapaxes, type AxisOptions } from './shape/axes.js';
import { repeat, type RepeatOptions } from './shape/rearrange.js';
import { diagonal, trace, type DiagonalOptions } from './shape/masks.js';
import { cumprod, cumsum } from './extra/cumulative.js';
import { argsort, sort } from './extra/sorting.js';
import {
  TensorConstant,
  TensorSharedVariable,
  TensorVariable,
  type AxisArg,
  type IndexEntry,
  type ReduceOptions,
  type ShapeLike,
  type TensorLike,
  type TensorMethods,
  type VarOptions,
} from './core/variable.js';

type Methods = Omit<TensorMethods, 'T' | 'shape'> & ThisType<TensorVariable>;

const methods: Methods = {
  add(...ys: TensorLike[]) { return m.add(this, ...ys); },
  sub(y: TensorLike) { return m.sub(this, y); },
  mul(...ys: TensorLike[]) { return m.mul(this, ...ys); },
  trueDiv(y: TensorLike) { return m.trueDiv(this, y); },
  div(y: TensorLike) { return m.trueDiv(this, y); },
  intDiv(y: TensorLike) { return m.intDiv(this, y); },
  mod(y: TensorLike) { return m.mod(this, y); },
  pow(y: TensorLike) { return m.pow(this, y); },
  neg() { return m.neg(this); },
  abs() { return m.abs(this); },
  sign() { return m.sign(this); },
  exp() { return m.exp(this); },
  expm1() { return m.expm1(this); },
  log() { return m.log(this); },
  log1p() { return m.log1p(this); },
  log2() { return m.log2(this); },
  log10() { return m.log10(this); },
  sqrt() { return m.sqrt(this); },
  sqr() { return m.sqr(this); },
  sin() { return m.sin(this); },
  cos() { return m.cos(this); },
  tan() { return m.tan(this); },
  arcsin() { return m.arcsin(this); },
  arccos() { return m.arccos(this); },
  arctan() { return m.arctan(this); },
  arctan2(x: TensorLike) { return m.arctan2(this, x); },
  sinh() { return m.sinh(this); },
  cosh() { return m.cosh(this); },
  tanh() { return m.tanh(this); },
  sigmoid() { return m.sigmoid(this); },
  softplus() { return m.softplus(this); },
  erf() { return m.erf(this); },
  erfc() { return m.erfc(this); },
  floor() { return m.floor(this); },
  ceil() { return m.ceil(this); },
  round() { return m.round(this); },
  clip(min: TensorLike, max: TensorLike) { return m.clip(this, min, max); },
  maximum(y: TensorLike) { return m.maximum(this, y); },
  minimum(y: TensorLike) { return m.minimum(this, y); },
  eq(y: TensorLike) { return m.eq(this, y); },
  neq(y: TensorLike) { return m.neq(this, y); },
  lt(y: TensorLike) { return m.lt(this, y); },
  le(y: TensorLike) { return m.le(this, y); },
  gt(y: TensorLike) { return m.gt(this, y); },
  ge(y: TensorLike) { return m.ge(this, y); },
  and(y: TensorLike) { return m.and(this, y); },
  or(y: TensorLike) { return m.or(this, y); },
  xor(y: TensorLike) { return m.xor(this, y); },
  not() { return m.not(this); },
  astype(dtype: Dtype) { return m.cast(this, dtype); },

  sum(o?: ReduceOptions | AxisArg) { return r.sum(this, o); },
  prod(o?: ReduceOptions | AxisArg) { return r.prod(this, o); },
  mean(o?: ReduceOptions | AxisArg) { return r.mean(this, o); },
  max(o?: ReduceOptions | AxisArg) { return r.max(this, o); },
  min(o?: ReduceOptions | AxisArg) { return r.min(this, o); },
  argmax(o?: ReduceOptions | AxisArg) { return r.argmax(this, o); },
  argmin(o?: ReduceOptions | AxisArg) { return r.argmin(this, o); },
  all(o?: ReduceOptions | AxisArg) { return r.all(this, o); },
  any(o?: ReduceOptions | AxisArg) { return r.any(this, o); },
  var(o?: VarOptions | AxisArg) { return r.variance(this, o); },
  std(o?: VarOptions | AxisArg) { return r.std(this, o); },

  reshape(s: ShapeLike) { return reshape(this, s); },
  flatten(ndim?: number) { return flatten(this, ndim); },
  dimshuffle(...pattern: Array<number | 'x'>) { return dimshuffle(this, pattern); },
  squeeze(o?: AxisOptions) { return squeeze(this, o); },
  swapaxes(a: number, b: number) { return swapaxes(this, a, b); },
  repeat(n: number, o?: RepeatOptions) { return repeat(this, n, o); },
  diagonal(o?: DiagonalOptions) { return diagonal(this, o); },
  trace() { return trace(this); },
  cumsum(o?: { readonly axis?: number }) { return cumsum(this, o); },
  cumprod(o?: { readonly axis?: number }) { return cumprod(this, o); },
  sort(o?: { readonly axis?: number }) { return sort(this, o); },
  argsort(o?: { readonly axis?: number }) { return argsort(this, o); },
  transpose(...axes: number[]) { return transpose(this, axes); },
  get(...index: IndexEntry[]) { return get(this, ...index); },

  dot(y: TensorLike) { return dot(this, y); },
  matmul(y: TensorLike) { return matmul(this, y); },
};

for (const cls of [TensorVariable, TensorConstant, TensorSharedVariable]) {
  for (const [name, fn] of Object.entries(methods)) {
    Object.defineProperty(cls.prototype, name, { value: fn, writable: true, configurable: true });
  }
  Object.defineProperty(cls.prototype, 'T', {
    get(this: TensorVariable) { return transpose(this); },
    configurable: true,
  });
  Object.defineProperty(cls.prototype, 'shape', {
    get(this: TensorVariable) { return shape(this); },
    configurable: true,
  });
}
