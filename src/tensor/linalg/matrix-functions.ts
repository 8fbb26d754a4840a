// pt.linalg's functions of matrices built on the other ops: pinv (an op of its own, for its
// gradient, with NumPy's cutoff), lstsq, norm (NumPy's vector and matrix orders), matrixPower
// (by repeated squaring) and kron (an outer product reshaped). Their gradients follow from the
// ops they are made of, except pinv's (Golub and Pereyra's formula, as PyTensor's).
import { Apply } from '../../graph/apply.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import type { SymbolicShape } from '../../graph/op.js';
import { propKinds } from '../../graph/prop-kinds.js';
import type { Variable } from '../../graph/variable.js';
import type { KernelParams } from '../../kernels/registry.js';
import type { TensorView } from '../../kernels/view.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { abs, add, cast, gt, maximum, mul, neg, neq, pow, sqr, sqrt, sub } from '../elemwise/math.js';
import { max, min, normalizeAxes, sum } from '../elemwise/reduce.js';
import { broadcastTo } from '../shape/alloc.js';
import { eye } from '../shape/creation.js';
import { dimshuffle } from '../shape/dimshuffle.js';
import { reshape } from '../shape/reshape.js';
import { shapeOf } from '../shape/shape.js';
import { svd } from './decompositions.js';
import { BatchedMatrixOp, floatOf, inv, matrixInput, mT } from './dense.js';
import { matmul } from './linalg.js';

const EPS64 = 2 ** -52;

/** pinv(x): the Moore-Penrose pseudo-inverse (n x m) of each m x n matrix. */
export class Pinv extends BatchedMatrixOp {
  static override readonly props = ['rcond', 'timesLength'] as const;
  static override readonly propKinds = { rcond: propKinds.number(), timesLength: propKinds.boolean() };
  protected readonly kernelName = 'pinv';
  protected readonly title = 'pinv';

  /** Singular values at most rcond times the largest (and times max(m, n) with timesLength, lstsq's cutoff) count as zero. */
  constructor(
    readonly rcond: number,
    readonly timesLength = false,
  ) {
    super();
  }

  protected override kernelParams(): KernelParams {
    return { rcond: this.rcond, timesLength: this.timesLength };
  }

  protected workPerMatrix([a]: readonly (readonly number[])[]): number {
    const [m, n] = a!.slice(-2) as [number, number];
    return 17 * Math.max(m, n) * Math.min(m, n) ** 2;
  }

  override makeNode(x: unknown): Apply {
    const v = matrixInput('pinv', x);
    const [m, n] = v.type.shape.slice(-2);
    return new Apply(this, [v], [new TensorType(floatOf(v), [...v.type.shape.slice(0, -2), n!, m!]).makeVariable()]);
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    const s = x!.shape;
    return [[...s.slice(0, -2), s[s.length - 1]!, s[s.length - 2]!]];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [[...xs!.slice(0, -2), xs![xs!.length - 1]!, xs![xs!.length - 2]!]];
  }

  override Lop([x]: readonly TensorVariable[], [z]: readonly TensorVariable[], [gz]: readonly Variable[]): Variable[] {
    // dZ = -Z dX Z + Z Z^T dX^T (I - X Z) + (I - Z X) dX^T Z^T Z, so
    // gX = -Z^T G Z^T + (I - X Z) G^T Z Z^T + Z^T Z G^T (I - Z X).
    const X = x!;
    const Z = z!;
    const G = gz as TensorVariable;
    const [m, n] = shapeOf(X).slice(-2) as [TensorVariable, TensorVariable];
    const leftResidual = sub(eye(m, m, 0, Z.dtype), matmul(X, Z));
    const rightResidual = sub(eye(n, n, 0, Z.dtype), matmul(Z, X));
    const first = neg(matmul(matmul(mT(Z), G), mT(Z)));
    const second = matmul(matmul(leftResidual, mT(G)), matmul(Z, mT(Z)));
    const third = matmul(matmul(mT(Z), Z), matmul(mT(G), rightResidual));
    return [add(add(first, second), third)];
  }

  override toString(): string {
    return 'Pinv';
  }
}

/** NumPy's default cutoff for pinv: 1e-15 times the largest singular value. */
export function pinv(x: TensorLike, options: { readonly rcond?: number } = {}): TensorVariable {
  const rcond = options.rcond ?? 1e-15;
  if (!(rcond >= 0)) throw new RangeError(`pinv: rcond must be a non-negative number, got ${rcond}`);
  return new Pinv(rcond).call(x) as TensorVariable;
}

/**
 * NumPy's lstsq: [x, residuals, rank, s] with x minimizing |b - a x| (the minimum-norm one when a
 * is rank-deficient), from one matrix a (m x n) and b of shape [m] or [m, k]. rcond defaults to
 * NumPy's eps * max(m, n). Unlike NumPy, residuals are always the squared residual sums (per
 * column of b), also where NumPy returns an empty array (rank < n or m <= n).
 */
export function lstsq(a: TensorLike, b: TensorLike, options: { readonly rcond?: number } = {}): [TensorVariable, TensorVariable, TensorVariable, TensorVariable] {
  const av = asTensorVariable(a);
  const bv = asTensorVariable(b);
  if (av.ndim !== 2) throw new TypeError(`lstsq: a must be a matrix, got ${av} (${av.type})`);
  if (bv.ndim !== 1 && bv.ndim !== 2) throw new TypeError(`lstsq: b must be a vector or a matrix, got ${bv} (${bv.type})`);
  const [m, n] = av.type.shape;
  const rows = bv.type.shape[0];
  if (m !== null && rows !== null && m !== rows) throw new RangeError(`lstsq: a ${av} (${av.type}) has ${m} rows but b ${bv} (${bv.type}) has ${rows}`);
  const s = svd(av, { computeUv: false });
  // NumPy's default cutoff, eps * max(m, n) relative to the largest singular value.
  const z = new Pinv(options.rcond ?? EPS64, options.rcond === undefined).call(av) as TensorVariable;
  const x = matmul(z, bv);
  const residuals = sum(sqr(sub(bv, matmul(av, x))), 0);
  const [rowsOf, colsOf] = shapeOf(av);
  const rcond = options.rcond ?? mul(EPS64, cast(maximum(rowsOf!, colsOf!), s.dtype));
  const rank = sum(gt(s, mul(rcond, max(s))));
  return [x, residuals, cast(rank, 'int32'), s];
}

type VectorOrd = number;
type MatrixOrd = number | 'fro' | 'nuc';

export interface NormOptions {
  /** NumPy's ord: for vectors a number (Infinity, -Infinity, 0, p); for matrices 'fro', 'nuc', Infinity, -Infinity, 1, -1, 2, -2. */
  readonly ord?: MatrixOrd;
  /** One axis (vector norms) or two (matrix norms); by default all of a vector's, or a matrix's two, or (with no ord) all axes flattened. */
  readonly axis?: number | readonly [number, number];
  readonly keepdims?: boolean;
}

/** The norm of x as NumPy's linalg.norm. */
export function norm(x: TensorLike, options: NormOptions = {}): TensorVariable {
  const v = asTensorVariable(x);
  const { ord, keepdims = false } = options;
  if (options.axis === undefined) {
    if (ord === undefined) {
      const r = sqrt(sum(sqr(v)));
      return keepdims ? keptAxes(r, v.ndim, [...Array(v.ndim).keys()]) : r;
    }
    if (v.ndim === 1) return norm(v, { ord, axis: 0, keepdims });
    if (v.ndim === 2) return norm(v, { ord, axis: [0, 1], keepdims });
    throw new TypeError(`norm: with an ord, x must be a vector or a matrix unless axis is given, got ${v} (${v.type})`);
  }
  const axes = normalizeAxes(typeof options.axis === 'number' ? options.axis : [...options.axis], v.ndim, 'norm');
  if (axes.length === 1) {
    if (typeof ord === 'string') throw new RangeError(`norm: the order ${JSON.stringify(ord)} is for matrices; a vector norm takes a number`);
    const r = vectorNorm(v, axes[0]!, ord);
    return keepdims ? keptAxes(r, v.ndim, axes) : r;
  }
  if (axes.length !== 2 || axes[0] === axes[1]) throw new RangeError(`norm: axis must be one axis or two different axes, got ${JSON.stringify(options.axis)}`);
  const r = matrixNorm(v, axes[0]!, axes[1]!, ord);
  return keepdims ? keptAxes(r, v.ndim, axes) : r;
}

function vectorNorm(v: TensorVariable, axis: number, ord: VectorOrd | undefined): TensorVariable {
  const a = abs(v);
  if (ord === undefined || ord === 2) return sqrt(sum(sqr(v), axis));
  if (ord === Infinity) return max(a, axis);
  if (ord === -Infinity) return min(a, axis);
  if (ord === 0) return sum(cast(neq(v, 0), floatOf(v)), axis);
  if (ord === 1) return sum(a, axis);
  if (!Number.isFinite(ord)) throw new RangeError(`norm: invalid order ${ord} for vectors`);
  return pow(sum(pow(a, ord), axis), 1 / ord);
}

function matrixNorm(v: TensorVariable, rowAxis: number, colAxis: number, ord: MatrixOrd | undefined): TensorVariable {
  if (ord === undefined || ord === 'fro') return sqrt(sum(sqr(v), [rowAxis, colAxis]));
  const a = abs(v);
  // Reducing the first of two axes shifts the second down when it came after.
  const after = (reduced: number, other: number): number => (other > reduced ? other - 1 : other);
  switch (ord) {
    case Infinity:
      return max(sum(a, colAxis), after(colAxis, rowAxis));
    case -Infinity:
      return min(sum(a, colAxis), after(colAxis, rowAxis));
    case 1:
      return max(sum(a, rowAxis), after(rowAxis, colAxis));
    case -1:
      return min(sum(a, rowAxis), after(rowAxis, colAxis));
    case 2:
    case -2:
    case 'nuc': {
      const rest = [...Array(v.ndim).keys()].filter((d) => d !== rowAxis && d !== colAxis);
      const s = svd(dimshuffle(v, [...rest, rowAxis, colAxis]), { computeUv: false });
      return ord === 'nuc' ? sum(s, -1) : ord === 2 ? max(s, -1) : min(s, -1);
    }
    default:
      throw new RangeError(`norm: invalid order ${JSON.stringify(ord)} for matrices (expected 'fro', 'nuc', Infinity, -Infinity, 1, -1, 2 or -2)`);
  }
}

/** r (x reduced over `axes`) with those axes back as length 1. */
function keptAxes(r: TensorVariable, ndim: number, axes: readonly number[]): TensorVariable {
  let k = 0;
  return dimshuffle(r, [...Array(ndim).keys()].map((d) => (axes.includes(d) ? 'x' : k++)));
}

/** x to the integer power n, matrix by matrix (NumPy's matrix_power): squarings and products; n < 0 through inv(x); n = 0 the identity. */
export function matrixPower(x: TensorLike, n: number): TensorVariable {
  const v = asTensorVariable(x);
  if (!Number.isInteger(n)) throw new TypeError(`matrixPower: n must be an integer, got ${n}`);
  if (v.ndim < 2) throw new TypeError(`matrixPower: expected a matrix or a batch of matrices (at least 2 axes), got ${v} (${v.type})`);
  const [r, c] = v.type.shape.slice(-2);
  if (r !== null && c !== null && r !== c) throw new RangeError(`matrixPower: the matrix ${v} (${v.type}) is not square`);
  if (n === 0) {
    const k = shapeOf(v)[v.ndim - 1]!;
    return broadcastTo(eye(k, k, 0, v.dtype), shapeOf(v));
  }
  let base = n < 0 ? inv(v) : v;
  let result: TensorVariable | undefined;
  for (let e = Math.abs(n); e > 0; e = Math.floor(e / 2)) {
    if (e % 2 === 1) result = result === undefined ? base : matmul(result, base);
    if (e > 1) base = matmul(base, base);
  }
  return result!;
}

/** The Kronecker product of a and b (NumPy's kron; the one with fewer axes gets leading axes of length 1). */
export function kron(a: TensorLike, b: TensorLike): TensorVariable {
  let av = asTensorVariable(a);
  let bv = asTensorVariable(b);
  if (av.ndim + bv.ndim <= 2) throw new TypeError(`kron: the inputs' axes must number 3 or more together (as PyTensor's), got ${av} (${av.type}) and ${bv} (${bv.type})`);
  const nd = Math.max(av.ndim, bv.ndim);
  const lead = (x: TensorVariable): TensorVariable => dimshuffle(x, [...Array<'x'>(nd - x.ndim).fill('x'), ...x.type.shape.keys()]);
  [av, bv] = [lead(av), lead(bv)];
  // Axes interleaved: a's axis i at 2i, b's at 2i + 1; then each pair merged.
  const outer = mul(dimshuffle(av, [...Array(nd).keys()].flatMap((i) => [i, 'x' as const])), dimshuffle(bv, [...Array(nd).keys()].flatMap((i) => ['x' as const, i])));
  const [sa, sb] = [shapeOf(av), shapeOf(bv)];
  return reshape(outer, sa.map((d, i) => mul(d, sb[i]!)));
}

registerOpCodec(Pinv);
