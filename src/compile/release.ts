// weft.release(...outputs): gives output arrays back to weft, so that later outputs of the same
// size reuse their memory instead of fresh pages (which cost 10-12 µs per 4 KiB page on the
// VMs measured here: W2's 64 MiB output, 190 ms a call). Explicit, because nothing else is safe.
import type { TypedArray } from '../kernels/dtype.js';
import type { NdArray } from '../tensor/core/ndarray.js';
import { takeBack } from '../workers/given-back.js';

/**
 * Gives the memory of arrays that compiled functions returned back to weft, for later outputs of
 * the same size. Each array's buffer is detached: every array over it (the ndarray, its typed
 * array, subarrays) becomes empty, so a use after release reads nothing rather than another
 * call's values. Arrays whose memory weft did not make for an output (your own arrays, borrowed
 * outputs, pool arrays, small outputs) are left as they are, and so is an output the workers
 * wrote in shared memory (another thread may hold it); later outputs of its size are then copied
 * into memory that release can take. Returns the bytes taken back.
 *
 * A FinalizationRegistry cannot do this on its own: memory is reused only once nothing can
 * reach it, and a collected ArrayBuffer's memory is freed with it.
 */
export function release(...arrays: ReadonlyArray<NdArray | TypedArray>): number {
  // Every argument is checked before any buffer is detached, so a bad one changes nothing.
  const buffers = arrays.map((a) => {
    const data = ArrayBuffer.isView(a) ? a : (a as NdArray | undefined)?.data;
    if (!ArrayBuffer.isView(data)) throw new TypeError(`weft.release: expected an output of a compiled function (an ndarray or a typed array), got ${describe(a)}`);
    return data.buffer;
  });
  return buffers.reduce((bytes, b) => bytes + takeBack(b), 0);
}

function describe(x: unknown): string {
  if (x === null || x === undefined) return String(x);
  if (typeof x === 'function') return 'a function';
  return typeof x === 'object' ? (x.constructor?.name ?? 'an object') : `${typeof x} ${String(x)}`;
}
