// The seam between a pool and the threads of one platform: a pool keeps its arena, its JobQueue
// and its API, and a platform starts its workers (each mapping the arena's memory), sends a
// message to a free one, and ends them. Node's is threads.ts (piscina), browsers' threads.browser.ts.
import type { TeamMessage, TeamResult } from './protocol.js';

/** How a pool's workers are made (options of createPool). */
export interface WorkerOptions {
  /**
   * Modules every worker imports at start: users' kernel registrations. In Node paths (from the
   * working directory) or file URLs; in browsers URLs of ES modules (relative to the page).
   */
  readonly kernelModules?: readonly string[];
  /** Milliseconds an idle worker lives before it exits (default: ten minutes; Node only). */
  readonly idleTimeout?: number;
  /** V8 heap limits per worker (megabytes), as worker_threads' resourceLimits (Node only). */
  readonly resourceLimits?: {
    readonly maxOldGenerationSizeMb?: number;
    readonly maxYoungGenerationSizeMb?: number;
    readonly codeRangeSizeMb?: number;
    readonly stackSizeMb?: number;
  };
  /** The URL of the worker bundle (browsers only; default: worker.js beside the library bundle). */
  readonly workerUrl?: string | URL;
}

/** What a platform needs to start a pool's workers. */
export interface WorkerSetOptions extends WorkerOptions {
  readonly size: number;
  /** The pool's shared memory: every worker maps it. */
  readonly memory: WebAssembly.Memory;
}

/** A running set of workers. */
export interface WorkerSet {
  /** Sends one message to a free worker; resolves with what the worker's entry returned. */
  run(message: TeamMessage): Promise<TeamResult | readonly TeamResult[]>;
  /** Messages the set holds that no worker has taken yet. */
  readonly queued: number;
  /** Ends the workers. */
  close(): Promise<void>;
}

export interface Platform {
  /** Workers of a pool made without a count: the machine's parallelism. */
  defaultWorkers(): number;
  start(options: WorkerSetOptions): WorkerSet;
}
