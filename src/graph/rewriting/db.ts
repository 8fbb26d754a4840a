// The rewrite database (Theano's optdb machinery): rewriters registered by name with tags (and
// positions in a sequence), selected by a query of tags to include, exclude and require. A
// SequenceDB runs its selection in position order, an EquilibriumDB runs it to a fixed point,
// a LocalGroupDB is a named group of node rewriters used inside either.
import { EquilibriumRewriter, type EquilibriumOptions } from './equilibrium.js';
import type { RewriteContext } from './context.js';
import { applyGraphRewriter, type GraphRewriter, type NodeRewriter, type Rewriter } from './rewriter.js';
import { walkOnce } from './walk.js';
import type { FunctionGraph } from '../fgraph.js';

export interface RewriteQuery {
  /** Select entries with at least one of these tags (an entry's name counts as a tag). */
  readonly include: readonly string[];
  /** Drop entries with any of these tags. */
  readonly exclude?: readonly string[];
  /** Keep only entries with all of these tags. */
  readonly require?: readonly string[];
}

export interface RegisterOptions {
  readonly tags?: readonly string[];
  /** Order within a SequenceDB (lower runs first). */
  readonly position?: number;
}

interface Entry {
  readonly name: string;
  readonly item: Rewriter | RewriteDatabase;
  readonly tags: ReadonlySet<string>;
  readonly position: number;
}

export abstract class RewriteDatabase {
  readonly #entries = new Map<string, Entry>();

  constructor(readonly name: string) {}

  register(name: string, item: Rewriter | RewriteDatabase, options: RegisterOptions = {}): void {
    if (this.#entries.has(name)) throw new Error(`${this.name}: a rewrite named '${name}' is already registered`);
    this.#entries.set(name, { name, item, tags: new Set(options.tags ?? []), position: options.position ?? 0 });
  }

  remove(name: string): void {
    if (!this.#entries.delete(name)) throw new Error(`${this.name}: no rewrite named '${name}' is registered`);
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** The names registered here, with their tags. */
  entries(): Array<{ name: string; tags: readonly string[]; position: number }> {
    return [...this.#entries.values()].map((e) => ({ name: e.name, tags: [...e.tags], position: e.position }));
  }

  protected selected(q: RewriteQuery): Entry[] {
    const out: Entry[] = [];
    for (const e of this.#entries.values()) {
      const has = (t: string): boolean => t === e.name || e.tags.has(t);
      if (!q.include.some(has)) continue;
      if (q.exclude?.some(has)) continue;
      if (q.require && !q.require.every(has)) continue;
      out.push(e);
    }
    return out;
  }

  /** The rewriters this query selects, ready to run. */
  abstract query(q: RewriteQuery): Rewriter[];
}

function expand(item: Rewriter | RewriteDatabase, q: RewriteQuery): Rewriter[] {
  return item instanceof RewriteDatabase ? item.query(q) : [item];
}

/** Runs its selection in position order; node rewriters are applied by one in2out walk each. */
export class SequenceDB extends RewriteDatabase {
  query(q: RewriteQuery): Rewriter[] {
    const steps = this.selected(q)
      .sort((a, b) => a.position - b.position)
      .flatMap((e) => expand(e.item, q));
    const run: GraphRewriter = {
      kind: 'graph',
      name: this.name,
      composite: true,
      apply: (fg: FunctionGraph, ctx: RewriteContext) => {
        let total = 0;
        for (const r of steps) total += r.kind === 'graph' ? applyGraphRewriter(fg, r, ctx) : walkOnce(fg, [r], 'in2out', ctx);
        return total;
      },
    };
    return [run];
  }
}

/** Runs its selection until the graph stops changing. */
export class EquilibriumDB extends RewriteDatabase {
  constructor(
    name: string,
    readonly options: EquilibriumOptions = {},
  ) {
    super(name);
  }

  query(q: RewriteQuery): Rewriter[] {
    const rewriters = this.selected(q).flatMap((e) => expand(e.item, q));
    return [new EquilibriumRewriter(this.name, rewriters, this.options)];
  }
}

/** A named group of node rewriters (each registered with its own tags). */
export class LocalGroupDB extends RewriteDatabase {
  query(q: RewriteQuery): NodeRewriter[] {
    return this.selected(q).flatMap((e) => expand(e.item, q)).filter((r): r is NodeRewriter => r.kind === 'node');
  }
}
