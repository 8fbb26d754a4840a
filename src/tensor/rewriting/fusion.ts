// Element-wise fusion: a tree of element-wise nodes, each used only by the next and computing
// on the same broadcast shape, becomes one Composite node whose loop reads every input once and
// writes one output. Nodes already fused are flattened into the new fusion.
import type { Apply } from '../../graph/apply.js';
import type { FunctionGraph } from '../../graph/fgraph.js';
import { InconsistencyError } from '../../graph/feature.js';
import { fusionDB } from '../../graph/rewriting/optdb.js';
import type { GraphRewriter } from '../../graph/rewriting/rewriter.js';
import type { Variable } from '../../graph/variable.js';
import { Composite, CompositeScalar, type CompositeStep } from '../composite.js';
import { Elemwise } from '../elemwise.js';
import type { TensorType } from '../type.js';
import type { TensorVariable } from '../variable.js';

/** Most inputs one fused loop takes (each is a typed-array stream in the kernel). */
const MAX_INPUTS = 24;

function fusible(node: Apply | null): node is Apply<Elemwise> {
  return node !== null && node.op instanceof Elemwise && Object.keys(node.op.inplacePattern).length === 0;
}

function sameBroadcast(a: Variable, b: Variable): boolean {
  const s = (a.type as TensorType).shape;
  const t = (b.type as TensorType).shape;
  return s.length === t.length && s.every((d, i) => (d === 1) === (t[i] === 1));
}

/** Fuses the element-wise tree that ends at `root`; returns whether the graph changed. */
function fuseAt(fg: FunctionGraph, root: Apply<Elemwise>): boolean {
  const out = root.outputs[0]!;
  const inputs: Variable[] = [];
  const steps: CompositeStep[] = [];
  let absorbed = 0;

  // Returns the value index of `v` in the composite being built.
  const visit = (v: Variable, isRoot: boolean): number => {
    const node = v.owner;
    const inside =
      isRoot ||
      (fusible(node) && fg.clients(v).length === 1 && !fg.outputs.includes(v) && sameBroadcast(v, out) && inputs.length < MAX_INPUTS);
    if (!inside) {
      let k = inputs.indexOf(v);
      if (k < 0) {
        inputs.push(v);
        k = inputs.length - 1;
      }
      return -1 - k;
    }
    if (!isRoot) absorbed += 1;
    const n = node as Apply<Elemwise>;
    const argRefs = n.inputs.map((x) => visit(x, false));
    const inner = n.op instanceof Composite ? n.op.composite : undefined;
    if (inner) {
      // Inline the steps of an existing fusion, renumbering its values.
      const map: number[] = argRefs.slice();
      for (const s of inner.steps) {
        steps.push({ op: s.op, args: s.args.map((a) => map[a]!), dtype: s.dtype });
        map.push(steps.length - 1);
      }
      return steps.length - 1;
    }
    steps.push({ op: n.op.scalarOp, args: argRefs, dtype: (v.type as TensorType).dtype });
    return steps.length - 1;
  };
  visit(out, true);
  if (absorbed === 0) return false;

  // Refs are -1-k for input k and s >= 0 for step s; number them as inputs first, then steps.
  const nin = inputs.length;
  const resolve = (ref: number): number => (ref < 0 ? -1 - ref : nin + ref);
  const fixed = steps.map((s) => ({ ...s, args: s.args.map(resolve) }));
  const scalar = new CompositeScalar(inputs.map((v) => (v.type as TensorType).dtype), fixed);
  const fused = new Composite(scalar).call(...(inputs as TensorVariable[]));
  try {
    fg.replace(out, fused, { reason: 'elemwise_fusion' });
  } catch (e) {
    if (e instanceof InconsistencyError) return false;
    throw e;
  }
  return true;
}

export const elemwiseFusion: GraphRewriter = {
  kind: 'graph',
  name: 'elemwise_fusion',
  apply: (fg, ctx) => {
    let fused = 0;
    for (const node of fg.toposort().reverse()) {
      if (!fg.applyNodes.has(node) || !fusible(node)) continue;
      const before = ctx.verbose ? ctx.describe([node.outputs[0]!]) : '';
      if (fuseAt(fg, node)) {
        fused += 1;
        ctx.profile.record('elemwise_fusion', 0, true);
        if (ctx.verbose) ctx.log(`rewrite elemwise_fusion:\n${before}`);
      }
    }
    return fused;
  },
};

fusionDB.register('elemwise_fusion', elemwiseFusion, { tags: ['fast_run', 'fusion'] });
