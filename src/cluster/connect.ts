// weft.cluster.connect: a remote function, called as a compiled one, whose calls are jobs in a
// BullMQ queue that `serve` processes (often `weft worker` on other machines). The function's
// document is stored under its hash (again after every reconnect, so a Redis restart loses
// nothing); each call is a job with its arguments as a binary frame; the answer comes back through
// the queue's event stream. A call gets exactly one answer, whatever workers die on the way.
import type { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { abortedBy } from '../graph/abort.js';
import { currentValue } from '../graph/shared.js';
import { isCallOptions, type CompiledFunction, type WeftFunction } from '../compile/function.js';
import { isWeftFunction, serialize } from '../compile/serialize-function.js';
import type { NdArray } from '../tensor/core/ndarray.js';
import type { TensorSharedVariable } from '../tensor/core/variable.js';
import { bullmq, DEFAULT_PREFIX, newClient, type Connection } from './connection.js';
import { documentHash, documentKey } from './documents.js';
import { errorOfReason } from './errors.js';
import { readDocument } from './function-document.js';
import { CALL_JOB, type CallJob } from './job.js';
import { frameText, toWireValue, valuesOfText } from './wire.js';

export interface ConnectOptions {
  /** Redis: a URL or ioredis options. */
  readonly connection: Connection;
  /** The queue that servers take calls from. */
  readonly queue: string;
  /** BullMQ's key prefix (default 'bull'). */
  readonly prefix?: string;
  /**
   * Where the shared variables a function updates live. Workers keep no state, so a function with
   * updates is refused unless this is 'caller': each call then sends their current values, and
   * the new values come back and are set here (on the compiled function's shared variables, or on
   * `remote.shared` for a document), all together when the call succeeds.
   */
  readonly state?: 'caller';
}

export interface MapOptions {
  /** Called after each result with the number done and the total. */
  readonly onProgress?: (done: number, total: number) => void;
  readonly signal?: AbortSignal;
}

/**
 * A function whose calls run on the cluster, called as the compiled function it was made from
 * (`R` what a call gives, `A` its arguments); from a document: one ndarray for one output, else an array.
 */
export interface RemoteFunction<R = NdArray | NdArray[], A extends readonly unknown[] = unknown[]> {
  (...args: [...A] | [...A, { readonly signal?: AbortSignal }]): Promise<R>;
  /** Calls for each argument list, all queued at once; results in order. */
  map(argLists: readonly (readonly [...A])[], options?: MapOptions): Promise<R[]>;
  /** The hash of the function's document (its name in Redis). */
  readonly hash: string;
  /** The shared variables whose values travel with each call (empty without updates). */
  readonly shared: readonly TensorSharedVariable[];
  /** Calls sent and not yet answered. */
  readonly pending: number;
  /** Rejects the calls still waiting and disconnects. */
  close(): Promise<void>;
}

interface Waiting {
  readonly resolve: (results: NdArray[]) => void;
  readonly reject: (e: unknown) => void;
}

/** A remote function for a compiled function or its serialized document. */
export async function connect<R, A extends readonly unknown[]>(fn: WeftFunction<R, A>, options: ConnectOptions): Promise<RemoteFunction<R, A>>;
export async function connect(document: string, options: ConnectOptions): Promise<RemoteFunction>;
export async function connect(fnOrDocument: CompiledFunction | string, options: ConnectOptions): Promise<RemoteFunction> {
  if (typeof options?.queue !== 'string' || options.queue === '') throw new TypeError(`weft.cluster.connect: queue must be a non-empty name, got ${String(options?.queue)}`);
  const text = typeof fnOrDocument === 'string' ? fnOrDocument : isWeftFunction(fnOrDocument) ? serialize(fnOrDocument) : badTarget(fnOrDocument);
  const { signature } = readDocument(text);
  const shared = isWeftFunction(fnOrDocument) ? fnOrDocument.updated : signature.updated;
  if (shared.length > 0 && options.state !== 'caller') {
    const names = shared.map((s) => s.name ?? 'unnamed').join(', ');
    throw new TypeError(
      `weft.cluster.connect: ${signature.label} updates shared variables (${names}), and workers keep no state; ` +
        `pass { state: 'caller' } to send their values with each call and apply the new values here`,
    );
  }
  const { Queue, QueueEvents } = await bullmq();
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const hash = documentHash(text);
  const key = documentKey(prefix, options.queue, hash);
  const commands: Redis = await newClient(options.connection, 'caller');
  const eventsClient: Redis = await newClient(options.connection, 'caller events');
  // Stored on every (re)connect: a Redis that restarted empty gets the document back before new calls need it.
  const store = (): Promise<unknown> => commands.set(key, text).catch(() => undefined);
  commands.on('ready', () => void store());
  await commands.set(key, text);
  const queue: Queue = new Queue(options.queue, { connection: commands, prefix });
  // Events from now on, by Redis's clock: a listener that started at '$' (the default) would miss
  // the answer of a call that finished before its first read reached Redis.
  const [seconds, micros] = await commands.time();
  const lastEventId = `${Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - 1}-0`;
  const events: QueueEvents = new QueueEvents(options.queue, { connection: eventsClient, prefix, lastEventId });
  queue.on('error', () => undefined);
  events.on('error', () => undefined);
  await events.waitUntilReady();

  const waiting = new Map<string, Waiting>();
  const tag = crypto.randomUUID().slice(0, 8);
  let counter = 0;
  let closed = false;

  events.on('completed', ({ jobId, returnvalue }) => {
    const w = waiting.get(jobId);
    if (!w) return;
    waiting.delete(jobId);
    try {
      w.resolve(valuesOfText(returnvalue, `the results of ${signature.label}`).map((v) => (v.kind === 'array' ? v.array : unreachable())));
    } catch (e) {
      w.reject(e);
    }
  });
  events.on('failed', ({ jobId, failedReason }) => {
    const w = waiting.get(jobId);
    if (!w) return;
    waiting.delete(jobId);
    w.reject(errorOfReason(failedReason));
  });

  /** The job of one call; argument errors are thrown here, as a local call throws them. */
  const jobOf = (args: readonly unknown[]): CallJob => {
    if (args.length !== signature.inputWhere.length) {
      throw new TypeError(`${signature.label} expects ${signature.inputWhere.length} argument${signature.inputWhere.length === 1 ? '' : 's'} (${signature.inputNames.join(', ')}), got ${args.length}`);
    }
    const values = args.map((a, i) => toWireValue(a, signature.inputWhere[i]!));
    const job: CallJob = { fn: hash, args: frameText(values, `the arguments of ${signature.label}`) };
    if (shared.length === 0) return job;
    // Encoded at once (frameText): the values are read, not lent out (graph/shared.ts, wasLent).
    const state = shared.map((s) => ({ kind: 'array' as const, array: currentValue(s) }));
    return { ...job, state: frameText(state, `the shared values of ${signature.label}`) };
  };

  /** What a call resolves to: its outputs, after the new shared values are set (all of them, or none). */
  const answer = (results: NdArray[]): NdArray | NdArray[] => {
    const outputs = results.slice(0, signature.outputs);
    if (shared.length > 0) {
      const values = shared.map((s, k) => s.type.filter(results[signature.outputs + k], { what: `the update of ${s} by remote ${signature.label}` }));
      shared.forEach((s, k) => s.setValue(values[k]!, { borrow: true }));
    }
    return signature.outputs === 1 ? outputs[0]! : outputs;
  };

  /** Ends the calls `ids` still waiting with `error`: a job no worker took leaves the queue; one that runs finishes unheard. */
  const drop = (ids: readonly string[], error: unknown): void => {
    for (const id of ids) {
      const w = waiting.get(id);
      if (!w) continue;
      waiting.delete(id);
      queue.remove(id).catch(() => undefined);
      w.reject(error);
    }
  };

  /** Queues calls (one addBulk) and returns their answers' promises, in order. */
  const send = async (jobs: readonly CallJob[], signal: AbortSignal | undefined): Promise<{ readonly ids: string[]; readonly answers: Array<Promise<NdArray[]>> }> => {
    if (closed) throw new Error(`remote ${signature.label}: closed`);
    const ids = jobs.map(() => `${hash.slice(0, 12)}-${tag}-${counter++}`);
    const answers = ids.map(
      (id) =>
        new Promise<NdArray[]>((resolve, reject) => {
          waiting.set(id, { resolve, reject });
        }),
    );
    if (signal) {
      const onAbort = (): void => drop(ids, abortedBy(signal, `remote ${signature.label}: the call was aborted`));
      signal.addEventListener('abort', onAbort, { once: true });
      void Promise.allSettled(answers).then(() => signal.removeEventListener('abort', onAbort));
    }
    try {
      await queue.addBulk(jobs.map((data, k) => ({ name: CALL_JOB, data, opts: { jobId: ids[k]!, removeOnComplete: true, removeOnFail: true, attempts: 1 } })));
    } catch (e) {
      for (const id of ids) waiting.delete(id);
      throw e;
    }
    return { ids, answers };
  };

  const call = async (...args: unknown[]): Promise<NdArray | NdArray[]> => {
    const callOptions = args.length === signature.inputWhere.length + 1 && isCallOptions(args[args.length - 1]) ? args.pop() as { signal?: AbortSignal } : {};
    const signal = callOptions.signal;
    if (signal?.aborted) throw abortedBy(signal, `remote ${signature.label}: the call was aborted before it started`);
    const { answers } = await send([jobOf(args)], signal);
    return answer(await answers[0]!);
  };

  const map = async (argLists: readonly (readonly unknown[])[], mapOptions: MapOptions = {}): Promise<Array<NdArray | NdArray[]>> => {
    if (!Array.isArray(argLists)) throw new TypeError(`remote ${signature.label}.map: expected an array of argument lists, got ${typeof argLists}`);
    const { signal, onProgress } = mapOptions;
    if (signal?.aborted) throw abortedBy(signal, `remote ${signature.label}: the calls were aborted before they started`);
    const jobs = argLists.map((args, i) => {
      if (!Array.isArray(args)) throw new TypeError(`remote ${signature.label}.map: argument list ${i} is not an array`);
      return jobOf(args);
    });
    const ids: string[] = [];
    const answers: Array<Promise<NdArray[]>> = [];
    // Batches keep each Redis round trip small; all batches are queued before any answer is awaited.
    for (let at = 0; at < jobs.length; at += BATCH) {
      const sent = await send(jobs.slice(at, at + BATCH), signal);
      ids.push(...sent.ids);
      answers.push(...sent.answers);
    }
    let done = 0;
    const results = answers.map((a) =>
      a.then((r) => {
        onProgress?.(++done, jobs.length);
        return r;
      }),
    );
    try {
      const all = await Promise.all(results);
      return all.map(answer);
    } catch (e) {
      // The first failure ends the map: calls not yet taken leave the queue.
      drop(ids, e);
      void Promise.allSettled(results);
      throw e;
    }
  };

  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    const error = new Error(`remote ${signature.label}: closed before the call was answered`);
    for (const w of waiting.values()) w.reject(error);
    waiting.clear();
    await Promise.allSettled([events.close(), queue.close()]);
    commands.disconnect();
    eventsClient.disconnect();
  };

  const remote = Object.assign(call, { map, hash, shared, close });
  Object.defineProperty(remote, 'pending', { get: () => waiting.size, enumerable: true });
  return remote as unknown as RemoteFunction;
}

/** Calls queued per round trip by map. */
const BATCH = 500;

function badTarget(x: unknown): never {
  throw new TypeError(`weft.cluster.connect: expected a compiled function or its serialized document, got ${typeof x}`);
}

function unreachable(): never {
  throw new TypeError('weft.cluster: a result frame holds a JS literal');
}
