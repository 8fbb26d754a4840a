// The rows of im2col in WebAssembly: for one row of the patches matrix (one tap of one channel of
// one image), the output rows' runs copied 16 bytes at a time (element by element for strides)
// and the padding filled with zeros. (memory.copy and memory.fill cost more than they save on
// runs as short as an output row: V8 calls out for them.) Elements are copied as bits (4 or 8 bytes),
// so any dtype of those sizes is exact. Used for views in the arena; the JS loop otherwise.
import { I32, V128, Body, ModuleBuilder } from './wasm-emit.js';
import { instanceFor } from './wasm-instances.js';

/**
 * row(plane, rowBase, from, to, i0, wo, H, ybase, sh, in0, in1, lineBytes, shiftBytes, stepBytes):
 * elements [from, to) of the row at byte address rowBase, element q being output position
 * (i, j) = (q / wo, q % wo) (i0 = from / wo), read from the image plane at `plane` at row
 * y = i * sh + ybase (zeros where y is outside [0, H)) and column byte offset shiftBytes + j *
 * stepBytes, where columns [in0, in1) are inside the row (zeros elsewhere).
 */
export type Im2colRow = (
  plane: number, rowBase: number, from: number, to: number, i0: number, wo: number, H: number, ybase: number, sh: number,
  in0: number, in1: number, lineBytes: number, shiftBytes: number, stepBytes: number,
) => void;

function rowBody(size: 4 | 8): Body {
  const b = new Body(Array<typeof I32>(14).fill(I32));
  const [plane, rowBase, from, to, i0, wo, H, ybase, sh, in0full, in1full, lineBytes, shiftBytes, stepBytes] = [...Array(14).keys()];
  const [q, i, j0, j1, at, y, in0, in1, line, j, d, e, src] = [...Array(13)].map(() => b.local(I32));
  const zero = b.local(V128);
  const shift = size === 4 ? 2 : 3;
  const [load, store] = size === 4 ? (['i32.load', 'i32.store'] as const) : (['i64.load', 'i64.store'] as const);
  /** Pushes local v * size (a byte count). */
  const bytes = (v: number): void => void b.get(v).i32(shift).op('i32.shl');
  /** d = at + lo * size, e = at + hi * size. */
  const span = (lo: number, hi: number): void => {
    b.get(at);
    bytes(lo);
    b.i32Add().set(d).get(at);
    bytes(hi);
    b.i32Add().set(e);
  };
  /** Zeros over bytes [d, e): 16 at a time, then one element at a time. */
  const zeros = (): void => {
    b.block().loop();
    b.get(e).get(d).i32Sub().i32(16).op('i32.lt_s').brIf(1);
    b.get(d).get(zero).v128Store();
    b.get(d).i32(16).i32Add().set(d).br(0);
    b.end().end();
    b.block().loop();
    b.get(d).get(e).op('i32.ge_u').brIf(1);
    b.get(d).i32(0);
    if (size === 8) b.op('i64.extend_i32_u');
    b.mem(store);
    b.get(d).i32(size).i32Add().set(d).br(0);
    b.end().end();
  };
  /** local dst = min(max(v, lo), hi) with lo <= hi. */
  const clamp = (dst: number, v: number, lo: number, hi: number): void => {
    b.get(v).get(lo).get(v).get(lo).op('i32.gt_s').op('select').set(dst);
    b.get(dst).get(hi).get(dst).get(hi).op('i32.lt_s').op('select').set(dst);
  };
  b.get(from).set(q).get(i0).set(i);
  b.block().loop();
  b.get(q).get(to).op('i32.ge_s').brIf(1);
  // This output row's columns [j0, j1), and the address of its column 0.
  b.get(q).get(i).get(wo).op('i32.mul').i32Sub().set(j0);
  b.get(j0).get(to).get(q).i32Sub().i32Add().set(j1);
  b.get(j1).get(wo).get(j1).get(wo).op('i32.lt_s').op('select').set(j1);
  b.get(rowBase).get(q).get(j0).i32Sub().i32(shift).op('i32.shl').i32Add().set(at);
  b.get(i).get(sh).op('i32.mul').get(ybase).i32Add().set(y);
  b.get(y).get(H).op('i32.ge_u').if();
  span(j0, j1);
  zeros();
  b.else();
  clamp(in0, in0full, j0, j1);
  clamp(in1, in1full, in0, j1);
  span(j0, in0);
  zeros();
  span(in1, j1);
  zeros();
  b.get(plane).get(y).get(lineBytes).op('i32.mul').i32Add().get(shiftBytes).i32Add().set(line);
  span(in0, in1);
  b.get(stepBytes).i32(size).op('i32.eq').if();
  // A run of consecutive elements: 16 bytes at a time, then the rest one by one.
  b.get(line);
  bytes(in0);
  b.i32Add().set(src);
  b.copyRun(d, src, e, size);
  b.else();
  b.get(in0).set(j).block().loop();
  b.get(j).get(in1).op('i32.ge_s').brIf(1);
  b.get(at);
  bytes(j);
  b.i32Add().get(line).get(j).get(stepBytes).op('i32.mul').i32Add().mem(load).mem(store);
  b.get(j).i32(1).i32Add().set(j).br(0);
  b.end().end();
  b.end();
  b.end();
  b.get(q).get(j1).get(j0).i32Sub().i32Add().set(q);
  b.get(i).i32(1).i32Add().set(i).br(0);
  b.end().end();
  return b;
}

let bytesCache: Uint8Array<ArrayBuffer> | undefined;

function moduleBytes(): Uint8Array<ArrayBuffer> {
  if (bytesCache) return bytesCache;
  const m = new ModuleBuilder();
  m.export('row4', m.add(rowBody(4)));
  m.export('row8', m.add(rowBody(8)));
  return (bytesCache = m.bytes());
}

/** The row function for elements of `size` bytes over `memory`. */
export function im2colRowFor(memory: WebAssembly.Memory, size: 4 | 8): Im2colRow {
  return instanceFor(memory, 'im2col', moduleBytes, (e) => ({ row4: e['row4'] as Im2colRow, row8: e['row8'] as Im2colRow }))[size === 4 ? 'row4' : 'row8'];
}
