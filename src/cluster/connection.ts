// Where the cluster's Redis is: a URL ("redis://host:6379/0") or ioredis options, as users of
// BullMQ give it. bullmq and ioredis are loaded only when a cluster function runs, so that weft
// itself (and its browser build) does not load them.
import type { Redis, RedisOptions } from 'ioredis';

/** A Redis URL, or ioredis options. */
export type Connection = string | RedisOptions;

/** BullMQ's key prefix, unless the caller names another. */
export const DEFAULT_PREFIX = 'bull';

/** The ioredis class. */
export async function redisClass(): Promise<typeof Redis> {
  return (await import('ioredis')).Redis;
}

/**
 * A new client of `connection`, as BullMQ needs it (commands wait while Redis is away instead of
 * failing after a few retries, so a Redis restart is survived by reconnecting).
 */
export async function newClient(connection: Connection, what: string): Promise<Redis> {
  const RedisClient = await redisClass();
  const options: RedisOptions = { maxRetriesPerRequest: null, connectionName: `weft ${what}` };
  if (typeof connection === 'string') {
    if (!/^rediss?:\/\//.test(connection)) throw new TypeError(`weft.cluster: connection must be a redis:// or rediss:// URL or ioredis options, got '${connection}'`);
    return new RedisClient(connection, options);
  }
  if (typeof connection !== 'object' || connection === null) throw new TypeError(`weft.cluster: connection must be a redis:// URL or ioredis options, got ${String(connection)}`);
  return new RedisClient({ ...connection, ...options });
}

/** Loads BullMQ, with the reason when it is missing. */
export async function bullmq(): Promise<typeof import('bullmq')> {
  try {
    return await import('bullmq');
  } catch (e) {
    throw new Error(`weft.cluster needs the bullmq package (npm install bullmq): ${(e as Error).message}`);
  }
}
