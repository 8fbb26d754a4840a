// Reverse- and forward-mode differentiation over any graph (Theano's gradient.py), written
// against a small algebra that the value layer supplies (zeros, ones, sums, casts), so that the
// graph layer stays ignorant of tensors. Disconnected and undefined gradients are typed values.
import { Apply } from './apply.js';
import { connectionPatternOf as connectionPattern } from './connection-pattern.js';
import { Op } from './op.js';
import { ioToposort } from './traversal.js';
import { Type } from './type.js';
import { Constant, Variable } from './variable.js';

// ---------------------------------------------------------------------------------------------
// Types of the two special gradients

/** The gradient of something that does not depend on the variable: no term at all. */
export class DisconnectedType extends Type<never> {
  readonly key = 'DisconnectedType';
  filter(): never {
    throw new TypeError('DisconnectedType has no values');
  }
  valuesEq(): boolean {
    return false;
  }
  copyValue(v: never): never {
    return v;
  }
  valueSignature(): string {
    return 'disconnected';
  }
  makeVariable(name?: string): Variable {
    return new Variable(this, name);
  }
  makeConstant(): Constant {
    throw new TypeError('DisconnectedType has no constants');
  }
}

/** An undefined gradient (a non-differentiable op); `why` says what and where. */
export class NullType extends Type<never> {
  constructor(readonly why: string) {
    super();
  }
  get key(): string {
    return `NullType(${JSON.stringify(this.why)})`;
  }
  filter(): never {
    throw new TypeError(`NullType has no values (${this.why})`);
  }
  valuesEq(): boolean {
    return false;
  }
  copyValue(v: never): never {
    return v;
  }
  valueSignature(): string {
    return 'null';
  }
  makeVariable(name?: string): Variable {
    return new Variable(this, name);
  }
  makeConstant(): Constant {
    throw new TypeError('NullType has no constants');
  }
}

const DISCONNECTED = new DisconnectedType();

/** The gradient of an input that the outputs do not depend on. */
export function disconnected(): Variable {
  return DISCONNECTED.makeVariable();
}

/** A gradient that is not defined mathematically, e.g. of argmax with respect to its input. */
export function gradUndefined(op: Op, inputIndex: number, why: string): Variable {
  return new NullType(`the gradient of ${op} with respect to input ${inputIndex} is undefined: ${why}`).makeVariable();
}

/** A gradient that weft does not implement (yet). */
export function gradNotImplemented(op: Op, inputIndex: number, why = ''): Variable {
  return new NullType(
    `the gradient of ${op} with respect to input ${inputIndex} is not implemented${why ? `: ${why}` : ''}`,
  ).makeVariable();
}

export function isDisconnected(v: Variable): boolean {
  return v.type instanceof DisconnectedType;
}

export function isNullGrad(v: Variable): v is Variable<NullType> {
  return v.type instanceof NullType;
}

// ---------------------------------------------------------------------------------------------
// What the value layer provides

export interface GradAlgebra {
  /** The gradient of a cost with respect to itself. */
  onesLike(v: Variable): Variable;
  /** A gradient of zeros for `v` (a float of v's shape). */
  zerosLike(v: Variable): Variable;
  /** The sum of several gradient terms of one variable. */
  add(terms: readonly Variable[]): Variable;
  /** Values of this variable are discrete: gradients with respect to it are zero. */
  isDiscrete(v: Variable): boolean;
  /** `g` brought to the type of `like` (the dtype of a float variable's gradient is its own). */
  castLike(g: Variable, like: Variable): Variable;
}

export class DisconnectedInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DisconnectedInputError';
  }
}

export class NullGradientError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NullGradientError';
  }
}

export interface GradOptions {
  /** Variables treated as constants: no gradient flows through them. */
  readonly considerConstant?: readonly Variable[];
  /** Gradients already known for some variables (their cost is implicit). */
  readonly knownGrads?: ReadonlyMap<Variable, Variable> | ReadonlyArray<readonly [Variable, Variable]>;
  /** What to do when a `wrt` variable does not influence the cost (default 'raise'). */
  readonly disconnectedInputs?: 'raise' | 'warn' | 'ignore';
  /** What to return for such a variable (default 'zero'). */
  readonly returnDisconnected?: 'zero' | 'null' | 'disconnected';
  /**
   * What to do when the gradient with respect to a `wrt` variable is undefined (a NullType
   * gradient): throw a NullGradientError (default 'raise'), or return the NullType variable.
   */
  readonly nullGradients?: 'raise' | 'return';
}

function opGrads(node: Apply, outputGrads: Variable[]): Variable[] {
  const op = node.op;
  const grads = op.Lop
    ? op.Lop(node.inputs, node.outputs, outputGrads)
    : op.grad
      ? op.grad(node.inputs, outputGrads)
      : node.inputs.map((_, i) => gradNotImplemented(op, i, 'the op defines neither grad nor Lop'));
  if (grads.length !== node.inputs.length) {
    throw new Error(`${op}.grad returned ${grads.length} gradients for ${node.inputs.length} inputs`);
  }
  return grads;
}

/**
 * The gradient terms that a node passes to its inputs, given its outputs' gradients (undefined
 * where an output does not reach the cost). As in Theano, an undefined (NullType) output gradient
 * becomes the gradient of every input connected to that output, unless the op reports that input
 * disconnected; the op computes the others, with zeros for the undefined ones.
 */
function inputGrads(algebra: GradAlgebra, node: Apply, outGrads: ReadonlyArray<Variable | undefined>, pattern: readonly (readonly boolean[])[]): Variable[] {
  const isNull = outGrads.map((g) => g !== undefined && isNullGrad(g));
  const nullFor = (i: number): Variable | undefined => {
    const j = isNull.findIndex((n, k) => n && pattern[i]![k]);
    return j < 0 ? undefined : outGrads[j];
  };
  if (outGrads.every((g, j) => g === undefined || isNull[j])) return node.inputs.map((_, i) => nullFor(i) ?? disconnected());
  const grads = opGrads(node, outGrads.map((g, j) => (g === undefined || isNull[j] ? algebra.zerosLike(node.outputs[j]!) : g)));
  return grads.map((g, i) => (isDisconnected(g) ? g : (nullFor(i) ?? g)));
}

/**
 * The gradients of `cost` (or of the implicit cost of `knownGrads`) with respect to `wrt`.
 * Returns one entry per `wrt` variable: a variable, or null for a disconnected input when
 * `returnDisconnected` is 'null'.
 */
export function gradWith(
  algebra: GradAlgebra,
  cost: Variable | null,
  wrt: readonly Variable[],
  options: GradOptions = {},
): Array<Variable | null> {
  const known = new Map<Variable, Variable>(
    options.knownGrads instanceof Map ? options.knownGrads : ((options.knownGrads ?? []) as Iterable<[Variable, Variable]>),
  );
  if (cost !== null) known.set(cost, algebra.onesLike(cost));
  if (known.size === 0) throw new Error('grad: give a cost or knownGrads');
  const constants = new Set(options.considerConstant ?? []);
  const wrtSet = new Set(wrt);

  // 1. Which variables depend on some wrt variable through differentiable connections.
  const nodes = ioToposort([], known.keys());
  const depends = new Set<Variable>();
  for (const v of wrt) if (!constants.has(v)) depends.add(v);
  for (const node of nodes) {
    const pattern = connectionPattern(node);
    node.outputs.forEach((out, j) => {
      if (wrtSet.has(out) || constants.has(out)) return;
      if (node.inputs.some((inp, i) => depends.has(inp) && pattern[i]![j])) depends.add(out);
    });
  }

  // 2. Walk back from the known gradients, summing each variable's terms once all are in.
  const terms = new Map<Variable, Variable[]>();
  for (const [v, g] of known) {
    if (g.type instanceof DisconnectedType) continue;
    terms.set(v, [g]);
  }
  const total = (v: Variable): Variable | undefined => {
    // A variable declared constant passes no gradient on, even the cost or a knownGrads key.
    if (constants.has(v)) return undefined;
    const t = terms.get(v);
    if (!t || t.length === 0) return undefined;
    const nulls = t.filter(isNullGrad);
    if (nulls.length > 0) return nulls[0];
    const g = t.length === 1 ? t[0]! : algebra.add(t);
    const cast = algebra.isDiscrete(v) ? g : algebra.castLike(g, v);
    terms.set(v, [cast]);
    return cast;
  };
  // Inputs of nodes whose op reported their gradient disconnected although its pattern connects
  // them to an output with a gradient (an OpFromGraph override may say so): no path through them.
  const cut = new Map<Apply, Set<number>>();
  for (let k = nodes.length - 1; k >= 0; k--) {
    const node = nodes[k]!;
    if (!node.inputs.some((inp) => depends.has(inp))) continue;
    const outGrads = node.outputs.map((o) => total(o));
    if (outGrads.every((g) => g === undefined)) continue;
    const pattern = connectionPattern(node);
    const inGrads = inputGrads(algebra, node, outGrads, pattern);
    node.inputs.forEach((inp, i) => {
      if (!depends.has(inp)) return;
      const reachesCost = node.outputs.some((_, j) => pattern[i]![j] && outGrads[j] !== undefined);
      if (!reachesCost) return;
      // Discrete values have a zero gradient, not an absent one (step 3 gives the zeros).
      if (algebra.isDiscrete(inp)) return;
      const g = inGrads[i]!;
      if (isDisconnected(g)) {
        cut.set(node, (cut.get(node) ?? new Set()).add(i));
        return;
      }
      const list = terms.get(inp) ?? [];
      list.push(g);
      terms.set(inp, list);
    });
  }

  // Does a known-gradient variable depend on `v` at all (perhaps only through discrete values,
  // whose gradient is zero rather than absent), other than through inputs an op cut off?
  const reachesCost = (v: Variable): boolean => {
    const reached = new Set<Variable>([v]);
    for (const node of nodes) {
      const pattern = connectionPattern(node);
      const cutHere = cut.get(node);
      node.outputs.forEach((out, j) => {
        const connected = node.inputs.some((inp, i) => reached.has(inp) && pattern[i]![j] && !cutHere?.has(i));
        if (connected && !constants.has(out)) reached.add(out);
      });
    }
    return [...known.keys()].some((k) => reached.has(k) && !constants.has(k));
  };

  // 3. One answer per wrt variable.
  const costName = cost?.name;
  return wrt.map((v) => {
    const g = total(v);
    if (g !== undefined && isNullGrad(g)) {
      if (options.nullGradients === 'return') return g;
      throw new NullGradientError(`grad: the gradient with respect to ${v} is needed but ${g.type.why}`);
    }
    if (g === undefined && !algebra.isDiscrete(v) && !constants.has(v) && reachesCost(v)) {
      // Connected, but only through discrete values (comparisons, casts to int): the gradient is zero.
      return algebra.zerosLike(v);
    }
    if (g === undefined || algebra.isDiscrete(v)) {
      if (g === undefined && !algebra.isDiscrete(v)) {
        const message =
          `grad was asked for the gradient with respect to ${v}, which is not part of the graph of the cost ` +
          'or is used only by non-differentiable operations (pass disconnectedInputs: "ignore" or "warn" to allow this)';
        if ((options.disconnectedInputs ?? 'raise') === 'raise') throw new DisconnectedInputError(message);
        if (options.disconnectedInputs === 'warn') console.warn(`weft: ${message}`);
      }
      switch (options.returnDisconnected ?? 'zero') {
        case 'null':
          return null;
        case 'disconnected':
          return disconnected();
        case 'zero':
          return algebra.zerosLike(v);
      }
    }
    if (g.name === undefined && costName !== undefined && v.name !== undefined) g.name = `(d${costName}/d${v.name})`;
    return g;
  });
}

/**
 * Forward mode: the directional derivatives of `outputs` in the directions `evalPoints` (one per
 * `wrt` variable, of its type). Outputs that do not depend on `wrt` get zeros. Discrete variables
 * (integers, bools, random states) have no tangent, as grad gives them no gradient: a discrete
 * `wrt` variable moves nothing, and an op's rop gets `disconnected()` as the eval point of each
 * discrete input (zeros for a continuous input that does not move). An undefined (NullType)
 * derivative that an op returns flows to what depends on it, and an output that needs one throws
 * a NullGradientError.
 */
export function ropWith(
  algebra: GradAlgebra,
  outputs: readonly Variable[],
  wrt: readonly Variable[],
  evalPoints: readonly Variable[],
): Variable[] {
  if (wrt.length !== evalPoints.length) {
    throw new Error(`Rop: ${wrt.length} variables but ${evalPoints.length} evaluation points`);
  }
  const tangent = new Map<Variable, Variable>();
  wrt.forEach((v, i) => {
    const ev = evalPoints[i]!;
    if (!v.type.equals(ev.type) && !v.type.convertVariable(ev)) {
      throw new TypeError(`Rop: the evaluation point for ${v} has type ${ev.type}, expected ${v.type}`);
    }
    if (!algebra.isDiscrete(v)) tangent.set(v, ev);
  });
  for (const node of ioToposort(wrt, outputs)) {
    if (!node.inputs.some((inp) => tangent.has(inp))) continue;
    // Outputs that no input with a tangent reaches (by the connection pattern), or that are
    // discrete, get no tangent; a node with no such output needs no rop.
    const pattern = connectionPattern(node);
    const moving = node.outputs.map(
      (o, j) => !algebra.isDiscrete(o) && node.inputs.some((inp, i) => tangent.has(inp) && pattern[i]![j]),
    );
    if (!moving.some(Boolean)) continue;
    // An undefined (NullType) tangent of an input is the tangent of every output it connects to.
    const nullFor = (j: number): Variable | undefined =>
      node.inputs.map((inp, i) => (pattern[i]![j] ? tangent.get(inp) : undefined)).find((t) => t !== undefined && isNullGrad(t));
    const nulls = node.outputs.map((_, j) => (moving[j] ? nullFor(j) : undefined));
    let outs: Variable[] = [];
    if (moving.some((m, j) => m && nulls[j] === undefined)) {
      if (!node.op.rop) throw new Error(`Rop: ${node.op} has no rop (used by ${node})`);
      const evs = node.inputs.map((inp) => {
        const t = tangent.get(inp);
        if (t !== undefined && !isNullGrad(t)) return t;
        return algebra.isDiscrete(inp) ? disconnected() : algebra.zerosLike(inp);
      });
      outs = node.op.rop(node.inputs, evs);
      if (outs.length !== node.outputs.length) {
        throw new Error(`${node.op}.rop returned ${outs.length} values for ${node.outputs.length} outputs`);
      }
    }
    node.outputs.forEach((o, j) => {
      if (!moving[j]) return;
      const t = nulls[j] ?? outs[j]!;
      if (isNullGrad(t)) tangent.set(o, t);
      else if (!isDisconnected(t)) tangent.set(o, algebra.castLike(t, o));
    });
  }
  return outputs.map((o) => {
    const t = tangent.get(o);
    if (t !== undefined && isNullGrad(t)) throw new NullGradientError(`Rop: the derivative of ${o} is needed but ${t.type.why}`);
    return t ?? algebra.zerosLike(o);
  });
}
