// Gemm: b*z + a*(x . y) for matrices in one kernel call (BLAS's gemm; when b is 0, z is not
// read). The specialize rewrites form it from additions of scaled dot products; it computes into
// a copy of z, or (`inplace`, set by the inplace rewrites) into z itself, which it then destroys.
import { isFloatDtype } from '../../kernels/dtype.js';
import { getKernel } from '../../kernels/registry.js';
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import type { IndexMap, KernelCall, KernelContext, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { asTensorArgs } from '../core/as-tensor.js';
import { arenaForFloat32, dot, productChunking } from './linalg.js';
import { add, mul } from '../elemwise/math.js';
import { empty, shapeText, type NdArray } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { sum } from '../elemwise/reduce.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { propKinds } from '../../graph/prop-kinds.js';

export class Gemm extends TensorOp {
  static override readonly props = ['inplace'] as const;
  static override readonly propKinds = { inplace: propKinds.boolean() };
  override readonly destroyMap: IndexMap;

  /** `inplace`: the output is written into z (input 0), which the node destroys. */
  constructor(readonly inplace = false) {
    super();
    this.destroyMap = inplace ? { 0: [0] } : {};
  }

  /** Inputs: z, a, x, y, b; output: b*z + a*(x . y). */
  override makeNode(...args: unknown[]): Apply {
    if (args.length !== 5) throw new TypeError(`Gemm: expected 5 inputs (z, a, x, y, b), got ${args.length}`);
    // Plain numbers for a and b take the matrices' dtype.
    const [z, a, x, y, b] = asTensorArgs(args as TensorLike[], 'Gemm');
    const names = ['z', 'a', 'x', 'y', 'b'];
    if (!isFloatDtype(z!.dtype)) throw new TypeError(`Gemm: z (${z}) has dtype ${z!.dtype}; Gemm computes in float32 or float64`);
    [a, x, y, b].forEach((v, i) => {
      if (v!.dtype !== z!.dtype) {
        throw new TypeError(`Gemm: ${names[i + 1]} (${v}) has dtype ${v!.dtype}; every input must have z's dtype (${z!.dtype})`);
      }
    });
    for (const [v, nd, name] of [[z, 2, 'z'], [a, 0, 'a'], [x, 2, 'x'], [y, 2, 'y'], [b, 0, 'b']] as const) {
      if (v!.ndim !== nd) throw new TypeError(`Gemm: ${name} (${v}) must be ${nd}-d, got ${v!.type}`);
    }
    const [m, k] = x!.type.shape;
    const [k2, n] = y!.type.shape;
    if (k !== null && k2 !== null && k !== k2) throw new TypeError(`Gemm: x has ${k} columns but y has ${k2} rows`);
    const shape = [z!.type.shape[0] ?? m!, z!.type.shape[1] ?? n!];
    if ((m !== null && shape[0] !== null && m !== shape[0]) || (n !== null && shape[1] !== null && n !== shape[1])) {
      throw new TypeError(`Gemm: z (${z!.type}) does not have the shape of x . y (${m ?? '?'} x ${n ?? '?'})`);
    }
    return new Apply(this, [z!, a!, x!, y!, b!], [new TensorType(z!.dtype, shape).makeVariable()]);
  }

  /** The output shape (z's), once x . y is checked to have it. */
  override outputShapes(_node: Apply, [z, , x, y]: readonly TensorView[]): number[][] {
    const [m, k] = x!.shape;
    const [k2, n] = y!.shape;
    if (k !== k2 || z!.shape[0] !== m || z!.shape[1] !== n) {
      throw new RangeError(`Gemm: shapes ${shapeText(z!.shape)} + ${shapeText(x!.shape)} . ${shapeText(y!.shape)} do not fit`);
    }
    return [[m!, n!]];
  }

  /**
   * The 'gemm' kernel: z copied into the output, then the product added, by rows (or columns) of the output;
   * inplace, 'gemmInplace': the output is z, so the product is added to it directly.
   */
  override kernel(node: Apply, context?: KernelContext): KernelCall {
    // gemm(z, alpha, x, y, beta): the product sums over x's last axis.
    const [, , x, y] = context?.inputs ?? [];
    return { name: this.inplace ? 'gemmInplace' : 'gemm', ...productChunking(x?.shape[0], y?.shape[1]), contracted: { input: 2 }, ...arenaForFloat32(node) };
  }

  /** Inplace, the result is z itself (unless z's layout repeats elements: then a new array). */
  override perform(node: Apply, inputs: readonly NdArray[]): NdArray[] {
    const z = inputs[0]!;
    const [shape] = this.outputShapes(node, inputs);
    if (this.inplace && !z.shape.some((n, a) => n > 1 && z.stride[a] === 0)) {
      getKernel('gemmInplace')(inputs, [z], {});
      return [z];
    }
    const out = empty((node.outputs[0]!.type as TensorType).dtype, shape!);
    getKernel('gemm')(inputs, [out], {});
    return [out];
  }

  override inferShape(_node: Apply, [zs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [zs!];
  }

  override grad([z, a, x, y, b]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    const xy = dot(x!, y!);
    return [mul(gz!, b!), sum(mul(gz!, xy)), mul(dot(gz!, y!.T), a!), mul(dot(x!.T, gz!), a!), sum(mul(gz!, z!))];
  }

  override rop([z, a, x, y, b]: readonly TensorVariable[], [ez, ea, ex, ey, eb]: readonly TensorVariable[]): Variable[] {
    return [
      add(mul(eb!, z!), mul(b!, ez!), mul(ea!, dot(x!, y!)), mul(a!, add(dot(ex!, y!), dot(x!, ey!)))),
    ];
  }

  override toString(): string {
    return this.inplace ? 'Gemm{inplace}' : 'Gemm';
  }
}

let gemmOp: Gemm | undefined;

/** b*z + a*(x . y) for matrices x, y, z and scalars a, b of one float dtype. */
export function gemm(z: TensorLike, a: TensorLike, x: TensorLike, y: TensorLike, b: TensorLike): TensorVariable {
  return (gemmOp ??= new Gemm()).call(z, a, x, y, b);
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(Gemm);
