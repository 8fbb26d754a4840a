// The calling thread's side of the job ring (job-ring.ts): team jobs go into the ring's slots,
// calls beyond its slots wait here in order, and one loop at a time waits for finished jobs
// and answers their promises. A job still waiting (here or in the ring) when its call aborts
// answers at once with no tasks run; a job whose thread exits rejects, and the executor then
// reads the member's record (as it does for a job whose message failed). Once a worker says it
// cannot watch the ring (job-ring.ts's BROKEN), the jobs no worker took go as messages instead.
import { JobRing, SLOT } from './job-ring.js';
import type { TeamJob, TeamResult } from './protocol.js';

interface Entry {
  readonly job: TeamJob;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (r: TeamResult) => void;
  readonly reject: (e: unknown) => void;
  readonly onAbort: () => void;
  /** Its slot, once it is in the ring. */
  slot: number;
  /** Answered already (cancelled); its slot is freed once a worker has passed it. */
  answered: boolean;
}

/** A job that was never run: a member that joined late would have run no task either. */
const NOTHING_RUN: TeamResult = { tasks: 0 };

/** Answers a job once: its result, or an Error to reject with. */
function settle(entry: Entry, outcome: TeamResult | Error): void {
  if (entry.answered) return;
  entry.answered = true;
  entry.signal?.removeEventListener('abort', entry.onAbort);
  if (outcome instanceof Error) entry.reject(outcome);
  else entry.resolve(outcome);
}

/** How long one wait for answers lasts before it looks again (a missed wake-up costs at most this). */
const WAIT_MS = 50;

/** How a job goes when the ring cannot carry it: the pool's messages. */
export type SendAsMessage = (job: TeamJob, signal: AbortSignal | undefined) => Promise<TeamResult>;

export class RingQueue {
  /** The job in each slot (by slot index), until its slot is freed. */
  readonly #slots: Array<Entry | undefined> = [];
  readonly #waiting: Entry[] = [];
  #reaping = false;
  #wakePending = false;
  #closed: Error | undefined;
  #diverted = false;

  constructor(
    readonly ring: JobRing,
    readonly sendAsMessage: SendAsMessage,
  ) {}

  /** Jobs no worker has taken yet (in the ring, or waiting for a slot). */
  get waiting(): number {
    let filled = 0;
    this.#slots.forEach((entry, slot) => {
      if (entry && this.ring.state(slot) === SLOT.FILLED) filled += 1;
    });
    return filled + this.#waiting.length;
  }

  /** Whether jobs still go through the ring (no worker said it cannot watch it). */
  get usable(): boolean {
    if (this.ring.broken) this.#divert();
    return !this.#diverted;
  }

  /** Runs one team job through the ring (the pool asks `usable` first). */
  run(job: TeamJob, signal?: AbortSignal): Promise<TeamResult> {
    if (this.#closed) return Promise.reject(this.#closed);
    if (signal?.aborted) return Promise.resolve(NOTHING_RUN);
    return new Promise<TeamResult>((resolve, reject) => {
      const entry: Entry = { job, signal, resolve, reject, onAbort: () => this.#cancel(entry), slot: -1, answered: false };
      signal?.addEventListener('abort', entry.onAbort, { once: true });
      if (this.#waiting.length > 0 || !this.#place(entry)) this.#waiting.push(entry);
      void this.#reap();
    });
  }

  #place(entry: Entry): boolean {
    const slot = this.ring.offer(entry.job);
    if (slot < 0) return false;
    entry.slot = slot;
    this.#slots[slot] = entry;
    this.#wakeSoon();
    return true;
  }

  /**
   * Wakes the workers once the current task has placed its jobs (a call offers one per member in
   * a row): a microtask, so the workers find every job of the call when they wake.
   */
  #wakeSoon(): void {
    if (this.#wakePending) return;
    this.#wakePending = true;
    queueMicrotask(() => {
      this.#wakePending = false;
      this.ring.wake();
    });
  }

  /** An aborted call's job that no worker took answers now; one that runs answers when it leaves. */
  #cancel(entry: Entry): void {
    if (entry.answered) return;
    if (entry.slot < 0) {
      const at = this.#waiting.indexOf(entry);
      if (at >= 0) this.#waiting.splice(at, 1);
    } else if (!this.ring.cancel(entry.slot)) return;
    settle(entry, NOTHING_RUN);
  }

  /** Answers the finished jobs, fills freed slots from the waiting list, and waits while any job is out. */
  async #reap(): Promise<void> {
    if (this.#reaping) return;
    this.#reaping = true;
    let alive: ReturnType<typeof setInterval> | undefined;
    try {
      while (!this.#closed) {
        const seen = this.ring.finished;
        if (this.ring.broken) this.#divert();
        let out = 0;
        for (let slot = 0; slot < this.#slots.length; slot++) {
          const entry = this.#slots[slot];
          if (!entry) continue;
          if (this.ring.state(slot) !== SLOT.DONE) {
            out += 1;
            continue;
          }
          const answer = this.ring.answer(slot);
          this.ring.free(slot);
          this.#slots[slot] = undefined;
          if (answer.kind === 'result') settle(entry, answer.result);
          else {
            const e = new Error(answer.message);
            if (answer.stack) e.stack = answer.stack;
            settle(entry, e);
          }
        }
        while (this.#waiting.length > 0 && this.#place(this.#waiting[0]!)) {
          this.#waiting.shift();
          out += 1;
        }
        if (out === 0) return;
        const [cell, index] = this.ring.finishedCell;
        // One timer for the whole reap, rather than one per wait (a wait came every few calls of
        // a stream of small ones, W8): it keeps the process alive while jobs are out, and wakes
        // the wait every WAIT_MS should a notify have come between the look and the wait (see
        // waitAsyncAlive).
        alive ??= setInterval(() => Atomics.notify(cell, index), WAIT_MS);
        await Atomics.waitAsync(cell, index, seen).value;
      }
    } finally {
      clearInterval(alive);
      this.#reaping = false;
    }
  }

  /**
   * A worker cannot watch the ring: every job no worker has taken leaves it for a message (and so
   * meets the worker's real failure, or a worker that runs it). Taken jobs answer in the ring.
   */
  #divert(): void {
    if (this.#diverted) return;
    this.#diverted = true;
    const untaken = this.#waiting.splice(0);
    this.#slots.forEach((entry, slot) => {
      if (!entry || entry.answered || !this.ring.cancel(slot)) return;
      // The cancelled slot stays out of use: no job goes into this ring again.
      this.#slots[slot] = undefined;
      untaken.push(entry);
    });
    for (const entry of untaken) {
      entry.answered = true;
      entry.signal?.removeEventListener('abort', entry.onAbort);
      this.sendAsMessage(entry.job, entry.signal).then(entry.resolve, entry.reject);
    }
  }

  /**
   * Thread `thread` exited: the jobs it had taken reject with `error` (their slots are freed; it
   * will never answer them). Jobs it had not taken stay for the other workers.
   */
  threadExited(thread: number, error: Error): void {
    this.#slots.forEach((entry, slot) => {
      if (!entry || !this.ring.heldBy(slot, thread)) return;
      this.ring.free(slot);
      this.#slots[slot] = undefined;
      settle(entry, error);
    });
    void this.#reap();
  }

  /** The pool closed: every job not answered rejects with `error`, and the watchers stop. */
  close(error: Error): void {
    this.#closed = error;
    this.ring.close();
    for (const entry of [...this.#slots, ...this.#waiting.splice(0)]) if (entry) settle(entry, error);
    this.#slots.length = 0;
  }
}
