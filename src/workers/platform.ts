// The seam between a pool and the threads of one platform: a pool keeps its arena, its JobQueue
// and its API, and a platform starts its workers (each mapping the arena's memory), sends a
// message to a free one, and ends them. Node's is threads.ts (piscina), browsers' threads.browser.ts.
import type { TeamMessage, TeamResult } from './protocol.js';

/** How a pool's workers are made (options of createPool). */
export interface WorkerOptions {
  /**
   * Modules every worker and the calling thread import: users' kernel registrations. In Node
   * URLs (`new URL('./my-kernels.mjs', import.meta.url)`: relative to your module, whatever the
   * working directory), file: URL strings or absolute paths; a relative path is refused, since
   * it would depend on the working directory. In browsers URLs of ES modules (a relative one is
   * relative to the page).
   */
  readonly kernelModules?: readonly (string | URL)[];
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
export interface WorkerSetOptions extends Omit<WorkerOptions, 'kernelModules'> {
  /** The kernel modules as absolute URLs (Platform.resolveModule's). */
  readonly kernelModules: readonly string[];
  readonly size: number;
  /** The pool's shared memory: every worker maps it. */
  readonly memory: WebAssembly.Memory;
  /** Where the pool's job ring lies in that memory (job-ring.ts), for workers that watch it. */
  readonly ring: number;
}

/** A running set of workers. */
export interface WorkerSet {
  /** Sends one message to a free worker; resolves with what the worker's entry returned. */
  run(message: TeamMessage): Promise<TeamResult | readonly TeamResult[]>;
  /** Messages the set holds that no worker has taken yet. */
  readonly queued: number;
  /** Ends the workers. */
  close(): Promise<void>;
  /**
   * Present when the workers watch the job ring: calls `listener` with a thread's id (the one its
   * jobs report) and why, when that thread has exited, so that the ring's jobs it had taken reject.
   */
  readonly onThreadExit?: (listener: (thread: number, error: Error) => void) => void;
}

export interface Platform {
  /** Workers of a pool made without a count: the machine's parallelism. */
  defaultWorkers(): number;
  /** A kernel module's absolute URL, or a RangeError saying which forms are accepted. */
  resolveModule(module: string | URL): string;
  start(options: WorkerSetOptions): WorkerSet;
}
