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
  /** Timed runs at most (of a system timed alone). */
  readonly runs: number;
  /** Timed runs at least, even past the budget; in turns (measureAlongside), the system's rounds. */
  readonly minRuns: number;
  /**
   * Once minRuns are in, stop starting runs after this many milliseconds of timing; in turns,
   * each of its rounds' turns runs for this share (no cap of runs).
   */
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
  // A method, so that measurements of different results share a list (measureAlongside).
  check?(first: T): Promise<CheckResult> | CheckResult;
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
    await this.measureAlongside([m], []);
  }

  /**
   * Rows timed in turns with the peers their goals compare them to. The peers are set up,
   * checked and warmed up once. Then each row, one after the other, is set up, warmed up, and
   * timed in rounds of turns with each peer one of its goals names (a row whose goals name none
   * is timed alone), then disposed. Rows are not timed in turns with each other: weft's rows share
   * a pool whose given-back memory one row would take from the next. A peer's figure is the
   * median of its runs in all its turns (a peer no goal names is timed alone).
   *
   * Why: this machine's clock alternates between about 2.1 and 3.3 GHz from one second to the
   * next, so two rows timed one after the other can differ by 1.5x for that alone, while turns
   * spread each system's runs over the same stretch of time. Rows are recorded in the order
   * given, then the peers.
   */
  async measureAlongside(rows: readonly Measurement<unknown>[], peers: readonly Measurement<unknown>[]): Promise<void> {
    const decided = new Map<Measurement<unknown>, Outcome>();
    const timed = new Map<Measurement<unknown>, Prepared>();
    const prepare = async (m: Measurement<unknown>): Promise<Prepared | undefined> => {
      const p = await this.#prepare(m);
      if ('row' in p) decided.set(m, p);
      else timed.set(m, p);
      return 'row' in p ? undefined : p;
    };
    const ready: Prepared[] = [];
    /** How many rows each peer took turns with. */
    const turnsWith = new Map<Prepared, number>();
    try {
      for (const m of peers) {
        const p = await prepare(m);
        if (p) ready.push(p);
      }
      for (const m of rows) {
        const p = await prepare(m);
        if (!p) continue;
        const named = ready.filter((q) => q.error === undefined && (m.goals ?? []).some((g) => g.kind === 'speedup' && sameRow(g.vs, q.m)));
        for (const q of named) turnsWith.set(q, (turnsWith.get(q) ?? 0) + 1);
        p.note = named.length > 0 ? `timed in turns with ${named.map((q) => `${q.m.system} ${q.m.config}`).join(', ')}` : undefined;
        try {
          await timeInTurns([p, ...named]);
        } finally {
          await disposeQuietly(p.runner);
        }
      }
      for (const q of ready) {
        const n = turnsWith.get(q) ?? 0;
        if (n === 0) await timeInTurns([q]);
        else q.note = `timed in turns with each of ${n} row${n === 1 ? '' : 's'} whose goals name it`;
      }
    } finally {
      for (const p of ready) await disposeQuietly(p.runner);
    }
    for (const m of [...rows, ...peers]) {
      const p = timed.get(m);
      if (!p) {
        this.#push(decided.get(m)!.row);
        continue;
      }
      const base = baseOf(m);
      if (p.error !== undefined) {
        this.#push({ ...base, status: 'failed', note: `failed: ${message(p.error)}`, info: p.runner.info });
        continue;
      }
      this.#push({
        ...base,
        status: 'ok',
        value: m.figure(median(p.samples)),
        samplesMs: p.samples,
        warmup: p.warmups,
        check: p.check,
        note: [m.note, p.note].filter(Boolean).join('; ') || undefined,
        info: p.runner.info,
      });
    }
  }

  /** Set up, check and warm up one system: ready for its timed runs, or the row saying why not. */
  async #prepare(m: Measurement<unknown>): Promise<Prepared | Outcome> {
    // A row may ask for fewer runs (a slow peer), never for more than the suite's mode allows.
    const c = this.counts;
    const o = m.counts ?? {};
    const counts: Counts = {
      warmup: Math.min(c.warmup, o.warmup ?? c.warmup),
      runs: Math.min(c.runs, o.runs ?? c.runs),
      minRuns: Math.min(c.minRuns, o.minRuns ?? c.minRuns),
      budgetMs: Math.min(c.budgetMs, o.budgetMs ?? c.budgetMs),
    };
    const base = baseOf(m);
    let runner: Runner<unknown>;
    try {
      runner = await m.setup();
    } catch (e) {
      // A peer that cannot start is skipped with the reason; weft failing to start is a failure.
      if (m.system === 'weft') return { row: { ...base, status: 'failed', note: `failed in setup: ${message(e)}` } };
      return { row: { ...base, status: 'skipped', note: `skipped, cannot run here: ${message(e)}` } };
    }
    try {
      const first = await runner.run();
      const verdict = runner.verify ? await runner.verify(first) : m.check ? await m.check(first) : undefined;
      if (verdict && !verdict.ok) {
        await disposeQuietly(runner);
        return { row: { ...base, status: 'mismatch', check: verdict.detail, note: `wrong numbers, not timed: ${verdict.detail}`, info: runner.info } };
      }
      const warmupMs = Math.min(m.warmupMs ?? 0, c.budgetMs);
      const warming = performance.now();
      let warmups = 1;
      for (; warmups < counts.warmup || performance.now() - warming < warmupMs; warmups++) await runner.run();
      return { m, runner, counts, warmups, check: verdict?.detail, samples: [] };
    } catch (e) {
      await disposeQuietly(runner);
      return { row: { ...base, status: 'failed', note: `failed: ${message(e)}`, info: runner.info } };
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

/**
 * Turns: a pause first, then one run that is not timed, then the turn's timed runs for its share
 * of the budget, so that each system works in its own steady state (its threads awake, its
 * allocator's free memory its own) most of its turn. With turns of a single run, each system
 * paid for the one before it: after onnxruntime's 2-thread run the next system's runs were
 * 1.3-1.8x slower for 40 ms or more, and onnxruntime's runs took 50-90 ms instead of 6-10 whenever
 * its outputs' 16 MiB had to be fresh pages (12 µs each on this VM).
 */
const TURN_GAP_MS = 50;

/** A system set up, checked and warmed up: its timed runs go into `samples`. */
interface Prepared {
  readonly m: Measurement<unknown>;
  readonly runner: Runner<unknown>;
  readonly counts: Counts;
  readonly warmups: number;
  readonly check?: string;
  readonly samples: number[];
  /** How it was timed, when in turns. */
  note?: string;
  /** What a timed run threw: the system takes no more turns. */
  error?: unknown;
}

/** A row decided before timing: skipped, failed or wrong numbers. */
interface Outcome {
  readonly row: Omit<Row, 'workload' | 'higherIsBetter'>;
}

function baseOf(m: Measurement<unknown>) {
  return { group: m.group, system: m.system, config: m.config, unit: m.unit, reference: m.reference, goals: m.goals };
}

function sameRow(a: RowKey, b: RowKey): boolean {
  return a.group === b.group && a.system === b.system && a.config === b.config;
}

async function disposeQuietly(runner: Runner<unknown>): Promise<void> {
  try {
    await runner.dispose?.();
  } catch {
    // A peer that fails to clean up does not change its figure.
  }
}

async function timedRun(p: Prepared): Promise<void> {
  const t0 = performance.now();
  await p.runner.run();
  p.samples.push(p.runner.lastMs ? p.runner.lastMs() : performance.now() - t0);
}

/**
 * A system alone: timed runs until `runs`, or `minRuns` once its budget has passed. Several in
 * turns: rounds in which each system, in an order that rotates from round to round, takes a turn
 * (TURN_GAP_MS) of timed runs for a `minRuns`-th of its budget, one at least, in `minRuns` rounds.
 */
async function timeInTurns(systems: readonly Prepared[]): Promise<void> {
  if (systems.length === 1) {
    const p = systems[0]!;
    const { runs, minRuns, budgetMs } = p.counts;
    const started = performance.now();
    try {
      while (p.samples.length < runs && (p.samples.length < minRuns || performance.now() - started < budgetMs)) await timedRun(p);
    } catch (e) {
      p.error = e;
    }
    return;
  }
  const rounds = Math.max(...systems.map((p) => p.counts.minRuns));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < systems.length; i++) {
      const p = systems[(i + round) % systems.length]!;
      // A system that asked for fewer rounds (a slow peer) sits out the rest.
      if (p.error !== undefined || round >= p.counts.minRuns) continue;
      await new Promise((resolve) => setTimeout(resolve, TURN_GAP_MS));
      const turnMs = p.counts.budgetMs / p.counts.minRuns;
      try {
        await p.runner.run();
        const started = performance.now();
        do await timedRun(p);
        while (performance.now() - started < turnMs);
      } catch (e) {
        p.error = e;
      }
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
