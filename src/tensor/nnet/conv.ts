// conv2d (PyTensor's): NCHW inputs, OIHW filters, border modes valid / full / half / explicit
// padding, strides (subsample), dilation, groups, and the filter flipped (a convolution, the
// default) or not (a cross-correlation). Conv2d's gradients are Conv2dGradInputs and
// Conv2dGradFilters; its Rop is the sum of the two convolutions of the eval points (it is
// bilinear), and the gradients' gradients are convolutions again (second order). Kernels:
// kernels/conv.ts, each output element a sum in a fixed order; rewriting/conv-gemm.ts turns all
// three into im2col and matrix products when compiled for speed.
import { convLength, convPadding, type ConvParams } from '../../kernels/conv.js';
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import { disconnected } from '../../graph/gradient.js';
import type { KernelCall, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { propKinds } from '../../graph/prop-kinds.js';
import { asTensorArgs } from '../core/as-tensor.js';
import { upcast, upgradeToFloat } from '../core/dtype.js';
import { TensorOp } from '../core/op.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { add, intDiv, mul, sub } from '../elemwise/math.js';
import { evalPointOrZeros } from '../shape/alloc.js';
import { intConstant } from '../shape/shape.js';

export interface Conv2dOptions {
  /** 'valid' (default), 'full', 'half', or [rows, columns] of zeros added on each side. */
  readonly borderMode?: 'valid' | 'full' | 'half' | readonly [number, number];
  /** The strides, [1, 1] by default. */
  readonly subsample?: readonly [number, number];
  readonly filterDilation?: readonly [number, number];
  readonly numGroups?: number;
  /** Flip the filters (a convolution, true by default) or not (a cross-correlation). */
  readonly filterFlip?: boolean;
}

type Pair = readonly [number, number];
const pairKind = propKinds.ints(0, 1 << 20, 2);

/** The props, checks and shapes that Conv2d, its gradients and im2col share. */
export abstract class ConvOp extends TensorOp {
  static override readonly props = ['border', 'pad', 'subsample', 'dilation', 'groups', 'flip'] as const;
  static override readonly propKinds = {
    border: propKinds.oneOf<ConvParams['border']>(['valid', 'full', 'half', 'explicit']),
    pad: pairKind,
    subsample: pairKind,
    dilation: pairKind,
    groups: propKinds.int(1, 1 << 16),
    flip: propKinds.boolean(),
  };

  constructor(
    readonly border: ConvParams['border'],
    readonly pad: Pair,
    readonly subsample: Pair,
    readonly dilation: Pair,
    readonly groups: number,
    readonly flip: boolean,
  ) {
    super();
    const pair = (p: Pair, what: string, min: number): void => {
      if (p.length !== 2 || !p.every((v) => Number.isInteger(v) && v >= min)) throw new RangeError(`conv2d: ${what} must be two integers of at least ${min}, got [${p.join(', ')}]`);
    };
    pair(pad, 'the padding', 0);
    pair(subsample, 'subsample', 1);
    pair(dilation, 'filterDilation', 1);
    if (!Number.isInteger(groups) || groups < 1) throw new RangeError(`conv2d: numGroups must be a positive integer, got ${groups}`);
  }

  get params(): ConvParams {
    return { border: this.border, pad: [this.pad[0], this.pad[1]], stride: [this.subsample[0], this.subsample[1]], dilation: [this.dilation[0], this.dilation[1]], groups: this.groups, flip: this.flip };
  }

  protected call4(name: string, ...xs: unknown[]): TensorVariable[] {
    const vs = asTensorArgs(xs as TensorLike[], name);
    vs.forEach((v) => {
      if (v.ndim !== 4) throw new TypeError(`${name}: expected 4-d tensors (NCHW inputs, OIHW filters), got ${v} (${v.type})`);
    });
    return vs;
  }

  /** The output shape for input and filter shapes, checked: channels that match, windows that fit. */
  protected outputShape(x: readonly number[], w: readonly number[]): number[] {
    const [N, C, H, W] = x as [number, number, number, number];
    const [O, Cg, KH, KW] = w as [number, number, number, number];
    const shapes = `the input of shape [${x.join(', ')}] and the filters of shape [${w.join(', ')}]`;
    if (C !== Cg * this.groups) throw new RangeError(`conv2d: ${shapes} do not fit: the input has ${C} channels, the filters take ${Cg} per group in ${this.groups} group${this.groups === 1 ? '' : 's'}`);
    if (O % this.groups !== 0) throw new RangeError(`conv2d: ${shapes} do not fit: ${O} filters cannot be split into ${this.groups} groups`);
    const [ph, pw] = convPadding(this.params, KH, KW);
    const [HO, WO] = [convLength(H, KH, ph, this.subsample[0], this.dilation[0]), convLength(W, KW, pw, this.subsample[1], this.dilation[1])];
    if (HO < 1 || WO < 1) throw new RangeError(`conv2d: ${shapes} do not fit: the filters' windows (dilation ${this.dilation.join('x')}) are larger than the input padded by ${ph}x${pw}`);
    return [N, O, HO, WO];
  }

  /** The symbolic output shape (inferShape). */
  protected outputSymbolic(xs: SymbolicShape, ws: SymbolicShape): Variable[] {
    const length = (n: TensorVariable, k: TensorVariable, a: 0 | 1): Variable => {
      const span = add(mul(sub(k, 1), this.dilation[a]), 1);
      const pad = this.border === 'valid' ? intConstant(0) : this.border === 'full' ? sub(span, 1) : this.border === 'half' ? intDiv(span, 2) : intConstant(this.pad[a]);
      return add(intDiv(sub(add(n, mul(pad, 2)), span), this.subsample[a]), 1);
    };
    const [x, w] = [xs as TensorVariable[], ws as TensorVariable[]];
    return [x[0]!, w[0]!, length(x[2]!, w[2]!, 0), length(x[3]!, w[3]!, 1)];
  }

  sameAs<T extends ConvOp>(Cls: new (...a: ConstructorParameters<typeof Conv2d>) => T): T {
    return new Cls(this.border, this.pad, this.subsample, this.dilation, this.groups, this.flip);
  }

  protected label(name: string): string {
    const parts = [this.border === 'explicit' ? `pad=${this.pad.join('x')}` : this.border];
    if (this.subsample.some((s) => s !== 1)) parts.push(`subsample=${this.subsample.join('x')}`);
    if (this.dilation.some((d) => d !== 1)) parts.push(`dilation=${this.dilation.join('x')}`);
    if (this.groups !== 1) parts.push(`groups=${this.groups}`);
    if (!this.flip) parts.push('no flip');
    return `${name}{${parts.join(', ')}}`;
  }
}

export class Conv2d extends ConvOp {
  override makeNode(x: unknown, w: unknown): Apply {
    const [xv, wv] = this.call4(String(this), x, w);
    const dtype = upgradeToFloat(upcast(xv!.dtype, wv!.dtype));
    const xs = xv!.type.shape;
    const ws = wv!.type.shape;
    let shape: Array<number | null> = [xs[0]!, ws[0]!, null, null];
    if (xs[1] !== null && ws[1] !== null && xs[1] !== ws[1]! * this.groups) {
      throw new TypeError(`conv2d: the input ${xv} (${xv!.type}) has ${xs[1]} channels, the filters ${wv} (${wv!.type}) take ${ws[1]} per group in ${this.groups} group${this.groups === 1 ? '' : 's'}`);
    }
    if ([...xs, ...ws].every((d) => d !== null)) shape = this.outputShape(xs as number[], ws as number[]);
    return new Apply(this, [xv!, wv!], [new TensorType(dtype, shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: 'conv2d', params: { ...this.params }, chunking: { by: 'elements', minUnits: 64 } };
  }

  override outputShapes(_node: Apply, [x, w]: readonly TensorView[]): number[][] {
    return [this.outputShape(x!.shape, w!.shape)];
  }

  override inferShape(_node: Apply, [xs, ws]: readonly SymbolicShape[]): SymbolicShape[] {
    return [this.outputSymbolic(xs!, ws!)];
  }

  override grad([x, w]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    return [this.sameAs(Conv2dGradInputs).call(w!, gz!, x!), this.sameAs(Conv2dGradFilters).call(x!, gz!, w!)];
  }

  override rop([x, w]: readonly TensorVariable[], [ex, ew]: readonly Variable[]): Variable[] {
    return [add(this.call(evalPointOrZeros(ex!, x!), w!) as TensorVariable, this.call(x!, evalPointOrZeros(ew!, w!)) as TensorVariable)];
  }

  override toString(): string {
    return this.label('Conv2d');
  }
}

/**
 * A gradient of Conv2d: of (the other operand, gz, `like`) it computes an array of `like`'s type
 * and shape (`like` is read for its shape only). Its kernel sums in a fixed order per element.
 */
abstract class ConvGrad extends ConvOp {
  protected abstract readonly kernelName: string;

  override makeNode(operand: unknown, gz: unknown, like: unknown): Apply {
    const [ov, gv, lv] = this.call4(String(this), operand, gz, like);
    return new Apply(this, [ov!, gv!, lv!], [new TensorType(gv!.dtype, lv!.type.shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: this.kernelName, params: { ...this.params }, chunking: { by: 'elements', minUnits: 16 } };
  }

  override outputShapes(_node: Apply, [, , like]: readonly TensorView[]): number[][] {
    return [[...like!.shape]];
  }

  override inferShape(_node: Apply, [, , ls]: readonly SymbolicShape[]): SymbolicShape[] {
    return [ls!];
  }

  override connectionPattern(): boolean[][] {
    return [[true], [true], [false]];
  }
}

/**
 * The gradient of Conv2d with respect to its input: of (w, gz, x), x giving the shape. It is
 * bilinear, <h, gradInputs(w, gz)> = <conv2d(h, w), gz>, so its own gradients are a convolution
 * (for gz) and a filters' gradient (for w).
 */
export class Conv2dGradInputs extends ConvGrad {
  protected readonly kernelName = 'conv2dGradInputs';

  override grad([w, gz, x]: readonly TensorVariable[], [h]: readonly TensorVariable[]): Variable[] {
    return [this.sameAs(Conv2dGradFilters).call(h!, gz!, w!), this.sameAs(Conv2d).call(h!, w!), disconnected()];
  }

  override rop([w, gz, x]: readonly TensorVariable[], [ew, eg]: readonly Variable[]): Variable[] {
    return [add(this.call(evalPointOrZeros(ew!, w!), gz!, x!) as TensorVariable, this.call(w!, evalPointOrZeros(eg!, gz!), x!) as TensorVariable)];
  }

  override toString(): string {
    return this.label('Conv2dGradInputs');
  }
}

/**
 * The gradient of Conv2d with respect to its filters: of (x, gz, w), w giving the shape. Bilinear
 * too, <h, gradFilters(x, gz)> = <conv2d(x, h), gz>.
 */
export class Conv2dGradFilters extends ConvGrad {
  protected readonly kernelName = 'conv2dGradFilters';

  override grad([x, gz, w]: readonly TensorVariable[], [h]: readonly TensorVariable[]): Variable[] {
    return [this.sameAs(Conv2dGradInputs).call(h!, gz!, x!), this.sameAs(Conv2d).call(x!, h!), disconnected()];
  }

  override rop([x, gz, w]: readonly TensorVariable[], [ex, eg]: readonly Variable[]): Variable[] {
    return [add(this.call(evalPointOrZeros(ex!, x!), gz!, w!) as TensorVariable, this.call(x!, evalPointOrZeros(eg!, gz!), w!) as TensorVariable)];
  }

  override toString(): string {
    return this.label('Conv2dGradFilters');
  }
}

/** PyTensor's conv2d of NCHW `input` with OIHW `filters`. */
export function conv2d(input: TensorLike, filters: TensorLike, options: Conv2dOptions = {}): TensorVariable {
  const mode = options.borderMode ?? 'valid';
  const explicit = typeof mode !== 'string';
  if (!explicit && mode !== 'valid' && mode !== 'full' && mode !== 'half') {
    throw new TypeError(`conv2d: borderMode must be 'valid', 'full', 'half' or [rows, columns], got ${JSON.stringify(mode)}`);
  }
  const op = new Conv2d(explicit ? 'explicit' : mode, explicit ? mode : [0, 0], options.subsample ?? [1, 1], options.filterDilation ?? [1, 1], options.numGroups ?? 1, options.filterFlip ?? true);
  return op.call(input, filters) as TensorVariable;
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(Conv2d);
registerOpCodec(Conv2dGradInputs);
registerOpCodec(Conv2dGradFilters);
