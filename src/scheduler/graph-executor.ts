// How a compiled function runs its graph: through plans (staged where shapes wait for data), and
// through the reference executor from the first call whose graph no plan can hold (a PlanError:
// an op that writes where the plan keeps a value, say). That switch is final and its reason kept.
// The planned side is made by a factory, so a function on a replaced default pool starts afresh.
// A graph that holds values of other Types than tensors (a user's Type) is planned over tensors
// of their memory layouts (laid-out-graph.ts), or, when a Type or an op cannot be laid out, runs
// on the reference executor from the start: plans place tensors in shared memory, nothing else.
import type { Apply } from '../graph/apply.js';
import type { FunctionGraph } from '../graph/fgraph.js';
import { ReferenceExecutor, type NodeStep } from '../graph/reference-executor.js';
import type { NdArray } from '../tensor/core/ndarray.js';
import { layOut, type LaidOutGraph } from './laid-out-graph.js';
import { PlanError } from './plan.js';
import { abortedBy, type TaskObserver } from './planned-executor.js';
import type { PlanInfo } from './plan-info.js';
import type { StagedExecutor } from './staged-executor.js';

/** What a run reports (for profiles): tasks of plans, and nodes of the reference executor. */
export interface RunObserver {
  readonly onTask?: TaskObserver;
  /** The clock of `onNode` (on the calling thread). */
  readonly now: () => number;
  readonly onNode: (node: Apply, start: number, end: number) => void;
}

export class GraphExecutor {
  #planned: StagedExecutor;
  #reference: ReferenceExecutor | undefined;
  #fallback: string | undefined;
  /** The graph over tensors, when values of other Types are laid out in memory. */
  readonly #laidOut: LaidOutGraph | undefined;

  constructor(
    readonly fgraph: FunctionGraph,
    readonly makePlanned: (fg: FunctionGraph) => StagedExecutor,
    /** Names the function in errors ("the call was aborted"). */
    readonly label: string,
  ) {
    const laid = layOut(fgraph);
    if (typeof laid === 'string') {
      this.#reference = new ReferenceExecutor(fgraph);
      this.#fallback = `${laid}; it runs on the calling thread`;
    } else this.#laidOut = laid;
    this.#planned = makePlanned(this.#laidOut?.fgraph ?? fgraph);
  }

  /** Why calls run on the reference executor, once they do. */
  get fallback(): string | undefined {
    return this.#fallback;
  }

  /** Drops the plans (their arena blocks go back) and makes the planned side anew. */
  restart(): void {
    this.#planned.dispose();
    this.#planned = this.makePlanned(this.#laidOut?.fgraph ?? this.fgraph);
  }

  dispose(): void {
    this.#planned.dispose();
  }

  /** The numbers of the plan for these values; a graph that runs on the reference executor has none. */
  planInfo(values: readonly NdArray[]): PlanInfo {
    if (!this.#reference) {
      try {
        const laid = this.#laidOut;
        return this.#planned.planInfo(laid ? laid.toArrays(values) : values);
      } catch (e) {
        if (!(e instanceof PlanError)) throw e;
        this.#reference = new ReferenceExecutor(this.fgraph);
        this.#fallback = e.message;
      }
    }
    throw new Error(`${this.label} has no plan: its calls run on the reference executor (${this.#fallback})`);
  }

  async run(values: readonly NdArray[], signal: AbortSignal | undefined, observer?: RunObserver): Promise<NdArray[]> {
    if (!this.#reference) {
      try {
        const laid = this.#laidOut;
        if (laid) return laid.fromArrays(await this.#planned.run(laid.toArrays(values), signal, observer?.onTask)) as NdArray[];
        return await this.#planned.run(values, signal, observer?.onTask);
      } catch (e) {
        this.#fallBackOn(e);
      }
    }
    return this.#reference!.run(values, {
      signal,
      aborted: (s) => abortedBy(s, `${this.label}: the call was aborted`),
      ...(observer && { now: observer.now, after: (node: Apply, _k: number, step: NodeStep) => observer.onNode(node, step.start, step.end) }),
    }) as NdArray[];
  }

  /** Whether `runNow` is worth trying (see StagedExecutor.mayRunNow); the reference executor and laid-out values never run now. */
  get mayRunNow(): boolean {
    return !this.#reference && !this.#laidOut && this.#planned.mayRunNow;
  }

  /**
   * Runs the call now when its plan runs on the calling thread (PlannedExecutor.runNow); undefined,
   * having run nothing, when it must go through `run` (workers, stages, laid-out values, the
   * reference executor).
   */
  runNow(values: readonly NdArray[]): NdArray[] | undefined {
    if (!this.mayRunNow) return undefined;
    try {
      return this.#planned.runNow(values);
    } catch (e) {
      this.#fallBackOn(e);
      return undefined;
    }
  }

  /** A PlanError switches this function to the reference executor for good; anything else is the call's error. */
  #fallBackOn(e: unknown): void {
    if (!(e instanceof PlanError)) throw e;
    this.#reference = new ReferenceExecutor(this.fgraph);
    this.#fallback = e.message;
  }
}
