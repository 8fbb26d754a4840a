// A member's visit to a nested region (workers/nested-team.ts), played by hand on one thread: it
// helps only while the host task offers the region, and only after its visit is counted, since
// the region lies in the host's scratch memory, which later tasks reuse once the host ends; and
// it finds each call's views of the host's inputs and outputs, not those of an earlier call.
import t from 'tap';
import { registerKernel } from '../../src/kernels/registry.js';
import type { TensorView } from '../../src/kernels/view.js';
import { BoundPlan, MemoryViews } from '../../src/workers/bound-plan.js';
import { helpNested, registerNestedPlan, type Seat } from '../../src/workers/nested-team.js';
import type { PlanDescriptor } from '../../src/workers/protocol.js';
import { H, offerTask, RegionState } from '../../src/workers/region.js';
import { SMALL_LAYOUT } from './region-layout.js';

/** A plan of one whole-call task of `kernel`, laid out like region.test's (the region's queues after the header). */
function onePlan(kernel: string, views: PlanDescriptor['views'], inputs: number[], outputs: number[], params = {}): PlanDescriptor {
  return {
    id: 1,
    ...SMALL_LAYOUT,
    views,
    calls: [{ kernel, params, inputs, outputs, label: kernel }],
    tasks: [{ call: 0, start: -1, end: -1, successors: [] }],
    initialPending: [0],
    initialReady: [0],
    initialMainReady: [],
    relocatable: [],
    movableOutputs: [],
    arenaMovableOutputs: [],
  };
}

// The nested plan's one task writes 7 into its output (a float64 view) and counts its runs.
let runs = 0;
registerKernel('test.nested.write7', (_, [out]) => {
  runs += 1;
  out!.data[out!.offset] = 7;
});
const inner = onePlan('test.nested.write7', [{ dtype: 'float64', offset: 256, shape: [1], stride: [1] }], [], [0]);

// The host: its output 0 is where the step writes (the nested plan's view moves onto it, as a
// Scan's step writes into its row of a stacked output); its output 1 is the scratch memory.
registerNestedPlan('test.nested.host', {
  plan: () => inner,
  views: (_, __, outputs, base) => [{ ...base[0]!, data: outputs[0]!.data, offset: outputs[0]!.offset }],
});

const SCRATCH = 4096;
const outer = onePlan(
  'test.nested.host',
  [
    { dtype: 'float64', offset: 1024, shape: [1], stride: [1] },
    { dtype: 'uint8', offset: SCRATCH, shape: [1024], stride: [1] },
  ],
  [],
  [0, 1],
);

/** Visits counted in the outer region (at offset 0), for offers of either parity. */
const guests = (memory: MemoryViews): number => memory.i32[H.GUESTS]! + memory.i32[H.GUESTS + 1]!;

function setUp(): { memory: MemoryViews; seat: (views?: readonly TensorView[]) => Seat; nested: RegionState } {
  const memory = new MemoryViews(new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true }));
  const bound = new BoundPlan(outer, 0, memory);
  const state = bound.stateIn(memory);
  state.initialize();
  state.open(1);
  const nested = new RegionState(memory.i32, SCRATCH, inner);
  nested.initialize();
  return { memory, seat: (views = bound.views) => ({ bound, state, memory, views, member: undefined }), nested };
}

t.test('a member helps with an offered nested region: it runs the open call\'s task', async (t) => {
  const { seat, nested, memory } = setUp();
  const s = seat();
  t.ok(s.state.offerNested(0));
  nested.open(5);
  runs = 0;
  t.equal(helpNested(s, s.state.nestedOffer(), 10), undefined);
  t.equal(runs, 1, 'the nested task ran here');
  t.equal(memory.of('float64')[1024 / 8], 7, 'into the host\'s output, where the host\'s views put it');
  t.equal(guests(memory), 0, 'the visit is over');
  t.equal(nested.members, 0, 'and the member left the nested call');
});

t.test('an offer withdrawn before the member visits: the host\'s scratch, now other bytes, is not read', async (t) => {
  const { seat, nested, memory } = setUp();
  const s = seat();
  s.state.offerNested(0);
  const offer = s.state.nestedOffer();
  t.equal(offerTask(offer), 0, 'the member reads the offer');
  // ... then the host ends, and a later task's buffer over its scratch happens to read as an
  // open nested call (the member used to enter it, count itself in it and run a task there).
  s.state.withdrawNested(0, () => true);
  nested.open(5);
  const before = memory.i32.slice(SCRATCH / 4, SCRATCH / 4 + 16);
  runs = 0;
  t.equal(helpNested(s, offer, 10), undefined);
  t.equal(runs, 0, 'no task ran');
  t.same(memory.i32.slice(SCRATCH / 4, SCRATCH / 4 + 16), before, 'the bytes there are as they were');
  t.equal(guests(memory), 0, 'and the refused visit is not counted');
});

t.test('the host waits for a member visiting its nested region before it ends', async (t) => {
  const { seat } = setUp();
  const s = seat();
  s.state.offerNested(0);
  const offer = s.state.nestedOffer();
  t.ok(s.state.visitNested(offer), 'a member visits');
  let checks = 0;
  s.state.withdrawNested(0, () => ++checks >= 3);
  t.equal(checks, 3, 'the host waited (until its stop said the call was over)');
  t.notOk(s.state.visitNested(offer), 'a later visit is refused: the offer is withdrawn');
  s.state.leaveNested(offer);
  t.equal(guests(s.memory), 0, 'the visit is over');
});

t.test('a host waits for its own visitors only, not for the next host\'s helpers (offers alternate parity)', async (t) => {
  const { seat } = setUp();
  const s = seat();
  s.state.offerNested(0);
  const first = s.state.nestedOffer();
  t.ok(s.state.visitNested(first), 'a member visits task 0\'s region');
  let checks = 0;
  let second = 0;
  s.state.withdrawNested(0, () => {
    checks += 1;
    if (checks === 1) {
      // While task 0 waits, task 1 offers its region and a member helps there; task 0's visitor leaves.
      t.ok(s.state.offerNested(1), 'task 1 offers');
      second = s.state.nestedOffer();
      t.ok(s.state.visitNested(second), 'a member visits task 1\'s region');
      s.state.leaveNested(first);
    }
    return checks >= 100;
  });
  t.equal(checks, 1, 'task 0 stopped waiting once its own visitor left');
  t.not(second >>> 30, first >>> 30, 'the two offers have different parities');
  s.state.leaveNested(second);
  s.state.withdrawNested(1, () => true);
  t.equal(guests(s.memory), 0, 'no visit is counted');
  s.state.open(3);
  t.equal(s.state.nestedOffer(), 0, 'a new call starts with no offer');
});

t.test('a call opens with no visit counted (a visitor\'s thread that died outside a task leaves none behind)', async (t) => {
  const { seat } = setUp();
  const s = seat();
  s.state.offerNested(0);
  t.ok(s.state.visitNested(s.state.nestedOffer()));
  // The thread dies here: its visit is never left.
  s.state.open(2);
  t.equal(guests(s.memory), 0);
});

t.test('each call\'s views of the host\'s outputs: a call writing into a buffer of its own is helped there', async (t) => {
  const { seat, nested, memory } = setUp();
  const first = seat();
  first.state.offerNested(0);
  nested.open(5);
  helpNested(first, first.state.nestedOffer(), 10);
  t.equal(memory.of('float64')[1024 / 8], 7, 'the first call: the region\'s output');
  // The next call of the same plan writes output 0 into memory of its own (BoundPlan.viewsFor).
  first.state.withdrawNested(0, () => true);
  first.state.open(2);
  first.state.offerNested(0);
  const own = new Float64Array(new SharedArrayBuffer(8));
  const views = first.bound.views.slice();
  views[0] = { ...views[0]!, data: own, offset: 0 };
  memory.of('float64')[1024 / 8] = 0;
  nested.open(6);
  helpNested(seat(views), first.state.nestedOffer(), 10);
  t.equal(own[0], 7, 'the second call\'s output got the step\'s result');
  t.equal(memory.of('float64')[1024 / 8], 0, 'and the first call\'s place did not');
});
