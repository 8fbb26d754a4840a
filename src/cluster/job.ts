// The job a call becomes: what a caller puts in the queue and a worker checks before it runs
// anything. Everything in it is plain JSON (BullMQ's job data); values are base64 frames (wire.ts).

/** The queue's job name for a call. */
export const CALL_JOB = 'weft-call';

/** A call of the function whose document has hash `fn`. */
export interface CallJob {
  /** The document's hash (documents.ts). */
  readonly fn: string;
  /** The explicit arguments' frame. */
  readonly args: string;
  /** The updated shared variables' values, for a function that updates them. */
  readonly state?: string;
}

/** `data` as a call job, or why it is not one. */
export function readCallJob(data: unknown): CallJob {
  const fail = (why: string): never => {
    throw new TypeError(`weft.cluster: the job is not a weft call (${why})`);
  };
  if (typeof data !== 'object' || data === null) return fail('its data is not an object');
  const { fn, args, state } = data as Record<string, unknown>;
  if (typeof fn !== 'string' || !/^[0-9a-f]{64}$/.test(fn)) fail('fn is not a SHA-256 hash');
  if (typeof args !== 'string') fail('args is not text');
  if (state !== undefined && typeof state !== 'string') fail('state is not text');
  return { fn: fn as string, args: args as string, ...(state !== undefined ? { state: state as string } : {}) };
}
