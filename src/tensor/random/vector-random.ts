// Random variables over vectors (PyTensor's multivariate RandomVariables with core shapes):
// categorical indices from probability vectors, multinomial counts, dirichlet and multivariate
// normal vectors, batched over leading axes that broadcast as element-wise parameters do; and
// choice and permutation, which pick from a population in one sequential draw. Kernels:
// kernels/vector-distributions.ts.
import { Apply } from '../../graph/apply.js';
import type { KernelCall, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { isIntDtype, type Dtype } from '../../kernels/dtype.js';
import { STATE_WORDS } from '../../kernels/prng.js';
import type { TensorView } from '../../kernels/view.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { shapeText } from '../core/ndarray.js';
import { tensorPropKinds } from '../core/prop-kinds.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { onesLike } from '../shape/alloc.js';
import { asIntScalar, constantScalar, intConstant, shapeI, smallInputValues } from '../shape/shape.js';
import { propKinds } from '../../graph/prop-kinds.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { FLOAT_DRAWS, INTEGER_DRAWS, RandomVariable, type DtypeKind } from './random.js';

/** The shape of a parameter's batch part (without its last `core` axes). */
const batchPart = (shape: readonly (number | null)[], core: number): (number | null)[] => shape.slice(0, shape.length - core);

/**
 * A draw whose parameters have core axes (p's last one, cov's last two) and whose draws may have
 * one (a vector of k per item). Inputs: the state, the batch's `ndim` lengths, the parameters.
 */
export abstract class VectorRandomVariable extends RandomVariable {
  /** The core axes of each parameter. */
  protected abstract readonly cores: readonly number[];
  /** The parameter whose last axis is the draws' vector length k (when the draws are vectors). */
  protected abstract readonly vectorFrom: number | undefined;
  protected abstract readonly names: readonly string[];

  override get paramNames(): readonly string[] {
    return this.names;
  }

  override makeNode(...args: unknown[]): Apply {
    const n = 1 + this.ndim + this.names.length;
    if (args.length !== n) throw new TypeError(`${this}: expected ${n} inputs (the state, ${this.ndim} lengths of the batch, ${this.names.join(' and ')}), got ${args.length}`);
    const [state, ...rest] = args;
    this.checkState(state);
    const sizes = rest.slice(0, this.ndim).map((d, i) => asIntScalar(d as number | Variable, `${this}: length ${i} of the batch`));
    const batch = sizes.map((len) => constantScalar(len) ?? null);
    const params = rest.slice(this.ndim).map((p, k) => {
      const v = asTensorVariable(p as TensorLike);
      const name = this.names[k]!;
      const core = this.cores[k]!;
      if (v.ndim < core) throw new TypeError(`${this}: ${name} needs at least ${core} axes (its core), got ${v} (${v.type})`);
      if (v.ndim - core > this.ndim) throw new TypeError(`${this}: ${name} (${v.type}) has more batch axes than the ${this.ndim} of the draws`);
      const lead = this.ndim - (v.ndim - core);
      batchPart(v.type.shape, core).forEach((d, a) => {
        const want = batch[lead + a]!;
        if (d !== null && d !== 1 && want !== null && d !== want) throw new TypeError(`${this}: ${name} (${v.type}) does not broadcast to length ${want} on axis ${lead + a} of the batch`);
      });
      return v;
    });
    const k = this.vectorFrom === undefined ? [] : [params[this.vectorFrom]!.type.shape[params[this.vectorFrom]!.ndim - 1] ?? null];
    return new Apply(this, [state, ...sizes, ...params], [state.type.makeVariable(), new TensorType(this.dtype, [...batch, ...k]).makeVariable()]);
  }

  override outputShapes(_node: Apply, inputs: readonly TensorView[]): number[][] {
    const state = inputs[0]!;
    if (state.shape.length !== 1 || state.shape[0] !== STATE_WORDS) throw new RangeError(`${this}: the state must hold ${STATE_WORDS} uint32 words, got shape ${shapeText(state.shape)}`);
    const batch = inputs.slice(1, 1 + this.ndim).map((d, i) => {
      const len = smallInputValues(d, `${this}: length ${i} of the batch`)[0]!;
      if (len < 0) throw new RangeError(`${this}: negative length ${len} on axis ${i} of the batch`);
      return len;
    });
    const params = inputs.slice(1 + this.ndim);
    params.forEach((p, k) => {
      const part = batchPart(p.shape, this.cores[k]!) as number[];
      const lead = this.ndim - part.length;
      if (part.some((d, a) => d !== 1 && d !== batch[lead + a])) throw new RangeError(`${this}: ${this.names[k]} of shape ${shapeText(p.shape)} does not broadcast to the batch ${shapeText(batch)}`);
    });
    this.checkCores(params);
    const k = this.vectorFrom === undefined ? [] : [params[this.vectorFrom]!.shape[params[this.vectorFrom]!.shape.length - 1]!];
    return [[STATE_WORDS], [...batch, ...k]];
  }

  /** Checks that the parameters' core lengths agree (cov k x k against mean k). */
  protected checkCores(_params: readonly TensorView[]): void {}

  override inferShape(node: Apply): SymbolicShape[] {
    const batch = node.inputs.slice(1, 1 + this.ndim) as TensorVariable[];
    if (this.vectorFrom === undefined) return [[intConstant(STATE_WORDS)], batch];
    const p = node.inputs[1 + this.ndim + this.vectorFrom] as TensorVariable;
    return [[intConstant(STATE_WORDS)], [...batch, shapeI(p, p.ndim - 1)]];
  }

  override kernel(node: Apply): KernelCall {
    const name = node.outputs[1]?.name;
    const label = name ? `${this} (draw '${name}')` : String(this);
    const params = { distribution: this.distribution, label, ndim: this.ndim };
    // The batch's items are the units: the draws' elements, or their lanes along the vector axis.
    const chunking = this.vectorFrom === undefined ? ({ by: 'elements', output: 1 } as const) : ({ by: 'lanes', axis: this.ndim, output: 1 } as const);
    return { name: 'randomVectorDraws', params, chunking };
  }
}

/** An index in [0, k) per item, with probabilities p (the last axis of p). */
export class CategoricalRV extends VectorRandomVariable {
  static override readonly propKinds = INTEGER_DRAWS;
  readonly distribution = 'categorical';
  protected override get dtypeKind(): DtypeKind {
    return 'integer';
  }
  protected readonly cores = [1];
  protected readonly vectorFrom = undefined;
  protected readonly names = ['p'];
}

/** Counts of n draws over k categories of probabilities p, per item. */
export class MultinomialRV extends VectorRandomVariable {
  static override readonly propKinds = INTEGER_DRAWS;
  readonly distribution = 'multinomial';
  protected override get dtypeKind(): DtypeKind {
    return 'integer';
  }
  protected readonly cores = [0, 1];
  protected readonly vectorFrom = 1;
  protected readonly names = ['n', 'p'];
}

/** Vectors on the simplex, Dirichlet(alpha), per item. */
export class DirichletRV extends VectorRandomVariable {
  static override readonly propKinds = FLOAT_DRAWS;
  readonly distribution = 'dirichlet';
  protected readonly cores = [1];
  protected readonly vectorFrom = 0;
  protected readonly names = ['alpha'];
}

/** mean + L z, L the Cholesky factor of cov (k x k), per item. Gradient: in the mean (each draw moves with it); none in cov. */
export class MultivariateNormalRV extends VectorRandomVariable {
  static override readonly propKinds = FLOAT_DRAWS;
  readonly distribution = 'multivariateNormal';
  protected readonly cores = [1, 2];
  protected readonly vectorFrom = 0;
  protected readonly names = ['mean', 'cov'];

  protected override checkCores([mean, cov]: readonly TensorView[]): void {
    const k = mean!.shape[mean!.shape.length - 1]!;
    const [r, c] = cov!.shape.slice(-2);
    if (r !== k || c !== k) throw new RangeError(`${this}: cov of shape ${shapeText(cov!.shape)} must be ${k} x ${k} for a mean of length ${k}`);
  }

  protected override reparameterized(x: TensorVariable): readonly (TensorVariable | undefined)[] {
    return [onesLike(x), undefined];
  }
}

/**
 * choice(a): `size` picks from a population (a vector, or arange(a) for a scalar integer a),
 * with replacement or without, uniformly or by probabilities p (an empty vector for none).
 */
export class ChoiceRV extends RandomVariable {
  static override readonly props: readonly string[] = ['dtype', 'ndim', 'replace', 'count'];
  static override readonly propKinds = { dtype: tensorPropKinds.dtype, ndim: tensorPropKinds.ndim, replace: propKinds.boolean(), count: propKinds.boolean() };
  readonly distribution = 'choice';

  protected override get dtypeKind(): DtypeKind {
    return 'any';
  }

  constructor(
    dtype: Dtype,
    ndim: number,
    readonly replace: boolean,
    readonly count: boolean,
  ) {
    super(dtype, ndim);
  }

  override get paramNames(): readonly string[] {
    return ['a', 'p'];
  }

  override makeNode(state: unknown, ...rest: unknown[]): Apply {
    this.checkState(state);
    const sizes = rest.slice(0, this.ndim).map((d, i) => asIntScalar(d as number | Variable, `${this}: length ${i} of the draws`));
    const [a, p] = rest.slice(this.ndim).map((v) => asTensorVariable(v as TensorLike)) as [TensorVariable, TensorVariable];
    if (this.count ? !(a.ndim === 0 && isIntDtype(a.dtype)) : a.ndim !== 1) throw new TypeError(`${this}: a must be ${this.count ? 'a scalar integer' : 'a vector'}, got ${a} (${a.type})`);
    if (p.ndim !== 1) throw new TypeError(`${this}: p must be a vector (empty for uniform picks), got ${p} (${p.type})`);
    const shape = sizes.map((len) => constantScalar(len) ?? null);
    return new Apply(this, [state, ...sizes, a, p], [state.type.makeVariable(), new TensorType(this.dtype, shape).makeVariable()]);
  }

  override outputShapes(_node: Apply, inputs: readonly TensorView[]): number[][] {
    return [[STATE_WORDS], inputs.slice(1, 1 + this.ndim).map((d, i) => smallInputValues(d, `${this}: length ${i} of the draws`)[0]!)];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    return [[intConstant(STATE_WORDS)], node.inputs.slice(1, 1 + this.ndim) as TensorVariable[]];
  }

  override kernel(node: Apply): KernelCall {
    const name = node.outputs[1]?.name;
    return { name: 'randomPick', params: { label: name ? `${this} (draw '${name}')` : String(this), ndim: this.ndim, mode: 'choice', replace: this.replace, count: this.count }, chunking: { by: 'none' } };
  }
}

/** permutation(x): x's entries along its first axis shuffled, or a shuffled arange(x) for a scalar integer x. */
export class PermutationRV extends RandomVariable {
  static override readonly props: readonly string[] = ['dtype', 'count'];
  static override readonly propKinds = { dtype: tensorPropKinds.dtype, count: propKinds.boolean() };
  readonly distribution = 'permutation';

  protected override get dtypeKind(): DtypeKind {
    return 'any';
  }

  constructor(
    dtype: Dtype,
    readonly count: boolean,
  ) {
    super(dtype, 0);
  }

  override get paramNames(): readonly string[] {
    return ['x'];
  }

  override makeNode(state: unknown, x: unknown): Apply {
    this.checkState(state);
    const v = asTensorVariable(x as TensorLike);
    if (this.count ? !(v.ndim === 0 && isIntDtype(v.dtype)) : v.ndim < 1) throw new TypeError(`${this}: x must be ${this.count ? 'a scalar integer' : 'at least a vector'}, got ${v} (${v.type})`);
    const shape = this.count ? [constantScalar(v) ?? null] : v.type.shape;
    return new Apply(this, [state, v], [state.type.makeVariable(), new TensorType(this.dtype, shape).makeVariable()]);
  }

  override outputShapes(_node: Apply, [, x]: readonly TensorView[]): number[][] {
    if (this.count) {
      const n = smallInputValues(x!, `${this}: x`)[0]!;
      if (!(n >= 0)) throw new RangeError(`${this}: x must be non-negative, got ${n}`);
      return [[STATE_WORDS], [n]];
    }
    return [[STATE_WORDS], [...x!.shape]];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    const x = node.inputs[1] as TensorVariable;
    return [[intConstant(STATE_WORDS)], this.count ? [x] : x.type.shape.map((_, i) => shapeI(x, i))];
  }

  override kernel(node: Apply): KernelCall {
    const name = node.outputs[1]?.name;
    return { name: 'randomPick', params: { label: name ? `${this} (draw '${name}')` : String(this), ndim: 0, mode: 'permutation', replace: false, count: this.count }, chunking: { by: 'none' } };
  }
}

registerOpCodec(CategoricalRV);
registerOpCodec(MultinomialRV);
registerOpCodec(DirichletRV);
registerOpCodec(MultivariateNormalRV);
registerOpCodec(ChoiceRV);
registerOpCodec(PermutationRV);
