// The gate in front of a compiled function's runtime: a bounded number of calls run at once and
// the rest wait, in order, as small records (their checked arguments and how to settle them).
// A call under way holds promises and suspended frames across several layers; ten thousand of
// them at once cost the garbage collector more than the calls' own work (BENCH.md W8).
import { abortedBy } from '../scheduler/planned-executor.js';

interface Waiting<T> {
  readonly start: () => Promise<T>;
  readonly resolve: (value: T) => void;
  readonly reject: (reason: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

/** Calls a function lets run at once; enough to keep every thread of a large pool fed with batches. */
export const CALLS_AT_ONCE = 256;

export class CallGate<T> {
  #running = 0;
  readonly #waiting: Array<Waiting<T>> = [];

  constructor(
    readonly limit = CALLS_AT_ONCE,
    /** Names the function in the error of a call aborted while it waited. */
    readonly label = 'weft function',
  ) {}

  /** Calls waiting for their turn. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Whether a call would start at once (no call waits, fewer than `limit` run). */
  get open(): boolean {
    return this.#running < this.limit && this.#waiting.length === 0;
  }

  /**
   * Runs `start` now if fewer than `limit` calls are under way, else once an earlier call ends.
   * A call still waiting when `signal` aborts is dropped and rejects with an AbortError.
   */
  run(start: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.open) return this.#start(start);
    return new Promise<T>((resolve, reject) => {
      const entry: Waiting<T> = {
        start,
        resolve,
        reject,
        signal,
        onAbort: () => {
          const at = this.#waiting.indexOf(entry);
          if (at < 0) return;
          this.#waiting.splice(at, 1);
          reject(abortedBy(signal, `${this.label}: the call was aborted while it waited for its turn`));
        },
      };
      signal?.addEventListener('abort', entry.onAbort, { once: true });
      this.#waiting.push(entry);
    });
  }

  #start(start: () => Promise<T>): Promise<T> {
    this.#running += 1;
    let started: Promise<T>;
    try {
      started = start();
    } catch (e) {
      started = Promise.reject(e);
    }
    return started.finally(() => {
      this.#running -= 1;
      this.#next();
    });
  }

  #next(): void {
    const entry = this.#waiting.shift();
    if (!entry) return;
    entry.signal?.removeEventListener('abort', entry.onAbort);
    this.#start(entry.start).then(entry.resolve, entry.reject);
  }
}
