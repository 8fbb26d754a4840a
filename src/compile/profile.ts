// FunctionProfile: what `profile: true` records for a compiled function: compile time and the
// rewrite profile (time, calls and applications per rewriter), then for every call the time of
// each node, summed per node and per op (and of the copies of large arguments and results, which
// are no nodes), and a timeline that toChromeTrace() exports as Trace
// Event JSON (open it in Perfetto or chrome://tracing to see which thread ran what) and
// toSvgTimeline() draws as a picture (profile-timeline.ts).
import type { Apply } from '../graph/apply.js';
import type { RewriteProfile } from '../graph/rewriting/context.js';
import { timelineSvg, type TimelineOptions } from './profile-timeline.js';

export interface NodeStats {
  /** Total milliseconds in this node over all calls. */
  time: number;
  calls: number;
}

export interface TraceEvent {
  readonly node: Apply;
  /** Milliseconds since the profile was created. */
  readonly start: number;
  readonly duration: number;
  /** Which call of the function (0-based). */
  readonly call: number;
  /** Where it ran: 0 is the calling thread, k > 0 worker k. */
  readonly thread: number;
}

/**
 * A task that copied part of a call's large argument into its region, or of a result out of it
 * (src/scheduler/plan/argument-copies.ts): calling-thread work beside the nodes' tasks, no node.
 */
export interface CopyEvent {
  /** Which copy ("copy of argument 0 into the region"). */
  readonly label: string;
  /** Milliseconds since the profile was created. */
  readonly start: number;
  readonly duration: number;
  /** Which call of the function (0-based). */
  readonly call: number;
  /** Where it ran (0: the calling thread). */
  readonly thread: number;
}

/** A Trace Event "complete" event (ph X, microseconds) for a task's span. */
function completeEvent(name: string, cat: string, e: { readonly thread: number; readonly start: number; readonly duration: number }, args: Record<string, unknown>) {
  return { name, cat, ph: 'X', pid: 1, tid: e.thread, ts: Math.round(e.start * 1000), dur: Math.max(1, Math.round(e.duration * 1000)), args };
}

export class FunctionProfile {
  /** Milliseconds spent compiling (building the graph, rewriting, planning). */
  compileTime = 0;
  calls = 0;
  /** Milliseconds spent in calls, end to end. */
  callTime = 0;
  readonly nodes = new Map<Apply, NodeStats>();
  readonly events: TraceEvent[] = [];
  /** The copy tasks of calls with large arguments or results (kept up to maxEvents too). */
  readonly copies: CopyEvent[] = [];
  /** Milliseconds in copy tasks over all calls. */
  copyTime = 0;
  readonly #origin = performance.now();

  constructor(
    readonly name: string,
    readonly rewrites: RewriteProfile,
    /** How many trace events to keep (the first ones); statistics keep counting after that. */
    readonly maxEvents = 100_000,
  ) {}

  /** Why calls ran on the reference executor instead of plans, if they did. */
  fallback: string | undefined;

  /** Milliseconds since this profile began: the clock of `recordNode`. */
  now(): number {
    return performance.now() - this.#origin;
  }

  /** A time in milliseconds since the epoch (as workers report them) on this profile's clock. */
  fromEpoch(ms: number): number {
    return ms - performance.timeOrigin - this.#origin;
  }

  recordNode(node: Apply, start: number, end: number, thread = 0): void {
    let s = this.nodes.get(node);
    if (!s) {
      s = { time: 0, calls: 0 };
      this.nodes.set(node, s);
    }
    s.time += end - start;
    s.calls += 1;
    if (this.events.length < this.maxEvents) {
      this.events.push({ node, start, duration: end - start, call: this.calls, thread });
    }
  }

  recordCopy(label: string, start: number, end: number, thread = 0): void {
    this.copyTime += end - start;
    if (this.copies.length < this.maxEvents) this.copies.push({ label, start, duration: end - start, call: this.calls, thread });
  }

  recordCall(ms: number): void {
    this.calls += 1;
    this.callTime += ms;
  }

  /** Time per op (all nodes applying an equal op together), slowest first. */
  byOp(): Array<{ op: string; time: number; calls: number; nodes: number }> {
    const rows = new Map<string, { op: string; time: number; calls: number; nodes: number }>();
    for (const [node, s] of this.nodes) {
      const op = String(node.op);
      const r = rows.get(op) ?? { op, time: 0, calls: 0, nodes: 0 };
      r.time += s.time;
      r.calls += s.calls;
      r.nodes += 1;
      rows.set(op, r);
    }
    return [...rows.values()].sort((a, b) => b.time - a.time);
  }

  toString(): string {
    const lines = [
      `profile of ${this.name}: compiled in ${this.compileTime.toFixed(1)} ms; ${this.calls} calls, ${this.callTime.toFixed(2)} ms in calls`,
      '',
      'per op:',
      '   time ms    calls  nodes  op',
      ...this.byOp().map((r) => `${r.time.toFixed(3).padStart(10)} ${String(r.calls).padStart(8)} ${String(r.nodes).padStart(6)}  ${r.op}`),
      '',
      'per node:',
      '   time ms    calls  node',
      ...[...this.nodes]
        .sort((a, b) => b[1].time - a[1].time)
        .map(([n, s]) => `${s.time.toFixed(3).padStart(10)} ${String(s.calls).padStart(8)}  ${n}`),
      ...(this.copies.length > 0 ? ['', `copies of large arguments and results: ${this.copyTime.toFixed(3)} ms in ${this.copies.length} tasks`] : []),
      '',
      this.rewrites.toString(),
    ];
    return lines.join('\n');
  }

  /**
   * The trace as an SVG picture: a lane for the calling thread and one per worker that ran
   * tasks, tasks as bars coloured by op (with a legend), waits inside calls hatched, a time axis.
   */
  toSvgTimeline(options?: TimelineOptions): string {
    return timelineSvg(this.name, this.events, options, this.copies);
  }

  /** Trace Event JSON (complete events, one thread per worker) for Perfetto or chrome://tracing. */
  toChromeTrace(): string {
    const threads = new Set([...this.events, ...this.copies].map((e) => e.thread));
    threads.add(0);
    const meta = [...threads].map((tid) => ({
      name: 'thread_name',
      ph: 'M',
      pid: 1,
      tid,
      args: { name: tid === 0 ? 'calling thread' : `worker ${tid}` },
    }));
    const events = this.events.map((e) => completeEvent(String(e.node.op), 'node', e, { node: String(e.node), call: e.call }));
    const copies = this.copies.map((e) => completeEvent('copy', 'copy', e, { copy: e.label, call: e.call }));
    return JSON.stringify({ traceEvents: [...meta, ...events, ...copies], displayTimeUnit: 'ms', otherData: { function: this.name } });
  }
}
