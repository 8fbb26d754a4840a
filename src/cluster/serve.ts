// weft.cluster.serve: a BullMQ worker in this process that runs weft calls from a queue on the
// local pool. A call names its function by the hash of its document; the document is fetched from
// Redis once, checked against the hash, loaded with the serializer's validation (never run as
// code), compiled once and cached. Failures are final (not retried); a process that dies mid-call
// leaves its jobs to BullMQ's stalled-job check, which hands them to another worker.
import type { Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { getDefaultPool, type Pool } from '../compile/pool.js';
import { bullmq, DEFAULT_PREFIX, newClient, type Connection } from './connection.js';
import { checkDocument, documentKey } from './documents.js';
import { failedReason } from './errors.js';
import { compileDocument, type DocumentFunction, type Signature } from './function-document.js';
import { CALL_JOB, readCallJob } from './job.js';
import { frameText, fromWireValue, valuesOfText } from './wire.js';

export interface ServeOptions {
  /** Redis: a URL or ioredis options. */
  readonly connection: Connection;
  /** The queue's name (callers connect to the same one). */
  readonly queue: string;
  /** The pool calls run on (default: weft's default pool). */
  readonly pool?: Pool;
  /** Calls this process runs at once (default: 4 per worker thread of the pool, at least 4: small calls wait mostly on Redis). */
  readonly concurrency?: number;
  /** BullMQ's key prefix (default 'bull'). */
  readonly prefix?: string;
  /** How long a call's lock lasts without renewal, in ms; a dead process's calls run again after it (BullMQ's default 30000). */
  readonly lockDuration?: number;
  /** How often stalled calls are looked for, in ms (BullMQ's default 30000). */
  readonly stalledInterval?: number;
  /** How many times a call may stall before it fails (BullMQ's default 1). */
  readonly maxStalledCount?: number;
  /** Close gracefully on SIGTERM and SIGINT, then end as the signal would (default true). */
  readonly handleSignals?: boolean;
  /** How long a graceful close waits for calls in flight before it leaves them to other workers, in ms (default 30000). */
  readonly shutdownTimeout?: number;
  /** Compiled functions kept (default 32; the least recently used is dropped). */
  readonly cacheSize?: number;
}

/** What a server has done since it started. */
export interface ServerStats {
  readonly done: number;
  readonly failed: number;
  readonly inFlight: number;
  /** performance.now() when it started. */
  readonly since: number;
}

/** A running server. */
export interface ClusterServer {
  readonly queue: string;
  stats(): ServerStats;
  /** Stops taking calls, waits for those in flight (up to shutdownTimeout), and disconnects. */
  close(): Promise<void>;
  /** Settles when the server has closed (by close() or a signal). */
  readonly closed: Promise<void>;
}

interface Loaded {
  readonly fn: DocumentFunction;
  readonly signature: Signature;
}

/** Starts a server; resolves once it is connected and taking calls. */
export async function serve(options: ServeOptions): Promise<ClusterServer> {
  if (typeof options.queue !== 'string' || options.queue === '') throw new TypeError(`weft.cluster.serve: queue must be a non-empty name, got ${String(options.queue)}`);
  const { Worker, UnrecoverableError } = await bullmq();
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const pool = options.pool ?? getDefaultPool();
  const concurrency = options.concurrency ?? Math.max(4, 4 * pool.size);
  const cacheSize = options.cacheSize ?? 32;
  const documents: Redis = await newClient(options.connection, 'documents');
  const blocking: Redis = await newClient(options.connection, 'worker');
  const functions = new Map<string, Promise<Loaded>>();
  let done = 0;
  let failed = 0;
  let inFlight = 0;
  const since = performance.now();

  const load = (hash: string): Promise<Loaded> => {
    const cached = functions.get(hash);
    if (cached) {
      functions.delete(hash);
      functions.set(hash, cached);
      return cached;
    }
    const key = documentKey(prefix, options.queue, hash);
    const loading = documents.get(key).then((text) => compileDocument(checkDocument(text, hash, key), options.pool));
    functions.set(hash, loading);
    // A failure is not kept: the document may be stored again (after a Redis restart, say).
    loading.catch(() => functions.get(hash) === loading && functions.delete(hash));
    while (functions.size > cacheSize) {
      const [oldest, entry] = functions.entries().next().value as [string, Promise<Loaded>];
      functions.delete(oldest);
      entry.then((l) => l.fn.dispose(), () => undefined);
    }
    return loading;
  };

  const run = async (job: Job): Promise<string> => {
    const call = readCallJob(job.data);
    const { fn, signature } = await load(call.fn);
    const args = valuesOfText(call.args, `the arguments of ${signature.label}`).map(fromWireValue);
    const state = signature.updated.length === 0 ? [] : valuesOfText(call.state ?? fail(signature), `the shared values sent to ${signature.label}`).map(fromWireValue);
    if (state.length !== signature.updated.length) throw new TypeError(`${signature.label} updates ${signature.updated.length} shared variables; the call sent ${state.length} values`);
    const results = await fn(...args, ...state);
    return frameText(results.map((array) => ({ kind: 'array', array })), `the results of ${signature.label}`);
  };

  const processor = async (job: Job): Promise<string> => {
    inFlight++;
    try {
      if (job.name !== CALL_JOB) throw new TypeError(`weft.cluster: a job named '${job.name}' is not a weft call`);
      const out = await run(job);
      done++;
      return out;
    } catch (e) {
      failed++;
      // Final: a call that failed here fails the same way anywhere (bad input, a refused document).
      throw new UnrecoverableError(failedReason(e));
    } finally {
      inFlight--;
    }
  };

  const worker: Worker = new Worker(options.queue, processor, {
    connection: blocking,
    prefix,
    concurrency,
    ...(options.lockDuration !== undefined ? { lockDuration: options.lockDuration } : {}),
    ...(options.stalledInterval !== undefined ? { stalledInterval: options.stalledInterval } : {}),
    ...(options.maxStalledCount !== undefined ? { maxStalledCount: options.maxStalledCount } : {}),
  });
  // BullMQ reports connection trouble here while it reconnects; without a listener it would throw.
  worker.on('error', () => undefined);
  await worker.waitUntilReady();

  let closing: Promise<void> | undefined;
  let markClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  const close = (): Promise<void> => {
    closing ??= (async () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      const timeout = options.shutdownTimeout ?? 30_000;
      let timer: NodeJS.Timeout | undefined;
      const graceful = worker.close();
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeout)));
      // Past the timeout the calls in flight are left locked: their locks lapse and other workers run them.
      if ((await Promise.race([graceful.then(() => 'closed' as const), late])) === 'late') await worker.close(true);
      clearTimeout(timer);
      for (const entry of functions.values()) entry.then((l) => l.fn.dispose(), () => undefined);
      functions.clear();
      documents.disconnect();
      blocking.disconnect();
      markClosed();
    })();
    return closing;
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    void close().finally(() => process.kill(process.pid, signal));
  };
  if (options.handleSignals ?? true) {
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }

  return {
    queue: options.queue,
    stats: () => ({ done, failed, inFlight, since }),
    close,
    closed,
  };
}

function fail(signature: Signature): never {
  throw new TypeError(`${signature.label} updates shared variables; the call sent no values for them (connect with { state: 'caller' })`);
}
