// The region protocol: a call's region in shared memory starts with a header of counters, then
// one record per team member, the tasks' pending counts and two ready queues (the workers' and
// the calling thread's). This file alone knows that layout: the calling thread opens a call and
// reads its outcome here; team members join, take and finish tasks, sleep and leave here.
import type { PlanDescriptor } from './protocol.js';
import { waitAsyncAlive } from './wait-alive.js';

/**
 * The header's Int32 slots (exported for tests that play a part of the protocol by hand, such as
 * a call ending without a wake-up).
 */
export const H = {
  /** The call this region serves now (0 while closed); late team members check it. */
  CALL: 0,
  /** Tasks finished so far. */
  DONE: 1,
  /** Next queue slot to take. */
  HEAD: 2,
  /** Next queue slot to fill. */
  TAIL: 3,
  /** 0, or 1 + the index of the first task that failed. */
  ERROR: 4,
  /** Non-zero when the call must stop (a failure elsewhere, or an AbortSignal). */
  ABORT: 5,
  /** Team members inside the region now. */
  MEMBERS: 6,
  /** Next slot to take / to fill in the queue of tasks only the calling thread runs. */
  MAIN_HEAD: 7,
  MAIN_TAIL: 8,
  /**
   * 0, or the offer of a task whose kernel runs the tasks of a plan of its own in a nested region
   * (a Scan's steps): 1 + the task, and the offer's parity in bit 30 (see GUESTS). Idle members
   * help with them there. One such task at a time has the team's help.
   */
  NESTED: 9,
  /** In a nested region: the last call id its host task opened (ids must not repeat while members may linger). */
  SERIAL: 10,
  /** In a nested region: which use of the plan the open call is (a Scan's step), for the members' views. */
  STEP: 11,
  /**
   * Members visiting the nested region of an offer of parity 0, and (the next slot) of parity 1
   * (see visitNested). That region lies in the host task's scratch memory, which later tasks may
   * reuse: the host does not end while one is counted for its offer. Offers alternate parity, so
   * that a host waiting for its last visitors does not wait for the next host's helpers too.
   */
  GUESTS: 12,
  /** The parity of the last offer made here (the next one takes the other). */
  OFFER_PARITY: 14,
} as const;

/** The task bits of an offer in H.NESTED (the parity is bit 30). */
const OFFER_TASK = 0x3fffffff;

/** The task an offer in H.NESTED is of (-1 for no offer). */
export function offerTask(offer: number): number {
  return (offer & OFFER_TASK) - 1;
}

/** Bytes of the header; the members' records follow it (the planner lays the region out). */
export const HEADER_BYTES = 64;

/**
 * Slots a call starts from zero. The guest counts too: a region is opened again only once no
 * member is inside, and visits happen inside, so a count left by a member whose thread died
 * outside a task (its record said idle) must not outlive its call.
 */
const CLEARED_SLOTS = [H.DONE, H.HEAD, H.ERROR, H.ABORT, H.MAIN_HEAD, H.NESTED, H.GUESTS, H.GUESTS + 1] as const;

/**
 * A member's record, one Int32 each: the calling thread reads it when a worker died, to tell a
 * call whose kernel was running there (it fails, naming the node) from calls the dead thread had
 * left (they are complete) or never joined (their job is sent again).
 */
const RECORD = { ABSENT: 0, IDLE: 1, LEFT: -1, RUNNING: 2 } as const;

/** What a team member's record says it is doing. */
export type MemberState =
  | { readonly kind: 'absent' }
  | { readonly kind: 'idle' }
  | { readonly kind: 'left' }
  | { readonly kind: 'running'; readonly task: number };

/** One region of the shared memory, for the plan laid out in it: its header, records and queues. */
export class RegionState {
  readonly #base: number;
  readonly #pending: number;
  readonly #queue: number;
  readonly #mainQueue: number;
  readonly #records: number;
  readonly #total: number;
  /**
   * The calling thread runs the open call alone (workers: 0, or too little work): no thread waits
   * on this region, so finishing a task wakes nobody (three notifies were a tenth of a scalar call).
   */
  alone = false;

  /** `region` is the region's byte offset in the memory `h` views. */
  constructor(
    readonly h: Int32Array,
    readonly region: number,
    readonly plan: PlanDescriptor,
  ) {
    this.#base = region >>> 2;
    this.#pending = (region + plan.pendingOffset) >>> 2;
    this.#queue = (region + plan.queueOffset) >>> 2;
    this.#mainQueue = (region + plan.mainQueueOffset) >>> 2;
    this.#records = (region + plan.memberOffset) >>> 2;
    this.#total = plan.tasks.length;
  }

  #at(slot: number): number {
    return this.#base + slot;
  }

  // -------------------------------------------------------------------------------------------
  // The calling thread

  /**
   * Makes a block fresh from the arena a region: its header zeroed (a recycled block holds the
   * bytes of its last use), so that no member is counted inside and no call is open.
   */
  initialize(): void {
    this.h.fill(0, this.#base, this.#base + HEADER_BYTES / 4);
  }

  /** Opens call `callId`: pending counts, both ready queues, cleared counters and records, then the call's id. */
  open(callId: number): void {
    const { h, plan } = this;
    h.set(plan.initialPending, this.#pending);
    h.fill(-1, this.#queue, this.#queue + plan.tasks.length);
    h.set(plan.initialReady, this.#queue);
    h.fill(-1, this.#mainQueue, this.#mainQueue + plan.tasks.length);
    h.set(plan.initialMainReady, this.#mainQueue);
    for (const slot of CLEARED_SLOTS) Atomics.store(h, this.#at(slot), 0);
    h.fill(RECORD.ABSENT, this.#records, this.#records + plan.memberSlots);
    Atomics.store(h, this.#at(H.TAIL), plan.initialReady.length);
    Atomics.store(h, this.#at(H.MAIN_TAIL), plan.initialMainReady.length);
    Atomics.store(h, this.#at(H.CALL), callId);
  }

  /** Closes the call: members that arrive late leave at once. */
  close(): void {
    Atomics.store(this.h, this.#at(H.CALL), 0);
  }

  /** Stops the call (an AbortSignal, a failed member): members see it between tasks. */
  abort(): void {
    Atomics.store(this.h, this.#at(H.ABORT), 1);
    Atomics.notify(this.h, this.#at(H.TAIL));
  }

  /** The first task that failed, if one did. */
  failedTask(): number | undefined {
    const failed = Atomics.load(this.h, this.#at(H.ERROR));
    return failed > 0 ? failed - 1 : undefined;
  }

  /** Every task finished and the call was not stopped. */
  get completed(): boolean {
    return Atomics.load(this.h, this.#at(H.ABORT)) === 0 && Atomics.load(this.h, this.#at(H.DONE)) === this.#total;
  }

  /** Team members inside the region now. */
  get members(): number {
    return Atomics.load(this.h, this.#at(H.MEMBERS));
  }

  /**
   * Resolves once no member is inside the region (late members may still be leaving a finished
   * call). It does not keep the process alive: a member whose thread was terminated inside the
   * region never leaves, and the process may still exit.
   */
  async emptied(): Promise<void> {
    const slot = this.#at(H.MEMBERS);
    for (let n = Atomics.load(this.h, slot); n !== 0; n = Atomics.load(this.h, slot)) await Atomics.waitAsync(this.h, slot, n, 100).value;
  }

  /** What member `member`'s record says. */
  memberState(member: number): MemberState {
    const record = Atomics.load(this.h, this.#record(member));
    if (record === RECORD.LEFT) return { kind: 'left' };
    if (record >= RECORD.RUNNING) return { kind: 'running', task: record - RECORD.RUNNING };
    return record === RECORD.IDLE ? { kind: 'idle' } : { kind: 'absent' };
  }

  /**
   * Member `member`'s thread died outside any kernel: if it had joined, it leaves in its name
   * (it never ran its own leave), and its record is cleared for the job to be sent again.
   */
  forgetMember(member: number): void {
    const slot = this.#record(member);
    if (Atomics.load(this.h, slot) === RECORD.IDLE) Atomics.sub(this.h, this.#at(H.MEMBERS), 1);
    Atomics.store(this.h, slot, RECORD.ABSENT);
  }

  // -------------------------------------------------------------------------------------------
  // Team members

  /** The Int32 index of member `member`'s record. */
  #record(member: number): number {
    if (!Number.isInteger(member) || member < 0 || member >= this.plan.memberSlots) {
      throw new RangeError(`team job: member ${member} is outside the plan's ${this.plan.memberSlots} member records`);
    }
    return this.#records + member;
  }

  /** Throws when `member` has no record in this plan (a job for a member the plan cannot have). */
  checkMember(member: number): void {
    this.#record(member);
  }

  /** Enters the region; whether call `callId` is the one it serves (if not, the member leaves at once). */
  enter(callId: number): boolean {
    Atomics.add(this.h, this.#at(H.MEMBERS), 1);
    return Atomics.load(this.h, this.#at(H.CALL)) === callId;
  }

  /** Leaves the region (after `enter`, whatever the call's outcome). */
  exit(): void {
    Atomics.sub(this.h, this.#at(H.MEMBERS), 1);
  }

  /** Records what member `member` does now: between tasks, running task `task`, or gone. */
  mark(member: number | undefined, what: 'idle' | 'left' | { readonly task: number }): void {
    if (member === undefined) return;
    const record = what === 'idle' ? RECORD.IDLE : what === 'left' ? RECORD.LEFT : RECORD.RUNNING + what.task;
    Atomics.store(this.h, this.#record(member), record);
  }

  // -------------------------------------------------------------------------------------------
  // Nested regions: a task that runs a plan of its own (a Scan's step) as the team's second level

  /**
   * Offers task `t`'s nested region to the members that are idle; false when another task has
   * the offer (this one then runs its nested plan alone). Wakes the members asleep.
   */
  offerNested(t: number): boolean {
    const h = this.h;
    if (Atomics.compareExchange(h, this.#at(H.NESTED), 0, t + 1) !== 0) return false;
    // The offer is this task's alone now, and the last one's parity was set before it was withdrawn.
    const parity = 1 - Atomics.load(h, this.#at(H.OFFER_PARITY));
    Atomics.store(h, this.#at(H.OFFER_PARITY), parity);
    Atomics.store(h, this.#at(H.NESTED), (parity << 30) | (t + 1));
    Atomics.notify(h, this.#at(H.TAIL));
    return true;
  }

  /**
   * Task `t` withdraws its offer (its nested plan has run its last time), then waits until no
   * member visits its nested region, or `stop` says the call is over: once the task ends, its
   * scratch memory may hold other buffers, which a member reading them as a region's header
   * would corrupt.
   */
  withdrawNested(t: number, stop: () => boolean): void {
    const h = this.h;
    const offer = Atomics.load(h, this.#at(H.NESTED));
    if ((offer & OFFER_TASK) !== t + 1) return;
    Atomics.compareExchange(h, this.#at(H.NESTED), offer, 0);
    const guests = this.#at(H.GUESTS + (offer >>> 30));
    while (Atomics.load(h, guests) !== 0) if (stop()) return;
  }

  /**
   * A member visits the nested region of `offer` (as nestedOffer read it): true while it is still
   * the offer, until the member's `leaveNested(offer)`; false (and not counted) when it was
   * withdrawn since. Counting before checking, as the host withdraws before it waits, means that
   * one of the two sees the other.
   */
  visitNested(offer: number): boolean {
    const guests = this.#at(H.GUESTS + (offer >>> 30));
    Atomics.add(this.h, guests, 1);
    if (Atomics.load(this.h, this.#at(H.NESTED)) === offer) return true;
    Atomics.sub(this.h, guests, 1);
    return false;
  }

  /** Ends a visit that `visitNested(offer)` began. */
  leaveNested(offer: number): void {
    Atomics.sub(this.h, this.#at(H.GUESTS + (offer >>> 30)), 1);
  }

  /** The offer of a nested region (see H.NESTED), or 0. */
  nestedOffer(): number {
    return Atomics.load(this.h, this.#at(H.NESTED));
  }

  /** A nested region's use of its plan (its host's step) for the call it opens next; set before `open`. */
  set step(step: number) {
    Atomics.store(this.h, this.#at(H.STEP), step);
  }

  get step(): number {
    return Atomics.load(this.h, this.#at(H.STEP));
  }

  /** The call this region serves now (0 while closed). */
  get call(): number {
    return Atomics.load(this.h, this.#at(H.CALL));
  }

  /**
   * A nested region's next call id, never 0 and different from the last (a member that read
   * the last id and enters late must find it changed). Only the host task calls it.
   */
  nextCall(): number {
    const slot = this.#at(H.SERIAL);
    const id = ((this.h[slot]! + 1) & 0x3fffffff) || 1;
    this.h[slot] = id;
    return id;
  }

  /**
   * A nested region before its first call: no member counted inside, no call open. Safe only
   * while no member can know of it (before its host task offers it).
   */
  reset(): void {
    for (const slot of [H.CALL, H.MEMBERS, H.DONE, H.HEAD, H.TAIL, H.ABORT]) Atomics.store(this.h, this.#at(slot), 0);
  }

  /** Spins until no member is inside (members leave a finished nested call within a few loads). */
  waitEmpty(stop: () => boolean): void {
    const slot = this.#at(H.MEMBERS);
    while (Atomics.load(this.h, slot) !== 0) if (stop()) return;
  }

  /** Takes a task from a queue (the workers' or the calling thread's), or returns -1. */
  take(main: boolean): number {
    const h = this.h;
    const headSlot = this.#at(main ? H.MAIN_HEAD : H.HEAD);
    const head = Atomics.load(h, headSlot);
    if (head >= Atomics.load(h, this.#at(main ? H.MAIN_TAIL : H.TAIL))) return -1;
    if (Atomics.compareExchange(h, headSlot, head, head + 1) !== head) return this.take(main);
    const q = main ? this.#mainQueue : this.#queue;
    let task = Atomics.load(h, q + head);
    while (task < 0) task = Atomics.load(h, q + head);
    return task;
  }

  /** After task `t`: releases the tasks waiting only for it, counts it done, wakes sleepers. */
  finish(t: number): void {
    const { h, plan } = this;
    let released = 0;
    let releasedMain = 0;
    for (const s of plan.tasks[t]!.successors) {
      if (Atomics.sub(h, this.#pending + s, 1) !== 1) continue;
      if (plan.calls[plan.tasks[s]!.call]!.main) {
        Atomics.store(h, this.#mainQueue + Atomics.add(h, this.#at(H.MAIN_TAIL), 1), s);
        releasedMain += 1;
      } else {
        Atomics.store(h, this.#queue + Atomics.add(h, this.#at(H.TAIL), 1), s);
        released += 1;
      }
    }
    const last = Atomics.add(h, this.#at(H.DONE), 1) + 1 === this.#total;
    if (this.alone) return;
    if (released > 0) Atomics.notify(h, this.#at(H.TAIL));
    if (releasedMain > 0) Atomics.notify(h, this.#at(H.MAIN_TAIL));
    if (last) this.#wakeAll();
  }

  /** Whether tasks wait in the calling thread's queue. */
  get mainQueued(): boolean {
    return Atomics.load(this.h, this.#at(H.MAIN_HEAD)) < Atomics.load(this.h, this.#at(H.MAIN_TAIL));
  }

  /** Task `t` failed: the first failure is kept, and the call stops. */
  fail(t: number): void {
    Atomics.compareExchange(this.h, this.#at(H.ERROR), 0, t + 1);
    Atomics.store(this.h, this.#at(H.ABORT), 1);
    this.#wakeAll();
  }

  #wakeAll(): void {
    for (const slot of [H.TAIL, H.MAIN_TAIL, H.DONE]) Atomics.notify(this.h, this.#at(slot));
  }

  /** The call is finished, failed or stopped. */
  get over(): boolean {
    return Atomics.load(this.h, this.#at(H.ABORT)) !== 0 || Atomics.load(this.h, this.#at(H.DONE)) >= this.#total;
  }

  /**
   * Sleeps (blocking) until a worker task is queued, a nested region is offered, or `ms` pass;
   * not at all when a task was queued since the caller last looked (it would sleep past it).
   */
  sleep(ms: number): void {
    const tail = Atomics.load(this.h, this.#at(H.TAIL));
    if (Atomics.load(this.h, this.#at(H.HEAD)) < tail) return;
    Atomics.wait(this.h, this.#at(H.TAIL), tail, ms);
  }

  /**
   * Waits without blocking the event loop until a calling-thread task is queued, the call is
   * over, or `ms` pass (a wake-up may be missed: the caller checks again).
   */
  async sleepMain(ms: number): Promise<void> {
    const tail = Atomics.load(this.h, this.#at(H.MAIN_TAIL));
    if (this.over || Atomics.load(this.h, this.#at(H.MAIN_HEAD)) < tail) return;
    await waitAsyncAlive(this.h, this.#at(H.MAIN_TAIL), tail, ms);
  }
}
