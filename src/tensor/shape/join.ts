// Join (concatenate, stack) and Split, plus the int vectors that shape arguments travel in
// (reshape's target, split's sizes): Join copies its inputs one after another along an axis,
// Split cuts an axis into views, and a vector of lengths is built here and read back per entry.
import { isDiscreteDtype, isIntDtype } from '../../kernels/dtype.js';
import { slabOf } from '../../kernels/join.js';
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import { disconnected, isDisconnected } from '../../graph/gradient.js';
import type { IndexMap, KernelCall, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { evalPointOrZeros, zerosLike } from './alloc.js';
import { asTensorArgs, asTensorVariable, constant } from '../core/as-tensor.js';
import { config } from '../core/config.js';
import { DimShuffle, dimshuffle, type ShuffleEntry } from './dimshuffle.js';
import { upcast } from '../core/dtype.js';
import { ShapeMismatchError } from '../elemwise/elemwise.js';
import { add, cast } from '../elemwise/math.js';
import { MakeVector } from './make-vector.js';
import { makeNdArray, shapeText } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { asIntScalar, constantScalar, intConstant, Shape, shapeI, smallInputValues } from './shape.js';
import { get } from './subtensor.js';
import { TensorType } from '../core/type.js';
import { isTensorVariable, TensorConstant, type TensorLike, type TensorVariable } from '../core/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { propKinds } from '../../graph/prop-kinds.js';
import { tensorPropKinds } from '../core/prop-kinds.js';

// ---------------------------------------------------------------------------------------------
// Int vectors of lengths

/** The integer values of a 1-d or 0-d array, in order (any stride). */
export function intValues(a: TensorView): number[] {
  if (a.shape.length === 0) return [a.data[a.offset]!];
  const out = new Array<number>(a.shape[0]!);
  for (let i = 0; i < out.length; i++) out[i] = a.data[a.offset + i * a.stride[0]!]!;
  return out;
}

/**
 * An int32 vector of `entries` (numbers and scalar int variables): a constant when every entry
 * is known, else a stack of the scalars. `where` names the argument for errors.
 */
export function intVector(entries: ReadonlyArray<number | Variable>, where: string): TensorVariable {
  const scalars = entries.map((e, i) => asIntScalar(e, `${where}[${i}]`));
  const known = scalars.map(constantScalar);
  if (known.every((k) => k !== undefined)) {
    return constant(makeNdArray(Int32Array.from(known as number[]), [known.length]), { dtype: 'int32' });
  }
  return stack(scalars.map((s) => cast(s, 'int32')));
}

/** The scalars a vector was made of (a MakeVector, or the stack `intVector` builds), if it is one. */
function scalarsOf(v: TensorVariable): TensorVariable[] | undefined {
  const node = v.owner;
  if (node?.op instanceof MakeVector) return node.inputs as TensorVariable[];
  if (!node || !(node.op instanceof Join) || node.op.axis !== 0) return undefined;
  const scalars: TensorVariable[] = [];
  for (const piece of node.inputs) {
    const op = piece.owner?.op;
    if (!(op instanceof DimShuffle) || op.inputNdim !== 0 || op.newOrder.length !== 1) return undefined;
    scalars.push(piece.owner!.inputs[0] as TensorVariable);
  }
  return scalars;
}

/**
 * What is known before running about the `n` entries of an int vector: a number per entry that
 * is a constant, null elsewhere. It builds no nodes (makeNode uses it for static shapes).
 */
export function staticEntries(v: TensorVariable, n: number): Array<number | null> {
  if (v instanceof TensorConstant) return intValues(v.data);
  const node = v.owner;
  if (node?.op instanceof Shape) return [...(node.inputs[0]!.type as TensorType).shape];
  const scalars = scalarsOf(v);
  if (scalars) return scalars.map((s) => constantScalar(s) ?? null);
  return Array<null>(n).fill(null);
}

/** Entry `i` of an int vector as a scalar: read from a constant, a stack or a Shape, else indexed. */
export function vectorEntry(v: TensorVariable, i: number): TensorVariable {
  if (v instanceof TensorConstant) return intConstant(intValues(v.data)[i]!);
  const node = v.owner;
  if (node?.op instanceof Shape) return shapeI(node.inputs[0] as TensorVariable, i);
  const scalars = scalarsOf(v);
  if (scalars) return cast(scalars[i]!, v.dtype);
  return get(v, i);
}

/** The sum of int32 scalars, with the constant ones added up while building. */
function sumOfLengths(xs: readonly TensorVariable[]): TensorVariable {
  let total = 0;
  const symbolic: TensorVariable[] = [];
  for (const x of xs) {
    const c = constantScalar(x);
    if (c === undefined) symbolic.push(x);
    else total += c;
  }
  if (symbolic.length === 0) return intConstant(total);
  if (total !== 0) symbolic.push(intConstant(total));
  return symbolic.length === 1 ? symbolic[0]! : add(...symbolic);
}

/** `axis` as a non-negative axis of an `ndim`-d tensor (negative counts from the end). */
function normalizeAxis(axis: number, ndim: number, where: string, what = `a ${ndim}-d input`): number {
  if (!Number.isInteger(axis) || axis < -ndim || axis >= ndim) {
    throw new RangeError(`${where}: axis ${axis} is out of range for ${what} (axes are ${-ndim}..${ndim - 1})`);
  }
  return axis < 0 ? axis + ndim : axis;
}

// ---------------------------------------------------------------------------------------------
// Join

export class Join extends TensorOp {
  static override readonly props = ['axis'] as const;
  static override readonly propKinds = { axis: tensorPropKinds.signedAxis };

  /** `axis` may be negative; it is resolved against the inputs' rank. */
  constructor(readonly axis: number) {
    super();
    if (!Number.isInteger(axis)) throw new RangeError(`Join: the axis must be an integer, got ${axis}`);
  }

  axisFor(ndim: number): number {
    return normalizeAxis(this.axis, ndim, String(this), `${ndim}-d inputs`);
  }

  override makeNode(...xs: unknown[]): Apply {
    const inputs = asTensorArgs(xs as TensorLike[], String(this));
    if (inputs.length === 0) throw new TypeError(`${this}: expected at least one input`);
    const nd = inputs[0]!.ndim;
    inputs.forEach((x, i) => {
      if (x.ndim !== nd) {
        throw new TypeError(`${this}: input ${i} (${x}, ${x.type}) has ${x.ndim} axes but input 0 has ${nd}; joined inputs must have the same number of axes`);
      }
    });
    if (nd === 0) throw new TypeError(`${this}: cannot join 0-d inputs (stack makes a vector of scalars)`);
    const axis = this.axisFor(nd);
    const shape: Array<number | null> = [];
    for (let a = 0; a < nd; a++) {
      if (a === axis) {
        const lengths = inputs.map((x) => x.type.shape[a]!);
        shape.push(lengths.every((d) => d !== null) ? lengths.reduce((p, q) => p! + q!, 0) : null);
        continue;
      }
      let known: number | null = null;
      let from = -1;
      inputs.forEach((x, i) => {
        const d = x.type.shape[a]!;
        if (d === null) return;
        if (known !== null && d !== known) {
          throw new ShapeMismatchError(
            `${this}: input ${i} (${x}, ${x.type}) has length ${d} on axis ${a} where input ${from} has ${known}; ` +
              `joined inputs must have equal lengths on every axis but ${axis}`,
          );
        }
        known = d;
        from = i;
      });
      shape.push(known);
    }
    const dtype = upcast(...inputs.map((x) => x.dtype));
    return new Apply(this, inputs, [new TensorType(dtype, shape).makeVariable()]);
  }

  override kernel(node: Apply): KernelCall {
    return { name: 'concat', params: { axis: this.axisFor((node.outputs[0]!.type as TensorType).ndim) }, chunking: { by: 'rows' } };
  }

  override outputShapes(_node: Apply, xs: readonly TensorView[]): number[][] {
    const nd = xs[0]!.shape.length;
    const axis = this.axisFor(nd);
    const first = xs[0]!.shape;
    let total = 0;
    xs.forEach((x, i) => {
      for (let a = 0; a < nd; a++) {
        if (a === axis || x.shape[a] === first[a]) continue;
        throw new ShapeMismatchError(
          `${this}: input ${i} has shape ${shapeText(x.shape)} but input 0 has shape ${shapeText(first)}: ` +
            `they differ on axis ${a} (${first[a]} vs ${x.shape[a]}); all lengths but those on axis ${axis} must match`,
        );
      }
      total += x.shape[axis]!;
    });
    const shape = [...first];
    shape[axis] = total;
    return [shape];
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    const outType = node.outputs[0]!.type as TensorType;
    const axis = this.axisFor(outType.ndim);
    return [
      outType.shape.map((d, a) => {
        if (d !== null) return intConstant(d);
        if (a === axis) return sumOfLengths(shapes.map((s) => s[a] as TensorVariable));
        return shapes[0]![a]!;
      }),
    ];
  }

  override Lop(inputs: readonly TensorVariable[], outputs: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    if (isDiscreteDtype(outputs[0]!.dtype)) return inputs.map((x) => zerosLike(x, config.floatX));
    if (inputs.length === 1) return [gz!];
    const axis = this.axisFor(gz!.ndim);
    return split(gz!, inputs.map((x) => shapeI(x, axis)), axis);
  }

  override rop(inputs: readonly TensorVariable[], evalPoints: readonly Variable[]): Variable[] {
    // Integer inputs joined with floats do not move: their parts of the tangent are zeros.
    return [this.call(...evalPoints.map((ev, i) => evalPointOrZeros(ev, inputs[i]!)))];
  }
}

// ---------------------------------------------------------------------------------------------
// Split

export class Split extends TensorOp<TensorVariable | TensorVariable[]> {
  static override readonly props = ['nSplits', 'axis'] as const;
  static override readonly propKinds = { nSplits: propKinds.int(1, 65536), axis: tensorPropKinds.signedAxis };
  override readonly viewMap: IndexMap;

  /** `axis` may be negative; it is resolved against the input's rank. */
  constructor(
    readonly nSplits: number,
    readonly axis: number,
  ) {
    super();
    if (!Number.isInteger(nSplits) || nSplits < 1) throw new RangeError(`Split: expected at least one piece, got ${nSplits}`);
    if (!Number.isInteger(axis)) throw new RangeError(`Split: the axis must be an integer, got ${axis}`);
    this.viewMap = Object.fromEntries([...Array(nSplits).keys()].map((j) => [j, [0]]));
  }

  axisFor(ndim: number): number {
    return normalizeAxis(this.axis, ndim, String(this));
  }

  override makeNode(x: unknown, sizes: unknown): Apply {
    const v = asTensorVariable(x as TensorLike);
    if (v.ndim === 0) throw new TypeError(`${this}: cannot split the 0-d input ${v}`);
    const axis = this.axisFor(v.ndim);
    const s = asTensorVariable(sizes as TensorLike);
    if (s.ndim !== 1 || !isIntDtype(s.dtype)) throw new TypeError(`${this}: the sizes must be an int vector, got ${s} (${s.type})`);
    const staticLength = s.type.shape[0];
    if (staticLength !== null && staticLength !== this.nSplits) {
      throw new TypeError(`${this}: expected ${this.nSplits} sizes, got a vector of ${staticLength}`);
    }
    const known = staticEntries(s, this.nSplits);
    known.forEach((d, j) => {
      if (d !== null && d < 0) throw new RangeError(`${this}: size ${j} is negative (${d})`);
    });
    const length = v.type.shape[axis];
    if (length !== null && known.every((d) => d !== null)) {
      const total = (known as number[]).reduce((p, q) => p + q, 0);
      if (total !== length) {
        throw new ShapeMismatchError(
          `${this}: the sizes ${shapeText(known as number[])} add up to ${total} but axis ${axis} of ${v} (${v.type}) has length ${length}`,
        );
      }
    }
    const outputs = known.map((d) => {
      const shape = [...v.type.shape];
      shape[axis] = d;
      return new TensorType(v.dtype, shape).makeVariable();
    });
    return new Apply(this, [v, s], outputs);
  }

  /** The pieces as slabs of x (the sizes input is read for their lengths), checked. */
  override view(_node: Apply, [x, sizes]: readonly TensorView[]): TensorView[] {
    const axis = this.axisFor(x!.shape.length);
    const lengths = smallInputValues(sizes!, `${this}: the sizes`);
    if (lengths.length !== this.nSplits) throw new RangeError(`${this}: expected ${this.nSplits} sizes, got ${lengths.length}`);
    lengths.forEach((d, j) => {
      if (d < 0) throw new RangeError(`${this}: size ${j} is negative (${d})`);
    });
    const total = lengths.reduce((p, q) => p + q, 0);
    if (total !== x!.shape[axis]) {
      throw new ShapeMismatchError(
        `${this}: the sizes ${shapeText(lengths)} add up to ${total} but axis ${axis} of the input has length ${x!.shape[axis]} (input shape ${shapeText(x!.shape)})`,
      );
    }
    let start = 0;
    return lengths.map((d) => {
      const piece = slabOf(x!, axis, start, d);
      start += d;
      return piece;
    });
  }

  override inferShape(node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    const sizes = node.inputs[1] as TensorVariable;
    return node.outputs.map((o, j) => {
      const outType = o.type as TensorType;
      const axis = this.axisFor(outType.ndim);
      return outType.shape.map((d, a) => {
        if (d !== null) return intConstant(d);
        return a === axis ? cast(vectorEntry(sizes, j), 'int32') : xs![a]!;
      });
    });
  }

  override connectionPattern(node: Apply): boolean[][] {
    return [node.outputs.map(() => true), node.outputs.map(() => false)];
  }

  override Lop(inputs: readonly TensorVariable[], outputs: readonly TensorVariable[], gzs: readonly TensorVariable[]): Variable[] {
    const x = inputs[0]!;
    if (isDiscreteDtype(x.dtype)) return [zerosLike(x, config.floatX), disconnected()];
    const parts = gzs.map((g, j) => (isDisconnected(g) ? zerosLike(outputs[j]!) : g));
    return [parts.length === 1 ? parts[0]! : concatenate(parts, this.axisFor(x.ndim)), disconnected()];
  }

  override rop(inputs: readonly TensorVariable[], [ev]: readonly TensorVariable[]): Variable[] {
    return [...this.makeNode(ev, inputs[1]).outputs];
  }
}

// ---------------------------------------------------------------------------------------------
// The functions of pt

const joinOps = new Map<number, Join>();

/** The tensors of `xs` one after another along `axis`, upcast to a common dtype. */
export function concatenate(xs: readonly TensorLike[], axis = 0): TensorVariable {
  const vs = asTensorArgs(xs, 'concatenate');
  if (vs.length === 0) throw new TypeError('concatenate: expected at least one tensor');
  const nd = vs[0]!.ndim;
  if (nd === 0) throw new TypeError(`concatenate: cannot join 0-d tensors such as ${vs[0]} (stack makes a vector of scalars)`);
  const a = normalizeAxis(axis, nd, 'concatenate');
  if (vs.length === 1) return vs[0]!;
  let op = joinOps.get(a);
  if (!op) {
    op = new Join(a);
    joinOps.set(a, op);
  }
  return op.call(...vs);
}

/** The tensors of `xs` (all of one shape) along a new axis `axis`. */
export function stack(xs: readonly TensorLike[], axis = 0): TensorVariable {
  const vs = asTensorArgs(xs, 'stack');
  if (vs.length === 0) throw new TypeError('stack: expected at least one tensor');
  const nd = vs[0]!.ndim;
  vs.forEach((v, i) => {
    if (v.ndim !== nd) {
      throw new TypeError(`stack: tensor ${i} (${v}, ${v.type}) has ${v.ndim} axes but tensor 0 has ${nd}; stacked tensors must have the same shape`);
    }
  });
  const a = normalizeAxis(axis, nd + 1, 'stack', `stacking ${nd}-d tensors`);
  const pattern: ShuffleEntry[] = [...Array(nd).keys()];
  pattern.splice(a, 0, 'x');
  return concatenate(vs.map((v) => dimshuffle(v, pattern)), a);
}

/**
 * `x` cut along `axis` into pieces of the given lengths (numbers and scalar int variables, or an
 * int vector of static length); the pieces are views of `x` and their lengths must add up to its length.
 */
export function split(x: TensorLike, sizes: ReadonlyArray<number | TensorVariable> | TensorVariable, axis = 0): TensorVariable[] {
  const v = asTensorVariable(x);
  if (v.ndim === 0) throw new TypeError(`split: cannot split the 0-d tensor ${v}`);
  const a = normalizeAxis(axis, v.ndim, 'split');
  let vector: TensorVariable;
  if (isTensorVariable(sizes)) {
    if (sizes.ndim !== 1 || !isIntDtype(sizes.dtype) || sizes.type.shape[0] === null) {
      throw new TypeError(`split: sizes given as a variable must be an int vector of static length, got ${sizes} (${sizes.type})`);
    }
    vector = sizes;
  } else {
    vector = intVector(sizes, 'split: sizes');
  }
  const n = vector.type.shape[0]!;
  if (n === 0) throw new RangeError('split: expected at least one size');
  return new Split(n, a).makeNode(v, vector).outputs as TensorVariable[];
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(Join);
registerOpCodec(Split);
