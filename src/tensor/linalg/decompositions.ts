// pt.linalg's decompositions, batched over leading axes as NumPy's: qr, eigh, svd, lu, and the
// matrix exponential expm. Kernels: kernels/decompositions.ts. Gradients as PyTensor's where it
// has them (QR's for every shape in reduced and 'r' modes, eigh's in both outputs, the SVD's by
// Townsend (2016) without full matrices, LU's for square matrices); expm's is exact: the
// upper-right block of expm([[A^T, G], [0, A^T]]) (the adjoint of its Frechet derivative).
import { Apply } from '../../graph/apply.js';
import { isDisconnected } from '../../graph/gradient.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import type { SymbolicShape } from '../../graph/op.js';
import { propKinds } from '../../graph/prop-kinds.js';
import type { Variable } from '../../graph/variable.js';
import type { KernelParams } from '../../kernels/registry.js';
import type { TensorView } from '../../kernels/view.js';
import { slice, type Slice } from '../core/slice.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { add, minimum, mul, reciprocal, sqr, sub, trueDiv } from '../elemwise/math.js';
import { concatenate } from '../shape/join.js';
import { diagonal, tril, triu } from '../shape/masks.js';
import { eye } from '../shape/creation.js';
import { zerosLike } from '../shape/alloc.js';
import { dimshuffle } from '../shape/dimshuffle.js';
import { shapeOf } from '../shape/shape.js';
import { get } from '../shape/subtensor.js';
import { BatchedMatrixOp, checkSquare, floatOf, foldIntoTriangle, matrixInput, mT, padRight, solveTriangular, squareInput, symmetricFromTriangle } from './dense.js';
import { matmul } from './linalg.js';

/** The last two axes of a shape. */
const matrixDims = (shape: readonly number[]): [number, number] => [shape[shape.length - 2]!, shape[shape.length - 1]!];

/** x[..., rows, cols]: slices of the last two axes of a batch of matrices. */
function block(x: TensorVariable, rows: Slice, cols: Slice): TensorVariable {
  return get(x, ...Array.from({ length: x.ndim - 2 }, () => slice(null, null)), rows, cols);
}
const all = (): Slice => slice(null, null);

/** Matrices with the vectors of `v` ([..., k]) on their diagonals ([..., k, k]). */
function diagMatrix(v: TensorVariable, k: TensorVariable | number): TensorVariable {
  return mul(padRight(v, 1), eye(k, k, 0, v.dtype));
}

/** The vectors of d ([..., k]) as rows ([..., 1, k]). */
function rowVector(d: TensorVariable): TensorVariable {
  return dimshuffle(d, [...[...Array(d.ndim - 1).keys()], 'x', d.ndim - 1]);
}

/** F with F[i][j] = 1 / (d[j] - d[i]) off the diagonal and 0 on it, for the vectors d ([..., k]). */
function inverseGaps(d: TensorVariable, k: TensorVariable | number): TensorVariable {
  const gaps = sub(rowVector(d), padRight(d, 1));
  // Adding I keeps the diagonal finite; subtracting it afterwards makes it 0.
  const identity = eye(k, k, 0, d.dtype);
  return sub(reciprocal(add(gaps, identity)), identity);
}

/** The length of the last axis of x, static where known. */
const lastLength = (x: TensorVariable): TensorVariable | number => x.type.shape[x.ndim - 1] ?? shapeOf(x)[x.ndim - 1]!;

export type QrMode = 'reduced' | 'complete' | 'r';

/**
 * A factorization of an m x n matrix (or a batch): its outputs' shapes are functions of m, n and
 * k = min(m, n), the same whether the lengths are static (null when unknown), actual or symbolic.
 */
abstract class FactorizationOp extends BatchedMatrixOp {
  /** The outputs' shapes (without the batch), in order. */
  protected abstract itemShapes<T>(m: T, n: T, k: T): T[][];

  override makeNode(x: unknown): Apply {
    const v = matrixInput(this.title, x);
    const batch = v.type.shape.slice(0, -2);
    const [m, n] = v.type.shape.slice(-2) as [number | null, number | null];
    const k = m !== null && n !== null ? Math.min(m, n) : null;
    return new Apply(this, [v], this.itemShapes(m, n, k).map((s) => new TensorType(floatOf(v), [...batch, ...s]).makeVariable()));
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    const [m, n] = matrixDims(x!.shape);
    return this.itemShapes(m, n, Math.min(m, n)).map((s) => [...x!.shape.slice(0, -2), ...s]);
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    const [m, n] = xs!.slice(-2) as [TensorVariable, TensorVariable];
    return this.itemShapes(m, n, minimum(m, n)).map((s) => [...xs!.slice(0, -2), ...s]);
  }
}

/** qr(x): [Q, R] (reduced: m x k, k x n with k = min(m, n); complete: m x m, m x n) or R alone (mode 'r', k x n). */
export class QR extends FactorizationOp {
  static override readonly props = ['mode'] as const;
  static override readonly propKinds = { mode: propKinds.oneOf<QrMode>(['reduced', 'complete', 'r']) };
  protected readonly kernelName = 'qr';
  protected readonly title = 'qr';

  constructor(readonly mode: QrMode) {
    super();
  }

  protected override kernelParams(): KernelParams {
    return { mode: this.mode };
  }

  protected workPerMatrix([a]: readonly (readonly number[])[]): number {
    const [m, n] = matrixDims(a!);
    return m * n * Math.min(m, n) * (this.mode === 'r' ? 1 : 2);
  }

  /** [Q's shape, R's shape], or R's alone in mode 'r'. */
  protected itemShapes<T>(m: T, n: T, k: T): T[][] {
    if (this.mode === 'r') return [[k, n]];
    return this.mode === 'complete' ? [[m, m], [m, n]] : [[m, k], [k, n]];
  }

  override Lop([a]: readonly TensorVariable[], outputs: readonly TensorVariable[], grads: readonly Variable[]): Variable[] {
    const x = a!;
    const [m, n] = x.type.shape.slice(-2);
    // Complete Q of a tall matrix has columns A does not determine smoothly (PyTensor's rule too);
    // with shapes known only at run time, the triangular solve below then fails on R not being square.
    if (this.mode === 'complete' && m !== null && n !== null && m > n) {
      throw new TypeError(`qr: the gradient of mode 'complete' is defined for matrices with no more rows than columns only (as PyTensor's); ${x} (${x.type}) has more`);
    }
    const [Q, R] = this.mode === 'r' ? (new QR('reduced').call(x) as unknown as TensorVariable[]) : [outputs[0]!, outputs[1]!];
    const gradOf = (g: Variable | undefined, like: TensorVariable): TensorVariable => (g === undefined || isDisconnected(g) ? zerosLike(like) : (g as TensorVariable));
    const gQ = this.mode === 'r' ? zerosLike(Q!) : gradOf(grads[0], Q!);
    const gR = gradOf(grads[this.mode === 'r' ? 0 : 1], R!);
    // A = [X | Y] with X its first min(m, n) columns: R = [U | V], X = Q U with U square (PyTensor's
    // split for wide matrices; a tall one has no Y, and then U = R).
    const k = lastLength(Q!);
    const Y = block(x, all(), slice(k, null));
    const U = block(R!, all(), slice(null, k));
    const gV = block(gR, all(), slice(k, null));
    const gX = squareQrGrad(Q!, U, add(gQ, matmul(Y, mT(gV))), block(gR, all(), slice(null, k)));
    return [concatenate([gX, matmul(Q!, gV)], -1)];
  }

  override toString(): string {
    return `QR{${this.mode}}`;
  }
}

/** The gradient of X = Q R with R square (PyTensor's _qr_grad_square_and_deep): b R^-T, b = gQ + Q copyltu(R gR^T - gQ^T Q). */
function squareQrGrad(Q: TensorVariable, R: TensorVariable, gQ: TensorVariable, gR: TensorVariable): TensorVariable {
  const M = sub(matmul(R, mT(gR)), matmul(mT(gQ), Q));
  const copyltu = add(tril(M), mT(tril(M, -1)));
  const b = add(gQ, matmul(Q, copyltu));
  return mT(solveTriangular(R, mT(b), { lower: false }));
}

/** eigh(x): [w, v], the eigenvalues (ascending) and eigenvectors (columns) of the symmetric matrix read from its lower (or upper) triangle. */
export class Eigh extends BatchedMatrixOp {
  static override readonly props = ['lower'] as const;
  static override readonly propKinds = { lower: propKinds.boolean() };
  protected readonly kernelName = 'eigh';
  protected readonly title = 'eigh';

  constructor(readonly lower: boolean) {
    super();
  }

  protected override kernelParams(): KernelParams {
    return { lower: this.lower };
  }

  protected override outputItemAxes(): number {
    return 1;
  }

  protected workPerMatrix([a]: readonly (readonly number[])[]): number {
    // About 8 sweeps of n^2 / 2 rotations, each 6n multiply-adds.
    return 24 * a![a!.length - 1]! ** 3;
  }

  override makeNode(x: unknown): Apply {
    const v = squareInput('eigh', x);
    const dtype = floatOf(v);
    return new Apply(this, [v], [new TensorType(dtype, v.type.shape.slice(0, -1)).makeVariable(), new TensorType(dtype, v.type.shape).makeVariable()]);
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    checkSquare('eigh', x!.shape);
    return [x!.shape.slice(0, -1), [...x!.shape]];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [xs!.slice(0, -1), xs!];
  }

  override Lop(_inputs: readonly TensorVariable[], [w, v]: readonly TensorVariable[], [gw, gv]: readonly Variable[]): Variable[] {
    // g = V (diag(gw) + F o (V^T gV)) V^T, F[i][j] = 1 / (w[j] - w[i]); a function of one triangle, so folded into it.
    const n = lastLength(w!);
    const parts: TensorVariable[] = [];
    if (!isDisconnected(gw!)) parts.push(diagMatrix(gw as TensorVariable, n));
    if (!isDisconnected(gv!)) parts.push(mul(inverseGaps(w!, n), matmul(mT(v!), gv as TensorVariable)));
    const inner = parts.length === 2 ? add(parts[0]!, parts[1]!) : parts[0]!;
    return [foldIntoTriangle(matmul(matmul(v!, inner), mT(v!)), this.lower)];
  }

  override rop([a]: readonly TensorVariable[], [da]: readonly TensorVariable[]): Variable[] {
    // With C = V^T dA V: dw = diag(C), dV = V (F o C), F[i][j] = 1 / (w[j] - w[i]).
    const [w, v] = this.call(a!) as unknown as TensorVariable[];
    const C = matmul(matmul(mT(v!), symmetricFromTriangle(da!, this.lower)), v!);
    return [diagonal(C, { axis1: -2, axis2: -1 }), matmul(v!, mul(inverseGaps(w!, lastLength(w!)), C))];
  }

  override toString(): string {
    return `Eigh{${this.lower ? 'lower' : 'upper'}}`;
  }
}

/** svd(x): [U, s, Vh] with x = U diag(s) Vh, s descending (U m x m and Vh n x n with fullMatrices, else m x k and k x n), or s alone. */
export class SVD extends FactorizationOp {
  static override readonly props = ['fullMatrices', 'computeUv'] as const;
  static override readonly propKinds = { fullMatrices: propKinds.boolean(), computeUv: propKinds.boolean() };
  protected readonly kernelName = 'svd';
  protected readonly title = 'svd';

  constructor(
    readonly fullMatrices: boolean,
    readonly computeUv: boolean,
  ) {
    super();
  }

  protected override kernelParams(): KernelParams {
    return { fullMatrices: this.fullMatrices, computeUv: this.computeUv };
  }

  protected override outputItemAxes(): number {
    return this.computeUv ? 2 : 1;
  }

  protected workPerMatrix([a]: readonly (readonly number[])[]): number {
    const [m, n] = matrixDims(a!);
    // About 8 sweeps of k^2 / 2 column pairs, each 3 max(m, n) + 2 k multiply-adds.
    return 16 * Math.max(m, n) * Math.min(m, n) ** 2;
  }

  /** [U's, s's, Vh's shapes], or s's alone without computeUv. */
  protected itemShapes<T>(m: T, n: T, k: T): T[][] {
    if (!this.computeUv) return [[k]];
    return [this.fullMatrices ? [m, m] : [m, k], [k], this.fullMatrices ? [n, n] : [k, n]];
  }

  override Lop([a]: readonly TensorVariable[], outputs: readonly TensorVariable[], grads: readonly Variable[]): Variable[] {
    if (!this.computeUv) {
      // s alone: gA = U diag(gs) Vh.
      const [U, , Vh] = new SVD(false, true).call(a!) as unknown as TensorVariable[];
      return [matmul(mul(U!, rowVector(grads[0] as TensorVariable)), Vh!)];
    }
    if (this.fullMatrices) throw new TypeError(`svd: the gradient with fullMatrices is not defined (as PyTensor's); use svd(x, { fullMatrices: false })`);
    const [U, s, Vh] = outputs as [TensorVariable, TensorVariable, TensorVariable];
    const [gU, gs, gVh] = grads;
    const V = mT(Vh);
    const k = lastLength(s);
    const F = inverseGaps(sqr(s), k);
    let inner: TensorVariable | undefined = isDisconnected(gs!) ? undefined : diagMatrix(gs as TensorVariable, k);
    const plus = (x: TensorVariable): TensorVariable => (inner = inner === undefined ? x : add(inner, x));
    let outside: TensorVariable | undefined;
    const also = (x: TensorVariable): TensorVariable => (outside = outside === undefined ? x : add(outside, x));
    if (!isDisconnected(gU!)) {
      const g = gU as TensorVariable;
      const UtG = matmul(mT(U), g);
      // (F o (U^T gU - gU^T U)) S, and (I - U U^T) gU S^-1 V^T.
      plus(mul(mul(F, sub(UtG, mT(UtG))), rowVector(s)));
      also(matmul(trueDiv(sub(g, matmul(U, UtG)), rowVector(s)), Vh));
    }
    if (!isDisconnected(gVh!)) {
      const g = mT(gVh as TensorVariable);
      const VtG = matmul(mT(V), g);
      // S (F o (V^T gV - gV^T V)), and U S^-1 gV^T (I - V V^T).
      plus(mul(padRight(s, 1), mul(F, sub(VtG, mT(VtG)))));
      also(matmul(trueDiv(U, rowVector(s)), sub(mT(g), matmul(mT(VtG), Vh))));
    }
    const core = inner === undefined ? undefined : matmul(matmul(U, inner), Vh);
    return [core === undefined ? outside! : outside === undefined ? core : add(core, outside)];
  }

  override toString(): string {
    return `SVD{${this.fullMatrices ? 'full' : 'reduced'}${this.computeUv ? '' : ', s only'}}`;
  }
}

/** lu(x): [P, L, U] with x = P L U (SciPy's lu): P m x m a permutation, L m x k unit lower, U k x n upper. */
export class LU extends FactorizationOp {
  protected readonly kernelName = 'luDecomposition';
  protected readonly title = 'lu';

  protected workPerMatrix([a]: readonly (readonly number[])[]): number {
    const [m, n] = matrixDims(a!);
    return (m * n * Math.min(m, n)) / 3;
  }

  protected itemShapes<T>(m: T, n: T, k: T): T[][] {
    return [[m, m], [m, k], [k, n]];
  }

  override Lop([a]: readonly TensorVariable[], [P, L, U]: readonly TensorVariable[], [, gL, gU]: readonly Variable[]): Variable[] {
    const [m, n] = a!.type.shape.slice(-2);
    // Shapes known only at run time: a rectangular one fails there, in the triangular solves.
    if (m !== null && n !== null && m !== n) throw new TypeError(`lu: the gradient is defined for square matrices only; ${a} (${a!.type}) is not square`);
    // A = P L U: gA = P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T (P is piecewise constant).
    const parts: TensorVariable[] = [];
    if (!isDisconnected(gL!)) parts.push(tril(matmul(mT(L!), gL as TensorVariable), -1));
    if (!isDisconnected(gU!)) parts.push(triu(matmul(gU as TensorVariable, mT(U!))));
    const inner = parts.length === 2 ? add(parts[0]!, parts[1]!) : (parts[0] ?? zerosLike(a!));
    const left = solveTriangular(L!, inner, { lower: true, trans: 'T', unitDiagonal: true }); // L^-T inner
    const both = mT(solveTriangular(U!, mT(left), { lower: false })); // left U^-T
    return [matmul(P!, both)];
  }

  override connectionPattern(): boolean[][] {
    return [[false, true, true]];
  }

  override toString(): string {
    return 'LU';
  }
}

/** expm(x): the matrix exponential of each square matrix. */
export class Expm extends BatchedMatrixOp {
  protected readonly kernelName = 'expm';
  protected readonly title = 'expm';

  protected workPerMatrix([a]: readonly (readonly number[])[]): number {
    return 10 * a![a!.length - 1]! ** 3;
  }

  override makeNode(x: unknown): Apply {
    const v = squareInput('expm', x);
    return new Apply(this, [v], [new TensorType(floatOf(v), v.type.shape).makeVariable()]);
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    checkSquare('expm', x!.shape);
    return [[...x!.shape]];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [xs!];
  }

  override Lop([a]: readonly TensorVariable[], _outputs: readonly TensorVariable[], [gz]: readonly Variable[]): Variable[] {
    // expm([[A^T, G], [0, A^T]]) = [[e^(A^T), L], [0, e^(A^T)]], L the Frechet derivative of expm at A^T in G: the gradient.
    const at = mT(a!);
    const g = gz as TensorVariable;
    const big = concatenate([concatenate([at, g], -1), concatenate([zerosLike(at), at], -1)], -2);
    const n = lastLength(a!);
    return [block(expm(big), slice(null, n), slice(n, null))];
  }

  override rop([a]: readonly TensorVariable[], [da]: readonly TensorVariable[]): Variable[] {
    // The Frechet derivative L(A, dA): the upper-right block of expm([[A, dA], [0, A]]).
    const big = concatenate([concatenate([a!, da!], -1), concatenate([zerosLike(a!), a!], -1)], -2);
    const n = lastLength(a!);
    return [block(expm(big), slice(null, n), slice(n, null))];
  }

  override toString(): string {
    return 'Expm';
  }
}

export interface QrOptions {
  /** 'reduced' (default): Q m x k, R k x n; 'complete': Q m x m, R m x n; 'r': R alone (k x n). */
  readonly mode?: QrMode;
}

export function qr(x: TensorLike, options: { readonly mode: 'r' }): TensorVariable;
export function qr(x: TensorLike, options?: QrOptions): [TensorVariable, TensorVariable];
export function qr(x: TensorLike, options: QrOptions = {}): TensorVariable | [TensorVariable, TensorVariable] {
  const mode = options.mode ?? 'reduced';
  if (mode !== 'reduced' && mode !== 'complete' && mode !== 'r') throw new TypeError(`qr: mode must be 'reduced', 'complete' or 'r', got ${JSON.stringify(mode)}`);
  return new QR(mode).call(x) as unknown as TensorVariable | [TensorVariable, TensorVariable];
}

/** [w, v]: the eigenvalues (ascending) and eigenvectors of a symmetric matrix, read from its lower triangle (UPLO 'L', NumPy's default) or upper. */
export function eigh(x: TensorLike, options: { readonly UPLO?: 'L' | 'U' } = {}): [TensorVariable, TensorVariable] {
  const uplo = options.UPLO ?? 'L';
  if (uplo !== 'L' && uplo !== 'U') throw new TypeError(`eigh: UPLO must be 'L' or 'U', got ${JSON.stringify(uplo)}`);
  return new Eigh(uplo === 'L').call(x) as unknown as [TensorVariable, TensorVariable];
}

export interface SvdOptions {
  /** U m x m and Vh n x n (default true, as NumPy); false: m x k and k x n. */
  readonly fullMatrices?: boolean;
  /** Compute U and Vh (default true); false: s alone. */
  readonly computeUv?: boolean;
}

export function svd(x: TensorLike, options: SvdOptions & { readonly computeUv: false }): TensorVariable;
export function svd(x: TensorLike, options?: SvdOptions): [TensorVariable, TensorVariable, TensorVariable];
export function svd(x: TensorLike, options: SvdOptions = {}): TensorVariable | [TensorVariable, TensorVariable, TensorVariable] {
  return new SVD(options.fullMatrices ?? true, options.computeUv ?? true).call(x) as unknown as TensorVariable | [TensorVariable, TensorVariable, TensorVariable];
}

/** [P, L, U] with x = P L U (SciPy's lu). */
export function lu(x: TensorLike): [TensorVariable, TensorVariable, TensorVariable] {
  return new LU().call(x) as unknown as [TensorVariable, TensorVariable, TensorVariable];
}

export function expm(x: TensorLike): TensorVariable {
  return new Expm().call(x) as TensorVariable;
}

registerOpCodec(QR);
registerOpCodec(Eigh);
registerOpCodec(SVD);
registerOpCodec(LU);
registerOpCodec(Expm);
