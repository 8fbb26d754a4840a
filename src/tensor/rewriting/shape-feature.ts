// ShapeFeature: the symbolic shape of every tensor variable of a graph, from the inputs'
// shapes through each op's inferShape (Theano's ShapeFeature). Rewrites use it to compute
// shape(f(x)) without computing f(x); the runtime uses it to plan memory from input shapes.
import type { Apply } from '../../graph/apply.js';
import type { Client, Feature } from '../../graph/feature.js';
import type { FunctionGraph } from '../../graph/fgraph.js';
import type { Variable } from '../../graph/variable.js';
import { shapeI, shapeOf as staticShapeOf } from '../shape/shape.js';
import { TensorType } from '../core/type.js';
import type { TensorVariable } from '../core/variable.js';

export class ShapeFeature implements Feature {
  readonly #shapes = new Map<Variable, TensorVariable[]>();

  onDetach(): void {
    this.#shapes.clear();
  }

  /**
   * A node now reads another variable: the shapes computed through it are forgotten, with those
   * of everything computed from them (a shape is only cached once its node's inputs' are, so
   * the walk stops at the first variable without one).
   */
  onChangeInput(fg: FunctionGraph, client: Client): void {
    if (client.kind !== 'apply') return;
    const stale: Variable[] = [...client.node.outputs];
    while (stale.length > 0) {
      const v = stale.pop()!;
      if (!this.#shapes.delete(v)) continue;
      for (const c of fg.clients(v)) if (c.kind === 'apply') stale.push(...c.node.outputs);
    }
  }

  onPrune(_fg: FunctionGraph, node: Apply): void {
    for (const o of node.outputs) this.#shapes.delete(o);
  }

  /**
   * One scalar int variable per axis of `v`: constants where the static shape knows the length,
   * expressions of the graph inputs' lengths where the ops' inferShape can tell, Shape_i of
   * `v` itself otherwise.
   */
  shapeOf(v: Variable): TensorVariable[] {
    if (!(v.type instanceof TensorType)) throw new TypeError(`ShapeFeature: ${v} is not a tensor`);
    const known = this.#shapes.get(v);
    if (known) return known;
    // Compute the shapes of the ancestors first, iteratively, so deep graphs do not recurse.
    const pending: Variable[] = [v];
    while (pending.length > 0) {
      const top = pending[pending.length - 1]!;
      if (this.#shapes.has(top)) {
        pending.pop();
        continue;
      }
      const node = top.owner;
      const missing = node ? node.inputs.filter((i) => i.type instanceof TensorType && !this.#shapes.has(i)) : [];
      if (missing.length > 0) {
        pending.push(...missing);
        continue;
      }
      pending.pop();
      if (node) this.#infer(node);
      else this.#shapes.set(top, staticShapeOf(top as TensorVariable));
    }
    return this.#shapes.get(v)!;
  }

  #infer(node: Apply): void {
    const outs = node.outputs as TensorVariable[];
    let inferred: Variable[][] | undefined;
    if (node.op.inferShape) {
      try {
        inferred = node.op.inferShape(node, node.inputs.map((i) => (i.type instanceof TensorType ? this.#shapes.get(i)! : []))) as Variable[][];
      } catch {
        inferred = undefined;
      }
    }
    outs.forEach((o, j) => {
      if (!(o.type instanceof TensorType)) return;
      const dims = inferred?.[j];
      const fallback = staticShapeOf(o);
      // A static length always wins: it is a constant, and it is what the type promises.
      this.#shapes.set(
        o,
        o.type.shape.map((d, a) => (d !== null ? fallback[a]! : ((dims?.[a] as TensorVariable | undefined) ?? shapeI(o, a)))),
      );
    });
  }

  /** Forgets what was computed (after structural changes that make shapes stale). */
  reset(): void {
    this.#shapes.clear();
  }
}

/** The ShapeFeature attached to `fg`, attaching one if there is none. */
export function shapeFeatureOf(fg: FunctionGraph): ShapeFeature {
  const existing = fg.features.find((f): f is ShapeFeature => f instanceof ShapeFeature);
  if (existing) return existing;
  const f = new ShapeFeature();
  fg.attachFeature(f);
  return f;
}
