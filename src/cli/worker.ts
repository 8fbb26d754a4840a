// `weft worker`: this process serves a cluster queue (weft.cluster.serve) on a pool of its own,
// printing one status line a second, until SIGTERM or SIGINT closes it gracefully.
import { createPool } from '../compile/pool.js';
import { serve } from '../cluster/serve.js';
import { EXIT_OK, parseOptions, UsageError, wholeNumber, type Command, type Io } from './command.js';

const USAGE = `Usage: weft worker --redis URL --queue NAME [options]

Takes weft calls from a BullMQ queue on Redis and runs them on this machine's worker threads.
Callers reach it with weft.cluster.connect(fn, { connection: URL, queue: NAME }).

Options:
  --redis URL             Redis to use (redis://host:6379, rediss://...)
  --queue NAME            the queue's name
  --workers N             worker threads of the pool (default: one per core)
  --concurrency N         calls run at once (default: 4 per worker thread, at least 4)
  --prefix P              BullMQ key prefix (default: bull)
  --lock-duration MS      a dead worker's calls run elsewhere after this (default: 30000)
  --stalled-interval MS   how often stalled calls are looked for (default: 30000)
  --quiet                 no status lines
  -h, --help              this text

It prints one status line a second: calls done, calls a second, calls in flight, failures.
SIGTERM or SIGINT finishes the calls in flight, then ends the process.
`;

async function run(args: readonly string[], io: Io): Promise<number> {
  const { values } = parseOptions(args, {
    redis: { type: 'string' },
    queue: { type: 'string' },
    workers: { type: 'string' },
    concurrency: { type: 'string' },
    prefix: { type: 'string' },
    'lock-duration': { type: 'string' },
    'stalled-interval': { type: 'string' },
    quiet: { type: 'boolean' },
  });
  if (!values.redis) throw new UsageError('--redis URL is required');
  if (!values.queue) throw new UsageError('--queue NAME is required');
  const workers = wholeNumber(values.workers, 'workers');
  const concurrency = wholeNumber(values.concurrency, 'concurrency', 1);
  const lockDuration = wholeNumber(values['lock-duration'], 'lock-duration', 1);
  const stalledInterval = wholeNumber(values['stalled-interval'], 'stalled-interval', 1);
  const pool = createPool(workers !== undefined ? { workers } : {});
  const server = await serve({
    connection: values.redis,
    queue: values.queue,
    pool,
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(values.prefix !== undefined ? { prefix: values.prefix } : {}),
    ...(lockDuration !== undefined ? { lockDuration } : {}),
    ...(stalledInterval !== undefined ? { stalledInterval } : {}),
  });
  io.out.write(`weft worker ${process.pid}: serving queue '${values.queue}' on ${values.redis} with ${pool.size} worker threads\n`);
  let last = { done: 0, at: performance.now() };
  const status = setInterval(() => {
    const s = server.stats();
    const now = performance.now();
    const rate = ((s.done - last.done) * 1000) / (now - last.at);
    last = { done: s.done, at: now };
    if (!values.quiet) io.out.write(`weft worker ${process.pid}: ${s.done} calls done, ${rate.toFixed(0)}/s, ${s.inFlight} in flight, ${s.failed} failed\n`);
  }, 1000);
  status.unref();
  // serve() closes on SIGTERM/SIGINT and then ends the process as the signal would.
  await server.closed;
  clearInterval(status);
  await pool.close();
  return EXIT_OK;
}

export const workerCommand: Command = {
  name: 'worker',
  summary: 'serve a weft.cluster queue on this machine (BullMQ on Redis)',
  usage: USAGE,
  run,
};
