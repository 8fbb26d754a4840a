// Products of tensors: Dot (NumPy's dot of vectors and matrices), TensorDot (contraction over
// pairs of axes, which also gives NumPy's dot for higher ranks), MatMul (batched products with
// broadcast batch axes) and outer. All three ops run the packed kernels of kernels/gemm.ts.
import type { Dtype } from '../kernels/dtype.js';
import { batchedMatmulInto, matmulInto, tensordotInto } from '../kernels/gemm.js';
import type { TensorView } from '../kernels/view.js';
import { Apply } from '../graph/apply.js';
import type { SymbolicShape } from '../graph/op.js';
import type { Variable } from '../graph/variable.js';
import { asTensorArgs } from './as-tensor.js';
import { upcast } from './dtype.js';
import { dimshuffle, transpose, type ShuffleEntry } from './dimshuffle.js';
import { ShapeMismatchError } from './elemwise.js';
import { add, mul } from './math.js';
import { empty, shapeText, type NdArray } from './ndarray.js';
import { lazy, TensorOp } from './op.js';
import { sum } from './reduce.js';
import { flatten } from './reshape.js';
import { TensorType, type StaticShape } from './type.js';
import type { TensorLike, TensorVariable } from './variable.js';

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

// ---------------------------------------------------------------------------------------------
// Dot

/** NumPy's dot for vectors and matrices: vector·vector gives a 0-d result. */
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

  override perform(node: Apply, [x, y]: readonly NdArray[]): NdArray[] {
    const k = x!.shape[x!.shape.length - 1]!;
    if (y!.shape[0] !== k) {
      throw new ShapeMismatchError(
        `Dot: shapes ${shapeText(x!.shape)} and ${shapeText(y!.shape)} are not aligned: axis ${x!.shape.length - 1} of input 0 ` +
          `has length ${k}, axis 0 of input 1 has length ${y!.shape[0]}`,
      );
    }
    const m = x!.shape.length === 2 ? x!.shape[0]! : 1;
    const n = y!.shape.length === 2 ? y!.shape[1]! : 1;
    const outShape = [...(x!.shape.length === 2 ? [m] : []), ...(y!.shape.length === 2 ? [n] : [])];
    const out = empty((node.outputs[0]!.type as TensorType).dtype, outShape);
    // Vectors become a row (x) and a column (y), so that every case is one matrix product.
    const a: TensorView = x!.shape.length === 2 ? x! : { data: x!.data, offset: x!.offset, shape: [1, k], stride: [0, x!.stride[0]!] };
    const b: TensorView = y!.shape.length === 2 ? y! : { data: y!.data, offset: y!.offset, shape: [k, 1], stride: [y!.stride[0]!, 0] };
    const cStride = outShape.length === 2 ? out.stride : x!.shape.length === 2 ? [1, 0] : y!.shape.length === 2 ? [0, 1] : [0, 0];
    matmulInto(a, b, { data: out.data, offset: 0, shape: [m, n], stride: cStride });
    return [out];
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

  override rop([x, y]: readonly TensorVariable[], [ex, ey]: readonly TensorVariable[]): Variable[] {
    return [add(this.call(ex!, y!), this.call(x!, ey!))];
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

  override perform(node: Apply, [a, b]: readonly NdArray[]): NdArray[] {
    this.axesA.forEach((ax, i) => {
      const bx = this.axesB[i]!;
      if (a!.shape[ax] !== b!.shape[bx]) {
        throw new ShapeMismatchError(
          `${this}: shapes ${shapeText(a!.shape)} and ${shapeText(b!.shape)} are not aligned: axis ${ax} of input 0 has length ` +
            `${a!.shape[ax]}, axis ${bx} of input 1 has length ${b!.shape[bx]}`,
        );
      }
    });
    const shape = [
      ...freeAxes(a!.shape.length, this.axesA).map((ax) => a!.shape[ax]!),
      ...freeAxes(b!.shape.length, this.axesB).map((ax) => b!.shape[ax]!),
    ];
    const out = empty((node.outputs[0]!.type as TensorType).dtype, shape);
    tensordotInto(a!, b!, this.axesA, this.axesB, out);
    return [out];
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

  override rop([a, b]: readonly TensorVariable[], [ea, eb]: readonly TensorVariable[]): Variable[] {
    return [add(this.call(ea!, b!), this.call(a!, eb!))];
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

  override perform(node: Apply, [x, y]: readonly NdArray[]): NdArray[] {
    const [xt, yt] = node.inputs.map((v) => v.type as TensorType);
    const outType = node.outputs[0]!.type as TensorType;
    const nd = outType.ndim;
    const nb = nd - 2;
    const k = x!.shape[x!.shape.length - 1]!;
    if (y!.shape[y!.shape.length - 2] !== k) {
      throw new ShapeMismatchError(
        `MatMul: shapes ${shapeText(x!.shape)} and ${shapeText(y!.shape)} are not aligned: axis ${x!.shape.length - 1} of input 0 ` +
          `has length ${k}, axis ${y!.shape.length - 2} of input 1 has length ${y!.shape[y!.shape.length - 2]}`,
      );
    }
    // Each input as a view of the output's rank: missing batch axes and static 1s broadcast (stride 0).
    const views = [x!, y!].map((v, i) => {
      const lead = nd - v.shape.length;
      const staticShape = (i === 0 ? xt : yt)!.shape;
      return {
        shape: [...Array<number>(lead).fill(1), ...v.shape],
        broadcast: [...Array<boolean>(lead).fill(true), ...staticShape.map((d) => d === 1)],
        stride: [...Array<number>(lead).fill(0), ...v.stride.map((s, a) => (staticShape[a] === 1 ? 0 : s))],
      };
    });
    const batch: number[] = [];
    for (let a = 0; a < nb; a++) {
      const [vx, vy] = views as [(typeof views)[0], (typeof views)[0]];
      const [p, q] = [vx.shape[a]!, vy.shape[a]!];
      if (p !== q && !vx.broadcast[a] && !vy.broadcast[a]) {
        const one = p === 1 ? 0 : q === 1 ? 1 : -1;
        throw new ShapeMismatchError(
          `MatMul: the batch shapes of ${shapeText(x!.shape)} and ${shapeText(y!.shape)} cannot be broadcast together: ` +
            `lengths ${p} and ${q} on batch axis ${a}` +
            (one >= 0 ? ` (input ${one} has length 1 there, but its type does not mark the axis broadcastable)` : ''),
        );
      }
      batch.push(vx.broadcast[a] ? q : p);
    }
    const shape = [...batch, x!.shape[x!.shape.length - 2]!, y!.shape[y!.shape.length - 1]!];
    const out = empty(outType.dtype, shape);
    const full = (v: NdArray, i: number): TensorView => ({
      data: v.data,
      offset: v.offset,
      shape: [...batch, ...v.shape.slice(-2)],
      stride: views[i]!.stride,
    });
    batchedMatmulInto(full(x!, 0), full(y!, 1), out);
    return [out];
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

  override rop([x, y]: readonly TensorVariable[], [ex, ey]: readonly TensorVariable[]): Variable[] {
    return [add(this.call(ex!, y!), this.call(x!, ey!))];
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
