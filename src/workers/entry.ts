// The worker entry in Node (piscina's module): maps the pool's shared memory and loads the
// kernels (weft's and the users' kernel modules) from workerData; each job, from a message or
// from the pool's job ring, then joins its call as a team member (member.ts).
import { threadId, workerData } from 'node:worker_threads';
import { setRegistryThreadName } from '../kernels/registry.js';
import { JobRing } from './job-ring.js';
import { teamMember } from './member.js';
import type { TeamMessage, TeamResult } from './protocol.js';

const { memory, kernelModules, ring } = workerData as { memory: WebAssembly.Memory; kernelModules: readonly string[]; ring?: number };
setRegistryThreadName(`worker thread ${threadId}`);
try {
  for (const m of kernelModules) await import(m);
} catch (e) {
  // This thread will not watch the ring: the pool sends jobs as messages, which reject with `e`.
  if (ring !== undefined) new JobRing(memory, ring).fail();
  throw e;
}

const member = teamMember(memory, threadId, ring);

export default function run(message: TeamMessage): TeamResult | TeamResult[] {
  return member(message);
}
