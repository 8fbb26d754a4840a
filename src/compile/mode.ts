// Modes: which rewrites compile applies. FAST_RUN takes everything tagged 'fast_run' from the
// rewrite database, FAST_COMPILE only merge and canonicalize ('fast_compile'); a Mode can add
// and remove tags (`new weft.Mode({ including: ['fusion'], excluding: ['inplace'] })`) and log
// each rewrite it applies (`verbose: true`).
import type { FunctionGraph } from '../graph/fgraph.js';
import type { NdArray } from '../tensor/core/ndarray.js';
import { RewriteContext } from '../graph/rewriting/context.js';
import type { RewriteQuery } from '../graph/rewriting/db.js';
import { rewriteWith } from '../graph/rewriting/optdb.js';
import '../tensor/rewriting/index.js';

/** The modes whose rewrites another mode can start from. */
export type BaseModeName = 'FAST_RUN' | 'FAST_COMPILE';
/** Every mode known by name (DebugMode and NanGuardMode rewrite as FAST_RUN, then check each call). */
export type ModeName = BaseModeName | 'DebugMode' | 'NanGuardMode';

export interface ModeOptions {
  /** The mode whose rewrites this one starts from (default FAST_RUN). */
  readonly base?: BaseModeName;
  /** Tags (or rewrite names) to add to the selection. */
  readonly including?: readonly string[];
  /** Tags (or rewrite names) to remove from it. */
  readonly excluding?: readonly string[];
  /** Tags every selected rewrite must have. */
  readonly requiring?: readonly string[];
  /** Log every rewrite applied, with the graph before and after. */
  readonly verbose?: boolean;
  /** Where the verbose log goes (default console.log). */
  readonly logger?: (line: string) => void;
  readonly name?: string;
}

/** How calls run, when a mode takes that over (DebugMode, NanGuardMode). */
export interface ModeRuntime {
  run(values: readonly NdArray[], signal?: AbortSignal): Promise<NdArray[]>;
}

export interface RuntimeContext {
  /** The graph as compiled: rewritten, outputs protected. */
  readonly fgraph: FunctionGraph;
  /** A copy of the graph before any rewrite (same inputs and outputs, in order). */
  readonly original: FunctionGraph;
  /** The function's name, for messages. */
  readonly name: string;
}

export class Mode {
  readonly query: RewriteQuery;
  readonly name: string;
  readonly verbose: boolean;

  constructor(readonly options: ModeOptions = {}) {
    const base = options.base ?? 'FAST_RUN';
    this.query = {
      include: [base === 'FAST_COMPILE' ? 'fast_compile' : 'fast_run', ...(options.including ?? [])],
      exclude: [...(options.excluding ?? [])],
      require: [...(options.requiring ?? [])],
    };
    this.name = options.name ?? base;
    this.verbose = options.verbose ?? false;
  }

  /** This mode with more tags included. */
  including(...tags: string[]): Mode {
    return new Mode({ ...this.options, including: [...(this.options.including ?? []), ...tags] });
  }

  /** This mode with tags excluded. */
  excluding(...tags: string[]): Mode {
    return new Mode({ ...this.options, excluding: [...(this.options.excluding ?? []), ...tags] });
  }

  /**
   * Modes that check or watch every node supply their own runtime; the others leave it undefined
   * and calls run through plans on the pool.
   */
  makeRuntime?(context: RuntimeContext): ModeRuntime;

  /** Applies this mode's rewrites to `fg`; returns the context with the rewrite profile. */
  rewrite(fg: FunctionGraph): RewriteContext {
    return rewriteWith(fg, this.query, new RewriteContext(this.verbose, this.options.logger));
  }

  toString(): string {
    return `Mode(${this.name})`;
  }
}

export const FAST_RUN = new Mode({ base: 'FAST_RUN' });
export const FAST_COMPILE = new Mode({ base: 'FAST_COMPILE' });

/**
 * Modes named in compile options beyond FAST_RUN and FAST_COMPILE: DebugMode and NanGuardMode
 * register here from their own modules (which extend Mode, so this module cannot import them).
 */
const namedModes = new Map<string, () => Mode>();

/** Makes `mode: name` mean the mode `make` builds (once, on first use). */
export function registerModeName(name: ModeName, make: () => Mode): void {
  let made: Mode | undefined;
  namedModes.set(name, () => (made ??= make()));
}

/** The Mode for a compile option (a name or a Mode). */
export function resolveMode(mode: ModeName | Mode | undefined, where: string): Mode {
  if (mode === undefined || mode === 'FAST_RUN') return FAST_RUN;
  if (mode === 'FAST_COMPILE') return FAST_COMPILE;
  if (mode instanceof Mode) return mode;
  const named = typeof mode === 'string' ? namedModes.get(mode) : undefined;
  if (named) return named();
  throw new TypeError(`${where}: unknown mode ${JSON.stringify(mode)} (expected 'FAST_RUN', 'FAST_COMPILE', 'DebugMode', 'NanGuardMode' or a weft.Mode)`);
}
