// The worker entry (piscina's module): maps the pool's shared memory, loads the kernels (weft's
// and the users' kernel modules), and for each team job joins the call: it reads the plan from
// shared memory once, binds it to the call's region, and runs the team loop. A batch of jobs
// (sent when every thread was busy) is run in turn.
import { threadId, workerData } from 'node:worker_threads';
import '../kernels/builtin.js';
import './inner-plan.js';
import { readText } from './arena.js';
import type { PlanDescriptor, TeamJob, TeamMessage, TeamResult } from './protocol.js';
import { BoundPlan, MemoryViews, runTeam } from './team.js';

const { memory, kernelModules } = workerData as { memory: WebAssembly.Memory; kernelModules: readonly string[] };
for (const m of kernelModules) await import(m);

const views = new MemoryViews(memory);
const plans = new Map<number, PlanDescriptor>();
const bound = new Map<string, BoundPlan>();
let boundFor: ArrayBufferLike | undefined;

/**
 * Plans and bindings a worker keeps, the most recently used: a process that compiles functions
 * in a loop must not grow every worker's heap with plans that will never run again. A plan
 * dropped while its function lives is read from shared memory again when it comes back.
 */
const KEEP = 256;

function recall<K, V>(cache: Map<K, V>, key: K): V | undefined {
  const value = cache.get(key);
  if (value !== undefined) {
    cache.delete(key);
    cache.set(key, value);
  }
  return value;
}

function remember<K, V>(cache: Map<K, V>, key: K, value: V): void {
  cache.set(key, value);
  if (cache.size > KEEP) cache.delete(cache.keys().next().value as K);
}

export default function run(message: TeamMessage): TeamResult | TeamResult[] {
  return 'batch' in message ? message.batch.map(join) : join(message);
}

function join(job: TeamJob): TeamResult {
  views.refresh();
  if (boundFor?.byteLength !== memory.buffer.byteLength) {
    // The memory grew: views over the old buffer cannot reach the new bytes.
    bound.clear();
    boundFor = memory.buffer;
  }
  let plan = recall(plans, job.planId);
  if (!plan) {
    plan = JSON.parse(readText(memory, job.planOffset, job.planLength)) as PlanDescriptor;
    remember(plans, job.planId, plan);
  }
  const key = `${job.planId}@${job.region}`;
  let b = recall(bound, key);
  if (!b) {
    b = new BoundPlan(plan, job.region, views);
    remember(bound, key, b);
  }
  return runTeam(b, views, job.callId, { trace: job.trace, thread: threadId, external: job.external, outputMemory: job.outputMemory });
}
