// The one calling-thread interpreter and its hooks (RunHooks): what each hook hears and when, that
// an abort or a throwing hook stops the run before the next node, and copiedArguments, the one
// helper that gives perform copies of what must survive it. NanGuardMode, DebugMode and profiles
// are hooks over this interpreter; their own tests cover what they check.
import t from 'tap';
import { copiedArguments } from '../../src/graph/node-error.js';
import { ReferenceExecutor, type NodeStep } from '../../src/graph/reference-executor.js';
import { Elemwise } from '../../src/tensor/elemwise/elemwise.js';
import { add } from '../../src/tensor/scalar/catalog.js';
import { makeNdArray } from '../../src/tensor/core/ndarray.js';
import * as vmath from '../../src/kernels/vmath/functions.js';
import { pt, throwsExactly, weft } from '../helpers.js';

/** exp((x + y) * 2) on float64 vectors: four nodes (the 2 is broadcast by a DimShuffle). */
function chain(): { fg: weft.FunctionGraph } {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const z = x.add(y).mul(2).exp();
  return { fg: new weft.FunctionGraph([x, y], [z]) };
}

const vec = (...v: number[]) => makeNdArray(Float64Array.from(v), [v.length]);

t.test('the hooks hear every input, then every node in order, with its values, arguments, outputs and clock', async (t) => {
  const { fg } = chain();
  const executor = new ReferenceExecutor(fg);
  t.equal(executor.order.length, 4);
  const heard: string[] = [];
  let clock = 0;
  const steps: NodeStep[] = [];
  const [z] = executor.run([vec(1, 2), vec(3, 4)], {
    now: () => ++clock,
    input: (i, v, value) => heard.push(`input ${i} ${v === fg.inputs[i]} ${weft.tolist(value as weft.NdArray)}`),
    arguments: (node, k, values) => {
      heard.push(`arguments ${k} ${node.op}`);
      return values;
    },
    after: (node, k, step) => {
      heard.push(`after ${k} ${node.op}`);
      steps.push(step);
      t.ok(
        node.outputs.every((o, j) => step.live.get(o) === step.outputs[j]),
        `node ${k}: its outputs are among the live values`,
      );
      t.ok(
        node.inputs.every((v, i) => step.live.get(v) === step.values[i] || (v.owner === null && 'data' in v)),
        `node ${k}: its inputs are the live values they were`,
      );
    },
  }) as weft.NdArray[];
  t.same(heard, ['input 0 true 1,2', 'input 1 true 3,4', ...executor.order.flatMap((n, k) => [`arguments ${k} ${n.op}`, `after ${k} ${n.op}`])]);
  t.same(
    steps.map((s) => [s.start, s.end]),
    executor.order.map((_n, k) => [2 * k + 1, 2 * k + 2]),
    'start and end come from the hooks clock, one reading on each side of perform',
  );
  t.same(weft.tolist(z!), [vmath.exp(8), vmath.exp(12)], 'the run computed exp((x + y) * 2)');
  t.same(weft.tolist(steps[0]!.outputs[0] as weft.NdArray), [4, 6], 'the first step heard x + y');
});

t.test('perform gets what the arguments hook returns, and the step names both', async (t) => {
  const { fg } = chain();
  const executor = new ReferenceExecutor(fg);
  const given: unknown[][] = [];
  executor.run([vec(1, 2), vec(3, 4)], {
    arguments: (node, _k, values) => {
      const copies = copiedArguments(node, values, 'all');
      given.push(copies);
      return copies;
    },
    after: (_node, k, step) => {
      t.equal(step.given, given[k], `node ${k}: the step names what perform was given`);
      step.values.forEach((v, i) => {
        if (typeof v === 'object' && v !== null && 'data' in v) t.not(step.given[i], v, `node ${k}: argument ${i} is a copy`);
      });
    },
  });
  t.equal(given.length, executor.order.length);
});

t.test('a run stops before the next node when its signal aborts, with the hooks error', async (t) => {
  const { fg } = chain();
  const executor = new ReferenceExecutor(fg);
  const controller = new AbortController();
  const ran: number[] = [];
  await throwsExactly(
    t,
    () =>
      executor.run([vec(1), vec(2)], {
        signal: controller.signal,
        aborted: (s) => new Error(`stopped: ${String(s.reason)}`),
        after: (_node, k) => {
          ran.push(k);
          if (k === 0) controller.abort('enough');
        },
      }),
    Error,
    'stopped: enough',
  );
  t.same(ran, [0], 'only the node before the abort ran');
  // Without an error of its own, the run's is an AbortError with the reason as cause.
  const e = (() => {
    try {
      executor.run([vec(1), vec(2)], { signal: AbortSignal.abort('now') });
    } catch (error) {
      return error as Error;
    }
    return undefined;
  })();
  t.equal(e?.name, 'AbortError');
  t.equal(e?.message, 'the run was aborted');
  t.equal(e?.cause, 'now');
});

t.test('a hook that throws stops the run: later nodes do not run', async (t) => {
  const { fg } = chain();
  const executor = new ReferenceExecutor(fg);
  const ran: number[] = [];
  await throwsExactly(
    t,
    () =>
      executor.run([vec(1), vec(2)], {
        after: (node, k) => {
          ran.push(k);
          if (k === 1) throw new RangeError(`no more after ${node.op}`);
        },
      }),
    RangeError,
    `no more after ${executor.order[1]!.op}`,
  );
  t.same(ran, [0, 1]);
});

t.test('copiedArguments copies the inputs the destroyMap names, or every input', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const node = new Elemwise(add, { 0: 1 }).makeNode(x, y);
  t.same(node.op.destroyMap, { 0: [1] }, 'the node overwrites its second input');
  const values = [vec(1, 2), vec(3, 4)];
  const destroyed = copiedArguments(node, values, 'destroyed');
  t.equal(destroyed[0], values[0], "'destroyed': the input it only reads is passed as it is");
  t.not(destroyed[1], values[1], "'destroyed': the input it overwrites is a copy");
  t.same(weft.tolist(destroyed[1] as weft.NdArray), [3, 4], 'with the same values');
  const [out] = node.op.perform(node, destroyed) as weft.NdArray[];
  t.same(weft.tolist(out!), [4, 6]);
  t.same(weft.tolist(values[1]!), [3, 4], 'the value the caller holds is unchanged');
  const all = copiedArguments(node, values, 'all');
  t.ok(all.every((a, i) => a !== values[i]), "'all': every input is a copy");
});
