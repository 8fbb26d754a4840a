// Whole rows by int32 indices in WebAssembly: the gather copies the row each index picks, 16 bytes
// at a time, into the next row of the output (an embedding lookup); the scatter adds (float32) or
// sets each update row into the row its index picks (the lookup's gradient). The JS loop of gather.ts copied
// element by element at about 3 ns each; rows of 512 bytes move at memory speed here. Bits are
// copied as they are, so any element type works whose rows are a multiple of 4 bytes.
import { Body, I32, ModuleBuilder } from './wasm-emit.js';
import { instanceFor } from './wasm-instances.js';

/**
 * rows(x, rowStride, length, index, from, to, out, rowBytes): for k in [from, to), the row of x
 * (byte address) at index[k] (int32 at byte address `index`; negative counts from `length`),
 * rowStride bytes apart, copied to out + (k - from) rowBytes. Returns -1, or the first k whose
 * index is outside [-length, length), having copied the rows before it.
 */
export type GatherRows = (x: number, rowStride: number, length: number, index: number, from: number, to: number, out: number, rowBytes: number) => number;

/**
 * Local i = the int32 index[k] (index a byte address), wrapped once if negative; a function
 * returns k at once when i is still outside [0, length) (checked as unsigned).
 */
function readIndex(f: Body, index: number, k: number, i: number, length: number): void {
  f.get(index).get(k).i32(2).op('i32.shl').i32Add().mem('i32.load').set(i);
  f.get(i).i32(0).op('i32.lt_s').if();
  f.get(i).get(length).i32Add().set(i);
  f.end();
  f.get(i).get(length).op('i32.ge_u').if();
  f.get(k).op('return');
  f.end();
}

function rowsBody(): Body {
  const f = new Body([I32, I32, I32, I32, I32, I32, I32, I32], [I32]);
  const [x, rowStride, length, index, from, to, out] = [0, 1, 2, 3, 4, 5, 6];
  const rowBytes = 7;
  const [k, i, src, dst, end] = [...Array(5)].map(() => f.local(I32));
  f.get(from).set(k).get(out).set(dst);
  f.block().loop();
  f.get(k).get(to).op('i32.ge_s').brIf(1);
  readIndex(f, index, k, i, length);
  f.get(x).get(i).get(rowStride).op('i32.mul').i32Add().set(src);
  f.get(dst).get(rowBytes).i32Add().set(end);
  f.copyRun(dst, src, end, 4);
  f.get(k).i32(1).i32Add().set(k).br(0);
  f.end().end();
  f.i32(-1);
  return f;
}

/**
 * scatter(out, rowFrom, rowTo, head, tail, length, index, count, y, rowBytes): for k in [0, count),
 * in order, the row of y at y + k rowBytes added to (float32 lanes) or set into the row of out at
 * index[k] (int32; negative counts from `length`), when that row is in [rowFrom, rowTo): from byte
 * `head` on in row rowFrom and up to byte `tail` in row rowTo - 1 (a chunk's ends), whole between.
 * Returns -1, or the first k whose index is outside [-length, length).
 */
export type ScatterRows = (out: number, rowFrom: number, rowTo: number, head: number, tail: number, length: number, index: number, count: number, y: number, rowBytes: number) => number;

function scatterBody(add: boolean): Body {
  const f = new Body(Array<typeof I32>(10).fill(I32), [I32]);
  const [out, rowFrom, rowTo, head, tail, length, index, count, y, rowBytes] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  const [k, i, src, dst, end, row] = [...Array(6)].map(() => f.local(I32));
  f.block().loop();
  f.get(k).get(count).op('i32.ge_s').brIf(1);
  readIndex(f, index, k, i, length);
  f.get(i).get(rowFrom).op('i32.ge_s').get(i).get(rowTo).op('i32.lt_s').op('i32.and').if();
  // Bytes [lo, hi) of the row: [head, .) in the first row, [., tail) in the last.
  f.get(out).get(i).get(rowBytes).op('i32.mul').i32Add().set(row);
  f.get(row).get(rowBytes).i32Add().set(end);
  f.get(i).get(rowTo).i32(1).i32Sub().op('i32.eq').if();
  f.get(row).get(tail).i32Add().set(end);
  f.end();
  f.i32(0).set(dst);
  f.get(i).get(rowFrom).op('i32.eq').if();
  f.get(head).set(dst);
  f.end();
  f.get(y).get(k).get(rowBytes).op('i32.mul').i32Add().get(dst).i32Add().set(src);
  f.get(row).get(dst).i32Add().set(dst);
  if (add) {
    f.block().loop();
    f.get(end).get(dst).i32Sub().i32(16).op('i32.lt_s').brIf(1);
    f.get(dst).get(dst).v128Load().get(src).v128Load().op('f32x4.add').v128Store();
    f.get(dst).i32(16).i32Add().set(dst).get(src).i32(16).i32Add().set(src).br(0);
    f.end().end();
    f.block().loop();
    f.get(dst).get(end).op('i32.ge_u').brIf(1);
    f.get(dst).get(dst).f32Load().get(src).f32Load().op('f32.add').f32Store();
    f.get(dst).i32(4).i32Add().set(dst).get(src).i32(4).i32Add().set(src).br(0);
    f.end().end();
  } else f.copyRun(dst, src, end, 4);
  f.end();
  f.get(k).i32(1).i32Add().set(k).br(0);
  f.end().end();
  f.i32(-1);
  return f;
}

/** The row kernels over `memory`: the gather, the float32 adds and the sets of 4-byte elements. */
export function rowKernelsFor(memory: WebAssembly.Memory): { readonly gather: GatherRows; readonly add: ScatterRows; readonly set: ScatterRows } {
  return instanceFor(
    memory,
    'index-rows',
    () => {
      const m = new ModuleBuilder();
      m.export('gather', m.add(rowsBody()));
      m.export('add', m.add(scatterBody(true)));
      m.export('set', m.add(scatterBody(false)));
      return m.bytes();
    },
    (e) => ({ gather: e['gather'] as GatherRows, add: e['add'] as ScatterRows, set: e['set'] as ScatterRows }),
  );
}
