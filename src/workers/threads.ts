// Node's workers (the platform seam of platform.ts): piscina owns the threads (a fixed count,
// crash replacement, resource limits, a queue of jobs) running entry.ts, loaded through
// entry-loader.cts. Workers also watch the pool's job ring; a thread's exit is reported to the
// pool for the ring's jobs. An idle pool does not keep the process alive. The browser build
// replaces this module with threads.browser.ts.
import { availableParallelism } from 'node:os';
import { isAbsolute } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import type { Platform, WorkerSet, WorkerSetOptions } from './platform.js';
import type { TeamMessage, TeamResult } from './protocol.js';

/** The compiled worker loader (workers run JavaScript; tests and tsx run from the sources). */
function entryFile(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.js')) return fileURLToPath(new URL('./entry-loader.cjs', import.meta.url));
  // Running from src/ (tsx): use the build in dist/, made by `npm run build`.
  return here.replace(/[\\/]src[\\/]workers[\\/]threads\.ts$/, '/dist/src/workers/entry-loader.cjs');
}

function resolveModule(module: string | URL): string {
  if (module instanceof URL) return module.href;
  if (/^(file|data|node):/.test(module)) return module;
  if (isAbsolute(module)) return pathToFileURL(module).href;
  throw new RangeError(
    `createPool: the kernel module '${module}' is a relative path, which would depend on the working directory; ` +
      `give a URL relative to your module (new URL('${module}', import.meta.url)) or an absolute path`,
  );
}

function start(options: WorkerSetOptions): WorkerSet {
  const kernelModules = options.kernelModules;
  const piscina = new Piscina({
    filename: entryFile(),
    minThreads: options.size,
    maxThreads: options.size,
    idleTimeout: options.idleTimeout ?? 600_000,
    resourceLimits: options.resourceLimits,
    execArgv: [],
    workerData: { memory: options.memory, kernelModules, ring: options.ring },
    // An idle worker waits for piscina's next message without blocking its event loop, so that
    // it also watches the job ring (piscina's default blocks in Atomics.wait between tasks).
    atomics: 'async',
  });
  const exitListeners: Array<(thread: number, error: Error) => void> = [];
  piscina.on('workerCreate', (created: { readonly id: number }) => {
    // The id is read now: a thread that has exited reports -1.
    const thread = created.id;
    const worker = piscina.threads.find((w) => w.threadId === thread);
    let failure: Error | undefined;
    // An uncaught error (running out of memory under resourceLimits, say) comes before the exit.
    worker?.once('error', (e: Error) => (failure = e));
    worker?.once('exit', (code: number) => {
      const error = failure ?? new Error(`worker exited with code: ${code}`);
      for (const listener of exitListeners) listener(thread, error);
    });
  });
  // piscina reports a thread that failed while it ran none of its tasks (it ran a ring job) as an
  // error event: the ring's jobs on it reject through exitListeners, and piscina replaces it.
  piscina.on('error', () => undefined);
  return {
    // No signal goes to piscina: it would end the thread of a running job. A call's abort flag
    // stops its running members between tasks, and the pool's queue drops the jobs still waiting.
    run: (message: TeamMessage) => piscina.run(message) as Promise<TeamResult | TeamResult[]>,
    get queued() {
      return piscina.queueSize;
    },
    close: () => piscina.destroy(),
    onThreadExit: (listener) => void exitListeners.push(listener),
  };
}

export const platform: Platform = { defaultWorkers: availableParallelism, resolveModule, start };
