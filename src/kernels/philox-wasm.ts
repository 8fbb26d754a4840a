// Philox4x32-10 in WebAssembly, for the first block of many consecutive elements at once: the
// 32 x 32 -> 64-bit products are one i64.mul each (JS needs several float operations for a high
// word), so a block costs a few nanoseconds. Each thread fills a small memory of its own with the
// blocks of elements [i, i + count) and the draws read them; the numbers are Philox's, the same
// as philox.ts computes.
import { Body, I32, I64, ModuleBuilder } from './wasm-emit.js';

/** Blocks one fill writes (16 bytes each, in one 64 KiB page). */
export const FILL_BLOCKS = 4096;

const M0 = 0xd2511f53n;
const M1 = 0xcd9e8d57n;
const W0 = 0x9e3779b9 | 0;
const W1 = 0xbb67ae85 | 0;

/** fill(count, base0, base1, sub, k0, k1): the blocks of counters (base + i, sub, 0), i < count, at byte 16 i. */
function fillBody(): Body {
  const b = new Body([I32, I32, I32, I32, I32, I32]);
  const [count, base0, base1, sub, k0, k1] = [0, 1, 2, 3, 4, 5];
  const i = b.local(I32);
  const [x0, x1, x2, x3, ka, kb] = [b.local(I32), b.local(I32), b.local(I32), b.local(I32), b.local(I32), b.local(I32)];
  const [p0, p1, pos] = [b.local(I64), b.local(I64), b.local(I64)];
  b.i32(0).set(i);
  b.block().loop();
  b.get(i).get(count).op('i32.ge_u').brIf(1);
  // The counter: the 64-bit position base + i, then sub and 0.
  b.get(base0).op('i64.extend_i32_u').get(base1).op('i64.extend_i32_u').i64(32n).op('i64.shl').op('i64.or').get(i).op('i64.extend_i32_u').op('i64.add').set(pos);
  b.get(pos).op('i32.wrap_i64').set(x0);
  b.get(pos).i64(32n).op('i64.shr_u').op('i32.wrap_i64').set(x1);
  b.get(sub).set(x2);
  b.i32(0).set(x3);
  b.get(k0).set(ka);
  b.get(k1).set(kb);
  for (let round = 0; round < 10; round++) {
    if (round > 0) {
      b.get(ka).i32(W0).op('i32.add').set(ka);
      b.get(kb).i32(W1).op('i32.add').set(kb);
    }
    b.get(x0).op('i64.extend_i32_u').i64(M0).op('i64.mul').set(p0);
    b.get(x2).op('i64.extend_i32_u').i64(M1).op('i64.mul').set(p1);
    // x0 = hi(p1) ^ x1 ^ ka, x1 = lo(p1), x2 = hi(p0) ^ x3 ^ kb, x3 = lo(p0).
    b.get(p1).i64(32n).op('i64.shr_u').op('i32.wrap_i64').get(x1).op('i32.xor').get(ka).op('i32.xor').set(x0);
    b.get(p1).op('i32.wrap_i64').set(x1);
    b.get(p0).i64(32n).op('i64.shr_u').op('i32.wrap_i64').get(x3).op('i32.xor').get(kb).op('i32.xor').set(x2);
    b.get(p0).op('i32.wrap_i64').set(x3);
  }
  for (const [k, x] of [x0, x1, x2, x3].entries()) b.get(i).i32(4).op('i32.shl').get(x).mem('i32.store', 4 * k);
  b.get(i).i32(1).op('i32.add').set(i);
  b.br(0).end().end();
  return b;
}

type Fill = (count: number, base0: number, base1: number, sub: number, k0: number, k1: number) => void;

let filler: { readonly fill: Fill; readonly words: Uint32Array } | undefined | null;

/**
 * This thread's filler: `fill` writes blocks into `words` (4 per element). Null where
 * WebAssembly with shared memory is not available; the draws then compute blocks in JS.
 */
export function philoxFiller(): { readonly fill: Fill; readonly words: Uint32Array } | null {
  if (filler !== undefined) return filler;
  try {
    const module = new ModuleBuilder();
    module.export('fill', module.add(fillBody()));
    // One page, and no more: a shared memory reserves its maximum up front (the module's import allows 1 to 65536 pages).
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
    const exports = new WebAssembly.Instance(new WebAssembly.Module(module.bytes()), { env: { memory } }).exports;
    filler = { fill: exports['fill'] as Fill, words: new Uint32Array(memory.buffer, 0, 4 * FILL_BLOCKS) };
  } catch {
    filler = null;
  }
  return filler;
}
