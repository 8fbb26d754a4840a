// A worker's side of team jobs, the same on every platform: given the pool's shared memory, it
// joins calls: it reads a plan from shared memory once, binds it to the call's region, and runs
// the team loop. A batch of jobs (sent when every thread was busy) is run in turn. Between
// messages it watches the pool's job ring (job-ring.ts) and runs the jobs it takes there.
import '../kernels/builtin.js';
import './inner-plan.js';
import './scan-loop.js';
import { attachThread, readText } from './arena.js';
import { JobRing } from './job-ring.js';
import { announceShared } from './shared-memory.js';
import { planFromText, type PlanDescriptor, type TeamJob, type TeamMessage, type TeamResult } from './protocol.js';
import { BoundPlan, MemoryViews } from './bound-plan.js';
import { runTeam } from './team.js';

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

/**
 * Spin-checks of the ring after a job before the worker waits (about 10-20 µs here): under a
 * stream of calls the next job comes within this, and a wake-up costs more than a small call's
 * tasks (DESIGN.md). Longer spins took the calling thread's core on a 2-core machine: W8 on 2
 * workers ran at 40k calls/s with 20000 checks, 45-68k with 2000.
 */
const RING_SPIN = 2000;

/**
 * Milliseconds of ring jobs in a row after which a worker lets its event loop run: the pool's
 * messages (traced calls, large outputs) must not wait for a stream of ring jobs to end.
 */
const RING_TURN_MS = 1;

/** A macrotask's pause (setImmediate where it exists: a timer's would cost a millisecond). */
const letEventsIn = (): Promise<void> => new Promise((resolve) => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0)));

/** Takes and runs the ring's jobs until it closes, waiting (without blocking) while it is empty. */
async function watchRing(ring: JobRing, thread: number, join: (job: TeamJob) => TeamResult): Promise<void> {
  while (!ring.closed) {
    const turnEnds = performance.now() + RING_TURN_MS;
    for (let idle = 0; idle <= RING_SPIN && !ring.closed; idle++) {
      const taken = ring.take(thread);
      if (!taken) continue;
      try {
        ring.answerResult(taken.slot, join(taken.job));
      } catch (e) {
        ring.answerFailure(taken.slot, e);
      }
      if (performance.now() > turnEnds) break;
      idle = -1;
    }
    if (performance.now() > turnEnds) await letEventsIn();
    else await ring.nextJob();
  }
}

/**
 * A worker's handler of team messages over `memory`, reporting `thread` as its thread id; with
 * `ringOffset`, it also serves the job ring there.
 */
export function teamMember(memory: WebAssembly.Memory, thread: number, ringOffset?: number): (message: TeamMessage) => TeamResult | TeamResult[] {
  const views = new MemoryViews(memory);
  attachThread(memory);
  const plans = new Map<number, PlanDescriptor>();
  const bound = new Map<string, BoundPlan>();
  /** The views the plans in `bound` were bound over (views.i32 then). */
  let boundTo: Int32Array | undefined;

  const join = (job: TeamJob): TeamResult => {
    views.refresh();
    // The caller's output buffers arrived as this thread's objects: they hold the memory too.
    for (const [, buffer] of job.outputMemory ?? []) announceShared(buffer.byteLength);
    if (boundTo !== views.i32) {
      // The memory grew (refresh made the views again): views over the old buffer cannot reach
      // the new bytes. The calling thread tells it the same way (PlannedExecutor's #stateOf).
      bound.clear();
      boundTo = views.i32;
    }
    let plan = recall(plans, job.planId);
    if (!plan) {
      plan = planFromText(readText(memory, job.planOffset, job.planLength));
      remember(plans, job.planId, plan);
    }
    const key = `${job.planId}@${job.region}`;
    let b = recall(bound, key);
    if (!b) {
      b = new BoundPlan(plan, job.region, views);
      remember(bound, key, b);
    }
    return runTeam(b, views, job.callId, { trace: job.trace, thread, member: job.member, external: job.external, outputMemory: job.outputMemory });
  };

  if (ringOffset !== undefined) void watchRing(new JobRing(memory, ringOffset), thread, join);
  return (message) => ('batch' in message ? message.batch.map(join) : join(message));
}
