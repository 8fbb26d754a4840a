// RewriteContext: what rewriters report to while a graph is rewritten: a profile (time, calls
// and applications per rewriter) and an optional verbose log of each rewrite applied, so that
// "my rewrite is not used" and "a rewrite changed my results" can be answered.
import { debugprint } from '../printing.js';
import type { Variable } from '../variable.js';

export interface RewriterStats {
  /** Milliseconds spent in the rewriter (its transform or its whole run). */
  time: number;
  /** Times it was asked (nodes looked at, or runs). */
  calls: number;
  /** Times it changed the graph. */
  applied: number;
}

export class RewriteProfile {
  readonly byRewriter = new Map<string, RewriterStats>();
  /** Total time of the whole rewrite pipeline, in milliseconds. */
  total = 0;

  record(name: string, ms: number, applied: boolean): void {
    let s = this.byRewriter.get(name);
    if (!s) {
      s = { time: 0, calls: 0, applied: 0 };
      this.byRewriter.set(name, s);
    }
    s.time += ms;
    if (applied) s.applied += 1;
    else s.calls += 1;
  }

  /** A table, slowest rewriter first. */
  toString(): string {
    const rows = [...this.byRewriter].sort((a, b) => b[1].time - a[1].time);
    const lines = [`rewrites: ${this.total.toFixed(1)} ms in total`, '   time ms    calls  applied  rewriter'];
    for (const [name, s] of rows) {
      lines.push(`${s.time.toFixed(2).padStart(10)} ${String(s.calls).padStart(8)} ${String(s.applied).padStart(8)}  ${name}`);
    }
    return lines.join('\n');
  }
}

export class RewriteContext {
  readonly profile = new RewriteProfile();

  constructor(
    /** Log every rewrite applied (node before and after). */
    readonly verbose = false,
    readonly logger: (line: string) => void = (line) => console.log(line),
  ) {}

  log(line: string): void {
    if (this.verbose) this.logger(line);
  }

  describe(vars: readonly Variable[]): string {
    return debugprint(vars)
      .split('\n')
      .map((l) => `    ${l}`)
      .join('\n');
  }
}
