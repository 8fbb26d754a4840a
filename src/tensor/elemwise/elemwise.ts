// Elemwise: a ScalarOp applied element by element with NumPy broadcasting. Inputs of lower
// rank get leading broadcastable axes; an axis broadcasts only if its static length is 1
// (as in PyTensor: runtime broadcasting of an unknown length would make gradients wrong).
import { type Dtype, isDiscreteDtype } from '../../kernels/dtype.js';
import type { ElemwiseSource } from '../../kernels/elemwise.js';
import { getKernel } from '../../kernels/registry.js';
import type { TensorView } from '../../kernels/view.js';
import { Apply } from '../../graph/apply.js';
import { gradNotImplemented, isDisconnected, isNullGrad } from '../../graph/gradient.js';
import type { IndexMap, KernelCall, SymbolicShape } from '../../graph/op.js';
import type { Variable } from '../../graph/variable.js';
import { broadcastLike, zerosLike } from '../shape/alloc.js';
import { asTensorArgs } from '../core/as-tensor.js';
import { DimShuffle, dimshuffle } from '../shape/dimshuffle.js';
import { add, cast } from './math.js';
import { empty, shapeText, type NdArray } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { sum } from './reduce.js';
import type { ScalarOp } from '../scalar/scalar-op.js';
import { intConstant } from '../shape/shape.js';
import { TensorType, type StaticShape } from '../core/type.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';

export class ShapeMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShapeMismatchError';
  }
}

/**
 * The static shape of broadcasting these static shapes (all of one rank, `inputs` naming them
 * in errors); throws when two known lengths other than 1 differ.
 */
export function broadcastStaticShapes(shapes: readonly StaticShape[], where: string, inputs?: readonly Variable[]): (number | null)[] {
  const nd = shapes[0]?.length ?? 0;
  const name = (i: number): string => (inputs?.[i] ? `input ${i} (${inputs[i]})` : `input ${i}`);
  const out: (number | null)[] = [];
  for (let a = 0; a < nd; a++) {
    let known: number | null = null;
    let from = -1;
    let allOne = true;
    shapes.forEach((s, i) => {
      const d = s[a]!;
      if (d === 1) return;
      allOne = false;
      if (d === null) return;
      if (known !== null && known !== d) {
        throw new ShapeMismatchError(
          `${where}: ${name(from)} has static length ${known} on axis ${a} and ${name(i)} has ${d}; ` +
            'they cannot be broadcast together (lengths must match or be 1)',
        );
      }
      known = d;
      from = i;
    });
    out.push(allOne ? 1 : known);
  }
  return out;
}

export class Elemwise extends TensorOp {
  static override readonly props = ['scalarOp', 'inplacePattern'] as const;
  override readonly destroyMap: IndexMap;
  readonly #sources = new Map<string, ElemwiseSource>();

  constructor(
    readonly scalarOp: ScalarOp,
    /** output index -> the input it overwrites (set by the inplace rewrites) */
    readonly inplacePattern: Readonly<Record<number, number>> = {},
  ) {
    super();
    this.destroyMap = Object.fromEntries(Object.entries(inplacePattern).map(([o, i]) => [o, [i]]));
  }

  /** This op writing output 0 into input `input` (or, with undefined, into a new array). */
  withInplace(input: number | undefined): Elemwise {
    return new Elemwise(this.scalarOp, input === undefined ? {} : { 0: input });
  }

  override makeNode(...args: unknown[]): Apply {
    const spec = this.scalarOp.spec;
    const inputs = asTensorArgs(args as TensorLike[], String(this));
    if (spec.nin === 'variadic' ? inputs.length < 1 : inputs.length !== spec.nin) {
      const want = spec.nin === 'variadic' ? 'at least 1 input' : `${spec.nin} input${spec.nin === 1 ? '' : 's'}`;
      throw new TypeError(`${this}: expected ${want}, got ${inputs.length}`);
    }
    const problem = spec.checkInputs?.(inputs.map((x) => x.dtype));
    if (problem) throw new TypeError(`${this}: ${problem}`);
    const nd = Math.max(...inputs.map((x) => x.ndim));
    const padded = inputs.map((x) =>
      x.ndim === nd ? x : dimshuffle(x, [...Array<'x'>(nd - x.ndim).fill('x'), ...[...Array(x.ndim).keys()]]),
    );
    const shape = broadcastStaticShapes(padded.map((x) => x.type.shape), String(this), inputs);
    const dtype = spec.outputDtype(padded.map((x) => x.dtype));
    // A user's WebAssembly form that is not an exact program is refused here, where the graph is built.
    if (typeof spec.wasm === 'function') this.scalarOp.programSteps(padded.map((x) => x.dtype), dtype);
    return new Apply(this, padded, [new TensorType(dtype, shape).makeVariable()]);
  }

  /** The kernel source for these input dtypes (cached). */
  source(node: Apply): ElemwiseSource {
    const inDtypes = node.inputs.map((v) => (v.type as TensorType).dtype);
    const outDtype = (node.outputs[0]!.type as TensorType).dtype;
    const key = `${inDtypes.join(',')}>${outDtype}`;
    let src = this.#sources.get(key);
    if (!src) {
      const args = inDtypes.map((_, k) => `x${k}`);
      const program = this.scalarOp.program(inDtypes, outDtype);
      src = { nin: args.length, body: '', results: [this.scalarOp.code(args, { inputs: inDtypes, output: outDtype })], ...(program ? { program } : {}) };
      this.#sources.set(key, src);
    }
    return src;
  }

  /** The output shape for these input shapes, with NumPy broadcasting restricted to static 1s. */
  outputShape(node: Apply, shapes: readonly (readonly number[])[]): number[] {
    const nd = shapes[0]?.length ?? 0;
    const out: number[] = [];
    for (let a = 0; a < nd; a++) {
      let len = 1;
      let from = -1;
      shapes.forEach((s, i) => {
        const staticOne = (node.inputs[i]!.type as TensorType).shape[a] === 1;
        if (staticOne) return;
        if (from >= 0 && s[a] !== len) {
          const [j, k] = [from, i];
          if (s[a] === 1 || len === 1) {
            const [one, other] = s[a] === 1 ? [k, j] : [j, k];
            throw new ShapeMismatchError(
              `${this}: input ${one} (${inputLabel(node.inputs[one]!)}) has length 1 on axis ${a} where input ${other} has ` +
                `${shapes[other]![a]}, but its type ${node.inputs[one]!.type} does not mark that axis broadcastable; ` +
                'give it a static length of 1 (e.g. pt.tensor({ shape: [1, null] }) or x.dimshuffle)',
            );
          }
          throw new ShapeMismatchError(
            `${this}: input ${j} has shape ${shapeText(shapes[j]!)} and input ${k} has shape ${shapeText(s)}: ` +
              `they differ on axis ${a} (${len} vs ${s[a]})`,
          );
        }
        if (from < 0) {
          from = i;
          len = s[a]!;
        }
      });
      out.push(len);
    }
    return out;
  }

  override kernel(node: Apply): KernelCall {
    const source = this.source(node);
    // With a WebAssembly program, the output stays in the pool's memory, where the program runs.
    return { name: 'elemwise', params: { source }, chunking: { by: 'elements' }, ...(source.program ? { outputsInArena: true } : {}) };
  }

  override outputShapes(node: Apply, inputs: readonly TensorView[]): number[][] {
    return [this.outputShape(node, inputs.map((x) => x.shape))];
  }

  override perform(node: Apply, inputs: readonly NdArray[]): NdArray[] {
    const shape = this.outputShape(node, inputs.map((x) => x.shape));
    const out = this.#destination(node, inputs, shape) ?? empty((node.outputs[0]!.type as TensorType).dtype, shape);
    const call = this.kernel(node);
    getKernel(call.name)(inputs, [out], call.params);
    return [out];
  }

  /**
   * The input to overwrite when the op is inplace: it must have the output's dtype and shape and
   * no axis of stride 0 (where one element would be written for many). Otherwise the output is a
   * new array, which an inplace op may always return.
   */
  #destination(node: Apply, inputs: readonly NdArray[], shape: readonly number[]): NdArray | undefined {
    const i = this.inplacePattern[0];
    if (i === undefined) return undefined;
    const x = inputs[i]!;
    const sameDtype = (node.inputs[i]!.type as TensorType).dtype === (node.outputs[0]!.type as TensorType).dtype;
    const fits = x.shape.length === shape.length && x.shape.every((d, a) => d === shape[a] && (x.stride[a] !== 0 || d <= 1));
    return sameDtype && fits ? x : undefined;
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    const outType = node.outputs[0]!.type as TensorType;
    const dims = outType.shape.map((d, a) => {
      if (d !== null) return intConstant(d);
      const i = node.inputs.findIndex((x) => (x.type as TensorType).shape[a] !== 1);
      return shapes[i]![a]!;
    });
    return [dims];
  }

  /** One gradient term per input (of the output's broadcast shape), before reduction to the input's shape. */
  #terms(inputs: readonly TensorVariable[], output: TensorVariable, gz: TensorVariable): Variable[] {
    const grad = this.scalarOp.spec.grad;
    if (!grad) return inputs.map((_, i) => gradNotImplemented(this, i));
    return grad(inputs, output, gz);
  }

  override Lop(inputs: readonly TensorVariable[], outputs: readonly TensorVariable[], [gz]: readonly TensorVariable[]): Variable[] {
    const out = outputs[0]!;
    if (isDiscreteDtype(out.dtype)) return inputs.map((x) => zerosLike(x, gradDtype(x)));
    return this.#terms(inputs, out, gz!).map((term, i) => {
      if (isDisconnected(term) || isNullGrad(term)) return term;
      return reduceToLike(term as TensorVariable, inputs[i]!);
    });
  }

  override rop(inputs: readonly TensorVariable[], evalPoints: readonly TensorVariable[]): Variable[] {
    const out = this.call(...inputs) as TensorVariable;
    if (isDiscreteDtype(out.dtype)) return [zerosLike(out)];
    const parts: TensorVariable[] = [];
    inputs.forEach((x, i) => {
      if (isDiscreteDtype(x.dtype)) return;
      const term = this.#terms(inputs, out, evalPoints[i]!)[i]!;
      if (isNullGrad(term)) throw new Error(`Rop: ${this} has no derivative with respect to input ${i}: ${term.type.why}`);
      if (!isDisconnected(term)) parts.push(term as TensorVariable);
    });
    if (parts.length === 0) return [zerosLike(out)];
    const total = parts.length === 1 ? parts[0]! : add(...parts);
    return [broadcastLike(cast(total, out.dtype), out)];
  }

  override toString(): string {
    const inplace = Object.keys(this.inplacePattern).length > 0 ? ',inplace' : '';
    return `Elemwise{${this.scalarOp}${inplace}}`;
  }
}

/** How errors name an input: the variable, or for one padded with leading axes, what it pads. */
function inputLabel(v: Variable): string {
  const node = v.owner;
  if (node && node.op instanceof DimShuffle) {
    const order = node.op.newOrder;
    const added = order.length - node.op.inputNdim;
    if (added > 0 && order.every((a, k) => (k < added ? a === 'x' : a === k - added))) {
      return `${node.inputs[0]}, padded to ${order.length} axes`;
    }
  }
  return String(v);
}

function gradDtype(x: TensorVariable): Dtype | undefined {
  return isDiscreteDtype(x.dtype) ? undefined : x.dtype;
}

/**
 * A gradient term of the output's shape reduced to `input`'s shape: summed over the axes the
 * input was broadcast along, and broadcast where the term itself is smaller than the input.
 */
export function reduceToLike(term: TensorVariable, input: TensorVariable): TensorVariable {
  const axes: number[] = [];
  input.type.shape.forEach((d, a) => {
    if (d === 1 && term.type.shape[a] !== 1) axes.push(a);
  });
  let g = axes.length > 0 ? sum(term, { axis: axes, keepdims: true }) : term;
  if (g.type.shape.some((d, a) => d === 1 && input.type.shape[a] !== 1)) g = broadcastLike(g, input);
  return g;
}

const instances = new Map<ScalarOp, Elemwise>();

/** Applies a ScalarOp element-wise (one Elemwise op per ScalarOp, made on first use). */
export function elemwise(op: ScalarOp, ...args: TensorLike[]): TensorVariable {
  let e = instances.get(op);
  if (!e) {
    e = new Elemwise(op);
    instances.set(op, e);
  }
  return e.call(...args);
}
