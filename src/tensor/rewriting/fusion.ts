// Element-wise fusion: a tree of element-wise nodes, each used only by the next and computing
// on the same broadcast shape, becomes one Composite node whose loop reads every input once and
// writes one output (up to 24 inputs and 256 steps a loop). Nodes already fused are flattened
// into the new fusion.
import type { Apply } from '../../graph/apply.js';
import type { FunctionGraph } from '../../graph/fgraph.js';
import { InconsistencyError } from '../../graph/feature.js';
import { fusionDB } from '../../graph/rewriting/optdb.js';
import type { GraphRewriter } from '../../graph/rewriting/rewriter.js';
import type { Variable } from '../../graph/variable.js';
import { Composite, CompositeScalar, type CompositeStep } from '../elemwise/composite.js';
import { Elemwise } from '../elemwise/elemwise.js';
import type { TensorType } from '../core/type.js';
import type { TensorVariable } from '../core/variable.js';

/** Most inputs one fused loop takes (each is a typed-array stream in the kernel). */
const MAX_INPUTS = 24;

/**
 * Most steps in one fused loop: its code is one nested expression, which JS engines parse
 * recursively, and a chain of thousands of nodes becomes a sequence of fusions instead.
 */
const MAX_STEPS = 256;

function fusible(node: Apply | null): node is Apply<Elemwise> {
  return node !== null && node.op instanceof Elemwise && Object.keys(node.op.inplacePattern).length === 0;
}

function sameBroadcast(a: Variable, b: Variable): boolean {
  const s = (a.type as TensorType).shape;
  const t = (b.type as TensorType).shape;
  return s.length === t.length && s.every((d, i) => (d === 1) === (t[i] === 1));
}

function stepsOf(node: Apply<Elemwise>): number {
  return node.op instanceof Composite ? node.op.composite.steps.length : 1;
}

/**
 * The nodes of the element-wise tree that ends at `root` (root included), grown depth first: a
 * node is absorbed when it is element-wise, used only by the node that reads it, not a graph
 * output, of the root's broadcast pattern, and when the fusion then keeps at most MAX_INPUTS
 * distinct inputs and MAX_STEPS steps.
 */
function treeAt(fg: FunctionGraph, root: Apply<Elemwise>): Set<Apply> {
  const out = root.outputs[0]!;
  const absorbed = new Set<Apply>([root]);
  // The distinct variables the tree reads from outside: the fusion's inputs.
  const external = new Set<Variable>(root.inputs);
  let planned = stepsOf(root);
  const todo: Variable[] = [...root.inputs].reverse();
  while (todo.length > 0) {
    const v = todo.pop()!;
    const node = v.owner;
    if (!external.has(v) || !fusible(node) || fg.clients(v).length !== 1 || fg.outputs.includes(v) || !sameBroadcast(v, out)) continue;
    const fresh = new Set(node.inputs.filter((x) => !external.has(x)));
    if (external.size - 1 + fresh.size > MAX_INPUTS || planned + stepsOf(node) > MAX_STEPS) continue;
    external.delete(v);
    for (const x of fresh) external.add(x);
    absorbed.add(node);
    planned += stepsOf(node);
    for (let k = node.inputs.length - 1; k >= 0; k--) todo.push(node.inputs[k]!);
  }
  return absorbed;
}

/** Fuses the element-wise tree that ends at `root`; returns the fused variable, or undefined. */
function fuseAt(fg: FunctionGraph, root: Apply<Elemwise>): Variable | undefined {
  const tree = treeAt(fg, root);
  if (tree.size === 1) return undefined;
  const inputs: Variable[] = [];
  const steps: CompositeStep[] = [];

  // The value index of `v` in the composite being built: -1-k for input k, s for step s. The
  // recursion is as deep as the tree, at most MAX_STEPS.
  const visit = (v: Variable): number => {
    const n = v.owner;
    if (!n || !tree.has(n)) {
      let k = inputs.indexOf(v);
      if (k < 0) {
        inputs.push(v);
        k = inputs.length - 1;
      }
      return -1 - k;
    }
    const node = n as Apply<Elemwise>;
    const argRefs = node.inputs.map(visit);
    if (node.op instanceof Composite) {
      // Inline the steps of an earlier fusion, renumbering its values.
      const map: number[] = argRefs.slice();
      for (const s of node.op.composite.steps) {
        steps.push({ op: s.op, args: s.args.map((a) => map[a]!), dtype: s.dtype });
        map.push(steps.length - 1);
      }
      return steps.length - 1;
    }
    steps.push({ op: node.op.scalarOp, args: argRefs, dtype: (v.type as TensorType).dtype });
    return steps.length - 1;
  };
  const out = root.outputs[0]!;
  visit(out);

  // Number the values as the composite does: inputs first, then steps.
  const nin = inputs.length;
  const resolve = (ref: number): number => (ref < 0 ? -1 - ref : nin + ref);
  const fixed = steps.map((s) => ({ ...s, args: s.args.map(resolve) }));
  const scalar = new CompositeScalar(inputs.map((v) => (v.type as TensorType).dtype), fixed);
  const fused = new Composite(scalar).call(...(inputs as TensorVariable[]));
  try {
    fg.replace(out, fused, { reason: 'elemwise_fusion' });
  } catch (e) {
    if (e instanceof InconsistencyError) return undefined;
    throw e;
  }
  return fused;
}

export const elemwiseFusion: GraphRewriter = {
  kind: 'graph',
  name: 'elemwise_fusion',
  apply: (fg, ctx) => {
    let fused = 0;
    // Outputs first: each fusion takes the largest tree below a node not yet absorbed.
    for (const node of fg.toposort().reverse()) {
      if (!fg.applyNodes.has(node) || !fusible(node)) continue;
      const before = ctx.verbose ? ctx.describe([node.outputs[0]!]) : '';
      const result = fuseAt(fg, node);
      if (result) {
        fused += 1;
        if (ctx.verbose) ctx.log(`rewrite elemwise_fusion:\n${before}\n  ->\n${ctx.describe([result])}`);
      }
    }
    return fused;
  },
};

fusionDB.register('elemwise_fusion', elemwiseFusion, { tags: ['fast_run', 'fusion'] });
