// The chunk arithmetic of the kernel contract, in one place: how many units (elements, rows,
// lanes) a kernel call's chunking cuts its first output into, and how a number of chunks becomes
// ranges of units. The planner, DebugMode's chunked-run check and the kernel tests all use these.
import type { Chunking } from '../graph/op.js';
import { sizeOf, type Range } from '../kernels/view.js';

/** How many units a call with this chunking splits an output of this shape into. */
export function chunkUnits(chunking: Chunking, shape: readonly number[]): number {
  switch (chunking.by) {
    case 'elements':
      return sizeOf(shape);
    case 'rows':
      return shape[0] ?? 1;
    case 'lanes': {
      const axis = chunking.axis;
      return shape.reduce((n, d, a) => (a === axis ? n : n * d), 1);
    }
    case 'none':
      return 1;
  }
}

/** The output whose units a chunking counts (a random draw chunks its draws, output 1). */
export function chunkedOutput(chunking: Chunking): number {
  return chunking.by === 'elements' || chunking.by === 'lanes' ? (chunking.output ?? 0) : 0;
}

/**
 * `units` cut into at most `chunks` consecutive ranges of ceil(units / chunks) units each, the
 * last one shorter (so there may be fewer ranges than chunks, and none is empty).
 */
export function chunkRanges(units: number, chunks: number): Range[] {
  const per = Math.ceil(units / Math.max(1, chunks));
  const ranges: Range[] = [];
  for (let s = 0; s < units; s += per) ranges.push({ start: s, end: Math.min(units, s + per) });
  return ranges;
}
