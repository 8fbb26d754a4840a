// The pool's queue of team jobs. While a thread is free, a job goes to the workers at once; when
// every thread is busy, jobs wait here and leave in batches, one message carrying several calls'
// jobs that a worker runs in turn. A message and the wake-ups around it cost more than a small
// call's tasks on these machines (BENCH.md), so under load a batch pays them once for many calls.
import type { TeamJob, TeamMessage, TeamResult } from './protocol.js';

/** Sends one message to a worker; resolves with what the worker's entry returned. */
export type Send = (message: TeamMessage) => Promise<TeamResult | readonly TeamResult[]>;

interface Waiting {
  readonly job: TeamJob;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (r: TeamResult) => void;
  readonly reject: (e: unknown) => void;
  readonly onAbort: () => void;
}

/** Most jobs in one message: enough to amortize a round trip, few enough to keep results coming. */
export const MAX_BATCH = 16;

function aborted(signal: AbortSignal): Error {
  const e = new Error('the job was aborted before it started', { cause: signal.reason });
  e.name = 'AbortError';
  return e;
}

export class JobQueue {
  /** Messages sent and not yet answered. */
  #inFlight = 0;
  readonly #waiting: Waiting[] = [];

  /** `slots`: how many messages the workers take at once (one per thread). */
  constructor(
    readonly slots: number,
    readonly send: Send,
  ) {}

  /** Jobs waiting for a free thread. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Runs one team job. A job still waiting when `signal` aborts is dropped and rejects; a job
   * that has started is not interrupted here (the call's abort flag stops it between tasks).
   */
  run(job: TeamJob, signal?: AbortSignal): Promise<TeamResult> {
    if (signal?.aborted) return Promise.reject(aborted(signal));
    return new Promise<TeamResult>((resolve, reject) => {
      const entry: Waiting = {
        job,
        signal,
        resolve,
        reject,
        onAbort: () => {
          const at = this.#waiting.indexOf(entry);
          if (at < 0) return;
          this.#waiting.splice(at, 1);
          reject(aborted(signal!));
        },
      };
      signal?.addEventListener('abort', entry.onAbort, { once: true });
      this.#waiting.push(entry);
      this.#drain();
    });
  }

  /** Sends waiting jobs while threads are free: the oldest first, distinct calls per batch. */
  #drain(): void {
    while (this.#inFlight < this.slots && this.#waiting.length > 0) {
      const batch: Waiting[] = [];
      const calls = new Set<number>();
      for (let i = 0; i < this.#waiting.length && batch.length < MAX_BATCH; ) {
        const w = this.#waiting[i]!;
        // Two members of one call in one message would run one after the other: no help.
        if (calls.has(w.job.callId)) {
          i += 1;
          continue;
        }
        calls.add(w.job.callId);
        batch.push(w);
        this.#waiting.splice(i, 1);
      }
      for (const w of batch) w.signal?.removeEventListener('abort', w.onAbort);
      this.#post(batch);
    }
  }

  #post(batch: readonly Waiting[]): void {
    this.#inFlight += 1;
    const message: TeamMessage = batch.length === 1 ? batch[0]!.job : { batch: batch.map((w) => w.job) };
    this.send(message).then(
      (answer) => {
        const results = Array.isArray(answer) ? answer : [answer as TeamResult];
        batch.forEach((w, i) => {
          const r = results[i];
          if (r) w.resolve(r);
          else w.reject(new Error(`a worker answered ${results.length} results for a batch of ${batch.length}`));
        });
      },
      (e: unknown) => {
        for (const w of batch) w.reject(e);
      },
    ).finally(() => {
      this.#inFlight -= 1;
      this.#drain();
    });
  }
}
