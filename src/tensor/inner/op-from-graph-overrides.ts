// OpFromGraph's derivative overrides (Theano's lop_overrides / rop_overrides) in one normal form:
// the override traced once, at construction, on placeholder variables into a graph op, and one
// slot per input (Lop) or output (Rop) that says where its derivative comes from. Equal traces
// make equal ops (so they merge), and the normal form serializes: a document carries the traced
// graph, never code.
import { isDisconnected, isNullGrad } from '../../graph/gradient.js';
import { propKey } from '../../graph/props.js';
import { SharedVariable } from '../../graph/shared.js';
import { graphInputs } from '../../graph/traversal.js';
import { isConstant, Variable } from '../../graph/variable.js';
import { isFloatDtype } from '../../kernels/dtype.js';
import type { OpFromGraph } from './op-from-graph.js';
import { isTensorVariable, type TensorVariable } from '../core/variable.js';

/**
 * Where one derivative comes from: output k of the traced op, the inner graph ('default'),
 * nowhere ('disconnected'), or nowhere defined (a NullType gradient, with the reason).
 */
export type OverrideSlot = number | 'default' | 'disconnected' | { readonly undefined: string };

/** A slot's derivative in an application: a variable, or what the op makes of the other slots. */
export type OverrideResult = Variable | Exclude<OverrideSlot, number>;

/** One gradient per explicit input (null: disconnected), as in Theano. */
export type LopFunction = (
  inputs: readonly TensorVariable[],
  outputs: readonly TensorVariable[],
  outputGrads: readonly TensorVariable[],
) => ReadonlyArray<Variable | null>;

/** One directional derivative per output (null: disconnected). */
export type RopFunction = (inputs: readonly TensorVariable[], evalPoints: readonly TensorVariable[]) => ReadonlyArray<Variable | null>;

/**
 * An entry of a per-input (Lop) or per-output (Rop) list, as PyTensor's list form: null or
 * undefined keeps the inner graph's derivative, a function (of the same arguments as the whole
 * override) or an OpFromGraph (of those arguments in a row) gives this one derivative, and a
 * `disconnected()` or NullType variable marks it disconnected or undefined.
 */
export type OverrideEntry<F extends (...args: never[]) => unknown> =
  | ((...args: Parameters<F>) => Variable | null)
  | OpFromGraph
  | Variable
  | null
  | undefined;

/** Replaces the pullback: a function, an OpFromGraph of (inputs, outputs, output gradients), or a list per input. */
export type LopOverride = LopFunction | OpFromGraph | ReadonlyArray<OverrideEntry<LopFunction>> | TracedOverride;

/** Replaces the pushforward: a function, an OpFromGraph of (inputs, eval points), or a list per output. */
export type RopOverride = RopFunction | OpFromGraph | ReadonlyArray<OverrideEntry<RopFunction>> | TracedOverride;

/** An override in normal form. `given` is set when the user gave the op itself (it is written as such). */
export class TracedOverride {
  constructor(
    readonly op: OpFromGraph | undefined,
    readonly slots: readonly OverrideSlot[],
    readonly given = false,
  ) {}

  /** Equal for equal traced graphs and slots (its identity as a prop of the op it overrides). */
  get key(): string {
    return `Override(${this.op?.key ?? '-'};${propKey(this.slots)})`;
  }

  /** The derivatives of one application, from the arguments the override takes. */
  apply(args: readonly Variable[]): OverrideResult[] {
    const out = this.op ? this.op.call(...args) : [];
    const values = Array.isArray(out) ? out : [out];
    return this.slots.map((s) => (typeof s === 'number' ? values[s]! : s));
  }
}

/** What a trace needs to know about the op whose derivative is overridden. */
export interface TraceContext {
  /** The option traced, for messages. */
  readonly which: 'lopOverrides' | 'ropOverrides';
  /** The op, for messages. */
  readonly where: string;
  /** The override's arguments as placeholders, in groups (inputs, outputs, gradients). */
  readonly groups: ReadonlyArray<readonly TensorVariable[]>;
  /** What each slot is the derivative of (an input for Lop, an output for Rop), and its name. */
  readonly targets: readonly TensorVariable[];
  readonly targetKind: 'input' | 'output';
  readonly isGraphOp: (x: unknown) => x is OpFromGraph;
  /** Makes the traced op from the placeholders and the traced derivatives. */
  readonly build: (inputs: readonly TensorVariable[], outputs: readonly TensorVariable[]) => OpFromGraph;
}

/** The override in normal form, traced on placeholders; bad overrides fail here, naming the op. */
export function traceOverride(ctx: TraceContext, override: LopOverride | RopOverride): TracedOverride {
  const args = ctx.groups.flat();
  const n = ctx.targets.length;
  const fail = (problem: string): never => {
    throw new TypeError(`${ctx.where}: ${ctx.which} ${problem}`);
  };
  if (override instanceof TracedOverride) return checkTraced(ctx, override, args, fail);
  if (ctx.isGraphOp(override)) {
    checkGraphOp(ctx, override, args, 'as an OpFromGraph', fail);
    if (override.nVisible !== n) fail(`as an OpFromGraph must have ${n} outputs (one per ${ctx.targetKind}), it has ${override.nVisible}`);
    return new TracedOverride(override, ctx.targets.map((_, i) => i), true);
  }
  let results: Array<Variable | 'default' | null>;
  if (typeof override === 'function') {
    const r = callTraced(() => (override as (...a: unknown[]) => unknown)(...ctx.groups), 'the function', fail);
    if (!Array.isArray(r)) fail(`must return an array (one derivative per ${ctx.targetKind}), got ${describe(r)}`);
    if ((r as unknown[]).length !== n) fail(`returned ${(r as unknown[]).length} derivatives for ${n} ${ctx.targetKind}s`);
    results = (r as unknown[]).map((v, i) => checkResult(v, `returned ${describe(v)} for ${ctx.targetKind} ${i}`, fail));
  } else if (Array.isArray(override)) {
    if (override.length !== n) fail(`as a list must have one entry per ${ctx.targetKind} (${n}), it has ${override.length}`);
    results = (override as ReadonlyArray<OverrideEntry<LopFunction>>).map((entry, i) => traceEntry(ctx, entry, i, args, fail));
  } else {
    return fail(`must be a function, an OpFromGraph or a list, got ${describe(override)}`);
  }
  return normalize(ctx, results, args, fail);
}

function traceEntry(
  ctx: TraceContext,
  entry: OverrideEntry<LopFunction>,
  i: number,
  args: readonly TensorVariable[],
  fail: (problem: string) => never,
): Variable | 'default' | null {
  const at = `entry ${i}`;
  if (entry === null || entry === undefined) return 'default';
  if (entry instanceof Variable) {
    if (isDisconnected(entry) || isNullGrad(entry)) return entry;
    return fail(`${at} is ${entry}; a list holds functions, OpFromGraph ops, null, or disconnected()/NullType markers`);
  }
  if (ctx.isGraphOp(entry)) {
    checkGraphOp(ctx, entry, args, `${at} (an OpFromGraph)`, fail);
    if (entry.nVisible !== 1) fail(`${at} (an OpFromGraph) must have one output, it has ${entry.nVisible}`);
    return entry.call(...args) as TensorVariable;
  }
  if (typeof entry !== 'function') return fail(`${at} must be a function, an OpFromGraph, null or a marker, got ${describe(entry)}`);
  const r = callTraced(() => (entry as (...a: unknown[]) => unknown)(...ctx.groups), `the function of ${at}`, fail);
  return checkResult(r, `${at} returned ${describe(r)}`, fail);
}

/** Numbers the traced derivatives in order, checks them against their targets, and builds the op. */
function normalize(ctx: TraceContext, results: ReadonlyArray<Variable | 'default' | null>, args: readonly TensorVariable[], fail: (problem: string) => never): TracedOverride {
  const traced: TensorVariable[] = [];
  const slots = results.map((r, i): OverrideSlot => {
    if (r === 'default') return 'default';
    if (r === null || isDisconnected(r)) return 'disconnected';
    if (isNullGrad(r)) return { undefined: r.type.why };
    const v = r as TensorVariable;
    const target = ctx.targets[i]!;
    if (v.ndim !== target.ndim) fail(`gives ${v} (${v.type}) for ${ctx.targetKind} ${i}, which has ${target.ndim} dimensions (${target.type})`);
    if (isFloatDtype(target.dtype) && !isFloatDtype(v.dtype)) fail(`gives ${v} (${v.type}) for ${ctx.targetKind} ${i}; a derivative must have a float dtype`);
    traced.push(v);
    return traced.length - 1;
  });
  const known = new Set<Variable>(args);
  const free = graphInputs(traced, known).find((v) => !known.has(v) && !isConstant(v) && !(v instanceof SharedVariable));
  if (free) fail(`computes with ${free} (${free.type}), which is not among the arguments it was given; pass it to the op as an input`);
  return new TracedOverride(traced.length > 0 ? ctx.build(args, traced) : undefined, slots);
}

/** A normal form given directly (a document's): its op must take the arguments and match its slots. */
function checkTraced(ctx: TraceContext, o: TracedOverride, args: readonly TensorVariable[], fail: (problem: string) => never): TracedOverride {
  if (o.slots.length !== ctx.targets.length) fail(`has ${o.slots.length} slots for ${ctx.targets.length} ${ctx.targetKind}s`);
  let next = 0;
  for (const s of o.slots) {
    if (typeof s !== 'number') continue;
    if (s !== next) fail(`numbers its traced derivatives out of order: slot ${s} where ${next} comes next`);
    next++;
  }
  if (next === 0 && o.op === undefined) return o;
  if (o.op === undefined) return fail(`has traced slots but no traced op`);
  checkGraphOp(ctx, o.op, args, 'as traced', fail);
  if (o.op.nVisible !== next) fail(`as traced has ${o.op.nVisible} outputs for ${next} traced slots`);
  return o;
}

function checkGraphOp(ctx: TraceContext, op: OpFromGraph, args: readonly TensorVariable[], what: string, fail: (problem: string) => never): void {
  if (op.nExplicit !== args.length) {
    fail(`${what} must take ${args.length} inputs (${ctx.groups.map((g) => g.length).join(' + ')}), it takes ${op.nExplicit}`);
  }
  try {
    op.makeNode(...args);
  } catch (e) {
    fail(`${what} does not take the op's arguments: ${(e as Error).message}`);
  }
}

function callTraced(f: () => unknown, what: string, fail: (problem: string) => never): unknown {
  try {
    return f();
  } catch (e) {
    // It runs once, at construction, on placeholder variables (which a closure over the op being
    // built cannot use yet).
    return fail(`failed when ${what} was traced on placeholder variables at construction: ${(e as Error).message}`);
  }
}

function checkResult(v: unknown, what: string, fail: (problem: string) => never): Variable | null {
  if (v === null || (v instanceof Variable && (isTensorVariable(v) || isDisconnected(v) || isNullGrad(v)))) return v;
  return fail(`${what}; expected a tensor variable, null, or a disconnected()/NullType marker`);
}

function describe(x: unknown): string {
  if (x instanceof Variable) return `${x} (${x.type})`;
  if (typeof x === 'function') return 'a function';
  if (Array.isArray(x)) return 'an array';
  return typeof x === 'object' && x !== null ? Object.prototype.toString.call(x) : String(x);
}
