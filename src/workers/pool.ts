// Pools of workers: the shared arena that every worker maps, and the workers of the platform
// (threads.ts: piscina in Node; threads.browser.ts: Web Workers in browsers). A call is one team
// job per participating worker; jobs carry only numbers, since plans and data live in shared
// memory. While every worker is busy, jobs wait in the pool's JobQueue and go out in batches.
// The users' Pool (with pool.array and pool.from) extends this one in compile/pool.ts.
import { Arena } from './arena.js';
import { JobQueue } from './job-queue.js';
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
  readonly arena: Arena;
  readonly #workers: WorkerSet;
  readonly #jobs: JobQueue;
  /** The users' kernel modules imported on the calling thread too (small calls run there). */
  readonly ready: Promise<void>;
  #closed = false;

  constructor(options: PoolOptions = {}) {
    const size = options.workers ?? platform.defaultWorkers();
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`createPool: workers must be a positive integer, got ${size}`);
    this.size = size;
    const kernelModules = (options.kernelModules ?? []).map((m) => platform.resolveModule(m));
    this.arena = new Arena(options.arenaBytes);
    this.#workers = platform.start({ ...options, kernelModules, size, memory: this.arena.memory });
    this.ready = importAll(kernelModules);
    // A module that fails to load rejects compile() on this pool, which awaits `ready`.
    this.ready.catch(() => undefined);
    this.#jobs = new JobQueue(size, (message) => this.#workers.run(message));
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Runs one team job (resolves when that member leaves the call). */
  run(job: TeamJob, signal?: AbortSignal): Promise<TeamResult> {
    if (this.#closed) return Promise.reject(new PoolClosedError('weft'));
    return this.#jobs.run(job, signal);
  }

  /** Jobs waiting for a thread. */
  get queued(): number {
    return this.#jobs.waiting + this.#workers.queued;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#workers.close();
  }
}

async function importAll(modules: readonly string[]): Promise<void> {
  for (const m of modules) await import(/* @vite-ignore */ m);
}
