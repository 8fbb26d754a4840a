// A redis-server of a test's own: started on a free port of 127.0.0.1 with nothing saved to disk,
// stopped (or restarted empty on the same port) when the test says. Tests get the program's path
// from requires.ts (skipped without it, required in CI).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Stops it (SIGTERM) and waits for its exit. */
  stop(): Promise<void>;
  /** Stops it and starts an empty one on the same port. */
  restart(): Promise<void>;
}

/** A port nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function launch(path: string, port: number): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(path, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server on port ${port} did not start in 10 s: ${output.slice(-500)}`));
    }, 10_000);
    child.stdout!.on('data', (d: Buffer) => {
      output += d;
      if (/Ready to accept connections/.test(output)) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server on port ${port} exited (${code}): ${output.slice(-500)}`));
    });
  });
}

/** Starts redis-server at `path` on a free port. */
export async function startRedis(path: string): Promise<RedisServer> {
  const port = await freePort();
  let child = await launch(path, port);
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    async restart() {
      await stop();
      child = await launch(path, port);
    },
  };
}
