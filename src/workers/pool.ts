// Pools of worker threads (Node): piscina owns the threads (a fixed count, crash replacement,
// resource limits, a queue of jobs), and the pool adds the shared arena that every worker maps.
// A call is one team job per participating worker; jobs carry only numbers, since plans and
// data live in shared memory. While every thread is busy, jobs wait in the pool's JobQueue and go
// out in batches. An idle pool does not keep the process alive.
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { copyView } from '../kernels/copy.js';
import type { Dtype } from '../kernels/dtype.js';
import { sizeOf } from '../kernels/view.js';
import { constant } from '../tensor/as-tensor.js';
import { config } from '../tensor/config.js';
import { makeNdArray, type NdArray } from '../tensor/ndarray.js';
import type { TensorLike } from '../tensor/variable.js';
import { Arena } from './arena.js';
import { JobQueue } from './job-queue.js';
import type { TeamJob, TeamMessage, TeamResult } from './protocol.js';

export interface PoolOptions {
  /** Worker threads (default: the machine's available parallelism). */
  readonly workers?: number;
  /** Milliseconds an idle worker lives before it exits (default: ten minutes). */
  readonly idleTimeout?: number;
  /** V8 heap limits per worker (megabytes), as worker_threads' resourceLimits. */
  readonly resourceLimits?: {
    readonly maxOldGenerationSizeMb?: number;
    readonly maxYoungGenerationSizeMb?: number;
    readonly codeRangeSizeMb?: number;
    readonly stackSizeMb?: number;
  };
  /** Modules (paths or file URLs) every worker imports at start: users' kernel registrations. */
  readonly kernelModules?: readonly string[];
  /** Initial size of the shared arena in bytes (it grows on demand). */
  readonly arenaBytes?: number;
}

/** The compiled worker entry (workers run JavaScript; tests and tsx run from the sources). */
function entryFile(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.js')) return fileURLToPath(new URL('./entry.js', import.meta.url));
  // Running from src/ (tsx): use the build in dist/, made by `npm run build`.
  return here.replace(/[\\/]src[\\/]workers[\\/]pool\.ts$/, '/dist/src/workers/entry.js');
}

let nextPoolId = 0;

export class Pool {
  readonly id = ++nextPoolId;
  readonly size: number;
  readonly arena: Arena;
  readonly #piscina: Piscina;
  readonly #jobs: JobQueue;
  #closed = false;

  constructor(options: PoolOptions = {}) {
    const size = options.workers ?? availableParallelism();
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`createPool: workers must be a positive integer, got ${size}`);
    this.size = size;
    this.arena = new Arena(options.arenaBytes);
    const kernelModules = (options.kernelModules ?? []).map((m) => (m.startsWith('file:') ? m : new URL(m, `file://${process.cwd()}/`).href));
    this.#piscina = new Piscina({
      filename: entryFile(),
      minThreads: size,
      maxThreads: size,
      idleTimeout: options.idleTimeout ?? 600_000,
      resourceLimits: options.resourceLimits,
      execArgv: [],
      workerData: { memory: this.arena.memory, kernelModules },
    });
    // No signal goes to piscina: it would end the thread of a running job. A call's abort flag
    // stops its running members between tasks, and the queue drops the jobs still waiting.
    this.#jobs = new JobQueue(size, (message: TeamMessage) => this.#piscina.run(message) as Promise<TeamResult | TeamResult[]>);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Runs one team job (resolves when that member leaves the call). */
  run(job: TeamJob, signal?: AbortSignal): Promise<TeamResult> {
    if (this.#closed) return Promise.reject(new Error('weft: the pool was shut down'));
    return this.#jobs.run(job, signal);
  }

  /**
   * A zero-filled ndarray in this pool's shared memory: functions on this pool read it in place
   * instead of copying it into each call. Keep the returned ndarray (not only views of its data)
   * while you use it: its memory returns to the pool when it is collected.
   */
  array(shape: readonly number[], options: { dtype?: Dtype } = {}): NdArray {
    const dtype = options.dtype ?? config.floatX;
    return makeNdArray(this.arena.array(dtype, sizeOf(shape)), shape);
  }

  /** `value` (an ndarray, nested array, number or typed array) copied into this pool's shared memory. */
  from(value: TensorLike, options: { dtype?: Dtype } = {}): NdArray {
    const c = constant(value, options.dtype ? { dtype: options.dtype } : {});
    const out = this.array(c.data.shape, { dtype: c.dtype });
    copyView(c.data, out);
    return out;
  }

  /** Jobs waiting for a thread. */
  get queued(): number {
    return this.#jobs.waiting + this.#piscina.queueSize;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#piscina.destroy();
  }
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
