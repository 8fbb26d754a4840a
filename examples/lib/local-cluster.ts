// A cluster on this machine for the examples: the Redis at REDIS_URL (or a redis-server started
// here on a free port when there is none), and N `weft worker` processes serving one queue, as
// machines of a real cluster would (`npx weft worker --redis URL --queue NAME` on each).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

export interface LocalCluster {
  readonly url: string;
  readonly queue: string;
  /** Stops the workers (SIGTERM: they finish what they run) and the Redis this started. */
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Starts `command` and resolves once its output matches `ready`. */
function started(command: string, args: readonly string[], ready: RegExp, what: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
    let output = '';
    const onData = (d: Buffer): void => {
      output += d;
      if (ready.test(output)) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before it was ready:\n${output}`)));
  });
}

async function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Redis (REDIS_URL, or one started here) and `workers` weft worker processes on a queue of their own. */
export async function startLocalCluster(workers: number, threadsEach = 1): Promise<LocalCluster> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  let redis: ChildProcess | undefined;
  let url = process.env.REDIS_URL || undefined;
  if (!url) {
    const server = process.env.WEFT_REDIS_SERVER ?? '/usr/bin/redis-server';
    if (!existsSync(server)) throw new Error('set REDIS_URL to a Redis server, or install redis-server (apt-get install -y redis-server) so this example can start one');
    const port = await freePort();
    redis = await started(server, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], /Ready to accept connections/, 'redis-server');
    url = `redis://127.0.0.1:${port}`;
  }
  const queue = `weft-example-${process.pid}`;
  const procs = await Promise.all(
    Array.from({ length: workers }, () => started(process.execPath, [CLI, 'worker', '--redis', url, '--queue', queue, '--workers', String(threadsEach), '--quiet', ...(process.env.WEFT_EXAMPLE_CONCURRENCY ? ['--concurrency', process.env.WEFT_EXAMPLE_CONCURRENCY] : [])], /serving queue/, 'weft worker')),
  );
  return {
    url,
    queue,
    async stop() {
      await Promise.all(procs.map(stopped));
      if (redis) await stopped(redis);
    },
  };
}
