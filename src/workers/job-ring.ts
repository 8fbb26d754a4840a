// The job ring: how calls reach a pool's workers without a message each. A bounded queue of call
// slots in the pool's shared memory that the calling thread fills and idle workers watch (they
// spin briefly after a job, then wait with Atomics.waitAsync, so their event loops stay free for
// the pool's messages). This file alone knows the ring's layout, on both sides.
import type { TeamJob, TeamResult } from './protocol.js';

/** Slots of the ring: calls beyond them wait on the calling thread (ring-queue.ts). */
export const RING_SLOTS = 64;
/** Most [input, offset] pairs of inputs read in place that a ring job carries. */
export const RING_EXTERNAL_PAIRS = 8;

/** Int32 slots of the header. */
const H = {
  /** Next job to take, and next slot to fill: counters modulo COUNTER_LIMIT (equal: empty). */
  HEAD: 0,
  TAIL: 1,
  /** Bumped after every finished job: what the calling thread waits on. */
  FINISHED: 2,
  /** Non-zero once the pool closes: watchers stop. */
  CLOSED: 3,
  /**
   * Non-zero once a worker could not start (a kernel module that fails to load there): it will
   * never watch the ring, so the calling thread sends its jobs as messages, which report why.
   */
  BROKEN: 4,
} as const;
const HEADER_BYTES = 64;

/**
 * A slot's fields (Uint32 each; STATE is changed with Atomics). The job's fields are written
 * before STATE says FILLED, and the result's before it says DONE: Atomics order them.
 */
const S = {
  /** The slot's state in its low 3 bits; while TAKEN, the taking thread's id above them. */
  STATE: 0,
  CALL: 1,
  PLAN: 2,
  PLAN_OFFSET: 3,
  PLAN_LENGTH: 4,
  REGION: 5,
  /** 1 + the member index, or 0 for none. */
  MEMBER: 6,
  EXTERNALS: 7,
  EXTERNAL: 8,
  TASKS: 8 + 2 * RING_EXTERNAL_PAIRS,
  /** See Outcome. */
  OUTCOME: 9 + 2 * RING_EXTERNAL_PAIRS,
  ERROR_TASK: 10 + 2 * RING_EXTERNAL_PAIRS,
  MESSAGE_BYTES: 11 + 2 * RING_EXTERNAL_PAIRS,
  STACK_BYTES: 12 + 2 * RING_EXTERNAL_PAIRS,
  THREAD_ID: 13 + 2 * RING_EXTERNAL_PAIRS,
} as const;
const SLOT_FIELDS = 32;
/** UTF-8 bytes of an error's message and stack a slot keeps (longer ones are cut). */
const TEXT_BYTES = 4096;
const SLOT_BYTES = SLOT_FIELDS * 4 + TEXT_BYTES;

/** A slot's life: free, filled by the calling thread, taken by a worker, done; or cancelled before it was taken. */
export const SLOT = { FREE: 0, FILLED: 1, TAKEN: 2, DONE: 3, CANCELLED: 4 } as const;
type SlotState = (typeof SLOT)[keyof typeof SLOT];
const STATE_BITS = 3;
/** Thread ids as the STATE word keeps them (28 bits: the word stays a positive Int32). */
const THREAD_MASK = 0x0fff_ffff;
/** The STATE word of a slot taken by `thread`: taking a job and saying who took it is one step. */
const takenState = (thread: number): number => SLOT.TAKEN | ((thread & THREAD_MASK) << STATE_BITS);

/** How a job ended: its team result (with or without a kernel's error), or a failure before it could run. */
const OUTCOME = { RESULT: 0, KERNEL_ERROR: 1, FAILED: 2 } as const;

/** HEAD and TAIL count modulo this (a multiple of RING_SLOTS that fits an Int32; exported for the test of their wrap). */
export const COUNTER_LIMIT = RING_SLOTS * (1 << 24);

/** The first bytes of UTF-8 `bytes`, at most `limit`, ending on a whole character. */
function cutUtf8(bytes: Uint8Array, limit: number): Uint8Array {
  if (bytes.length <= limit) return bytes;
  let end = limit;
  // A continuation byte (10xxxxxx) is the middle of a character: back off to its first byte.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end);
}

/** A job a worker took from the ring, and the slot to answer in. */
export interface RingJob {
  readonly slot: number;
  readonly job: TeamJob;
}

/** What the calling thread reads from a done slot. */
export type RingAnswer = { readonly kind: 'result'; readonly result: TeamResult } | { readonly kind: 'failed'; readonly message: string; readonly stack?: string };

/** Whether a job can travel through the ring: no buffers of its own, no trace, few inputs in place. */
export function ringCarries(job: TeamJob): boolean {
  return !job.outputMemory?.length && !job.trace && (job.external?.length ?? 0) <= 2 * RING_EXTERNAL_PAIRS;
}

export class JobRing {
  /** The ring's bytes in the pool's memory. */
  static readonly bytes = HEADER_BYTES + RING_SLOTS * SLOT_BYTES;

  // The memory never shrinks or moves, so views made now stay valid for the ring's bytes.
  readonly #h: Int32Array;
  readonly #u: Uint32Array;
  readonly #bytes: Uint8Array;

  /** The ring at byte `offset` (a multiple of 64) of `memory`. */
  constructor(
    memory: WebAssembly.Memory,
    readonly offset: number,
  ) {
    this.#h = new Int32Array(memory.buffer, offset, JobRing.bytes >>> 2);
    this.#u = new Uint32Array(memory.buffer, offset, JobRing.bytes >>> 2);
    this.#bytes = new Uint8Array(memory.buffer, offset, JobRing.bytes);
  }

  #field(slot: number, field: number): number {
    return (HEADER_BYTES + slot * SLOT_BYTES) / 4 + field;
  }

  /** What slot `slot` holds now. */
  state(slot: number): SlotState {
    return (Atomics.load(this.#h, this.#field(slot, S.STATE)) & ((1 << STATE_BITS) - 1)) as SlotState;
  }

  get closed(): boolean {
    return Atomics.load(this.#h, H.CLOSED) !== 0;
  }

  /** Whether a worker said it cannot watch the ring (see H.BROKEN). */
  get broken(): boolean {
    return Atomics.load(this.#h, H.BROKEN) !== 0;
  }

  // -------------------------------------------------------------------------------------------
  // The calling thread (the only one that fills the ring: a pool belongs to one thread)

  /** Zeroes the header and every slot's state (a block of the arena may hold old bytes). */
  initialize(): void {
    this.#h.fill(0, 0, HEADER_BYTES / 4);
    for (let k = 0; k < RING_SLOTS; k++) Atomics.store(this.#h, this.#field(k, S.STATE), SLOT.FREE);
  }

  /**
   * Puts `job` in the next slot; returns the slot, or -1 when that slot still holds an older job
   * (the ring is full as far as order allows). It wakes nobody: `wake` does, once the call's
   * jobs are all in (see wake).
   */
  offer(job: TeamJob): number {
    const tail = Atomics.load(this.#h, H.TAIL);
    const slot = tail % RING_SLOTS;
    if (this.state(slot) !== SLOT.FREE) return -1;
    const u = this.#u;
    const at = (f: number): number => this.#field(slot, f);
    u[at(S.CALL)] = job.callId;
    u[at(S.PLAN)] = job.planId;
    u[at(S.PLAN_OFFSET)] = job.planOffset;
    u[at(S.PLAN_LENGTH)] = job.planLength;
    u[at(S.REGION)] = job.region;
    u[at(S.MEMBER)] = job.member === undefined ? 0 : job.member + 1;
    const external = job.external ?? [];
    u[at(S.EXTERNALS)] = external.length;
    for (let i = 0; i < external.length; i++) u[at(S.EXTERNAL) + i] = external[i]!;
    Atomics.store(this.#h, at(S.STATE), SLOT.FILLED);
    Atomics.store(this.#h, H.TAIL, (tail + 1) % COUNTER_LIMIT);
    return slot;
  }

  /**
   * Wakes every waiting worker. Once per batch of offers, after the last: a woken worker may take
   * the calling thread's core (3 threads on 2 cores here), and a call whose second job was
   * offered only after that had its first worker run all its tasks (in 1 call of 4 for W9's
   * forward). All of them: the oldest waiter may be a worker busy with a message job, and one
   * woken for nothing waits again.
   */
  wake(): void {
    Atomics.notify(this.#h, H.TAIL);
  }

  /** Takes back a job no worker has taken yet; false when one has (it runs, and answers). */
  cancel(slot: number): boolean {
    return Atomics.compareExchange(this.#h, this.#field(slot, S.STATE), SLOT.FILLED, SLOT.CANCELLED) === SLOT.FILLED;
  }

  /** Whether thread `thread` has taken the job in `slot` and not answered it yet. */
  heldBy(slot: number, thread: number): boolean {
    return Atomics.load(this.#h, this.#field(slot, S.STATE)) === takenState(thread);
  }

  /** Reads the answer in a done slot. */
  answer(slot: number): RingAnswer {
    const u = this.#u;
    const at = (f: number): number => this.#field(slot, f);
    const outcome = u[at(S.OUTCOME)];
    const base = this.#textStart(slot);
    const text = (start: number, length: number): string => new TextDecoder().decode(this.#bytes.slice(base + start, base + start + length));
    const messageBytes = u[at(S.MESSAGE_BYTES)]!;
    const stackBytes = u[at(S.STACK_BYTES)]!;
    const message = text(0, messageBytes);
    const stack = stackBytes > 0 ? text(messageBytes, stackBytes) : undefined;
    if (outcome === OUTCOME.FAILED) return { kind: 'failed', message, ...(stack !== undefined ? { stack } : {}) };
    const tasks = u[at(S.TASKS)]!;
    const thread = u[at(S.THREAD_ID)]!;
    if (outcome === OUTCOME.RESULT) return { kind: 'result', result: { tasks, thread } };
    return { kind: 'result', result: { tasks, thread, error: { task: u[at(S.ERROR_TASK)]!, message, ...(stack !== undefined ? { stack } : {}) } } };
  }

  /** Frees a done (or abandoned) slot for a later job. */
  free(slot: number): void {
    Atomics.store(this.#h, this.#field(slot, S.STATE), SLOT.FREE);
  }

  /** A value that changes whenever a job finishes (read it before looking at the slots). */
  get finished(): number {
    return Atomics.load(this.#h, H.FINISHED);
  }

  /** The header's Int32 view and FINISHED's index, for the calling thread's wait. */
  get finishedCell(): readonly [Int32Array, number] {
    return [this.#h, H.FINISHED];
  }

  /** Stops the watchers: they leave at their next look. */
  close(): void {
    Atomics.store(this.#h, H.CLOSED, 1);
    Atomics.notify(this.#h, H.TAIL);
  }

  // -------------------------------------------------------------------------------------------
  // Workers

  /**
   * Takes the oldest job not yet taken, for thread `thread`; undefined when there is none. The
   * job is taken by one compare-exchange of its slot's state that also records the thread, so a
   * thread that dies at any point has either taken it (its exit rejects the job) or not (another
   * takes it). HEAD then moves past the slot, by this worker or by the next one that finds the
   * slot no longer FILLED: a worker that stopped in between leaves no job unreachable.
   */
  take(thread: number): RingJob | undefined {
    const h = this.#h;
    for (;;) {
      const head = Atomics.load(h, H.HEAD);
      if (head === Atomics.load(h, H.TAIL)) return undefined;
      const slot = head % RING_SLOTS;
      const cell = this.#field(slot, S.STATE);
      const took = Atomics.compareExchange(h, cell, SLOT.FILLED, takenState(thread)) === SLOT.FILLED;
      // Cancelled while it waited: the calling thread has answered it; it only needs freeing.
      if (!took && Atomics.compareExchange(h, cell, SLOT.CANCELLED, SLOT.DONE) === SLOT.CANCELLED) this.#finished();
      Atomics.compareExchange(h, H.HEAD, head, (head + 1) % COUNTER_LIMIT);
      if (took) return { slot, job: this.#job(slot) };
    }
  }

  #job(slot: number): TeamJob {
    const u = this.#u;
    const at = (f: number): number => this.#field(slot, f);
    const member = u[at(S.MEMBER)]!;
    const n = u[at(S.EXTERNALS)]!;
    return {
      callId: u[at(S.CALL)]!,
      planId: u[at(S.PLAN)]!,
      planOffset: u[at(S.PLAN_OFFSET)]!,
      planLength: u[at(S.PLAN_LENGTH)]!,
      region: u[at(S.REGION)]!,
      ...(member > 0 ? { member: member - 1 } : {}),
      ...(n > 0 ? { external: Array.from(u.subarray(at(S.EXTERNAL), at(S.EXTERNAL) + n)) } : {}),
    };
  }

  /** Answers the job in `slot` with its team result. */
  answerResult(slot: number, result: TeamResult): void {
    const u = this.#u;
    const at = (f: number): number => this.#field(slot, f);
    u[at(S.TASKS)] = result.tasks;
    u[at(S.THREAD_ID)] = result.thread ?? 0;
    if (result.error) {
      u[at(S.OUTCOME)] = OUTCOME.KERNEL_ERROR;
      u[at(S.ERROR_TASK)] = result.error.task;
      this.#text(slot, result.error.message, result.error.stack);
    } else {
      u[at(S.OUTCOME)] = OUTCOME.RESULT;
      this.#text(slot, '', undefined);
    }
    this.#done(slot);
  }

  /** Answers the job in `slot` with a failure before its tasks (a plan it could not read, say). */
  answerFailure(slot: number, error: unknown): void {
    const e = error as Error;
    this.#u[this.#field(slot, S.OUTCOME)] = OUTCOME.FAILED;
    this.#text(slot, e?.message ?? String(error), e?.stack);
    this.#done(slot);
  }

  /** Writes an error's message and stack, cut to the slot's text bytes. */
  #text(slot: number, message: string, stack: string | undefined): void {
    const start = this.#textStart(slot);
    const m = cutUtf8(new TextEncoder().encode(message), TEXT_BYTES);
    const s = cutUtf8(new TextEncoder().encode(stack ?? ''), TEXT_BYTES - m.length);
    this.#bytes.set(m, start);
    this.#bytes.set(s, start + m.length);
    this.#u[this.#field(slot, S.MESSAGE_BYTES)] = m.length;
    this.#u[this.#field(slot, S.STACK_BYTES)] = s.length;
  }

  /** Where slot `slot`'s error text starts (bytes from the ring's start). */
  #textStart(slot: number): number {
    return HEADER_BYTES + slot * SLOT_BYTES + SLOT_FIELDS * 4;
  }

  #done(slot: number): void {
    Atomics.store(this.#h, this.#field(slot, S.STATE), SLOT.DONE);
    this.#finished();
  }

  #finished(): void {
    Atomics.add(this.#h, H.FINISHED, 1);
    Atomics.notify(this.#h, H.FINISHED);
  }

  /** Says that this worker will not watch the ring (it could not start); wakes the calling thread. */
  fail(): void {
    Atomics.store(this.#h, H.BROKEN, 1);
    this.#finished();
  }

  /**
   * Resolves when a job may be waiting (at once if one is), or the ring closes. It keeps nothing
   * alive: an idle worker waits here with its event loop free for the pool's messages.
   */
  async nextJob(): Promise<void> {
    const tail = Atomics.load(this.#h, H.TAIL);
    if (this.closed || Atomics.load(this.#h, H.HEAD) !== tail) return;
    await Atomics.waitAsync(this.#h, H.TAIL, tail).value;
  }
}
