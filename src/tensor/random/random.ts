// Random variables (PyTensor's RandomVariable): an op that takes a generator state, the lengths
// of the draw's shape and the distribution's parameters, and returns the next state and the
// draws. A draw is a pure function of its inputs, so graphs stay functional: what advances a
// stream is the update of its state variable (RandomStream sets it as the state's default
// update). The generator is counter-based (Philox4x32-10, kernels/philox.ts): each element's
// numbers depend on the state and its index only, so draws are cut into tasks on the workers like
// any element-wise op, with the same bits for any worker count (kernels/distributions.ts).
import { Apply } from '../../graph/apply.js';
import { disconnected, gradUndefined, isDisconnected } from '../../graph/gradient.js';
import type { KernelCall, SymbolicShape } from '../../graph/op.js';
import type { FilterOptions } from '../../graph/type.js';
import type { Variable } from '../../graph/variable.js';
import { DISTRIBUTIONS, parameterProblem } from '../../kernels/distributions.js';
import { intRange, isFloatDtype, isIntDtype, type Dtype } from '../../kernels/dtype.js';
import { seedWords, STATE_WORDS } from '../../kernels/prng.js';
import type { TensorView } from '../../kernels/view.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { empty, shapeText, ValueTypeError, type NdArray } from '../core/ndarray.js';
import { elemwise, reduceToLike } from '../elemwise/elemwise.js';
import { add, exp, log, log1p, mul, neg, sub, trueDiv } from '../elemwise/math.js';
import { sum } from '../elemwise/reduce.js';
import * as S from '../scalar/special.js';
import { onesLike } from '../shape/alloc.js';
import { TensorOp } from '../core/op.js';
import { asIntScalar, constantScalar, intConstant, smallInputValues } from '../shape/shape.js';
import { TensorType } from '../core/type.js';
import { isTensorVariable, TensorConstant, type TensorLike, type TensorVariable } from '../core/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { tensorPropKinds } from '../core/prop-kinds.js';

/**
 * The type of generator states: uint32 vectors of 4 words, Philox's key (2 words) and the
 * stream's position (a 64-bit count of elements drawn, low word first). Its static length stays
 * unknown on purpose: a small integer vector of static length is a host value to plans, whose
 * value keys the plan, and a state changes at every call.
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
      throw new ValueTypeError(`${where}: a random state holds ${STATE_WORDS} uint32 words (Philox's key and the stream's position), got ${nd.shape[0]}`);
    }
    return nd;
  }
}

let stateType: RandomStateType | undefined;

/** The (one) random state type. */
export function randomStateType(): RandomStateType {
  return (stateType ??= new RandomStateType());
}

/** The generator state that `seed` (an integer from 0 to 2^32 - 1) gives, as a state value: four words of splitmix32. */
export function randomState(seed: number): NdArray {
  if (!(Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff)) {
    throw new RangeError(`randomState: the seed must be an integer from 0 to 4294967295, got ${seed}`);
  }
  const words = seedWords(seed);
  const out = empty('uint32', [STATE_WORDS]);
  out.data.set(words);
  return out;
}

/** Is `v` a variable that can hold a state: a uint32 vector (of unknown length, or of 4)? */
export function isStateVariable(v: unknown): v is TensorVariable {
  return isTensorVariable(v) && v.dtype === 'uint32' && v.ndim === 1 && (v.type.shape[0] === null || v.type.shape[0] === STATE_WORDS);
}


/** What a draw's dtype may be: a float, an integer, (for Bernoulli draws) also bool, or (picks from a population) any. */
export type DtypeKind = 'float' | 'integer' | 'integerOrBool' | 'any';

/**
 * The base of the random variables. Inputs: the state (a uint32 vector of 4 words), `ndim`
 * int scalars (the lengths of the draws), then the distribution's parameters, which broadcast to
 * those lengths. Outputs: the next state, then the draws. Equal ops (class, dtype, ndim) on equal
 * inputs draw equal numbers, so merging them is safe.
 */
export abstract class RandomVariable extends TensorOp<TensorVariable[]> {
  static override readonly props: readonly string[] = ['dtype', 'ndim'];
  /** The distribution's name in kernels/distributions.ts. */
  abstract readonly distribution: string;

  constructor(
    readonly dtype: Dtype,
    readonly ndim: number,
  ) {
    super();
    if (!(Number.isInteger(ndim) && ndim >= 0 && ndim <= 64)) {
      throw new RangeError(`${new.target.name}: ndim must be an integer from 0 to 64, got ${ndim}`);
    }
    this.#checkDtype();
  }

  /** What the draws' dtype may be (a getter, so that the constructor can check it). */
  protected get dtypeKind(): DtypeKind {
    return 'float';
  }

  #checkDtype(): void {
    const kind = this.dtypeKind;
    const ok = kind === 'any' || (kind === 'float' ? isFloatDtype(this.dtype) : isIntDtype(this.dtype) || (kind === 'integerOrBool' && this.dtype === 'bool'));
    if (!ok) {
      const want = kind === 'float' ? 'float32 or float64' : kind === 'integer' ? 'an integer dtype' : 'an integer dtype or bool';
      throw new TypeError(`${this.constructor.name}: dtype must be ${want}, got ${this.dtype}`);
    }
  }

  /** The names of the parameters, for messages and the stream's options. */
  get paramNames(): readonly string[] {
    return DISTRIBUTIONS[this.distribution]!.params;
  }

  /** The problem with these parameter values (as a run time error says it), or undefined. */
  protected valueProblem(values: readonly number[]): string | undefined {
    const problem = parameterProblem(this.distribution, values);
    if (problem !== undefined || this.distribution !== 'integers' || this.dtype === 'bool') return problem;
    const [lo, hi] = intRange(this.dtype);
    return values[0]! < lo || values[1]! - 1 > hi ? `[${values[0]}, ${values[1]}) does not fit ${this.dtype} (integers from ${lo} to ${hi})` : undefined;
  }

  override makeNode(...args: unknown[]): Apply {
    const count = this.paramNames.length;
    const n = 1 + this.ndim + count;
    if (args.length !== n) {
      const list = this.paramNames.length < 2 ? this.paramNames.join('') : `${this.paramNames.slice(0, -1).join(', ')} and ${this.paramNames[this.paramNames.length - 1]}`;
      const names = count === 0 ? '' : `, ${list}`;
      throw new TypeError(`${this}: expected ${n} inputs (the state, ${this.ndim} length${this.ndim === 1 ? '' : 's'} of the draws${names}), got ${args.length}`);
    }
    const [state, ...rest] = args;
    this.checkState(state);
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
      if (v.dtype === 'bool') throw new TypeError(`${this}: ${name} must be numeric, got ${v} (${v.type})`);
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
    if (known.every((k) => k !== undefined)) {
      const problem = this.valueProblem(known as number[]);
      if (problem !== undefined) throw new RangeError(`${this}: ${problem}`);
    }
    return new Apply(this, [state, ...sizes, ...params], [state.type.makeVariable(), new TensorType(this.dtype, shape).makeVariable()]);
  }

  /** Refuses an input 0 that cannot hold a state. */
  protected checkState(state: unknown): asserts state is TensorVariable {
    if (isStateVariable(state)) return;
    const got = isTensorVariable(state) ? `${state} (${state.type})` : String(state);
    throw new TypeError(`${this}: input 0 must be a random state (a uint32 vector of ${STATE_WORDS} words), got ${got}`);
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

  /** Draws run on the workers, cut by the draws' elements (output 1); errors name the op and the draw. */
  override kernel(node: Apply): KernelCall {
    const name = node.outputs[1]?.name;
    const label = name ? `${this} (draw '${name}')` : String(this);
    const integers = this.distribution === 'integers' && this.dtype !== 'bool';
    return {
      name: 'randomDraws',
      params: { distribution: this.distribution, label, dtype: this.dtype, ndim: this.ndim, ...(integers ? { range: intRange(this.dtype) } : {}) },
      chunking: { by: 'elements', output: 1 },
    };
  }

  override inferShape(node: Apply): SymbolicShape[] {
    return [[intConstant(STATE_WORDS)], node.inputs.slice(1, 1 + this.ndim)];
  }

  /**
   * The derivatives of the draws with respect to each parameter, as functions of the draws and
   * the parameters (reparameterization), or undefined when the draws have none.
   */
  protected reparameterized(_draws: TensorVariable, _params: readonly TensorVariable[]): readonly (TensorVariable | undefined)[] | undefined {
    return undefined;
  }

  /** Why the draws have no gradient with respect to the parameters. */
  protected get noGradient(): string {
    return this.dtypeKind === 'float' ? 'random draws have no gradient with respect to their parameters' : 'discrete draws have no gradient';
  }

  /**
   * The state and the lengths are discrete (disconnected); the parameters get the
   * reparameterization gradient where the distribution has one, else an undefined gradient, as
   * PyTensor's RandomVariable says.
   */
  override Lop(inputs: readonly Variable[], outputs: readonly Variable[], grads: readonly Variable[]): Variable[] {
    const params = inputs.slice(1 + this.ndim) as TensorVariable[];
    const g = grads[1]!;
    const partials = isDisconnected(g) ? undefined : this.reparameterized(outputs[1] as TensorVariable, params);
    return inputs.map((_, i) => {
      if (i <= this.ndim) return disconnected();
      if (isDisconnected(g)) return disconnected();
      const d = partials?.[i - 1 - this.ndim];
      if (d === undefined) return gradUndefined(this, i, this.noGradient);
      return reduceToParam(mul(g as TensorVariable, d), params[i - 1 - this.ndim]!);
    });
  }

  override rop(inputs: readonly Variable[], evalPoints: readonly Variable[]): Variable[] {
    const params = inputs.slice(1 + this.ndim) as TensorVariable[];
    const node = this.makeNode(...inputs);
    const partials = this.reparameterized(node.outputs[1] as TensorVariable, params);
    if (partials === undefined) throw new Error(`Rop: ${this} has no derivative: ${this.noGradient}`);
    let total: TensorVariable | undefined;
    params.forEach((_, k) => {
      const e = evalPoints[1 + this.ndim + k]!;
      if (isDisconnected(e)) return;
      const d = partials[k];
      if (d === undefined) throw new Error(`Rop: ${this} has no derivative with respect to ${this.paramNames[k]}`);
      const term = mul(d, e as TensorVariable);
      total = total === undefined ? term : add(total, term);
    });
    return [disconnected(), total ?? mul(node.outputs[1] as TensorVariable, 0)];
  }

  /** A folded draw would be one fixed sample in the graph; draws are left to run. */
  override doConstantFolding(): boolean {
    return false;
  }
}

/** The props of draws of floats, and of integers. */
export const FLOAT_DRAWS = { dtype: tensorPropKinds.floatDtype, ndim: tensorPropKinds.ndim };
export const INTEGER_DRAWS = { dtype: tensorPropKinds.integerDtype, ndim: tensorPropKinds.ndim };

/** A gradient of the draws' shape summed down to a parameter's (its broadcast axes, and the leading ones it lacks). */
function reduceToParam(g: TensorVariable, param: TensorVariable): TensorVariable {
  const extra = g.ndim - param.ndim;
  const summed = extra > 0 ? sum(g, { axis: [...Array(extra).keys()] }) : g;
  return reduceToLike(summed, param);
}

/** Uniform floats in [low, high). d/dlow = 1 - u, d/dhigh = u, u = (x - low) / (high - low). */
export class UniformRV extends RandomVariable {
  static override readonly propKinds = FLOAT_DRAWS;
  readonly distribution = 'uniform';

  protected override reparameterized(x: TensorVariable, [low, high]: readonly TensorVariable[]): readonly TensorVariable[] {
    const u = trueDiv(sub(x, low!), sub(high!, low!));
    return [sub(1, u), u];
  }
}

/** A family whose draws are loc + scale * (a standard draw): d/dloc = 1, d/dscale = (x - loc) / scale. */
abstract class LocationScaleRV extends RandomVariable {
  static override readonly propKinds = FLOAT_DRAWS;


  protected override reparameterized(x: TensorVariable, params: readonly TensorVariable[]): readonly (TensorVariable | undefined)[] {
    const [loc, scale] = params.slice(-2) as [TensorVariable, TensorVariable];
    // A leading shape parameter (Student's df) has none.
    return [...params.slice(0, -2).map(() => undefined), onesLike(x), trueDiv(sub(x, loc), scale)];
  }
}

/** Normally distributed floats with mean `mean` and standard deviation `std` (Box-Muller). */
export class NormalRV extends LocationScaleRV {
  readonly distribution = 'normal';
}

/** Draws of integers (of an integer dtype). */
abstract class IntegerRV extends RandomVariable {
  static override readonly propKinds = INTEGER_DRAWS;

  protected override get dtypeKind(): DtypeKind {
    return 'integer';
  }
}

/** Uniform integers in [low, high), without bias. */
export class IntegersRV extends IntegerRV {
  readonly distribution = 'integers';
}

/** Standard normal floats (mean 0, std 1). */
export class StandardNormalRV extends RandomVariable {
  static override readonly propKinds = FLOAT_DRAWS;
  readonly distribution = 'standardNormal';
}

/** 1 with probability p, else 0. */
export class BernoulliRV extends RandomVariable {
  static override readonly propKinds = { dtype: tensorPropKinds.dtype, ndim: tensorPropKinds.ndim };
  readonly distribution = 'bernoulli';
  protected override get dtypeKind(): DtypeKind {
    return 'integerOrBool';
  }
}

/** The number of successes in n trials of probability p. */
export class BinomialRV extends IntegerRV {
  readonly distribution = 'binomial';
}

/** Poisson counts of mean lam. */
export class PoissonRV extends IntegerRV {
  readonly distribution = 'poisson';
}

/** The number of trials up to and including the first success (1, 2, ...), each of probability p. */
export class GeometricRV extends IntegerRV {
  readonly distribution = 'geometric';
}

/** Gamma(shape, scale). Gradients: d/dscale = x / scale; d/dshape implicitly, -scale dP(a, y)/da / p(y; a) with y = x / scale (Figurnov et al. 2018). */
export class GammaRV extends RandomVariable {
  static override readonly propKinds = FLOAT_DRAWS;
  readonly distribution = 'gamma';

  protected override reparameterized(x: TensorVariable, [shape, scale]: readonly TensorVariable[]): readonly TensorVariable[] {
    const y = trueDiv(x, scale!);
    const density = exp(sub(sub(mul(sub(shape!, 1), log(y)), y), elemwise(S.gammaln, shape!)));
    return [neg(mul(scale!, trueDiv(elemwise(S.gammaincDk, shape!, y), density))), y];
  }
}

/** Beta(alpha, beta). Gradients implicitly: -dI_x(a, b)/da / p(x; a, b), and the same for b. */
export class BetaRV extends RandomVariable {
  static override readonly propKinds = FLOAT_DRAWS;
  readonly distribution = 'beta';

  protected override reparameterized(x: TensorVariable, [a, b]: readonly TensorVariable[]): readonly TensorVariable[] {
    const density = exp(sub(add(mul(sub(a!, 1), log(x)), mul(sub(b!, 1), log1p(neg(x)))), elemwise(S.betaln, a!, b!)));
    return [neg(trueDiv(elemwise(S.betaincDa, a!, b!, x), density)), neg(trueDiv(elemwise(S.betaincDb, a!, b!, x), density))];
  }
}

/** Exponential draws of mean `scale`: d/dscale = x / scale. */
export class ExponentialRV extends RandomVariable {
  static override readonly propKinds = FLOAT_DRAWS;
  readonly distribution = 'exponential';

  protected override reparameterized(x: TensorVariable, [scale]: readonly TensorVariable[]): readonly TensorVariable[] {
    return [trueDiv(x, scale!)];
  }
}

/** exp of a normal draw: d/dmean = x, d/dsigma = x (log x - mean) / sigma. */
export class LognormalRV extends RandomVariable {
  static override readonly propKinds = FLOAT_DRAWS;
  readonly distribution = 'lognormal';

  protected override reparameterized(x: TensorVariable, [mean, sigma]: readonly TensorVariable[]): readonly TensorVariable[] {
    return [x, mul(x, trueDiv(sub(log(x), mean!), sigma!))];
  }
}

/** Laplace (double exponential) draws. */
export class LaplaceRV extends LocationScaleRV {
  readonly distribution = 'laplace';
}

/** Logistic draws. */
export class LogisticRV extends LocationScaleRV {
  readonly distribution = 'logistic';
}

/** loc + scale |z| for a standard normal z. */
export class HalfNormalRV extends LocationScaleRV {
  readonly distribution = 'halfNormal';
}

/** Cauchy draws. */
export class CauchyRV extends LocationScaleRV {
  readonly distribution = 'cauchy';
}

/** Student's t with df degrees of freedom, then loc + scale t (gradients in loc and scale; none in df). */
export class StudentTRV extends LocationScaleRV {
  readonly distribution = 'studentT';
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(UniformRV);
registerOpCodec(NormalRV);
registerOpCodec(IntegersRV);
registerOpCodec(StandardNormalRV);
registerOpCodec(BernoulliRV);
registerOpCodec(BinomialRV);
registerOpCodec(PoissonRV);
registerOpCodec(GeometricRV);
registerOpCodec(GammaRV);
registerOpCodec(BetaRV);
registerOpCodec(ExponentialRV);
registerOpCodec(LognormalRV);
registerOpCodec(LaplaceRV);
registerOpCodec(LogisticRV);
registerOpCodec(HalfNormalRV);
registerOpCodec(CauchyRV);
registerOpCodec(StudentTRV);
