// What the calling thread and the workers agree on: the plan descriptor that workers read from
// shared memory (where each view, call and task of a call's region is), and the job message.
// The region's header and queues, and every operation on them, are region.ts's.
import type { Dtype } from '../kernels/dtype.js';
import type { KernelParams } from '../kernels/registry.js';

/** Most members a call has (the team is also bounded by the pool's size and the plan's width). */
export const MAX_MEMBERS = 256;

/** A variable's place in a region: byte offset from the region's start, and its layout. */
export interface ViewDescriptor {
  readonly dtype: Dtype;
  readonly offset: number;
  readonly shape: readonly number[];
  readonly stride: readonly number[];
}

/**
 * How the tasks of a call divide its work (tasks with start -1 run the whole call): by flat
 * elements of output `output` (0 by default; of input `input` instead for a call that writes
 * nothing in the region, a copy out of it), by rows of output 0 or by lanes (the kernel gets
 * the task's range), or by
 * slabs: task j runs the kernel on slab j of input 0 along `axis` (of `count` slabs, cut as
 * `slabBounds` cuts them) and writes row j of output 0, which stacks one result per slab.
 */
export type CallSplit =
  | { readonly by: 'elements'; readonly output?: number; readonly input?: number }
  | { readonly by: 'rows' | 'lanes' }
  | { readonly by: 'slabs'; readonly axis: number; readonly count: number };

/** Where slab j of `count` slabs of an axis of this length starts and ends. */
export function slabBounds(length: number, count: number, j: number): readonly [number, number] {
  return [Math.floor((j * length) / count), Math.floor(((j + 1) * length) / count)];
}

/**
 * The kernel of barrier tasks: it does nothing. A barrier stands between every task of one call
 * and every task of a later one, so that n producers and m consumers take n + m edges, not n x m.
 */
export const BARRIER_KERNEL = 'weft.barrier';

/**
 * The kernel of the calling thread's copies of a call's large arguments into its region and of
 * its large results out (scheduler/plan/argument-copies.ts): main calls, never run by a worker.
 */
export const ARGUMENT_COPY_KERNEL = 'weft.argument-copy';

/** One node's kernel call: which kernel, its params, and the views it reads and writes. */
export interface CallDescriptor {
  readonly kernel: string;
  readonly params: KernelParams;
  readonly inputs: readonly number[];
  readonly outputs: readonly number[];
  /** The node, as text, for error messages. */
  readonly label: string;
  /** Runs on the calling thread (an op without a worker kernel): never taken by a worker. */
  readonly main?: boolean;
  /** How its tasks divide the work, when there may be several. */
  readonly split?: CallSplit;
}

/** A task: a kernel call over a range of its work (or all of it), and the tasks waiting for it. */
export interface TaskDescriptor {
  readonly call: number;
  /** The range of work units, or -1/-1 for the whole call. */
  readonly start: number;
  readonly end: number;
  readonly successors: readonly number[];
}

export interface PlanDescriptor {
  readonly id: number;
  readonly regionBytes: number;
  /** Byte offset (from the region start) of the members' records (see MEMBER), and how many there are. */
  readonly memberOffset: number;
  readonly memberSlots: number;
  /** Byte offsets (from the region start) of the pending counts and of the queue. */
  readonly pendingOffset: number;
  readonly queueOffset: number;
  /** Byte offset of the queue of calling-thread tasks. */
  readonly mainQueueOffset: number;
  readonly views: readonly ViewDescriptor[];
  readonly calls: readonly CallDescriptor[];
  readonly tasks: readonly TaskDescriptor[];
  readonly initialPending: readonly number[];
  /** Tasks ready at the start, for the workers' queue and for the calling thread's queue. */
  readonly initialReady: readonly number[];
  readonly initialMainReady: readonly number[];
  /**
   * Inputs that a call may give in place, from the pool's shared memory, instead of copying them
   * into the region: for each, the byte offset its buffer has in the region and every view into
   * that buffer (they move with it). Inputs that a node overwrites are never among them.
   */
  readonly relocatable: ReadonlyArray<{ readonly input: number; readonly base: number; readonly views: readonly number[] }>;
  /**
   * Outputs that a call may have written straight into memory the caller then owns, instead of
   * copying them out of the region: for each, the byte offset and size of its buffer in the
   * region and every view into that buffer (they move with it). Only an output that is the whole
   * of a buffer a node writes, and that no other output shares, is among them.
   */
  readonly movableOutputs: ReadonlyArray<MovableOutput>;
  /**
   * Outputs that may be written elsewhere in the pool's shared memory (a row of a Scan's stacked
   * output): as movableOutputs, and also those whose writer's fast path needs the shared memory.
   */
  readonly arenaMovableOutputs: ReadonlyArray<MovableOutput>;
}

/** An output whose buffer may move: its byte offset and size in the region, and the views into it. */
export interface MovableOutput {
  readonly output: number;
  readonly base: number;
  readonly bytes: number;
  readonly views: readonly number[];
}

/** The message of one team job: join call `callId` in the region at `region`. */
export interface TeamJob {
  readonly callId: number;
  readonly planId: number;
  /** Where the plan's JSON lies in shared memory (bytes). */
  readonly planOffset: number;
  readonly planLength: number;
  readonly region: number;
  /** Which member of the call this job is (its record's index; see MEMBER). */
  readonly member?: number;
  /** Record the time of every task (profiling). */
  readonly trace?: boolean;
  /** Inputs given in place: pairs [input index, byte offset in shared memory], flattened. */
  readonly external?: readonly number[];
  /** Outputs written into memory of their own: pairs [output index, buffer] (see movableOutputs). */
  readonly outputMemory?: OutputMemory;
}

/** What a worker is sent: one team job, or several (of distinct calls) to run in turn. */
export type TeamMessage = TeamJob | { readonly batch: readonly TeamJob[] };

/** Buffers that outputs are written into directly, by output index (see PlanDescriptor.movableOutputs). */
export type OutputMemory = ReadonlyArray<readonly [number, ArrayBufferLike]>;

/** What a team member reports when it leaves. */
export interface TeamResult {
  readonly tasks: number;
  readonly error?: { readonly task: number; readonly message: string; readonly stack?: string };
  /** Per task run: [task, start, end] in milliseconds since the epoch (performance.timeOrigin + now). */
  readonly trace?: ReadonlyArray<readonly [number, number, number]>;
  /** Which thread ran them (worker_threads' threadId; 0 for the calling thread). */
  readonly thread?: number;
}

/**
 * A plan descriptor as the text workers read from shared memory: JSON, with the numbers JSON
 * cannot hold (NaN, the infinities, -0, in kernel params such as a program's constants) written
 * as `{ "weft:number": "NaN" }` and read back by planFromText.
 */
export function planToText(plan: PlanDescriptor): string {
  return JSON.stringify(plan, (_key, v: unknown) => (typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0)) ? { [SPECIAL_NUMBER]: Object.is(v, -0) ? '-0' : String(v) } : v));
}

export function planFromText(text: string): PlanDescriptor {
  return JSON.parse(text, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, SPECIAL_NUMBER)) return v;
    const s = (v as Record<string, string>)[SPECIAL_NUMBER];
    return s === '-0' ? -0 : Number(s);
  }) as PlanDescriptor;
}

const SPECIAL_NUMBER = 'weft:number';
