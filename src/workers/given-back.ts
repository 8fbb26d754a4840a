// The memory of outputs the caller owns that weft may take back (weft.release): arrays outputs are
// copied out into, made without zeroing, and the memory of outputs given back, waiting (per
// thread, by byte length) for the next output of its size instead of fresh pages.
import { STORAGE, type Dtype, type TypedArray } from '../kernels/dtype.js';
import { isSharedOutput, unzeroedBuffer } from './shared-memory.js';

/**
 * Arrays of at least this many bytes that the caller gets are made without zeroing, from memory
 * the allocator hands back warm, or from memory the caller gave back (takeBack). A zeroed array
 * of that size is fresh pages from the kernel, each mapped at its first write: copying W1's 16 MiB
 * output into one cost the calling thread 20 ms a call here, against 1-2 ms into warm memory
 * (docs/performance.md, "Outputs you give back").
 */
export const UNZEROED_BYTES = 1 << 16;

/** At most this many bytes of given-back memory wait for reuse; beyond it, nothing is taken back. */
export const MAX_KEPT_BYTES = 1 << 28;

/** Buffers this thread made for outputs, which takeBack may take (never a user's own memory). */
const madeForCaller = new WeakSet<ArrayBuffer>();
/** Given-back buffers by byte length, and their total. */
const kept = new Map<number, ArrayBuffer[]>();
let keptBytes = 0;
/** Byte lengths of outputs the caller has given back (see givenBack). */
const givenBackLengths = new Set<number>();

/**
 * Whether the caller gives outputs of `bytes` back. Such an output is then better copied out of
 * the pool's memory into memory takeBack can take (the next call's warm pages) than written by
 * its kernel into memory of its own: a SharedArrayBuffer, which takeBack cannot take, or zeroed
 * fresh pages. Once given back, a length stays so for the thread (every function's outputs).
 */
export function givenBack(bytes: number): boolean {
  return givenBackLengths.has(bytes);
}

/**
 * A new array of `n` elements of `dtype`, for an output the caller will own, whose every element
 * the caller of this function writes before anyone reads it (copies, never kernels: a kernel may
 * leave elements unwritten, as AllocEmpty does). Its contents are undefined until then: an
 * earlier output's, or the allocator's. An ordinary ArrayBuffer of exactly its size, at offset 0.
 */
export function unzeroedArray(dtype: Dtype, n: number): TypedArray {
  const Storage = STORAGE[dtype];
  const bytes = n * Storage.BYTES_PER_ELEMENT;
  if (bytes < UNZEROED_BYTES) return new Storage(n);
  let buffer = kept.get(bytes)?.pop();
  if (buffer) keptBytes -= bytes;
  else buffer = unzeroedBuffer(bytes);
  madeForCaller.add(buffer);
  return new Storage(buffer, 0, n);
}

/** A new zeroed buffer of `bytes` for an output that a kernel writes directly, which takeBack may take. */
export function zeroedBuffer(bytes: number): ArrayBuffer {
  const buffer = new ArrayBuffer(bytes);
  madeForCaller.add(buffer);
  return buffer;
}

/** Whether takeBack may take `buffer`: made for an output on this thread, and not detached. */
function isTakeable(buffer: ArrayBufferLike): buffer is ArrayBuffer {
  return buffer instanceof ArrayBuffer && madeForCaller.has(buffer) && buffer.byteLength > 0;
}

/**
 * Takes back the memory of `buffer` if this thread made it for an output and room is left: the
 * buffer is detached (every array over it becomes empty, so a later use cannot read memory
 * another output now holds) and its memory waits for the next output of the same size. A
 * SharedArrayBuffer made for an output is left alone (another thread may hold it), but its length
 * is noted (givenBack). Returns the bytes taken back, 0 when the buffer is left as it is.
 */
export function takeBack(buffer: ArrayBufferLike): number {
  if (isSharedOutput(buffer)) {
    givenBackLengths.add(buffer.byteLength);
    return 0;
  }
  if (!isTakeable(buffer)) return 0;
  const bytes = buffer.byteLength;
  givenBackLengths.add(bytes);
  if (keptBytes + bytes > MAX_KEPT_BYTES) return 0;
  const moved = structuredClone(buffer, { transfer: [buffer] });
  madeForCaller.delete(buffer);
  let list = kept.get(bytes);
  if (!list) kept.set(bytes, (list = []));
  list.push(moved);
  keptBytes += bytes;
  return bytes;
}

/** The bytes of given-back memory waiting for reuse (tests read it). */
export function keptBytesNow(): number {
  return keptBytes;
}

/** Drops every given-back buffer and forgets the given-back lengths (tests start from it). */
export function dropKept(): void {
  kept.clear();
  keptBytes = 0;
  givenBackLengths.clear();
}
