// pool2d (PyTensor's pool_2d): windows of `ws` over the last two axes every `stride` (ws by
// default), optional zero padding, max / sum / average_inc_pad / average_exc_pad, ignoreBorder
// (partial windows at the end kept when false). Pool's gradient is PoolGrad (max: to every
// element equal to its window's maximum, as PyTensor's MaxPoolGrad); max pooling's Rop is
// MaxPoolRop (the eval point at each window's maximum). PoolGrad is linear in the output gradient,
// and its gradient for it is the transpose: the pooling itself for sum and the averages,
// MaxPoolGradGrad for max (PyTensor's DownsampleFactorMaxGradGrad). Kernels: kernels/pool.ts.
import { poolLength, type PoolMode, type PoolParams } from '../../kernels/pool.js';
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import { disconnected } from '../../graph/gradient.js';
import type { KernelCall, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { propKinds } from '../../graph/prop-kinds.js';
import { asTensorArgs, asTensorVariable } from '../core/as-tensor.js';
import { TensorOp } from '../core/op.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { add, intDiv, maximum, sub } from '../elemwise/math.js';
import { evalPointOrZeros, zerosLike } from '../shape/alloc.js';

export interface Pool2dOptions {
  /** The window: rows and columns. */
  readonly ws: readonly [number, number];
  /** Drop windows that would reach past the end (default true, as PyTensor's pool_2d). */
  readonly ignoreBorder?: boolean;
  /** Default: the window. */
  readonly stride?: readonly [number, number];
  /** Zeros before and after the rows and the columns (needs ignoreBorder). */
  readonly pad?: readonly [number, number];
  readonly mode?: PoolMode;
}

type Pair = readonly [number, number];
const pairKind = propKinds.ints(0, 1 << 20, 2);
const MODES: readonly PoolMode[] = ['max', 'sum', 'average_inc_pad', 'average_exc_pad'];

abstract class PoolOp extends TensorOp {
  static override readonly props = ['ws', 'stride', 'pad', 'ignoreBorder', 'mode'] as const;
  static override readonly propKinds = { ws: pairKind, stride: pairKind, pad: pairKind, ignoreBorder: propKinds.boolean(), mode: propKinds.oneOf<PoolMode>(MODES) };

  constructor(
    readonly ws: Pair,
    readonly stride: Pair,
    readonly pad: Pair,
    readonly ignoreBorder: boolean,
    readonly mode: PoolMode,
  ) {
    super();
    const pair = (p: Pair, what: string, min: number): void => {
      if (p.length !== 2 || !p.every((v) => Number.isInteger(v) && v >= min)) throw new RangeError(`pool2d: ${what} must be two integers of at least ${min}, got [${p.join(', ')}]`);
    };
    pair(ws, 'ws', 1);
    pair(stride, 'stride', 1);
    pair(pad, 'pad', 0);
    if (!MODES.includes(mode)) throw new TypeError(`pool2d: mode must be one of ${MODES.join(', ')}, got ${JSON.stringify(mode)}`);
    if ((pad[0] > 0 || pad[1] > 0) && !ignoreBorder) throw new RangeError('pool2d: padding needs ignoreBorder: true (as PyTensor)');
    if (pad[0] >= ws[0] || pad[1] >= ws[1]) throw new RangeError(`pool2d: the padding [${pad.join(', ')}] must be smaller than the window [${ws.join(', ')}]`);
  }

  protected get params(): PoolParams {
    return { ws: [this.ws[0], this.ws[1]], stride: [this.stride[0], this.stride[1]], pad: [this.pad[0], this.pad[1]], ignoreBorder: this.ignoreBorder, mode: this.mode };
  }

  protected outLength(n: number, a: 0 | 1): number {
    return poolLength(n, this.ws[a], this.stride[a], this.pad[a], this.ignoreBorder);
  }

  protected label(name: string): string {
    return `${name}{${this.mode}, ws=${this.ws.join('x')}, stride=${this.stride.join('x')}${this.pad.some((p) => p > 0) ? `, pad=${this.pad.join('x')}` : ''}${this.ignoreBorder ? '' : ', border kept'}}`;
  }
}

export class Pool extends PoolOp {
  override makeNode(x: unknown): Apply {
    const v = asTensorVariable(x as TensorLike);
    if (v.ndim < 2) throw new TypeError(`${this}: expected at least 2 axes (rows and columns last), got ${v} (${v.type})`);
    const s = v.type.shape;
    const [h, w] = [s[v.ndim - 2], s[v.ndim - 1]];
    const shape = [...s.slice(0, -2), h === null ? null : this.outLength(h!, 0), w === null ? null : this.outLength(w!, 1)];
    if (shape.slice(-2).some((d) => d !== null && d < 1)) throw new RangeError(`${this}: the window does not fit in ${v} (${v.type})`);
    return new Apply(this, [v], [new TensorType(v.dtype, shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: 'pool2d', params: { ...this.params }, chunking: { by: 'elements', minUnits: 256 } };
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    const nd = x!.shape.length;
    const out = [...x!.shape.slice(0, -2), this.outLength(x!.shape[nd - 2]!, 0), this.outLength(x!.shape[nd - 1]!, 1)];
    if (out[nd - 2]! < 1 || out[nd - 1]! < 1) throw new RangeError(`${this}: the window does not fit in an input of shape [${x!.shape.join(', ')}]`);
    return [out];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    const length = (n: TensorVariable, a: 0 | 1): Variable => {
      const [ws, st, pad] = [this.ws[a], this.stride[a], this.pad[a]];
      if (this.ignoreBorder) return add(intDiv(sub(add(n, 2 * pad), ws), st), 1);
      if (st >= ws) return add(intDiv(sub(n, 1), st), 1);
      return add(maximum(0, intDiv(sub(sub(n, 1), ws - st), st)), 1);
    };
    const nd = xs!.length;
    const x = xs as TensorVariable[];
    return [[...x.slice(0, -2), length(x[nd - 2]!, 0), length(x[nd - 1]!, 1)]];
  }

  override Lop([x]: readonly TensorVariable[], [out]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    return [new PoolGrad(this.ws, this.stride, this.pad, this.ignoreBorder, this.mode).call(x!, out!, gz!)];
  }

  override rop([x]: readonly TensorVariable[], [ev]: readonly Variable[]): Variable[] {
    const e = evalPointOrZeros(ev!, x!);
    if (this.mode === 'max') return [new MaxPoolRop(this.ws, this.stride, this.pad, this.ignoreBorder, this.mode).call(x!, e)];
    return [this.call(e)];
  }

  override toString(): string {
    return this.label('Pool');
  }
}

/** The Rop of max pooling: of (x, ev), ev at each window's first maximum of x, in the pooled shape. */
export class MaxPoolRop extends PoolOp {
  override makeNode(x: unknown, ev: unknown): Apply {
    const [xv, ev_] = asTensorArgs([x as TensorLike, ev as TensorLike], String(this)) as [TensorVariable, TensorVariable];
    const pooled = new Pool(this.ws, this.stride, this.pad, this.ignoreBorder, this.mode).makeNode(xv).outputs[0]!.type as TensorType;
    return new Apply(this, [xv, ev_], [new TensorType(ev_.dtype, pooled.shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: 'maxPool2dRop', params: { ...this.params }, chunking: { by: 'elements', minUnits: 256 } };
  }

  override outputShapes(node: Apply, [x]: readonly TensorView[]): number[][] {
    return new Pool(this.ws, this.stride, this.pad, this.ignoreBorder, this.mode).outputShapes(node, [x!]);
  }

  override inferShape(node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return new Pool(this.ws, this.stride, this.pad, this.ignoreBorder, this.mode).inferShape(node, [xs!]);
  }

  override toString(): string {
    return this.label('MaxPoolRop');
  }
}

/** The gradient of Pool for input x, its output, and the output gradient gz. */
export class PoolGrad extends PoolOp {
  override makeNode(x: unknown, out: unknown, gz: unknown): Apply {
    const [xv, ov, gv] = asTensorArgs([x as TensorLike, out as TensorLike, gz as TensorLike], String(this)) as [TensorVariable, TensorVariable, TensorVariable];
    return new Apply(this, [xv, ov, gv], [new TensorType(gv.dtype, xv.type.shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: 'pool2dGrad', params: { ...this.params }, chunking: { by: 'elements', minUnits: 256 } };
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [xs!];
  }

  override connectionPattern(): boolean[][] {
    return [[this.mode === 'max'], [false], [true]];
  }

  override grad([x, out]: readonly TensorVariable[], [h]: readonly TensorVariable[]): Variable[] {
    // Piecewise constant in x (the windows' maxima move only where x ties): zero there.
    if (this.mode === 'max') return [zerosLike(x!), disconnected(), new MaxPoolGradGrad(this.ws, this.stride, this.pad, this.ignoreBorder, this.mode).call(x!, out!, h!)];
    return [disconnected(), disconnected(), new Pool(this.ws, this.stride, this.pad, this.ignoreBorder, this.mode).call(h!)];
  }

  override rop([x, out, gz]: readonly TensorVariable[], [, , eg]: readonly Variable[]): Variable[] {
    return [this.call(x!, out!, evalPointOrZeros(eg!, gz!))];
  }

  override toString(): string {
    return this.label('PoolGrad');
  }
}

/** The gradient of max PoolGrad for its output gradient: of (x, maxout, h), per window the sum of h where x is the maximum. */
export class MaxPoolGradGrad extends PoolOp {
  override makeNode(x: unknown, out: unknown, h: unknown): Apply {
    const [xv, ov, hv] = asTensorArgs([x as TensorLike, out as TensorLike, h as TensorLike], String(this)) as [TensorVariable, TensorVariable, TensorVariable];
    return new Apply(this, [xv, ov, hv], [new TensorType(hv.dtype, ov.type.shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: 'maxPool2dGradGrad', params: { ...this.params }, chunking: { by: 'elements', minUnits: 256 } };
  }

  override outputShapes(_node: Apply, [, out]: readonly TensorView[]): number[][] {
    return [[...out!.shape]];
  }

  override inferShape(_node: Apply, [, os]: readonly SymbolicShape[]): SymbolicShape[] {
    return [os!];
  }

  override connectionPattern(): boolean[][] {
    return [[true], [false], [true]];
  }

  override grad([x, out]: readonly TensorVariable[], [g]: readonly TensorVariable[]): Variable[] {
    return [zerosLike(x!), disconnected(), new PoolGrad(this.ws, this.stride, this.pad, this.ignoreBorder, this.mode).call(x!, out!, g!)];
  }

  override rop([x, out, h]: readonly TensorVariable[], [, , eh]: readonly Variable[]): Variable[] {
    return [this.call(x!, out!, evalPointOrZeros(eh!, h!))];
  }

  override toString(): string {
    return this.label('MaxPoolGradGrad');
  }
}

/** PyTensor's pool_2d over the last two axes of `input`. */
export function pool2d(input: TensorLike, options: Pool2dOptions): TensorVariable {
  if (!options || !options.ws) throw new TypeError('pool2d: options.ws (the window, [rows, columns]) is required');
  const op = new Pool(options.ws, options.stride ?? options.ws, options.pad ?? [0, 0], options.ignoreBorder ?? true, options.mode ?? 'max');
  return op.call(input) as TensorVariable;
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(Pool);
registerOpCodec(PoolGrad);
registerOpCodec(MaxPoolRop);
registerOpCodec(MaxPoolGradGrad);
