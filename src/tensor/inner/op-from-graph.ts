// OpFromGraph (Theano's): a graph packaged as one op. Its inputs are the given variables plus,
// invisibly, the shared variables the graph reads (their current values are used at each call,
// and outer updates of them work). Equal inner graphs make equal ops, so their applications
// merge. It is differentiated by a pullback that is itself an OpFromGraph, built once; Lop and
// Rop can be overridden (as a whole or per input/output; see op-from-graph-overrides.ts). With
// `inline: true` an early rewrite expands it into the outer graph.
// A shared variable read inside whose default update the graph computes (a random draw's state)
// gets that update as a hidden output of every application: `call` returns the user's outputs,
// and compile() asks `defaultUpdates(node)` for the rest, so each call advances the state. As in
// PyTensor, where the state is an implicit input of each application, applications of one op
// read the same state value within a call and so draw the same numbers (equal applications may
// then merge); the state advances once. Ops built from different draws read different states.
import { Apply } from '../../graph/apply.js';
import { DestroyHandler } from '../../graph/destroy-handler.js';
import { cloneReplace } from '../../graph/clone.js';
import { ioConnectionPattern } from '../../graph/connection-pattern.js';
import { FunctionGraph } from '../../graph/fgraph.js';
import { disconnected, gradUndefined, isDisconnected, isNullGrad, NullGradientError, NullType } from '../../graph/gradient.js';
import type { KernelCall, KernelContext, SymbolicShape } from '../../graph/op.js';
import { ReferenceExecutor } from '../../graph/reference-executor.js';
import { FAST_RUN_QUERY, rewriteWith } from '../../graph/rewriting/optdb.js';
import { SharedVariable } from '../../graph/shared.js';
import { graphStructure } from '../../graph/structure.js';
import { graphInputs, ioToposort } from '../../graph/traversal.js';
import { isConstant, Variable } from '../../graph/variable.js';
import { isDiscreteDtype, isFloatDtype } from '../../kernels/dtype.js';
import type { TensorView } from '../../kernels/view.js';
import { evalPointOrZeros } from '../shape/alloc.js';
import { asTensorVariable, constant } from '../core/as-tensor.js';
import { config } from '../core/config.js';
import { literalDtype } from '../core/dtype.js';
import { Lop, Rop } from '../gradient/grad.js';
import { copyArray, flattenNested, nestedShape, type NdArray } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { traceOverride, TracedOverride, type LopOverride, type OverrideResult, type RopOverride } from './op-from-graph-overrides.js';
import { ShapeFeature } from '../rewriting/shape-feature.js';
import { TensorType } from '../core/type.js';
import { isTensorVariable, TensorSharedVariable, type TensorLike, type TensorVariable } from '../core/variable.js';

export type { LopOverride, RopOverride } from './op-from-graph-overrides.js';

export interface OpFromGraphOptions {
  /** Expand the op into the outer graph early in compilation, so outer rewrites see inside. */
  readonly inline?: boolean;
  readonly name?: string;
  /** Replaces the pullback, as a whole or per explicit input (traced once, at construction). */
  readonly lopOverrides?: LopOverride;
  /** Replaces the pushforward, as a whole or per output (traced once, at construction). */
  readonly ropOverrides?: RopOverride;
  /** pattern[i][j]: does output j depend on input i (explicit inputs)? Computed when omitted. */
  readonly connectionPattern?: readonly (readonly boolean[])[];
}

/** The overrides in normal form: their identity (a prop) is that of their traced graphs. */
export interface Overrides {
  readonly lop: TracedOverride | null;
  readonly rop: TracedOverride | null;
}

/** The outputs an OpFromGraph is made with: one variable, or a list of them. */
export type GraphOutputs = TensorVariable | readonly [] | readonly TensorVariable[];
/** What `call` returns for those outputs: one variable for one output, else an array. */
export type CallResult<O extends GraphOutputs> = O extends TensorVariable
  ? TensorVariable
  : O extends readonly [TensorVariable]
    ? TensorVariable
    : O extends readonly TensorVariable[]
      ? number extends O['length']
        ? TensorVariable | TensorVariable[] // a list of unknown length: either
        : TensorVariable[]
      : never;

export class OpFromGraph<O extends GraphOutputs = GraphOutputs> extends TensorOp<CallResult<O>> {
  static override readonly props = ['structure', 'inline', 'overrides'] as const;
  /** The encapsulated graph: the explicit inputs, then the shared variables it reads. */
  readonly inner: FunctionGraph;
  readonly structure: string;
  readonly inline: boolean;
  readonly overrides: Overrides;
  readonly name: string;
  /** Shared variables the graph reads: inputs of every application, after the explicit ones. */
  readonly shared: readonly TensorSharedVariable[];
  readonly nExplicit: number;
  /** The user's outputs; the inner graph's outputs after them are the hidden default updates. */
  readonly nVisible: number;
  /** The shared variables whose default updates are the hidden outputs, in their order. */
  readonly updatedShared: readonly TensorSharedVariable[];
  #userGraph: FunctionGraph | undefined;
  /** Explicit inputs whose gradient the inner graph does not define, with the reason. */
  readonly #undefinedGrads = new Map<number, string>();
  #executor: ReferenceExecutor | undefined;
  #compiled: FunctionGraph | undefined;
  #pattern: boolean[][] | undefined;
  /** Pullbacks and pushforwards for subsets of the inputs / outputs (the others are overridden). */
  readonly #pullbacks = new Map<string, OpFromGraph>();
  readonly #pushforwards = new Map<string, OpFromGraph>();
  #shapeFeature: ShapeFeature | undefined;
  #shapeProgram: { ranks: number[]; executor: ReferenceExecutor } | undefined;

  constructor(
    inputs: readonly TensorVariable[],
    outputs: O,
    readonly options: OpFromGraphOptions = {},
  ) {
    super();
    const outs = Array.isArray(outputs) ? (outputs as readonly TensorVariable[]) : [outputs as TensorVariable];
    inputs.forEach((x, i) => {
      if (!isTensorVariable(x)) throw new TypeError(`OpFromGraph: input ${i} is not a tensor variable: ${String(x)}`);
      if (isConstant(x)) throw new TypeError(`OpFromGraph: input ${i} (${x}) is a constant; inputs must be symbolic`);
      if (x instanceof SharedVariable) throw new TypeError(`OpFromGraph: input ${i} (${x}) is a shared variable; shared variables are found by themselves`);
    });
    outs.forEach((o, i) => {
      if (!isTensorVariable(o)) throw new TypeError(`OpFromGraph: output ${i} is not a tensor variable: ${String(o)}`);
    });
    const blockers = new Set<Variable>(inputs);
    const shared: TensorSharedVariable[] = [];
    for (const v of graphInputs(outs, blockers)) {
      if (blockers.has(v) || isConstant(v)) continue;
      if (v instanceof TensorSharedVariable) shared.push(v);
      else throw new TypeError(`OpFromGraph: the outputs depend on ${v} (${v.type}), which is not among the inputs`);
    }
    this.shared = shared;
    this.nExplicit = inputs.length;
    this.nVisible = outs.length;
    // Default updates of the shared variables read here that the graph can compute from its own
    // inputs (a draw's next state) become hidden outputs; others stay for the outer function.
    const readable = new Set<Variable>([...inputs, ...shared]);
    const hidden = collectDefaultUpdates(outs, blockers, {
      wanted: (s) => shared.includes(s),
      usable: (v) => graphInputs([v], readable).every((u) => readable.has(u) || isConstant(u)),
    });
    this.updatedShared = hidden.map(([s]) => s);
    this.inner = new FunctionGraph([...inputs, ...shared], [...outs, ...hidden.map(([, v]) => v)]);
    this.structure = graphStructure(this.inner);
    this.inline = options.inline ?? false;
    this.name = options.name ?? 'OpFromGraph';
    checkPattern(options.connectionPattern, this.nExplicit, this.nVisible, String(this));
    this.overrides = { lop: this.#traceLop(options.lopOverrides), rop: this.#traceRop(options.ropOverrides) };
  }

  /** The Lop override, traced on (inputs, outputs, output gradients) placeholders. */
  #traceLop(override: LopOverride | undefined): TracedOverride | null {
    if (override === undefined) return null;
    const xs = this.innerInputs.slice(0, this.nExplicit).map((x) => x.type.makeVariable(x.name));
    const ys = this.visibleOutputs.map((y) => y.type.makeVariable(y.name));
    const gys = this.visibleOutputs.map((y, j) => tangentType(y.type).makeVariable(`g${j}`));
    return traceOverride({ ...this.#traceContext('lopOverrides', 'lop'), groups: [xs, ys, gys], targets: xs, targetKind: 'input' }, override);
  }

  /** The Rop override, traced on (inputs, eval points) placeholders. */
  #traceRop(override: RopOverride | undefined): TracedOverride | null {
    if (override === undefined) return null;
    const xs = this.innerInputs.slice(0, this.nExplicit).map((x) => x.type.makeVariable(x.name));
    const evs = xs.map((x, i) => tangentType(x.type).makeVariable(`v${i}`));
    return traceOverride({ ...this.#traceContext('ropOverrides', 'rop'), groups: [xs, evs], targets: this.visibleOutputs, targetKind: 'output' }, override);
  }

  #traceContext(which: 'lopOverrides' | 'ropOverrides', suffix: string) {
    return {
      which,
      where: String(this),
      isGraphOp: (x: unknown): x is OpFromGraph => x instanceof OpFromGraph,
      // As in PyTensor, the traced override is an OpFromGraph, inlined when this op is.
      build: (ins: readonly TensorVariable[], outs: readonly TensorVariable[]) => new OpFromGraph(ins, outs, { name: `${this.name}.${suffix}`, inline: this.inline }),
    } as const;
  }

  /** The Lop override in normal form (undefined without one). */
  get lopOverride(): TracedOverride | undefined {
    return this.overrides.lop ?? undefined;
  }

  /** The Rop override in normal form (undefined without one). */
  get ropOverride(): TracedOverride | undefined {
    return this.overrides.rop ?? undefined;
  }

  get innerInputs(): readonly TensorVariable[] {
    return this.inner.inputs as TensorVariable[];
  }

  /** Every output of the inner graph: the user's, then the hidden default updates. */
  get innerOutputs(): readonly TensorVariable[] {
    return this.inner.outputs as TensorVariable[];
  }

  /** The user's outputs of the inner graph. */
  get visibleOutputs(): readonly TensorVariable[] {
    return this.innerOutputs.slice(0, this.nVisible);
  }

  /** The graph as the user gave it (without the hidden outputs): what documents store. */
  get userGraph(): FunctionGraph {
    if (this.nVisible === this.inner.outputs.length) return this.inner;
    return (this.#userGraph ??= new FunctionGraph(this.inner.inputs, this.visibleOutputs, { clone: false }));
  }

  /** The user's outputs of an application (one variable, or an array when there are several). */
  override call(...inputs: unknown[]): CallResult<O> {
    const outs = this.makeNode(...inputs).outputs.slice(0, this.nVisible) as TensorVariable[];
    return (outs.length === 1 ? outs[0]! : outs) as CallResult<O>;
  }

  /**
   * The default updates that an application computes: [shared variable, new value] for each
   * hidden output whose shared variable the node still reads (a graph rebuilt with other
   * variables in those places, as in a pullback, updates nothing).
   */
  defaultUpdates(node: Apply): Array<[TensorSharedVariable, TensorVariable]> {
    return this.updatedShared.flatMap((s, k): Array<[TensorSharedVariable, TensorVariable]> =>
      node.inputs[this.nExplicit + this.shared.indexOf(s)] === s ? [[s, node.outputs[this.nVisible + k] as TensorVariable]] : [],
    );
  }

  override makeNode(...args: unknown[]): Apply {
    if (args.length !== this.nExplicit) {
      throw new TypeError(`${this}: expected ${this.nExplicit} input${this.nExplicit === 1 ? '' : 's'}, got ${args.length}`);
    }
    const inputs = args.map((a, i) => {
      const want = this.innerInputs[i]!.type as TensorType;
      const v = this.#asInput(a, i, want);
      if (want.equals(v.type) || want.convertVariable(v)) return v;
      throw new TypeError(`${this}: input ${i} (${v}) has type ${v.type}, the graph expects ${want}`);
    });
    const outputs = this.innerOutputs.map((o) => o.type.makeVariable());
    return new Apply(this, [...inputs, ...this.shared], outputs);
  }

  /** An argument as a variable; JS numbers and nested arrays of them take the input's dtype where they fit. */
  #asInput(a: unknown, i: number, want: TensorType): TensorVariable {
    if (typeof a === 'number' || typeof a === 'boolean' || Array.isArray(a)) {
      nestedShape(a, `${this}: input ${i}`);
      const dtype = literalDtype(flattenNested(a), want.dtype);
      if (dtype !== want.dtype) throw new TypeError(`${this}: input ${i} (${JSON.stringify(a)}) does not fit the graph's ${want}`);
      return constant(a as TensorLike, { dtype });
    }
    try {
      return asTensorVariable(a as TensorLike);
    } catch (e) {
      throw new TypeError(`${this}: input ${i}: ${(e as Error).message}`);
    }
  }

  /** The inner graph as it runs: rewritten once, as FAST_RUN rewrites functions. */
  get compiled(): FunctionGraph {
    return (this.#compiled ??= rewrittenCopy(this.inner));
  }

  /** In a plan: one task that runs the inner graph's own plan in one worker (when it can). */
  override kernel(_node: Apply, context?: KernelContext): KernelCall | undefined {
    return context?.planInner(this.compiled, context.inputs);
  }

  /** Runs the inner graph (rewritten once, as FAST_RUN would) on the calling thread. */
  override perform(_node: Apply, inputs: readonly NdArray[]): NdArray[] {
    this.#executor ??= new ReferenceExecutor(this.compiled);
    const results = this.#executor.run(inputs) as NdArray[];
    // What the caller of perform gets must not alias the inputs (this op declares no view).
    return results.map((r) => (inputs.some((x) => x.data.buffer === r.data.buffer) ? copyArray(r) : r));
  }

  /** The output shapes through the inner graph, from the inputs' shapes (and small values). */
  override outputShapes(_node: Apply, inputs: readonly TensorView[]): number[][] {
    if (!this.#shapeProgram) {
      const feature = (this.#shapeFeature ??= new ShapeFeature());
      const dims = this.innerOutputs.map((o) => feature.shapeOf(o));
      this.#shapeProgram = { ranks: dims.map((d) => d.length), executor: new ReferenceExecutor(new FunctionGraph(this.inner.inputs, dims.flat())) };
    }
    const { ranks, executor } = this.#shapeProgram;
    const values = executor.run(inputs.map((v) => v as NdArray)) as NdArray[];
    let k = 0;
    return ranks.map((n) => Array.from({ length: n }, () => {
      const d = values[k++]!;
      return Number(d.data[d.offset]);
    }));
  }

  override inferShape(node: Apply): SymbolicShape[] {
    const feature = (this.#shapeFeature ??= new ShapeFeature());
    const outer = this.inner.inputs.map((v, i): [Variable, Variable] => [v, node.inputs[i]!]);
    return this.innerOutputs.map((o) => cloneReplace(feature.shapeOf(o), outer));
  }

  /**
   * pattern[i][j]: does output j depend on input i, through the connections the inner ops declare
   * (Theano's io_connection_pattern)? Rows are all inputs (explicit, then shared), columns all
   * outputs (the user's, then the hidden updates); a given pattern replaces the explicit part.
   */
  override connectionPattern(): boolean[][] {
    const computed = (this.#pattern ??= ioConnectionPattern(this.inner.inputs, this.innerOutputs));
    const given = this.options.connectionPattern;
    return computed.map((row, i) => (given && i < this.nExplicit ? [...given[i]!, ...row.slice(this.nVisible)] : [...row]));
  }

  override Lop(inputs: readonly TensorVariable[], allOutputs: readonly TensorVariable[], allGrads: readonly TensorVariable[]): Variable[] {
    const pattern = this.connectionPattern();
    // Hidden outputs (default updates) carry no gradient: only the user's outputs enter here.
    const outputs = allOutputs.slice(0, this.nVisible);
    const outputGrads = allGrads.slice(0, this.nVisible);
    const overridden = this.lopOverride?.apply([...inputs.slice(0, this.nExplicit), ...outputs, ...outputGrads]);
    // Shared inputs, and explicit ones the override leaves to the default, get the inner graph's gradient.
    const sources = inputs.map((_, i): OverrideResult => overridden?.[i] ?? 'default');
    const needed = inputs.map((x, i) => sources[i] === 'default' && pattern[i]!.some(Boolean) && !isDiscreteDtype(x.dtype));
    const defaults = needed.some(Boolean) ? asArray(this.#pullbackFor(needed).call(...inputs, ...outputGrads)) : [];
    const position = positions(needed);
    return inputs.map((x, i) => {
      const s = sources[i]!;
      if (!pattern[i]!.some(Boolean) || isDiscreteDtype(x.dtype) || s === 'disconnected') return disconnected();
      if (s instanceof Variable) return s;
      if (s !== 'default') return gradUndefined(this, i, s.undefined);
      const why = this.#undefinedGrads.get(i);
      return why === undefined ? defaults[position[i]!]! : gradUndefined(this, i, why);
    });
  }

  /** The pullback as an OpFromGraph over (inputs..., output gradients...), built once. */
  pullback(): OpFromGraph {
    return this.#pullbackFor(this.innerInputs.map(() => true));
  }

  /**
   * The pullback for the inputs marked in `which`: an OpFromGraph over (inputs..., output
   * gradients...) with one output per marked input, built once per subset.
   */
  #pullbackFor(which: readonly boolean[]): OpFromGraph {
    const cacheKey = which.map(Number).join('');
    let op = this.#pullbacks.get(cacheKey);
    if (!op) {
      const xs = this.innerInputs.map((x) => x.type.makeVariable(x.name && `${x.name}`));
      const ys = cloneReplace(this.visibleOutputs, this.inner.inputs.map((v, i): [Variable, Variable] => [v, xs[i]!])) as TensorVariable[];
      const gys = ys.map((y, j) => tangentType(y.type).makeVariable(`g${j}`));
      const wrt = xs.filter((x, i) => which[i] && !isDiscreteDtype(x.dtype));
      const grads = this.#innerGrads(ys, wrt, gys, xs);
      // Discrete inputs have no gradient, nor those the graph leaves undefined (the outer Lop says
      // so); their slots hold zeros that the outer Lop drops.
      const byInput = xs.flatMap((x, i) => {
        if (!which[i]) return [];
        const k = wrt.indexOf(x);
        return [k < 0 || this.#undefinedGrads.has(i) ? x.mul(0) : grads[k]!];
      });
      if (byInput.some((g) => isDisconnected(g) || isNullGrad(g))) {
        throw new Error(`${this}: the inner graph has a gradient that is not defined`);
      }
      op = new OpFromGraph([...xs, ...gys], byInput, { name: `${this.name}.grad` });
      this.#pullbacks.set(cacheKey, op);
    }
    return op;
  }

  /**
   * The inner gradients with respect to `wrt`. When some are undefined (a parameter of a random
   * draw, say), each input is tried alone: the others keep their gradient, and those are recorded.
   */
  #innerGrads(ys: readonly TensorVariable[], wrt: readonly TensorVariable[], gys: readonly TensorVariable[], xs: readonly TensorVariable[]): TensorVariable[] {
    try {
      return Lop(ys, wrt, gys) as TensorVariable[];
    } catch (e) {
      if (!(e instanceof NullGradientError)) throw e;
    }
    return wrt.map((x) => {
      try {
        return (Lop(ys, [x], gys) as TensorVariable[])[0]!;
      } catch (e) {
        if (!(e instanceof NullGradientError)) throw e;
        this.#undefinedGrads.set(xs.indexOf(x), e.message.replace(/^grad: /, ''));
        return x.mul(0);
      }
    });
  }

  override rop(inputs: readonly TensorVariable[], evalPoints: readonly Variable[]): Variable[] {
    // Overrides get a tensor in every slot: zeros where an input is discrete (its eval point is disconnected).
    const explicitPoints = evalPoints.slice(0, this.nExplicit).map((e, i) => evalPointOrZeros(e, inputs[i]!));
    const overridden = this.ropOverride?.apply([...inputs.slice(0, this.nExplicit), ...explicitPoints]);
    const sources = this.visibleOutputs.map((_, j): OverrideResult => overridden?.[j] ?? 'default');
    const needed = sources.map((s) => s === 'default');
    // Discrete inputs have no tangent (the pushforward ignores their slots, and their eval points
    // are disconnected): the input itself stands there.
    const evs = evalPoints.map((e, i) => (isDiscreteDtype(inputs[i]!.dtype) ? inputs[i]! : e));
    const defaults = needed.some(Boolean) ? asArray(this.#pushforwardFor(needed).call(...inputs, ...evs)) : [];
    const position = positions(needed);
    // Hidden outputs (default updates) move with nothing.
    return this.innerOutputs.map((_, j) => {
      const s = sources[j];
      if (s === undefined || s === 'disconnected') return disconnected();
      if (s instanceof Variable) return s;
      if (s === 'default') return defaults[position[j]!]!;
      return new NullType(`the Rop of ${this} for output ${j} is undefined: ${s.undefined}`).makeVariable();
    });
  }

  /** The pushforward as an OpFromGraph over (inputs..., directions...), built once. */
  pushforward(): OpFromGraph {
    return this.#pushforwardFor(this.visibleOutputs.map(() => true));
  }

  /** The pushforward of the outputs marked in `which` (one output each), built once per subset. */
  #pushforwardFor(which: readonly boolean[]): OpFromGraph {
    const cacheKey = which.map(Number).join('');
    let op = this.#pushforwards.get(cacheKey);
    if (!op) {
      const xs = this.innerInputs.map((x) => x.type.makeVariable(x.name));
      const outs = this.visibleOutputs.filter((_, j) => which[j]);
      const ys = cloneReplace(outs, this.inner.inputs.map((v, i): [Variable, Variable] => [v, xs[i]!])) as TensorVariable[];
      const evs = xs.map((x, i) => x.type.makeVariable(`v${i}`));
      // Discrete inputs (lengths, indices, random states) have no tangent.
      const moving = xs.map((x) => !isDiscreteDtype(x.dtype));
      const jv = Rop(ys, xs.filter((_, i) => moving[i]), evs.filter((_, i) => moving[i])) as TensorVariable[];
      op = new OpFromGraph([...xs, ...evs], jv, { name: `${this.name}.rop` });
      this.#pushforwards.set(cacheKey, op);
    }
    return op;
  }

  /** The inner graph applied to `inputs` (explicit inputs then shared ones): what inlining does. */
  expand(inputs: readonly Variable[]): Variable[] {
    return cloneReplace(this.inner.outputs, this.inner.inputs.map((v, i): [Variable, Variable] => [v, inputs[i]!]));
  }

  /** For pictures (toDot): the encapsulated graph, as the user built it. */
  override innerGraphs(): readonly FunctionGraph[] {
    return [this.inner];
  }

  override toString(): string {
    return `OpFromGraph{${this.name}}`;
  }
}

/** The type of a derivative of a variable of type `t`: t itself when it is a float, else floatX. */
function tangentType(t: TensorType): TensorType {
  return isFloatDtype(t.dtype) ? t : new TensorType(config.floatX, t.shape);
}

function asArray(r: TensorVariable | TensorVariable[]): TensorVariable[] {
  return Array.isArray(r) ? r : [r];
}

/** For each marked entry, its position among the marked ones. */
function positions(marked: readonly boolean[]): number[] {
  let k = 0;
  return marked.map((m) => (m ? k++ : -1));
}

/** A given connection pattern must have one row per explicit input and one column per output. */
function checkPattern(pattern: OpFromGraphOptions['connectionPattern'], rows: number, columns: number, where: string): void {
  if (pattern === undefined) return;
  if (pattern.length !== rows || pattern.some((row) => row.length !== columns || row.some((b) => typeof b !== 'boolean'))) {
    throw new TypeError(`${where}: connectionPattern must have one row per input (${rows}) and one boolean per output in each (${columns})`);
  }
}

/** An op whose applications compute default updates of shared variables they read (OpFromGraph). */
interface UpdatingOp {
  defaultUpdates(node: Apply): ReadonlyArray<readonly [TensorSharedVariable, TensorVariable]>;
}

function computesUpdates(op: object): op is UpdatingOp {
  return typeof (op as Partial<UpdatingOp>).defaultUpdates === 'function';
}

export interface CollectOptions {
  /** Which shared variables may get a default update here. */
  readonly wanted: (s: TensorSharedVariable) => boolean;
  /** Can this update value be computed where it will be used? (Default: yes.) */
  readonly usable?: (value: TensorVariable) => boolean;
  /** Look for default updates of the shared variables that update values read, too (compile does). */
  readonly follow?: boolean;
}

/**
 * The default updates that the graph of `roots` (walked down to `blockers`) implies for the
 * shared variables it reads, as Theano's compile collects them: first those that applications
 * compute (hidden outputs of OpFromGraph, the first application in graph order for each
 * variable), then each shared variable's own `defaultUpdate`.
 */
export function collectDefaultUpdates(
  roots: readonly Variable[],
  blockers: ReadonlySet<Variable>,
  options: CollectOptions,
): Array<[TensorSharedVariable, TensorVariable]> {
  const found = new Map<TensorSharedVariable, TensorVariable>();
  const visited = new Set<Apply>();
  let frontier: readonly Variable[] = roots;
  while (frontier.length > 0) {
    const added: TensorVariable[] = [];
    const take = (s: TensorSharedVariable, v: TensorVariable): void => {
      if (found.has(s) || !options.wanted(s) || !(options.usable?.(v) ?? true)) return;
      found.set(s, v);
      added.push(v);
    };
    for (const node of ioToposort(blockers, frontier)) {
      if (visited.has(node)) continue;
      visited.add(node);
      if (computesUpdates(node.op)) for (const [s, v] of node.op.defaultUpdates(node)) take(s, v);
    }
    for (const v of graphInputs(frontier, blockers)) {
      const update = v instanceof TensorSharedVariable ? v.defaultUpdate : undefined;
      if (update !== undefined && isTensorVariable(update)) take(v as TensorSharedVariable, update);
    }
    frontier = options.follow ? added : [];
  }
  return [...found];
}

/**
 * A copy of an inner graph as it runs (OpFromGraph, Scan): rewritten once, as FAST_RUN rewrites
 * functions, with the rewrites of the pipeline (registered by tensor/rewriting, which every
 * entry point that compiles loads).
 */
export function rewrittenCopy(fg: FunctionGraph): FunctionGraph {
  const copy = fg.clone().fgraph;
  // Inplace rewrites are checked by the destroy handler; nothing from outside may be overwritten.
  copy.attachFeature(new DestroyHandler());
  rewriteWith(copy, FAST_RUN_QUERY);
  return copy;
}
