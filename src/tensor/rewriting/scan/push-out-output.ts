// PushOutScanOutput (Theano's): a nit-sot output computed at the end of the step from values
// that have stacks outside (sequence rows, recurrent states, other stacked outputs) is computed
// after the loop on those stacks instead: `dot(h_t, W)` with W fixed becomes one product of the
// stacked states, element-wise work on stacked values one element-wise op. A value the step
// computes that such a product needs (a delta in a gradient loop) becomes a nit-sot of its own.
import type { Variable } from '../../../graph/variable.js';
import { nodeRewriter } from '../../../graph/rewriting/rewriter.js';
import type { TensorVariable } from '../../core/variable.js';
import { scanParts } from '../../inner/scan-parts.js';
import { ScanOp } from '../../inner/scan-op.js';
import { Dot } from '../../linalg/linalg.js';
import { dotOverSteps } from './stacked-dot.js';
import { liftOverSteps, StepStacks, type Outside } from './stacks.js';

/**
 * `v` outside the loop, built over the stacks: a product with one fixed operand (the other's
 * stack made a nit-sot when the step computes it), or element-wise work (liftOverSteps) on values
 * that are outside. Undefined when some input has no counterpart (a past state, a random draw).
 */
function outsideOf(v: Variable, stacks: StepStacks, memo: Map<Variable, Outside | undefined>): Outside | undefined {
  if (memo.has(v)) return memo.get(v);
  const known = stacks.outside(v);
  if (known) return known;
  const nd = v.owner;
  let result: Outside | undefined;
  if (!nd || Object.keys(nd.op.destroyMap ?? {}).length > 0) result = undefined;
  else if (nd.op instanceof Dot) {
    const fixed = nd.inputs.map((x) => stacks.outside(x)).findIndex((o) => o !== undefined && !o.stacked);
    const rowAt = 1 - fixed;
    const row = fixed < 0 ? undefined : nd.inputs[rowAt]!;
    const built = row && outsideOf(row, stacks, memo);
    const rows = row && (built?.stacked ? built.outer : stacks.stack(row, true));
    result = rows ? { outer: dotOverSteps(rows, stacks.outside(nd.inputs[fixed]!)!.outer, rowAt === 0), stacked: true } : undefined;
  } else {
    const ins = nd.inputs.map((x) => outsideOf(x, stacks, memo));
    result = ins.every((i) => i !== undefined) ? liftOverSteps(nd, ins)?.[nd.outputs.indexOf(v)] : undefined;
  }
  memo.set(v, result);
  return result;
}

export const pushOutScanOutput = nodeRewriter('PushOutScanOutput', [ScanOp], (node, fg) => {
  const op = node.op as ScanOp;
  // With until the number of rows is known once the loop ran; kept rows are not every row.
  if (op.spec.until || op.spec.keep) return false;
  const parts = scanParts(node);
  for (const z of parts.nitsots) {
    if (!z.stacked.some((v) => fg.clients(v).length > 0)) continue;
    // The output's own stack is what is being replaced: it does not count as known.
    const stacks = new StepStacks(op, parts, new Set([z.step]));
    const whole = outsideOf(z.step, stacks, new Map());
    if (!whole?.stacked) continue;
    const others = { ...parts, nitsots: parts.nitsots.filter((p) => p !== z) };
    const replaced = stacks.rebuild(others, new Map(z.stacked.map((old): [Variable, TensorVariable] => [old, whole.outer])));
    if (replaced) return replaced;
  }
  return false;
});
