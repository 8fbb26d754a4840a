// The planner's passes alone (src/scheduler/plan/), on small hand-made drafts: the buffer layout
// and when it lends a buffer's bytes, the views' offsets through chains of views, the tasks of
// calls by their work, and placing nodes (what becomes a call, a view, a host value); the plan's
// text as workers read it.
import t from 'tap';
import type { Buffer } from '../../src/scheduler/plan/draft.js';
import { layOutBuffers, placedViews } from '../../src/scheduler/plan/buffer-layout.js';
import { placeNodes } from '../../src/scheduler/plan/place-nodes.js';
import { chunkTasks, TASK_WORK } from '../../src/scheduler/plan/tasks.js';
import { HostValues } from '../../src/scheduler/host-values.js';
import { innerPlanning } from '../../src/scheduler/inner-planner.js';
import { planFromText, planToText, type CallDescriptor, type PlanDescriptor, type ViewDescriptor } from '../../src/workers/protocol.js';
import { ALIGN } from '../../src/workers/arena.js';
import { pt, rng, weft } from '../helpers.js';

const buffer = (bytes: number, writer: number, readers: number[], pinned = false): Buffer => ({ bytes, offset: -1, writer, readers: new Set(readers), pinned });
/** Nodes 0, 1, 2, ... in a chain: each is an ancestor of every later one. */
const chain = (a: number, b: number): boolean => a < b;

t.test('layOutBuffers lends a buffer only to a node after its writer and every reader', async (t) => {
  const a = buffer(1000, 0, [1]);
  const b = buffer(800, 2, [3]);
  const top = layOutBuffers([a, b], chain);
  t.equal(b.offset, a.offset, 'b takes the bytes of a: its writer and reader run before b is written');
  t.equal(top, Math.ceil(1000 / ALIGN) * ALIGN, 'the data is as long as the one buffer');

  const c = buffer(1000, 0, [1]);
  const d = buffer(800, 2, [3]);
  // Without an order between node 1 (c's reader) and node 2 (d's writer), d may not take c's bytes.
  layOutBuffers([c, d], (x, y) => x < y && !(x === 1 && y === 2));
  t.not(d.offset, c.offset, 'a reader that may still run keeps its buffer');

  const pinned = buffer(1000, 0, [1], true);
  const later = buffer(1000, 2, []);
  layOutBuffers([pinned, later], chain);
  t.not(later.offset, pinned.offset, 'an output (pinned) keeps its buffer for the whole call');

  const big = buffer(4000, 0, [1]);
  const small = buffer(100, 2, []);
  layOutBuffers([big, small], chain);
  t.not(small.offset, big.offset, 'nor does a buffer lend more than twice what is asked');

  // An input (written before the call, writer -1) is never handed on, even unpinned and read early.
  const input = buffer(64, -1, [0]);
  const out = buffer(64, 1, []);
  layOutBuffers([input, out], (a, b) => a < b);
  t.ok(input.offset !== out.offset && input.offset >= 0 && out.offset >= 0, 'inputs (written before the call) keep bytes of their own');
});

t.test('placedViews walks chains of views to their buffer', async (t) => {
  const b = buffer(800, 0, []);
  b.offset = 256;
  const view = (shape: number[]): ViewDescriptor => ({ dtype: 'float64', offset: -1, shape, stride: [1] });
  const placed = placedViews({
    views: [view([100]), view([50]), view([10])],
    viewBuffer: [b, b, b],
    viewRelative: new Map([
      [1, { of: 0, elements: 20 }],
      [2, { of: 1, elements: 5 }],
    ]),
  });
  t.same(
    placed.map((v) => v.offset),
    [256, 256 + 8 * 20, 256 + 8 * 25],
    'a view of a view starts at its buffer plus every step, in bytes of its dtype',
  );
});

t.test('chunkTasks cuts a call by its work, and a slab call into its slabs', async (t) => {
  const n = 8 * TASK_WORK;
  const v: ViewDescriptor = { dtype: 'float32', offset: 0, shape: [n], stride: [1] };
  const calls: CallDescriptor[] = [
    { kernel: 'elemwise', params: {}, inputs: [0], outputs: [1], label: 'exp', split: { by: 'elements' } },
    { kernel: 'whole', params: {}, inputs: [0], outputs: [1], label: 'one task' },
    { kernel: 'reduce', params: {}, inputs: [0], outputs: [1], label: 'slabs', split: { by: 'slabs', axis: 0, count: 3 } },
  ];
  const { tasks, tasksOfCall, work } = chunkTasks(
    calls,
    [
      { name: 'elemwise', params: {}, chunking: { by: 'elements' } },
      { name: 'whole', params: {}, chunking: { by: 'none' } },
      { name: 'reduce', params: {}, chunking: { by: 'none' } },
    ],
    [v, v],
  );
  t.equal(tasksOfCall[0]!.length, 8, `${n} elements: 8 tasks of TASK_WORK`);
  t.same(
    tasksOfCall[0]!.map((i) => [tasks[i]!.start, tasks[i]!.end]),
    [...Array(8).keys()].map((c) => [c * TASK_WORK, (c + 1) * TASK_WORK]),
  );
  t.same(tasksOfCall[1]!.map((i) => tasks[i]), [{ call: 1, start: -1, end: -1 }], "chunking 'none': one task over the whole call");
  t.same(
    tasksOfCall[2]!.map((i) => [tasks[i]!.start, tasks[i]!.end]),
    [
      [0, 1],
      [1, 2],
      [2, 3],
    ],
    'a slab call: one task per slab',
  );
  t.equal(work, 3 * n, 'the work of the plan: each call touches n elements');
});

t.test('placeNodes: kernel nodes become calls, views offsets, shapes host values', async (t) => {
  const x = pt.matrix('x');
  const y = x.T.exp().sum({ axis: 0 }).reshape([x.shape.get(0), 1]);
  const fg = new weft.FunctionGraph([x], [y]);
  const xv = rng(3).normal([6, 4]);
  const draft = placeNodes(fg, [xv], new HostValues(fg), innerPlanning);
  const kernels = draft.calls.map((c) => c.kernel);
  t.ok(kernels.includes('elemwise') && kernels.includes('reduce'), `calls: ${kernels.join(', ')}`);
  t.equal(draft.calls.length, draft.callNodes.length);
  t.equal(draft.calls.length, draft.kernelCalls.length);
  const transposed = draft.order.findIndex((n) => String(n.op).startsWith('DimShuffle{1,0}'));
  t.ok(transposed >= 0 && !draft.callsOfNode.has(transposed), 'the transpose is a view: no call');
  const shapeNodes = draft.order.filter((n) => draft.hostOnly(n));
  t.ok(shapeNodes.length > 0, `the reshape's shape is computed by the planner (${shapeNodes.map(String).join(', ')})`);
  t.equal(draft.inputViews.length, 1);
  t.ok(draft.viewBuffer[draft.inputViews[0]!]!.pinned, "the input's buffer is pinned");
  t.same(draft.outputs.map((o) => o.kind), ['view']);
});

t.test('the plan text keeps the numbers JSON cannot hold (NaN, infinities, -0) in kernel params', async (t) => {
  const plan = { calls: [{ kernel: 'elemwise', params: { steps: [{ op: 'const', value: NaN }, { op: 'const', value: -Infinity }, { op: 'const', value: -0 }, { value: 1.5 }, { value: Infinity }] } }] };
  const text = planToText(plan as unknown as PlanDescriptor);
  t.notMatch(text, /null/, 'nothing became null');
  const back = planFromText(text) as unknown as typeof plan;
  const values = back.calls[0]!.params.steps.map((s) => s.value);
  t.ok(Number.isNaN(values[0]), 'NaN');
  t.equal(values[1], -Infinity);
  t.ok(Object.is(values[2], -0), '-0');
  t.same(values.slice(3), [1.5, Infinity]);
});

t.test('a view whose bound the graph computes: planned once the bound is known (in stages), never a whole slice', async (t) => {
  const m = pt.matrix('m');
  const i = pt.vector('i', 'int32');
  const a = weft.ndarray(Float64Array.from({ length: 16 }, (_, k) => k), [4, 4]);
  // From data (a sum of an input of unknown length), and from lengths through float arithmetic.
  const fromData = m.get(weft.slice(null, null), weft.slice(i.sum(), null));
  const throughFloats = m.get(weft.slice(null, null), weft.slice(pt.cast(pt.ceil(pt.cast(pt.shape(m).get(1), 'float64').div(2)), 'int32'), null));
  for (const workers of [0, 2]) {
    const fn = await weft.compile([m, i], [fromData, throughFloats], { workers });
    const [x, y] = (await fn(a, [1, 2])) as weft.NdArray[];
    t.same(weft.tolist(x!), [[3], [7], [11], [15]], `workers ${workers}: m[:, sum(i):]`);
    t.same(weft.tolist(y!), [[2, 3], [6, 7], [10, 11], [14, 15]], `workers ${workers}: m[:, ceil(n / 2):]`);
  }
  const host = new HostValues(new weft.FunctionGraph([m], [throughFloats]));
  t.equal([...host.known].filter((v) => String(v.type).startsWith('TensorType(float64, ()')).length > 0, true, 'the float step between lengths is a host value');
});
