// compile(inputs, outputs, options): from variables to a callable. It substitutes givens, adds
// shared variables as implicit inputs, adds the default updates of the shared variables it reads
// (Theano's default_update, e.g. random states), builds the FunctionGraph (outputs, then update values),
// applies the mode's rewrites, protects outputs that would alias memory weft owns, and wraps an
// executor in an async function whose updates take effect together, and only when the call succeeds.
import type { Apply } from '../graph/apply.js';
import { DestroyHandler, destroyedInputs } from '../graph/destroy-handler.js';
import { FunctionGraph, MissingInputError } from '../graph/fgraph.js';
import { cloneReplace } from '../graph/clone.js';
import { currentValue, SharedVariable, wasLent } from '../graph/shared.js';
import { ancestors, graphInputs } from '../graph/traversal.js';
import type { FilterOptions, Type } from '../graph/type.js';
import { isConstant, Variable } from '../graph/variable.js';
import { GraphExecutor, type RunObserver } from '../scheduler/graph-executor.js';
import { abortedBy, AbortError } from '../scheduler/planned-executor.js';
import { CallGate, CALLS_AT_ONCE } from './call-gate.js';
import { FunctionOutput } from './function-output.js';
import { StagedExecutor } from '../scheduler/staged-executor.js';
import type { PlanInfo } from '../scheduler/plan-info.js';
import { retire, startReading, stopReading } from '../scheduler/resident-values.js';
import { PoolClosedError } from '../workers/pool.js';
import { getDefaultPool, type Pool } from './pool.js';
import { deepCopy } from '../tensor/shape/basic-ops.js';
import type { NdArray } from '../tensor/core/ndarray.js';
import { TensorType } from '../tensor/core/type.js';
import { isTensorVariable, type TensorLike, type TensorSharedVariable, type TensorValue, type TensorVariable } from '../tensor/core/variable.js';
import { FunctionInput } from './function-input.js';
import { resolveMode, type Mode, type ModeName } from './mode.js';
// The modes known by name beyond FAST_RUN and FAST_COMPILE register themselves with resolveMode.
import './debug-mode.js';
import './nan-guard-mode.js';
import { collectDefaultUpdates } from '../tensor/inner/op-from-graph.js';
import { FunctionProfile } from './profile.js';

export interface CompileOptions {
  /** Pairs [shared variable, its new value]: applied together after each successful call. */
  readonly updates?: ReadonlyArray<readonly [TensorSharedVariable, TensorLike]>;
  /** Pairs [variable, replacement]: the graph is compiled with each variable replaced. */
  readonly givens?: ReadonlyArray<readonly [TensorVariable, TensorLike]>;
  /**
   * Which rewrites to apply and how calls run: 'FAST_RUN' (the default), 'FAST_COMPILE', 'DebugMode'
   * (every node checked), 'NanGuardMode' (every value checked for NaN, inf and big values) or a weft.Mode.
   */
  readonly mode?: ModeName | Mode;
  /** Record compile and run times in `fn.profile` (per rewriter, per node, per op, and a trace). */
  readonly profile?: boolean;
  /** Worker threads a call may use (0: only the calling thread; default: all the pool's). */
  readonly workers?: number;
  /** The pool to run on (default: a pool shared by all functions, sized to the machine). */
  readonly pool?: Pool;
  readonly name?: string;
  /** What to do with an input that no output depends on (default 'raise'). */
  readonly onUnusedInput?: 'raise' | 'warn' | 'ignore';
  /** Accept input values that lose precision when converted to the input's dtype. */
  readonly allowInputDowncast?: boolean;
  /**
   * Leave out the default updates of shared variables (Theano's no_default_updates): of all of
   * them (true), or of those listed. Explicit `updates` always apply.
   */
  readonly noDefaultUpdates?: boolean | readonly SharedVariable[];
}

export interface CallOptions {
  readonly signal?: AbortSignal;
}

/** A value a compiled function takes for a tensor input (checked and converted by its type). */
export type InputValue = TensorValue;

/**
 * The value a function takes for this input: tensors take what their filter converts (arrays,
 * nested lists, numbers); variables of other Types, what their Type's filter takes.
 */
export type InputValueOf<V> = V extends TensorVariable ? InputValue : V extends FunctionInput ? InputValue : unknown;

/** The values a function with these inputs takes: one per input. */
export type ArgumentsOf<I extends readonly unknown[]> = { -readonly [K in keyof I]: InputValueOf<I[K]> };

/** What a call gives for this output: an ndarray for a tensor, a value of its Type for others. */
export type ValueOf<S> = S extends FunctionOutput<infer V> ? ValueOf<V> : S extends Variable<Type<infer T>> ? T : unknown;

/** `fn.profile` for these options: defined when they say `profile: true`. */
export type ProfileOf<O> = O extends { readonly profile: true } ? FunctionProfile : FunctionProfile | undefined;

/**
 * A compiled function: `await fn(...values)` (then, optionally, `{ signal }`), plus what it was
 * built from. `R` is what a call gives (one ndarray, or an array for a list of outputs), `A` the
 * values it takes (a tuple when the inputs were a list literal).
 */
export interface WeftFunction<R, A extends readonly unknown[] = InputValue[], P extends FunctionProfile | undefined = FunctionProfile | undefined>
  extends CompiledFunction<P> {
  (...args: [...A] | [...A, CallOptions]): Promise<R>;
  /**
   * The plan a call with these values would run (made now and kept for the calls): its region's
   * size in bytes, its tasks, its width, its work, whether it runs inline (docs/performance.md).
   */
  planInfo(...args: [...A]): PlanInfo;
}

/** What every compiled function has besides its call: what takes any function (serialize) takes this. */
export interface CompiledFunction<P extends FunctionProfile | undefined = FunctionProfile | undefined> {
  /** The graph as it runs: explicit inputs then shared variables; outputs then update values. */
  readonly fgraph: FunctionGraph;
  readonly name: string;
  readonly inputs: readonly FunctionInput[];
  /** The shared variables this function updates, in the order of their update outputs. */
  readonly updated: readonly TensorSharedVariable[];
  readonly mode: Mode;
  /** Compile and run times, when compiled with `profile: true`. */
  readonly profile: P;
  dispose(): void;
}

export class UnusedInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnusedInputError';
  }
}

export { AbortError };

/** Whether `x` is a call's options object (`{ signal }`), the optional last argument of a call. */
export function isCallOptions(x: unknown): x is CallOptions {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x);
  return (proto === Object.prototype || proto === null) && Object.keys(x).every((k) => k === 'signal');
}

function label(name: string | undefined): string {
  return name ? `function '${name}'` : 'the function';
}

function normalizeInputs(inputs: ReadonlyArray<Variable | FunctionInput>, fnLabel: string): FunctionInput[] {
  const seen = new Set<Variable>();
  return inputs.map((x, i) => {
    if (!(x instanceof FunctionInput) && !(x instanceof Variable)) {
      throw new TypeError(`compile (${fnLabel}): input ${i} must be a variable or weft.In(variable), got ${String(x)}`);
    }
    const input = x instanceof FunctionInput ? x : new FunctionInput(x);
    const v = input.variable;
    if (v instanceof SharedVariable) {
      throw new TypeError(`compile (${fnLabel}): input ${i} (${v}) is a shared variable; shared variables are implicit inputs, do not list them`);
    }
    if (isConstant(v)) throw new TypeError(`compile (${fnLabel}): input ${i} (${v}) is a constant; inputs must be symbolic variables`);
    if (seen.has(v)) throw new TypeError(`compile (${fnLabel}): input ${i} (${v}) is given twice`);
    seen.add(v);
    return input;
  });
}

/**
 * A variable for `value`, which stands where a variable of type `like` is expected (an update
 * value or a givens replacement). A plain value becomes a constant of `like`'s dtype, checked by
 * its filter: a JS literal is weak, as everywhere in weft, but never silently truncated.
 */
function valueFor(value: TensorLike, like: TensorType, what: string): TensorVariable {
  if (isTensorVariable(value)) return value;
  const type = new TensorType(like.dtype, like.shape.map(() => null));
  const data = type.filter(value, { what });
  // The constant owns its data: a copy when the value is the caller's array or a view of its memory.
  return new TensorType(like.dtype, data.shape).makeConstant(type.ownValue(data, value));
}

function checkUpdates(updates: CompileOptions['updates'], fnLabel: string): Array<[TensorSharedVariable, TensorVariable]> {
  const seen = new Set<Variable>();
  return (updates ?? []).map(([s, expr], i) => {
    if (!(s instanceof SharedVariable) || !isTensorVariable(s)) {
      throw new TypeError(`compile (${fnLabel}): update ${i} must start with a shared variable, got ${String(s)}`);
    }
    if (seen.has(s)) throw new TypeError(`compile (${fnLabel}): ${s} is updated twice`);
    seen.add(s);
    const v = valueFor(expr, s.type, `compile (${fnLabel}): the update of ${s}`);
    if (!s.type.equals(v.type) && !s.type.convertVariable(v)) {
      throw new TypeError(
        `compile (${fnLabel}): the update of ${s} has type ${v.type} but the shared variable has type ${s.type}` +
          (v.dtype !== s.dtype ? ` (cast it: .astype('${s.dtype}'))` : ''),
      );
    }
    return [s, v];
  });
}

/**
 * The default updates of the shared variables the function reads, as Theano adds them: each
 * one's `defaultUpdate`, or the update an OpFromGraph application computes for one it reads
 * inside (its hidden output), unless the caller updates the variable, replaces it through
 * givens, or turns default updates off. Update values may read more such variables: followed.
 */
function defaultUpdates(
  outputs: readonly Variable[],
  explicit: ReadonlyArray<readonly [TensorSharedVariable, TensorVariable]>,
  inputs: readonly FunctionInput[],
  options: CompileOptions,
  fnLabel: string,
): Array<[TensorSharedVariable, TensorVariable]> {
  const off = options.noDefaultUpdates ?? false;
  if (off === true) return [];
  if (off !== false && !(Array.isArray(off) && off.every((s) => s instanceof SharedVariable))) {
    throw new TypeError(`compile (${fnLabel}): noDefaultUpdates must be a boolean or an array of shared variables, got ${String(off)}`);
  }
  const skip = new Set<Variable>([
    ...explicit.map(([s]) => s),
    ...(off === false ? [] : off),
    ...(options.givens ?? []).flatMap((g) => (Array.isArray(g) ? [g[0] as Variable] : [])),
  ]);
  const roots = [...outputs, ...explicit.map(([, v]) => v)];
  const found = collectDefaultUpdates(roots, new Set(inputs.map((x) => x.variable)), { wanted: (s) => !skip.has(s), follow: true });
  return found.map(([s, v]) => {
    if (!s.type.equals(v.type) && !s.type.convertVariable(v)) {
      throw new TypeError(`compile (${fnLabel}): the default update of ${s} has type ${v.type} but the shared variable has type ${s.type}`);
    }
    return [s, v];
  });
}

/** The variable whose memory `v` shares: itself, or what it is a view of (through viewMap, repeatedly). */
function memoryRoot(v: Variable): Variable {
  let r = v;
  for (let node = r.owner; node; node = r.owner) {
    const source = node.op.viewMap[r.index]?.[0];
    if (source === undefined) break;
    r = node.inputs[source]!;
  }
  return r;
}

/**
 * Outputs that would hand the caller memory weft or the caller still uses get a DeepCopyOp: an
 * input or a constant (or a view of one), or memory another output already hands out. A view
 * of a value computed in the call needs none (PyTensor copies views of inputs only): the value's
 * memory goes to the caller with it. An output written over an input (destroyMap) needs none
 * either: the destroy handler refuses graphs that return a value that is overwritten, and
 * executors copy the inputs that nodes overwrite.
 */
function protectOutputs(fg: FunctionGraph): void {
  const handedOut = new Set<Variable>();
  fg.outputs.forEach((v, i) => {
    const root = memoryRoot(v);
    const aliases = fg.isInput(root) || isConstant(root) || handedOut.has(root);
    handedOut.add(root);
    // Values of other Types are copied by the wrapper (their Type's copyValue), not by a node.
    if (aliases && isTensorVariable(v)) fg.changeInput({ kind: 'output', index: i }, deepCopy(v), 'protect output');
  });
}

/** An output of compile: a variable, or `weft.Out(variable, { borrow })`. */
export type OutputSpec = Variable | FunctionOutput;

export function compile<const I extends ReadonlyArray<Variable | FunctionInput>, S extends OutputSpec, const O extends CompileOptions = {}>(
  inputs: I,
  outputs: S,
  options?: O,
): Promise<WeftFunction<ValueOf<S>, ArgumentsOf<I>, ProfileOf<O>>>;
export function compile<const I extends ReadonlyArray<Variable | FunctionInput>, S extends readonly OutputSpec[], const O extends CompileOptions = {}>(
  inputs: I,
  outputs: S,
  options?: O,
): Promise<WeftFunction<ValueOf<S[number]>[], ArgumentsOf<I>, ProfileOf<O>>>;
export async function compile(
  inputs: ReadonlyArray<Variable | FunctionInput>,
  outputs: OutputSpec | readonly OutputSpec[],
  options: CompileOptions = {},
): Promise<WeftFunction<unknown>> {
  if (options.pool?.closed) throw new PoolClosedError(`compile (${options.name ?? 'the function'})`);
  // The pool's kernel modules are loaded on this thread too: small calls run their kernels here.
  await options.pool?.ready;
  return build(inputs, outputs, options);
}

function build(
  inputs: ReadonlyArray<Variable | FunctionInput>,
  outputs: OutputSpec | readonly OutputSpec[],
  options: CompileOptions,
): WeftFunction<unknown> {
  const compileStarted = performance.now();
  const fnLabel = label(options.name);
  const mode = resolveMode(options.mode, `compile (${fnLabel})`);
  if (options.workers !== undefined && !(Number.isInteger(options.workers) && options.workers >= 0)) {
    throw new RangeError(`compile (${fnLabel}): workers must be a non-negative integer, got ${options.workers}`);
  }
  const single = !Array.isArray(outputs);
  const outSpecs = (single ? [outputs] : outputs) as readonly OutputSpec[];
  const outList = outSpecs.map((o) => (o instanceof FunctionOutput ? o.variable : o));
  const borrowedOutputs = outSpecs.map((o) => o instanceof FunctionOutput && o.borrow);
  outList.forEach((o, i) => {
    if (!(o instanceof Variable)) throw new TypeError(`compile (${fnLabel}): output ${i} is not a variable: ${String(o)}`);
  });
  const fnInputs = normalizeInputs(inputs, fnLabel);
  const explicitUpdates = checkUpdates(options.updates, fnLabel);
  const updates = [...explicitUpdates, ...defaultUpdates(outList, explicitUpdates, fnInputs, options, fnLabel)];

  // Givens: replace variables in every output and update expression.
  let targets: Variable[] = [...outList, ...updates.map(([, v]) => v)];
  if (options.givens && options.givens.length > 0) {
    const pairs = options.givens.map(([from, to], i): [Variable, Variable] => {
      if (!isTensorVariable(from)) throw new TypeError(`compile (${fnLabel}): givens[${i}] must start with a tensor variable`);
      const replacement = valueFor(to, from.type, `compile (${fnLabel}): givens[${i}]`);
      if (!from.type.equals(replacement.type) && !from.type.convertVariable(replacement)) {
        throw new TypeError(
          `compile (${fnLabel}): givens[${i}] replaces ${from} (${from.type}) with ${replacement} (${replacement.type}); ` +
            'the replacement must have the same type (or a more specific static shape)',
        );
      }
      return [from, replacement];
    });
    targets = cloneReplace(targets, pairs);
  }

  // Unused inputs, missing inputs, implicit shared inputs.
  const explicit = fnInputs.map((x) => x.variable);
  const explicitSet = new Set<Variable>(explicit);
  const used = new Set(ancestors(targets, explicitSet));
  explicit.forEach((v, i) => {
    if (used.has(v)) return;
    const message =
      `compile (${fnLabel}) was given input ${i} (${v}), which no output depends on ` +
      "(pass onUnusedInput: 'ignore' or 'warn' to allow this)";
    const policy = options.onUnusedInput ?? 'raise';
    if (policy === 'raise') throw new UnusedInputError(message);
    if (policy === 'warn') console.warn(`weft: ${message}`);
  });
  const sharedInputs: TensorSharedVariable[] = [];
  for (const v of graphInputs(targets, explicitSet)) {
    if (explicitSet.has(v) || isConstant(v)) continue;
    if (v instanceof SharedVariable && isTensorVariable(v)) sharedInputs.push(v);
    else throw new MissingInputError(v, `by compile of ${fnLabel}`);
  }
  for (const [s] of updates) if (!sharedInputs.includes(s)) sharedInputs.push(s);

  // Inplace operations may overwrite mutable inputs and the shared variables this function
  // updates (their new values replace the old ones), nothing else that comes from outside.
  const fg = new FunctionGraph([...explicit, ...sharedInputs], targets);
  const updatedSet = new Set<Variable>(updates.map(([s]) => s));
  fg.attachFeature(
    new DestroyHandler({
      destroyable: fg.inputs.filter((v, i) => (i < explicit.length ? fnInputs[i]!.mutable : updatedSet.has(sharedInputs[i - explicit.length]!))),
    }),
  );
  const original = mode.makeRuntime ? fg.clone().fgraph : undefined;
  const rewrites = mode.rewrite(fg);
  protectOutputs(fg);
  const modeRuntime = original && mode.makeRuntime?.({ fgraph: fg, original, name: fnLabel });
  const profile = options.profile ? new FunctionProfile(options.name ?? 'weft function', rewrites.profile) : undefined;
  const onTask =
    profile &&
    ((task: Apply | string, a: number, b: number, thread: number) =>
      typeof task === 'string' ? profile.recordCopy(task, profile.fromEpoch(a), profile.fromEpoch(b), thread) : profile.recordNode(task, profile.fromEpoch(a), profile.fromEpoch(b), thread));
  const workers = options.workers ?? options.pool?.size;
  // The pool the executor runs on, once it asked for one: a closed explicit pool rejects every
  // call; a closed default pool is replaced by a new default pool (weft.shutdown() promises it).
  let bound: Pool | undefined;
  // workers: 0 runs every call on the calling thread: in a given pool's memory (arrays of
  // pool.from are read there in place), without a pool otherwise (no default pool is made).
  const given = options.pool;
  const poolOf = workers === 0 ? (given ? () => (bound = given) : undefined) : () => (bound = options.pool ?? getDefaultPool());
  // The new values of tensor shared variables stay in the pool's memory, where the next call reads
  // them; not for a graph laid out for sparse outputs, whose outputs are numbered otherwise.
  const residentOutputs = [...outList.map(() => false), ...updates.map(([s]) => isTensorVariable(s))];
  const makeExecutor = (graph: FunctionGraph): StagedExecutor =>
    new StagedExecutor(graph, poolOf, {
      workers: workers ?? Number.MAX_SAFE_INTEGER,
      label: fnLabel,
      ...(borrowedOutputs.some(Boolean) ? { borrowedOutputs } : {}),
      ...(residentOutputs.some(Boolean) && graph.outputs.length === residentOutputs.length ? { residentOutputs } : {}),
    });
  const graphExecutor = new GraphExecutor(fg, makeExecutor, fnLabel);
  const checkPool = (): void => {
    if (!bound?.closed) return;
    if (options.pool) throw new PoolClosedError(fnLabel);
    bound = undefined;
    graphExecutor.restart();
  };
  const observer: RunObserver | undefined = profile && { onTask, now: () => profile.now(), onNode: (n, a, b) => profile.recordNode(n, a, b) };
  // A mode's runtime works on the values it is given: those that inplace nodes overwrite (mutable
  // inputs, updated shared variables) are copies, so a failing call changes nothing the caller holds.
  const destroyed = destroyedInputs(fg);
  const overwritten = fg.inputs.flatMap((v, i) => (destroyed.has(v) ? [i] : []));
  /** Runs the graph: the mode's runtime, or plans (the reference executor once a plan proves impossible). */
  const execute = async (values: NdArray[], signal: AbortSignal | undefined): Promise<NdArray[]> => {
    if (modeRuntime) {
      const own = values.map((v, i) => (overwritten.includes(i) ? (fg.inputs[i]!.type as TensorType).copyValue(v) : v));
      return modeRuntime.run(own, signal);
    }
    try {
      return await graphExecutor.run(values, signal, observer);
    } finally {
      if (profile) profile.fallback = graphExecutor.fallback;
    }
  };
  if (profile) profile.compileTime = performance.now() - compileStarted;
  const nOut = outList.length;
  /** Outputs of other Types than tensors, which the caller gets as copies (tensors get a DeepCopyOp where they alias). */
  const copiedOutputs = fg.outputs.slice(0, nOut).map((v) => !isTensorVariable(v));
  const updated = updates.map(([s]) => s);
  const inputTypes = fg.inputs.slice(0, explicit.length).map((v) => v.type as TensorType);
  let disposed = false;

  // Calls past the gate's limit wait as small records; shared values are read when a call starts.
  const gate = new CallGate<NdArray | NdArray[]>(CALLS_AT_ONCE, fnLabel);
  /** How each argument is checked (made once: a call must not build its error texts). */
  const filterOptions: readonly FilterOptions[] = fnInputs.map((x, i) => ({
    allowDowncast: options.allowInputDowncast,
    what: `input ${i} (${x.name ?? 'unnamed'}) of ${fnLabel}`,
  }));
  /** The explicit arguments of a call, checked and converted by their inputs' types. */
  const checkedValues = (args: readonly unknown[]): NdArray[] => {
    if (args.length !== explicit.length) {
      const names = fnInputs.map((x, i) => x.name ?? `input ${i}`).join(', ');
      throw new TypeError(`${fnLabel} expects ${explicit.length} argument${explicit.length === 1 ? '' : 's'} (${names}), got ${args.length}`);
    }
    return args.map((a, i) => inputTypes[i]!.filter(a, filterOptions[i]));
  };
  const call = (...args: unknown[]): Promise<NdArray | NdArray[]> => {
    let values: NdArray[];
    let signal: AbortSignal | undefined;
    try {
      const callOptions = args.length === explicit.length + 1 && isCallOptions(args[args.length - 1]) ? (args.pop() as CallOptions) : {};
      signal = callOptions.signal;
      if (disposed) throw new Error(`${fnLabel} was disposed`);
      if (signal?.aborted) throw abortedBy(signal, `${fnLabel}: the call was aborted before it started`);
      values = checkedValues(args);
      // A call that runs on the calling thread with nothing ahead of it runs now: the promise
      // layers of the path below cost as much as a small call's work (W6's scalar call).
      if (!modeRuntime && !profile && gate.open && graphExecutor.mayRunNow) {
        const done = runNow(values);
        if (done) return Promise.resolve(done);
      }
    } catch (e) {
      return Promise.reject(e);
    }
    return gate.run(() => runCall(values, signal), signal);
  };

  /**
   * The values a call runs on: its arguments, then the shared variables' values now. Until
   * `stopReading(values, explicit.length)`, no shared value kept in the pool's memory is given back.
   */
  const startCall = (values: NdArray[]): NdArray[] => {
    if (disposed) throw new Error(`${fnLabel} was disposed`);
    checkPool();
    for (const s of sharedInputs) values.push(currentValue(s));
    startReading(values, explicit.length);
    return values;
  };

  /** The call's result from the graph's outputs; the updates are stored, all or none. */
  const endCall = (results: readonly NdArray[], callStarted: number | undefined): NdArray | NdArray[] => {
    // Every new value is checked before any is stored, so that updates apply all or not at all.
    const newValues = updated.map((s, k) => s.type.filter(results[nOut + k], { what: `the update of ${s} by ${fnLabel}` }));
    updated.forEach((s, k) => {
      const old = currentValue(s);
      s.setValue(newValues[k], { borrow: true });
      // A value this function kept in the pool's memory goes back once no call reads it, unless
      // someone was given it (getValue({ borrow: true })): then it stays theirs.
      if (old !== newValues[k] && !wasLent(old)) retire(old);
    });
    const outs = results.slice(0, nOut).map((v, j) => (copiedOutputs[j] ? (fg.outputs[j]!.type.copyValue(v) as NdArray) : v));
    if (profile && callStarted !== undefined) profile.recordCall(performance.now() - callStarted);
    return single ? outs[0]! : outs;
  };

  const runCall = async (values: NdArray[], signal: AbortSignal | undefined): Promise<NdArray | NdArray[]> => {
    startCall(values);
    try {
      const callStarted = performance.now();
      return endCall(await execute(values, signal), callStarted);
    } finally {
      stopReading(values, explicit.length);
    }
  };

  /**
   * Runs the call now if its plan runs on the calling thread; undefined, having changed nothing
   * (the shared values it read are taken off again), when it must go through `runCall`.
   */
  const runNow = (values: NdArray[]): NdArray | NdArray[] | undefined => {
    startCall(values);
    let results: NdArray[] | undefined;
    try {
      results = graphExecutor.runNow(values);
      return results && endCall(results, undefined);
    } finally {
      stopReading(values, explicit.length);
      if (!results) values.length = explicit.length;
    }
  };

  /** The plan a call with these values runs (the shared variables' current values included). */
  const planInfo = (...args: unknown[]): PlanInfo => {
    if (disposed) throw new Error(`${fnLabel} was disposed`);
    if (modeRuntime) throw new Error(`${fnLabel} has no plan: its calls run in ${mode} (every node checked on the calling thread)`);
    checkPool();
    const values = checkedValues(args);
    for (const s of sharedInputs) values.push(currentValue(s));
    return graphExecutor.planInfo(values);
  };

  Object.defineProperty(call, 'name', { value: options.name ?? 'weft function' });
  return Object.assign(call, {
    fgraph: fg,
    inputs: fnInputs,
    updated,
    mode,
    profile,
    planInfo,
    dispose: () => {
      disposed = true;
      graphExecutor.dispose();
    },
  }) as unknown as WeftFunction<NdArray | NdArray[]>;
}
