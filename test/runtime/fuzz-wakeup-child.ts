// Child process of fuzz-regressions.test.ts: the calling thread waits for its queue of tasks
// while the call ends without waking it (the notify came just before the wait, as when the last
// worker task finishes in that window). Nothing else keeps the event loop alive, as when the
// pool's jobs have all returned. The wait must still end and see the call over; the script
// prints "over" and exits 0. (Node does not count a pending Atomics.waitAsync as work.)
import type { PlanDescriptor } from '../../src/workers/protocol.js';
import { H } from '../../src/workers/region.js';
import { BoundPlan, MemoryViews } from '../../src/workers/bound-plan.js';
import { runMainTasks } from '../../src/workers/team.js';

const memory = new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
const views = new MemoryViews(memory);
const plan: PlanDescriptor = {
  id: 1,
  regionBytes: 1024,
  memberOffset: 64,
  memberSlots: 1,
  pendingOffset: 72,
  queueOffset: 128,
  mainQueueOffset: 192,
  views: [],
  calls: [{ kernel: '', params: {}, inputs: [], outputs: [], label: 'waits for a worker task', main: true }],
  tasks: [{ call: 0, start: -1, end: -1, successors: [] }],
  initialPending: [1],
  initialReady: [],
  initialMainReady: [], relocatable: [], movableOutputs: [], arenaMovableOutputs: [],
};
const h = views.i32;
h[plan.pendingOffset >> 2] = 1;
const waiting = runMainTasks(new BoundPlan(plan, 0, views), views);
// The call ends (say, it was aborted) and the notify is lost: only the counter changes.
setTimeout(() => Atomics.store(h, H.ABORT, 1), 5);
await waiting;
console.log('over');
