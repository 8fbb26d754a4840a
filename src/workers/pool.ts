// Pools of workers: the shared arena that every worker maps, and the workers of the platform
// (threads.ts: piscina in Node; threads.browser.ts: Web Workers in browsers). A call is one team
// job per participating worker; jobs carry only numbers, since plans and data live in shared
// memory. While every worker is busy, jobs wait in the pool's JobQueue and go out in batches.
import { copyView } from '../kernels/copy.js';
import { STORAGE, type Dtype } from '../kernels/dtype.js';
import { sizeOf } from '../kernels/view.js';
import { constant } from '../tensor/as-tensor.js';
import { config } from '../tensor/config.js';
import { makeNdArray, type NdArray } from '../tensor/ndarray.js';
import type { TensorLike } from '../tensor/variable.js';
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

/** The lengths of a shape for pool.array: a number is a vector's length; each must be a whole number >= 0. */
function lengthsOf(shape: number | readonly number[], where: string): number[] {
  const lengths = typeof shape === 'number' ? [shape] : shape;
  if (!Array.isArray(lengths)) throw new TypeError(`${where}: the shape must be a number or an array of lengths, got ${String(shape)}`);
  lengths.forEach((n, i) => {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
      throw new RangeError(`${where}: shape[${i}] is ${String(n)}; lengths must be whole numbers, 0 or more`);
    }
  });
  return [...lengths];
}

export class Pool {
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

  /**
   * A zero-filled ndarray in this pool's shared memory: functions on this pool read it in place
   * instead of copying it into each call. Keep the returned ndarray (not only views of its data)
   * while you use it: its memory returns to the pool when it is collected.
   */
  array(shape: number | readonly number[], options: { dtype?: Dtype } = {}): NdArray {
    if (this.#closed) throw new PoolClosedError('pool.array');
    const lengths = lengthsOf(shape, 'pool.array');
    const dtype = options.dtype ?? config.floatX;
    if (!(dtype in STORAGE)) throw new TypeError(`pool.array: unknown dtype ${String(dtype)} (one of ${Object.keys(STORAGE).join(', ')})`);
    return makeNdArray(this.arena.array(dtype, sizeOf(lengths)), lengths);
  }

  /** `value` (an ndarray, nested array, number or typed array) copied into this pool's shared memory. */
  from(value: TensorLike, options: { dtype?: Dtype } = {}): NdArray {
    if (this.#closed) throw new PoolClosedError('pool.from');
    const c = constant(value, options.dtype ? { dtype: options.dtype } : {});
    const out = this.array(c.data.shape, { dtype: c.dtype });
    copyView(c.data, out);
    return out;
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

let defaultPool: Pool | undefined;

/** A new pool of worker threads. */
export function createPool(options: PoolOptions = {}): Pool {
  return new Pool(options);
}

/** The pool functions use when they are given none (made on first use, sized to the machine). */
export function getDefaultPool(): Pool {
  if (!defaultPool || defaultPool.closed) defaultPool = new Pool();
  return defaultPool;
}

/** Ends the default pool's threads (a later call makes a new one). */
export async function shutdown(): Promise<void> {
  const pool = defaultPool;
  defaultPool = undefined;
  await pool?.close();
}
