// The inplace rewrites (Theano's inplace optimizers), late in the pipeline: after fusion, a node
// writes its output into one of its inputs when that value is needed by nothing else afterwards,
// so the output needs no memory of its own. Elemwise and Composite write into an input of their
// output's dtype and shape, IncSubtensor into x, an index-array scatter into the zeros of an
// Alloc, Gemm into z; an Alloc that the next node writes entirely becomes an AllocEmpty first.
// The destroy handler judges legality (a vetoed change is undone and the next candidate tried);
// these rules add that an overwrite must cost no parallelism: every other reader of the value
// already runs before the node.
import { Apply } from '../../graph/apply.js';
import { DestroyHandler } from '../../graph/destroy-handler.js';
import { InconsistencyError } from '../../graph/feature.js';
import type { FunctionGraph } from '../../graph/fgraph.js';
import { inplaceDB } from '../../graph/rewriting/optdb.js';
import type { RewriteContext } from '../../graph/rewriting/context.js';
import { nodeRewriter, type GraphRewriter } from '../../graph/rewriting/rewriter.js';
import { isConstant, type Variable } from '../../graph/variable.js';
import { Alloc, allocEmpty } from '../shape/alloc.js';
import { Elemwise } from '../elemwise/elemwise.js';
import { Gemm } from '../linalg/gemm.js';
import { Shape, ShapeI } from '../shape/shape.js';
import { AdvancedIncSubtensor } from '../shape/advanced-subtensor.js';
import { IncSubtensor } from '../shape/subtensor.js';
import { isHostValueType, TensorType } from '../core/type.js';
import type { TensorVariable } from '../core/variable.js';
import { scalarConstantValue } from './match.js';

/** Values the planner may compute on the calling thread live in every region from its creation: never overwritten. */
const mayBeHostValue = isHostValueType;

/** The graph's destroy handler (attached when missing: it is what makes an overwrite legal). */
function handlerOf(fg: FunctionGraph): DestroyHandler {
  const found = fg.features.find((f): f is DestroyHandler => f instanceof DestroyHandler);
  if (found) return found;
  const handler = new DestroyHandler();
  fg.attachFeature(handler);
  return handler;
}

/**
 * Which nodes run before which, by data: positions in a topological order (a node made by a
 * rewrite takes the place of the node it replaces, which keeps the order valid), and a walk up
 * the inputs that never goes below the position it looks for.
 */
class Ancestry {
  readonly #position = new Map<Apply, number>();

  constructor(order: readonly Apply[]) {
    order.forEach((n, i) => this.#position.set(n, i));
  }

  replaced(old: Apply, made: Apply): void {
    const p = this.#position.get(old);
    if (p !== undefined) this.#position.set(made, p);
  }

  /** Does `node` depend on `a`'s outputs? */
  isAncestor(a: Apply, node: Apply): boolean {
    const floor = this.#position.get(a) ?? -1;
    const top = this.#position.get(node);
    if (top !== undefined && floor >= top) return false;
    const seen = new Set<Apply>([node]);
    const stack = [node];
    while (stack.length > 0) {
      const n = stack.pop()!;
      for (const v of n.inputs) {
        const owner = v.owner;
        if (owner === null || seen.has(owner)) continue;
        if (owner === a) return true;
        seen.add(owner);
        if ((this.#position.get(owner) ?? Infinity) > floor) stack.push(owner);
      }
    }
    return false;
  }
}

/** Readers that read no element (shapes): they run while planning and constrain no overwrite. */
function readsElements(node: Apply): boolean {
  return !(node.op instanceof Shape || node.op instanceof ShapeI);
}

/**
 * May `node` write over its input `i`? Not over a constant, an input the function may not
 * change, a host value, a value the graph returns, a value something else overwrites (or that
 * this pass gives to another node: `claimed`), or one the node also reads through another input;
 * and only when every other reader of the value (or of a view of it) already runs before `node`,
 * so that the overwrite adds no ordering. These are the destroy handler's rules made stricter:
 * overwrites that pass them are legal together, and one validation checks them all.
 */
function mayOverwrite(fg: FunctionGraph, handler: DestroyHandler, ancestry: Ancestry, node: Apply, i: number, claimed: ReadonlySet<Variable>): boolean {
  const v = node.inputs[i]!;
  const root = handler.rootOf(fg, v);
  if (isConstant(root) || mayBeHostValue(v) || claimed.has(root)) return false;
  if (fg.isInput(root) && !handler.destroyable.has(root)) return false;
  if (handler.destroyerOf(fg, v) !== undefined || handler.isReturned(fg, v)) return false;
  if (node.inputs.some((w, j) => j !== i && handler.rootOf(fg, w) === root)) return false;
  return handler.readersOf(fg, v).every((r) => r === node || !readsElements(r) || ancestry.isAncestor(r, node));
}

/** What an inplace rule says about the nodes it handles. */
interface InplaceRule {
  readonly name: string;
  /** Is this a node the rule can make inplace? */
  applies(node: Apply): boolean;
  /** The inputs it could write into, best first. */
  candidates(node: Apply): readonly number[];
  /** The node writing into input `i`, on these inputs, with outputs of the same types. */
  make(node: Apply, i: number, inputs: readonly Variable[]): Apply;
}

/**
 * A graph rewriter applying `rule` to every node it can. It decides on the graph as it stands
 * (inputs first), then makes every change as one replacement, validated once; should the destroy
 * handler refuse the batch, it goes node by node, skipping what is refused.
 */
function inplaceRewriter(rule: InplaceRule): GraphRewriter {
  return {
    kind: 'graph',
    name: rule.name,
    apply: (fg, ctx) => {
      const handler = handlerOf(fg);
      const order = fg.toposort();
      const ancestry = new Ancestry(order);
      const claimed = new Set<Variable>();
      const replacement = new Map<Variable, Variable>();
      const changes: Array<{ node: Apply; made: Apply; input: number }> = [];
      for (const node of order) {
        if (!rule.applies(node)) continue;
        const i = rule.candidates(node).find((c) => mayOverwrite(fg, handler, ancestry, node, c, claimed));
        if (i === undefined) continue;
        claimed.add(handler.rootOf(fg, node.inputs[i]!));
        const made = rule.make(node, i, node.inputs.map((v) => replacement.get(v) ?? v));
        node.outputs.forEach((o, j) => replacement.set(o, made.outputs[j]!));
        changes.push({ node, made, input: i });
      }
      if (changes.length === 0) return 0;
      try {
        fg.replaceAll(replacement, { reason: rule.name });
      } catch (e) {
        if (!(e instanceof InconsistencyError)) throw e;
        ctx.log(`rewrite ${rule.name}: the batch was vetoed (${e.message}); trying node by node`);
        return oneByOne(fg, rule, handler, ancestry, changes.map((c) => c.node), ctx);
      }
      if (ctx.verbose) for (const c of changes) ctx.log(`rewrite ${rule.name}: ${c.node} -> ${c.made} (writes into input ${c.input})`);
      return changes.length;
    },
  };
}

/** `rule` on each of `nodes` in turn, each change validated alone (a refused one is undone). */
function oneByOne(fg: FunctionGraph, rule: InplaceRule, handler: DestroyHandler, ancestry: Ancestry, nodes: readonly Apply[], ctx: RewriteContext): number {
  let applied = 0;
  for (const node of nodes) {
    if (!fg.applyNodes.has(node)) continue;
    for (const i of rule.candidates(node)) {
      if (!mayOverwrite(fg, handler, ancestry, node, i, new Set())) continue;
      const made = rule.make(node, i, node.inputs);
      try {
        fg.replaceAll(node.outputs.map((o, j): [Variable, Variable] => [o, made.outputs[j]!]), { reason: rule.name });
      } catch (e) {
        if (!(e instanceof InconsistencyError)) throw e;
        ctx.log(`rewrite ${rule.name} vetoed: ${e.message}`);
        continue;
      }
      ancestry.replaced(node, made);
      applied += 1;
      if (ctx.verbose) ctx.log(`rewrite ${rule.name}: ${node} -> ${made} (writes into input ${i})`);
      break;
    }
  }
  return applied;
}

/** `op` on `inputs` (`node`'s, or what replaces them), with fresh outputs of `node`'s types. */
function remade(node: Apply, op: Apply['op'], inputs: readonly Variable[]): Apply {
  return new Apply(op, inputs, node.outputs.map((o) => o.type.makeVariable()));
}

/** Can an input of type `input` hold an output of type `out` (same dtype and shape, not broadcast)? */
function holds(input: TensorType, out: TensorType): boolean {
  return (
    input.dtype === out.dtype &&
    input.ndim === out.ndim &&
    input.shape.every((d, a) => d === out.shape[a] || (d === null && out.shape[a] !== 1))
  );
}

export const inplaceElemwise = inplaceRewriter({
  name: 'inplace_elemwise',
  applies: (node) => node.op instanceof Elemwise && Object.keys(node.op.inplacePattern).length === 0,
  candidates: (node) => {
    const out = node.outputs[0]!.type as TensorType;
    return node.inputs.flatMap((v, i) => (v.type instanceof TensorType && holds(v.type, out) ? [i] : []));
  },
  make: (node, i, inputs) => remade(node, (node.op as Elemwise).withInplace(i), inputs),
});

export const inplaceGemm = inplaceRewriter({
  name: 'inplace_gemm',
  applies: (node) => node.op instanceof Gemm && !node.op.inplace,
  candidates: () => [0],
  make: (node, _i, inputs) => remade(node, new Gemm(true), inputs),
});

export const inplaceIncSubtensor = inplaceRewriter({
  name: 'inplace_incsubtensor',
  applies: (node) => node.op instanceof IncSubtensor && !node.op.inplace,
  candidates: () => [0],
  make: (node, _i, inputs) => {
    const op = node.op as IncSubtensor;
    return remade(node, new IncSubtensor(op.idxList, op.setInstead, true), inputs);
  },
});

/**
 * An index-array scatter into an Alloc (a gradient's zeros: an embedding's gradient) writes into
 * it: the zeros are not copied. Only into an Alloc, whose memory is a new C-order array, as the
 * kernel's chunks by flat elements need.
 */
export const inplaceAdvancedIncSubtensor = inplaceRewriter({
  name: 'inplace_advanced_incsubtensor',
  applies: (node) => node.op instanceof AdvancedIncSubtensor && !node.op.inplace && node.inputs[0]!.owner?.op instanceof Alloc,
  candidates: () => [0],
  make: (node, _i, inputs) => {
    const op = node.op as AdvancedIncSubtensor;
    return remade(node, new AdvancedIncSubtensor(op.axis, op.count, op.set, true), inputs);
  },
});

/**
 * An Alloc whose only reader writes every element before reading any becomes an AllocEmpty: a
 * Gemm with b = 0 (z is never read) and a setSubtensor over the whole of x. The inplace rules
 * then write into it, so its fill disappears and so does the copy.
 */
export const allocEmptyForOverwrite = nodeRewriter('alloc_empty', [Alloc], (node, fg) => {
  const out = node.outputs[0] as TensorVariable;
  const clients = fg.clients(out);
  if (clients.length !== 1) return false;
  const c = clients[0]!;
  if (c.kind !== 'apply' || c.index !== 0) return false;
  const reader = c.node;
  const overwritten =
    (reader.op instanceof Gemm && scalarConstantValue(reader.inputs[4]!) === 0) ||
    (reader.op instanceof IncSubtensor && reader.op.setInstead && reader.op.coversAll);
  if (!overwritten) return false;
  const empty = allocEmpty(out.dtype, ...(node.inputs.slice(1) as TensorVariable[]));
  return out.type.convertVariable(empty) ? [empty] : false;
});

const TAGS = ['fast_run', 'inplace'];
inplaceDB.register('alloc_empty', allocEmptyForOverwrite, { tags: TAGS, position: 0 });
inplaceDB.register('inplace_incsubtensor', inplaceIncSubtensor, { tags: TAGS, position: 1 });
inplaceDB.register('inplace_advanced_incsubtensor', inplaceAdvancedIncSubtensor, { tags: TAGS, position: 1.5 });
inplaceDB.register('inplace_gemm', inplaceGemm, { tags: TAGS, position: 2 });
inplaceDB.register('inplace_elemwise', inplaceElemwise, { tags: TAGS, position: 3 });
