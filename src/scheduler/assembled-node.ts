// A node of a graph laid out over tensors whose op works on values of other Types (a sparse
// matrix held as its parts): its perform assembles those values from their parts, runs the
// original node's perform, and takes its outputs apart again. It has no kernel and cannot say its
// output shapes (a sparse sum's nnz is known only once it is computed), so plans run it on the
// calling thread between stages.
import type { Apply } from '../graph/apply.js';
import { Op } from '../graph/op.js';
import type { MemoryLayout, PartArray, PartsLayout } from '../graph/type.js';
import { STORAGE } from '../kernels/dtype.js';
import { sizeOf } from '../kernels/view.js';
import { flatValues, makeNdArray, type NdArray } from '../tensor/core/ndarray.js';

/** How a variable of the original graph is held in the laid-out one. */
export type Held =
  | { readonly kind: 'tensor' }
  | { readonly kind: 'array'; readonly layout: MemoryLayout<unknown> }
  | { readonly kind: 'parts'; readonly layout: PartsLayout<unknown> };

/** How many tensors hold a variable. */
export const widthOf = (h: Held): number => (h.kind === 'parts' ? h.layout.parts.length : 1);

/** A value of the original graph from the arrays that hold it. */
export function assemble(h: Held, arrays: readonly NdArray[]): unknown {
  switch (h.kind) {
    case 'tensor':
      return arrays[0];
    case 'array':
      return h.layout.fromArray(flatValues(arrays[0]!));
    case 'parts':
      return h.layout.fromParts(arrays.map((a): PartArray => ({ data: flatValues(a), shape: a.shape })));
  }
}

/** The arrays that hold a value of the original graph. */
export function takeApart(h: Held, value: unknown): NdArray[] {
  switch (h.kind) {
    case 'tensor':
      return [value as NdArray];
    case 'array': {
      const data = new STORAGE[h.layout.dtype](sizeOf(h.layout.shape));
      data.set(h.layout.toArray(value));
      return [makeNdArray(data, h.layout.shape)];
    }
    case 'parts':
      return h.layout.toParts(value).map((p) => makeNdArray(p.data, p.shape));
  }
}

/** Runs `node` (of the original graph) over the parts of its values. */
export class AssembledNode extends Op<never> {
  static #next = 0;
  readonly id = AssembledNode.#next++;

  constructor(
    readonly node: Apply,
    readonly inputsHeld: readonly Held[],
    readonly outputsHeld: readonly Held[],
  ) {
    super();
  }

  override get key(): string {
    // Never merged with another: each stands for its own node.
    return `AssembledNode(${String(this.node.op)}#${this.id})`;
  }


  override makeNode(): Apply {
    throw new Error('AssembledNode: made only by the laid-out graph');
  }

  override perform(_node: Apply, arrays: readonly unknown[]): unknown[] {
    let at = 0;
    const values = this.inputsHeld.map((h) => {
      const w = widthOf(h);
      const v = assemble(h, arrays.slice(at, at + w) as NdArray[]);
      at += w;
      return v;
    });
    const outs = this.node.op.perform(this.node, values);
    return this.outputsHeld.flatMap((h, j) => takeApart(h, outs[j]));
  }

  override toString(): string {
    return String(this.node.op);
  }
}
