// Basic indexing: Subtensor (`x.get(...)`, a view of x) and IncSubtensor (setSubtensor and
// incSubtensor, which return a new tensor). As in PyTensor, an op's props hold only the index
// structure; the index values are int32 scalar inputs, so x.get(1) and x.get(2) share one op.
// Subtensor is view arithmetic (`view`); IncSubtensor runs the 'incSubtensor' kernel by rows, or
// (`inplace`, set by the inplace rewrites) 'incSubtensorInplace', which writes into x itself.
import { isIntDtype } from '../../kernels/dtype.js';
import type { IncSubtensorParams } from '../../kernels/inc-subtensor.js';
import { getKernel } from '../../kernels/registry.js';
import {
  broadcastOnto,
  isSliceSpec,
  selectView,
  sliceRange,
  valueCount,
  type IndexSpec,
  type IntAlgebra,
  type SliceSpec,
} from '../../kernels/subtensor.js';
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import { disconnected } from '../../graph/gradient.js';
import type { IndexMap, KernelCall, SymbolicShape } from '../../graph/op.js';
import { Variable } from '../../graph/variable.js';
import { evalPointOrZeros, zerosLike } from './alloc.js';
import { asTensorArgs, asTensorVariable, constant } from '../core/as-tensor.js';
import { canCastSafely } from '../core/dtype.js';
import { dimshuffle } from './dimshuffle.js';
import { add, cast, intDiv, lt, maximum, minimum, neg, sub, where } from '../elemwise/math.js';
import { empty, shapeText, type NdArray } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { sum } from '../elemwise/reduce.js';
import { constantScalar, intConstant } from './shape.js';
import { Slice, type SliceBound } from '../core/slice.js';
import { TensorType, type StaticShape } from '../core/type.js';
import { isTensorVariable, type IndexEntry, type TensorLike, type TensorVariable } from '../core/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { propKinds } from '../../graph/prop-kinds.js';
import { tensorPropKinds } from '../core/prop-kinds.js';

export type { IndexSpec, SliceSpec } from '../../kernels/subtensor.js';

const INT32_MAX = 2 ** 31 - 1;

// ---------------------------------------------------------------------------------------------
// The index structure

function specLabel(e: IndexSpec): string {
  if (e === 'int') return 'i';
  if (e === 'newaxis') return 'newaxis';
  return `${e.start ? 'start' : ''}:${e.stop ? 'stop' : ''}${e.step ? ':step' : ''}`;
}

function isFullSlice(e: IndexSpec): boolean {
  return isSliceSpec(e) && !e.start && !e.stop && !e.step;
}

/** A checked, frozen copy of an index structure without trailing full slices (its canonical form). */
function canonicalSpec(idxList: readonly IndexSpec[], where: string): readonly IndexSpec[] {
  const out = idxList.map((e, k): IndexSpec => {
    if (e === 'int' || e === 'newaxis') return e;
    const s = e as Partial<SliceSpec> | null;
    if (typeof s === 'object' && s !== null && [s.start, s.stop, s.step].every((b) => typeof b === 'boolean')) {
      return Object.freeze({ start: s.start!, stop: s.stop!, step: s.step! });
    }
    throw new TypeError(
      `${where}: entry ${k} of the index structure must be 'int', 'newaxis' or { start, stop, step } (booleans), got ${JSON.stringify(e)}`,
    );
  });
  while (out.length > 0 && isFullSlice(out[out.length - 1]!)) out.pop();
  return Object.freeze(out);
}

function staticText(shape: StaticShape): string {
  return `(${shape.map((d) => (d === null ? '?' : d)).join(', ')}${shape.length === 1 ? ',' : ''})`;
}

function describe(v: unknown): string {
  if (isTensorVariable(v)) return `${v} (${v.type})`;
  if (v instanceof Variable) return `${v} of type ${v.type}`;
  if (typeof v === 'number') return String(v);
  if (v === undefined || v === null) return String(v);
  return `a value of type ${typeof v === 'object' ? (v.constructor?.name ?? 'object') : typeof v}`;
}

/**
 * One index value as an int32 scalar: numbers become (shared) constants, integer scalar variables
 * of other dtypes are cast. Slice bounds beyond the int32 range are clipped (same meaning);
 * integers there are refused, since no axis is that long.
 */
function indexValue(v: unknown, what: string, kind: 'index' | 'bound'): TensorVariable {
  const expected = `must be an integer or a scalar integer variable${kind === 'bound' ? ' (or null)' : ''}`;
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new TypeError(`${what} ${expected}, got ${v}`);
    if (Math.abs(v) > INT32_MAX) {
      if (kind === 'index') throw new RangeError(`${what} is ${v}, outside the int32 range (no axis is that long)`);
      return intConstant(Math.sign(v) * INT32_MAX);
    }
    return intConstant(v);
  }
  if (!isTensorVariable(v) || v.ndim !== 0 || !isIntDtype(v.dtype)) throw new TypeError(`${what} ${expected}, got ${describe(v)}`);
  if (v.dtype === 'int32') return v;
  const known = constantScalar(v);
  return known !== undefined ? indexValue(known, what, kind) : cast(v, 'int32');
}

/** The structure and the values of a user's index (`x.get(...)`'s arguments). */
function parseIndex(index: readonly IndexEntry[]): { spec: IndexSpec[]; values: TensorVariable[] } {
  const spec: IndexSpec[] = [];
  const values: TensorVariable[] = [];
  index.forEach((entry, k) => {
    if (entry === null) spec.push('newaxis');
    else if (entry instanceof Slice) {
      const bound = (b: SliceBound, name: string): boolean => {
        if (b === null || b === undefined) return false;
        values.push(indexValue(b, `Subtensor: the ${name} of the slice at entry ${k}`, 'bound'));
        return true;
      };
      const start = bound(entry.start, 'start');
      const stop = bound(entry.stop, 'stop');
      const step = bound(entry.step, 'step');
      spec.push({ start, stop, step });
    } else if (typeof entry === 'number' || isTensorVariable(entry)) {
      spec.push('int');
      values.push(indexValue(entry, `Subtensor: index entry ${k}`, 'index'));
    } else {
      throw new TypeError(
        `Subtensor: index entry ${k} must be an integer, a scalar integer variable, a weft.slice(...) or null, got ${describe(entry)}`,
      );
    }
  });
  return { spec, values };
}

// ---------------------------------------------------------------------------------------------
// The region's lengths over three integer algebras: exact (perform, in the kernel), static
// (numbers or null for unknown: the output type) and symbolic (int32 scalars: inferShape).

type StaticInt = number | null;

function lift(f: (a: number, b: number) => number): (a: StaticInt, b: StaticInt) => StaticInt {
  return (a, b) => (a === null || b === null ? null : f(a, b));
}

const staticInts: IntAlgebra<StaticInt, boolean | null> = {
  int: (n) => n,
  add: lift((a, b) => a + b),
  sub: lift((a, b) => a - b),
  neg: (a) => (a === null ? null : -a),
  max: lift(Math.max),
  min: lift(Math.min),
  floorDiv: lift((a, b) => Math.floor(a / b)),
  lt: (a, b) => (a === null || b === null ? null : a < b),
  known: (c) => (c === null ? undefined : c),
  select: (c, a, b) => (c === null ? (a === b ? a : null) : c ? a : b),
};

type SymInt = number | TensorVariable;
type SymCond = boolean | TensorVariable;

const sym = (a: SymInt): TensorVariable => (typeof a === 'number' ? intConstant(a) : a);
/** A symbolic length as a number where it is a constant, so arithmetic on it folds. */
const literal = (v: Variable): SymInt => constantScalar(v) ?? (v as TensorVariable);

// Numbers fold; the identities x + 0, x - 0 and x // 1 add no node (the step-1 case).
const symbolicInts: IntAlgebra<SymInt, SymCond> = {
  int: (n) => n,
  add: (a, b) =>
    typeof a === 'number' && typeof b === 'number' ? a + b : a === 0 ? b : b === 0 ? a : add(sym(a), sym(b)),
  sub: (a, b) => (typeof a === 'number' && typeof b === 'number' ? a - b : b === 0 ? a : sub(sym(a), sym(b))),
  neg: (a) => (typeof a === 'number' ? -a : neg(a)),
  max: (a, b) => (typeof a === 'number' && typeof b === 'number' ? Math.max(a, b) : maximum(sym(a), sym(b))),
  min: (a, b) => (typeof a === 'number' && typeof b === 'number' ? Math.min(a, b) : minimum(sym(a), sym(b))),
  floorDiv: (a, b) =>
    typeof a === 'number' && typeof b === 'number' ? Math.floor(a / b) : b === 1 ? a : intDiv(sym(a), sym(b)),
  lt: (a, b) => (typeof a === 'number' && typeof b === 'number' ? a < b : lt(sym(a), sym(b))),
  known: (c) => (typeof c === 'boolean' ? c : undefined),
  select: (c, a, b) => (typeof c === 'boolean' ? (c ? a : b) : a === b ? a : where(c, sym(a), sym(b))),
};

interface IndexCheck<T> {
  /** An integer entry with its value, on `axis` of length `len`. */
  int?(value: T, axis: number, len: T): void;
  /** A slice's step value on `axis`. */
  step?(value: T, axis: number): void;
}

/** The region's lengths from x's lengths and the index values, in any integer algebra. */
function regionLengths<T, C>(
  A: IntAlgebra<T, C>,
  spec: readonly IndexSpec[],
  lengths: readonly T[],
  values: readonly T[],
  check: IndexCheck<T> = {},
): T[] {
  const out: T[] = [];
  let axis = 0;
  let v = 0;
  for (const e of spec) {
    if (e === 'newaxis') {
      out.push(A.int(1));
      continue;
    }
    const len = lengths[axis]!;
    if (e === 'int') {
      const i = values[v++]!;
      check.int?.(i, axis, len);
    }
    else {
      const start = e.start ? values[v++] : undefined;
      const stop = e.stop ? values[v++] : undefined;
      const step = e.step ? values[v++] : undefined;
      if (step !== undefined) check.step?.(step, axis);
      out.push(sliceRange(A, len, start, stop, step).length);
    }
    axis++;
  }
  for (; axis < lengths.length; axis++) out.push(lengths[axis]!);
  return out;
}

/**
 * Checks the index inputs of a node (count, types, too many indices) and returns them as int32
 * scalars with the region's static shape; constant indices are checked against static lengths.
 */
function checkIndex(where: string, spec: readonly IndexSpec[], x: TensorVariable, indices: readonly unknown[]): {
  readonly values: TensorVariable[];
  readonly region: StaticShape;
} {
  const consumed = spec.filter((e) => e !== 'newaxis').length;
  if (consumed > x.ndim) {
    throw new TypeError(`${where}: too many indices for ${x} (${x.type}): it has ${x.ndim} axes but ${consumed} were indexed`);
  }
  const expected = spec.reduce((n, e) => n + valueCount(e), 0);
  if (indices.length !== expected) {
    throw new TypeError(`${where}: expected ${expected} index values after the tensor inputs, got ${indices.length}`);
  }
  const values = indices.map((v, k) => indexValue(v, `${where}: index value ${k}`, 'bound'));
  const region = regionLengths(staticInts, spec, x.type.shape, values.map((v) => constantScalar(v) ?? null), {
    int: (i, axis, len) => {
      if (i !== null && len !== null && (i < -len || i >= len)) {
        throw new RangeError(`${where}: index ${i} is out of bounds for axis ${axis} with length ${len}`);
      }
    },
    step: (s, axis) => {
      if (s === 0) throw new RangeError(`${where}: slice step cannot be zero (axis ${axis})`);
    },
  });
  return { values, region };
}

/** The values of 0-d index inputs. */
function scalarValues(idx: readonly TensorView[]): number[] {
  return idx.map((a) => a.data[a.offset]!);
}

// ---------------------------------------------------------------------------------------------
// The ops

export class Subtensor extends TensorOp {
  static override readonly props = ['idxList'] as const;
  static override readonly propKinds = { idxList: tensorPropKinds.idxList };
  override readonly viewMap: IndexMap = { 0: [0] };
  readonly idxList: readonly IndexSpec[];

  constructor(idxList: readonly IndexSpec[]) {
    super();
    this.idxList = canonicalSpec(idxList, 'Subtensor');
  }

  override makeNode(x: unknown, ...indices: unknown[]): Apply {
    const v = asTensorVariable(x as TensorLike);
    const { values, region } = checkIndex(String(this), this.idxList, v, indices);
    return new Apply(this, [v, ...values], [new TensorType(v.dtype, region).makeVariable()]);
  }

  /** The view of x that the index selects (it checks the index values against x's lengths). */
  override view(_node: Apply, [x, ...idx]: readonly TensorView[]): TensorView[] {
    const r = selectView(x!, this.idxList, scalarValues(idx), String(this));
    return [{ data: x!.data, offset: r.offset, shape: r.shape, stride: r.stride }];
  }

  override inferShape(node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    const lengths = regionLengths(symbolicInts, this.idxList, xs!.map(literal), node.inputs.slice(1).map(literal));
    return [lengths.map(sym)];
  }

  override connectionPattern(node: Apply): boolean[][] {
    return node.inputs.map((_, i) => [i === 0]);
  }

  override grad([x, ...idx]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    const gx = new IncSubtensor(this.idxList, false).call(zerosLike(x!, gz!.dtype), gz!, ...idx);
    return [gx, ...idx.map(() => disconnected())];
  }

  override rop([, ...idx]: readonly TensorVariable[], [ev]: readonly TensorVariable[]): Variable[] {
    return [this.call(ev!, ...idx)];
  }

  override toString(): string {
    return `Subtensor{${this.idxList.map(specLabel).join(', ')}}`;
  }
}

/** The gradient of a region of shape `region.type` with respect to y, which was broadcast onto it. */
/** `region` (the gradient at the indexed elements) summed over the axes y was broadcast along, in y's shape. */
export function reduceToY(region: TensorVariable, y: TensorVariable): TensorVariable {
  const lead = region.ndim - y.ndim;
  const axes: number[] = [];
  for (let a = 0; a < region.ndim; a++) {
    if (a < lead || (y.type.shape[a - lead] === 1 && region.type.shape[a] !== 1)) axes.push(a);
  }
  const g = axes.length > 0 ? sum(region, { axis: axes, keepdims: true }) : region;
  return lead > 0 ? dimshuffle(g, [...Array(y.ndim).keys()].map((a) => a + lead)) : g;
}

/**
 * x with the region `x.get(index)` set to y (`setInstead`) or increased by y; y broadcasts onto
 * the region. The copying version leaves x as it is; the inplace one writes into x and destroys it.
 */
export class IncSubtensor extends TensorOp {
  static override readonly props = ['idxList', 'setInstead', 'inplace'] as const;
  static override readonly propKinds = { idxList: tensorPropKinds.idxList, setInstead: propKinds.boolean(), inplace: propKinds.boolean() };
  override readonly destroyMap: IndexMap;
  readonly idxList: readonly IndexSpec[];

  constructor(
    idxList: readonly IndexSpec[],
    readonly setInstead: boolean,
    /** Write into x (input 0), which the node then destroys. */
    readonly inplace = false,
  ) {
    super();
    this.idxList = canonicalSpec(idxList, setInstead ? 'SetSubtensor' : 'IncSubtensor');
    this.destroyMap = inplace ? { 0: [0] } : {};
  }

  /** Does the index select all of x (every entry a full slice), so that a set writes every element? */
  get coversAll(): boolean {
    return this.idxList.every(isFullSlice);
  }

  override makeNode(x: unknown, y: unknown, ...indices: unknown[]): Apply {
    const where = String(this);
    const [xv, yv] = asTensorArgs([x as TensorLike, y as TensorLike], where);
    const { values, region } = checkIndex(where, this.idxList, xv!, indices);
    const verb = this.setInstead ? 'set' : 'add';
    if (!canCastSafely(yv!.dtype, xv!.dtype)) {
      throw new TypeError(
        `${where}: cannot ${verb} ${yv!.dtype} values y = ${yv} into ${xv} of dtype ${xv!.dtype} without loss; cast y first (y.astype('${xv!.dtype}'))`,
      );
    }
    const lead = region.length - yv!.ndim;
    const cannot = `${where}: y = ${yv} (${yv!.type}) cannot be broadcast to the indexed region of static shape ${staticText(region)}`;
    if (lead < 0) throw new TypeError(`${cannot}: y has ${yv!.ndim} axes, the region ${region.length}`);
    yv!.type.shape.forEach((d, a) => {
      const r = region[a + lead]!;
      if (d !== null && d !== 1 && r !== null && d !== r) {
        throw new TypeError(`${cannot}: axis ${a} of y has length ${d} where the region has ${r}`);
      }
    });
    return new Apply(this, [xv!, yv!, ...values], [xv!.type.makeVariable()]);
  }

  /** x's shape, once the index values fit x and y fits the region they select. */
  override outputShapes(node: Apply, [x, y, ...idx]: readonly TensorView[]): number[][] {
    const where = String(this);
    const r = selectView(x!, this.idxList, scalarValues(idx), where);
    const fit = broadcastOnto(y!, r.shape, (node.inputs[1]!.type as TensorType).broadcastable);
    if ('problem' in fit) {
      throw new RangeError(
        `${where}: y of shape ${shapeText(y!.shape)} cannot be broadcast to the indexed region of shape ${shapeText(r.shape)}: ${fit.problem}`,
      );
    }
    return [[...x!.shape]];
  }

  /** Copies x and sets or adds y into the region, by rows of the output (chunks are disjoint). */
  override kernel(node: Apply): KernelCall {
    const params: IncSubtensorParams = {
      idxList: this.idxList,
      setInstead: this.setInstead,
      yBroadcastable: [...(node.inputs[1]!.type as TensorType).broadcastable],
      asBool: (node.outputs[0]!.type as TensorType).dtype === 'bool',
    };
    return { name: this.inplace ? 'incSubtensorInplace' : 'incSubtensor', params: { ...params }, chunking: { by: 'rows' } };
  }

  /** Inplace, the result is x itself (unless x's layout repeats elements: then a new array). */
  override perform(node: Apply, inputs: readonly NdArray[]): NdArray[] {
    const x = inputs[0]!;
    if (!this.inplace || x.shape.some((n, a) => n > 1 && x.stride[a] === 0)) {
      const out = empty((node.outputs[0]!.type as TensorType).dtype, this.outputShapes(node, inputs)[0]!);
      getKernel('incSubtensor')(inputs, [out], this.kernel(node).params);
      return [out];
    }
    this.outputShapes(node, inputs);
    const call = this.kernel(node);
    getKernel(call.name)(inputs, [x], call.params);
    return [x];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [xs!];
  }

  override connectionPattern(node: Apply): boolean[][] {
    return node.inputs.map((_, i) => [i < 2]);
  }

  override grad([, y, ...idx]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    const gx = this.setInstead
      ? new IncSubtensor(this.idxList, true).call(gz!, constant(0, { dtype: gz!.dtype }), ...idx)
      : gz!;
    const gy = reduceToY(new Subtensor(this.idxList).call(gz!, ...idx), y!);
    return [gx, gy, ...idx.map(() => disconnected())];
  }

  override rop([, y, ...idx]: readonly TensorVariable[], [ex, ey]: readonly Variable[]): Variable[] {
    // x moves (the output has its float dtype); an integer y does not (its eval point is disconnected).
    const tx = ex as TensorVariable;
    return [this.call(tx, cast(evalPointOrZeros(ey!, y!), tx.dtype), ...idx)];
  }

  override toString(): string {
    const parts = this.idxList.map(specLabel);
    if (this.inplace) parts.push('inplace');
    return `${this.setInstead ? 'SetSubtensor' : 'IncSubtensor'}{${parts.join(', ')}}`;
  }
}

// ---------------------------------------------------------------------------------------------
// The public functions

/** Basic indexing, NumPy's `x[...]`: integers, `weft.slice(...)` and null (a new axis); a view. */
export function get(x: TensorLike, ...index: IndexEntry[]): TensorVariable {
  const v = asTensorVariable(x);
  const { spec, values } = parseIndex(index);
  return new Subtensor(spec).call(v, ...values);
}

/** The tensor and index behind `view`, which must be the result of `x.get(...)`. */
function indexedBy(view: unknown, where: string): { x: TensorVariable; spec: readonly IndexSpec[]; values: TensorVariable[] } {
  const node = isTensorVariable(view) ? view.owner : null;
  if (node === null || !(node.op instanceof Subtensor)) {
    const origin = isTensorVariable(view) ? (node === null ? ', which is not computed by any op' : `, the output of ${node.op}`) : '';
    throw new TypeError(`${where}: the first argument must be the result of x.get(...), got ${describe(view)}${origin}`);
  }
  const [x, ...values] = node.inputs as TensorVariable[];
  return { x: x!, spec: node.op.idxList, values };
}

/** A new tensor equal to the x of `view = x.get(...)` with that region set to `y` (broadcast). */
export function setSubtensor(view: TensorVariable, y: TensorLike): TensorVariable {
  const { x, spec, values } = indexedBy(view, 'setSubtensor');
  return new IncSubtensor(spec, true).call(x, y, ...values);
}

/** A new tensor equal to the x of `view = x.get(...)` with `y` added to that region (broadcast). */
export function incSubtensor(view: TensorVariable, y: TensorLike): TensorVariable {
  const { x, spec, values } = indexedBy(view, 'incSubtensor');
  return new IncSubtensor(spec, false).call(x, y, ...values);
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(Subtensor);
registerOpCodec(IncSubtensor);
