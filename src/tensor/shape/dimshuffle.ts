// DimShuffle: reorders axes, drops axes of static length 1 and inserts broadcastable ones
// ('x'). The result is a view: the same data with permuted strides.
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import type { IndexMap, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { TensorOp } from '../core/op.js';
import { sum } from '../elemwise/reduce.js';
import { intConstant } from './shape.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { tensorPropKinds } from '../core/prop-kinds.js';

export type ShuffleEntry = number | 'x';

export class DimShuffle extends TensorOp {
  static override readonly props = ['inputNdim', 'newOrder'] as const;
  static override readonly propKinds = { inputNdim: tensorPropKinds.ndim, newOrder: tensorPropKinds.shuffleOrder };
  override readonly viewMap: IndexMap = { 0: [0] };
  readonly newOrder: readonly ShuffleEntry[];
  /** Input axes that the output does not keep (each of static length 1). */
  readonly dropped: readonly number[];

  constructor(
    readonly inputNdim: number,
    newOrder: readonly ShuffleEntry[],
  ) {
    super();
    this.newOrder = Object.freeze([...newOrder]);
    const seen = new Set<number>();
    for (const a of newOrder) {
      if (a === 'x') continue;
      if (!Number.isInteger(a) || a < 0 || a >= inputNdim) {
        const valid = inputNdim > 0 ? `0..${inputNdim - 1} or 'x'` : "'x'";
        throw new RangeError(`DimShuffle: ${JSON.stringify(a)} is not an axis of a ${inputNdim}-d input (use ${valid})`);
      }
      if (seen.has(a)) throw new RangeError(`DimShuffle: axis ${a} appears twice in [${newOrder.join(', ')}]`);
      seen.add(a);
    }
    this.dropped = [...Array(inputNdim).keys()].filter((a) => !seen.has(a));
  }

  override makeNode(x: unknown): Apply {
    const v = asTensorVariable(x as TensorLike);
    if (v.ndim !== this.inputNdim) {
      throw new TypeError(`${this}: expected a ${this.inputNdim}-d input, got ${v} (${v.type})`);
    }
    for (const a of this.dropped) {
      if (v.type.shape[a] !== 1) {
        throw new TypeError(
          `${this}: cannot drop axis ${a} of ${v} (${v.type}): only axes of static length 1 can be dropped`,
        );
      }
    }
    const shape = this.newOrder.map((a) => (a === 'x' ? 1 : v.type.shape[a]!));
    return new Apply(this, [v], [new TensorType(v.dtype, shape).makeVariable()]);
  }

  override view(_node: Apply, [x]: readonly TensorView[]): TensorView[] {
    const shape = this.newOrder.map((a) => (a === 'x' ? 1 : x!.shape[a]!));
    const stride = this.newOrder.map((a) => (a === 'x' ? 0 : x!.stride[a]!));
    return [{ data: x!.data, offset: x!.offset, shape, stride }];
  }

  override inferShape(_node: Apply, [xs]: readonly SymbolicShape[]): SymbolicShape[] {
    return [this.newOrder.map((a) => (a === 'x' ? intConstant(1) : xs![a]!))];
  }

  override grad([x]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    // Sum over the inserted axes where gz is not statically 1, then undo the permutation.
    const inserted = this.newOrder.flatMap((a, i) => (a === 'x' && gz!.type.shape[i] !== 1 ? [i] : []));
    const g = inserted.length > 0 ? sum(gz!, { axis: inserted, keepdims: true }) : gz!;
    const back: ShuffleEntry[] = Array<ShuffleEntry>(x!.ndim).fill('x');
    this.newOrder.forEach((a, i) => {
      if (a !== 'x') back[a] = i;
    });
    return [dimshuffle(g, back)];
  }

  override rop(_inputs: readonly TensorVariable[], [ev]: readonly TensorVariable[]): Variable[] {
    return [this.call(ev)];
  }

  override toString(): string {
    return `DimShuffle{${this.newOrder.join(',')}}`;
  }
}

/** `x` with its axes rearranged by `pattern` (axis numbers and 'x' for a new broadcastable axis). */
export function dimshuffle(x: TensorLike, pattern: readonly ShuffleEntry[]): TensorVariable {
  const v = asTensorVariable(x);
  if (pattern.length === v.ndim && pattern.every((a, i) => a === i)) return v;
  return new DimShuffle(v.ndim, pattern).call(v);
}

/** Axes permuted (reversed when `axes` is omitted or empty); negative axes count from the end. */
export function transpose(x: TensorLike, axes?: readonly number[]): TensorVariable {
  const v = asTensorVariable(x);
  const nd = v.ndim;
  if (!axes || axes.length === 0) return dimshuffle(v, [...Array(nd).keys()].reverse());
  const text = `[${axes.join(', ')}]`;
  if (axes.length !== nd) throw new RangeError(`transpose: ${v} has ${nd} axes but the permutation ${text} has ${axes.length}`);
  const order = axes.map((a) => {
    if (!Number.isInteger(a) || a < -nd || a >= nd) {
      throw new RangeError(`transpose: ${a} in ${text} is not an axis of ${v} (use ${-nd}..${nd - 1})`);
    }
    return a < 0 ? a + nd : a;
  });
  if (new Set(order).size !== nd) throw new RangeError(`transpose: ${text} repeats an axis; it must be a permutation of the ${nd} axes of ${v}`);
  return dimshuffle(v, order);
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(DimShuffle);
