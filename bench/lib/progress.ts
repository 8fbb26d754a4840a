// `--progress` (what `weft bench` asks for): one bar per workload, counting its rows as they are
// measured, instead of a log line per row (the table at the end has them all). A workload's
// number of rows comes from the last run's bench/results/latest.json when it has that workload.
import { readFileSync } from 'node:fs';
import cliProgress from 'cli-progress';

/** Rows per workload in the last results file, when there is one. */
export function rowsLastTime(file: URL): ReadonlyMap<string, number> {
  try {
    const results = JSON.parse(readFileSync(file, 'utf8')) as { rows?: Array<{ workload?: string }> };
    const counts = new Map<string, number>();
    for (const r of results.rows ?? []) if (r.workload) counts.set(r.workload, (counts.get(r.workload) ?? 0) + 1);
    return counts;
  } catch {
    return new Map();
  }
}

export class WorkloadProgress {
  #bar: cliProgress.SingleBar | undefined;
  #rows = 0;
  #total = 0;

  constructor(private readonly expected: ReadonlyMap<string, number>) {}

  /** A new bar for workload `id`. */
  start(id: string): void {
    this.stop();
    this.#rows = 0;
    this.#total = this.expected.get(id) ?? 1;
    this.#bar = new cliProgress.SingleBar(
      { format: `${id.padEnd(4)} |{bar}| {value}/{total} rows  {last}`, noTTYOutput: true, notTTYSchedule: 2000, stream: process.stderr, clearOnComplete: false },
      cliProgress.Presets.shades_classic,
    );
    this.#bar.start(this.#total, 0, { last: '' });
  }

  /** A row was measured: `line` is the suite's line for it. */
  row(line: string): void {
    if (!this.#bar) return;
    this.#rows++;
    // A workload with more rows than last time grows its bar rather than overflowing it.
    if (this.#rows > this.#total) this.#bar.setTotal((this.#total = this.#rows));
    this.#bar.update(this.#rows, { last: line.trim().replace(/\s+/g, ' ').slice(0, 70) });
  }

  stop(): void {
    if (!this.#bar) return;
    if (this.#rows < this.#total) this.#bar.setTotal(this.#rows);
    this.#bar.update(this.#rows);
    this.#bar.stop();
    this.#bar = undefined;
  }
}
