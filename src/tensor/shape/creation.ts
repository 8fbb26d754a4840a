// ARange and Eye: new tensors from scalar arguments (symbolic or constant). arange follows
// NumPy (length ceil((stop - start) / step), never negative); eye puts ones on the k-th diagonal;
// full and linspace are built on Alloc and arange.
import { isDtype, isDiscreteDtype, isFloatDtype, type Dtype } from '../../kernels/dtype.js';
import { arangeLength } from '../../kernels/creation.js';
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import { disconnected } from '../../graph/gradient.js';
import type { KernelCall, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { alloc, evalPointOrZeros, zerosLike } from './alloc.js';
import { asTensorArgs, asTensorVariable, constant } from '../core/as-tensor.js';
import { config } from '../core/config.js';
import { upcast } from '../core/dtype.js';
import { add, cast, ceil, eq, maximum, mul, sub, trueDiv, where } from '../elemwise/math.js';
import { TensorOp } from '../core/op.js';
import { sum } from '../elemwise/reduce.js';
import { asIntScalar, constantScalar, intConstant, shapeI, smallInputValues } from './shape.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { tensorPropKinds } from '../core/prop-kinds.js';

const ARANGE_ARGS = ['start', 'stop', 'step'] as const;

/** The value of a scalar argument (`where` names it for errors). */
function scalarValue(a: TensorView, where: string): number {
  return smallInputValues(a, where)[0]!;
}

export class ARange extends TensorOp {
  static override readonly props = ['dtype'] as const;
  static override readonly propKinds = { dtype: tensorPropKinds.numericDtype };

  constructor(readonly dtype: Dtype) {
    super();
    if (!isDtype(dtype) || dtype === 'bool') {
      throw new TypeError(`ARange: dtype must be a numeric dtype, got ${JSON.stringify(dtype)}`);
    }
  }

  /** The length for these argument values; throws where there is none. */
  lengthOf(start: number, stop: number, step: number): number {
    if (step === 0) throw new RangeError(`${this}: step must not be 0`);
    const n = arangeLength(start, stop, step);
    if (!Number.isFinite(n)) {
      throw new RangeError(`${this}: the range from ${start} to ${stop} with step ${step} has no finite length`);
    }
    return n;
  }

  override makeNode(start: unknown, stop: unknown, step: unknown): Apply {
    const inputs = [start, stop, step].map((x, i) => {
      const v = asTensorVariable(x as TensorLike);
      if (v.ndim !== 0 || v.dtype === 'bool') {
        throw new TypeError(`${this}: ${ARANGE_ARGS[i]} must be a scalar number, got ${v} (${v.type})`);
      }
      return v;
    });
    const known = inputs.map(constantScalar);
    if (known[2] === 0) throw new RangeError(`${this}: step must not be 0`);
    const length = known.every((k) => k !== undefined) ? this.lengthOf(known[0]!, known[1]!, known[2]!) : null;
    return new Apply(this, inputs, [new TensorType(this.dtype, [length]).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: 'arange', params: {}, chunking: { by: 'elements' } };
  }

  /** The length, from the values of the scalar inputs. */
  override outputShapes(_node: Apply, [start, stop, step]: readonly TensorView[]): number[][] {
    return [[this.lengthOf(scalarValue(start!, `${this}: start`), scalarValue(stop!, `${this}: stop`), scalarValue(step!, `${this}: step`))]];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    const d = (node.outputs[0]!.type as TensorType).shape[0];
    if (d !== null && d !== undefined) return [[intConstant(d)]];
    // In float64, so that stop - start cannot overflow an int dtype.
    const [start, stop, step] = (node.inputs as TensorVariable[]).map((v) => cast(v, 'float64'));
    const n = ceil(trueDiv(sub(stop!, start!), step!));
    return [[cast(maximum(n, 0), 'int32')]];
  }

  override connectionPattern(): boolean[][] {
    return [[true], [false], [true]];
  }

  // start shifts every element and step the i-th one by i; stop only sets the length.
  override Lop(inputs: readonly TensorVariable[], outputs: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    const [start, , step] = inputs;
    if (isDiscreteDtype(this.dtype)) return [zerosLike(start!, config.floatX), disconnected(), zerosLike(step!, config.floatX)];
    const taps = arange(shapeI(outputs[0]!, 0), null, null, gz!.dtype);
    return [sum(gz!), disconnected(), sum(mul(gz!, taps))];
  }

  override rop(inputs: readonly TensorVariable[], [evStart, , evStep]: readonly Variable[]): Variable[] {
    const out = this.call(...inputs);
    if (isDiscreteDtype(this.dtype)) return [zerosLike(out)];
    const taps = arange(shapeI(out, 0), null, null, this.dtype);
    // An integer start or step does not move (its eval point is disconnected).
    const [start, , step] = inputs;
    return [add(evalPointOrZeros(evStart!, start!), mul(taps, evalPointOrZeros(evStep!, step!)))];
  }
}

export class Eye extends TensorOp {
  static override readonly props = ['dtype'] as const;
  static override readonly propKinds = { dtype: tensorPropKinds.dtype };

  constructor(readonly dtype: Dtype) {
    super();
    if (!isDtype(dtype)) throw new TypeError(`Eye: unknown dtype ${JSON.stringify(dtype)}`);
  }

  override makeNode(n: unknown, m: unknown, k: unknown): Apply {
    const [nv, mv, kv] = (['n', 'm', 'k'] as const).map((name, i) =>
      asIntScalar([n, m, k][i] as number | Variable, `${this}: ${name}`),
    );
    const shape = [nv!, mv!].map((v, i) => {
      const d = constantScalar(v);
      if (d !== undefined && d < 0) throw new RangeError(`${this}: ${i === 0 ? 'n' : 'm'} must be non-negative, got ${d}`);
      return d ?? null;
    });
    return new Apply(this, [nv!, mv!, kv!], [new TensorType(this.dtype, shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: 'eye', params: {}, chunking: { by: 'rows' } };
  }

  /** The shape, from the values of the scalar inputs n and m. */
  override outputShapes(_node: Apply, [n, m]: readonly TensorView[]): number[][] {
    const rows = scalarValue(n!, `${this}: n`);
    const cols = scalarValue(m!, `${this}: m`);
    if (rows < 0) throw new RangeError(`${this}: n must be non-negative, got ${rows}`);
    if (cols < 0) throw new RangeError(`${this}: m must be non-negative, got ${cols}`);
    return [[rows, cols]];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    return [[cast(node.inputs[0] as TensorVariable, 'int32'), cast(node.inputs[1] as TensorVariable, 'int32')]];
  }

  override connectionPattern(): boolean[][] {
    return [[false], [false], [false]];
  }

  override grad(): Variable[] {
    return [disconnected(), disconnected(), disconnected()];
  }

  override rop(inputs: readonly TensorVariable[]): Variable[] {
    return [zerosLike(this.call(...inputs))];
  }
}

const arangeOps = new Map<Dtype, ARange>();
const eyeOps = new Map<Dtype, Eye>();

/**
 * NumPy's arange: `arange(stop)` or `arange(start, stop, step?)`. The dtype defaults to the
 * arguments' (int32 for integers; a float dtype, floatX for JS numbers, when any is a float).
 */
export function arange(
  startOrStop: number | TensorVariable,
  stop?: number | TensorVariable | null,
  step?: number | TensorVariable | null,
  dtype?: Dtype,
): TensorVariable {
  const hasStop = stop !== undefined && stop !== null;
  const given = [hasStop ? startOrStop : 0, hasStop ? stop : startOrStop, step ?? 1];
  // Whole JS numbers alone count positions, as NumPy's arange(5) does: int32, not floatX.
  const positions = given.every((a) => typeof a === 'number' && Number.isInteger(a));
  const args = positions ? given.map((a) => constant(a as number, { dtype: 'int32' })) : asTensorArgs(given, 'arange');
  args.forEach((v, i) => {
    if (v.ndim !== 0 || v.dtype === 'bool') {
      throw new TypeError(`arange: ${ARANGE_ARGS[i]} must be a scalar number, got ${v} (${v.type})`);
    }
  });
  let d = dtype;
  if (d === undefined) {
    const common = upcast(...args.map((v) => v.dtype));
    d = isFloatDtype(common) ? common : 'int32';
  }
  let op = arangeOps.get(d);
  if (!op) {
    op = new ARange(d);
    arangeOps.set(d, op);
  }
  return op.call(...args);
}

/** An n x m matrix (m defaults to n) with ones on the k-th diagonal (k > 0 above the main one). */
export function eye(
  n: number | TensorVariable,
  m?: number | TensorVariable | null,
  k: number | TensorVariable = 0,
  dtype: Dtype = config.floatX,
): TensorVariable {
  let op = eyeOps.get(dtype);
  if (!op) {
    op = new Eye(dtype);
    eyeOps.set(dtype, op);
  }
  return op.call(n, m ?? n, k);
}

export interface FullOptions {
  /** The dtype (default: the value's, as NumPy's full). */
  readonly dtype?: Dtype;
}

/** A new tensor of `shape` with every element `value` (NumPy's full). */
export function full(shape: number | ReadonlyArray<number | TensorVariable>, value: TensorLike, options: FullOptions = {}): TensorVariable {
  const v = asTensorVariable(value);
  if (v.ndim !== 0) throw new TypeError(`full: the value must be a scalar, got ${v} (${v.type})`);
  const lengths = typeof shape === 'number' ? [shape] : [...shape];
  return alloc(options.dtype && options.dtype !== v.dtype ? cast(v, options.dtype) : v, ...lengths);
}

export interface LinspaceOptions {
  /** Whether stop is the last value (default true, as NumPy). */
  readonly endpoint?: boolean;
  /** The dtype (default float64; float32 when both ends are float32). */
  readonly dtype?: Dtype;
}

/**
 * `num` evenly spaced values from start to stop (NumPy's linspace): start + i * step, with the
 * last value stop itself when `endpoint` holds.
 */
export function linspace(start: TensorLike, stop: TensorLike, num: number, options: LinspaceOptions = {}): TensorVariable {
  if (!Number.isInteger(num) || num < 0) throw new RangeError(`linspace: num must be a non-negative integer, got ${num}`);
  const [a, b] = asTensorArgs([start, stop], 'linspace');
  for (const [name, e] of [['start', a!], ['stop', b!]] as const) {
    if (e.ndim !== 0) throw new TypeError(`linspace: ${name} must be a scalar, got ${e} (${e.type})`);
  }
  const dtype = options.dtype ?? (a!.dtype === 'float32' && b!.dtype === 'float32' ? 'float32' : 'float64');
  const endpoint = options.endpoint ?? true;
  const [lo, hi] = [cast(a!, 'float64'), cast(b!, 'float64')];
  const divisions = endpoint ? num - 1 : num;
  const i = arange(num, undefined, undefined, 'float64');
  const step = trueDiv(sub(hi, lo), Math.max(divisions, 1));
  let values = add(lo, mul(i, step));
  if (endpoint && num > 1) values = where(eq(i, num - 1), hi, values);
  return cast(values, dtype);
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(ARange);
registerOpCodec(Eye);
