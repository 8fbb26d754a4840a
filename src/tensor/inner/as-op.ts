// asOp (Theano's as_op): a JS function of ndarrays as an op. It runs on the calling thread (a
// closure cannot move to a worker). With `inferShape` (numeric: input shapes to output shapes)
// plans schedule it as a calling-thread task among the workers' tasks; without it, calls are
// planned in stages around it.
import { Apply } from '../../graph/apply.js';
import { gradNotImplemented } from '../../graph/gradient.js';
import { UnknownShapesError } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import type { TensorView } from '../../kernels/view.js';
import { asTensorOfDtype } from '../core/as-tensor.js';
import { shapeText, type NdArray } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { TensorType } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';

export interface AsOpSpec<OT extends readonly TensorType[] = readonly TensorType[]> {
  /** The type of each input. */
  readonly itypes: readonly TensorType[];
  /** The type of each output (one type: `call` returns one variable, else an array). */
  readonly otypes: OT;
  /** Output shapes from input shapes (numbers), so that calls can be planned ahead. */
  readonly inferShape?: (inputShapes: readonly (readonly number[])[]) => ReadonlyArray<readonly number[]>;
  readonly name?: string;
}

export type AsOpFunction = (...inputs: NdArray[]) => unknown;

const ids = new WeakMap<object, number>();
let nextId = 1;

/** What `call` returns for these output types: one variable for one output, else an array. */
export type AsOpResult<OT extends readonly TensorType[]> = OT extends readonly [TensorType]
  ? TensorVariable
  : number extends OT['length']
    ? TensorVariable | TensorVariable[]
    : TensorVariable[];

export class AsOp<OT extends readonly TensorType[] = readonly TensorType[]> extends TensorOp<AsOpResult<OT>> {
  static override readonly props = ['fnId', 'itypes', 'otypes'] as const;
  readonly fnId: number;
  readonly itypes: readonly TensorType[];
  readonly otypes: readonly TensorType[];
  readonly name: string;

  constructor(
    readonly spec: AsOpSpec<OT>,
    readonly fn: AsOpFunction,
  ) {
    super();
    if (typeof fn !== 'function') throw new TypeError('asOp: the second argument must be a function');
    for (const [what, list] of [['itypes', spec.itypes], ['otypes', spec.otypes]] as const) {
      if (!Array.isArray(list) || !list.every((t) => t instanceof TensorType)) {
        throw new TypeError(`asOp: ${what} must be an array of TensorType`);
      }
    }
    if (spec.otypes.length === 0) throw new TypeError('asOp: otypes must name at least one output');
    let id = ids.get(fn);
    if (id === undefined) ids.set(fn, (id = nextId++));
    this.fnId = id;
    this.itypes = spec.itypes;
    this.otypes = spec.otypes;
    this.name = spec.name ?? (fn.name || 'asOp');
  }

  override makeNode(...args: unknown[]): Apply {
    if (args.length !== this.itypes.length) {
      throw new TypeError(`${this}: expected ${this.itypes.length} input${this.itypes.length === 1 ? '' : 's'}, got ${args.length}`);
    }
    const inputs = args.map((a, i) => {
      const want = this.itypes[i]!;
      const v = asTensorOfDtype(a as TensorLike, want.dtype, `${this}: input ${i}`);
      if (want.equals(v.type) || want.convertVariable(v)) return v;
      throw new TypeError(`${this}: input ${i} (${v}) has type ${v.type}, expected ${want}`);
    });
    return new Apply(this, inputs, this.otypes.map((t) => t.makeVariable()));
  }

  override perform(_node: Apply, inputs: readonly NdArray[]): NdArray[] {
    const result = this.fn(...inputs);
    const list = this.otypes.length === 1 && !Array.isArray(result) ? [result] : result;
    if (!Array.isArray(list) || list.length !== this.otypes.length) {
      throw new TypeError(`${this}: the function returned ${Array.isArray(list) ? list.length : 1} values, expected ${this.otypes.length}`);
    }
    return list.map((value, j) => {
      const t = this.otypes[j]!;
      const filtered = t.filter(value, { what: `output ${j} of ${this}` });
      // What the function returns may be one of its inputs, or kept by it (or a view of either):
      // the op owns a copy.
      const owned = t.ownValue(filtered, value);
      return owned === filtered && inputs.some((x) => x.data.buffer === filtered.data.buffer) ? t.copyValue(filtered) : owned;
    });
  }

  /** From `inferShape`; without it the shapes are known only once the function has run. */
  override outputShapes(_node: Apply, inputs: readonly TensorView[]): number[][] {
    const infer = this.spec.inferShape;
    if (!infer) throw new UnknownShapesError(`${this} has no inferShape: its output shapes are known only once it has run`);
    const shapes = infer(inputs.map((x) => [...x.shape]));
    if (shapes.length !== this.otypes.length) {
      throw new TypeError(`${this}: inferShape gave ${shapes.length} shapes for ${this.otypes.length} outputs`);
    }
    return shapes.map((s, j) => {
      const t = this.otypes[j]!;
      if (s.length !== t.ndim || t.shape.some((d, a) => d !== null && d !== s[a])) {
        throw new TypeError(`${this}: inferShape gave shape ${shapeText([...s])} for output ${j}, whose type is ${t}`);
      }
      return [...s];
    });
  }

  override grad(inputs: readonly TensorVariable[]): Variable[] {
    return inputs.map((_, i) => gradNotImplemented(this, i, 'asOp functions have no gradient'));
  }

  override toString(): string {
    return `AsOp{${this.name}}`;
  }
}

/** Wraps a JS function of ndarrays as an op (`asOp(spec, fn).call(x, y)`). */
export function asOp<const OT extends readonly TensorType[]>(spec: AsOpSpec<OT>, fn: AsOpFunction): AsOp<OT> {
  return new AsOp<OT>(spec, fn);
}
