// The worker entry in browsers: a module Web Worker behind comlink. The pool posts its shared
// memory, the users' kernel modules and a thread id to `start`; each `run` then joins its call as
// a team member (member.ts), as Node's entry.ts does for piscina. Built as dist/browser/worker.js.
import { expose } from 'comlink';
import { setRegistryThreadName } from '../kernels/registry.js';
import { teamMember } from './member.js';
import type { TeamMessage, TeamResult } from './protocol.js';

type Member = (message: TeamMessage) => TeamResult | TeamResult[];

let member: Promise<Member> | undefined;

async function load(memory: WebAssembly.Memory, kernelModules: readonly string[], thread: number): Promise<Member> {
  setRegistryThreadName(`Web Worker ${thread}`);
  for (const m of kernelModules) await import(/* @vite-ignore */ m);
  return teamMember(memory, thread);
}

const api = {
  /** Maps the pool's memory and imports the kernel modules (URLs) before any job runs. */
  async start(memory: WebAssembly.Memory, kernelModules: readonly string[], thread: number): Promise<void> {
    member = load(memory, kernelModules, thread);
    await member;
  },
  /** Runs one team message (a job or a batch) and answers its results. */
  async run(message: TeamMessage): Promise<TeamResult | TeamResult[]> {
    if (!member) throw new Error('weft worker: a job came before start');
    return (await member)(message);
  },
};

/** What the pool's side (threads.browser.ts) calls through comlink. */
export type WebWorkerApi = typeof api;

expose(api);
