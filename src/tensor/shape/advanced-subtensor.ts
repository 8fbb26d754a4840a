// Integer-array indexing (NumPy's advanced indexing): AdvancedSubtensor gathers x at `count`
// index arrays (broadcast together) on consecutive axes from `axis`; AdvancedIncSubtensor sets or
// adds y there in a copy of x, repeated indices accumulating as np.add.at does. Gather's gradient
// is the accumulating scatter, scatter's is a gather. Kernels: kernels/gather.ts (chunked over
// the output; the scatter is race-free and gives the same bits on any number of workers).
import { isIntDtype } from '../../kernels/dtype.js';
import { broadcastIndexShapes, gatheredShape, type GatherParams, type ScatterParams } from '../../kernels/gather.js';
import { getKernel } from '../../kernels/registry.js';
import { isContiguous, type TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import { disconnected } from '../../graph/gradient.js';
import type { IndexMap, KernelCall, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { propKinds } from '../../graph/prop-kinds.js';
import { asTensorArgs, asTensorVariable, constant } from '../core/as-tensor.js';
import { canCastSafely } from '../core/dtype.js';
import { empty, type NdArray } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { tensorPropKinds } from '../core/prop-kinds.js';
import { TensorType, type StaticShape } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { cast } from '../elemwise/math.js';
import { evalPointOrZeros, zerosLike } from './alloc.js';
import { intConstant } from './shape.js';
import { reduceToY } from './subtensor.js';

/** Work per task of a scatter (TASK_WORK is 2^17): each task reads all the indices. */
const SCATTER_TASK_WORK = 1 << 20;

const MAX_INDEXED = 32;

/** The static broadcast of the index arrays' shapes (null where unknown), or an error naming them. */
function broadcastStatic(shapes: readonly StaticShape[], where: string): Array<number | null> {
  const nd = Math.max(0, ...shapes.map((s) => s.length));
  return [...Array(nd).keys()].map((a) => {
    const dims = shapes.map((s) => s[a - (nd - s.length)]).filter((d): d is number | null => d !== undefined);
    const known = [...new Set(dims.filter((d): d is number => d !== null && d !== 1))];
    if (known.length > 1) {
      throw new RangeError(`${where}: index arrays of static shapes ${shapes.map((s) => `(${s.map((d) => d ?? '?').join(', ')})`).join(' and ')} cannot be broadcast together`);
    }
    if (known.length === 1) return known[0]!;
    return dims.every((d) => d === 1) ? 1 : null;
  });
}

/** The symbolic broadcast of the index arrays' shapes: each axis from an array not statically 1 there. */
function broadcastSymbolic(indices: readonly TensorVariable[], shapes: readonly SymbolicShape[]): Variable[] {
  const nd = Math.max(0, ...indices.map((v) => v.ndim));
  return [...Array(nd).keys()].map((a) => {
    const j = indices.findIndex((v) => a - (nd - v.ndim) >= 0 && v.type.shape[a - (nd - v.ndim)] !== 1);
    return j < 0 ? intConstant(1) : shapes[j]![a - (nd - indices[j]!.ndim)]!;
  });
}

function checkIndexArrays(where: string, x: TensorVariable, indices: readonly TensorVariable[], axis: number, count: number): void {
  if (indices.length !== count) throw new TypeError(`${where}: expected ${count} index array${count === 1 ? '' : 's'}, got ${indices.length}`);
  if (axis + count > x.ndim) throw new TypeError(`${where}: too many indices for ${x} (${x.type}): it has ${x.ndim} axes but axes ${axis} to ${axis + count - 1} were indexed`);
  indices.forEach((v, j) => {
    if (!isIntDtype(v.dtype)) throw new TypeError(`${where}: index ${j} must be an integer array, got ${v} (${v.type})`);
  });
}

abstract class IndexArrayOp extends TensorOp {
  constructor(
    /** The first indexed axis of x. */
    readonly axis: number,
    /** How many consecutive axes are indexed, one index array each. */
    readonly count: number,
  ) {
    super();
    if (!Number.isInteger(axis) || axis < 0) throw new RangeError(`${new.target.name}: axis must be a non-negative integer, got ${axis}`);
    if (!Number.isInteger(count) || count < 1 || count > MAX_INDEXED) throw new RangeError(`${new.target.name}: count must be an integer from 1 to ${MAX_INDEXED}, got ${count}`);
  }

  protected gatherParams(): GatherParams {
    return { axis: this.axis, count: this.count, op: String(this) };
  }

  /** The static shape x's elements are selected in: x's axes around the broadcast index shape. */
  protected gatheredStatic(x: TensorVariable, indices: readonly TensorVariable[]): StaticShape {
    return gatheredShape(x.type.shape as number[], broadcastStatic(indices.map((v) => v.type.shape), String(this)) as number[], this.axis, this.count);
  }

  protected gatheredReal(x: TensorView, indices: readonly TensorView[]): number[] {
    return gatheredShape(x.shape, broadcastIndexShapes(indices.map((v) => v.shape), String(this)), this.axis, this.count);
  }
}

/** x at the index arrays: x[:, ..., i0, i1, ..., :] with i0 on axis `axis` (NumPy's x[..., i0, i1]). */
export class AdvancedSubtensor extends IndexArrayOp {
  static override readonly props = ['axis', 'count'] as const;
  static override readonly propKinds = { axis: tensorPropKinds.axis, count: propKinds.int(1, MAX_INDEXED) };

  override makeNode(x: unknown, ...indices: unknown[]): Apply {
    const v = asTensorVariable(x as TensorLike);
    const idx = indices.map((i) => asTensorVariable(i as TensorLike));
    checkIndexArrays(String(this), v, idx, this.axis, this.count);
    return new Apply(this, [v, ...idx], [new TensorType(v.dtype, this.gatheredStatic(v, idx)).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: 'gather', params: { ...this.gatherParams() }, chunking: { by: 'elements' } };
  }

  override outputShapes(_node: Apply, [x, ...indices]: readonly TensorView[]): number[][] {
    return [this.gatheredReal(x!, indices)];
  }

  override inferShape(node: Apply, [xs, ...is]: readonly SymbolicShape[]): SymbolicShape[] {
    const idx = node.inputs.slice(1) as TensorVariable[];
    return [[...xs!.slice(0, this.axis), ...broadcastSymbolic(idx, is), ...xs!.slice(this.axis + this.count)]];
  }

  override connectionPattern(node: Apply): boolean[][] {
    return node.inputs.map((_, i) => [i === 0]);
  }

  override grad([x, ...indices]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    // The gradient accumulates: an element selected twice gets both gradients (np.add.at).
    const gx = new AdvancedIncSubtensor(this.axis, this.count, false).call(zerosLike(x!), gz!, ...indices);
    return [gx, ...indices.map(() => disconnected())];
  }

  override rop([x, ...indices]: readonly TensorVariable[], [ev]: readonly Variable[]): Variable[] {
    return [this.call(evalPointOrZeros(ev!, x!), ...indices)];
  }

  override toString(): string {
    return `AdvancedSubtensor{axis=${this.axis}, count=${this.count}}`;
  }
}

/** x with y set into (or added to) the elements the index arrays select; y broadcasts onto them. */
export class AdvancedIncSubtensor extends IndexArrayOp {
  static override readonly props = ['axis', 'count', 'set', 'inplace'] as const;
  static override readonly propKinds = { axis: tensorPropKinds.axis, count: propKinds.int(1, MAX_INDEXED), set: propKinds.boolean(), inplace: propKinds.boolean() };
  override readonly destroyMap: IndexMap;

  /** `inplace`: the output is x's memory (the inplace rewrite's form), where x is not copied first. */
  constructor(axis: number, count: number, readonly set: boolean, readonly inplace = false) {
    super(axis, count);
    this.destroyMap = inplace ? { 0: [0] } : {};
  }

  override makeNode(x: unknown, y: unknown, ...indices: unknown[]): Apply {
    const where = String(this);
    const [xv, yv] = asTensorArgs([x as TensorLike, y as TensorLike], where) as [TensorVariable, TensorVariable];
    const idx = indices.map((i) => asTensorVariable(i as TensorLike));
    checkIndexArrays(where, xv, idx, this.axis, this.count);
    if (!canCastSafely(yv.dtype, xv.dtype)) {
      throw new TypeError(`${where}: cannot ${this.set ? 'set' : 'add'} ${yv.dtype} values y = ${yv} into ${xv} of dtype ${xv.dtype} without loss; cast y first (y.astype('${xv.dtype}'))`);
    }
    const region = this.gatheredStatic(xv, idx);
    const lead = region.length - yv.ndim;
    const fits = lead >= 0 && yv.type.shape.every((d, a) => d === 1 || d === null || region[a + lead] === null || d === region[a + lead]);
    if (!fits) throw new TypeError(`${where}: y = ${yv} (${yv.type}) cannot be broadcast to the indexed elements of static shape (${region.map((d) => d ?? '?').join(', ')})`);
    const yc = yv.dtype === xv.dtype ? yv : cast(yv, xv.dtype);
    return new Apply(this, [xv, yc, ...idx], [xv.type.makeVariable()]);
  }

  override kernel(node: Apply): KernelCall {
    const params: ScatterParams = { ...this.gatherParams(), set: this.set, asBool: (node.outputs[0]!.type as TensorType).dtype === 'bool' };
    // Each task reads every index to find the updates that land in it: fewer, longer tasks than
    // an element-wise op's (W10's 64k updates in 64 tasks spent most of the call on the indices).
    return { name: this.inplace ? 'scatterInplace' : 'scatter', params: { ...params }, chunking: { by: 'elements' }, taskWork: SCATTER_TASK_WORK };
  }

  /** Inplace, the result is x itself when x is in C order (the kernel's chunks are flat elements); else a new array. */
  override perform(node: Apply, values: readonly unknown[]): unknown[] {
    const inputs = values as readonly NdArray[];
    const x = inputs[0]!;
    const call = this.kernel(node);
    if (!this.inplace || !isContiguous(x)) {
      const out = empty((node.outputs[0]!.type as TensorType).dtype, this.outputShapes(node, inputs)[0]!);
      getKernel('scatter')(inputs, [out], call.params);
      return [out];
    }
    this.outputShapes(node, inputs); // the shape checks and their errors, as for a new array
    getKernel(call.name)(inputs, [x], call.params);
    return [x];
  }

  override outputShapes(_node: Apply, [x, y, ...indices]: readonly TensorView[]): number[][] {
    const region = this.gatheredReal(x!, indices);
    const lead = region.length - y!.shape.length;
    if (lead < 0 || y!.shape.some((d, a) => d !== 1 && d !== region[a + lead])) {
      throw new RangeError(`${this}: y of shape [${y!.shape.join(', ')}] cannot be broadcast to the indexed elements of shape [${region.join(', ')}]`);
    }
    return [[...x!.shape]];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [xs!];
  }

  override connectionPattern(node: Apply): boolean[][] {
    return node.inputs.map((_, i) => [i < 2]);
  }

  override grad([, y, ...indices]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    // Set: the selected elements of x were replaced, so none of gz reaches them.
    const gx = this.set ? new AdvancedIncSubtensor(this.axis, this.count, true).call(gz!, constant(0, { dtype: gz!.dtype }), ...indices) : gz!;
    const region = new AdvancedSubtensor(this.axis, this.count).call(gz!, ...indices);
    return [gx, reduceToY(region, y!), ...indices.map(() => disconnected())];
  }

  override rop([x, y, ...indices]: readonly TensorVariable[], [ex, ey]: readonly Variable[]): Variable[] {
    const tx = evalPointOrZeros(ex!, x!);
    return [new AdvancedIncSubtensor(this.axis, this.count, this.set).call(tx, cast(evalPointOrZeros(ey!, y!), tx.dtype), ...indices)];
  }

  override toString(): string {
    return `Advanced${this.set ? 'Set' : 'Inc'}Subtensor{axis=${this.axis}, count=${this.count}${this.inplace ? ', inplace' : ''}}`;
  }
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(AdvancedSubtensor);
registerOpCodec(AdvancedIncSubtensor);
