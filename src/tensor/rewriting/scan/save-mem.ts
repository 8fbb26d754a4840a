// ScanSaveMem (Theano's): a stacked output that is read only through its last rows (`ys[-1]`,
// `ys[-3]`, `ys[-4:]`) keeps only those rows: the loop writes a ring of min(nSteps, k) rows, so
// the memory of a forward-only loop does not grow with its number of steps. A recurrent output
// keeps at least the past states its taps read. The readers are rebuilt over the shorter output.
import type { Apply } from '../../../graph/apply.js';
import type { Client } from '../../../graph/feature.js';
import type { FunctionGraph } from '../../../graph/fgraph.js';
import { nodeRewriter } from '../../../graph/rewriting/rewriter.js';
import type { Variable } from '../../../graph/variable.js';
import { isSliceSpec } from '../../../kernels/subtensor.js';
import type { TensorVariable } from '../../core/variable.js';
import { rebuildScan, scanParts, type NitsotPart, type RecurrentPart } from '../../inner/scan-parts.js';
import { ScanOp, stateRows } from '../../inner/scan-op.js';
import { constantScalar } from '../../shape/shape.js';
import { Subtensor } from '../../shape/subtensor.js';

/**
 * How many last rows a reader of a stacked output needs: `x[-k]` and `x[-k:]` need k; any other
 * reader (a positive index, a function output, another op) needs every row (undefined).
 */
export function lastRowsRead(client: Client): number | undefined {
  if (client.kind !== 'apply' || client.index !== 0 || !(client.node.op instanceof Subtensor)) return undefined;
  const node = client.node;
  const first = (node.op as Subtensor).idxList[0];
  const value = (i: number): number | undefined => constantScalar(node.inputs[i]!);
  if (first === 'int') {
    const i = value(1);
    return i !== undefined && Number.isInteger(i) && i < 0 ? -i : undefined;
  }
  if (first === undefined || !isSliceSpec(first) || !first.start || first.stop) return undefined;
  const start = value(1);
  const step = first.step ? value(2) : 1;
  return start !== undefined && Number.isInteger(start) && start < 0 && step === 1 ? -start : undefined;
}

/** The rows the readers of `stacked` need (undefined: all of them, or no reader to judge by). */
function rowsNeeded(fg: FunctionGraph, stacked: readonly TensorVariable[]): number | undefined {
  const clients = stacked.flatMap((v) => fg.clients(v));
  if (clients.length === 0) return undefined;
  let most = 0;
  for (const c of clients) {
    const k = lastRowsRead(c);
    if (k === undefined) return undefined;
    most = Math.max(most, k);
  }
  return most;
}

/** The part with the rows it keeps now, when that is fewer than before (and than a static nSteps). */
function shrunk<P extends RecurrentPart | NitsotPart>(part: P, needed: number | undefined, least: number, steps: number | undefined): P | undefined {
  if (needed === undefined) return undefined;
  const keep = Math.max(needed, least);
  if ((part.keep !== null && keep >= part.keep) || (steps !== undefined && keep >= steps)) return undefined;
  return { ...part, keep };
}

export const scanSaveMem = nodeRewriter('ScanSaveMem', [ScanOp], (node: Apply, fg) => {
  const op = node.op as ScanOp;
  if (op.spec.until) return false;
  const parts = scanParts(node);
  const steps = constantScalar(parts.nSteps);
  const recs = parts.recs.map((r) => shrunk(r, rowsNeeded(fg, r.stacked), stateRows(r.taps), steps));
  const nitsots = parts.nitsots.map((z) => shrunk(z, rowsNeeded(fg, z.stacked), 1, steps));
  if (![...recs, ...nitsots].some(Boolean)) return false;
  // A shorter output has another type: its readers are rebuilt over it, it is not replaced.
  const shorter = [...recs, ...nitsots].flatMap((p) => (p ? p.stacked : []));
  const rebuilt = rebuildScan({
    ...parts,
    recs: parts.recs.map((r, k) => recs[k] ?? r),
    nitsots: parts.nitsots.map((z, j) => nitsots[j] ?? z),
  });
  const replacements = new Map<Variable, Variable>();
  for (const [old, now] of rebuilt) {
    if (!shorter.includes(old as TensorVariable)) {
      replacements.set(old, now);
      continue;
    }
    for (const c of fg.clients(old)) {
      if (c.kind !== 'apply') return false;
      const reader = c.node;
      const again = reader.op.makeNode(now, ...reader.inputs.slice(1)).outputs[0]!;
      const before = reader.outputs[0]!;
      if (!(before.type.equals(again.type) || before.type.isSupertypeOf(again.type))) return false;
      replacements.set(before, again);
    }
  }
  return replacements;
});
