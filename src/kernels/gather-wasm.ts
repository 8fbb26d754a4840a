// Gathering whole rows in WebAssembly: for each int32 index, the row it picks is copied 16 bytes
// at a time into the next row of the output (an embedding lookup). The JS loop of gather.ts copied
// element by element at about 3 ns each; rows of 512 bytes move at memory speed here. Bits are
// copied as they are, so any element type works.
import { Body, I32, ModuleBuilder } from './wasm-emit.js';
import { instanceFor } from './wasm-instances.js';

/**
 * rows(x, rowStride, length, index, from, to, out, rowBytes): for k in [from, to), the row of x
 * (byte address) at index[k] (int32 at byte address `index`; negative counts from `length`),
 * rowStride bytes apart, copied to out + (k - from) rowBytes. Returns -1, or the first k whose
 * index is outside [-length, length), having copied the rows before it.
 */
export type GatherRows = (x: number, rowStride: number, length: number, index: number, from: number, to: number, out: number, rowBytes: number) => number;

function rowsBody(): Body {
  const f = new Body([I32, I32, I32, I32, I32, I32, I32, I32], [I32]);
  const [x, rowStride, length, index, from, to, out] = [0, 1, 2, 3, 4, 5, 6];
  const rowBytes = 7;
  const [k, i, src, dst, end] = [...Array(5)].map(() => f.local(I32));
  f.get(from).set(k).get(out).set(dst);
  f.block().loop();
  f.get(k).get(to).op('i32.ge_s').brIf(1);
  // i = index[k], wrapped once if negative, then checked as unsigned against the length.
  f.get(index).get(k).i32(2).op('i32.shl').i32Add().mem('i32.load').set(i);
  f.get(i).i32(0).op('i32.lt_s').if();
  f.get(i).get(length).i32Add().set(i);
  f.end();
  f.get(i).get(length).op('i32.ge_u').if();
  f.get(k).op('return');
  f.end();
  f.get(x).get(i).get(rowStride).op('i32.mul').i32Add().set(src);
  f.get(dst).get(rowBytes).i32Add().set(end);
  f.copyRun(dst, src, end, 4);
  f.get(k).i32(1).i32Add().set(k).br(0);
  f.end().end();
  f.i32(-1);
  return f;
}

let bytesCache: Uint8Array<ArrayBuffer> | undefined;

/** The row gatherer over `memory`. */
export function gatherRowsFor(memory: WebAssembly.Memory): GatherRows {
  return instanceFor(
    memory,
    'gather-rows',
    () => {
      if (bytesCache) return bytesCache;
      const m = new ModuleBuilder();
      m.export('rows', m.add(rowsBody()));
      return (bytesCache = m.bytes());
    },
    (e) => e['rows'] as GatherRows,
  );
}
