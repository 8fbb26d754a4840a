// The suite's bookkeeping: a measurement sets a system up, checks its numbers against the
// workload's reference, warms it up, times it (median of several runs within a time budget),
// and records a row. Setup failures become skipped rows with the reason; wrong numbers become
// mismatch rows and are not timed. Ratios and goals are computed once all rows are in.
import os from 'node:os';
import type { CheckResult } from './check.js';

export type Unit = 'ms' | 'GB/s' | 'GFLOP/s' | 'steps/s' | 'µs/task' | 'µs/call' | 'calls/s' | 'M draws/s';

/** Figures in these units are better when higher; times are better when lower. */
const HIGHER_IS_BETTER: ReadonlySet<Unit> = new Set(['GB/s', 'GFLOP/s', 'steps/s', 'calls/s', 'M draws/s']);

export interface Counts {
  /** Calls before timing, the checked call included. */
  readonly warmup: number;
  /** Timed runs at most. */
  readonly runs: number;
  /** Timed runs at least, even past the budget. */
  readonly minRuns: number;
  /** Once minRuns are in, stop starting runs after this many milliseconds of timing. */
  readonly budgetMs: number;
}

export const FULL_COUNTS: Counts = { warmup: 3, runs: 9, minRuns: 5, budgetMs: 4000 };
export const QUICK_COUNTS: Counts = { warmup: 2, runs: 5, minRuns: 3, budgetMs: 1500 };

export interface RowKey {
  readonly group: string;
  readonly system: string;
  readonly config: string;
}

export type Goal =
  | { readonly kind: 'speedup'; readonly label: string; readonly vs: RowKey; readonly atLeast: number }
  | { readonly kind: 'value'; readonly label: string; readonly atLeast?: number; readonly atMost?: number };

export interface GoalResult {
  readonly label: string;
  /** Undefined when a row it needs is missing. */
  readonly met?: boolean;
  readonly measured?: number;
}

export interface Row extends RowKey {
  readonly workload: string;
  readonly unit: Unit;
  readonly higherIsBetter: boolean;
  readonly status: 'ok' | 'skipped' | 'mismatch' | 'failed';
  /** The figure: the median run converted to the unit. */
  readonly value?: number;
  /** Milliseconds of each timed run, in order. */
  readonly samplesMs?: readonly number[];
  readonly warmup?: number;
  readonly reference?: boolean;
  readonly goals?: readonly Goal[];
  /** The agreement check's summary. */
  readonly check?: string;
  /** Why a row was skipped or failed, or a remark on how it was measured. */
  readonly note?: string;
  readonly info?: Readonly<Record<string, unknown>>;
  /** The 1-minute load average when the row was recorded (other processes share the machine). */
  readonly load1?: number;
  /** Filled in by `finish`: speed relative to the group's reference (> 1: faster). */
  ratio?: number;
  goalResults?: GoalResult[];
}

export interface Runner<T> {
  /** One timed unit of work; it returns what the check looks at (the first call's result). */
  run(): Promise<T> | T;
  /** Overrides the measurement's check (e.g. a training step compares parameters it updated). */
  verify?(first: T): Promise<CheckResult> | CheckResult;
  dispose?(): Promise<void> | void;
  /**
   * A runner that times itself (e.g. the span of a call's tasks read from a profile) reports the
   * last run's milliseconds here; otherwise runs are timed by the wall clock around run().
   */
  lastMs?(): number;
  /** Facts about this system's setup to keep in the JSON (tasks in the plan, versions). */
  readonly info?: Readonly<Record<string, unknown>>;
}

export interface Measurement<T> extends RowKey {
  readonly unit: Unit;
  /** The figure, from the milliseconds of one run. */
  readonly figure: (ms: number) => number;
  readonly setup: () => Promise<Runner<T>>;
  readonly check?: (first: T) => Promise<CheckResult> | CheckResult;
  /** Fewer runs for this row (each field is capped by the suite's counts). */
  readonly counts?: Partial<Counts>;
  /**
   * Warm-up runs continue until this many milliseconds have passed (capped by the mode's time
   * budget): for rows whose figure is a steady state only once the JIT has settled, given to
   * every system of the group alike (W6's scalar calls: 10k or more calls, and a default pool's
   * workers starting on the same cores).
   */
  readonly warmupMs?: number;
  readonly reference?: boolean;
  readonly goals?: readonly Goal[];
  readonly note?: string;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function message(e: unknown): string {
  return e instanceof Error ? `${e.name === 'Error' ? '' : `${e.name}: `}${e.message.split('\n')[0]}` : String(e);
}

export class Suite {
  readonly rows: Row[] = [];
  workload = '';

  constructor(
    readonly quick: boolean,
    readonly counts: Counts,
    readonly log: (line: string) => void,
  ) {}

  /** A row for a system that cannot run here (or a variant that does not exist yet). */
  skip(key: RowKey & { unit: Unit; reference?: boolean; goals?: readonly Goal[] }, reason: string): void {
    this.#push({ ...key, status: 'skipped', note: reason });
  }

  /** A row timed elsewhere (e.g. by bench/compile.ts's own loop), with its samples when known. */
  record(row: RowKey & { unit: Unit; value: number; samplesMs?: readonly number[]; reference?: boolean; goals?: readonly Goal[]; check?: string; note?: string; info?: Record<string, unknown> }): void {
    this.#push({ ...row, status: 'ok' });
  }

  #push(row: Omit<Row, 'workload' | 'higherIsBetter'> & { unit: Unit }): void {
    const load1 = Math.round(os.loadavg()[0]! * 100) / 100;
    const full: Row = { workload: this.workload, higherIsBetter: HIGHER_IS_BETTER.has(row.unit), load1, ...row };
    this.rows.push(full);
    const shown = full.value !== undefined ? `${formatValue(full.value)} ${full.unit}` : (full.note ?? full.status);
    this.log(`  ${full.group.padEnd(16)} ${full.system.padEnd(18)} ${full.config.padEnd(26)} ${shown}`);
  }

  /** Set up, check, warm up, time and record one system. */
  async measure<T>(m: Measurement<T>): Promise<void> {
    // A row may ask for fewer runs (a slow peer), never for more than the suite's mode allows.
    const c = this.counts;
    const o = m.counts ?? {};
    const counts: Counts = {
      warmup: Math.min(c.warmup, o.warmup ?? c.warmup),
      runs: Math.min(c.runs, o.runs ?? c.runs),
      minRuns: Math.min(c.minRuns, o.minRuns ?? c.minRuns),
      budgetMs: Math.min(c.budgetMs, o.budgetMs ?? c.budgetMs),
    };
    const base = { group: m.group, system: m.system, config: m.config, unit: m.unit, reference: m.reference, goals: m.goals };
    let runner: Runner<T>;
    try {
      runner = await m.setup();
    } catch (e) {
      // A peer that cannot start is skipped with the reason; weft failing to start is a failure.
      if (m.system === 'weft') this.#push({ ...base, status: 'failed', note: `failed in setup: ${message(e)}` });
      else this.#push({ ...base, status: 'skipped', note: `skipped, cannot run here: ${message(e)}` });
      return;
    }
    try {
      const first = await runner.run();
      const verdict = runner.verify ? await runner.verify(first) : m.check ? await m.check(first) : undefined;
      if (verdict && !verdict.ok) {
        this.#push({ ...base, status: 'mismatch', check: verdict.detail, note: `wrong numbers, not timed: ${verdict.detail}`, info: runner.info });
        return;
      }
      const warmupMs = Math.min(m.warmupMs ?? 0, c.budgetMs);
      const warming = performance.now();
      let warmups = 1;
      for (; warmups < counts.warmup || performance.now() - warming < warmupMs; warmups++) await runner.run();
      const samples: number[] = [];
      const started = performance.now();
      while (samples.length < counts.runs && (samples.length < counts.minRuns || performance.now() - started < counts.budgetMs)) {
        const t0 = performance.now();
        await runner.run();
        samples.push(runner.lastMs ? runner.lastMs() : performance.now() - t0);
      }
      this.#push({
        ...base,
        status: 'ok',
        value: m.figure(median(samples)),
        samplesMs: samples,
        warmup: warmups,
        check: verdict?.detail,
        note: m.note,
        info: runner.info,
      });
    } catch (e) {
      this.#push({ ...base, status: 'failed', note: `failed: ${message(e)}`, info: runner.info });
    } finally {
      try {
        await runner.dispose?.();
      } catch {
        // A peer that fails to clean up does not change its figure.
      }
    }
  }

  /** Ratios to each group's reference row and the goals' verdicts. */
  finish(): void {
    const find = (k: RowKey): Row | undefined => this.rows.find((r) => r.group === k.group && r.system === k.system && r.config === k.config);
    const speed = (r: Row, ref: Row): number | undefined =>
      r.value === undefined || ref.value === undefined ? undefined : r.higherIsBetter ? r.value / ref.value : ref.value / r.value;
    for (const r of this.rows) {
      const ref = this.rows.find((q) => q.group === r.group && q.reference);
      if (ref) r.ratio = speed(r, ref);
      r.goalResults = (r.goals ?? []).map((g): GoalResult => {
        if (r.value === undefined) return { label: g.label };
        if (g.kind === 'value') {
          const met = (g.atLeast === undefined || r.value >= g.atLeast) && (g.atMost === undefined || r.value <= g.atMost);
          return { label: g.label, met, measured: r.value };
        }
        const other = find(g.vs);
        const s = other ? speed(r, other) : undefined;
        return s === undefined ? { label: g.label } : { label: g.label, met: s >= g.atLeast, measured: s };
      });
    }
  }
}

export function formatValue(v: number): string {
  const a = Math.abs(v);
  if (a >= 1000) return v.toFixed(0);
  if (a >= 100) return v.toFixed(1);
  if (a >= 10) return v.toFixed(2);
  return v.toPrecision(3);
}
