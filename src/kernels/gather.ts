// Integer-array indexing (NumPy's advanced indexing on `count` consecutive axes from `axis`):
// 'gather' reads x at the broadcast index arrays, chunked over its output; 'scatter' writes y
// into a copy of x there (set, or add as np.add.at does for repeated indices), chunked over the
// output too: each chunk copies its part of x, then walks every update in C order and applies
// those that land in its part, so no two chunks write one element and the order of the additions
// (hence the bits) is the same on any number of workers.
import { copyView } from './copy.js';
import { registerKernel } from './registry.js';
import { sizeOf, type Range, type TensorView } from './view.js';

export interface GatherParams {
  /** The first indexed axis of x. */
  readonly axis: number;
  /** How many axes the index arrays index (one array each). */
  readonly count: number;
  /** The op's name, for errors. */
  readonly op: string;
}

export interface ScatterParams extends GatherParams {
  /** Set (the last of repeated indices wins) rather than add. */
  readonly set: boolean;
  /** The output is bool: an add is a logical or. */
  readonly asBool: boolean;
}

/** NumPy's broadcast of the index arrays' shapes (right-aligned, 1 stretches), or the reason it fails. */
export function broadcastIndexShapes(shapes: readonly (readonly number[])[], op: string): number[] {
  const nd = Math.max(0, ...shapes.map((s) => s.length));
  const out = Array<number>(nd).fill(1);
  for (const s of shapes) {
    s.forEach((d, k) => {
      const a = nd - s.length + k;
      if (d === out[a] || d === 1) return;
      if (out[a] !== 1) throw new RangeError(`${op}: index arrays of shapes ${shapes.map((x) => `[${x.join(', ')}]`).join(' and ')} cannot be broadcast together`);
      out[a] = d;
    });
  }
  return out;
}

/** The shape the index arrays select from x: x's axes before `axis`, the index shape, the axes after. */
export function gatheredShape(x: readonly number[], index: readonly number[], axis: number, count: number): number[] {
  return [...x.slice(0, axis), ...index, ...x.slice(axis + count)];
}

/** For each axis of the gathered shape, where it comes from: an axis of x, or an axis of the index shape. */
interface Walk {
  readonly shape: readonly number[];
  /** Element steps in x of the axes that are x's (0 on index axes). */
  readonly xStep: readonly number[];
  /** Element steps in each index array (broadcast: 0 where it has length 1 or lacks the axis). */
  readonly indexSteps: ReadonlyArray<readonly number[]>;
}

function walkOf(x: TensorView, indices: readonly TensorView[], params: GatherParams, indexShape: readonly number[]): Walk {
  const { axis, count } = params;
  const shape = gatheredShape(x.shape, indexShape, axis, count);
  const ni = indexShape.length;
  const xStep = shape.map((_, d) => (d < axis ? x.stride[d]! : d < axis + ni ? 0 : x.stride[d - ni + count]!));
  const indexSteps = indices.map((v) =>
    shape.map((_, d) => {
      if (d < axis || d >= axis + ni) return 0;
      const k = d - axis - (ni - v.shape.length);
      return k < 0 || v.shape[k] === 1 ? 0 : v.stride[k]!;
    }),
  );
  return { shape, xStep, indexSteps };
}

/**
 * Calls `visit(xPosition, k)` for the gathered elements k in [start, end) in C order: the element
 * of x they select (each index read, wrapped if negative, and checked against its axis).
 */
function eachSelected(x: TensorView, indices: readonly TensorView[], params: GatherParams, walk: Walk, start: number, end: number, visit: (p: number, k: number) => void): void {
  const { shape, xStep, indexSteps } = walk;
  const nd = shape.length;
  const at = Array<number>(nd).fill(0);
  let rest = start;
  for (let d = nd - 1; d >= 0; d--) {
    at[d] = rest % shape[d]!;
    rest = Math.floor(rest / shape[d]!);
  }
  const lengths = indices.map((_, j) => x.shape[params.axis + j]!);
  for (let k = start; k < end; k++) {
    let p = x.offset;
    for (let d = 0; d < nd; d++) p += at[d]! * xStep[d]!;
    for (let j = 0; j < indices.length; j++) {
      const v = indices[j]!;
      let q = v.offset;
      const steps = indexSteps[j]!;
      for (let d = 0; d < nd; d++) q += at[d]! * steps[d]!;
      let i = v.data[q]!;
      const len = lengths[j]!;
      if (i < -len || i >= len) throw new RangeError(`${params.op}: index ${i} is out of bounds for axis ${params.axis + j} with length ${len}`);
      if (i < 0) i += len;
      p += i * x.stride[params.axis + j]!;
    }
    visit(p, k);
    for (let d = nd - 1; d >= 0; d--) {
      if (++at[d]! < shape[d]!) break;
      at[d] = 0;
    }
  }
}

/** The element position of flat index k (C order) of `v`. */
function positionOf(v: TensorView, k: number): number {
  let p = v.offset;
  for (let d = v.shape.length - 1; d >= 0; d--) {
    const n = v.shape[d]!;
    p += (k % n) * v.stride[d]!;
    k = Math.floor(k / n);
  }
  return p;
}

registerKernel('gather', ([x, ...indices], [out], params, range) => {
  const p = params as unknown as GatherParams;
  const walk = walkOf(x!, indices, p, broadcastIndexShapes(indices.map((v) => v.shape), p.op));
  const n = sizeOf(walk.shape);
  const o = out!;
  eachSelected(x!, indices, p, walk, range?.start ?? 0, range?.end ?? n, (pos, k) => {
    o.data[positionOf(o, k)] = x!.data[pos]!;
  });
});

/** y's element for gathered element k: y broadcast (right-aligned) onto the gathered shape. */
function yReader(y: TensorView, shape: readonly number[]): (k: number) => number {
  const lead = shape.length - y.shape.length;
  const steps = shape.map((_, d) => (d < lead || y.shape[d - lead] === 1 ? 0 : y.stride[d - lead]!));
  return (k) => {
    let p = y.offset;
    for (let d = shape.length - 1; d >= 0; d--) {
      const n = shape[d]!;
      p += (k % n) * steps[d]!;
      k = Math.floor(k / n);
    }
    return y.data[p]!;
  };
}

registerKernel('scatter', ([x, y, ...indices], [out], params, range) => {
  const p = params as unknown as ScatterParams;
  const o = out!;
  const total = sizeOf(o.shape);
  const [start, end] = [range?.start ?? 0, range?.end ?? total];
  // This chunk's part of x, then the updates that land in it. The output is contiguous (a new
  // buffer), so an element's flat index is its position less the offset.
  copyView(x!, o, { start, end });
  const walk = walkOf(o, indices, p, broadcastIndexShapes(indices.map((v) => v.shape), p.op));
  const read = yReader(y!, walk.shape);
  const data = o.data;
  eachSelected(o, indices, p, walk, 0, sizeOf(walk.shape), (pos, k) => {
    const flat = pos - o.offset;
    if (flat < start || flat >= end) return;
    const v = read(k);
    if (p.set) data[pos] = v;
    else if (p.asBool) data[pos] = data[pos]! || v ? 1 : 0;
    else data[pos] = data[pos]! + v;
  });
});

export type { Range };
