// Products of tensors: Dot (NumPy's dot of vectors and matrices), TensorDot (contraction over
// pairs of axes, which also gives NumPy's dot for higher ranks), MatMul (batched products with
// broadcast batch axes) and outer. Dot and MatMul run the 'matmul' kernel (NumPy's matmul over
// views), TensorDot the 'tensordot' kernel: both are the packed products of kernels/gemm.ts.
import type { Dtype } from '../../kernels/dtype.js';
import type { TensordotUnit } from '../../kernels/products.js';
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import { isDisconnected } from '../../graph/gradient.js';
import type { KernelCall, KernelContext, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { asTensorArgs } from '../core/as-tensor.js';
import { upcast } from '../core/dtype.js';
import { dimshuffle, transpose, type ShuffleEntry } from '../shape/dimshuffle.js';
import { ShapeMismatchError } from '../elemwise/elemwise.js';
import { add, mul } from '../elemwise/math.js';
import { shapeText } from '../core/ndarray.js';
import { lazy, TensorOp } from '../core/op.js';
import { sum } from '../elemwise/reduce.js';
import { flatten } from '../shape/reshape.js';
import { TensorType, type StaticShape } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { tensorPropKinds } from '../core/prop-kinds.js';

function described(v: TensorVariable): string {
  return `${v} (${v.type})`;
}

/** NumPy's result dtype of a product; bool products (logical, in NumPy) are refused. */
function productDtype(where: string, x: TensorVariable, y: TensorVariable): Dtype {
  const dtype = upcast(x.dtype, y.dtype);
  if (dtype === 'bool') {
    throw new TypeError(`${where}: both inputs are bool; cast one of them to a number dtype first (e.g. x.astype('int32'))`);
  }
  return dtype;
}

/** Static lengths that cannot be equal: both known and different. */
function clash(a: number | null | undefined, b: number | null | undefined): boolean {
  return a !== null && a !== undefined && b !== null && b !== undefined && a !== b;
}

/** `v` with its last two axes swapped. */
function swapLast(v: TensorVariable): TensorVariable {
  const order: ShuffleEntry[] = [...Array(v.ndim).keys()];
  order[v.ndim - 2] = v.ndim - 1;
  order[v.ndim - 1] = v.ndim - 2;
  return dimshuffle(v, order);
}

/** The outer product of two vectors as a broadcast multiplication. */
function outerOfVectors(x: TensorVariable, y: TensorVariable): TensorVariable {
  return mul(dimshuffle(x, [0, 'x']), dimshuffle(y, ['x', 0]));
}

/**
 * The rop of a product that is linear in each input: d(x y) = dx y + x dy. A discrete input
 * (integers: no tangent, its eval point is disconnected) contributes no term.
 */
function bilinearRop(op: TensorOp, [x, y]: readonly TensorVariable[], [ex, ey]: readonly Variable[]): Variable[] {
  const terms: TensorVariable[] = [];
  if (!isDisconnected(ex!)) terms.push(op.call(ex, y));
  if (!isDisconnected(ey!)) terms.push(op.call(x, ey));
  return [terms.length === 1 ? terms[0]! : add(...terms)];
}

// ---------------------------------------------------------------------------------------------
// Dot

/** NumPy's dot for vectors and matrices: vector·vector gives a 0-d result. */
/** float32 products run the WebAssembly SIMD gemm, which needs its output in the pool's memory. */
export function arenaForFloat32(node: Apply): { readonly outputsInArena?: true } {
  return (node.outputs[0]!.type as TensorType).dtype === 'float32' ? { outputsInArena: true } : {};
}

/**
 * How a 2-d product of an [m, k] and a [k, n] matrix is cut into tasks: by rows of the output,
 * or, when it has too few rows for two tasks of the gemm's 64-row blocks (a batch of 64 times a
 * square weight matrix, as in an RNN's step) and enough columns, by columns. Either way each
 * output element is the same sum in the same order, so the bits do not depend on the cut.
 */
export function productChunking(m: number | undefined, n: number | undefined): Pick<KernelCall, 'chunking' | 'params'> {
  if (m !== undefined && n !== undefined && m < 2 * PRODUCT_ROW_BLOCK && n >= 2 * PRODUCT_ROW_BLOCK) {
    return { chunking: { by: 'lanes', axis: 0 }, params: { columns: true } };
  }
  return { chunking: { by: 'rows' }, params: {} };
}

/** Rows of A the gemm kernel packs at once (the planner's fewest units per product task). */
const PRODUCT_ROW_BLOCK = 64;

export class Dot extends TensorOp {
  override makeNode(x: unknown, y: unknown): Apply {
    const [xv, yv] = asTensorArgs([x as TensorLike, y as TensorLike], 'Dot');
    [xv!, yv!].forEach((v, i) => {
      if (v.ndim !== 1 && v.ndim !== 2) {
        throw new TypeError(`Dot: input ${i} ${described(v)} must be a vector or a matrix; use dot() or tensordot() for other ranks`);
      }
    });
    const dtype = productDtype('Dot', xv!, yv!);
    const kx = xv!.type.shape[xv!.ndim - 1];
    const ky = yv!.type.shape[0];
    if (clash(kx, ky)) {
      throw new ShapeMismatchError(
        `Dot: ${described(xv!)} and ${described(yv!)} are not aligned: axis ${xv!.ndim - 1} of input 0 has length ${kx}, ` +
          `axis 0 of input 1 has length ${ky}`,
      );
    }
    const shape: StaticShape = [...(xv!.ndim === 2 ? [xv!.type.shape[0]!] : []), ...(yv!.ndim === 2 ? [yv!.type.shape[1]!] : [])];
    return new Apply(this, [xv!, yv!], [new TensorType(dtype, shape).makeVariable()]);
  }

  override outputShapes(_node: Apply, [x, y]: readonly TensorView[]): number[][] {
    const k = x!.shape[x!.shape.length - 1]!;
    if (y!.shape[0] !== k) {
      throw new ShapeMismatchError(
        `Dot: shapes ${shapeText(x!.shape)} and ${shapeText(y!.shape)} are not aligned: axis ${x!.shape.length - 1} of input 0 ` +
          `has length ${k}, axis 0 of input 1 has length ${y!.shape[0]}`,
      );
    }
    return [[...(x!.shape.length === 2 ? [x!.shape[0]!] : []), ...(y!.shape.length === 2 ? [y!.shape[1]!] : [])]];
  }

  /**
   * By rows of the output where x is a matrix (each row is x's row times y), or by columns when
   * both are matrices and the output has few rows (productChunking); one task otherwise.
   */
  override kernel(node: Apply, context?: KernelContext): KernelCall {
    const xIsMatrix = (node.inputs[0]!.type as TensorType).ndim === 2;
    const yIsMatrix = (node.inputs[1]!.type as TensorType).ndim === 2;
    const [x, y] = context?.inputs ?? [];
    const split = !xIsMatrix ? { chunking: { by: 'none' } as const, params: {} } : yIsMatrix ? productChunking(x?.shape[0], y?.shape[1]) : { chunking: { by: 'rows' } as const, params: {} };
    return { name: 'matmul', ...split, contracted: { input: 0 }, ...arenaForFloat32(node) };
  }

  override inferShape(node: Apply, [xs, ys]: readonly SymbolicShape[]): SymbolicShape[] {
    const [x, y] = node.inputs as TensorVariable[];
    return [[...(x!.ndim === 2 ? [xs![0]!] : []), ...(y!.ndim === 2 ? [ys![1]!] : [])]];
  }

  override grad([x, y]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    const d = dotOp();
    if (x!.ndim === 1 && y!.ndim === 1) return [mul(gz!, y!), mul(gz!, x!)];
    if (x!.ndim === 2 && y!.ndim === 1) return [outerOfVectors(gz!, y!), d.call(transpose(x!), gz!)];
    if (x!.ndim === 1 && y!.ndim === 2) return [d.call(y!, gz!), outerOfVectors(x!, gz!)];
    return [d.call(gz!, transpose(y!)), d.call(transpose(x!), gz!)];
  }

  override rop(inputs: readonly TensorVariable[], evalPoints: readonly Variable[]): Variable[] {
    return bilinearRop(this, inputs, evalPoints);
  }

  override toString(): string {
    return 'Dot';
  }
}

const dotOp = lazy(() => new Dot());

// ---------------------------------------------------------------------------------------------
// TensorDot

function normalizeAxisList(axes: readonly number[], ndim: number, which: string): number[] {
  const out = axes.map((a) => {
    if (!Number.isInteger(a) || a < -ndim || a >= ndim) {
      throw new RangeError(`tensordot: axis ${a} is out of range for ${which}, which has ${ndim} axes`);
    }
    return a < 0 ? a + ndim : a;
  });
  if (new Set(out).size !== out.length) throw new RangeError(`tensordot: the axes [${axes.join(', ')}] of ${which} repeat an axis`);
  return out;
}

/** The axes of an operand that are not summed over, in order. */
function freeAxes(ndim: number, summed: readonly number[]): number[] {
  return [...Array(ndim).keys()].filter((a) => !summed.includes(a));
}

/** NumPy's tensordot: sums over pairs of axes (axesA[i] of a with axesB[i] of b). */
export class TensorDot extends TensorOp {
  static override readonly props = ['axesA', 'axesB'] as const;
  static override readonly propKinds = { axesA: tensorPropKinds.axes, axesB: tensorPropKinds.axes };
  readonly axesA: readonly number[];
  readonly axesB: readonly number[];

  constructor(axesA: readonly number[], axesB: readonly number[]) {
    super();
    if (axesA.length !== axesB.length) {
      throw new RangeError(`TensorDot: ${axesA.length} axes of a but ${axesB.length} axes of b; they are summed in pairs`);
    }
    this.axesA = Object.freeze([...axesA]);
    this.axesB = Object.freeze([...axesB]);
  }

  override makeNode(a: unknown, b: unknown): Apply {
    const [av, bv] = asTensorArgs([a as TensorLike, b as TensorLike], String(this));
    [av!, bv!].forEach((v, i) => {
      const axes = i === 0 ? this.axesA : this.axesB;
      if (axes.some((ax) => ax >= v.ndim) || new Set(axes).size !== axes.length) {
        throw new TypeError(`${this}: input ${i} ${described(v)} does not have the distinct axes [${axes.join(', ')}]`);
      }
    });
    const dtype = productDtype(String(this), av!, bv!);
    this.axesA.forEach((ax, i) => {
      const la = av!.type.shape[ax];
      const lb = bv!.type.shape[this.axesB[i]!];
      if (clash(la, lb)) {
        throw new ShapeMismatchError(
          `${this}: ${described(av!)} and ${described(bv!)} are not aligned: axis ${ax} of input 0 has length ${la}, ` +
            `axis ${this.axesB[i]} of input 1 has length ${lb}`,
        );
      }
    });
    const shape = [
      ...freeAxes(av!.ndim, this.axesA).map((ax) => av!.type.shape[ax]!),
      ...freeAxes(bv!.ndim, this.axesB).map((ax) => bv!.type.shape[ax]!),
    ];
    return new Apply(this, [av!, bv!], [new TensorType(dtype, shape).makeVariable()]);
  }

  override outputShapes(_node: Apply, [a, b]: readonly TensorView[]): number[][] {
    this.axesA.forEach((ax, i) => {
      const bx = this.axesB[i]!;
      if (a!.shape[ax] !== b!.shape[bx]) {
        throw new ShapeMismatchError(
          `${this}: shapes ${shapeText(a!.shape)} and ${shapeText(b!.shape)} are not aligned: axis ${ax} of input 0 has length ` +
            `${a!.shape[ax]}, axis ${bx} of input 1 has length ${b!.shape[bx]}`,
        );
      }
    });
    return [
      [
        ...freeAxes(a!.shape.length, this.axesA).map((ax) => a!.shape[ax]!),
        ...freeAxes(b!.shape.length, this.axesB).map((ax) => b!.shape[ax]!),
      ],
    ];
  }

  /**
   * By rows of a's free axes (the rows of the matrix product): the output's flat elements when b
   * has no free axis, its lanes along the last axis when b has one, else indices of its first axis.
   */
  override kernel(node: Apply): KernelCall {
    const [a, b] = node.inputs as TensorVariable[];
    const freeA = a!.ndim - this.axesA.length;
    const freeB = b!.ndim - this.axesB.length;
    const unit: TensordotUnit = freeA > 0 && freeB > 1 ? 'firstAxis' : 'row';
    const params = { axesA: [...this.axesA], axesB: [...this.axesB], unit };
    const contracted = { input: 0, axes: this.axesA };
    const arena = arenaForFloat32(node);
    if (freeA === 0) return { name: 'tensordot', params, chunking: { by: 'none' }, contracted, ...arena };
    if (freeB === 0) return { name: 'tensordot', params, chunking: { by: 'elements' }, contracted, ...arena };
    if (freeB === 1) return { name: 'tensordot', params, chunking: { by: 'lanes', axis: freeA }, contracted, ...arena };
    return { name: 'tensordot', params, chunking: { by: 'rows' }, contracted, ...arena };
  }

  override inferShape(node: Apply, [as, bs]: readonly SymbolicShape[]): SymbolicShape[] {
    const [a, b] = node.inputs as TensorVariable[];
    return [[...freeAxes(a!.ndim, this.axesA).map((ax) => as![ax]!), ...freeAxes(b!.ndim, this.axesB).map((ax) => bs![ax]!)]];
  }

  /**
   * The gradient of one operand: gz contracted with the other operand over the other's free axes
   * gives this operand's free axes, then its summed axes in the order of the other's summed axes;
   * a dimshuffle puts them back in place.
   */
  #gradOf(
    gz: TensorVariable,
    other: TensorVariable,
    gzAxes: readonly number[],
    ownNdim: number,
    ownSummed: readonly number[],
    otherSummed: readonly number[],
  ): TensorVariable {
    const otherFree = freeAxes(other.ndim, otherSummed);
    const g = new TensorDot(gzAxes, otherFree).call(gz, other);
    const ownFree = freeAxes(ownNdim, ownSummed);
    const sortedOther = [...otherSummed].sort((p, q) => p - q);
    const order = [...Array(ownNdim).keys()].map((ax) => {
      const f = ownFree.indexOf(ax);
      if (f >= 0) return f;
      const partner = otherSummed[ownSummed.indexOf(ax)]!;
      return ownFree.length + sortedOther.indexOf(partner);
    });
    return dimshuffle(g, order);
  }

  override grad([a, b]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    const nFreeA = a!.ndim - this.axesA.length;
    const nFreeB = b!.ndim - this.axesB.length;
    const gzFreeA = [...Array(nFreeA).keys()];
    const gzFreeB = [...Array(nFreeB).keys()].map((i) => nFreeA + i);
    return [
      this.#gradOf(gz!, b!, gzFreeB, a!.ndim, this.axesA, this.axesB),
      this.#gradOf(gz!, a!, gzFreeA, b!.ndim, this.axesB, this.axesA),
    ];
  }

  override rop(inputs: readonly TensorVariable[], evalPoints: readonly Variable[]): Variable[] {
    return bilinearRop(this, inputs, evalPoints);
  }

  override toString(): string {
    return `TensorDot{axes=[[${this.axesA.join(',')}],[${this.axesB.join(',')}]]}`;
  }
}

// ---------------------------------------------------------------------------------------------
// MatMul

/** Batched matrix products over the last two axes; the batch axes broadcast where static 1. */
export class MatMul extends TensorOp {
  override makeNode(x: unknown, y: unknown): Apply {
    const [xv, yv] = asTensorArgs([x as TensorLike, y as TensorLike], 'MatMul');
    [xv!, yv!].forEach((v, i) => {
      if (v.ndim < 2) {
        throw new TypeError(`MatMul: input ${i} ${described(v)} must have at least 2 axes; matmul() promotes vectors`);
      }
    });
    const dtype = productDtype('MatMul', xv!, yv!);
    const xs = xv!.type.shape;
    const ys = yv!.type.shape;
    const kx = xs[xs.length - 1];
    const ky = ys[ys.length - 2];
    if (clash(kx, ky)) {
      throw new ShapeMismatchError(
        `MatMul: ${described(xv!)} and ${described(yv!)} are not aligned: axis ${xs.length - 1} of input 0 has length ${kx}, ` +
          `axis ${ys.length - 2} of input 1 has length ${ky}`,
      );
    }
    const batch = this.#staticBatch(xv!, yv!);
    const shape = [...batch, xs[xs.length - 2]!, ys[ys.length - 1]!];
    return new Apply(this, [xv!, yv!], [new TensorType(dtype, shape).makeVariable()]);
  }

  /** The broadcast batch shape, aligned at the right as NumPy does. */
  #staticBatch(x: TensorVariable, y: TensorVariable): (number | null)[] {
    const nb = Math.max(x.ndim, y.ndim) - 2;
    const padded = [x, y].map((v) => [...Array<number>(nb - (v.ndim - 2)).fill(1), ...v.type.shape.slice(0, v.ndim - 2)]);
    return [...Array(nb).keys()].map((a) => {
      const [p, q] = [padded[0]![a]!, padded[1]![a]!];
      if (p !== 1 && q !== 1 && clash(p, q)) {
        throw new ShapeMismatchError(
          `MatMul: the batch axes of ${described(x)} and ${described(y)} cannot be broadcast together: ` +
            `static lengths ${p} and ${q} on batch axis ${a}`,
        );
      }
      return p === 1 ? q : q === 1 ? p : (p ?? q);
    });
  }

  override outputShapes(node: Apply, [x, y]: readonly TensorView[]): number[][] {
    const [xt, yt] = node.inputs.map((v) => v.type as TensorType);
    const nb = (node.outputs[0]!.type as TensorType).ndim - 2;
    const k = x!.shape[x!.shape.length - 1]!;
    if (y!.shape[y!.shape.length - 2] !== k) {
      throw new ShapeMismatchError(
        `MatMul: shapes ${shapeText(x!.shape)} and ${shapeText(y!.shape)} are not aligned: axis ${x!.shape.length - 1} of input 0 ` +
          `has length ${k}, axis ${y!.shape.length - 2} of input 1 has length ${y!.shape[y!.shape.length - 2]}`,
      );
    }
    // Batch axes aligned at the right; a missing axis or a static 1 broadcasts.
    const batchAxis = (v: TensorView, type: TensorType, a: number): { length: number; broadcast: boolean } => {
      const own = a - (nb - (v.shape.length - 2));
      return own < 0 ? { length: 1, broadcast: true } : { length: v.shape[own]!, broadcast: type.shape[own] === 1 };
    };
    const batch: number[] = [];
    for (let a = 0; a < nb; a++) {
      const p = batchAxis(x!, xt!, a);
      const q = batchAxis(y!, yt!, a);
      if (p.length !== q.length && !p.broadcast && !q.broadcast) {
        const one = p.length === 1 ? 0 : q.length === 1 ? 1 : -1;
        throw new ShapeMismatchError(
          `MatMul: the batch shapes of ${shapeText(x!.shape)} and ${shapeText(y!.shape)} cannot be broadcast together: ` +
            `lengths ${p.length} and ${q.length} on batch axis ${a}` +
            (one >= 0 ? ` (input ${one} has length 1 there, but its type does not mark the axis broadcastable)` : ''),
        );
      }
      batch.push(p.broadcast ? q.length : p.length);
    }
    return [[...batch, x!.shape[x!.shape.length - 2]!, y!.shape[y!.shape.length - 1]!]];
  }

  /** By rows of the output seen as [batch * m, n]: its lanes along the last axis. */
  override kernel(node: Apply): KernelCall {
    const nd = (node.outputs[0]!.type as TensorType).ndim;
    return { name: 'matmul', params: {}, chunking: { by: 'lanes', axis: nd - 1 }, contracted: { input: 0 }, ...arenaForFloat32(node) };
  }

  override inferShape(node: Apply, [xs, ys]: readonly SymbolicShape[]): SymbolicShape[] {
    const [x, y] = node.inputs as TensorVariable[];
    const nb = (node.outputs[0]!.type as TensorType).ndim - 2;
    const batch = [...Array(nb).keys()].map((a) => {
      const ax = a - (nb - (x!.ndim - 2));
      const ay = a - (nb - (y!.ndim - 2));
      // The length comes from an input that has the axis and does not broadcast along it.
      if (ax >= 0 && x!.type.shape[ax] !== 1) return xs![ax]!;
      if (ay >= 0 && y!.type.shape[ay] !== 1) return ys![ay]!;
      return ax >= 0 ? xs![ax]! : ys![ay]!;
    });
    return [[...batch, xs![x!.ndim - 2]!, ys![y!.ndim - 1]!]];
  }

  override grad([x, y]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    const op = matmulOp();
    return [sumToBatchOf(op.call(gz!, swapLast(y!)), x!), sumToBatchOf(op.call(swapLast(x!), gz!), y!)];
  }

  override rop(inputs: readonly TensorVariable[], evalPoints: readonly Variable[]): Variable[] {
    return bilinearRop(this, inputs, evalPoints);
  }

  override toString(): string {
    return 'MatMul';
  }
}

const matmulOp = lazy(() => new MatMul());

/** A gradient with the output's batch axes summed back to the batch axes of `input`. */
function sumToBatchOf(g: TensorVariable, input: TensorVariable): TensorVariable {
  const lead = g.ndim - input.ndim;
  const broadcast = input.type.shape.flatMap((d, a) => (a < input.ndim - 2 && d === 1 && g.type.shape[lead + a] !== 1 ? [lead + a] : []));
  let r = broadcast.length > 0 ? sum(g, { axis: broadcast, keepdims: true }) : g;
  if (lead > 0) r = sum(r, { axis: [...Array(lead).keys()] });
  return r;
}

// ---------------------------------------------------------------------------------------------
// Functions

/**
 * NumPy's dot: a scalar operand multiplies; vectors and matrices give the inner, matrix-vector
 * and matrix product; for higher ranks, the last axis of x is summed against the second-to-last
 * of y (the only axis of a vector).
 */
export function dot(x: TensorLike, y: TensorLike): TensorVariable {
  const [xv, yv] = asTensorArgs([x, y], 'dot');
  if (xv!.ndim === 0 || yv!.ndim === 0) return mul(xv!, yv!);
  if (xv!.ndim <= 2 && yv!.ndim <= 2) return dotOp().call(xv!, yv!);
  return new TensorDot([xv!.ndim - 1], [Math.max(0, yv!.ndim - 2)]).call(xv!, yv!);
}

/**
 * NumPy's tensordot: `axes` is a number n (the last n axes of a with the first n of b) or a pair
 * of axis lists summed against each other; the result has the remaining axes of a, then of b.
 */
export function tensordot(a: TensorLike, b: TensorLike, axes: number | readonly [readonly number[], readonly number[]] = 2): TensorVariable {
  const [av, bv] = asTensorArgs([a, b], 'tensordot');
  let axesA: number[];
  let axesB: number[];
  if (typeof axes === 'number') {
    if (!Number.isInteger(axes) || axes < 0 || axes > av!.ndim || axes > bv!.ndim) {
      throw new RangeError(`tensordot: cannot sum over ${axes} axes of ${described(av!)} and ${described(bv!)}`);
    }
    axesA = [...Array(axes).keys()].map((i) => av!.ndim - axes + i);
    axesB = [...Array(axes).keys()];
  } else {
    axesA = normalizeAxisList(axes[0], av!.ndim, 'input 0');
    axesB = normalizeAxisList(axes[1], bv!.ndim, 'input 1');
  }
  return new TensorDot(axesA, axesB).call(av!, bv!);
}

/**
 * NumPy's matmul: products of the last two axes, batched over the leading ones (which broadcast
 * where their static length is 1). A vector operand is promoted to a matrix (a row for x, a
 * column for y) and the promoted axis removed from the result. Scalars are refused.
 */
export function matmul(x: TensorLike, y: TensorLike): TensorVariable {
  const [xv, yv] = asTensorArgs([x, y], 'matmul');
  [xv!, yv!].forEach((v, i) => {
    if (v.ndim === 0) throw new TypeError(`matmul: input ${i} ${described(v)} is 0-d; matmul needs at least one axis (use mul for scalars)`);
  });
  if (xv!.ndim <= 2 && yv!.ndim <= 2) return dotOp().call(xv!, yv!);
  const a = xv!.ndim === 1 ? dimshuffle(xv!, ['x', 0]) : xv!;
  const b = yv!.ndim === 1 ? dimshuffle(yv!, [0, 'x']) : yv!;
  const z = matmulOp().call(a, b);
  const keep = [...Array(z.ndim).keys()].filter(
    (ax) => !(xv!.ndim === 1 && ax === z.ndim - 2) && !(yv!.ndim === 1 && ax === z.ndim - 1),
  );
  return keep.length === z.ndim ? z : dimshuffle(z, keep);
}

/** The outer product of two vectors (other operands are flattened first, as NumPy does). */
export function outer(x: TensorLike, y: TensorLike): TensorVariable {
  const [xv, yv] = asTensorArgs([x, y], 'outer');
  return outerOfVectors(xv!.ndim === 1 ? xv! : flatten(xv!), yv!.ndim === 1 ? yv! : flatten(yv!));
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(Dot);
registerOpCodec(TensorDot);
registerOpCodec(MatMul);
