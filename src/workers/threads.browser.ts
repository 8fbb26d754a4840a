// Browsers' workers (the platform seam of platform.ts): module Web Workers running the worker
// bundle (web-worker.ts) behind comlink, each given the pool's shared WebAssembly.Memory at start
// (it needs cross-origin isolation). A message goes to a free worker; a worker that fails is replaced.
import { wrap, type Remote } from 'comlink';
import type { Platform, WorkerSet, WorkerSetOptions } from './platform.js';
import type { TeamMessage, TeamResult } from './protocol.js';
import type { WebWorkerApi } from './web-worker.js';

type Answer = TeamResult | readonly TeamResult[];

interface Job {
  readonly message: TeamMessage;
  readonly resolve: (answer: Answer) => void;
  readonly reject: (e: unknown) => void;
}

interface Member {
  readonly worker: Worker;
  readonly api: Remote<WebWorkerApi>;
  readonly ready: Promise<void>;
  /** Its start finished (then a failure is replaced; before, the workers cannot start at all). */
  started: boolean;
  job: Job | undefined;
}

function start(options: WorkerSetOptions): WorkerSet {
  if (typeof SharedArrayBuffer === 'undefined' || !globalThis.crossOriginIsolated) {
    throw new Error(
      'weft: worker pools need SharedArrayBuffer: serve the page cross-origin isolated ' +
        '(Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp), or compile with workers: 0',
    );
  }
  const url = options.workerUrl ?? new URL('./worker.js', import.meta.url);
  const kernelModules = options.kernelModules;
  const members = new Set<Member>();
  const idle: Member[] = [];
  const waiting: Job[] = [];
  let threads = 0;
  let closed = false;
  /** Why no worker can start (its script did not load): every job rejects with it. */
  let broken: Error | undefined;

  const spawn = (): void => {
    const thread = ++threads;
    const worker = new Worker(url, { type: 'module', name: `weft-${thread}` });
    const api = wrap<WebWorkerApi>(worker);
    const member: Member = { worker, api, ready: api.start(options.memory, kernelModules, thread), started: false, job: undefined };
    // A failed start (a kernel module that did not load) rejects the jobs sent to this worker.
    member.ready.then(() => (member.started = true), () => undefined);
    // Errors of a job come back through comlink; this is a worker that failed outside of one
    // (its script did not load, an uncaught error): its job fails and a new worker takes its place,
    // unless it never started: then no worker will, and every job rejects.
    worker.addEventListener('error', (event) => {
      event.preventDefault();
      if (!members.delete(member)) return;
      worker.terminate();
      const at = idle.indexOf(member);
      if (at >= 0) idle.splice(at, 1);
      const error = new Error(`a Web Worker failed: ${(event as ErrorEvent).message || `its script (${String(url)}) did not load or threw`}`);
      member.job?.reject(error);
      if (!member.started) {
        broken = error;
        for (const job of waiting.splice(0)) job.reject(error);
      } else if (!closed) spawn();
    });
    members.add(member);
    idle.push(member);
    pump();
  };

  const pump = (): void => {
    while (idle.length > 0 && waiting.length > 0) {
      const member = idle.shift()!;
      const job = waiting.shift()!;
      member.job = job;
      const settle = (): boolean => {
        if (!members.has(member) || member.job !== job) return false;
        member.job = undefined;
        idle.push(member);
        return true;
      };
      member.ready
        .then((): Promise<Answer> => member.api.run(job.message))
        .then(
          (answer) => settle() && (job.resolve(answer), pump()),
          (e: unknown) => settle() && (job.reject(e), pump()),
        );
    }
  };

  for (let i = 0; i < options.size; i++) spawn();
  return {
    run: (message) =>
      closed || broken ? Promise.reject(broken ?? new Error('weft: the pool was shut down')) : new Promise<Answer>((resolve, reject) => {
        waiting.push({ message, resolve, reject });
        pump();
      }),
    get queued() {
      return waiting.length;
    },
    close: async () => {
      closed = true;
      const ended = new Error('weft: the pool was shut down');
      for (const job of waiting.splice(0)) job.reject(ended);
      for (const member of members) {
        member.worker.terminate();
        member.job?.reject(ended);
      }
      members.clear();
      idle.length = 0;
    },
  };
}

export const platform: Platform = {
  defaultWorkers: () => globalThis.navigator?.hardwareConcurrency || 4,
  // Relative to the page, as a browser resolves any URL in it.
  resolveModule: (module) => new URL(module, globalThis.location?.href).href,
  start,
};
