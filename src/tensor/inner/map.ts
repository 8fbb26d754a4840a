// Map: an inner graph evaluated once per index i = 0 .. n-1, its results stacked along a new
// first axis (a scan without recurrence). The inner graph's inputs are the index and the
// variables it reads from outside (given to the node as inputs); each iteration's result must
// have the same shape. jacobian and hessian use it for expressions of any length.
import { Apply } from '../../graph/apply.js';
import { cloneReplace } from '../../graph/clone.js';
import { FunctionGraph } from '../../graph/fgraph.js';
import { gradNotImplemented } from '../../graph/gradient.js';
import type { SymbolicShape } from '../../graph/op.js';
import { ReferenceExecutor } from '../../graph/reference-executor.js';
import { graphInputs } from '../../graph/traversal.js';
import { isConstant, type Variable } from '../../graph/variable.js';
import { STORAGE } from '../../kernels/dtype.js';
import { copyView } from '../../kernels/copy.js';
import { sizeOf } from '../../kernels/view.js';
import { makeNdArray, shapeText, type NdArray } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { ShapeFeature } from '../rewriting/shape-feature.js';
import { asIntScalar, constantScalar } from '../shape/shape.js';
import { TensorType } from '../core/type.js';
import type { TensorVariable } from '../core/variable.js';

let nextMapId = 0;

export class MapOp extends TensorOp<TensorVariable[]> {
  static override readonly props = ['id'] as const;
  /** Each Map is its own op: two maps are never merged. */
  readonly id = nextMapId++;
  readonly inner: FunctionGraph;
  #executor: ReferenceExecutor | undefined;

  /**
   * @param index the int32 scalar that takes the values 0 .. n-1 inside the inner graph
   * @param outputs what one iteration computes
   * @param captured the outside variables the inner graph reads (given to the node as inputs)
   */
  constructor(index: TensorVariable, outputs: readonly TensorVariable[], captured: readonly TensorVariable[]) {
    super();
    this.inner = new FunctionGraph([index, ...captured], outputs);
  }

  /** Inputs: n, then one value per captured variable, in order. */
  override makeNode(n: unknown, ...captured: unknown[]): Apply {
    const count = asIntScalar(n as number | TensorVariable, `${this}: the number of iterations`);
    const expected = this.inner.inputs.slice(1);
    if (captured.length !== expected.length) {
      throw new TypeError(`${this}: expected ${expected.length} captured values, got ${captured.length}`);
    }
    const values = captured.map((c, i) => {
      const v = c as TensorVariable;
      if (!expected[i]!.type.equals(v.type) && !expected[i]!.type.convertVariable(v)) {
        throw new TypeError(`${this}: captured value ${i} has type ${v.type}, the inner graph expects ${expected[i]!.type}`);
      }
      return v;
    });
    const length = constantScalar(count) ?? null;
    const outputs = this.inner.outputs.map((o) => {
      const t = o.type as TensorType;
      return new TensorType(t.dtype, [length, ...t.shape]).makeVariable();
    });
    return new Apply(this, [count, ...values], outputs);
  }

  override perform(node: Apply, [n, ...captured]: readonly NdArray[]): NdArray[] {
    const count = n!.data[n!.offset]!;
    if (count < 0) throw new RangeError(`${this}: the number of iterations is ${count}`);
    const executor = (this.#executor ??= new ReferenceExecutor(this.inner));
    const results: NdArray[][] = [];
    for (let i = 0; i < count; i++) {
      results.push(executor.run([makeNdArray(Int32Array.of(i), []), ...captured]) as NdArray[]);
    }
    return node.outputs.map((o, k) => {
      const dtype = (o.type as TensorType).dtype;
      const first = results[0]?.[k];
      const inner = first ? first.shape : (this.inner.outputs[k]!.type as TensorType).shape.map((d) => d ?? 0);
      const shape = [count, ...inner];
      const out = makeNdArray(new STORAGE[dtype](sizeOf(shape)), shape);
      const step = sizeOf(inner);
      results.forEach((r, i) => {
        const v = r[k]!;
        if (v.shape.length !== inner.length || v.shape.some((d, a) => d !== inner[a])) {
          throw new RangeError(`${this}: iteration ${i} gave shape ${shapeText(v.shape)} for output ${k}, iteration 0 gave ${shapeText(inner)}`);
        }
        copyView(v, { data: out.data, offset: i * step, shape: inner, stride: out.stride.slice(1) });
      });
      return out;
    });
  }

  /** [n, ...the inner output's shape], when that shape does not depend on the index. */
  override inferShape(node: Apply, [ns]: readonly SymbolicShape[]): SymbolicShape[] {
    void ns;
    const feature = new ShapeFeature();
    const index = this.inner.inputs[0]!;
    const outer = new Map<Variable, Variable>(this.inner.inputs.slice(1).map((v, i) => [v, node.inputs[i + 1]!]));
    return this.inner.outputs.map((o) => {
      const dims = feature.shapeOf(o);
      if (graphInputs(dims).includes(index)) throw new Error(`${this}: the shape of output ${o} depends on the index`);
      return [node.inputs[0]!, ...cloneReplace(dims, [...outer])];
    });
  }

  override grad(inputs: readonly TensorVariable[]): Variable[] {
    return inputs.map((_, i) => gradNotImplemented(this, i, 'gradients through a Map (third derivatives via jacobian) are not implemented'));
  }

  override toString(): string {
    return `Map{${this.id}}`;
  }
}

/**
 * Evaluates `body(i)` for i = 0 .. n-1 and stacks the results (one array per output of body).
 * Variables that body reads from outside are captured automatically.
 */
export function map(n: number | TensorVariable, body: (i: TensorVariable) => TensorVariable | TensorVariable[]): TensorVariable[] {
  const index = new TensorType('int32', []).makeVariable('i');
  const result = body(index);
  const outputs = Array.isArray(result) ? result : [result];
  const captured = graphInputs(outputs).filter((v) => v !== index && !isConstant(v)) as TensorVariable[];
  return [...new MapOp(index, outputs, captured).makeNode(n, ...captured).outputs] as TensorVariable[];
}
