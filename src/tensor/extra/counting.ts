// Counting (NumPy's bincount and unique): their output lengths depend on the values, so they run
// their perform when the call reaches them (plans stop there and continue once the length is
// known, as for `until`). bincount's gradient with respect to the weights is the output gradient
// at each value's bin.
import { isFloatDtype, isIntDtype } from '../../kernels/dtype.js';
import { Apply } from '../../graph/apply.js';
import { disconnected } from '../../graph/gradient.js';
import type { Variable } from '../../graph/variable.js';
import { registerOpCodec } from '../../graph/op-codecs.js';
import { propKinds } from '../../graph/prop-kinds.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { flatValues, makeNdArray, type NdArray } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { zerosLike } from '../shape/alloc.js';
import { get } from '../shape/indexing.js';
import { flatten } from '../shape/reshape.js';

/** How many times each value 0, 1, 2, ... occurs in x (or the sum of its weights there). */
export class Bincount extends TensorOp {
  static override readonly props = ['minlength', 'weighted'] as const;
  static override readonly propKinds = { minlength: propKinds.int(0, 2 ** 31 - 1), weighted: propKinds.boolean() };

  constructor(
    readonly minlength: number,
    readonly weighted: boolean,
  ) {
    super();
    if (!Number.isInteger(minlength) || minlength < 0) throw new RangeError(`bincount: minlength must be a non-negative integer, got ${minlength}`);
  }

  override makeNode(x: unknown, weights?: unknown): Apply {
    const v = asTensorVariable(x as TensorLike);
    if (v.ndim !== 1 || !isIntDtype(v.dtype)) throw new TypeError(`bincount: x must be a vector of integers, got ${v} (${v.type})`);
    if (!this.weighted) return new Apply(this, [v], [new TensorType('int32', [null]).makeVariable()]);
    const w = asTensorVariable(weights as TensorLike);
    if (w.ndim !== 1) throw new TypeError(`bincount: the weights must be a vector, got ${w} (${w.type})`);
    return new Apply(this, [v, w], [new TensorType(isFloatDtype(w.dtype) ? w.dtype : 'float64', [null]).makeVariable()]);
  }

  override perform(node: Apply, [x, w]: readonly unknown[]): unknown[] {
    const xs = flatValues(x as NdArray);
    const ws = w === undefined ? undefined : flatValues(w as NdArray);
    if (ws && ws.length !== xs.length) throw new RangeError(`bincount: ${ws.length} weights for ${xs.length} values`);
    let length = this.minlength;
    xs.forEach((v, i) => {
      if (v < 0) throw new RangeError(`bincount: value ${v} at position ${i} is negative; bincount counts non-negative integers`);
      length = Math.max(length, v + 1);
    });
    const dtype = (node.outputs[0]!.type as TensorType).dtype;
    const out = makeNdArray(new (dtype === 'int32' ? Int32Array : dtype === 'float32' ? Float32Array : Float64Array)(length), [length]);
    xs.forEach((v, i) => {
      out.data[v] = out.data[v]! + (ws ? ws[i]! : 1);
    });
    return [out];
  }

  override grad([x, w]: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    if (!w) return [zerosLike(x!)];
    return [zerosLike(x!), get(gz!, x!)];
  }

  override connectionPattern(node: Apply): boolean[][] {
    return node.inputs.map((_, i) => [i === 1]);
  }

  override toString(): string {
    return `Bincount{minlength=${this.minlength}${this.weighted ? ', weighted' : ''}}`;
  }
}

/** x's distinct values, sorted (NaN last, once), NumPy's unique of the flattened array. */
export class Unique extends TensorOp {
  override makeNode(x: unknown): Apply {
    const v = asTensorVariable(x as TensorLike);
    return new Apply(this, [v], [new TensorType(v.dtype, [null]).makeVariable()]);
  }

  override perform(node: Apply, [x]: readonly unknown[]): unknown[] {
    const values = Array.from(flatValues(x as NdArray));
    const sorted = [...new Set(values.filter((v) => v === v))].sort((a, b) => a - b);
    if (values.some((v) => v !== v)) sorted.push(NaN);
    const Storage = (x as NdArray).data.constructor as new (n: number) => NdArray['data'];
    const out = new Storage(sorted.length);
    sorted.forEach((v, i) => (out[i] = v));
    return [makeNdArray(out, [sorted.length])];
  }

  override grad(): Variable[] {
    // Which input element a distinct value came from is not an output: no gradient flows.
    return [disconnected()];
  }

  override toString(): string {
    return 'Unique';
  }
}

/** NumPy's bincount: counts (int32) or summed weights of each value 0 .. max(x, minlength - 1). */
export function bincount(x: TensorLike, options: { readonly weights?: TensorLike; readonly minlength?: number } = {}): TensorVariable {
  const op = new Bincount(options.minlength ?? 0, options.weights !== undefined);
  return (options.weights === undefined ? op.call(x) : op.call(x, options.weights)) as TensorVariable;
}

/** NumPy's unique: the sorted distinct values of x (flattened). */
export function unique(x: TensorLike): TensorVariable {
  const v = asTensorVariable(x);
  return new Unique().call(v.ndim === 1 ? v : flatten(v)) as TensorVariable;
}

// Documents write these ops by their props (graph/prop-codec.ts).
registerOpCodec(Bincount);
registerOpCodec(Unique);
