// Reductions over any set of axes in one pass over the input in C order: each output element
// accumulates its inputs in a fixed order (in float64), so results do not depend on how the
// work is scheduled. Argmax/argmin track the position within the reduced block.
import { sizeOf, type TensorView } from './view.js';

export type ReduceKind = 'sum' | 'prod' | 'max' | 'min' | 'all' | 'any';

const IDENTITY: Record<ReduceKind, number> = { sum: 0, prod: 1, max: -Infinity, min: Infinity, all: 1, any: 0 };

/**
 * Calls `row(xPtr, xStride, accIndex, accStride, n)` for every run along the input's last axis,
 * where accIndex is the position in a C-ordered accumulator of the kept axes (stride 0 on
 * reduced axes).
 */
function forEachRow(
  x: TensorView,
  reduced: readonly boolean[],
  row: (p: number, ps: number, a: number, as: number, n: number) => void,
): void {
  const shape = x.shape;
  const nd = shape.length;
  if (nd === 0) {
    row(x.offset, 0, 0, 0, 1);
    return;
  }
  if (sizeOf(shape) === 0) return;
  const accStride = new Array<number>(nd);
  let acc = 1;
  for (let a = nd - 1; a >= 0; a--) {
    accStride[a] = reduced[a] ? 0 : acc;
    if (!reduced[a]) acc *= shape[a]!;
  }
  const last = nd - 1;
  const n = shape[last]!;
  const idx = new Array<number>(nd).fill(0);
  let p = x.offset;
  let ai = 0;
  for (;;) {
    row(p, x.stride[last]!, ai, accStride[last]!, n);
    let a = last - 1;
    for (; a >= 0; a--) {
      idx[a] = idx[a]! + 1;
      p += x.stride[a]!;
      ai += accStride[a]!;
      if (idx[a]! < shape[a]!) break;
      idx[a] = 0;
      p -= shape[a]! * x.stride[a]!;
      ai -= shape[a]! * accStride[a]!;
    }
    if (a < 0) return;
  }
}

/** Reduces `x` over the axes marked in `reduced` into `out` (C-contiguous, the kept axes' shape). */
export function reduceInto(kind: ReduceKind, x: TensorView, reduced: readonly boolean[], out: TensorView): void {
  const size = sizeOf(out.shape);
  const acc = new Float64Array(size).fill(IDENTITY[kind]);
  const d = x.data;
  switch (kind) {
    case 'sum':
      forEachRow(x, reduced, (p, ps, a, as, n) => {
        if (as === 0) {
          let s = acc[a]!;
          for (let j = 0; j < n; j++, p += ps) s += d[p]!;
          acc[a] = s;
        } else for (let j = 0; j < n; j++, p += ps, a += as) acc[a] = acc[a]! + d[p]!;
      });
      break;
    case 'prod':
      forEachRow(x, reduced, (p, ps, a, as, n) => {
        for (let j = 0; j < n; j++, p += ps, a += as) acc[a] = acc[a]! * d[p]!;
      });
      break;
    case 'max':
      forEachRow(x, reduced, (p, ps, a, as, n) => {
        for (let j = 0; j < n; j++, p += ps, a += as) {
          const v = d[p]!;
          const m = acc[a]!;
          if (v > m || v !== v) acc[a] = m !== m ? m : v;
        }
      });
      break;
    case 'min':
      forEachRow(x, reduced, (p, ps, a, as, n) => {
        for (let j = 0; j < n; j++, p += ps, a += as) {
          const v = d[p]!;
          const m = acc[a]!;
          if (v < m || v !== v) acc[a] = m !== m ? m : v;
        }
      });
      break;
    case 'all':
      forEachRow(x, reduced, (p, ps, a, as, n) => {
        for (let j = 0; j < n; j++, p += ps, a += as) if (d[p] === 0) acc[a] = 0;
      });
      break;
    case 'any':
      forEachRow(x, reduced, (p, ps, a, as, n) => {
        for (let j = 0; j < n; j++, p += ps, a += as) if (d[p] !== 0) acc[a] = 1;
      });
      break;
  }
  const o = out.data;
  for (let i = 0; i < size; i++) o[out.offset + i] = acc[i]!;
}

/**
 * The position of the largest (`max`) or smallest element of each reduced block, counted in C
 * order over the reduced axes; the first one wins ties, and a NaN wins over any number.
 */
export function argReduceInto(kind: 'max' | 'min', x: TensorView, reduced: readonly boolean[], out: TensorView): void {
  const size = sizeOf(out.shape);
  const best = new Float64Array(size).fill(kind === 'max' ? -Infinity : Infinity);
  const where = new Int32Array(size);
  const seen = new Int32Array(size);
  const d = x.data;
  const better = kind === 'max' ? (v: number, b: number) => v > b : (v: number, b: number) => v < b;
  forEachRow(x, reduced, (p, ps, a, as, n) => {
    for (let j = 0; j < n; j++, p += ps, a += as) {
      const v = d[p]!;
      const b = best[a]!;
      if (b === b && (better(v, b) || v !== v)) {
        best[a] = v;
        where[a] = seen[a]!;
      }
      seen[a] = seen[a]! + 1;
    }
  });
  const o = out.data;
  for (let i = 0; i < size; i++) o[out.offset + i] = where[i]!;
}
