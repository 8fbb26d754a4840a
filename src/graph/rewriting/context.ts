// RewriteContext: what rewriters report to while a graph is rewritten: a profile (time, calls
// and applications per rewriter) and an optional verbose log of each rewrite applied, so that
// "my rewrite is not used" and "a rewrite changed my results" can be answered.
import type { Variable } from '../variable.js';

export interface RewriterStats {
  /** Milliseconds spent in the rewriter (its transform or its whole run). */
  time: number;
  /** Times it was asked (nodes looked at, or runs). */
  calls: number;
  /** Times it changed the graph. */
  applied: number;
}

function bump(table: Map<string, RewriterStats>, name: string, ms: number, calls: number, applied: number): void {
  let s = table.get(name);
  if (!s) {
    s = { time: 0, calls: 0, applied: 0 };
    table.set(name, s);
  }
  s.time += ms;
  s.calls += calls;
  s.applied += applied;
}

function table(title: string, rows: Map<string, RewriterStats>): string[] {
  const sorted = [...rows].sort((a, b) => b[1].time - a[1].time);
  return [
    title,
    '   time ms    calls  applied  name',
    ...sorted.map(([name, s]) => `${s.time.toFixed(2).padStart(10)} ${String(s.calls).padStart(8)} ${String(s.applied).padStart(8)}  ${name}`),
  ];
}

export class RewriteProfile {
  /**
   * Every rewriter that does the work itself (node rewriters, merge, fusion...): its own time,
   * how often it was asked and how often it changed the graph. Rows do not overlap.
   */
  readonly byRewriter = new Map<string, RewriterStats>();
  /**
   * Rewriters that only run others (the databases of the pipeline, equilibrium and walking
   * rewriters): their time includes the time of the rewriters they ran.
   */
  readonly byStage = new Map<string, RewriterStats>();
  /** Total time of the whole rewrite pipeline, in milliseconds. */
  total = 0;

  /** One call of rewriter `name` that took `ms`; `applied` is whether (or how often) it changed the graph. */
  record(name: string, ms: number, applied: boolean | number): void {
    bump(this.byRewriter, name, ms, 1, typeof applied === 'number' ? applied : applied ? 1 : 0);
  }

  /** One run of a stage (a rewriter that runs others). */
  recordStage(name: string, ms: number, applied: number): void {
    bump(this.byStage, name, ms, 1, applied);
  }

  /** The tables, slowest first: stages, then rewriters. */
  toString(): string {
    return [
      `rewrites: ${this.total.toFixed(1)} ms in total`,
      ...table('stages (time includes the rewriters they ran):', this.byStage),
      ...table('rewriters:', this.byRewriter),
    ].join('\n');
  }
}

/** How deep the verbose log prints the graph around a rewrite. */
const DESCRIBE_DEPTH = 3;

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

  /**
   * `vars` as indented debugprint-style lines, `depth` levels deep (deeper inputs are shown as
   * `...`), so that logging a rewrite costs the same in a graph of any size.
   */
  describe(vars: readonly Variable[], depth = DESCRIBE_DEPTH): string {
    const lines: string[] = [];
    const walk = (v: Variable, prefix: string, childPrefix: string, level: number): void => {
      const node = v.owner;
      const head = node ? (node.outputs.length > 1 ? `${node.op}.${v.index}` : String(node.op)) : String(v);
      const named = node && v.name !== undefined ? ` '${v.name}'` : '';
      lines.push(`    ${prefix}${head}${named}`);
      if (!node) return;
      if (level + 1 >= depth) {
        if (node.inputs.length > 0) lines.push(`    ${childPrefix} |...`);
        return;
      }
      node.inputs.forEach((x, i) => {
        const last = i === node.inputs.length - 1;
        walk(x, `${childPrefix} |`, `${childPrefix}${last ? '  ' : ' |'}`, level + 1);
      });
    };
    for (const v of vars) walk(v, '', '', 0);
    return lines.join('\n');
  }
}
