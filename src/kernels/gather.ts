// Integer-array indexing (NumPy's advanced indexing on `count` consecutive axes from `axis`):
// 'gather' reads x at the broadcast index arrays, chunked over its output; 'scatter' writes y
// into a copy of x there (set, or add as np.add.at does for repeated indices), chunked over the
// output too: each chunk copies its part of x, then walks every update in C order and applies
// those that land in its part, so no two chunks write one element and the order of the additions
// (hence the bits) is the same on any number of workers.
import { copyView } from './copy.js';
import { rowKernelsFor } from './gather-wasm.js';
import { attachedMemoryOf } from './gemm-wasm.js';
import { registerKernel } from './registry.js';
import { isContiguous, positionOf, sizeOf, type TensorView } from './view.js';

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

/**
 * The gathered elements as rows: the outer axes (x's axes before `axis`, then the index shape)
 * pick a row start in x; the inner axes (x's axes after the indexed ones) are a row of `rowLength`
 * elements at the offsets `inner` from it (none when the row is contiguous: offset t is t).
 */
interface Rows {
  readonly outer: readonly number[];
  /** Element steps in x of the outer axes that are x's (0 on index axes). */
  readonly xStep: readonly number[];
  /** Element steps in each index array along the outer axes (0 where it broadcasts). */
  readonly indexSteps: ReadonlyArray<readonly number[]>;
  readonly rowLength: number;
  readonly inner: Int32Array | undefined;
}

/** The element offsets of a view's trailing `shape` (strides `stride`), or undefined when they are 0, 1, 2, .... */
function offsetsOf(shape: readonly number[], stride: readonly number[]): Int32Array | undefined {
  if (isContiguous({ shape, stride })) return undefined;
  const out = new Int32Array(sizeOf(shape));
  const at = Array<number>(shape.length).fill(0);
  for (let t = 0, p = 0; t < out.length; t++) {
    out[t] = p;
    for (let d = shape.length - 1; d >= 0; d--) {
      p += stride[d]!;
      if (++at[d]! < shape[d]!) break;
      p -= at[d]! * stride[d]!;
      at[d] = 0;
    }
  }
  return out;
}

function rowsOf(x: TensorView, indices: readonly TensorView[], params: GatherParams, indexShape: readonly number[]): Rows {
  const { axis, count } = params;
  const outer = [...x.shape.slice(0, axis), ...indexShape];
  const ni = indexShape.length;
  const xStep = outer.map((_, d) => (d < axis ? x.stride[d]! : 0));
  const indexSteps = indices.map((v) =>
    outer.map((_, d) => {
      if (d < axis) return 0;
      const k = d - axis - (ni - v.shape.length);
      return k < 0 || v.shape[k] === 1 ? 0 : v.stride[k]!;
    }),
  );
  const innerShape = x.shape.slice(axis + count);
  return { outer, xStep, indexSteps, rowLength: sizeOf(innerShape), inner: offsetsOf(innerShape, x.stride.slice(axis + count)) };
}

/**
 * Calls `visit(rowStart, k)` for the outer positions k in [start, end) in C order, rowStart being
 * where in x the row they select begins (each index read, wrapped if negative, checked against its axis).
 */
function eachRow(x: TensorView, indices: readonly TensorView[], params: GatherParams, rows: Rows, start: number, end: number, visit: (p: number, k: number) => void): void {
  const { outer, xStep, indexSteps } = rows;
  const nd = outer.length;
  const at = Array<number>(nd).fill(0);
  let rest = start;
  for (let d = nd - 1; d >= 0; d--) {
    at[d] = rest % outer[d]!;
    rest = Math.floor(rest / outer[d]!);
  }
  const lengths = indices.map((_, j) => x.shape[params.axis + j]!);
  const strides = indices.map((_, j) => x.stride[params.axis + j]!);
  for (let k = start; k < end; k++) {
    let p = x.offset;
    for (let d = 0; d < nd; d++) p += at[d]! * xStep[d]!;
    for (let j = 0; j < indices.length; j++) {
      const v = indices[j]!;
      const steps = indexSteps[j]!;
      let q = v.offset;
      for (let d = 0; d < nd; d++) q += at[d]! * steps[d]!;
      let i = v.data[q]!;
      const len = lengths[j]!;
      if (i < -len || i >= len) throw new RangeError(`${params.op}: index ${i} is out of bounds for axis ${params.axis + j} with length ${len}`);
      if (i < 0) i += len;
      p += i * strides[j]!;
    }
    visit(p, k);
    for (let d = nd - 1; d >= 0; d--) {
      if (++at[d]! < outer[d]!) break;
      at[d] = 0;
    }
  }
}

/** Elements [start, end) of the gathered output, element by element. */
function gatherElements(x: TensorView, indices: readonly TensorView[], p: GatherParams, rows: Rows, o: TensorView, start: number, end: number): void {
  const { rowLength: n, inner } = rows;
  // The output is a new, contiguous buffer: element e is row floor(e / n), offset e % n.
  const [src, dst] = [x.data, o.data];
  eachRow(x, indices, p, rows, Math.floor(start / n), Math.ceil(end / n), (at, k) => {
    const t0 = Math.max(0, start - k * n);
    const t1 = Math.min(n, end - k * n);
    const base = o.offset + k * n;
    if (inner) for (let t = t0; t < t1; t++) dst[base + t] = src[at + inner[t]!]!;
    else for (let t = t0; t < t1; t++) dst[base + t] = src[at + t]!;
  });
}

/**
 * The copier of whole rows [k0, k1) in WebAssembly, when one contiguous int32 index array picks
 * contiguous rows of x's first axis, of 16 bytes or more and a multiple of 4 (the copies go 16
 * bytes, then 4, at a time), and x, the index and the output share an attached memory.
 */
function wholeRowCopier(x: TensorView, indices: readonly TensorView[], p: GatherParams, rows: Rows, o: TensorView): ((k0: number, k1: number) => void) | undefined {
  const index = indices[0]!;
  const size = x.data.BYTES_PER_ELEMENT;
  const rowBytes = rows.rowLength * size;
  if (indices.length !== 1 || p.axis !== 0 || rows.inner || rowBytes < 16 || rowBytes % 4 !== 0 || !(index.data instanceof Int32Array) || !isContiguous(index)) return undefined;
  const memory = attachedMemoryOf(x.data.buffer);
  if (!memory || attachedMemoryOf(index.data.buffer) !== memory || attachedMemoryOf(o.data.buffer) !== memory) return undefined;
  const length = x.shape[0]!;
  const ids = index.data;
  return (k0, k1) => {
    const bad = rowKernelsFor(memory).gather(x.data.byteOffset + x.offset * size, x.stride[0]! * size, length, ids.byteOffset + index.offset * 4, k0, k1, o.data.byteOffset + (o.offset + k0 * rows.rowLength) * size, rowBytes);
    if (bad >= 0) throw new RangeError(`${p.op}: index ${ids[index.offset + bad]} is out of bounds for axis 0 with length ${length}`);
  };
}

registerKernel('gather', ([x, ...indices], [out], params, range) => {
  const p = params as unknown as GatherParams;
  const rows = rowsOf(x!, indices, p, broadcastIndexShapes(indices.map((v) => v.shape), p.op));
  const n = rows.rowLength;
  const o = out!;
  const [start, end] = [range?.start ?? 0, range?.end ?? sizeOf(o.shape)];
  if (end <= start || n === 0) return;
  // The partial rows at the chunk's ends element by element, the whole rows between as rows.
  const [k0, k1] = [Math.ceil(start / n), Math.floor(end / n)];
  const copyRows = k0 < k1 ? wholeRowCopier(x!, indices, p, rows, o) : undefined;
  if (!copyRows) {
    gatherElements(x!, indices, p, rows, o, start, end);
    return;
  }
  if (start < k0 * n) gatherElements(x!, indices, p, rows, o, start, k0 * n);
  copyRows(k0, k1);
  if (k1 * n < end) gatherElements(x!, indices, p, rows, o, k1 * n, end);
});

/** y broadcast (right-aligned) onto the gathered shape: its element steps along the outer axes, and its row offsets. */
function yLayout(y: TensorView, outer: readonly number[], innerShape: readonly number[]): { step: number[]; inner: Int32Array } {
  const shape = [...outer, ...innerShape];
  const lead = shape.length - y.shape.length;
  const steps = shape.map((_, d) => (d < lead || y.shape[d - lead] === 1 ? 0 : y.stride[d - lead]!));
  return { step: steps.slice(0, outer.length), inner: offsetsOf(innerShape, steps.slice(outer.length)) ?? Int32Array.from({ length: sizeOf(innerShape) }, (_, t) => t) };
}

/**
 * The common case of scatter, one contiguous index array on the first axis and contiguous updates
 * y of shape [...index, ...row] (an embedding's gradient), with no walk per update: each index
 * read in a tight loop, and only the rows that land in [start, end) touched, in the same order
 * as the general walk (so the same bits). False (nothing done) when it does not apply.
 */
function scatterRows(y: TensorView, indices: readonly TensorView[], p: ScatterParams, o: TensorView, start: number, end: number): boolean {
  const index = indices[0]!;
  if (indices.length !== 1 || p.axis !== 0 || p.asBool || !isContiguous(index) || !isContiguous(y)) return false;
  const rowShape = o.shape.slice(1);
  if (y.shape.length !== index.shape.length + rowShape.length || ![...index.shape, ...rowShape].every((d, k) => d === y.shape[k])) return false;
  const n = sizeOf(rowShape);
  const length = o.shape[0]!;
  // Rows of 4-byte elements in WebAssembly (float32 for adds), one pass over the indices.
  const memory = attachedMemoryOf(o.data.buffer);
  const wasm = memory && index.data instanceof Int32Array && o.data.BYTES_PER_ELEMENT === 4 && (p.set || o.data instanceof Float32Array) && attachedMemoryOf(y.data.buffer) === memory && attachedMemoryOf(index.data.buffer) === memory;
  if (!wasm) {
    scatterRowsIn(y, index, p, o, start, end);
    return true;
  }
  const rows = rowKernelsFor(memory)[p.set ? 'set' : 'add'];
  const [rowFrom, rowTo] = [Math.floor(start / n), Math.ceil(end / n)];
  const [head, tail] = [(start - rowFrom * n) * 4, (end - (rowTo - 1) * n) * 4];
  const bad = rows(o.data.byteOffset + o.offset * 4, rowFrom, rowTo, head, tail, length, index.data.byteOffset + index.offset * 4, sizeOf(index.shape), y.data.byteOffset + y.offset * 4, n * 4);
  if (bad >= 0) throw new RangeError(`${p.op}: index ${index.data[index.offset + bad]} is out of bounds for axis 0 with length ${length}`);
  return true;
}

/** scatterRows in JS: other element types, or memory that is not attached. */
function scatterRowsIn(y: TensorView, index: TensorView, p: ScatterParams, o: TensorView, start: number, end: number): void {
  const n = sizeOf(o.shape.slice(1));
  const [rowFrom, rowTo] = [Math.floor(start / n), Math.ceil(end / n)];
  const length = o.shape[0]!;
  const [ids, ys, data] = [index.data, y.data, o.data];
  const count = sizeOf(index.shape);
  for (let k = 0; k < count; k++) {
    let i = Number(ids[index.offset + k]);
    if (i < -length || i >= length) throw new RangeError(`${p.op}: index ${i} is out of bounds for axis 0 with length ${length}`);
    if (i < 0) i += length;
    if (i < rowFrom || i >= rowTo) continue;
    const first = i * n;
    const t1 = Math.min(n, end - first);
    const [at, from] = [o.offset + first, y.offset + k * n];
    if (p.set) for (let t = Math.max(0, start - first); t < t1; t++) data[at + t] = ys[from + t]!;
    else for (let t = Math.max(0, start - first); t < t1; t++) data[at + t] = data[at + t]! + ys[from + t]!;
  }
}

/** Scatter into `o`: x's part [start, end) copied first unless `o` is x's own memory (inplace). */
function scatterInto(x: TensorView, y: TensorView, indices: readonly TensorView[], o: TensorView, p: ScatterParams, start: number, end: number, inplace: boolean): void {
  if (end <= start) return;
  // This chunk's part of x, then the updates that land in it, row by row in C order. The output
  // is a new, contiguous buffer, so an element's flat index is its position less the offset.
  if (!inplace) copyView(x, o, { start, end });
  if (scatterRows(y, indices, p, o, start, end)) return;
  const rows = rowsOf(o, indices, p, broadcastIndexShapes(indices.map((v) => v.shape), p.op));
  const n = rows.rowLength;
  const yl = yLayout(y, rows.outer, o.shape.slice(p.axis + p.count));
  const ys = y.data;
  const data = o.data;
  eachRow(o, indices, p, rows, 0, sizeOf(rows.outer), (pos, k) => {
    const q = positionOf(rows.outer, yl.step, y.offset, k);
    const first = pos - o.offset;
    const t0 = Math.max(0, start - first);
    const t1 = Math.min(n, end - first);
    for (let t = t0; t < t1; t++) {
      const v = ys[q + yl.inner[t]!]!;
      const e = pos + t;
      if (p.set) data[e] = v;
      else if (p.asBool) data[e] = data[e]! || v ? 1 : 0;
      else data[e] = data[e]! + v;
    }
  });
}

registerKernel('scatter', ([x, y, ...indices], [out], params, range) => {
  scatterInto(x!, y!, indices, out!, params as unknown as ScatterParams, range?.start ?? 0, range?.end ?? sizeOf(out!.shape), false);
});

/** As 'scatter', with out being x's own memory: only the updates are written. */
registerKernel('scatterInplace', ([, y, ...indices], [out], params, range) => {
  scatterInto(out!, y!, indices, out!, params as unknown as ScatterParams, range?.start ?? 0, range?.end ?? sizeOf(out!.shape), true);
});

