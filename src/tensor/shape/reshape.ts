// Reshape and flatten. The target shape is an int vector input (constant or symbolic) with at
// most one -1, whose length is inferred; the result is a view of a C-contiguous input and a
// copy of any other, as NumPy's reshape.
import { isIntDtype } from '../../kernels/dtype.js';
import { contiguousStrides, isContiguous, sizeOf, type TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import { disconnected } from '../../graph/gradient.js';
import type { IndexMap, KernelCall, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { ShapeMismatchError } from '../elemwise/elemwise.js';
import { intVector, staticEntries, vectorEntry } from './join.js';
import { cast, eq, intDiv, maximum, mul, neg, where } from '../elemwise/math.js';
import { shapeText } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { constantScalar, intConstant, shapeOf, smallInputValues } from './shape.js';
import { TensorType } from '../core/type.js';
import { isTensorVariable, type ShapeLike, type TensorLike, type TensorVariable } from '../core/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { tensorPropKinds } from '../core/prop-kinds.js';

/** Checks the entries of a target shape that are known: lengths >= 0 and at most one -1. */
function checkTarget(where: string, target: readonly (number | null)[]): void {
  const text = shapeText(target.map((d) => (d === null ? '?' : d)) as unknown as number[]);
  for (const d of target) {
    if (d !== null && d < -1) {
      throw new RangeError(`${where}: the target shape ${text} has the negative length ${d} (only -1 is allowed, for one length to be inferred)`);
    }
  }
  if (target.filter((d) => d === -1).length > 1) {
    throw new RangeError(`${where}: the target shape ${text} has more than one -1 (only one length can be inferred)`);
  }
}

/** The target shape with its -1 resolved for an array of `inShape`; throws if the sizes differ. */
function resolveTarget(where: string, what: string, inShape: readonly number[], target: readonly number[]): number[] {
  const size = sizeOf(inShape);
  const free = target.indexOf(-1);
  if (free < 0) {
    const want = sizeOf(target);
    if (want !== size) {
      throw new ShapeMismatchError(
        `${where}: cannot reshape ${what} of shape ${shapeText(inShape)} (${size} elements) into shape ${shapeText(target)} (${want} elements)`,
      );
    }
    return [...target];
  }
  const rest = target.reduce((p, d, i) => (i === free ? p : p * d), 1);
  if (rest === 0) {
    throw new ShapeMismatchError(
      `${where}: cannot infer the -1 in the target shape ${shapeText(target)} for ${what} of shape ${shapeText(inShape)}: ` +
        'the other lengths multiply to 0',
    );
  }
  if (size % rest !== 0) {
    throw new ShapeMismatchError(
      `${where}: cannot reshape ${what} of shape ${shapeText(inShape)} (${size} elements) into shape ${shapeText(target)}: ` +
        `${size} is not a multiple of ${rest}`,
    );
  }
  const out = [...target];
  out[free] = size / rest;
  return out;
}

/** The product of int32 scalars, with the constant ones multiplied while building. */
function productOfLengths(xs: readonly TensorVariable[]): TensorVariable {
  let known = 1;
  const symbolic: TensorVariable[] = [];
  for (const x of xs) {
    const c = constantScalar(x);
    if (c === undefined) symbolic.push(x);
    else known *= c;
  }
  if (symbolic.length === 0) return intConstant(known);
  if (known !== 1) symbolic.push(intConstant(known));
  return symbolic.length === 1 ? symbolic[0]! : mul(...symbolic);
}

export class Reshape extends TensorOp {
  static override readonly props = ['ndim'] as const;
  static override readonly propKinds = { ndim: tensorPropKinds.ndim };
  /** A view when the input is C-contiguous (a copy otherwise, which a view map allows). */
  override readonly viewMap: IndexMap = { 0: [0] };

  constructor(readonly ndim: number) {
    super();
    if (!Number.isInteger(ndim) || ndim < 0) throw new RangeError(`Reshape: ndim must be a non-negative integer, got ${ndim}`);
  }

  override makeNode(x: unknown, shape: unknown): Apply {
    const v = asTensorVariable(x as TensorLike);
    const s = asTensorVariable(shape as TensorLike);
    if (s.ndim !== 1 || !isIntDtype(s.dtype)) {
      throw new TypeError(`${this}: the target shape must be an int vector, got ${s} (${s.type})`);
    }
    const length = s.type.shape[0];
    if (length !== null && length !== this.ndim) {
      throw new TypeError(`${this}: the target shape ${s} has ${length} lengths, expected ${this.ndim}`);
    }
    const target = staticEntries(s, this.ndim);
    checkTarget(String(this), target);
    const inShape = v.type.shape;
    let outShape: Array<number | null>;
    if (inShape.every((d) => d !== null) && target.every((d) => d !== null)) {
      outShape = resolveTarget(String(this), `${v}`, inShape as number[], target as number[]);
    } else {
      outShape = target.map((d) => (d === -1 ? null : d));
    }
    return new Apply(this, [v, s], [new TensorType(v.dtype, outShape).makeVariable()]);
  }

  /** The output shape: the target (read from the shape input) with its -1 resolved, checked. */
  override outputShapes(_node: Apply, [x, shape]: readonly TensorView[]): number[][] {
    const target = smallInputValues(shape!, `${this}: the target shape`);
    if (target.length !== this.ndim) {
      throw new RangeError(`${this}: the target shape ${shapeText(target)} has ${target.length} lengths, expected ${this.ndim}`);
    }
    checkTarget(String(this), target);
    return [resolveTarget(String(this), 'an array', x!.shape, target)];
  }

  /** A C-contiguous input is read in the new shape as it lies; any other needs the copy kernel. */
  override view(node: Apply, inputs: readonly TensorView[]): TensorView[] | undefined {
    const [outShape] = this.outputShapes(node, inputs);
    const x = inputs[0]!;
    if (!isContiguous(x)) return undefined;
    return [{ data: x.data, offset: x.offset, shape: outShape!, stride: contiguousStrides(outShape!) }];
  }

  override kernel(): KernelCall {
    return { name: 'reshapeCopy', params: {}, chunking: { by: 'elements' } };
  }

  override inferShape(node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    const outType = node.outputs[0]!.type as TensorType;
    if (outType.shape.every((d) => d !== null)) return [outType.shape.map((d) => intConstant(d!))];
    const s = node.inputs[1] as TensorVariable;
    const entries = [...Array(this.ndim).keys()].map((i) => cast(vectorEntry(s, i), 'int32'));
    const known = entries.map(constantScalar);
    if (known.every((d) => d !== undefined && d >= 0)) return [entries];
    // The inferred length: the input's size over the product of the other lengths. When the
    // place of the -1 is not known, -(product of all entries) is that product (one is -1).
    const size = productOfLengths(xs as TensorVariable[]);
    const free = known.indexOf(-1);
    const others = free >= 0 ? productOfLengths(entries.filter((_, i) => i !== free)) : neg(productOfLengths(entries));
    const inferred = intDiv(size, maximum(others, 1));
    return [
      entries.map((e, i) => {
        const d = outType.shape[i];
        if (d !== null && d !== undefined) return intConstant(d);
        if (known[i] === -1) return inferred;
        if (known[i] !== undefined) return e;
        return where(eq(e, -1), inferred, e);
      }),
    ];
  }

  override connectionPattern(): boolean[][] {
    return [[true], [false]];
  }

  override grad([x]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    return [reshapeTo(gz!, intVector(shapeOf(x!), 'Reshape.grad')), disconnected()];
  }

  override rop([, shape]: readonly TensorVariable[], [ev]: readonly TensorVariable[]): Variable[] {
    return [this.call(ev, shape)];
  }
}

const reshapeOps: Reshape[] = [];

function reshapeTo(x: TensorVariable, vector: TensorVariable): TensorVariable {
  const ndim = vector.type.shape[0]!;
  return (reshapeOps[ndim] ??= new Reshape(ndim)).call(x, vector);
}

/**
 * `x` with the elements in C order laid out in `shape`: numbers and scalar int variables (one
 * may be -1, inferred from the size), or an int vector variable of static length.
 */
export function reshape(x: TensorLike, shape: ShapeLike): TensorVariable {
  const v = asTensorVariable(x);
  let vector: TensorVariable;
  if (isTensorVariable(shape)) {
    if (shape.ndim === 0 && isIntDtype(shape.dtype)) vector = intVector([shape], 'reshape: shape');
    else if (shape.ndim !== 1 || !isIntDtype(shape.dtype) || shape.type.shape[0] === null) {
      throw new TypeError(`reshape: a shape given as a variable must be an int vector of static length, got ${shape} (${shape.type})`);
    } else vector = shape;
  } else if (typeof shape === 'number') {
    vector = intVector([shape], 'reshape: shape');
  } else if (Array.isArray(shape)) {
    vector = intVector(shape, 'reshape: shape');
  } else {
    throw new TypeError(`reshape: the shape must be an array of lengths or an int vector variable, got ${String(shape)}`);
  }
  return reshapeTo(v, vector);
}

/** `x` with its first `ndim - 1` axes kept and the others flattened into one (all of them by default). */
export function flatten(x: TensorLike, ndim = 1): TensorVariable {
  const v = asTensorVariable(x);
  const most = Math.max(1, v.ndim);
  if (!Number.isInteger(ndim) || ndim < 1 || ndim > most) {
    throw new RangeError(`flatten: ndim must be an integer from 1 to ${most} for ${v} (${v.ndim}-d), got ${ndim}`);
  }
  const lengths = shapeOf(v);
  // The last length as a product rather than -1: it stays static where those axes are, and a
  // size-0 input has no ambiguous -1 to infer.
  const entries = [...lengths.slice(0, ndim - 1), productOfLengths(lengths.slice(ndim - 1))];
  return reshapeTo(v, intVector(entries, 'flatten'));
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(Reshape);
