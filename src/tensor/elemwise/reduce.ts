// Reductions: CAReduce (sum, prod, max, min, all, any over any axes), ArgReduce (argmax,
// argmin), and mean, var and std built from them. `keepdims` is a DimShuffle after the op.
import { bytesPerElement, isFloatDtype, type Dtype } from '../../kernels/dtype.js';
import type { ReduceKind } from '../../kernels/reduce.js';
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import type { Chunking, KernelCall, KernelContext, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { alloc, onesLike, zerosLike } from '../shape/alloc.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { dimshuffle, type ShuffleEntry } from '../shape/dimshuffle.js';
import { add, cast, eq, exp, isinf, log, mul, sqr, sqrt, sub, trueDiv, where } from './math.js';
import { TensorOp } from '../core/op.js';
import { axisOptionsOf } from '../core/options.js';
import { shapeI, shapeOf } from '../shape/shape.js';
import { TensorType } from '../core/type.js';
import type { AxisArg, ReduceOptions, TensorLike, TensorVariable, VarOptions } from '../core/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { propKinds } from '../../graph/prop-kinds.js';
import { tensorPropKinds } from '../core/prop-kinds.js';

/** Axes as sorted, non-negative, distinct numbers; all axes when `axis` is null or undefined. */
export function normalizeAxes(axis: ReduceOptions['axis'], ndim: number, where: string): number[] {
  if (axis === null || axis === undefined) return [...Array(ndim).keys()];
  const list = typeof axis === 'number' ? [axis] : [...axis];
  const out = list.map((a) => {
    if (!Number.isInteger(a)) throw new TypeError(`${where}: axis ${a} is not an integer`);
    if (a < -ndim || a >= ndim) {
      const valid = ndim === 0 ? 'it has no axes' : `axes are ${-ndim}..${ndim - 1}`;
      throw new RangeError(`${where}: axis ${a} is out of range for a ${ndim}-d input (${valid})`);
    }
    return a < 0 ? a + ndim : a;
  });
  if (new Set(out).size !== out.length) throw new RangeError(`${where}: axis [${list.join(', ')}] repeats an axis`);
  return out.sort((a, b) => a - b);
}

/** An op's axes: distinct non-negative integers, kept sorted so that equal reductions compare equal. */
export function checkedAxes(axis: readonly number[], op: string): readonly number[] {
  if (axis.some((a) => !Number.isInteger(a) || a < 0) || new Set(axis).size !== axis.length) {
    throw new RangeError(`${op}: axes must be distinct non-negative integers, got [${axis.join(', ')}] (normalize them first)`);
  }
  return Object.freeze([...axis].sort((a, b) => a - b));
}

const NAMES: Record<ReduceKind, string> = { sum: 'Sum', prod: 'Prod', max: 'Max', min: 'Min', all: 'All', any: 'Any' };

function reduceDtype(kind: ReduceKind, d: Dtype): Dtype {
  if (kind === 'all' || kind === 'any') return 'bool';
  if (kind === 'max' || kind === 'min' || isFloatDtype(d)) return d;
  return d === 'uint8' || d === 'uint16' || d === 'uint32' ? 'uint32' : 'int32';
}

export function keptShape<T>(shape: readonly T[], axes: readonly number[]): T[] {
  return shape.filter((_, a) => !axes.includes(a));
}

/** `g` (of the reduced shape) with the reduced axes put back as broadcastable ones. */
function restoreAxes(g: TensorVariable, axes: readonly number[], ndim: number): TensorVariable {
  const pattern: ShuffleEntry[] = [];
  let k = 0;
  for (let a = 0; a < ndim; a++) pattern.push(axes.includes(a) ? 'x' : k++);
  return dimshuffle(g, pattern);
}


/**
 * When the reduced axes lie before a kept last axis, each task reads a run of contiguous elements
 * of every reduced row, rows a whole row length apart: short runs read whole cache lines for a
 * few elements each, and two threads walking such strips of the same rows slow each other down.
 * So a task's run is at least KEPT_RUN elements and, while the output still makes KEPT_TASKS
 * tasks, up to KEPT_RUN_BYTES (so more than four workers may find fewer tasks than themselves on
 * such a reduction). A 4096x4096 float32 sum over axis 0, the wasm columns block on 2 threads of
 * a 2-core machine: runs of 1 KiB 24.3 GB/s, 2 KiB 31.4, 4 KiB 38.5, 8 KiB 41.6; on one thread,
 * 21.4 against 24.9 at 4 KiB. The runs change no bits: each output element still folds its rows
 * in row order, whichever task computes it.
 */
const KEPT_RUN = 256;
const KEPT_RUN_BYTES = 4096;
const KEPT_TASKS = 4;

/** Whether a reduction over `axes` of an `ndim`-axis input keeps the last axis and reduces one before it. */
function keepsLastAxis(ndim: number, axes: readonly number[]): boolean {
  return ndim >= 2 && axes.length > 0 && !axes.includes(ndim - 1);
}

/**
 * How a reduction of `node`'s input over `axes` (CAReduce's, ArgReduce's) is cut: by output
 * elements, each task taking at least a run of every reduced row when the last axis is kept
 * (see KEPT_RUN); longer runs only where that axis is contiguous (a transposed input gains nothing).
 */
function reductionChunking(node: Apply, context: KernelContext | undefined, axes: readonly number[]): Chunking {
  const x = context?.inputs[0];
  if (!x || !keepsLastAxis(x.shape.length, axes)) return { by: 'elements' };
  if (x.stride[x.stride.length - 1] !== 1) return { by: 'elements', minUnits: KEPT_RUN };
  const outputs = x.shape.reduce((n, d, a) => (axes.includes(a) ? n : n * d), 1);
  const widest = Math.floor(KEPT_RUN_BYTES / bytesPerElement((node.inputs[0]!.type as TensorType).dtype));
  return { by: 'elements', minUnits: Math.max(KEPT_RUN, Math.min(widest, Math.floor(outputs / KEPT_TASKS))) };
}

export class CAReduce extends TensorOp {
  static override readonly props = ['kind', 'axis'] as const;
  static override readonly propKinds = { kind: propKinds.oneOf(['sum', 'prod', 'max', 'min', 'all', 'any'] as const), axis: tensorPropKinds.axes };
  readonly axis: readonly number[];

  constructor(
    readonly kind: ReduceKind,
    axis: readonly number[],
  ) {
    super();
    this.axis = checkedAxes(axis, NAMES[kind]);
  }

  override makeNode(x: unknown): Apply {
    const v = asTensorVariable(x as TensorLike);
    if (this.axis.some((a) => a >= v.ndim)) {
      throw new RangeError(`${this}: axis [${this.axis.join(', ')}] is out of range for ${v} (${v.type})`);
    }
    const type = new TensorType(reduceDtype(this.kind, v.dtype), keptShape(v.type.shape, this.axis));
    return new Apply(this, [v], [type.makeVariable()]);
  }

  override kernel(node: Apply, context?: KernelContext): KernelCall {
    return {
      name: 'reduce',
      params: { kind: this.kind, axes: [...this.axis] },
      chunking: reductionChunking(node, context, this.axis),
      // Each kind combines its own partial results: sums of sums, maxima of maxima, ...
      partials: { axes: [...this.axis], combine: { name: 'reduce', params: { kind: this.kind, axes: [0] } } },
    };
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    if (this.kind === 'max' || this.kind === 'min') {
      const a = this.axis.find((k) => x!.shape[k] === 0);
      if (a !== undefined) {
        throw new RangeError(`${this}: axis ${a} has length 0, and the ${this.kind === 'max' ? 'maximum' : 'minimum'} of no elements is undefined`);
      }
    }
    return [keptShape(x!.shape, this.axis)];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [keptShape(xs!, this.axis)];
  }

  override Lop([x]: readonly TensorVariable[], [z]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    const nd = x!.ndim;
    const g = restoreAxes(gz!, this.axis, nd);
    switch (this.kind) {
      case 'sum':
        return [alloc(g, ...shapeOf(x!))];
      case 'prod': {
        // Zero-safe: with no zero in a block, d/dx_i = prod / x_i; with exactly one zero, only that
        // element gets the product of the others; with more, everything gets zero.
        const isZero = eq(x!, 0);
        const zeroCount = restoreAxes(new CAReduce('sum', this.axis).call(cast(isZero, 'int32')), this.axis, nd);
        const prodNonZero = restoreAxes(new CAReduce('prod', this.axis).call(where(isZero, 1, x!)), this.axis, nd);
        const local = where(eq(zeroCount, 0), trueDiv(prodNonZero, x!), where(isZero, where(eq(zeroCount, 1), prodNonZero, 0), 0));
        return [mul(g, cast(local, x!.dtype))];
      }
      case 'max':
      case 'min': {
        const hit = cast(eq(x!, restoreAxes(z!, this.axis, nd)), x!.dtype);
        return [mul(g, hit)];
      }
      default:
        return [zerosLike(x!)];
    }
  }

  override rop([x]: readonly TensorVariable[], [ev]: readonly TensorVariable[]): Variable[] {
    const nd = x!.ndim;
    switch (this.kind) {
      case 'sum':
        return [this.call(ev)];
      case 'prod': {
        const z = this.call(x!);
        const [local] = this.Lop([x!], [z], [onesLike(z)]);
        return [new CAReduce('sum', this.axis).call(mul(local as TensorVariable, ev!))];
      }
      case 'max':
      case 'min': {
        const hit = cast(eq(x!, restoreAxes(this.call(x!), this.axis, nd)), x!.dtype);
        const sumOp = new CAReduce('sum', this.axis);
        return [trueDiv(sumOp.call(mul(ev!, hit)), sumOp.call(hit))];
      }
      default:
        return [zerosLike(this.call(x!))];
    }
  }

  override toString(): string {
    return `${NAMES[this.kind]}{axis=[${this.axis.join(',')}]}`;
  }
}

export class ArgReduce extends TensorOp {
  static override readonly props = ['kind', 'axis'] as const;
  static override readonly propKinds = { kind: propKinds.oneOf(['max', 'min'] as const), axis: tensorPropKinds.axes };
  readonly axis: readonly number[];

  constructor(
    readonly kind: 'max' | 'min',
    axis: readonly number[],
  ) {
    super();
    this.axis = checkedAxes(axis, `Arg${kind}`);
  }

  override makeNode(x: unknown): Apply {
    const v = asTensorVariable(x as TensorLike);
    if (this.axis.some((a) => a >= v.ndim)) {
      throw new RangeError(`${this}: axis [${this.axis.join(', ')}] is out of range for ${v} (${v.type})`);
    }
    const type = new TensorType('int32', keptShape(v.type.shape, this.axis));
    return new Apply(this, [v], [type.makeVariable()]);
  }

  override kernel(node: Apply, context?: KernelContext): KernelCall {
    return { name: 'argreduce', params: { kind: this.kind, axes: [...this.axis] }, chunking: reductionChunking(node, context, this.axis) };
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    const a = this.axis.find((k) => x!.shape[k] === 0);
    if (a !== undefined) throw new RangeError(`${this}: axis ${a} has length 0, so there is no position to return`);
    return [keptShape(x!.shape, this.axis)];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [keptShape(xs!, this.axis)];
  }

  override grad([x]: readonly TensorVariable[]): Variable[] {
    return [zerosLike(x!)];
  }

  override toString(): string {
    return `Arg${this.kind}{axis=[${this.axis.join(',')}]}`;
  }
}

/**
 * The options of a reduction given as options or as its axis alone. Anything else is refused (a
 * string or a boolean where the axis goes, or a misspelt key, would otherwise reduce everything,
 * silently).
 */
function reduceOptionsOf(o: ReduceOptions | AxisArg | undefined, where: string): ReduceOptions {
  return axisOptionsOf(where, o, ['axis', 'keepdims'], true);
}

/** The options of var and std: a reduction's, and `ddof`. */
function varOptionsOf(o: VarOptions | AxisArg | undefined, where: string): VarOptions {
  return axisOptionsOf(where, o, ['axis', 'keepdims', 'ddof'], true);
}

function reduceWith(kind: ReduceKind, x: TensorLike, options: ReduceOptions, name: string): TensorVariable {
  const v = asTensorVariable(x);
  const axes = normalizeAxes(options.axis, v.ndim, name);
  const r = new CAReduce(kind, axes).call(v);
  return options.keepdims ? restoreAxes(r, axes, v.ndim) : r;
}

export function sum(x: TensorLike, axisOrOptions: ReduceOptions | AxisArg = {}): TensorVariable {
  const options = reduceOptionsOf(axisOrOptions, 'sum');
  return reduceWith('sum', x, options, 'sum');
}
export function prod(x: TensorLike, axisOrOptions: ReduceOptions | AxisArg = {}): TensorVariable {
  const options = reduceOptionsOf(axisOrOptions, 'prod');
  return reduceWith('prod', x, options, 'prod');
}
export function max(x: TensorLike, axisOrOptions: ReduceOptions | AxisArg = {}): TensorVariable {
  const options = reduceOptionsOf(axisOrOptions, 'max');
  return reduceWith('max', x, options, 'max');
}
export function min(x: TensorLike, axisOrOptions: ReduceOptions | AxisArg = {}): TensorVariable {
  const options = reduceOptionsOf(axisOrOptions, 'min');
  return reduceWith('min', x, options, 'min');
}
export function all(x: TensorLike, axisOrOptions: ReduceOptions | AxisArg = {}): TensorVariable {
  const options = reduceOptionsOf(axisOrOptions, 'all');
  return reduceWith('all', x, options, 'all');
}
export function any(x: TensorLike, axisOrOptions: ReduceOptions | AxisArg = {}): TensorVariable {
  const options = reduceOptionsOf(axisOrOptions, 'any');
  return reduceWith('any', x, options, 'any');
}

function argWith(kind: 'max' | 'min', x: TensorLike, options: ReduceOptions): TensorVariable {
  const v = asTensorVariable(x);
  const axes = normalizeAxes(options.axis, v.ndim, `arg${kind}`);
  const r = new ArgReduce(kind, axes).call(v);
  return options.keepdims ? restoreAxes(r, axes, v.ndim) : r;
}

/** Position of the largest element over `axis` (C-order position within the reduced axes). */
export function argmax(x: TensorLike, axisOrOptions: ReduceOptions | AxisArg = {}): TensorVariable {
  const options = reduceOptionsOf(axisOrOptions, 'argmax');
  return argWith('max', x, options);
}
export function argmin(x: TensorLike, axisOrOptions: ReduceOptions | AxisArg = {}): TensorVariable {
  const options = reduceOptionsOf(axisOrOptions, 'argmin');
  return argWith('min', x, options);
}

/** The number of elements reduced over `axes`, as a scalar of `dtype`. */
function countOf(x: TensorVariable, axes: readonly number[], dtype: Dtype): TensorVariable {
  const lengths = axes.map((a) => shapeI(x, a));
  if (lengths.length === 0) return cast(1, dtype);
  return cast(lengths.length === 1 ? lengths[0]! : mul(...lengths), dtype);
}

function floatOf(v: TensorVariable): TensorVariable {
  return isFloatDtype(v.dtype) ? v : cast(v, 'float64');
}

/** The arithmetic mean (integers are averaged in float64, as NumPy). */
export function mean(x: TensorLike, axisOrOptions: ReduceOptions | AxisArg = {}): TensorVariable {
  const options = reduceOptionsOf(axisOrOptions, 'mean');
  const v = floatOf(asTensorVariable(x));
  const axes = normalizeAxes(options.axis, v.ndim, 'mean');
  return trueDiv(sum(v, options), countOf(v, axes, v.dtype));
}

function varianceOf(x: TensorLike, options: VarOptions, name: string): TensorVariable {
  const v = floatOf(asTensorVariable(x));
  const axes = normalizeAxes(options.axis, v.ndim, name);
  const centered = sub(v, mean(v, { axis: axes, keepdims: true }));
  const ss = sum(sqr(centered), { axis: axes, keepdims: options.keepdims });
  const n = countOf(v, axes, v.dtype);
  return trueDiv(ss, options.ddof ? sub(n, options.ddof) : n);
}

/** The variance: mean squared deviation, with divisor N - ddof (integers in float64). */
export function variance(x: TensorLike, axisOrOptions: VarOptions | AxisArg = {}): TensorVariable {
  const options = varOptionsOf(axisOrOptions, 'var');
  return varianceOf(x, options, 'var');
}

/**
 * log(sum(exp(x))) over the axes, computed stably as m + log(sum(exp(x - m))) with m the maximum
 * (0 where the maximum is infinite, so that all -inf gives -inf and any +inf gives +inf), as
 * scipy's logsumexp; x - m and exp fuse into the sum's loop.
 */
export function logsumexp(x: TensorLike, axisOrOptions: ReduceOptions | AxisArg = {}): TensorVariable {
  const options = reduceOptionsOf(axisOrOptions, 'logsumexp');
  const v = floatOf(asTensorVariable(x));
  const axes = normalizeAxes(options.axis, v.ndim, 'logsumexp');
  const shiftBy = (keepdims: boolean): TensorVariable => {
    const peak = max(v, { axis: axes, keepdims });
    return where(isinf(peak), 0, peak);
  };
  const sums = sum(exp(sub(v, shiftBy(true))), { axis: axes, keepdims: options.keepdims ?? false });
  return add(log(sums), shiftBy(options.keepdims ?? false));
}

/** The standard deviation: the square root of the variance. */
export function std(x: TensorLike, axisOrOptions: VarOptions | AxisArg = {}): TensorVariable {
  const options = varOptionsOf(axisOrOptions, 'std');
  return sqrt(varianceOf(x, options, 'std'));
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(CAReduce);
registerOpCodec(ArgReduce);
