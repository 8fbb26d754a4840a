// What the calling thread and the workers agree on: the layout of a call's region in shared
// memory (a header of counters, then the pending counts and the ready queue of the tasks, then
// the data), the plan descriptor that workers read from shared memory, and the job message.
import type { Dtype } from '../kernels/dtype.js';
import type { KernelParams } from '../kernels/registry.js';

/** Int32 slots of a region's header. */
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
} as const;

export const HEADER_BYTES = 64;

/**
 * What each team member of a call is doing, one Int32 per member after the header: the calling
 * thread reads it when a worker died, to tell a call whose kernel was running there (it fails,
 * naming the node) from calls the dead thread had left (they are complete) or never joined
 * (their job is sent again).
 */
export const MEMBER = {
  /** Not joined (yet). */
  ABSENT: 0,
  /** Inside the call, between tasks. */
  IDLE: 1,
  /** Left the call. */
  LEFT: -1,
  /** Running task t: RUNNING + t. */
  RUNNING: 2,
} as const;

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
 * output elements, by rows of output 0 or by lanes (the kernel gets the task's range), or by
 * slabs: task j runs the kernel on slab j of input 0 along `axis` (of `count` slabs, cut as
 * `slabBounds` cuts them) and writes row j of output 0, which stacks one result per slab.
 */
export type CallSplit =
  | { readonly by: 'elements' | 'rows' | 'lanes' }
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
  readonly movableOutputs: ReadonlyArray<{ readonly output: number; readonly base: number; readonly bytes: number; readonly views: readonly number[] }>;
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
