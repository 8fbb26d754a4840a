// ScalarOp: what one element of an Elemwise computes. It is a description, not a graph op:
// its dtype rule, its JS code for one element (which the element-wise kernels compile), its
// gradient written with tensor ops, and the algebraic facts rewrites use.
import { isFloatDtype, type Dtype } from '../../kernels/dtype.js';
import type { Variable } from '../../graph/variable.js';
import { upcast, upgradeToFloat } from '../dtype.js';
import type { TensorVariable } from '../variable.js';

export type DtypeRule = (inputs: readonly Dtype[]) => Dtype;

export interface CodeContext {
  readonly inputs: readonly Dtype[];
  readonly output: Dtype;
}

/**
 * The gradient of one element: given the inputs, the output and the output gradient `gz`
 * (tensors of the node's broadcast shape), one term per input. Terms must be linear in gz:
 * Elemwise also derives its Rop from them.
 */
export type ScalarGrad = (
  inputs: readonly TensorVariable[],
  output: TensorVariable,
  gz: TensorVariable,
) => Array<TensorVariable | Variable>;

export interface ScalarOpSpec {
  readonly name: string;
  /** Number of inputs, or 'variadic' for two or more (add, mul). */
  readonly nin: number | 'variadic';
  readonly outputDtype: DtypeRule;
  /** Which input dtypes are allowed; returns an error text for a bad one. */
  readonly checkInputs?: (inputs: readonly Dtype[]) => string | undefined;
  /** JS expression for one element, given the operand expressions. */
  readonly code: (args: readonly string[], ctx: CodeContext) => string;
  readonly grad?: ScalarGrad;
  readonly commutative?: boolean;
  readonly associative?: boolean;
}

export class ScalarOp {
  constructor(readonly spec: ScalarOpSpec) {}

  get name(): string {
    return this.spec.name;
  }

  get key(): string {
    return `scalar.${this.spec.name}`;
  }

  toString(): string {
    return this.spec.name;
  }
}

// ---------------------------------------------------------------------------------------------
// Dtype rules

/** NumPy promotion, but arithmetic on bools gives int8 (True + True is 2, not True). */
export const upcastNoBool: DtypeRule = (ins) => {
  const d = upcast(...ins);
  return d === 'bool' ? 'int8' : d;
};

/** The float dtype the inputs compute in (ints go to float32 or float64 by width). */
export const toFloat: DtypeRule = (ins) => upgradeToFloat(upcast(...ins));

export const toBool: DtypeRule = () => 'bool';

/** Bitwise on integers, logical on bools; floats are refused. */
export const bitwise: DtypeRule = (ins) => upcast(...ins);

export function refuseFloats(name: string): (ins: readonly Dtype[]) => string | undefined {
  return (ins) => {
    const i = ins.findIndex(isFloatDtype);
    return i < 0 ? undefined : `input ${i} has dtype ${ins[i]}; ${name} takes bool or integer inputs`;
  };
}

/** int32 and uint32 products need Math.imul to wrap exactly as NumPy does. */
export function isWide(d: Dtype): boolean {
  return d === 'int32' || d === 'uint32';
}
