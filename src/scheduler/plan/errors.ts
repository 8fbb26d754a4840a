// The planner's refusals: a PlanError when no plan can hold the graph (the function then runs on
// the reference executor), and a StageBoundary where a call must be split into stages.
import type { Apply } from '../../graph/apply.js';

export class PlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanError';
  }
}

/** The planner stopped at `node`: its shapes depend on values computed before it, or on itself. */
export class StageBoundary extends PlanError {
  constructor(
    readonly node: Apply,
    /** 'values': plannable once the values it reads are known; 'unknown': only running it tells. */
    readonly kind: 'values' | 'unknown',
    reason: string,
  ) {
    super(reason);
    this.name = 'StageBoundary';
  }
}
