// Pass 2 of the planner: the layout of the data. Buffers get byte offsets in writer order; a
// buffer whose writer and every reader come before a new buffer's writer (ancestors in the graph,
// orderings included) lends it its bytes, so values that never live at once share memory.
import { bytesPerElement } from '../../kernels/dtype.js';
import type { ViewDescriptor } from '../../workers/protocol.js';
import { ALIGN } from '../../workers/arena.js';
import { buildAncestry } from '../ancestry.js';
import type { Buffer, PlanDraft } from './draft.js';

export const align = (x: number): number => Math.ceil(x / ALIGN) * ALIGN;

/** Is node a an ancestor of node b (indices in execution order): data edges and the graph's orderings. */
export function nodeAncestry(draft: Pick<PlanDraft, 'order' | 'position' | 'orderings'>): (a: number, b: number) => boolean {
  const { order, position, orderings } = draft;
  return buildAncestry(order.length, (k) => {
    const node = order[k]!;
    const preds: number[] = [];
    for (const v of node.inputs) if (v.owner && position.has(v.owner)) preds.push(position.get(v.owner)!);
    for (const b of orderings.get(node) ?? []) if (position.has(b)) preds.push(position.get(b)!);
    return preds;
  }).isAncestor;
}

/** Sets every buffer's offset, reusing freed buffers where safe; returns the bytes of the data. */
export function layOutBuffers(buffers: readonly Buffer[], isAncestor: (a: number, b: number) => boolean): number {
  let top = 0;
  const free: Buffer[] = [];
  const byWriter = [...buffers].sort((a, b) => a.writer - b.writer);
  for (const b of byWriter) {
    if (b.writer >= 0) {
      // Reclaim buffers whose every reader is an ancestor of this writer.
      const candidate = free.find(
        (f) =>
          f.bytes >= b.bytes &&
          f.bytes <= 2 * b.bytes &&
          isAncestor(f.writer, b.writer) &&
          [...f.readers].every((r) => isAncestor(r, b.writer)),
      );
      if (candidate) {
        free.splice(free.indexOf(candidate), 1);
        b.offset = candidate.offset;
        if (!b.pinned) free.push({ ...b, bytes: candidate.bytes });
        continue;
      }
    }
    b.offset = top;
    top = align(top + b.bytes);
    if (!b.pinned && b.writer >= 0) free.push(b);
  }
  return top;
}

/** The views with their byte offsets from the start of the data (once the buffers have theirs). */
export function placedViews(draft: Pick<PlanDraft, 'views' | 'viewBuffer' | 'viewRelative'>): ViewDescriptor[] {
  const { views, viewBuffer, viewRelative } = draft;
  // A view's offset is its buffer's plus the steps of its chain of views (walked, not recursed).
  const relativeOffset = (view: number): number => {
    let bytes = 0;
    let v = view;
    for (let rel = viewRelative.get(v); rel; rel = viewRelative.get(v)) {
      bytes += rel.elements * bytesPerElement(views[v]!.dtype);
      v = rel.of;
    }
    return bytes + viewBuffer[v]!.offset;
  };
  return views.map((v, i): ViewDescriptor => ({ ...v, offset: relativeOffset(i) }));
}
