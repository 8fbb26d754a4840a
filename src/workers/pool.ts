// Pools of workers: the shared arena that every worker maps, and the workers of the platform
// (threads.ts: piscina in Node; threads.browser.ts: Web Workers in browsers). A call is one team
// job per participating worker; jobs carry only numbers, since plans and data live in shared
// memory. Where the workers watch the job ring (Node), jobs go through it; the others (outputs
// in buffers of their own, traces) and a platform without the ring use messages, which wait in
// the pool's JobQueue while every worker is busy and then go out in batches.
// The users' Pool (with pool.array and pool.from) extends this one in compile/pool.ts.
import { Arena } from './arena.js';
import { JobQueue } from './job-queue.js';
import { JobRing, ringCarries } from './job-ring.js';
import { RingQueue } from './ring-queue.js';
import type { WorkerOptions, WorkerSet } from './platform.js';
import type { TeamJob, TeamResult } from './protocol.js';
// The browser build resolves this import to threads.browser.ts.
import { platform } from './threads.js';

export interface PoolOptions extends WorkerOptions {
  /** Workers (default: the machine's available parallelism; navigator.hardwareConcurrency in browsers). */
  readonly workers?: number;
  /** Initial size of the shared arena in bytes (it grows on demand). */
  readonly arenaBytes?: number;
}

let nextPoolId = 0;

/**
 * Work given to a closed pool: a call of a function compiled on it, `pool.array`, `pool.from`, or
 * `compile` with it. (Functions on the default pool move to a new default pool instead.)
 */
export class PoolClosedError extends Error {
  constructor(what: string) {
    super(`${what}: the pool was closed (pool.close() or weft.shutdown()); create a new pool with weft.createPool()`);
    this.name = 'PoolClosedError';
  }
}

export class WorkerPool {
  readonly id = ++nextPoolId;
  readonly size: number;
  /** Threads the machine runs at once (the platform's available parallelism). */
  readonly cores = platform.defaultWorkers();
  readonly arena: Arena;
  readonly #workers: WorkerSet;
  readonly #jobs: JobQueue;
  readonly #ringJobs: RingQueue | undefined;
  /** The users' kernel modules imported on the calling thread too (small calls run there). */
  readonly ready: Promise<void>;
  #closed = false;

  constructor(options: PoolOptions = {}) {
    const size = options.workers ?? platform.defaultWorkers();
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`createPool: workers must be a positive integer, got ${size}`);
    this.size = size;
    const kernelModules = (options.kernelModules ?? []).map((m) => platform.resolveModule(m));
    this.arena = new Arena(options.arenaBytes);
    const ring = new JobRing(this.arena.memory, this.arena.allocate(JobRing.bytes).offset);
    ring.initialize();
    this.#workers = platform.start({ ...options, kernelModules, size, memory: this.arena.memory, ring: ring.offset });
    this.ready = importAll(kernelModules);
    // A module that fails to load rejects compile() on this pool, which awaits `ready`.
    this.ready.catch(() => undefined);
    this.#jobs = new JobQueue(size, (message) => this.#workers.run(message));
    if (this.#workers.onThreadExit) {
      const ringJobs = new RingQueue(ring, (job, signal) => this.#sendAsMessage(job, signal));
      this.#workers.onThreadExit((thread, error) => ringJobs.threadExited(thread, error));
      this.#ringJobs = ringJobs;
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Runs one team job (resolves when that member leaves the call). */
  run(job: TeamJob, signal?: AbortSignal): Promise<TeamResult> {
    if (this.#closed) return Promise.reject(new PoolClosedError('weft'));
    if (this.#ringJobs?.usable && ringCarries(job)) {
      this.#sent.ring += 1;
      return this.#ringJobs.run(job, signal);
    }
    return this.#sendAsMessage(job, signal);
  }

  #sendAsMessage(job: TeamJob, signal: AbortSignal | undefined): Promise<TeamResult> {
    this.#sent.messages += 1;
    return this.#jobs.run(job, signal);
  }

  readonly #sent = { ring: 0, messages: 0 };

  /** Team jobs sent so far through the job ring and as messages (for tests and profiling). */
  get jobsSent(): { readonly ring: number; readonly messages: number } {
    return { ...this.#sent };
  }

  /** Jobs waiting for a thread (messages not yet taken; ring jobs waiting for a slot). */
  get queued(): number {
    return this.#jobs.waiting + this.#workers.queued + (this.#ringJobs?.waiting ?? 0);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#ringJobs?.close(new PoolClosedError('weft'));
    await this.#workers.close();
  }
}

async function importAll(modules: readonly string[]): Promise<void> {
  for (const m of modules) await import(/* @vite-ignore */ m);
}
