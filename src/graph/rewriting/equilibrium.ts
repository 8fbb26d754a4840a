// The equilibrium rewriter: applies its graph rewriters and walks its node rewriters over the
// graph again and again until nothing changes. A guard stops rewrites that undo each other: no
// rewriter may apply more than maxUseRatio times the graph's initial size.
import type { FunctionGraph } from '../fgraph.js';
import type { RewriteContext } from './context.js';
import { applyGraphRewriter, type GraphRewriter, type NodeRewriter, type Rewriter } from './rewriter.js';
import { walkOnce } from './walk.js';

/** How many times its first size a graph's rewrite budget may grow with it (see apply). */
const GROWTH = 32;

export class RewriteCycleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RewriteCycleError';
  }
}

export interface EquilibriumOptions {
  /** How many applications per node of the initial graph one rewriter may make (default 8). */
  readonly maxUseRatio?: number;
}

export class EquilibriumRewriter implements GraphRewriter {
  readonly kind = 'graph';
  readonly composite = true;
  readonly #graphRewriters: readonly GraphRewriter[];
  readonly #nodeRewriters: readonly NodeRewriter[];
  readonly maxUseRatio: number;

  constructor(
    readonly name: string,
    rewriters: readonly Rewriter[],
    options: EquilibriumOptions = {},
  ) {
    this.#graphRewriters = rewriters.filter((r): r is GraphRewriter => r.kind === 'graph');
    this.#nodeRewriters = rewriters.filter((r): r is NodeRewriter => r.kind === 'node');
    this.maxUseRatio = options.maxUseRatio ?? 8;
  }

  get rewriters(): readonly Rewriter[] {
    return [...this.#graphRewriters, ...this.#nodeRewriters];
  }

  apply(fg: FunctionGraph, ctx: RewriteContext): number {
    // The budget follows the largest graph seen, up to GROWTH times the first: a rewrite that
    // expands one node into many (a convolution into im2col, a product and shape arithmetic)
    // gives the others more to do. Rewrites that undo each other do not grow the graph, and
    // still exhaust it; one that grows the graph without end exhausts the capped budget.
    const first = Math.max(fg.applyNodes.size, 1);
    let peak = first;
    const uses = new Map<string, number>();
    // The rewrites that applied in this pass and the one before: those of a cycle among them.
    let lastPass = new Set<string>();
    let thisPass = new Set<string>();
    let total = 0;
    const count = (name: string, n: number): void => {
      if (n === 0) return;
      thisPass.add(name);
      const used = (uses.get(name) ?? 0) + n;
      uses.set(name, used);
      peak = Math.min(Math.max(peak, fg.applyNodes.size), GROWTH * first);
      const limit = this.maxUseRatio * peak;
      if (used > limit) {
        const recent = [...new Set([...lastPass, ...thisPass])].join(', ');
        throw new RewriteCycleError(
          `${this.name}: rewrite ${name} was applied ${used} times, more than ${limit} ` +
            `(${this.maxUseRatio} per node of the graph); the rewrites applied in the last passes (${recent}) probably undo each other`,
        );
      }
    };
    for (;;) {
      let changed = 0;
      for (const g of this.#graphRewriters) {
        const n = applyGraphRewriter(fg, g, ctx);
        count(g.name, n);
        changed += n;
      }
      if (this.#nodeRewriters.length > 0) {
        changed += walkOnce(fg, this.#nodeRewriters, 'in2out', ctx, (r) => count(r.name, 1));
      }
      total += changed;
      if (changed === 0) return total;
      lastPass = thisPass;
      thisPass = new Set();
    }
  }
}
