// The region protocol (src/workers/region.ts) played by hand on one thread: a call opens with its
// pending counts and ready queues, tasks are taken from the right queue and release their
// successors, a failure is kept and stops the call, members' records tell what they were doing,
// and the region empties once the last member leaves.
import t from 'tap';
import type { PlanDescriptor } from '../../src/workers/protocol.js';
import { RegionState } from '../../src/workers/region.js';
import { SMALL_LAYOUT } from './region-layout.js';

/** Four tasks: 0 and 1 ready, 2 (a calling-thread task) after both, 3 after 2. */
function plan(): PlanDescriptor {
  return {
    id: 1,
    ...SMALL_LAYOUT,
    views: [],
    calls: [
      { kernel: 'k', params: {}, inputs: [], outputs: [], label: 'worker call' },
      { kernel: 'm', params: {}, inputs: [], outputs: [], label: 'calling-thread call', main: true },
    ],
    tasks: [
      { call: 0, start: 0, end: 1, successors: [2] },
      { call: 0, start: 1, end: 2, successors: [2] },
      { call: 1, start: -1, end: -1, successors: [3] },
      { call: 0, start: -1, end: -1, successors: [] },
    ],
    initialPending: [0, 0, 2, 1],
    initialReady: [0, 1],
    initialMainReady: [],
    relocatable: [],
    movableOutputs: [],
    arenaMovableOutputs: [],
  };
}

const memory = () => new Int32Array(new SharedArrayBuffer(4096));

t.test('a call runs to completion: queues, releases, the calling thread\'s queue', async (t) => {
  const state = new RegionState(memory(), 1024, plan());
  state.open(7);
  t.notOk(state.enter(8), 'a member of another call is told to leave');
  state.exit();
  t.ok(state.enter(7), 'a member of this call stays');
  state.mark(0, 'idle');
  t.same(state.memberState(0), { kind: 'idle' });
  t.equal(state.take(true), -1, 'nothing for the calling thread yet');
  const first = state.take(false);
  const second = state.take(false);
  t.same([first, second], [0, 1]);
  t.equal(state.take(false), -1, 'the workers\' queue is empty');
  state.mark(0, { task: first });
  t.same(state.memberState(0), { kind: 'running', task: 0 });
  state.finish(first);
  t.equal(state.take(true), -1, 'task 2 still waits for task 1');
  state.finish(second);
  t.equal(state.take(false), -1, 'task 2 is not the workers\'');
  t.equal(state.take(true), 2, 'task 2 is the calling thread\'s');
  state.finish(2);
  t.equal(state.take(false), 3);
  t.notOk(state.over);
  state.finish(3);
  t.ok(state.over && state.completed, 'every task done');
  t.equal(state.failedTask(), undefined);
  state.mark(0, 'left');
  t.same(state.memberState(0), { kind: 'left' });
  t.equal(state.members, 1);
  // emptied() does not keep the process alive by itself (see region.ts): the timer does here.
  const alive = setTimeout(() => undefined, 1000);
  const emptied = state.emptied();
  state.exit();
  await emptied;
  clearTimeout(alive);
  t.equal(state.members, 0, 'the region is empty');
  state.close();
  t.notOk(state.enter(7), 'a closed call takes no one');
  state.exit();
});

t.test('a failure is kept (the first), stops the call, and a reopened call starts clean', async (t) => {
  const state = new RegionState(memory(), 0, plan());
  state.open(1);
  state.fail(1);
  state.fail(0);
  t.equal(state.failedTask(), 1, 'the first failure');
  t.ok(state.over);
  t.notOk(state.completed);
  state.open(2);
  t.equal(state.failedTask(), undefined, 'cleared');
  t.notOk(state.over);
  state.abort();
  t.ok(state.over && !state.completed, 'aborted');
});

t.test('a dead member\'s record: forgotten when it had joined idle, bad member indices refused', async (t) => {
  const state = new RegionState(memory(), 0, plan());
  state.open(3);
  t.same(state.memberState(1), { kind: 'absent' });
  t.ok(state.enter(3));
  state.mark(1, 'idle');
  state.forgetMember(1);
  t.same(state.memberState(1), { kind: 'absent' });
  t.equal(state.members, 0, 'it leaves in its name');
  // A member that had left, or died in a kernel, is not counted out a second time.
  t.ok(state.enter(3));
  state.mark(0, { task: 1 });
  state.forgetMember(0);
  t.equal(state.members, 1, 'a running record does not leave in its name');
  state.exit();
  t.throws(() => state.checkMember(2), new RangeError("team job: member 2 is outside the plan's 2 member records"));
  t.throws(() => state.mark(-1, 'idle'), new RangeError("team job: member -1 is outside the plan's 2 member records"));
});

t.test('a block recycled from other data becomes a region with no member inside (initialize)', async (t) => {
  const h = memory();
  // The bytes a recycled block keeps from its last use: 1 everywhere, so call 1 looks open and a
  // member looks inside until initialize() clears the header.
  h.fill(1, 0, 64);
  const state = new RegionState(h, 0, plan());
  state.initialize();
  t.equal(state.members, 0, 'nobody counted inside');
  t.notOk(state.enter(1), 'no call open');
  state.exit();
  state.open(5);
  t.equal(state.members, 0);
  t.notOk(state.over);
});
