// PushOutDot1 (Theano's): a sum over the steps of products of two per-step rows leaves the loop as
// one matrix product of the two stacks (stacked-dot.ts): an accumulator `acc_t = acc_{t-1} +
// dot(a_t, b_t)` read only at its last state becomes `init + dot(A', B')`, and a nit-sot of such
// products read only through its sum over the steps (how scanLop writes a weight's gradient:
// dot(x_t.T, delta_t) per step, summed after the loop) becomes `dot(A', B')`.
import type { Client } from '../../../graph/feature.js';
import type { FunctionGraph } from '../../../graph/fgraph.js';
import { nodeRewriter } from '../../../graph/rewriting/rewriter.js';
import type { Variable } from '../../../graph/variable.js';
import type { TensorVariable } from '../../core/variable.js';
import { CAReduce } from '../../elemwise/reduce.js';
import { add } from '../../elemwise/math.js';
import { scanParts, type RecurrentPart, type ScanParts } from '../../inner/scan-parts.js';
import { isSitSot, ScanOp } from '../../inner/scan-op.js';
import { Dot } from '../../linalg/linalg.js';
import * as S from '../../scalar/catalog.js';
import { Subtensor } from '../../shape/subtensor.js';
import { asTypeOf } from '../like.js';
import { ownerIs } from '../match.js';
import { lastRowsRead } from './save-mem.js';
import { summedDotOverSteps } from './stacked-dot.js';
import { StepStacks } from './stacks.js';

type TV = TensorVariable;

/**
 * The two factors of `v` when it is a matrix product of its rows: a Dot, or the outer product the
 * gradient of a vector product writes (a column [p, 1] times a row [1, r], broadcast).
 */
function factors(v: Variable): [TV, TV] | undefined {
  const nd = v.owner;
  if (nd?.op instanceof Dot) return nd.inputs as [TV, TV];
  const m = ownerIs(v, S.mul);
  if (!m || m.inputs.length !== 2) return undefined;
  const [u, w] = m.inputs as [TV, TV];
  return u.ndim === 2 && w.ndim === 2 && u.type.shape[1] === 1 && w.type.shape[0] === 1 ? [u, w] : undefined;
}

/** Is `v` read by the step only as its output `index` (nothing else in the step reads it)? */
const onlyOutput = (op: ScanOp, v: Variable, index: number): boolean => {
  const cs = op.inner.clients(v);
  return cs.length === 1 && cs[0]!.kind === 'output' && cs[0]!.index === index;
};

/** The sum over the steps of the products of `v`'s factors, built over their stacks (each made a nit-sot when the step computes it). */
function summed(v: Variable, stacks: StepStacks): TV | undefined {
  const fs = factors(v);
  const as = fs && stacks.stack(fs[0], true);
  const bs = fs && as && stacks.stack(fs[1], true);
  return as && bs ? summedDotOverSteps(as, bs) : undefined;
}

/** What a reader (an apply node: the checks below make sure) computes from a stacked output. */
const readerOutput = (c: Client): TV => (c as Client & { kind: 'apply' }).node.outputs[0] as TV;

/** `x[-1]` (an integer index, the last row): the reader an accumulator read at its last state has. */
const readsLast = (c: Client): boolean => lastRowsRead(c) === 1 && c.kind === 'apply' && (c.node.op as Subtensor).idxList.length === 1 && (c.node.op as Subtensor).idxList[0] === 'int';

/** An accumulator acc_t = acc_{t-1} + product, read only at its last state (and as a final state): after the loop. */
function accumulator(op: ScanOp, parts: ScanParts, r: RecurrentPart, k: number, fg: FunctionGraph): Map<Variable, Variable> | undefined {
  if (!isSitSot(r.taps)) return undefined;
  const prev = r.inner[0]!;
  const sum = ownerIs(r.step, S.add);
  if (!sum || sum.inputs.length !== 2 || !onlyOutput(op, r.step, k)) return undefined;
  const term = sum.inputs[0] === prev ? sum.inputs[1]! : sum.inputs[1] === prev ? sum.inputs[0]! : undefined;
  // The past state feeds the sum only: the rest of the step does not need the accumulator.
  if (!term || term === prev || op.inner.clients(prev).length !== 1 || op.inner.clients(term).length !== 1) return undefined;
  // Its stacked rows would have to be built too (init plus running sums): read only at the end.
  const readers = r.stacked.flatMap((v) => fg.clients(v));
  if (!readers.every(readsLast) || readers.length + r.finals.flatMap((v) => fg.clients(v)).length === 0) return undefined;
  const stacks = new StepStacks(op, parts, new Set([r.step]));
  const products = summed(term, stacks);
  if (!products) return undefined;
  const total = add(r.init, products);
  const outer = new Map<Variable, TV>();
  for (const v of [...readers.map(readerOutput), ...r.finals]) {
    const like = asTypeOf(total, v, fg);
    if (!like) return undefined;
    outer.set(v, like);
  }
  return stacks.rebuild({ ...parts, recs: parts.recs.filter((p) => p !== r) }, outer);
}

/** Is this reader the sum over the steps (axis 0) of a stacked output? */
const sumsSteps = (c: Client): boolean => c.kind === 'apply' && c.node.op instanceof CAReduce && c.node.op.kind === 'sum' && c.node.op.axis.length === 1 && c.node.op.axis[0] === 0;

export const pushOutDot1 = nodeRewriter('PushOutDot1', [ScanOp], (node, fg) => {
  const op = node.op as ScanOp;
  if (op.spec.until || op.spec.keep) return false;
  const parts = scanParts(node);
  for (const [k, r] of parts.recs.entries()) {
    const replaced = accumulator(op, parts, r, k, fg);
    if (replaced) return replaced;
  }
  for (const [j, z] of parts.nitsots.entries()) {
    const readers = z.stacked.flatMap((v) => fg.clients(v));
    if (readers.length === 0 || !readers.every(sumsSteps) || !onlyOutput(op, z.step, parts.recs.length + j)) continue;
    const stacks = new StepStacks(op, parts, new Set([z.step]));
    const products = summed(z.step, stacks);
    if (!products) continue;
    const outer = new Map<Variable, TV>();
    for (const c of readers) {
      const v = readerOutput(c);
      const like = asTypeOf(products, v, fg);
      if (!like) break;
      outer.set(v, like);
    }
    if (outer.size !== readers.length) continue;
    const replaced = stacks.rebuild({ ...parts, nitsots: parts.nitsots.filter((p) => p !== z) }, outer);
    if (replaced) return replaced;
  }
  return false;
});
