// im2col and col2im: a convolution's patches as a matrix per image and group, so that conv2d and
// its gradients become matrix products (rewriting/conv-gemm.ts). Im2Col(x, w) has shape
// [N, groups, Cg * KH * KW, HO * WO]; Col2Im(cols, x, w) is its transpose, in x's shape. Both are
// linear: each one's gradient is the other. The filters w (and Col2Im's x) give shapes only.
import { Apply } from '../../graph/apply.js';
import { disconnected } from '../../graph/gradient.js';
import type { KernelCall, SymbolicShape } from '../../graph/op.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import type { Variable } from '../../graph/variable.js';
import type { TensorView } from '../../kernels/view.js';
import { TensorType } from '../core/type.js';
import type { TensorVariable } from '../core/variable.js';
import { mul } from '../elemwise/math.js';
import { evalPointOrZeros } from '../shape/alloc.js';
import { intConstant } from '../shape/shape.js';
import { ConvOp } from './conv.js';

export class Im2Col extends ConvOp {
  override makeNode(x: unknown, w: unknown): Apply {
    const [xv, wv] = this.call4(String(this), x, w);
    const [xs, ws] = [xv!.type.shape, wv!.type.shape];
    const known = [...xs, ...ws].every((d) => d !== null);
    const shape = known ? this.colsShape(xs as number[], ws as number[]) : [xs[0]!, this.groups, null, null];
    return new Apply(this, [xv!, wv!], [new TensorType(xv!.dtype, shape).makeVariable()]);
  }

  private colsShape(x: readonly number[], w: readonly number[]): number[] {
    const [N, , HO, WO] = this.outputShape(x, w);
    return [N!, this.groups, w[1]! * w[2]! * w[3]!, HO! * WO!];
  }

  override kernel(): KernelCall {
    return { name: 'im2col', params: { ...this.params }, chunking: { by: 'elements', minUnits: 1024 } };
  }

  override outputShapes(_node: Apply, [x, w]: readonly TensorView[]): number[][] {
    return [this.colsShape(x!.shape, w!.shape)];
  }

  override inferShape(_node: Apply, [xs, ws]: readonly SymbolicShape[]): SymbolicShape[] {
    const [n, , ho, wo] = this.outputSymbolic(xs!, ws!) as TensorVariable[];
    const w = ws as TensorVariable[];
    return [[n!, intConstant(this.groups), mul(mul(w[1]!, w[2]!), w[3]!), mul(ho!, wo!)]];
  }

  override connectionPattern(): boolean[][] {
    return [[true], [false]];
  }

  override grad([x, w]: readonly TensorVariable[], [g]: readonly TensorVariable[]): Variable[] {
    return [this.sameAs(Col2Im).call(g!, x!, w!), disconnected()];
  }

  override rop([x, w]: readonly TensorVariable[], [ex]: readonly Variable[]): Variable[] {
    return [this.call(evalPointOrZeros(ex!, x!), w!)];
  }

  override toString(): string {
    return this.label('Im2Col');
  }
}

export class Col2Im extends ConvOp {
  override makeNode(cols: unknown, x: unknown, w: unknown): Apply {
    const [cv, xv, wv] = this.call4(String(this), cols, x, w);
    return new Apply(this, [cv!, xv!, wv!], [new TensorType(cv!.dtype, xv!.type.shape).makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: 'col2im', params: { ...this.params }, chunking: { by: 'elements', minUnits: 256 } };
  }

  override outputShapes(_node: Apply, [, x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }

  override inferShape(_node: Apply, [, xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [xs!];
  }

  override connectionPattern(): boolean[][] {
    return [[true], [false], [false]];
  }

  override grad([, , w]: readonly TensorVariable[], [g]: readonly TensorVariable[]): Variable[] {
    return [this.sameAs(Im2Col).call(g!, w!), disconnected(), disconnected()];
  }

  override rop([cols, x, w]: readonly TensorVariable[], [ec]: readonly Variable[]): Variable[] {
    return [this.call(evalPointOrZeros(ec!, cols!), x!, w!)];
  }

  override toString(): string {
    return this.label('Col2Im');
  }
}

/** The patches of `x` for filters shaped as `w`, with conv2d's options as `like` has them. */
export function im2col(like: ConvOp, x: TensorVariable, w: TensorVariable): TensorVariable {
  return like.sameAs(Im2Col).call(x, w) as TensorVariable;
}

/** The transpose of im2col: `cols` summed back into an array shaped as `x`. */
export function col2im(like: ConvOp, cols: TensorVariable, x: TensorVariable, w: TensorVariable): TensorVariable {
  return like.sameAs(Col2Im).call(cols, x, w) as TensorVariable;
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(Im2Col);
registerOpCodec(Col2Im);
