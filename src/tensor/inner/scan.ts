// weft.scan (Theano's scan): builds a Scan from a step function. The step function is called
// once, on placeholders, in Theano's argument order (sequence rows, past states, non-sequences);
// the non-sequences and what it reads from outside become inputs of the op (computed once), and
// the shared variables it updates (its returned updates, and default updates computed in the step
// such as its random draws' states) become states of the loop whose last values are the updates.
import { cloneReplace } from '../../graph/clone.js';
import { FunctionGraph } from '../../graph/fgraph.js';
import { SharedVariable } from '../../graph/shared.js';
import { graphInputs } from '../../graph/traversal.js';
import { isConstant, nextVariableId, type Variable } from '../../graph/variable.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { minimum } from '../elemwise/math.js';
import { collectDefaultUpdates } from './op-from-graph.js';
import { isSitSot, ScanOp, stateRows, type ScanSpec } from './scan-op.js';
import { outerReads } from './scan-reads.js';
import { asIntScalar, constantScalar, shapeI } from '../shape/shape.js';
import { slice } from '../core/slice.js';
import { TensorType } from '../core/type.js';
import { isTensorVariable, TensorSharedVariable, type TensorLike, type TensorVariable } from '../core/variable.js';

/** A sequence read at several offsets: `taps` [-1, 0, 1] give x[t-1], x[t], x[t+1] to each step. */
export interface ScanSequence {
  readonly input: TensorLike;
  readonly taps?: readonly number[];
}

/** A recurrent output whose step reads several past states (`taps` [-2, -1]: y[t-2], y[t-1]). */
export interface ScanOutputInfo {
  /** The states before the first step: rows [y[-L], ..., y[-1]] for L = -min(taps) (the state itself for taps [-1]). */
  readonly initial?: TensorLike | null;
  readonly taps?: readonly number[];
}

/** New values of shared variables (Theano's updates dictionary). */
export type ScanUpdates = ReadonlyMap<SharedVariable, TensorLike> | ReadonlyArray<readonly [SharedVariable, TensorLike]>;

/** The condition that ends a loop (Theano's `until`): the step after which it holds is the last. */
export class ScanUntil {
  constructor(readonly condition: TensorVariable) {}
}

/**
 * Ends the loop after the first step whose `condition` (a scalar: true or non-zero) holds; the
 * step returns it last, after its outputs and updates: `[y, weft.until(y.gt(10))]`. nSteps
 * (or the sequences) are then the most steps the loop may run.
 */
export function until(condition: TensorLike): ScanUntil {
  const c = asTensorVariable(condition);
  if (c.ndim !== 0) throw new TypeError(`until: the condition must be a scalar, got ${c} (${c.type})`);
  return new ScanUntil(c);
}

type ScanStepBody = TensorLike | readonly TensorLike[] | ScanUpdates | readonly [TensorLike | readonly TensorLike[], ScanUpdates];

/**
 * What a step returns: its outputs, its updates, or both as [outputs, updates]; a loop that may
 * stop early adds `until(condition)` as the last element, as Theano's step returns it last.
 */
export type ScanStepResult = ScanStepBody | ScanUntil | readonly [...ReadonlyArray<TensorLike | readonly TensorLike[] | ScanUpdates>, ScanUntil];

export interface ScanOptions {
  readonly fn: (...args: TensorVariable[]) => ScanStepResult;
  /** Tensors iterated over their first axis (a list; a single variable or ScanSequence is one sequence). */
  readonly sequences?: TensorVariable | ScanSequence | ReadonlyArray<TensorLike | ScanSequence>;
  /** One entry per output of the step: its initial state, `{ initial, taps }`, or null (not fed back). */
  readonly outputsInfo?: TensorVariable | ScanOutputInfo | null | ReadonlyArray<TensorLike | ScanOutputInfo | null | undefined>;
  /** Passed unchanged to every step, after the states. */
  readonly nonSequences?: TensorVariable | readonly TensorLike[];
  readonly nSteps?: number | TensorVariable;
  readonly goBackwards?: boolean;
  /** Steps that gradients go back through (truncated BPTT); -1 (the default) for all. */
  readonly truncateGradient?: number;
  readonly name?: string;
}

export interface ScanResult<Outputs extends TensorVariable | TensorVariable[] = TensorVariable | TensorVariable[]> {
  /** The stacked results of the steps: one variable when the step has one output, else an array. */
  readonly outputs: Outputs;
  /** The shared variables' values after the last step, for `compile(..., { updates })`. */
  readonly updates: Array<[TensorSharedVariable, TensorVariable]>;
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (typeof x !== 'object' || x === null || Array.isArray(x) || x instanceof Map) return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

function listOf<T>(x: T | ReadonlyArray<T> | undefined): readonly T[] {
  return x === undefined ? [] : Array.isArray(x) ? (x as readonly T[]) : [x as T];
}

function checkTaps(taps: unknown, where: string, negative: boolean): readonly number[] {
  const ok = Array.isArray(taps) && taps.length > 0 && taps.every((t) => Number.isInteger(t) && (!negative || t < 0));
  if (!ok || new Set(taps as number[]).size !== taps.length) {
    throw new TypeError(`${where}: taps must be a non-empty list of distinct ${negative ? 'negative ' : ''}integers, got ${JSON.stringify(taps)}`);
  }
  return taps as number[];
}

/** The type of one row of `x` (x without its first axis). */
function rowType(x: TensorVariable): TensorType {
  return new TensorType(x.dtype, x.type.shape.slice(1));
}

function isUpdates(x: unknown): x is ScanUpdates {
  if (x instanceof Map) return true;
  return Array.isArray(x) && x.every((p) => Array.isArray(p) && p.length === 2 && p[0] instanceof SharedVariable);
}

/** Takes the until condition off what the step returned: [...rest, until(c)] reads as rest would. */
function splitUntil(r: ScanStepResult): { body: ScanStepBody; stop: ScanUntil | undefined } {
  if (r instanceof ScanUntil) return { body: [], stop: r };
  if (!Array.isArray(r) || !(r[r.length - 1] instanceof ScanUntil)) return { body: r as ScanStepBody, stop: undefined };
  const rest = r.slice(0, -1);
  rest.forEach((x, i) => {
    if (x instanceof ScanUntil) throw new TypeError(`scan: fn returned until() at position ${i}; it must be the last element, and only one`);
  });
  return { body: (rest.length === 1 ? rest[0] : rest) as ScanStepBody, stop: r[r.length - 1] as ScanUntil };
}

/**
 * Splits what the step returned into outputs and updates (Theano accepts either, or both). In a
 * pair, an empty list first is no outputs (PyTensor's `return [], {s: ...}`), not empty updates.
 */
function splitResult(r: ScanStepBody): { outputs: readonly unknown[]; single: boolean; updates: ScanUpdates } {
  if (r instanceof Map) return { outputs: [], single: false, updates: r };
  const noOutputs = (x: unknown): boolean => Array.isArray(x) && x.length === 0;
  if (Array.isArray(r) && r.length === 2 && isUpdates(r[1]) && (noOutputs(r[0]) || !isUpdates(r[0]))) {
    const outs = r[0] as unknown;
    return { outputs: Array.isArray(outs) ? outs : [outs], single: !Array.isArray(outs), updates: r[1] };
  }
  if (Array.isArray(r) && r.length > 0 && isUpdates(r)) return { outputs: [], single: false, updates: r };
  return { outputs: Array.isArray(r) ? r : [r], single: !Array.isArray(r), updates: [] };
}

function staticText(t: TensorType): string {
  return `(${t.shape.map((d) => (d === null ? '?' : String(d))).join(', ')})`;
}

/** Checks that a recurrent output's step result can be its next state. */
function checkRecurrent(r: TensorVariable, state: TensorType, j: number): void {
  const where = `scan: output ${j} of fn`;
  const init = `its initial state (outputsInfo[${j}])`;
  if (r.dtype !== state.dtype) {
    throw new TypeError(`${where} has dtype ${r.dtype} but ${init} has dtype ${state.dtype}; a recurrent output must keep its state's dtype (cast one of them)`);
  }
  if (r.ndim !== state.ndim) throw new TypeError(`${where} has ${r.ndim} axes but ${init} has ${state.ndim}`);
  if (r.type.shape.some((d, a) => d !== null && state.shape[a] !== null && d !== state.shape[a])) {
    throw new TypeError(`${where} has static shape ${staticText(r.type)} but ${init} has static shape ${staticText(state)}`);
  }
}

/** A step that returns one variable (with its updates, its until, or both): `outputs` is one variable. */
type OneOutputStep = TensorVariable | readonly [TensorVariable, ScanUpdates] | readonly [TensorVariable, ScanUntil] | readonly [TensorVariable, ScanUpdates, ScanUntil];

/** A step that returns a list of variables (with its updates, its until, or both): `outputs` is a list. */
type ManyOutputStep =
  | readonly TensorVariable[]
  | readonly [readonly TensorVariable[], ScanUpdates]
  | readonly [readonly TensorVariable[], ScanUntil]
  | readonly [readonly TensorVariable[], ScanUpdates, ScanUntil];

export function scan(options: ScanOptions & { readonly fn: (...args: TensorVariable[]) => OneOutputStep }): ScanResult<TensorVariable>;
export function scan(options: ScanOptions & { readonly fn: (...args: TensorVariable[]) => ManyOutputStep }): ScanResult<TensorVariable[]>;
export function scan(options: ScanOptions): ScanResult;
export function scan(options: ScanOptions): ScanResult {
  const { fn, goBackwards = false, truncateGradient = -1, name = 'scan' } = options;
  if (typeof fn !== 'function') throw new TypeError('scan: fn must be a function');
  if (!(Number.isInteger(truncateGradient) && (truncateGradient === -1 || truncateGradient > 0))) {
    throw new RangeError(`scan: truncateGradient must be -1 (all steps) or a positive integer, got ${truncateGradient}`);
  }

  // Sequences: one sequence of the op per tap, cut so that row t is x[t + tap] (as Theano cuts
  // them, pretending tap 0 is used), then reversed for goBackwards.
  const seqOuter: TensorVariable[] = [];
  const seqInner: TensorVariable[] = [];
  const seqWhere: string[] = [];
  listOf<TensorLike | ScanSequence>(options.sequences as TensorLike | ScanSequence | ReadonlyArray<TensorLike | ScanSequence>).forEach((s, i) => {
    const spec = isPlainObject(s) && 'input' in s ? (s as unknown as ScanSequence) : { input: s as TensorLike };
    const x = asTensorVariable(spec.input);
    if (x.ndim < 1) throw new TypeError(`scan: sequence ${i} must have at least one axis, got ${x} (${x.type})`);
    const taps = spec.taps === undefined ? [0] : checkTaps(spec.taps, `scan: sequence ${i}`, false);
    const lo = Math.min(...taps, 0);
    const hi = Math.max(...taps, 0);
    for (const tap of taps) {
      const cut = lo === 0 && hi === 0 ? x : x.get(slice(tap - lo, tap - hi === 0 ? null : tap - hi));
      seqOuter.push(goBackwards ? cut.get(slice(null, null, -1)) : cut);
      const label = x.name ?? `seq${i}`;
      seqInner.push(rowType(x).makeVariable(tap === 0 ? `${label}[t]` : `${label}[t${tap > 0 ? '+' : ''}${tap}]`));
      seqWhere.push(taps.length === 1 && tap === 0 ? `sequence ${i}` : `sequence ${i} (at tap ${tap})`);
    }
  });

  // The number of steps: nSteps, or the shortest sequence.
  let n: TensorVariable;
  if (options.nSteps === undefined) {
    if (seqOuter.length === 0) throw new TypeError('scan: nSteps is required when there are no sequences');
    n = seqOuter.map((s) => shapeI(s, 0)).reduce((a, b) => minimum(a, b));
  } else {
    n = asIntScalar(options.nSteps, 'scan: nSteps');
    const steps = constantScalar(n);
    if (steps !== undefined && steps < 0) throw new RangeError(`scan: nSteps must not be negative, got ${steps}`);
    seqOuter.forEach((s, i) => {
      const len = s.type.shape[0];
      if (steps !== undefined && len !== null && len !== undefined && len < steps) {
        throw new RangeError(`scan: nSteps is ${steps} but ${seqWhere[i]} has only ${len} step${len === 1 ? '' : 's'}`);
      }
    });
  }

  // Outputs: recurrent ones (with their initial states and taps) and those not fed back.
  type Info = { kind: 'recurrent'; init: TensorVariable; taps: readonly number[]; inner: TensorVariable[] } | { kind: 'nitsot' };
  const infos: Info[] = listOf<unknown>(options.outputsInfo).map((o, j): Info => {
    if (o === null || o === undefined) return { kind: 'nitsot' };
    const spec = isPlainObject(o) && ('initial' in o || 'taps' in o) ? (o as ScanOutputInfo) : { initial: o as TensorLike };
    if (spec.initial === null || spec.initial === undefined) return { kind: 'nitsot' };
    const taps = spec.taps === undefined ? [-1] : checkTaps(spec.taps, `scan: outputsInfo[${j}]`, true);
    const x = asTensorVariable(spec.initial);
    const label = x.name ?? `out${j}`;
    if (isSitSot(taps)) return { kind: 'recurrent', init: x, taps, inner: [x.type.makeVariable(`${label}[t-1]`)] };
    if (x.ndim < 1) throw new TypeError(`scan: outputsInfo[${j}]: with taps [${taps.join(', ')}] the initial value needs a first axis of ${stateRows(taps)} past states, got ${x} (${x.type})`);
    const init = x.get(slice(0, stateRows(taps)));
    return { kind: 'recurrent', init, taps, inner: taps.map((t) => rowType(x).makeVariable(`${label}[t${t}]`)) };
  });
  const recurrent = infos.flatMap((info) => (info.kind === 'recurrent' ? [info] : []));

  const nonSeqs = listOf<TensorLike>(options.nonSequences as TensorLike | readonly TensorLike[]).map((v) => asTensorVariable(v));
  // What the step computes is made while fn runs; what existed before is read from outside.
  const madeBefore = nextVariableId();
  const { body, stop } = splitUntil(fn(...seqInner, ...recurrent.flatMap((r) => r.inner), ...nonSeqs));
  const split = splitResult(body);
  const outs = split.outputs.map((o, j) => {
    try {
      return asTensorVariable(o as TensorLike);
    } catch {
      throw new TypeError(`scan: fn returned ${String(o)} as output ${j}, which is not a tensor`);
    }
  });
  if (infos.length === 0) outs.forEach(() => infos.push({ kind: 'nitsot' }));
  else if (outs.length !== infos.length) {
    throw new TypeError(`scan: fn returned ${outs.length} output${outs.length === 1 ? '' : 's'} but outputsInfo has ${infos.length} entr${infos.length === 1 ? 'y' : 'ies'}`);
  }
  infos.forEach((info, j) => {
    if (info.kind === 'recurrent') checkRecurrent(outs[j]!, info.inner[0]!.type, j);
  });

  // Shared variables the step updates: those it returns updates for, then default updates (random states).
  const given: Array<[TensorSharedVariable, TensorVariable]> = [...split.updates].map(([s, v], i) => {
    if (!(s instanceof TensorSharedVariable)) throw new TypeError(`scan: update ${i} of fn must start with a tensor shared variable, got ${String(s)}`);
    const value = asTensorVariable(v);
    if (!s.type.equals(value.type) && !s.type.convertVariable(value)) {
      throw new TypeError(`scan: fn's update of ${s} has type ${value.type} but the shared variable has type ${s.type}`);
    }
    return [s, value];
  });
  const placeholders = new Set<Variable>([...seqInner, ...recurrent.flatMap((r) => r.inner)]);
  const updated = new Set<Variable>(given.map(([s]) => s));
  const cond = stop ? [stop.condition] : [];
  const roots = [...outs, ...given.map(([, v]) => v), ...cond];
  // The step ends at what it reads from outside: the non-sequences (whatever computes them) and
  // what it captured, which are inputs of the node, computed once (a draw among them is one draw).
  const boundary = { placeholders, declared: new Set<Variable>(nonSeqs), madeBefore, states: updated };
  const fence = (vars: readonly Variable[]): Set<Variable> => new Set([...placeholders, ...outerReads(vars, boundary)]);
  // Default updates computed in the step (its draws' next states, those of ops it calls) are
  // states of the loop. One made outside (y.defaultUpdate = y + 1 before scan) is not: as in
  // PyTensor, y keeps its value through the loop and the function's call updates it once.
  const inStep = (v: Variable): boolean => v.id >= madeBefore;
  const defaults = collectDefaultUpdates(roots, fence(roots), { wanted: (s) => !updated.has(s), usable: inStep, follow: true });
  const states = [...given, ...defaults];
  const stateInner = states.map(([s]) => s.type.makeVariable(`${s.name ?? 'shared'}[t-1]`));

  // Everything the step reads from outside: the non-sequences, listed ones first.
  const stateShared = new Set<Variable>(states.map(([s]) => s));
  const stepRoots = [...outs, ...states.map(([, v]) => v), ...cond];
  const read = graphInputs(stepRoots, fence(stepRoots)).filter((v) => !placeholders.has(v) && !isConstant(v) && !stateShared.has(v));
  const captured = [...nonSeqs.filter((v) => read.includes(v)), ...read.filter((v) => !nonSeqs.includes(v as TensorVariable))];
  captured.forEach((v) => {
    if (!isTensorVariable(v)) throw new TypeError(`scan: the step reads ${v} (${v.type}), which is not a tensor`);
  });
  const capturedInner = captured.map((v) => v.type.makeVariable(v.name));

  const recOuts = infos.flatMap((info, j) => (info.kind === 'recurrent' ? [outs[j]!] : []));
  const nitsotOuts = infos.flatMap((info, j) => (info.kind === 'nitsot' ? [outs[j]!] : []));
  const replaced = cloneReplace(
    [...recOuts, ...states.map(([, v]) => v), ...nitsotOuts, ...cond],
    [...states.map(([s], i): [Variable, Variable] => [s, stateInner[i]!]), ...captured.map((v, i): [Variable, Variable] => [v, capturedInner[i]!])],
  );
  const inner = new FunctionGraph([...seqInner, ...recurrent.flatMap((r) => r.inner), ...stateInner, ...capturedInner], replaced);
  const spec: ScanSpec = {
    nSeqs: seqOuter.length,
    taps: [...recurrent.map((r) => r.taps), ...states.map(() => [-1])],
    nNitsot: nitsotOuts.length,
    finals: states.map((_, f) => recurrent.length + f),
    nNonSeqs: captured.length,
    truncateGradient,
    ...(stop ? { until: true } : {}),
  };
  const op = new ScanOp(inner, spec, name);
  const node = op.makeNode(n, ...seqOuter, ...recurrent.map((r) => r.init), ...states.map(([s]) => s), ...captured);
  const all = node.outputs as TensorVariable[];
  const nRec = spec.taps.length;
  let r = 0;
  let z = 0;
  const outputs = infos.map((info) => (info.kind === 'recurrent' ? all[r++]! : all[nRec + z++]!));
  const finals = all.slice(nRec + spec.nNitsot);
  return {
    outputs: outputs.length === 1 && split.single ? outputs[0]! : outputs,
    updates: states.map(([s], f) => [s, finals[f]!]),
  };
}
