// weft as the suite sees it: the build in dist/ (made by `npm run prebench`), which is what users
// run (tsx's transform of the sources wraps every closure it creates in a naming helper, which
// made small calls half as fast again), pools sized per workload, and the labels of worker
// counts used in the table.
import * as weft from '../../dist/src/index.js';

export { weft };
export const pt = weft.pt;
export type TV = weft.pt.TensorVariable;

/** The configuration label of a weft row. */
export function workersLabel(workers: number): string {
  return workers === 0 ? 'inline (workers: 0)' : `${workers} worker${workers === 1 ? '' : 's'}`;
}

/**
 * A row's run: `call`, whose float32 output is returned; with `release`, the previous call's
 * output (already checked, or dropped) is first given back to weft (weft.release), so that this
 * call's output takes its memory instead of fresh pages.
 */
export function outputRun(call: () => Promise<weft.NdArray>, release: boolean): () => Promise<Float32Array> {
  let last: weft.NdArray | undefined;
  return async () => {
    if (release && last) weft.release(last);
    last = await call();
    return float32Data(last);
  };
}

/** A float32 view of an output (weft returns scijs ndarrays of the output's dtype). */
export function float32Data(nd: weft.NdArray): Float32Array {
  if (!(nd.data instanceof Float32Array)) throw new TypeError(`expected a float32 output, got ${nd.data.constructor.name}`);
  return nd.data;
}

/** The tasks of the latest call of a function compiled with `profile: true`. */
function lastCallEvents(fn: weft.CompiledFunction): weft.FunctionProfile['events'] {
  const profile = fn.profile;
  if (!profile) throw new Error('compile the function with profile: true');
  const call = profile.calls - 1;
  const events: weft.FunctionProfile['events'][number][] = [];
  for (let i = profile.events.length - 1; i >= 0 && profile.events[i]!.call >= call; i--) {
    if (profile.events[i]!.call === call) events.push(profile.events[i]!);
  }
  if (events.length === 0) throw new Error('the profile kept no task of the latest call');
  return events;
}

/** How many tasks the latest call of a profiled function ran, and on how many threads. */
export function lastCallTasks(fn: weft.CompiledFunction): { tasks: number; threads: number } {
  const events = lastCallEvents(fn);
  return { tasks: events.length, threads: new Set(events.map((e) => e.thread)).size };
}

/**
 * Milliseconds from the first task's start to the last task's end in the latest call of a
 * function compiled with `profile: true`: the compute phase, without the copies in and out.
 */
export function lastTaskSpan(fn: weft.CompiledFunction): number {
  const events = lastCallEvents(fn);
  const start = Math.min(...events.map((e) => e.start));
  const end = Math.max(...events.map((e) => e.start + e.duration));
  return end - start;
}
