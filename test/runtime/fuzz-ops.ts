// A test op with no worker kernel, for the fuzzer: its node becomes a calling-thread task of the
// plan (the queue that only the main thread serves), between worker tasks. It computes
// x * factor + 1 elementwise in its perform, for numeric (not bool) dtypes.
import { Apply } from '../../src/graph/apply.js';
import type { SymbolicShape } from '../../src/graph/op.js';
import type { TensorView } from '../../src/kernels/view.js';
import { weft } from '../helpers.js';
import { copyOf } from './fuzz-check.js';

export class CallingThreadOp extends weft.Op {
  static override readonly props = ['factor'] as const;

  constructor(readonly factor: number) {
    super();
  }

  override makeNode(x: unknown): Apply {
    const v = weft.pt.asTensorVariable(x as weft.pt.TensorVariable);
    if (v.dtype === 'bool') throw new TypeError(`${this}: expected a numeric input, got ${v.type}`);
    return new Apply(this, [v], [v.type.makeVariable()]);
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }

  override inferShape(_node: Apply, [x]: readonly SymbolicShape[]): SymbolicShape[] {
    return [x!];
  }

  override perform(_node: Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    const out = copyOf(x!);
    const d = out.data;
    for (let i = 0; i < d.length; i++) d[i] = d[i]! * this.factor + 1;
    return [out];
  }
}
