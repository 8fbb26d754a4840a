// One fuzz case end to end: compile the seed's graph once per worker count (0: the inline plan,
// 1, 2 and 3 on a pool of three), run the reference executor on the compiled graph, check each
// plan for hazards, make several calls per configuration (two value sets, and both at once on
// the pool), and compare: bitwise across worker counts, within tolerance of the reference.
import { planHazards } from '../../src/scheduler/plan-check.js';
import { PlanError } from '../../src/scheduler/plan.js';
import { INLINE_WORK, PlannedExecutor } from '../../src/scheduler/planned-executor.js';
import { weft } from '../helpers.js';
import { bitsDiffer, copyOf, farFrom } from './fuzz-check.js';
import { makeCase, sizeClassOf, type FuzzCase } from './fuzz-graph.js';
import type { ElemwiseSource } from '../../src/kernels/elemwise.js';

export const WORKER_COUNTS = [0, 1, 2, 3] as const;

/** What one case exercised, for the summary. */
export interface CaseStats {
  readonly tasks: number;
  readonly calls: number;
  /** Calls split into more than one task. */
  readonly chunkedCalls: number;
  /** The plan's work reaches the pool (not run inline). */
  readonly onWorkers: boolean;
  readonly largestInput: number;
  /** The compiled graph has nodes that overwrite an input (inplace). */
  readonly inplace: boolean;
  /** The plan has calling-thread tasks (ops without a worker kernel). */
  readonly callingThread: boolean;
  /** Shared variables are updated; some in place (a node overwrites the graph input). */
  readonly updates: boolean;
  readonly updatesInplace: boolean;
  /** Element-wise calls the WebAssembly loops can run (their source has a program), and all of them. */
  readonly wasmCalls: number;
  readonly elemwiseCalls: number;
}

export interface CaseResult {
  readonly seed: number;
  readonly problems: readonly string[];
  /** Everything needed to replay and read a failure (empty when the case passed). */
  readonly report: string;
  readonly stats?: CaseStats;
  readonly ms: number;
}

function describeInputs(fz: FuzzCase): string {
  const shapes = (xs: readonly weft.NdArray[]): string => `[${xs.map((x) => x.shape.join(',')).join('] / [')}]`;
  return [
    ...fz.inputs.map((v, i) => `  ${v.name}: ${v.type} values ${shapes(fz.valueSets.map((set) => set[i]!))}`),
    ...fz.shared.map((s) => `  ${s.variable.name} (shared): ${s.variable.type} values ${shapes(s.values)}`),
  ].join('\n');
}

function message(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

/** The text printed for a failing seed: how to replay it, the inputs, the steps, the graph. */
function report(seed: number, fz: FuzzCase | undefined, fn: weft.WeftFunction<weft.NdArray[]> | undefined, problems: readonly string[]): string {
  const lines = [
    `fuzz seed ${seed} (${sizeClassOf(seed)}) failed; replay: WEFT_FUZZ_SEED=${seed} npx tap test/runtime/fuzz.test.ts`,
    ...problems.map((p) => `- ${p}`),
  ];
  if (fz) {
    lines.push('inputs:', describeInputs(fz), 'steps:', ...fz.steps.map((s) => `  ${s}`));
    lines.push(`expected output shapes: ${fz.outputShapes.map((s) => `[${s.join(',')}]`).join(' ')}`);
  }
  if (fn) lines.push('compiled graph:', weft.debugprint(fn));
  return lines.join('\n');
}

export async function runCase(seed: number, pool: weft.Pool): Promise<CaseResult> {
  const fns: Array<weft.WeftFunction<weft.NdArray[]>> = [];
  try {
    return await checkCase(seed, pool, fns);
  } finally {
    // Done with them: their arena regions may serve the next cases (when dispose releases
    // them; otherwise the executors' finalizers do, later).
    for (const fn of fns) fn.dispose();
  }
}

async function checkCase(seed: number, pool: weft.Pool, fns: Array<weft.WeftFunction<weft.NdArray[]>>): Promise<CaseResult> {
  const started = performance.now();
  const problems: string[] = [];
  let fz: FuzzCase | undefined;
  const done = (stats?: CaseStats): CaseResult => ({
    seed,
    problems,
    report: problems.length ? report(seed, fz, fns[0], problems) : '',
    stats,
    ms: performance.now() - started,
  });

  try {
    fz = makeCase(seed);
  } catch (e) {
    problems.push(`building the graph failed: ${message(e)}`);
    return done();
  }
  const values = fz.valueSets;
  // Nothing may write into the caller's values (inplace nodes overwrite only intermediates).
  const callerValues = values.map((set, k) => [...set, ...fz!.shared.map((s) => s.values[k]!)]);
  const pristine = callerValues.map((set) => set.map(copyOf));
  try {
    for (const workers of WORKER_COUNTS) {
      fns.push(
        await weft.compile(fz.inputs as weft.pt.TensorVariable[], fz.outputs as weft.pt.TensorVariable[], {
          pool,
          workers,
          onUnusedInput: 'ignore',
          updates: fz.updates,
        }),
      );
    }
  } catch (e) {
    problems.push(`compile failed: ${message(e)}`);
    return done();
  }

  // The graph's inputs for value set k: the explicit inputs, then the shared variables in the
  // graph's order (the value each has before the call).
  const graphInputs = (k: number): weft.NdArray[] =>
    fns[0]!.fgraph.inputs.map((v, i) => {
      if (i < fz!.inputs.length) return values[k]![i]!;
      const s = fz!.shared.find((x) => x.variable === v);
      if (!s) throw new Error(`the graph input ${v} is neither an input nor a shared variable of the case`);
      return s.values[k]!;
    });
  const nOut = fz.outputs.length;
  const setShared = (k: number): void => {
    for (const s of fz!.shared) s.variable.setValue(s.values[k]!);
  };

  // The reference: the compiled graph, run node by node with perform on this thread (outputs,
  // then the new values of the shared variables).
  let reference: weft.NdArray[][];
  try {
    const executor = new weft.ReferenceExecutor(fns[0]!.fgraph);
    // Shared values go in as copies: the graph may update them in place.
    reference = values.map((_, k) => executor.run(graphInputs(k).map((x, i) => (i < fz!.inputs.length ? x : copyOf(x)))) as weft.NdArray[]);
  } catch (e) {
    problems.push(`the reference executor failed: ${message(e)}`);
    return done();
  }
  reference[0]!.slice(0, nOut).forEach((r, j) => {
    const want = fz!.outputShapes[j]!;
    if (r.shape.length !== want.length || r.shape.some((d, i) => d !== want[i])) {
      problems.push(`output ${j}: the reference gives shape [${r.shape.join(',')}], the generator expected [${want.join(',')}]`);
    }
  });

  // The plans: one per value set (host scalars may differ), each free of hazards.
  let stats: CaseStats | undefined;
  const planner = new PlannedExecutor(fns[3]!.fgraph, () => pool, { workers: 3 });
  for (const k of values.keys()) {
    const set = graphInputs(k);
    try {
      const { plan } = planner.planFor(set);
      const d = plan.descriptor;
      for (const h of planHazards(d)) problems.push(`value set ${k}: plan hazard: ${h.message}`);
      const perCall = new Map<number, number>();
      for (const task of d.tasks) perCall.set(task.call, (perCall.get(task.call) ?? 0) + 1);
      stats ??= {
        tasks: d.tasks.length,
        calls: d.calls.length,
        chunkedCalls: [...perCall.values()].filter((n) => n > 1).length,
        onWorkers: plan.work >= INLINE_WORK && d.tasks.length > 0,
        largestInput: Math.max(0, ...set.map((x) => x.shape.reduce((a, b) => a * b, 1))),
        inplace: fns[3]!.fgraph.toposort().some((n) => Object.keys(n.op.destroyMap).length > 0),
        callingThread: d.calls.some((c) => c.main === true),
        updates: fz.updates.length > 0,
        updatesInplace: fns[3]!.fgraph.toposort().some((n) => Object.values(n.op.destroyMap).flat().some((i) => fns[3]!.fgraph.isInput(n.inputs[i]!))),
        wasmCalls: d.calls.filter((c) => c.kernel === 'elemwise' && (c.params['source'] as ElemwiseSource).program !== undefined).length,
        elemwiseCalls: d.calls.filter((c) => c.kernel === 'elemwise').length,
      };
    } catch (e) {
      problems.push(`value set ${k}: ${e instanceof PlanError ? 'no plan (the runtime would fall back to the reference executor)' : 'planning failed'}: ${message(e)}`);
    }
  }
  planner.dispose();

  // The runs: each value set on each configuration, then both at once on the pool. Results are
  // the outputs, then the shared variables' new values (except after concurrent calls, whose
  // updates land in either order).
  const runs: Array<{ label: string; set: number; outputs: weft.NdArray[] }> = [];
  const sharedNow = (): weft.NdArray[] => fz!.updates.map(([s]) => s.getValue());
  for (const [w, fn] of fns.entries()) {
    const workers = WORKER_COUNTS[w]!;
    try {
      for (const [k, set] of values.entries()) {
        setShared(k);
        const outputs = await fn(...set);
        runs.push({ label: `workers ${workers}, call ${k + 1}`, set: k, outputs: [...outputs, ...sharedNow()] });
      }
      if (workers === 3) {
        // Both value sets at once on this function, and the first on the 2-worker one as well:
        // two regions of one plan and another plan in flight on the same workers. Each call
        // reads the shared values when it starts. allSettled: a failing call must not leave its
        // siblings running into the next case.
        const concurrent = [
          { fn, k: 0, label: 'workers 3, concurrent call with value set 0' },
          { fn, k: 1, label: 'workers 3, concurrent call with value set 1' },
          { fn: fns[2]!, k: 0, label: 'workers 2, concurrent call with value set 0' },
        ];
        const calls = concurrent.map(({ fn: f, k }) => {
          setShared(k);
          return f(...values[k]!);
        });
        const together = await Promise.allSettled(calls);
        together.forEach((r, i) => {
          const { k, label } = concurrent[i]!;
          if (r.status === 'fulfilled') runs.push({ label, set: k, outputs: r.value });
          else problems.push(`${label} failed: ${message(r.reason)}`);
        });
      }
    } catch (e) {
      problems.push(`workers ${workers}: the call failed: ${message(e)}`);
    }
  }

  const dtypes = [...fz.outputs, ...fz.updates.map(([s]) => s)].map((v) => v.dtype);
  const what = (j: number): string => (j < nOut ? `output ${j}` : `the new value of ${fz!.updates[j - nOut]![0]}`);
  const firstOfSet = new Map<number, (typeof runs)[number]>();
  for (const run of runs) {
    const first = firstOfSet.get(run.set);
    run.outputs.forEach((out, j) => {
      if (!first) {
        const far = farFrom(out, reference[run.set]![j]!, dtypes[j]!);
        if (far) problems.push(`${run.label}, ${what(j)} (${dtypes[j]}) vs the reference: ${far}`);
      } else {
        const diff = bitsDiffer(out, first.outputs[j]!);
        if (diff) problems.push(`${run.label}, ${what(j)} (${dtypes[j]}) vs ${first.label}: ${diff}`);
      }
    });
    if (!first) firstOfSet.set(run.set, run);
  }
  callerValues.forEach((set, k) =>
    set.forEach((x, i) => {
      const diff = bitsDiffer(x, pristine[k]![i]!);
      if (diff) problems.push(`input ${i} of value set ${k} (shared variables last) was changed: ${diff}`);
    }),
  );
  return done(stats);
}
