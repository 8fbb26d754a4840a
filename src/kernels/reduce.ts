// Reductions over any set of axes in one pass over the input: each output element accumulates
// its inputs in C order of the reduced axes (in float64), so results do not depend on how the
// work is scheduled or chunked. Argmax/argmin track the position within the reduced block.
import type { TypedArray } from './dtype.js';
import { attachedMemoryOf, threadBlockOf, WASM_PACK_BYTES } from './gemm-wasm.js';
import { reduceBlocksFor, type ReduceBlocks, type WasmReduceDtype, type WasmReduceKind } from './reduce-wasm.js';
import { prodRow, sumRow } from './row-partials.js';
import { contiguousStrides, sizeOf, type Range, type TensorView } from './view.js';

export type ReduceKind = 'sum' | 'prod' | 'max' | 'min' | 'all' | 'any';

const IDENTITY: Readonly<Record<ReduceKind, number>> = { sum: 0, prod: 1, max: -Infinity, min: Infinity, all: 1, any: 0 };

/**
 * The loops of a reduction. Per axis: the input stride, the accumulator stride (C order over the
 * kept axes, 0 on reduced ones) and the position stride (C order over the reduced axes, 0 on kept
 * ones). Axes of length 1 are dropped and neighbours that step through all three evenly are
 * merged, so a contiguous reduction over leading or trailing axes is a 2-d loop. The two inner
 * axes (1 = outer, 0 = innermost) are run by the kernels; the rest by an odometer.
 */
interface LoopNest {
  /** The inner rows are reduced, contiguous, and folded in partials (rowsInPartials). */
  readonly partials: boolean;
  readonly outerShape: readonly number[];
  readonly outerIn: readonly number[];
  readonly outerAcc: readonly number[];
  readonly outerPos: readonly number[];
  readonly n1: number;
  readonly ps1: number;
  readonly as1: number;
  readonly qs1: number;
  readonly n0: number;
  readonly ps0: number;
  readonly as0: number;
  readonly qs0: number;
}

/** Inner lengths below this are swapped with a longer outer axis when only one is reduced. */
const SHORT_INNER = 8;

/**
 * Whether the rows of the whole reduction are contiguous reduced rows, which sums and products
 * fold in partials (sumRow): decided on the whole view, since a chunk's loops may differ (a kept
 * axis of length 1 in a chunk is dropped, a short one swapped inward) and every chunk must reduce
 * in the same order.
 */
function rowsInPartials(x: TensorView, reduced: readonly boolean[]): boolean {
  const L = loopNest(x, reduced, true);
  return L.partials;
}

function loopNest(x: TensorView, reduced: readonly boolean[], partials: boolean): LoopNest {
  const nd = x.shape.length;
  const accStride = new Array<number>(nd);
  const posStride = new Array<number>(nd);
  let acc = 1;
  let pos = 1;
  for (let a = nd - 1; a >= 0; a--) {
    const n = x.shape[a]!;
    accStride[a] = reduced[a] ? 0 : acc;
    posStride[a] = reduced[a] ? pos : 0;
    if (reduced[a]) pos *= n;
    else acc *= n;
  }
  const shape: number[] = [];
  const ins: number[] = [];
  const accs: number[] = [];
  const poss: number[] = [];
  for (let a = 0; a < nd; a++) {
    const n = x.shape[a]!;
    if (n === 1) continue;
    const k = shape.length - 1;
    const s = x.stride[a]!;
    if (k >= 0 && ins[k] === s * n && accs[k] === accStride[a]! * n && poss[k] === posStride[a]! * n) {
      shape[k] = shape[k]! * n;
      ins[k] = s;
      accs[k] = accStride[a]!;
      poss[k] = posStride[a]!;
    } else {
      shape.push(n);
      ins.push(s);
      accs.push(accStride[a]!);
      poss.push(posStride[a]!);
    }
  }
  while (shape.length < 2) {
    shape.unshift(1);
    ins.unshift(0);
    accs.unshift(0);
    poss.unshift(0);
  }
  let i1 = shape.length - 2;
  let i0 = shape.length - 1;
  // A short kept inner axis under a long reduced one (or the reverse) runs better swapped; the
  // order within each output's block is unchanged because only one of the two is reduced.
  if (shape[i0]! < SHORT_INNER && shape[i1]! > shape[i0]! && (accs[i0] === 0) !== (accs[i1] === 0)) [i0, i1] = [i1, i0];
  const outer = shape.length - 2;
  return {
    partials: partials && accs[i0] === 0 && ins[i0] === 1,
    outerShape: shape.slice(0, outer),
    outerIn: ins.slice(0, outer),
    outerAcc: accs.slice(0, outer),
    outerPos: poss.slice(0, outer),
    n1: shape[i1]!,
    ps1: ins[i1]!,
    as1: accs[i1]!,
    qs1: poss[i1]!,
    n0: shape[i0]!,
    ps0: ins[i0]!,
    as0: accs[i0]!,
    qs0: poss[i0]!,
  };
}

/** Walks the outer axes in C order: `p`, `a` and `q` are the input, accumulator and position starts. */
class Odometer {
  p: number;
  a = 0;
  q = 0;
  readonly #idx: number[];

  constructor(
    readonly nest: LoopNest,
    offset: number,
  ) {
    this.p = offset;
    this.#idx = nest.outerShape.map(() => 0);
  }

  /** Steps to the next inner block; false when all are done. */
  next(): boolean {
    const { outerShape, outerIn, outerAcc, outerPos } = this.nest;
    for (let k = outerShape.length - 1; k >= 0; k--) {
      const n = outerShape[k]!;
      this.#idx[k] = this.#idx[k]! + 1;
      this.p += outerIn[k]!;
      this.a += outerAcc[k]!;
      this.q += outerPos[k]!;
      if (this.#idx[k]! < n) return true;
      this.#idx[k] = 0;
      this.p -= n * outerIn[k]!;
      this.a -= n * outerAcc[k]!;
      this.q -= n * outerPos[k]!;
    }
    return false;
  }
}

// A block runs the two inner axes. A reduced inner axis folds each row into one register. A
// kept inner axis under a reduced outer one folds every row into the same outputs, so four rows
// go per pass, combined in row order (((acc + r0) + r1) + r2) + r3: the same order as one row at
// a time, with a quarter of the accumulator traffic. Contiguous rows get a plain index loop.

function sumBlock(d: TypedArray, acc: Float64Array, L: LoopNest, p1: number, a1: number): void {
  const { n1, ps1, as1, n0, ps0, as0 } = L;
  if (as0 === 0) {
    for (let i = 0; i < n1; i++, p1 += ps1, a1 += as1) {
      if (L.partials) {
        acc[a1] = sumRow(acc[a1]!, d, p1, n0);
        continue;
      }
      let s = acc[a1]!;
      for (let j = 0, p = p1; j < n0; j++, p += ps0) s += d[p]!;
      acc[a1] = s;
    }
    return;
  }
  let i = 0;
  if (as1 === 0) {
    const s2 = 2 * ps1;
    const s3 = 3 * ps1;
    for (; i + 4 <= n1; i += 4, p1 += 4 * ps1) {
      for (let j = 0, p = p1, a = a1; j < n0; j++, p += ps0, a += as0) acc[a] = acc[a]! + d[p]! + d[p + ps1]! + d[p + s2]! + d[p + s3]!;
    }
  }
  for (; i < n1; i++, p1 += ps1, a1 += as1) {
    for (let j = 0, p = p1, a = a1; j < n0; j++, p += ps0, a += as0) acc[a] = acc[a]! + d[p]!;
  }
}

function prodBlock(d: TypedArray, acc: Float64Array, L: LoopNest, p1: number, a1: number): void {
  const { n1, ps1, as1, n0, ps0, as0 } = L;
  if (as0 === 0) {
    for (let i = 0; i < n1; i++, p1 += ps1, a1 += as1) {
      if (L.partials) {
        acc[a1] = prodRow(acc[a1]!, d, p1, n0);
        continue;
      }
      let s = acc[a1]!;
      for (let j = 0, p = p1; j < n0; j++, p += ps0) s *= d[p]!;
      acc[a1] = s;
    }
    return;
  }
  let i = 0;
  if (as1 === 0) {
    const s2 = 2 * ps1;
    const s3 = 3 * ps1;
    for (; i + 4 <= n1; i += 4, p1 += 4 * ps1) {
      for (let j = 0, p = p1, a = a1; j < n0; j++, p += ps0, a += as0) acc[a] = acc[a]! * d[p]! * d[p + ps1]! * d[p + s2]! * d[p + s3]!;
    }
  }
  for (; i < n1; i++, p1 += ps1, a1 += as1) {
    for (let j = 0, p = p1, a = a1; j < n0; j++, p += ps0, a += as0) acc[a] = acc[a]! * d[p]!;
  }
}

// max and min are IEEE's maximum and minimum (Math.max and Math.min, as wasm's f64.max): NaN
// propagates, as in NumPy, and +0 is above -0, so the result does not depend on the order.
function maxBlock(d: TypedArray, acc: Float64Array, L: LoopNest, p1: number, a1: number): void {
  const { n1, ps1, as1, n0, ps0, as0 } = L;
  if (as0 === 0) {
    for (let i = 0; i < n1; i++, p1 += ps1, a1 += as1) {
      let m = acc[a1]!;
      for (let j = 0, p = p1; j < n0; j++, p += ps0) m = Math.max(m, d[p]!);
      acc[a1] = m;
    }
    return;
  }
  for (let i = 0; i < n1; i++, p1 += ps1, a1 += as1) {
    for (let j = 0, p = p1, a = a1; j < n0; j++, p += ps0, a += as0) acc[a] = Math.max(acc[a]!, d[p]!);
  }
}

function minBlock(d: TypedArray, acc: Float64Array, L: LoopNest, p1: number, a1: number): void {
  const { n1, ps1, as1, n0, ps0, as0 } = L;
  if (as0 === 0) {
    for (let i = 0; i < n1; i++, p1 += ps1, a1 += as1) {
      let m = acc[a1]!;
      for (let j = 0, p = p1; j < n0; j++, p += ps0) m = Math.min(m, d[p]!);
      acc[a1] = m;
    }
    return;
  }
  for (let i = 0; i < n1; i++, p1 += ps1, a1 += as1) {
    for (let j = 0, p = p1, a = a1; j < n0; j++, p += ps0, a += as0) acc[a] = Math.min(acc[a]!, d[p]!);
  }
}

// all and any: an element is true when it is not 0 (NaN is true, -0 is false).
function allBlock(d: TypedArray, acc: Float64Array, L: LoopNest, p1: number, a1: number): void {
  const { n1, ps1, as1, n0, ps0, as0 } = L;
  for (let i = 0; i < n1; i++, p1 += ps1, a1 += as1) {
    let p = p1;
    let a = a1;
    for (let j = 0; j < n0; j++, p += ps0, a += as0) if (d[p] === 0) acc[a] = 0;
  }
}

function anyBlock(d: TypedArray, acc: Float64Array, L: LoopNest, p1: number, a1: number): void {
  const { n1, ps1, as1, n0, ps0, as0 } = L;
  for (let i = 0; i < n1; i++, p1 += ps1, a1 += as1) {
    let p = p1;
    let a = a1;
    for (let j = 0; j < n0; j++, p += ps0, a += as0) if (d[p] !== 0) acc[a] = 1;
  }
}

type Block = (d: TypedArray, acc: Float64Array, L: LoopNest, p1: number, a1: number) => void;

function runBlocks(block: Block, x: TensorView, L: LoopNest, acc: Float64Array): void {
  const it = new Odometer(L, x.offset);
  do block(x.data, acc, L, it.p, it.a);
  while (it.next());
}

/**
 * Reduces `x` over the axes marked in `reduced` into `out` (C-contiguous, the kept axes' shape);
 * with a range, only output elements [start, end), each reduced in full and in the same order.
 */
export function reduceInto(kind: ReduceKind, x: TensorView, reduced: readonly boolean[], out: TensorView, range?: Range): void {
  const partials = (kind === 'sum' || kind === 'prod') && sizeOf(x.shape) > 0 && rowsInPartials(x, reduced);
  const wasm = wasmReduction(kind, x);
  if (!wasm) {
    forEachBox(x, reduced, out, range, (xb, ob) => reduceBox(kind, xb, reduced, ob, partials));
    return;
  }
  // The accumulators live in the thread's block, so at most `outputs` output elements at a time.
  forEachBox(x, reduced, out, range, (xb, ob) => wasmReduceBox(wasm, xb, reduced, ob, partials), wasm.outputs);
}

/** What a reduction of float32 or float64 values in an attached memory runs in WebAssembly with. */
interface WasmReduction {
  readonly kind: WasmReduceKind;
  readonly blocks: ReduceBlocks;
  readonly memory: WebAssembly.Memory;
  /** The thread's block: the accumulators' byte address, and how many fit. */
  readonly address: number;
  readonly outputs: number;
  readonly js: Block;
}

const JS_BLOCKS: Readonly<Record<WasmReduceKind, Block>> = { sum: sumBlock, prod: prodBlock, max: maxBlock, min: minBlock, all: allBlock, any: anyBlock };

/** The element type the WebAssembly blocks read `data` as (bools are uint8), if they can. */
function wasmDtypeOf(data: TypedArray): WasmReduceDtype | undefined {
  if (data instanceof Float64Array) return 'float64';
  if (data instanceof Float32Array) return 'float32';
  if (data instanceof Int32Array) return 'int32';
  return data instanceof Uint8Array ? 'uint8' : undefined;
}

function wasmReduction(kind: WasmReduceKind, x: TensorView): WasmReduction | undefined {
  const dtype = wasmDtypeOf(x.data);
  const memory = dtype && attachedMemoryOf(x.data.buffer);
  const block = memory && threadBlockOf(memory);
  if (!block) return undefined;
  return { kind, blocks: reduceBlocksFor(memory, kind, dtype!), memory, address: block.address, outputs: block.bytes >>> 3, js: JS_BLOCKS[kind] };
}

/**
 * reduceBox with the accumulators in the thread's block: contiguous reduced rows and contiguous
 * kept rows under a reduced axis run as WebAssembly blocks, other layouts as the JS blocks.
 */
function wasmReduceBox(w: WasmReduction, x: TensorView, reduced: readonly boolean[], out: TensorView, partials: boolean): void {
  const size = sizeOf(out.shape);
  const acc = new Float64Array(w.memory.buffer, w.address, size).fill(IDENTITY[w.kind]);
  // max, min, all and any do not depend on the order: any contiguous reduced row may run in partials.
  const orderFree = w.kind === 'max' || w.kind === 'min' || w.kind === 'all' || w.kind === 'any';
  if (sizeOf(x.shape) > 0) {
    const L = loopNest(x, reduced, partials || orderFree);
    const bytes = x.data.BYTES_PER_ELEMENT;
    const base = x.data.byteOffset;
    const it = new Odometer(L, x.offset);
    do {
      if (L.partials) w.blocks.rows(base + it.p * bytes, L.n1, L.ps1 * bytes, L.n0, w.address + it.a * 8, L.as1 * 8);
      else if (L.ps0 === 1 && L.as0 === 1 && L.as1 === 0) w.blocks.columns(base + it.p * bytes, L.n1, L.ps1 * bytes, L.n0, w.address + it.a * 8);
      else w.js(x.data, acc, L, it.p, it.a);
    } while (it.next());
  }
  const o = out.data;
  for (let i = 0; i < size; i++) o[out.offset + i] = acc[i]!;
}

function reduceBox(kind: ReduceKind, x: TensorView, reduced: readonly boolean[], out: TensorView, partials: boolean): void {
  const size = sizeOf(out.shape);
  const acc = new Float64Array(size).fill(IDENTITY[kind]);
  if (sizeOf(x.shape) > 0) {
    const L = loopNest(x, reduced, partials);
    // One call site per kind keeps each block function monomorphic.
    switch (kind) {
      case 'sum': runBlocks(sumBlock, x, L, acc); break;
      case 'prod': runBlocks(prodBlock, x, L, acc); break;
      case 'max': runBlocks(maxBlock, x, L, acc); break;
      case 'min': runBlocks(minBlock, x, L, acc); break;
      case 'all': runBlocks(allBlock, x, L, acc); break;
      case 'any': runBlocks(anyBlock, x, L, acc); break;
    }
  }
  const o = out.data;
  for (let i = 0; i < size; i++) o[out.offset + i] = acc[i]!;
}

// argmax and argmin: the first extremum wins ties, and the first NaN wins over everything (once
// the best is NaN nothing replaces it).
function argmaxBlock(d: TypedArray, best: Float64Array, where: Int32Array, L: LoopNest, p1: number, a1: number, q1: number): void {
  const { n1, ps1, as1, qs1, n0, ps0, as0, qs0 } = L;
  for (let i = 0; i < n1; i++, p1 += ps1, a1 += as1, q1 += qs1) {
    let p = p1;
    let q = q1;
    if (as0 === 0) {
      let b = best[a1]!;
      let w = where[a1]!;
      for (let j = 0; j < n0 && b === b; j++, p += ps0, q += qs0) {
        const v = d[p]!;
        if (v > b || v !== v) {
          b = v;
          w = q;
        }
      }
      best[a1] = b;
      where[a1] = w;
    } else {
      let a = a1;
      for (let j = 0; j < n0; j++, p += ps0, a += as0, q += qs0) {
        const v = d[p]!;
        const b = best[a]!;
        if (b === b && (v > b || v !== v)) {
          best[a] = v;
          where[a] = q;
        }
      }
    }
  }
}

function argminBlock(d: TypedArray, best: Float64Array, where: Int32Array, L: LoopNest, p1: number, a1: number, q1: number): void {
  const { n1, ps1, as1, qs1, n0, ps0, as0, qs0 } = L;
  for (let i = 0; i < n1; i++, p1 += ps1, a1 += as1, q1 += qs1) {
    let p = p1;
    let q = q1;
    if (as0 === 0) {
      let b = best[a1]!;
      let w = where[a1]!;
      for (let j = 0; j < n0 && b === b; j++, p += ps0, q += qs0) {
        const v = d[p]!;
        if (v < b || v !== v) {
          b = v;
          w = q;
        }
      }
      best[a1] = b;
      where[a1] = w;
    } else {
      let a = a1;
      for (let j = 0; j < n0; j++, p += ps0, a += as0, q += qs0) {
        const v = d[p]!;
        const b = best[a]!;
        if (b === b && (v < b || v !== v)) {
          best[a] = v;
          where[a] = q;
        }
      }
    }
  }
}

/**
 * The position of the largest (`max`) or smallest element of each reduced block, counted in C
 * order over the reduced axes. Every reduced axis must have a length above 0. A range selects
 * output elements as in `reduceInto`.
 */
export function argReduceInto(kind: 'max' | 'min', x: TensorView, reduced: readonly boolean[], out: TensorView, range?: Range): void {
  // The accumulators of the WebAssembly block fit the thread's block for ARG_OUTPUTS outputs at a time.
  forEachBox(x, reduced, out, range, (xb, ob) => argReduceBox(kind, xb, reduced, ob), ARG_OUTPUTS);
}

/** Outputs an arg reduction accumulates at a time: a float64 best and an int32 position each, in the thread's block. */
const ARG_OUTPUTS = Math.floor(WASM_PACK_BYTES / 12);

function argReduceBox(kind: 'max' | 'min', x: TensorView, reduced: readonly boolean[], out: TensorView): void {
  const size = sizeOf(out.shape);
  const wasm = size <= ARG_OUTPUTS ? wasmReduction(kind, x) : undefined;
  // With WebAssembly, the accumulators live in the thread's block: best values, then positions.
  const best = wasm ? new Float64Array(wasm.memory.buffer, wasm.address, size) : new Float64Array(size);
  const where = wasm ? new Int32Array(wasm.memory.buffer, wasm.address + 8 * size, size) : new Int32Array(size);
  best.fill(kind === 'max' ? -Infinity : Infinity);
  where.fill(0);
  if (sizeOf(x.shape) > 0) {
    const L = loopNest(x, reduced, false);
    const it = new Odometer(L, x.offset);
    const block = kind === 'max' ? argmaxBlock : argminBlock;
    const bytes = x.data.BYTES_PER_ELEMENT;
    // Contiguous reduced rows run as the WebAssembly block, other layouts as the JS one.
    const rows = wasm && L.ps0 === 1 && L.as0 === 0 ? wasm.blocks.argRows : undefined;
    do {
      if (rows) rows(x.data.byteOffset + it.p * bytes, L.n1, L.ps1 * bytes, L.n0, best.byteOffset + it.a * 8, where.byteOffset + it.a * 4, L.as1, it.q, L.qs0, L.qs1);
      else block(x.data, best, where, L, it.p, it.a, it.q);
    } while (it.next());
  }
  const o = out.data;
  for (let i = 0; i < size; i++) o[out.offset + i] = where[i]!;
}

// Chunks. Output elements [start, end) in C order over the kept axes split into at most
// 2 * (kept axes) boxes: leading kept axes fixed, one kept axis cut to an interval, the trailing
// ones whole. A box is a contiguous run of the output and a sub-view of `x` that keeps every
// reduced axis whole, so each output element is reduced by the same loops in the same order
// whatever the split: chunked results are bitwise those of one call.

type BoxVisitor = (x: TensorView, out: TensorView) => void;

/**
 * Visits the boxes of output elements `range` (all by default); with `piece`, the range is cut
 * into runs of at most `piece` outputs first (accumulators of bounded room: pieces reduce bitwise
 * as one call does, each output element being reduced whole).
 */
function forEachBox(x: TensorView, reduced: readonly boolean[], out: TensorView, range: Range | undefined, visit: BoxVisitor, piece?: number): void {
  const size = sizeOf(out.shape);
  const start = range?.start ?? 0;
  const end = Math.min(range?.end ?? size, size);
  if (piece !== undefined && end - start > piece) {
    for (let from = start; from < end; from += piece) forEachBox(x, reduced, out, { start: from, end: Math.min(end, from + piece) }, visit);
    return;
  }
  if (start === 0 && end === size) {
    visit(x, out);
    return;
  }
  if (start >= end) return;
  const kept: number[] = [];
  reduced.forEach((r, a) => {
    if (!r) kept.push(a);
  });
  // inner[k]: output elements per step of kept axis k.
  const inner = new Array<number>(kept.length);
  for (let k = kept.length - 1, acc = 1; k >= 0; k--) {
    inner[k] = acc;
    acc *= x.shape[kept[k]!]!;
  }
  let pos = start;
  while (pos < end) {
    // The outermost kept axis at whose step boundary `pos` lies with room for one whole step
    // (the innermost always qualifies).
    let k = 0;
    while (pos % inner[k]! !== 0 || end - pos < inner[k]!) k++;
    const shape = [...x.shape];
    let offset = x.offset;
    let rem = pos;
    for (let j = 0; j < k; j++) {
      const i = Math.floor(rem / inner[j]!);
      rem -= i * inner[j]!;
      offset += i * x.stride[kept[j]!]!;
      shape[kept[j]!] = 1;
    }
    const first = rem / inner[k]!;
    const count = Math.min(x.shape[kept[k]!]! - first, Math.floor((end - pos) / inner[k]!));
    offset += first * x.stride[kept[k]!]!;
    shape[kept[k]!] = count;
    const outShape = kept.map((a) => shape[a]!);
    visit({ data: x.data, offset, shape, stride: x.stride }, { data: out.data, offset: out.offset + pos, shape: outShape, stride: contiguousStrides(outShape) });
    pos += count * inner[k]!;
  }
}
