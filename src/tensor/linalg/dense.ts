// pt.linalg's dense ops on square matrices, batched over leading axes as NumPy's: inv, det,
// slogdet, solve (general, or symmetric / positive definite from one triangle), solveTriangular,
// cholesky and choSolve. Kernels: kernels/dense-linalg.ts (float64 work, one task per call).
// Gradients as PyTensor's: inv's -X^T gz X^T, det's gz det A^-T, slogdet's gz A^-T, solve's in
// both arguments, solveTriangular's masked to the triangle it reads, cholesky's by Murray's
// formula (2016); ops that read one triangle fold their gradient into it.
import { Apply } from '../../graph/apply.js';
import { disconnected, isDisconnected } from '../../graph/gradient.js';
import type { KernelCall, KernelContext, SymbolicShape } from '../../graph/op.js';
import type { KernelParams } from '../../kernels/registry.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { propKinds } from '../../graph/prop-kinds.js';
import type { Variable } from '../../graph/variable.js';
import { BLOCKED_MIN, choleskySteps, luSolveSteps } from '../../kernels/blocked-linalg.js';
import type { Expansion } from '../../kernels/expansion.js';
import { sizeOf, type TensorView } from '../../kernels/view.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { upcast, upgradeToFloat } from '../core/dtype.js';
import { shapeText } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { add, mul, neg, sub } from '../elemwise/math.js';
import { sum } from '../elemwise/reduce.js';
import { swapaxes } from '../shape/axes.js';
import { dimshuffle } from '../shape/dimshuffle.js';
import { eye } from '../shape/creation.js';
import { tril, triu } from '../shape/masks.js';
import { shapeOf } from '../shape/shape.js';
import { matmul } from './linalg.js';

/** The last two axes swapped (the transpose of each matrix of a batch). */
export const mT = (x: TensorVariable): TensorVariable => swapaxes(x, -2, -1);

/** x with new axes of length 1 at the end (a batch of scalars or vectors against matrices). */
export function padRight(x: TensorVariable, count: number): TensorVariable {
  return dimshuffle(x, [...[...Array(x.ndim).keys()], ...Array<'x'>(count).fill('x')]);
}

/** The gradient of a function that reads one triangle of A (and so A symmetric), from its gradient g for a full A. */
export function foldIntoTriangle(g: TensorVariable, lower: boolean): TensorVariable {
  const both = add(g, mT(g));
  // The diagonal was counted twice.
  return sub(lower ? tril(both) : triu(both), tril(triu(g)));
}

/** A matrix or a batch of them. */
export function matrixInput(op: string, x: unknown): TensorVariable {
  const v = asTensorVariable(x as TensorLike);
  if (v.ndim < 2) throw new TypeError(`${op}: expected a matrix or a batch of matrices (at least 2 axes), got ${v} (${v.type})`);
  return v;
}

/** The symmetric matrix a function reading one triangle of dA sees: that triangle mirrored. */
export function symmetricFromTriangle(dA: TensorVariable, lower: boolean): TensorVariable {
  return lower ? add(tril(dA), mT(tril(dA, -1))) : add(triu(dA), mT(triu(dA, 1)));
}

/** The traces of the matrices of a batch. */
function traces(x: TensorVariable): TensorVariable {
  return sum(mul(x, eye(shapeOf(x)[x.ndim - 1]!, null, 0, x.dtype)), [x.ndim - 2, x.ndim - 1]);
}

/** A square matrix or a batch of them, checked where the static shape says. */
export function squareInput(op: string, x: unknown): TensorVariable {
  const v = matrixInput(op, x);
  const [r, c] = v.type.shape.slice(-2);
  if (r !== null && c !== null && r !== c) throw new RangeError(`${op}: the matrix ${v} (${v.type}) is not square`);
  return v;
}

export function checkSquare(op: string, shape: readonly number[]): void {
  const [r, c] = shape.slice(-2);
  if (r !== c) throw new RangeError(`${op}: the matrix of shape ${shapeText(shape)} is not square`);
}

export const floatOf = (...vs: TensorVariable[]): TensorType['dtype'] => upgradeToFloat(upcast(...vs.map((v) => v.dtype)));

/**
 * An op whose kernel walks a batch of matrices: a batched call is cut into tasks of whole
 * matrices (chunks of the first output's first batch axis), each task's work the multiply-adds
 * of its matrices, so that planners give a worker about as much factoring as a plain loop task.
 */
export abstract class BatchedMatrixOp extends TensorOp {
  protected abstract readonly kernelName: string;
  protected abstract readonly title: string;

  protected kernelParams(): KernelParams {
    return {};
  }

  /** How many trailing axes of the first output are not batch axes (a matrix: 2, a vector: 1, a scalar: 0). */
  protected outputItemAxes(): number {
    return 2;
  }

  /** Multiply-adds (about) of one matrix of the batch, from the node's input shapes. */
  protected abstract workPerMatrix(inputs: readonly (readonly number[])[]): number;

  override kernel(node: Apply, context?: KernelContext): KernelCall {
    const batched = (node.outputs[0]!.type as TensorType).ndim > this.outputItemAxes();
    const call = { name: this.kernelName, params: { op: this.title, ...this.kernelParams() }, chunking: batched ? ({ by: 'rows' } as const) : ({ by: 'none' } as const) };
    if (context === undefined) return call;
    const shapes = context.inputs.map((v) => v.shape);
    const batch = Math.max(1, ...context.inputs.map((v, i) => sizeOf(v.shape.slice(0, i === 1 && this.vectorRhs() ? -1 : -2))));
    const expansion = this.expansionFor(shapes);
    return { ...call, work: Math.max(1, Math.round(batch * this.workPerMatrix(shapes))), ...(expansion ? { expansion } : {}) };
  }

  /** The steps of a blocked algorithm for inputs of these shapes, where the op has one and it pays. */
  protected expansionFor(_shapes: readonly (readonly number[])[]): Expansion | undefined {
    return undefined;
  }

  /** Whether input 1 is a batch of vectors (a right-hand side) rather than of matrices. */
  protected vectorRhs(): boolean {
    return false;
  }
}

/** The last axis of a shape (a matrix's columns; n of a square one). */
const lastOf = (shape: readonly number[]): number => shape[shape.length - 1] ?? 1;

/** Columns of a right-hand side (1 for a vector). */
const rhsColumns = (shape: readonly number[], vector: boolean): number => (vector ? 1 : lastOf(shape));

export class MatrixInverse extends BatchedMatrixOp {
  protected readonly kernelName = 'matrixInverse';
  protected readonly title = 'inv';

  protected workPerMatrix([a]: readonly (readonly number[])[]): number {
    return lastOf(a!) ** 3;
  }

  override makeNode(x: unknown): Apply {
    const v = squareInput('inv', x);
    return new Apply(this, [v], [new TensorType(floatOf(v), v.type.shape).makeVariable()]);
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    checkSquare('inv', x!.shape);
    return [[...x!.shape]];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [xs!];
  }

  override Lop(_inputs: readonly TensorVariable[], [x]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    return [neg(matmul(matmul(mT(x!), gz!), mT(x!)))];
  }

  override rop([a]: readonly TensorVariable[], [da]: readonly TensorVariable[]): Variable[] {
    const x = inv(a!);
    return [neg(matmul(matmul(x, da!), x))];
  }

  override toString(): string {
    return 'MatrixInverse';
  }
}

/** det (one output) or slogdet (sign and log|det|, as NumPy's), over the batch. */
export class Det extends BatchedMatrixOp {
  static override readonly props = ['logarithm'] as const;
  static override readonly propKinds = { logarithm: propKinds.boolean() };
  protected readonly kernelName = 'determinant';

  constructor(readonly logarithm: boolean) {
    super();
  }

  protected get title(): string {
    return this.logarithm ? 'slogdet' : 'det';
  }

  protected override outputItemAxes(): number {
    return 0;
  }

  protected workPerMatrix([a]: readonly (readonly number[])[]): number {
    return lastOf(a!) ** 3 / 3;
  }

  protected override kernelParams(): KernelParams {
    return { logarithm: this.logarithm };
  }

  override makeNode(x: unknown): Apply {
    const v = squareInput(this.title, x);
    const out = (): TensorVariable => new TensorType(floatOf(v), v.type.shape.slice(0, -2)).makeVariable();
    return new Apply(this, [v], this.logarithm ? [out(), out()] : [out()]);
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    checkSquare(this.title, x!.shape);
    const batch = x!.shape.slice(0, -2);
    return this.logarithm ? [batch, [...batch]] : [batch];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    const batch = xs!.slice(0, -2);
    return this.logarithm ? [batch, batch] : [batch];
  }

  override Lop([a]: readonly TensorVariable[], outputs: readonly TensorVariable[], grads: readonly Variable[]): Variable[] {
    const invT = mT(inv(a!));
    if (!this.logarithm) return [mul(padRight(mul(grads[0] as TensorVariable, outputs[0]!), 2), invT)];
    // The sign is piecewise constant: only log|det| has a gradient, gz A^-T.
    if (isDisconnected(grads[1]!)) return [disconnected()];
    return [mul(padRight(grads[1] as TensorVariable, 2), invT)];
  }

  override connectionPattern(): boolean[][] {
    return this.logarithm ? [[false, true]] : [[true]];
  }

  override rop([a]: readonly TensorVariable[], [da]: readonly TensorVariable[]): Variable[] {
    // d log|det A| = tr(A^-1 dA); d det A = det A tr(A^-1 dA); the sign does not move.
    const dlog = traces(solve(a!, da!));
    return this.logarithm ? [disconnected(), dlog] : [mul(det(a!), dlog)];
  }

  override toString(): string {
    return this.logarithm ? 'SLogDet' : 'Det';
  }
}

type Assume = 'gen' | 'sym' | 'pos';

/**
 * solve(a, b): x with a x = b, b a matrix [..., n, k] or (bVector) a vector [..., n]. For
 * assumeA 'sym' or 'pos', a is read from one triangle (lower or upper) and taken as symmetric.
 */
export class Solve extends BatchedMatrixOp {
  static override readonly props = ['assumeA', 'lower', 'bVector'] as const;
  static override readonly propKinds = { assumeA: propKinds.oneOf<Assume>(['gen', 'sym', 'pos']), lower: propKinds.boolean(), bVector: propKinds.boolean() };
  protected readonly kernelName = 'luSolve';
  protected readonly title = 'solve';

  protected override outputItemAxes(): number {
    return this.bVector ? 1 : 2;
  }

  protected override vectorRhs(): boolean {
    return this.bVector;
  }

  protected workPerMatrix([a, b]: readonly (readonly number[])[]): number {
    const n = lastOf(a!);
    return n ** 3 / 3 + n * n * rhsColumns(b!, this.bVector);
  }

  protected override expansionFor([a, b]: readonly (readonly number[])[]): Expansion | undefined {
    const n = lastOf(a!);
    if (a!.length !== 2 || b!.length !== (this.bVector ? 1 : 2) || n < BLOCKED_MIN) return undefined;
    return luSolveSteps(n, rhsColumns(b!, this.bVector), this.bVector, this.assumeA === 'gen' ? 'all' : this.lower ? 'lower' : 'upper', this.title);
  }

  constructor(
    readonly assumeA: Assume,
    readonly lower: boolean,
    readonly bVector: boolean,
  ) {
    super();
  }

  protected override kernelParams(): KernelParams {
    return { vector: this.bVector, triangle: this.assumeA === 'gen' ? 'all' : this.lower ? 'lower' : 'upper' };
  }

  override makeNode(a: unknown, b: unknown): Apply {
    const av = squareInput('solve', a);
    const bv = asTensorVariable(b as TensorLike);
    checkRightHandSide('solve', av, bv, this.bVector);
    return new Apply(this, [av, bv], [new TensorType(floatOf(av, bv), bv.type.shape).makeVariable()]);
  }

  override outputShapes(_node: Apply, [a, b]: readonly TensorView[]): number[][] {
    checkSquare('solve', a!.shape);
    checkRows('solve', a!.shape, b!.shape, this.bVector);
    return [[...b!.shape]];
  }

  override inferShape(_node: Apply, [, bs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [bs!];
  }

  override Lop([a]: readonly TensorVariable[], [x]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    // a x = b: gb = a^-T gz, ga = -gb x^T.
    const gb = new Solve(this.assumeA, !this.lower, this.bVector).call(mT(a!), gz!) as TensorVariable;
    const ga = summedTo(neg(outerOf(gb, x!, this.bVector)), a!);
    return [this.assumeA === 'gen' ? ga : foldIntoTriangle(ga, this.lower), gb];
  }

  override rop([a, b]: readonly TensorVariable[], [da, db]: readonly TensorVariable[]): Variable[] {
    // a x = b: dx = a^-1 (db - da x), da as the op reads it.
    const x = this.call(a!, b!) as TensorVariable;
    const dA = this.assumeA === 'gen' ? da! : symmetricFromTriangle(da!, this.lower);
    return [this.call(a!, sub(db!, productWith(dA, x, this.bVector))) as TensorVariable];
  }

  override toString(): string {
    return this.assumeA === 'gen' ? 'Solve' : `Solve{${this.assumeA}, ${this.lower ? 'lower' : 'upper'}}`;
  }
}

/** solveTriangular(a, b): x with op(a) x = b, a lower or upper triangular (only that triangle is read), op(a) = a or a^T. */
export class SolveTriangular extends BatchedMatrixOp {
  static override readonly props = ['lower', 'transposed', 'unitDiagonal', 'bVector'] as const;
  static override readonly propKinds = { lower: propKinds.boolean(), transposed: propKinds.boolean(), unitDiagonal: propKinds.boolean(), bVector: propKinds.boolean() };
  protected readonly kernelName = 'triangularSolve';
  protected readonly title = 'solveTriangular';

  protected override outputItemAxes(): number {
    return this.bVector ? 1 : 2;
  }

  protected override vectorRhs(): boolean {
    return this.bVector;
  }

  protected workPerMatrix([a, b]: readonly (readonly number[])[]): number {
    return (lastOf(a!) ** 2 * rhsColumns(b!, this.bVector)) / 2;
  }

  constructor(
    readonly lower: boolean,
    readonly transposed: boolean,
    readonly unitDiagonal: boolean,
    readonly bVector: boolean,
  ) {
    super();
  }

  protected override kernelParams(): KernelParams {
    return { lower: this.lower, transposed: this.transposed, unitDiagonal: this.unitDiagonal, vector: this.bVector };
  }

  override makeNode(a: unknown, b: unknown): Apply {
    const av = squareInput('solveTriangular', a);
    const bv = asTensorVariable(b as TensorLike);
    checkRightHandSide('solveTriangular', av, bv, this.bVector);
    return new Apply(this, [av, bv], [new TensorType(floatOf(av, bv), bv.type.shape).makeVariable()]);
  }

  override outputShapes(_node: Apply, [a, b]: readonly TensorView[]): number[][] {
    checkSquare('solveTriangular', a!.shape);
    checkRows('solveTriangular', a!.shape, b!.shape, this.bVector);
    return [[...b!.shape]];
  }

  override inferShape(_node: Apply, [, bs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [bs!];
  }

  override Lop([a]: readonly TensorVariable[], [x]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    const gb = new SolveTriangular(this.lower, !this.transposed, this.unitDiagonal, this.bVector).call(a!, gz!) as TensorVariable;
    const outer = outerOf(gb, x!, this.bVector);
    // op(a) x = b: g_op(a) = -gb x^T; for op(a) = a^T, ga is its transpose. Only the triangle read counts.
    const full = summedTo(neg(this.transposed ? mT(outer) : outer), a!);
    const kept = this.lower ? tril(full, this.unitDiagonal ? -1 : 0) : triu(full, this.unitDiagonal ? 1 : 0);
    return [kept, gb];
  }

  override rop([a, b]: readonly TensorVariable[], [da, db]: readonly TensorVariable[]): Variable[] {
    // op(T) x = b: dx = op(T)^-1 (db - op(dT) x), dT the triangle read (no diagonal when it is taken as ones).
    const x = this.call(a!, b!) as TensorVariable;
    const dT = this.lower ? tril(da!, this.unitDiagonal ? -1 : 0) : triu(da!, this.unitDiagonal ? 1 : 0);
    return [this.call(a!, sub(db!, productWith(this.transposed ? mT(dT) : dT, x, this.bVector))) as TensorVariable];
  }

  override toString(): string {
    return `SolveTriangular{${this.lower ? 'lower' : 'upper'}${this.transposed ? ', transposed' : ''}${this.unitDiagonal ? ', unit diagonal' : ''}}`;
  }
}

/** The Cholesky factor (lower L with a = L L^T, or upper U = L^T), reading that triangle of a. */
export class Cholesky extends BatchedMatrixOp {
  static override readonly props = ['lower'] as const;
  static override readonly propKinds = { lower: propKinds.boolean() };
  protected readonly kernelName = 'cholesky';
  protected readonly title = 'cholesky';

  protected workPerMatrix([a]: readonly (readonly number[])[]): number {
    return lastOf(a!) ** 3 / 6;
  }

  protected override expansionFor([a]: readonly (readonly number[])[]): Expansion | undefined {
    const n = lastOf(a!);
    return a!.length === 2 && n >= BLOCKED_MIN ? choleskySteps(n, this.lower, this.title) : undefined;
  }

  constructor(readonly lower: boolean) {
    super();
  }

  protected override kernelParams(): KernelParams {
    return { lower: this.lower };
  }

  override makeNode(x: unknown): Apply {
    const v = squareInput('cholesky', x);
    return new Apply(this, [v], [new TensorType(floatOf(v), v.type.shape).makeVariable()]);
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    checkSquare('cholesky', x!.shape);
    return [[...x!.shape]];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [xs!];
  }

  override Lop(_inputs: readonly TensorVariable[], [factor]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    // With L lower and gL its gradient: S = L^-T phi(L^T gL) L^-1, phi the lower triangle with
    // the diagonal halved (Murray 2016); then folded into the triangle a is read from.
    const L = this.lower ? factor! : mT(factor!);
    const gL = this.lower ? gz! : mT(gz!);
    const m = matmul(mT(L), gL);
    const phi = sub(tril(m), mul(tril(triu(m)), 0.5));
    const left = new SolveTriangular(true, true, false, false).call(L, phi) as TensorVariable; // L^-T phi
    const s = mT(new SolveTriangular(true, true, false, false).call(L, mT(left)) as TensorVariable); // (L^-T left^T)^T = left L^-1
    return [foldIntoTriangle(s, this.lower)];
  }

  override rop([a]: readonly TensorVariable[], [da]: readonly TensorVariable[]): Variable[] {
    // A = L L^T: dL = L phi(L^-1 dA L^-T), phi the lower triangle with the diagonal halved.
    const factor = this.call(a!) as TensorVariable;
    const L = this.lower ? factor : mT(factor);
    const dA = symmetricFromTriangle(da!, this.lower);
    const left = new SolveTriangular(true, false, false, false).call(L, dA) as TensorVariable; // L^-1 dA
    const inner = mT(new SolveTriangular(true, false, false, false).call(L, mT(left)) as TensorVariable); // L^-1 dA L^-T
    const dL = matmul(L, sub(tril(inner), mul(tril(triu(inner)), 0.5)));
    return [this.lower ? dL : mT(dL)];
  }

  override toString(): string {
    return `Cholesky{${this.lower ? 'lower' : 'upper'}}`;
  }
}

/** m x for each matrix of the batch (x a matrix, or a vector per matrix). */
function productWith(m: TensorVariable, x: TensorVariable, vector: boolean): TensorVariable {
  if (!vector) return matmul(m, x);
  return sum(mul(m, dimshuffle(x, [...[...Array(x.ndim - 1).keys()], 'x', x.ndim - 1])), -1);
}

/** gb x^T for each matrix (or vector) of the batch. */
function outerOf(gb: TensorVariable, x: TensorVariable, vector: boolean): TensorVariable {
  if (!vector) return matmul(gb, mT(x));
  return mul(padRight(gb, 1), dimshuffle(x, [...[...Array(x.ndim - 1).keys()], 'x', x.ndim - 1]));
}

/** g summed over the batch axes that a (one matrix for a batch of right-hand sides) lacks. */
function summedTo(g: TensorVariable, a: TensorVariable): TensorVariable {
  const extra = g.ndim - a.ndim;
  return extra > 0 ? sum(g, { axis: [...Array(extra).keys()] }) : g;
}

/** b's rows must be a's (statically, where known); b's batch axes are a's, or a is one matrix. */
function checkRightHandSide(op: string, a: TensorVariable, b: TensorVariable, vector: boolean): void {
  if (b.ndim < (vector ? 1 : 2)) throw new TypeError(`${op}: b must be a ${vector ? 'vector' : 'matrix'} or a batch of them, got ${b} (${b.type})`);
  const n = a.type.shape[a.ndim - 1];
  const rows = b.type.shape[b.ndim - (vector ? 1 : 2)];
  if (n !== null && rows !== null && n !== rows) throw new RangeError(`${op}: a ${a} (${a.type}) has ${n} columns but b ${b} (${b.type}) has ${rows} rows`);
  const batchA = a.ndim - 2;
  const batchB = b.ndim - (vector ? 1 : 2);
  if (batchA > 0 && batchA !== batchB) throw new TypeError(`${op}: a ${a} (${a.type}) and b ${b} (${b.type}) must have the same batch axes (or a is one matrix)`);
}

function checkRows(op: string, a: readonly number[], b: readonly number[], vector: boolean): void {
  const n = a[a.length - 1]!;
  const rows = b[b.length - (vector ? 1 : 2)]!;
  if (n !== rows) throw new RangeError(`${op}: a of shape ${shapeText(a)} has ${n} columns but b of shape ${shapeText(b)} has ${rows} rows`);
  const batchA = a.slice(0, -2);
  const batchB = b.slice(0, vector ? -1 : -2);
  if (batchA.length > 0 && batchA.some((d, i) => d !== batchB[i])) throw new RangeError(`${op}: the batch shapes ${shapeText(batchA)} of a and ${shapeText(batchB)} of b differ`);
}

/** Is b a vector right-hand side for a (one axis fewer than a matrix would have)? */
const isVectorRhs = (a: TensorVariable, b: TensorVariable): boolean => b.ndim === a.ndim - 1;

export function inv(x: TensorLike): TensorVariable {
  return new MatrixInverse().call(x) as TensorVariable;
}

export function det(x: TensorLike): TensorVariable {
  return new Det(false).call(x) as TensorVariable;
}

/** [sign, log|det|] as NumPy's slogdet (a singular matrix: 0 and -inf). */
export function slogdet(x: TensorLike): [TensorVariable, TensorVariable] {
  return new Det(true).call(x) as unknown as [TensorVariable, TensorVariable];
}

export interface SolveOptions {
  /** 'gen' (default), or 'sym' / 'pos' (a is symmetric: only its lower or upper triangle is read). */
  readonly assumeA?: Assume;
  /** With 'sym' or 'pos': read the lower triangle (default false: the upper, as SciPy). */
  readonly lower?: boolean;
}

export function solve(a: TensorLike, b: TensorLike, options: SolveOptions = {}): TensorVariable {
  const [av, bv] = [asTensorVariable(a), asTensorVariable(b)];
  const assume = options.assumeA ?? 'gen';
  if (assume !== 'gen' && assume !== 'sym' && assume !== 'pos') throw new TypeError(`solve: assumeA must be 'gen', 'sym' or 'pos', got ${JSON.stringify(assume)}`);
  return new Solve(assume, options.lower ?? false, isVectorRhs(av, bv)).call(av, bv) as TensorVariable;
}

export interface SolveTriangularOptions {
  /** a is lower triangular (default false: upper, as SciPy). */
  readonly lower?: boolean;
  /** Solve a^T x = b (0 or 'N': a x = b; 1 or 'T': a^T x = b). */
  readonly trans?: 0 | 1 | 'N' | 'T';
  /** The diagonal is taken as ones (not read). */
  readonly unitDiagonal?: boolean;
}

export function solveTriangular(a: TensorLike, b: TensorLike, options: SolveTriangularOptions = {}): TensorVariable {
  const [av, bv] = [asTensorVariable(a), asTensorVariable(b)];
  const trans = options.trans ?? 0;
  if (trans !== 0 && trans !== 1 && trans !== 'N' && trans !== 'T') throw new TypeError(`solveTriangular: trans must be 0, 1, 'N' or 'T', got ${JSON.stringify(trans)}`);
  return new SolveTriangular(options.lower ?? false, trans === 1 || trans === 'T', options.unitDiagonal ?? false, isVectorRhs(av, bv)).call(av, bv) as TensorVariable;
}

export function cholesky(x: TensorLike, options: { readonly lower?: boolean } = {}): TensorVariable {
  return new Cholesky(options.lower ?? true).call(x) as TensorVariable;
}

/** SciPy's cho_solve: x with a x = b from a's Cholesky factor c (lower or upper). */
export function choSolve([c, lower]: readonly [TensorLike, boolean], b: TensorLike): TensorVariable {
  const y = solveTriangular(c, b, { lower, trans: lower ? 0 : 1 });
  return solveTriangular(c, y, { lower, trans: lower ? 1 : 0 });
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(MatrixInverse);
registerOpCodec(Det);
registerOpCodec(Solve);
registerOpCodec(SolveTriangular);
registerOpCodec(Cholesky);
