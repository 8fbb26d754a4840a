// Nonzero (NumPy's nonzero): for a tensor of k axes, k int32 vectors holding the positions of its
// non-zero (true) elements in C order, one vector per axis. Their length depends on the values,
// so it runs its perform when a call reaches it (plans continue from there). Boolean masks in
// `x.get(mask)` are these index arrays.
import { Apply } from '../../graph/apply.js';
import { disconnected } from '../../graph/gradient.js';
import type { Variable } from '../../graph/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { makeNdArray, type NdArray } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';

export class Nonzero extends TensorOp {
  override makeNode(x: unknown): Apply {
    const v = asTensorVariable(x as TensorLike);
    if (v.ndim === 0) throw new TypeError(`nonzero: expected at least one axis, got ${v} (${v.type})`);
    return new Apply(this, [v], Array.from({ length: v.ndim }, () => new TensorType('int32', [null]).makeVariable()));
  }

  override perform(_node: Apply, [x]: readonly unknown[]): unknown[] {
    const a = x as NdArray;
    const nd = a.shape.length;
    const found: number[][] = Array.from({ length: nd }, () => []);
    const at = Array<number>(nd).fill(0);
    const total = a.shape.reduce((p, d) => p * d, 1);
    for (let k = 0; k < total; k++) {
      let p = a.offset;
      for (let d = 0; d < nd; d++) p += at[d]! * a.stride[d]!;
      if (a.data[p] !== 0) at.forEach((i, d) => found[d]!.push(i));
      for (let d = nd - 1; d >= 0; d--) {
        if (++at[d]! < a.shape[d]!) break;
        at[d] = 0;
      }
    }
    return found.map((f) => makeNdArray(Int32Array.from(f), [f.length]));
  }

  override grad(): Variable[] {
    // Positions are integers: nothing flows back to x.
    return [disconnected()];
  }

  override toString(): string {
    return 'Nonzero';
  }
}

/** The positions of x's non-zero elements, one int32 vector per axis (NumPy's nonzero). */
export function nonzero(x: TensorLike): TensorVariable[] {
  const v = asTensorVariable(x);
  const out = new Nonzero().call(v);
  return Array.isArray(out) ? (out as TensorVariable[]) : [out as TensorVariable];
}

// Documents write this op by its props (graph/prop-codec.ts).
registerOpCodec(Nonzero);
