// Scan (Theano's): a step graph applied nSteps times, each step reading one row of each sequence,
// earlier results of the recurrent outputs (their taps) and fixed non-sequences. The op sees only
// closed inner graphs and simple parts: the builder (scan.ts) turns taps of sequences into one
// sequence per tap, goBackwards into reversed sequences, and shared variables into inputs.
import { Apply } from '../../graph/apply.js';
import { cloneReplace } from '../../graph/clone.js';
import { FunctionGraph } from '../../graph/fgraph.js';
import { UnknownShapesError, type KernelCall, type KernelContext, type SymbolicShape } from '../../graph/op.js';
import { ReferenceExecutor } from '../../graph/reference-executor.js';
import { graphStructure } from '../../graph/structure.js';
import { ancestors } from '../../graph/traversal.js';
import type { Variable } from '../../graph/variable.js';
import { copyView } from '../../kernels/copy.js';
import { keptRows, stepRow } from '../../kernels/scan-rows.js';
import type { Dtype } from '../../kernels/dtype.js';
import { rowOf, sizeOf, type TensorView } from '../../kernels/view.js';
import { asTensorArgs } from '../core/as-tensor.js';
import { copyArray, empty, makeNdArray, shapeText, type NdArray } from '../core/ndarray.js';
import { TensorOp } from '../core/op.js';
import { ShapeFeature } from '../rewriting/shape-feature.js';
import { scanConnectionPattern, scanLop, scanRop } from './scan-grad.js';
import { rewrittenCopy } from './op-from-graph.js';
import { asIntScalar, constantScalar, shapeI, smallInputValues } from '../shape/shape.js';
import { TensorType } from '../core/type.js';
import { minimum } from '../elemwise/math.js';
import { TensorSharedVariable, type TensorLike, type TensorVariable } from '../core/variable.js';

/** What the parts of a Scan are; the inner graph's inputs and outputs follow this layout. */
export interface ScanSpec {
  /** Sequences (one per tap of the user's sequences): inner inputs 0 .. nSeqs-1 are their rows. */
  readonly nSeqs: number;
  /** Per recurrent output, its taps (negative, as given): one inner input each, after the sequences. */
  readonly taps: ReadonlyArray<readonly number[]>;
  /** Outputs that are not fed back (inner outputs after the recurrent ones). */
  readonly nNitsot: number;
  /** Recurrent outputs (sit-sot ones) whose last state is one more output (updates of shared variables). */
  readonly finals: readonly number[];
  /** Non-sequences: the inner graph's last inputs, the same at every step. */
  readonly nNonSeqs: number;
  /** Steps the gradient goes back through (-1: all). */
  readonly truncateGradient: number;
  /**
   * The step has one more output, last: a scalar condition (Theano's `until`); the loop stops
   * after the first step where it holds, and the stacked outputs have the rows of the steps run.
   */
  readonly until?: boolean;
  /**
   * Per stacked output (the recurrent ones, then the others), how many of its last rows it keeps,
   * or null for all (ScanSaveMem): such an output has min(nSteps, keep) rows, the last ones, and
   * serves as the ring of past states a recurrent output reads, so its keep covers its taps.
   */
  readonly keep?: ReadonlyArray<number | null>;
  /**
   * The worker kernel reads the step's rows (sequence rows, past states, non-sequences) and
   * writes its results where they are, instead of copying them (ScanInplaceOptimizer).
   */
  readonly inplace?: boolean;
}

/** How many rows of its initial state a recurrent output with these taps needs. */
export function stateRows(taps: readonly number[]): number {
  return -Math.min(...taps);
}

/**
 * Is this a recurrent output that reads only its last state (Theano's sit-sot)? Its initial
 * state is then given as the state itself, not as rows of past states.
 */
export function isSitSot(taps: readonly number[]): boolean {
  return taps.length === 1 && taps[0] === -1;
}

/** A contiguous stack `a` with `rows` rows: its first rows (a copy when it grows or shrinks). */
function withRows(a: NdArray, rows: number, dtype: Dtype): NdArray {
  if (a.shape[0] === rows) return a;
  const b = empty(dtype, [rows, ...a.shape.slice(1)]);
  const keep = Math.min(rows, a.shape[0]!) * sizeOf(a.shape.slice(1));
  b.data.set(a.data.subarray(a.offset, a.offset + keep));
  return b;
}

function rowArray(v: NdArray, r: number): NdArray {
  const row = rowOf(v, r);
  return makeNdArray(v.data, row.shape, row.stride, row.offset);
}

export class ScanOp extends TensorOp<TensorVariable[]> {
  static override readonly props = ['structure', 'layout'] as const;
  readonly structure: string;
  /** The spec as a key: equal layouts over equal step graphs make equal ops. */
  readonly layout: string;
  readonly name: string;
  #compiled: FunctionGraph | undefined;
  #executor: ReferenceExecutor | undefined;
  #shapeFeature: ShapeFeature | undefined;
  #shapeProgram: { ranks: number[]; executor: ReferenceExecutor } | undefined;

  /** @param inner the step graph (closed: its inputs are the rows, taps and non-sequences of the spec) */
  constructor(
    readonly inner: FunctionGraph,
    readonly spec: ScanSpec,
    name = 'scan',
  ) {
    super();
    this.name = name;
    spec.taps.forEach((t, k) => {
      if (t.length === 0 || t.some((tap) => !Number.isInteger(tap) || tap >= 0)) throw new TypeError(`${this}: the taps of output ${k} must be negative integers, got [${t.join(', ')}]`);
    });
    spec.finals.forEach((k) => {
      if (!(spec.taps[k] && isSitSot(spec.taps[k]!))) throw new TypeError(`${this}: a final state must be that of an output with taps [-1], got output ${k}`);
    });
    const nTaps = spec.taps.reduce((a, t) => a + t.length, 0);
    const nOuts = spec.taps.length + spec.nNitsot + (spec.until ? 1 : 0);
    if (inner.inputs.length !== spec.nSeqs + nTaps + spec.nNonSeqs || inner.outputs.length !== nOuts) {
      throw new TypeError(`${this}: the step graph has ${inner.inputs.length} inputs and ${inner.outputs.length} outputs, the spec describes ${spec.nSeqs + nTaps + spec.nNonSeqs} and ${nOuts}`);
    }
    const cond = this.condition;
    if (cond && (cond.type as TensorType).ndim !== 0) throw new TypeError(`${this}: the until condition must be a scalar, got ${cond.type}`);
    if (spec.keep) this.#checkKeep(spec.keep);
    this.structure = graphStructure(inner);
    const keep = spec.keep ? [{ keep: spec.keep }] : [];
    const inplace = spec.inplace ? ['inplace'] : [];
    this.layout = JSON.stringify([spec.nSeqs, spec.taps, spec.nNitsot, spec.finals, spec.nNonSeqs, spec.truncateGradient, ...(spec.until ? ['until'] : []), ...keep, ...inplace]);
  }

  /** A kept number of rows: one per stacked output, covering a recurrent output's taps, never with until. */
  #checkKeep(keep: ReadonlyArray<number | null>): void {
    const { taps, nNitsot, until } = this.spec;
    if (until) throw new TypeError(`${this}: a loop with an until condition keeps every row (how many it runs is known once it ran)`);
    if (keep.length !== taps.length + nNitsot) throw new TypeError(`${this}: keep has ${keep.length} entries, expected one per stacked output (${taps.length + nNitsot})`);
    keep.forEach((k, j) => {
      if (k === null) return;
      const least = j < taps.length ? stateRows(taps[j]!) : 1;
      if (!Number.isInteger(k) || k < least) throw new TypeError(`${this}: output ${j} must keep an integer number of rows of at least ${least}, got ${k}`);
    });
  }

  /** How many last rows stacked output j keeps (null: all). */
  keepOf(j: number): number | null {
    return this.spec.keep?.[j] ?? null;
  }

  /** The step's outputs that are stacked: the recurrent ones, then the others (not the condition). */
  get stepOutputs(): readonly TensorVariable[] {
    return this.inner.outputs.slice(0, this.spec.taps.length + this.spec.nNitsot) as TensorVariable[];
  }

  /** The until condition of the step graph, when the loop has one. */
  get condition(): TensorVariable | undefined {
    return this.spec.until ? (this.inner.outputs[this.inner.outputs.length - 1] as TensorVariable) : undefined;
  }

  get nRec(): number {
    return this.spec.taps.length;
  }

  /** Inner input index of the first tap of recurrent output k. */
  tapInput(k: number): number {
    return this.spec.nSeqs + this.spec.taps.slice(0, k).reduce((a, t) => a + t.length, 0);
  }

  get firstNonSeq(): number {
    return this.inner.inputs.length - this.spec.nNonSeqs;
  }

  /** The step graph as it runs: rewritten once, as FAST_RUN rewrites functions. */
  get compiled(): FunctionGraph {
    return (this.#compiled ??= rewrittenCopy(this.inner));
  }

  /** Outer inputs: nSteps, the sequences, the initial states (rows = -min tap), the non-sequences. */
  override makeNode(...args: unknown[]): Apply {
    const { nSeqs, taps, nNonSeqs } = this.spec;
    const expected = 1 + nSeqs + taps.length + nNonSeqs;
    if (args.length !== expected) throw new TypeError(`${this}: expected ${expected} inputs, got ${args.length}`);
    const n = asIntScalar(args[0] as number | TensorVariable, `${this}: nSteps`);
    const rest = asTensorArgs(args.slice(1) as TensorLike[], String(this));
    const innerIns = this.inner.inputs as TensorVariable[];
    const check = (v: TensorVariable, want: TensorType, what: string): TensorVariable => {
      if (want.equals(v.type) || want.convertVariable(v)) return v;
      throw new TypeError(`${this}: ${what} (${v}) has type ${v.type}, expected ${want}`);
    };
    const stacked = (row: TensorType, len: number | null): TensorType => new TensorType(row.dtype, [len, ...row.shape]);
    const seqs = rest.slice(0, nSeqs).map((v, i) => {
      const row = innerIns[i]!.type as TensorType;
      return check(v, new TensorType(row.dtype, [v.type.shape[0] ?? null, ...row.shape]), `sequence ${i}`);
    });
    const inits = rest.slice(nSeqs, nSeqs + taps.length).map((v, k) => {
      const row = innerIns[this.tapInput(k)]!.type as TensorType;
      return check(v, isSitSot(taps[k]!) ? row : stacked(row, v.type.shape[0] ?? null), `the initial state of output ${k}`);
    });
    const nonSeqs = rest.slice(nSeqs + taps.length).map((v, m) => check(v, innerIns[this.firstNonSeq + m]!.type as TensorType, `non-sequence ${m}`));
    // An until condition may stop the loop early: the number of rows is known once it has run.
    const steps = this.spec.until ? undefined : constantScalar(n);
    const len = (j: number): number | null => (steps === undefined ? null : keptRows(steps, this.keepOf(j)));
    const outputs = [
      ...inits.map((_, k) => stacked(innerIns[this.tapInput(k)]!.type as TensorType, len(k)).makeVariable()),
      ...this.stepOutputs.slice(taps.length).map((o, j) => stacked(o.type as TensorType, len(taps.length + j)).makeVariable()),
      ...this.spec.finals.map((k) => (innerIns[this.tapInput(k)]!.type as TensorType).makeVariable()),
    ];
    return new Apply(this, [n, ...seqs, ...inits, ...nonSeqs], outputs);
  }

  /**
   * The new values of the shared variables whose states the loop carries (its last states), as
   * compile collects default updates: for each final state whose initial state is a shared variable.
   */
  defaultUpdates(node: Apply): Array<[TensorSharedVariable, TensorVariable]> {
    const first = 1 + this.spec.nSeqs;
    const finalsAt = this.nRec + this.spec.nNitsot;
    return this.spec.finals.flatMap((k, f): Array<[TensorSharedVariable, TensorVariable]> => {
      const s = node.inputs[first + k];
      return s instanceof TensorSharedVariable ? [[s, node.outputs[finalsAt + f] as TensorVariable]] : [];
    });
  }

  /** The number of steps, checked against the sequences and the initial states. */
  steps(inputs: readonly TensorView[]): number {
    const n = smallInputValues(inputs[0]!, `${this}: nSteps`)[0]!;
    if (!(n >= 0)) throw new RangeError(`${this}: nSteps must not be negative, got ${n}`);
    for (let i = 0; i < this.spec.nSeqs; i++) {
      const len = inputs[1 + i]!.shape[0]!;
      if (len < n) throw new RangeError(`${this}: nSteps is ${n} but sequence ${i} has only ${len} step${len === 1 ? '' : 's'}`);
    }
    this.spec.taps.forEach((t, k) => {
      if (isSitSot(t)) return;
      const rows = inputs[1 + this.spec.nSeqs + k]!.shape[0]!;
      if (rows < stateRows(t)) {
        throw new RangeError(`${this}: the initial state of output ${k} has ${rows} row${rows === 1 ? '' : 's'}, its taps [${t.join(', ')}] need ${stateRows(t)}`);
      }
    });
    return n;
  }

  /** Row `r` of recurrent output k's initial state (a sit-sot state is its own row). */
  #initRow(init: TensorView, k: number, r: number): TensorView {
    return isSitSot(this.spec.taps[k]!) ? init : rowOf(init, r);
  }

  /**
   * The inner graph's inputs for a step's shapes: rows of the sequences and states, the
   * non-sequences. Without a step (`zeroRows`) a sequence may have no row: zeros of a row's
   * shape stand in for them, so that the shapes the step would give are still known.
   */
  #innerShapes(inputs: readonly TensorView[], zeroRows = false): TensorView[] {
    const { nSeqs, taps } = this.spec;
    const views: TensorView[] = [];
    const innerIns = this.inner.inputs as TensorVariable[];
    for (let i = 0; i < nSeqs; i++) views.push(zeroRows ? empty(innerIns[i]!.dtype, inputs[1 + i]!.shape.slice(1)) : rowOf(inputs[1 + i]!, 0));
    taps.forEach((t, k) => t.forEach(() => views.push(this.#initRow(inputs[1 + nSeqs + k]!, k, 0))));
    views.push(...inputs.slice(1 + nSeqs + taps.length));
    return views;
  }

  /** The shape of each inner output at a step, for inner inputs of these shapes. */
  stepShapes(innerInputs: readonly TensorView[]): number[][] {
    if (!this.#shapeProgram) {
      const feature = (this.#shapeFeature ??= new ShapeFeature());
      const dims = this.inner.outputs.map((o) => feature.shapeOf(o));
      this.#shapeProgram = { ranks: dims.map((d) => d.length), executor: new ReferenceExecutor(new FunctionGraph(this.inner.inputs, dims.flat())) };
    }
    const { ranks, executor } = this.#shapeProgram;
    const values = executor.run(innerInputs.map((v) => v as NdArray)) as NdArray[];
    let k = 0;
    return ranks.map((r) => Array.from({ length: r }, () => Number(values[k]!.data[values[k++]!.offset])));
  }

  /** Checks that a recurrent output's step keeps its state's shape. */
  #checkState(k: number, got: readonly number[], want: readonly number[], step?: number): void {
    if (got.length === want.length && got.every((d, a) => d === want[a])) return;
    const at = step === undefined ? '' : ` at step ${step}`;
    throw new RangeError(`${this}: the step gives output ${k} the shape ${shapeText(got)}${at}, but its state has shape ${shapeText(want)}; a recurrent output keeps its state's shape`);
  }

  override outputShapes(_node: Apply, inputs: readonly TensorView[]): number[][] {
    if (this.spec.until) {
      this.steps(inputs);
      throw new UnknownShapesError(`${this} stops at its until condition: how many rows its outputs have is known once it has run`);
    }
    return this.#shapes(inputs, this.steps(inputs));
  }

  /** The output shapes when the loop runs `n` steps. */
  #shapes(inputs: readonly TensorView[], n: number): number[][] {
    const { nSeqs, taps, nNitsot, finals } = this.spec;
    const states = taps.map((t, k) => inputs[1 + nSeqs + k]!.shape.slice(isSitSot(t) ? 0 : 1));
    let step: number[][];
    if (n > 0) {
      step = this.stepShapes(this.#innerShapes(inputs));
      step.slice(0, taps.length).forEach((s, k) => this.#checkState(k, s, states[k]!));
    } else {
      // Without a step the rows of the outputs not fed back have the shapes a step would give
      // them (an empty (0, 3) stack, not (0, 0)): gradients of zero steps keep their inputs'
      // shapes. Shapes that only the values of real rows decide fall back to the static ones.
      let others: number[][];
      try {
        others = this.stepShapes(this.#innerShapes(inputs, true)).slice(taps.length);
      } catch {
        others = this.stepOutputs.slice(taps.length).map((o) => (o.type as TensorType).shape.map((d) => d ?? 0));
      }
      step = [...states, ...others];
    }
    return [...step.slice(0, taps.length + nNitsot).map((s, j) => [keptRows(n, this.keepOf(j)), ...s]), ...finals.map((k) => states[k]!)];
  }

  /**
   * In a plan: the whole loop as one task that runs the step's own plan (when it can), whose
   * steps idle members help with when a step has work enough (workers/nested-team.ts). A loop
   * with an until condition runs on the calling thread: its outputs' size is known only once it ran.
   */
  override kernel(_node: Apply, context?: KernelContext): KernelCall | undefined {
    if (!context || this.spec.until) return undefined;
    const inputs = context.inputs;
    // Without a step there is nothing to plan (the rows to plan with do not exist).
    if (this.steps(inputs) === 0) return undefined;
    const { nSeqs, taps, nNitsot, finals } = this.spec;
    const fg = this.compiled;
    // Rows change at every step: a plan that reads their values would hold for the first step only.
    if (context.valueInputs(fg).some((i) => i < this.firstNonSeq)) return undefined;
    // The step is planned for the shapes of its first step's rows, taps and the non-sequences.
    const step = context.planInner(fg, this.#innerShapes(inputs));
    if (!step) return undefined;
    // The worker kernel 'scanLoop' (its params are workers/scan-loop.ts's ScanLoopParams) runs
    // the step's plan nSteps times in one task.
    const keep = this.spec.keep ?? null;
    const params = { step: step.params, nSeqs, taps, nNitsot, finals, keep, inplace: this.spec.inplace === true } as unknown as KernelCall['params'];
    // The step plan's width and work (InnerPlanParams'): each step may be shared with the team.
    const innerTeam = { width: Number(step.params['width']), work: Number(step.params['work']) };
    const n = this.steps(inputs);
    return { name: 'scanLoop', params, chunking: { by: 'none' }, work: n * innerTeam.work, innerTeam, ...(step.scratchBytes === undefined ? {} : { scratchBytes: step.scratchBytes }) };
  }

  /**
   * The loop on the calling thread, each step through the rewritten step graph. With an until
   * condition the stacked outputs start small and double as steps run (nSteps is only a bound),
   * and keep the rows of the steps run.
   */
  override perform(node: Apply, inputs: readonly NdArray[]): NdArray[] {
    const { nSeqs, taps, nNitsot, finals, until } = this.spec;
    const n = this.steps(inputs);
    const shapes = this.#shapes(inputs, n);
    const nStacked = taps.length + nNitsot;
    const dtypes = node.outputs.map((o) => (o.type as TensorType).dtype);
    let rows = until ? Math.min(n, 16) : n;
    // With until the stacks start small and grow; without, each has its rows (all, or those it keeps).
    const outs = shapes.map((shape, j) => empty(dtypes[j]!, until && j < nStacked ? [rows, ...shape.slice(1)] : shape));
    const executor = (this.#executor ??= new ReferenceExecutor(this.compiled));
    const inits = inputs.slice(1 + nSeqs, 1 + nSeqs + taps.length);
    const nonSeqs = inputs.slice(1 + nSeqs + taps.length);
    // Step t's row of stacked output j: t itself, or its place in the ring of the rows kept.
    const rowAt = (j: number, t: number): number => stepRow(t, n, keptRows(n, this.keepOf(j)));
    const past = (k: number, t: number): NdArray => {
      if (t >= 0) return rowArray(outs[k]!, rowAt(k, t));
      const row = this.#initRow(inits[k]!, k, stateRows(taps[k]!) + t);
      return makeNdArray(row.data, row.shape, row.stride, row.offset);
    };
    let ran = n;
    for (let t = 0; t < n; t++) {
      if (t === rows) {
        rows = Math.min(n, 2 * rows);
        for (let j = 0; j < nStacked; j++) outs[j] = withRows(outs[j]!, rows, dtypes[j]!);
      }
      const args: NdArray[] = [];
      for (let i = 0; i < nSeqs; i++) args.push(rowArray(inputs[1 + i]!, t));
      taps.forEach((ts, k) => ts.forEach((tap) => args.push(past(k, t + tap))));
      args.push(...nonSeqs);
      const stepResults = executor.run(args) as NdArray[];
      // In a ring a step's row may be one it read: a result that is a view of it is copied first.
      const results = this.spec.keep ? stepResults.map((r) => (outs.some((o) => o.data.buffer === r.data.buffer) ? copyArray(r) : r)) : stepResults;
      results.slice(0, nStacked).forEach((r, j) => {
        const row = rowOf(outs[j]!, rowAt(j, t));
        if (j < taps.length) this.#checkState(j, r.shape, row.shape, t);
        else if (r.shape.length !== row.shape.length || r.shape.some((d, a) => d !== row.shape[a])) {
          throw new RangeError(`${this}: step ${t} gives output ${j} the shape ${shapeText(r.shape)}, the first step gave ${shapeText(row.shape)}`);
        }
        if (sizeOf(r.shape) > 0) copyView(r, row);
      });
      const cond = results[nStacked];
      if (until && Number(cond!.data[cond!.offset]) !== 0) {
        ran = t + 1;
        break;
      }
    }
    if (until) for (let j = 0; j < nStacked; j++) outs[j] = withRows(outs[j]!, ran, dtypes[j]!);
    finals.forEach((k, f) => copyView(past(k, ran - 1), outs[nStacked + f]!));
    return outs;
  }

  /** [nSteps (the rows run, with until), ...the step's shape], the step's through the inner graph from the outer shapes. */
  override inferShape(node: Apply, inputShapes: readonly SymbolicShape[]): SymbolicShape[] {
    const feature = (this.#shapeFeature ??= new ShapeFeature());
    const { nSeqs, taps, finals } = this.spec;
    const innerIns = this.inner.inputs as TensorVariable[];
    // Each inner input's lengths are lengths of an outer input (without its first axis for rows).
    const outerDims = (i: number): readonly Variable[] => {
      if (i < nSeqs) return inputShapes[1 + i]!.slice(1);
      if (i >= this.firstNonSeq) return inputShapes[1 + nSeqs + taps.length + i - this.firstNonSeq]!;
      const k = taps.findIndex((_, r) => i < this.tapInput(r) + taps[r]!.length);
      return inputShapes[1 + nSeqs + k]!.slice(isSitSot(taps[k]!) ? 0 : 1);
    };
    const pairs: Array<[Variable, Variable]> = [];
    innerIns.forEach((v, i) => feature.shapeOf(v).forEach((d, a) => pairs.push([d, outerDims(i)[a]!])));
    const step = this.stepOutputs.map((o, j) => (j < taps.length ? [] : cloneReplace(feature.shapeOf(o), pairs)));
    const stranded = new Set<Variable>(innerIns);
    if (step.some((dims) => ancestors(dims).some((v) => stranded.has(v)))) throw new Error(`${this}: the step's output shapes depend on values inside the step`);
    // With an until condition only running the loop tells how many rows it stacks.
    const n = (j: number): Variable => {
      if (this.spec.until) return shapeI(node.outputs[j] as TensorVariable, 0);
      const keep = this.keepOf(j);
      return keep === null ? node.inputs[0]! : minimum(node.inputs[0] as TensorVariable, keep);
    };
    return [
      ...taps.map((t, k) => [n(k), ...inputShapes[1 + nSeqs + k]!.slice(isSitSot(t) ? 0 : 1)]),
      ...step.slice(taps.length).map((dims, j) => [n(taps.length + j), ...dims]),
      ...finals.map((k) => inputShapes[1 + nSeqs + k]!),
    ];
  }

  override connectionPattern(node: Apply): boolean[][] {
    return scanConnectionPattern(this, node);
  }

  /** Backpropagation through time, as a scan that runs backwards (scan-grad.ts). */
  override Lop(inputs: readonly TensorVariable[], outputs: readonly TensorVariable[], outputGrads: readonly Variable[]): Variable[] {
    this.#needsEveryRow('gradient');
    return scanLop(this, inputs, outputs, outputGrads);
  }

  /** Gradients and tangents read every step's row: a loop that keeps only its last rows has none to give. */
  #needsEveryRow(what: string): void {
    if (this.spec.keep) throw new TypeError(`${this}: its outputs keep only their last rows (ScanSaveMem), so it has no ${what}; take gradients before compiling`);
  }

  /** The pushforward, as a scan that carries tangents next to the states (scan-grad.ts). */
  override rop(inputs: readonly TensorVariable[], evalPoints: readonly Variable[]): Variable[] {
    this.#needsEveryRow('pushforward');
    return scanRop(this, inputs, evalPoints);
  }

  /** For pictures (toDot): the step graph, as the user built it. */
  override innerGraphs(): readonly FunctionGraph[] {
    return [this.inner];
  }

  override toString(): string {
    return `Scan{${this.name}}`;
  }
}
