// Staged execution: when a node's output shapes cannot be known before it runs (a function
// without inferShape, or lengths computed from data), a call is split there. The nodes that do
// not depend on it run as one planned stage; a node that can never be planned runs on the
// calling thread; the rest runs as the next stage, planned from the values now known (and split
// again if it needs to be). Each stage is a copy of its part of the graph, with its own plans.
import type { Apply } from '../graph/apply.js';
import { DestroyHandler } from '../graph/destroy-handler.js';
import { FunctionGraph } from '../graph/fgraph.js';
import { isConstant, type Variable } from '../graph/variable.js';
import type { NdArray } from '../tensor/core/ndarray.js';
import { performOnCopies } from '../graph/node-error.js';
import type { WorkerPool } from '../workers/pool.js';
import { StageBoundary } from './plan.js';
import { PlannedExecutor, type PlannedExecutorOptions, type TaskObserver } from './planned-executor.js';
import type { PlanInfo } from './plan-info.js';

interface Split {
  /** Runs the nodes that do not depend on the boundary: fg inputs -> crossing values. */
  readonly first: StagedExecutor;
  /** Values of `first` that later stages (or the outputs) need. */
  readonly crossing: readonly Variable[];
  /** The boundary node, when it runs on its own (kind 'unknown'). */
  readonly alone: Apply | undefined;
  /** Runs the rest: fg inputs, crossing values, the alone node's outputs -> what is left. */
  readonly rest: StagedExecutor;
  /** For each fg output: where its value comes from. */
  readonly outputs: ReadonlyArray<{ readonly from: 'first' | 'alone' | 'rest'; readonly index: number }>;
}

function destroyableOf(fg: FunctionGraph): Variable[] {
  const dh = fg.features.find((f): f is DestroyHandler => f instanceof DestroyHandler);
  return dh ? [...dh.destroyable] : [];
}

/** A FunctionGraph over `inputs` and `outputs` (copied), with a destroy handler like `fg`'s. */
function stage(fg: FunctionGraph, inputs: readonly Variable[], outputs: readonly Variable[], alsoDestroyable: readonly Variable[]): FunctionGraph {
  const copy = new FunctionGraph(inputs, outputs);
  const mapped = [...destroyableOf(fg), ...alsoDestroyable].map((v) => copy.equiv.get(v)).filter((v): v is Variable => v !== undefined);
  copy.attachFeature(new DestroyHandler({ destroyable: mapped }));
  return copy;
}

export class StagedExecutor {
  readonly #planned: PlannedExecutor;
  readonly #splits = new Map<Apply, Split>();

  constructor(
    readonly fgraph: FunctionGraph,
    readonly pool: (() => WorkerPool) | undefined,
    readonly options: PlannedExecutorOptions,
  ) {
    this.#planned = new PlannedExecutor(fgraph, pool, options);
  }

  /** Gives back the arena blocks of every stage's plans. */
  dispose(): void {
    this.#planned.dispose();
    for (const split of this.#splits.values()) {
      split.first.dispose();
      split.rest.dispose();
    }
  }

  async run(inputs: readonly NdArray[], signal?: AbortSignal, onTask?: TaskObserver): Promise<NdArray[]> {
    try {
      return await this.#planned.run(inputs, signal, onTask);
    } catch (e) {
      if (!(e instanceof StageBoundary)) throw e;
      return this.#runSplit(this.#splitAt(e), inputs, signal, onTask);
    }
  }

  /** Whether `runNow` is worth trying: one plan (no stages), whose latest call ran on the calling thread. */
  get mayRunNow(): boolean {
    return this.#splits.size === 0 && this.#planned.lastRanInline;
  }

  /**
   * Runs the call now when it is one plan that runs on the calling thread (PlannedExecutor.runNow);
   * undefined, having done nothing, otherwise: a staged graph's calls go through `run`.
   */
  runNow(inputs: readonly NdArray[]): NdArray[] | undefined {
    if (!this.mayRunNow) return undefined;
    try {
      return this.#planned.runNow(inputs);
    } catch (e) {
      if (!(e instanceof StageBoundary)) throw e;
      this.#splitAt(e);
      return undefined;
    }
  }

  /**
   * The numbers of the plan a call with these inputs runs; for a staged graph those of its first
   * stage (`complete: false`): later stages are planned from values only a call computes.
   */
  planInfo(inputs: readonly NdArray[]): PlanInfo {
    try {
      return this.#planned.planInfo(inputs);
    } catch (e) {
      if (!(e instanceof StageBoundary)) throw e;
      const split = this.#splitAt(e);
      const first = split.crossing.length > 0 ? split.first.planInfo(inputs) : undefined;
      return { ...(first ?? { regionBytes: 0, tasks: 0, width: 0, work: 0, inline: true }), complete: false };
    }
  }

  #splitAt(boundary: StageBoundary): Split {
    const known = this.#splits.get(boundary.node);
    if (known) return known;
    const fg = this.fgraph;
    const b = boundary.node;
    // The boundary and every node downstream of it (through clients).
    const after = new Set<Apply>([b]);
    const stack = [b];
    while (stack.length > 0) {
      for (const o of stack.pop()!.outputs) {
        for (const c of fg.clients(o)) {
          if (c.kind === 'apply' && !after.has(c.node)) {
            after.add(c.node);
            stack.push(c.node);
          }
        }
      }
    }
    const firstNodes = fg.toposort().filter((n) => !after.has(n));
    const produced = new Set(firstNodes.flatMap((n) => n.outputs));
    const needed = new Set<Variable>();
    for (const n of after) for (const v of n.inputs) if (produced.has(v)) needed.add(v);
    for (const v of fg.outputs) if (produced.has(v)) needed.add(v);
    const crossing = [...needed];
    // A boundary with nothing before it would split off nothing: run that node on its own.
    const alone = boundary.kind === 'unknown' || firstNodes.length === 0 ? b : undefined;
    const restInputs = [...fg.inputs, ...crossing, ...(alone ? alone.outputs : [])];
    const restOutputs = fg.outputs.filter((v) => !produced.has(v) && !(alone && alone.outputs.includes(v)));
    // Stages have outputs of their own: borrowing and keeping in the pool's memory (by the whole
    // graph's output index) stay here.
    const options = { ...this.options, borrowedOutputs: undefined, residentOutputs: undefined };
    const first = new StagedExecutor(stage(fg, fg.inputs, crossing, []), this.pool, options);
    const rest = new StagedExecutor(stage(fg, restInputs, restOutputs, [...crossing, ...(alone ? alone.outputs : [])]), this.pool, options);
    const outputs = fg.outputs.map((v) => {
      if (produced.has(v)) return { from: 'first' as const, index: crossing.indexOf(v) };
      if (alone && alone.outputs.includes(v)) return { from: 'alone' as const, index: alone.outputs.indexOf(v) };
      return { from: 'rest' as const, index: restOutputs.indexOf(v) };
    });
    const split: Split = { first, crossing, alone, rest, outputs };
    this.#splits.set(b, split);
    return split;
  }

  async #runSplit(split: Split, inputs: readonly NdArray[], signal?: AbortSignal, onTask?: TaskObserver): Promise<NdArray[]> {
    const fg = this.fgraph;
    const crossing = split.crossing.length > 0 ? await split.first.run(inputs, signal, onTask) : [];
    let aloneOut: NdArray[] = [];
    if (split.alone) {
      const value = (v: Variable): NdArray => {
        const i = fg.inputs.indexOf(v);
        if (i >= 0) return inputs[i]!;
        const c = split.crossing.indexOf(v);
        if (c >= 0) return crossing[c]!;
        if (isConstant(v)) return v.data as NdArray;
        throw new Error(`StagedExecutor: no value for ${v}`);
      };
      const node = split.alone;
      // perform may overwrite the inputs its destroyMap names: it gets copies of those.
      aloneOut = performOnCopies(node, fg.toposort().indexOf(node), node.inputs.map(value), 'destroyed') as NdArray[];
    }
    const restOut = split.rest.fgraph.outputs.length > 0 ? await split.rest.run([...inputs, ...crossing, ...aloneOut], signal, onTask) : [];
    return split.outputs.map((o) => (o.from === 'first' ? crossing[o.index]! : o.from === 'alone' ? aloneOut[o.index]! : restOut[o.index]!));
  }
}
