// ScalarReduce: a reduction over a user's binary scalar op (PyTensor's CAReduce(scalar_op)),
// `new weft.ScalarReduce(op, axes, identity)`. Each output element folds its input elements in C
// order from the identity, on one thread: its bits do not depend on how the work is split. The
// kernel is the scalar op's JS code in a generated loop (a source kernel, compiled once per thread).
import type { Dtype } from '../../kernels/dtype.js';
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import type { KernelCall, SymbolicShape } from '../../graph/op.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { TensorOp } from '../core/op.js';
import { TensorType } from '../core/type.js';
import type { TensorLike } from '../core/variable.js';
import type { ScalarOp } from '../scalar/scalar-op.js';
import { checkedAxes, keptShape } from './reduce.js';

export class ScalarReduce extends TensorOp {
  static override readonly props = ['scalarOp', 'axis', 'identity'] as const;
  readonly axis: readonly number[];

  constructor(
    readonly scalarOp: ScalarOp,
    axis: readonly number[],
    /** The value each fold starts from (0 for a sum, -Infinity for a maximum). */
    readonly identity: number,
  ) {
    super();
    if (scalarOp.spec.nin !== 2 && scalarOp.spec.nin !== 'variadic') {
      throw new TypeError(`ScalarReduce: ${scalarOp} takes ${scalarOp.spec.nin} inputs; a reduction folds with a binary op`);
    }
    if (typeof identity !== 'number') throw new TypeError(`ScalarReduce: the identity must be a number, got ${typeof identity}`);
    this.axis = checkedAxes(axis, `ScalarReduce{${scalarOp}}`);
  }

  override makeNode(x: unknown): Apply {
    const v = asTensorVariable(x as TensorLike);
    if (this.axis.some((a) => a >= v.ndim)) throw new RangeError(`${this}: axis [${this.axis.join(', ')}] is out of range for ${v} (${v.type})`);
    const problem = this.scalarOp.spec.checkInputs?.([v.dtype, v.dtype]);
    if (problem) throw new TypeError(`${this}: ${problem}`);
    const out = this.scalarOp.spec.outputDtype([v.dtype, v.dtype]);
    if (out !== v.dtype) throw new TypeError(`${this}: ${this.scalarOp} of two ${v.dtype} values gives ${out}; a reduction needs an op that keeps its dtype`);
    return new Apply(this, [v], [new TensorType(v.dtype, keptShape(v.type.shape, this.axis)).makeVariable()]);
  }

  override kernel(node: Apply): KernelCall {
    const dtype = (node.inputs[0]!.type as TensorType).dtype;
    const step = this.scalarOp.code(['acc', 'x.data[at]'], { inputs: [dtype, dtype], output: dtype as Dtype });
    return {
      name: 'source',
      params: { key: `weft.ScalarReduce{${this.scalarOp}}.${dtype}`, version: step, axes: [...this.axis], identity: this.identity, source: foldSource(step) },
      chunking: { by: 'elements' },
    };
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [keptShape(x!.shape, this.axis)];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [keptShape(xs!, this.axis)];
  }

  override toString(): string {
    return `ScalarReduce{${this.scalarOp}, axis=[${this.axis.join(',')}]}`;
  }
}

/** The loop of a fold: output element i (C order over the kept axes) from its reduced elements, in C order. */
function foldSource(step: string): string {
  return `
    const [x] = inputs, [out] = outputs;
    const axes = params.axes, nd = x.shape.length;
    const kept = [], reduced = [];
    for (let a = 0; a < nd; a++) (axes.includes(a) ? reduced : kept).push(a);
    const n = kept.reduce((p, a) => p * x.shape[a], 1);
    const count = reduced.reduce((p, a) => p * x.shape[a], 1);
    const start = range ? range.start : 0, end = range ? range.end : n;
    for (let i = start; i < end; i++) {
      let rest = i, base = x.offset;
      for (let k = kept.length - 1; k >= 0; k--) {
        const a = kept[k];
        base += (rest % x.shape[a]) * x.stride[a];
        rest = Math.floor(rest / x.shape[a]);
      }
      let acc = params.identity;
      for (let j = 0; j < count; j++) {
        let r = j, at = base;
        for (let k = reduced.length - 1; k >= 0; k--) {
          const a = reduced[k];
          at += (r % x.shape[a]) * x.stride[a];
          r = Math.floor(r / x.shape[a]);
        }
        acc = ${step};
      }
      out.data[out.offset + i] = acc;
    }`;
}
