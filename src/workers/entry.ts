// The worker entry in Node (piscina's module): maps the pool's shared memory and loads the
// kernels (weft's and the users' kernel modules) from workerData; each job then joins its call
// as a team member (member.ts).
import { threadId, workerData } from 'node:worker_threads';
import { setRegistryThreadName } from '../kernels/registry.js';
import { teamMember } from './member.js';
import type { TeamMessage, TeamResult } from './protocol.js';

const { memory, kernelModules } = workerData as { memory: WebAssembly.Memory; kernelModules: readonly string[] };
setRegistryThreadName(`worker thread ${threadId}`);
for (const m of kernelModules) await import(m);

const member = teamMember(memory, threadId);

export default function run(message: TeamMessage): TeamResult | TeamResult[] {
  return member(message);
}
