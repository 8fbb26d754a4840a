// Random variables (PyTensor's RandomVariable): an op that takes a generator state, the lengths
// of the draw's shape and two distribution parameters, and returns the next state and the draws.
// A draw is a pure function of its inputs, so graphs stay functional: what advances a stream is
// the update of its state variable (RandomStream sets it as the state's default update). Draws
// run on the calling thread (no worker kernel); plans make them calling-thread tasks.
import { Apply } from '../../graph/apply.js';
import { disconnected, gradUndefined } from '../../graph/gradient.js';
import type { SymbolicShape } from '../../graph/op.js';
import type { FilterOptions } from '../../graph/type.js';
import type { Variable } from '../../graph/variable.js';
import { intRange, isFloatDtype, isIntDtype, type Dtype } from '../../kernels/dtype.js';
import { seedWords, STATE_WORDS, Xoshiro128 } from '../../kernels/prng.js';
import { sizeOf, type TensorView } from '../../kernels/view.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { empty, shapeText, ValueTypeError, type NdArray } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { asIntScalar, constantScalar, intConstant, smallInputValues } from '../shape/shape.js';
import { TensorType } from '../core/type.js';
import { isTensorVariable, TensorConstant, type TensorLike, type TensorVariable } from '../core/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { tensorPropKinds } from '../core/prop-kinds.js';

/**
 * The type of generator states: uint32 vectors of 4 words (xoshiro128**), not all zero. Its
 * static length stays unknown on purpose: a small integer vector of static length is a host
 * value to plans, whose value keys the plan, and a state changes at every call.
 */
export class RandomStateType extends TensorType {
  constructor() {
    super('uint32', [null]);
  }

  override get key(): string {
    return 'RandomStateType';
  }

  override filter(value: unknown, options: FilterOptions = {}): NdArray {
    const nd = super.filter(value, options);
    const where = options.what ?? 'value';
    if (nd.shape[0] !== STATE_WORDS) {
      throw new ValueTypeError(`${where}: a random state holds ${STATE_WORDS} uint32 words (xoshiro128**), got ${nd.shape[0]}`);
    }
    if (allZero(nd)) throw new ValueTypeError(`${where}: a random state must not be all zeros (the generator would never leave it)`);
    return nd;
  }
}

let stateType: RandomStateType | undefined;

/** The (one) random state type. */
export function randomStateType(): RandomStateType {
  return (stateType ??= new RandomStateType());
}

/** The generator state that `seed` (an integer from 0 to 2^32 - 1) gives, as a state value. */
export function randomState(seed: number): NdArray {
  if (!(Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff)) {
    throw new RangeError(`randomState: the seed must be an integer from 0 to 4294967295, got ${seed}`);
  }
  const words = seedWords(seed);
  const out = empty('uint32', [STATE_WORDS]);
  out.data.set(words);
  return out;
}

function allZero(state: TensorView): boolean {
  const step = state.stride[0] ?? 1;
  for (let i = 0; i < STATE_WORDS; i++) if (state.data[state.offset + i * step] !== 0) return false;
  return true;
}

/** Is `v` a variable that can hold a state: a uint32 vector (of unknown length, or of 4)? */
function isStateVariable(v: unknown): v is TensorVariable {
  return isTensorVariable(v) && v.dtype === 'uint32' && v.ndim === 1 && (v.type.shape[0] === null || v.type.shape[0] === STATE_WORDS);
}

/** A parameter's values broadcast to `shape`: one number when it has one element, else all of them in C order. */
function broadcastValues(p: TensorView, shape: readonly number[]): number | Float64Array {
  const n = sizeOf(shape);
  if (sizeOf(p.shape) === 1) return Number(p.data[p.offset]);
  const out = new Float64Array(n);
  if (n === 0) return out;
  const nd = shape.length;
  const lead = nd - p.shape.length;
  // Strides of the parameter along the draw's axes (0 where it broadcasts).
  const stride = shape.map((_, a) => (a < lead || p.shape[a - lead] === 1 ? 0 : p.stride[a - lead]!));
  const index = new Array<number>(nd).fill(0);
  let at = p.offset;
  for (let i = 0; i < n; i++) {
    out[i] = Number(p.data[at]);
    for (let a = nd - 1; a >= 0; a--) {
      if (++index[a]! < shape[a]!) {
        at += stride[a]!;
        break;
      }
      at -= stride[a]! * (shape[a]! - 1);
      index[a] = 0;
    }
  }
  return out;
}

const valueAt = (p: number | Float64Array, i: number): number => (typeof p === 'number' ? p : p[i]!);
const countOf = (a: number | Float64Array, b: number | Float64Array): number =>
  Math.max(typeof a === 'number' ? 1 : a.length, typeof b === 'number' ? 1 : b.length);

const scratch64 = new Float64Array(1);
const scratchBits64 = new BigInt64Array(scratch64.buffer);
const scratch32 = new Float32Array(1);
const scratchBits32 = new Int32Array(scratch32.buffer);

/** The largest value of `dtype` below `x` (for draws that rounding carried up to their open bound). */
function largestBelow(x: number, dtype: 'float32' | 'float64'): number {
  if (dtype === 'float64') {
    scratch64[0] = x;
    if (x === 0) return -Number.MIN_VALUE;
    scratchBits64[0] += x > 0 ? -1n : 1n;
    return scratch64[0];
  }
  scratch32[0] = x;
  while (scratch32[0] >= x) {
    const f = scratch32[0];
    if (f === 0) scratchBits32[0] = -0x7fffffff; // the negative subnormal closest to zero
    else scratchBits32[0] += f > 0 ? -1 : 1;
  }
  return scratch32[0];
}

/**
 * The base of the random variables. Inputs: the state (a uint32 vector of 4 words), `ndim`
 * int scalars (the lengths of the draws), then the two parameters, which broadcast to those
 * lengths. Outputs: the next state, then the draws. Equal ops (class, dtype, ndim) on equal
 * inputs draw equal numbers, so merging them is safe.
 */
export abstract class RandomVariable extends TensorOp<TensorVariable[]> {
  static override readonly props = ['dtype', 'ndim'] as const;
  /** The names of the two parameters, for messages and the stream's options. */
  abstract readonly paramNames: readonly [string, string];

  constructor(
    readonly dtype: Dtype,
    readonly ndim: number,
  ) {
    super();
    if (!(Number.isInteger(ndim) && ndim >= 0 && ndim <= 64)) {
      throw new RangeError(`${new.target.name}: ndim must be an integer from 0 to 64, got ${ndim}`);
    }
  }

  /** Is the parameter's dtype acceptable? (The message ending when it is not.) */
  protected paramProblem(p: TensorVariable): string | undefined {
    return p.dtype === 'bool' ? 'must be numeric' : undefined;
  }

  /** Checks the parameters' values (n elements, or one when both are numbers); throws a RangeError. */
  protected abstract checkValues(a: number | Float64Array, b: number | Float64Array): void;

  /** Writes `out.length` draws from `gen` with these parameters. */
  protected abstract fill(gen: Xoshiro128, out: NdArray['data'], a: number | Float64Array, b: number | Float64Array): void;

  override makeNode(...args: unknown[]): Apply {
    const n = 1 + this.ndim + 2;
    if (args.length !== n) {
      throw new TypeError(
        `${this}: expected ${n} inputs (the state, ${this.ndim} length${this.ndim === 1 ? '' : 's'} of the draws, ${this.paramNames.join(' and ')}), got ${args.length}`,
      );
    }
    const [state, ...rest] = args;
    if (!isStateVariable(state)) {
      const got = isTensorVariable(state) ? `${state} (${state.type})` : String(state);
      throw new TypeError(`${this}: input 0 must be a random state (a uint32 vector of ${STATE_WORDS} words), got ${got}`);
    }
    const sizes = rest.slice(0, this.ndim).map((d, i) => asIntScalar(d as number | Variable, `${this}: length ${i} of the draws`));
    const shape = sizes.map((len, i) => {
      const known = constantScalar(len) ?? null;
      if (known !== null && known < 0) throw new RangeError(`${this}: negative length ${known} on axis ${i} of the draws`);
      return known;
    });
    const params = rest.slice(this.ndim).map((p, k) => {
      const name = this.paramNames[k]!;
      let v: TensorVariable;
      try {
        v = asTensorVariable(p as TensorLike);
      } catch (e) {
        throw new TypeError(`${this}: ${name} must be a tensor or a number (${(e as Error).message})`);
      }
      const problem = this.paramProblem(v);
      if (problem) throw new TypeError(`${this}: ${name} ${problem}, got ${v} (${v.type})`);
      if (v.ndim > this.ndim) throw new TypeError(`${this}: ${name} (${v.type}) has more axes than the ${this.ndim} of the draws`);
      const lead = this.ndim - v.ndim;
      v.type.shape.forEach((d, a) => {
        const want = shape[lead + a]!;
        if (d !== null && d !== 1 && want !== null && d !== want) {
          throw new TypeError(`${this}: ${name} (${v.type}) does not broadcast to length ${want} on axis ${lead + a} of the draws`);
        }
      });
      return v;
    });
    // Parameters known now are checked now, with the messages a call would give.
    const known = params.map((p) => (p instanceof TensorConstant && p.ndim === 0 ? constantScalar(p) : undefined));
    if (known[0] !== undefined && known[1] !== undefined) this.checkValues(known[0], known[1]);
    return new Apply(this, [state, ...sizes, ...params], [state.type.makeVariable(), new TensorType(this.dtype, shape).makeVariable()]);
  }

  /** The next state has 4 words; the draws have the given lengths, which the parameters broadcast to. */
  override outputShapes(node: Apply, inputs: readonly TensorView[]): number[][] {
    const state = inputs[0]!;
    if (state.shape.length !== 1 || state.shape[0] !== STATE_WORDS) {
      throw new RangeError(`${this}: the state must hold ${STATE_WORDS} uint32 words, got shape ${shapeText(state.shape)}`);
    }
    const shape = inputs.slice(1, 1 + this.ndim).map((d, i) => {
      const len = smallInputValues(d, `${this}: length ${i} of the draws`)[0]!;
      if (len < 0) throw new RangeError(`${this}: negative length ${len} on axis ${i} of the draws`);
      return len;
    });
    inputs.slice(1 + this.ndim).forEach((p, k) => {
      const lead = this.ndim - p.shape.length;
      if (p.shape.some((d, a) => d !== 1 && d !== shape[lead + a])) {
        throw new RangeError(`${this}: ${this.paramNames[k]} of shape ${shapeText(p.shape)} does not broadcast to the shape of the draws ${shapeText(shape)}`);
      }
    });
    return [[STATE_WORDS], shape];
  }

  override perform(node: Apply, inputs: readonly NdArray[]): NdArray[] {
    const [, shape] = this.outputShapes(node, inputs);
    const state = inputs[0]!;
    if (allZero(state)) throw new RangeError(`${this}: the state is all zeros, which the generator never leaves; seed it with weft.randomState(seed)`);
    const a = broadcastValues(inputs[1 + this.ndim]!, shape!);
    const b = broadcastValues(inputs[2 + this.ndim]!, shape!);
    if (sizeOf(shape!) > 0) this.checkValues(a, b);
    const gen = new Xoshiro128(state.data, state.offset, state.stride[0]);
    const draws = empty(this.dtype, shape!);
    this.fill(gen, draws.data, a, b);
    const next = empty((node.outputs[0]!.type as TensorType).dtype, [STATE_WORDS]);
    gen.save(next.data as Uint32Array);
    return [next, draws];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    return [[intConstant(STATE_WORDS)], node.inputs.slice(1, 1 + this.ndim)];
  }

  /**
   * No gradient flows through draws: the state and the lengths are discrete (disconnected), and
   * the parameters' gradient is undefined, as PyTensor's RandomVariable says.
   */
  override grad(inputs: readonly Variable[]): Variable[] {
    return inputs.map((_, i) =>
      i <= this.ndim ? disconnected() : gradUndefined(this, i, 'random draws have no gradient with respect to their parameters'),
    );
  }

  override rop(): Variable[] {
    throw new Error(`Rop: ${this} has no derivative: random draws are not differentiable with respect to their parameters`);
  }

  /** A folded draw would be one fixed sample in the graph; draws are left to run. */
  override doConstantFolding(): boolean {
    return false;
  }
}

/** Uniform floats in [low, high). */
export class UniformRV extends RandomVariable {
  static override readonly propKinds = { dtype: tensorPropKinds.floatDtype, ndim: tensorPropKinds.ndim };
  readonly paramNames = ['low', 'high'] as const;

  constructor(dtype: Dtype, ndim: number) {
    super(dtype, ndim);
    if (!isFloatDtype(dtype)) throw new TypeError(`UniformRV: dtype must be float32 or float64, got ${dtype}`);
  }

  protected checkValues(a: number | Float64Array, b: number | Float64Array): void {
    for (let i = 0, n = countOf(a, b); i < n; i++) {
      const low = valueAt(a, i);
      const high = valueAt(b, i);
      if (!(low <= high) || !Number.isFinite(high - low)) {
        throw new RangeError(`${this}: low and high must be finite with low <= high, got low=${low} and high=${high}`);
      }
    }
  }

  protected fill(gen: Xoshiro128, out: NdArray['data'], a: number | Float64Array, b: number | Float64Array): void {
    const dtype = this.dtype as 'float32' | 'float64';
    const f32 = dtype === 'float32';
    for (let i = 0; i < out.length; i++) {
      const low = typeof a === 'number' ? a : a[i]!;
      const high = typeof b === 'number' ? b : b[i]!;
      let v = low + (high - low) * gen.nextDouble();
      if (f32) v = Math.fround(v);
      // Rounding may carry a draw up to the open bound: the largest value below it stands instead.
      if (v >= high && high > low) v = Math.max(largestBelow(high, dtype), f32 ? Math.fround(low) : low);
      out[i] = v;
    }
  }
}

/** Normally distributed floats with mean `mean` and standard deviation `std` (Box-Muller, in pairs). */
export class NormalRV extends RandomVariable {
  static override readonly propKinds = { dtype: tensorPropKinds.floatDtype, ndim: tensorPropKinds.ndim };
  readonly paramNames = ['mean', 'std'] as const;

  constructor(dtype: Dtype, ndim: number) {
    super(dtype, ndim);
    if (!isFloatDtype(dtype)) throw new TypeError(`NormalRV: dtype must be float32 or float64, got ${dtype}`);
  }

  protected checkValues(a: number | Float64Array, b: number | Float64Array): void {
    for (let i = 0, n = typeof b === 'number' ? 1 : b.length; i < n; i++) {
      const std = valueAt(b, i);
      if (!(std >= 0)) throw new RangeError(`${this}: std must be non-negative, got ${std}`);
    }
  }

  protected fill(gen: Xoshiro128, out: NdArray['data'], a: number | Float64Array, b: number | Float64Array): void {
    const n = out.length;
    for (let i = 0; i < n; i += 2) {
      // u in (0, 1], so that the logarithm is finite.
      const r = Math.sqrt(-2 * Math.log(1 - gen.nextDouble()));
      const t = 2 * Math.PI * gen.nextDouble();
      out[i] = (typeof a === 'number' ? a : a[i]!) + (typeof b === 'number' ? b : b[i]!) * r * Math.cos(t);
      if (i + 1 < n) out[i + 1] = (typeof a === 'number' ? a : a[i + 1]!) + (typeof b === 'number' ? b : b[i + 1]!) * r * Math.sin(t);
    }
  }
}

/** Uniform integers in [low, high), without bias. */
export class IntegersRV extends RandomVariable {
  static override readonly propKinds = { dtype: tensorPropKinds.integerDtype, ndim: tensorPropKinds.ndim };
  readonly paramNames = ['low', 'high'] as const;

  constructor(dtype: Dtype, ndim: number) {
    super(dtype, ndim);
    if (!isIntDtype(dtype)) throw new TypeError(`IntegersRV: dtype must be an integer dtype, got ${dtype}`);
  }

  protected checkValues(a: number | Float64Array, b: number | Float64Array): void {
    const [lo, hi] = intRange(this.dtype);
    for (let i = 0, n = countOf(a, b); i < n; i++) {
      const low = valueAt(a, i);
      const high = valueAt(b, i);
      if (!Number.isInteger(low) || !Number.isInteger(high) || !(low < high)) {
        throw new RangeError(`${this}: low and high must be integers with low < high, got low=${low} and high=${high}`);
      }
      if (low < lo || high - 1 > hi) {
        throw new RangeError(`${this}: [${low}, ${high}) does not fit ${this.dtype} (integers from ${lo} to ${hi})`);
      }
    }
  }

  protected fill(gen: Xoshiro128, out: NdArray['data'], a: number | Float64Array, b: number | Float64Array): void {
    for (let i = 0; i < out.length; i++) {
      const low = typeof a === 'number' ? a : a[i]!;
      const high = typeof b === 'number' ? b : b[i]!;
      out[i] = low + gen.nextBelow(high - low);
    }
  }
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(UniformRV);
registerOpCodec(NormalRV);
registerOpCodec(IntegersRV);
