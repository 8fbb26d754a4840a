// Memory the caller will own: fresh SharedArrayBuffers for large outputs workers write, with their
// announcement to the garbage collector; the arrays outputs are copied out into; and the memory of
// outputs the caller gave back (weft.release), waiting for the next output of its size. V8 does not
// count a SharedArrayBuffer as memory pressure, so dropped outputs would pile up
// (docs/performance.md); a dropped plain Buffer of the same size, which V8 counts, is the
// announcement (Node's allocUnsafeSlow: not zeroed, not touched). Browsers get none, as they have
// not shown the problem here.
import { STORAGE, type Dtype, type TypedArray } from '../kernels/dtype.js';

const NodeBuffer = (globalThis as { Buffer?: { allocUnsafeSlow(size: number): Uint8Array } }).Buffer;

/** Tells this thread's garbage collector of `bytes` of SharedArrayBuffers it now holds (see above). */
export function announceShared(bytes: number): void {
  try {
    NodeBuffer?.allocUnsafeSlow(bytes);
  } catch {
    // Only a hint: a buffer too large for Buffer (or no memory for one) changes nothing.
  }
}

/** SharedArrayBuffers made for outputs (freshSharedBuffer), which takeBack notes but cannot take. */
const sharedForCaller = new WeakSet<SharedArrayBuffer>();

/** A new SharedArrayBuffer of `bytes` for an output, announced to the garbage collector. */
export function freshSharedBuffer(bytes: number): SharedArrayBuffer {
  const buffer = new SharedArrayBuffer(bytes);
  announceShared(bytes);
  sharedForCaller.add(buffer);
  return buffer;
}

/**
 * Arrays of at least this many bytes that the caller gets are made without zeroing, from memory
 * the allocator hands back warm, or from memory the caller gave back (takeBack). A zeroed array
 * of that size is fresh pages from the kernel, each mapped at its first write: copying W1's 16 MiB
 * output into one cost the calling thread 20 ms a call here, against 1-2 ms into warm memory
 * (docs/performance.md, "Outputs").
 */
export const UNZEROED_BYTES = 1 << 16;

/** At most this many bytes of given-back memory wait for reuse; beyond it, nothing is taken back. */
export const KEPT_BYTES = 1 << 28;

/** Buffers this thread made for outputs, which takeBack may take (never a user's own memory). */
const madeForCaller = new WeakSet<ArrayBuffer>();
/** Given-back buffers by byte length, and their total. */
const kept = new Map<number, ArrayBuffer[]>();
let keptBytes = 0;
/** Byte lengths of outputs the caller has given back (see givenBack). */
const givenBackLengths = new Set<number>();

/**
 * Whether the caller gives outputs of `bytes` back: such an output is then better copied into
 * memory takeBack can take (the next call's warm pages) than written by the workers into a fresh
 * SharedArrayBuffer, which takeBack cannot take.
 */
export function givenBack(bytes: number): boolean {
  return givenBackLengths.has(bytes);
}

/**
 * A new array of `n` elements of `dtype`, for an output the caller will own, whose every element
 * the caller of this function writes before anyone reads it (its contents are undefined until
 * then). An ordinary ArrayBuffer of exactly its size, at offset 0.
 */
export function unzeroedArray(dtype: Dtype, n: number): TypedArray {
  const Storage = STORAGE[dtype];
  const bytes = n * Storage.BYTES_PER_ELEMENT;
  if (bytes < UNZEROED_BYTES) return new Storage(n);
  let buffer = kept.get(bytes)?.pop();
  if (buffer) keptBytes -= bytes;
  else buffer = NodeBuffer ? (NodeBuffer.allocUnsafeSlow(bytes).buffer as ArrayBuffer) : new ArrayBuffer(bytes);
  madeForCaller.add(buffer);
  return new Storage(buffer, 0, n);
}

/**
 * Takes back the memory of `buffer` if this thread made it for an output (unzeroedArray) and
 * room is left: the buffer is detached (every array over it becomes empty, so a later use
 * cannot read memory another output now holds) and its memory waits for the next output of the
 * same size. Returns the bytes taken back, 0 when the buffer is left as it is.
 */
export function takeBack(buffer: ArrayBufferLike): number {
  if (typeof SharedArrayBuffer !== 'undefined' && buffer instanceof SharedArrayBuffer && sharedForCaller.has(buffer)) {
    // Another thread may hold it: it is left alone, but later outputs of its size are copied out.
    givenBackLengths.add(buffer.byteLength);
    return 0;
  }
  if (!(buffer instanceof ArrayBuffer) || !madeForCaller.has(buffer)) return 0;
  const bytes = buffer.byteLength;
  if (bytes === 0 || keptBytes + bytes > KEPT_BYTES) return 0;
  madeForCaller.delete(buffer);
  givenBackLengths.add(bytes);
  const moved = structuredClone(buffer, { transfer: [buffer] });
  let list = kept.get(bytes);
  if (!list) kept.set(bytes, (list = []));
  list.push(moved);
  keptBytes += bytes;
  return bytes;
}

/** The bytes of given-back memory waiting for reuse. */
export function keptBytesNow(): number {
  return keptBytes;
}

/** Drops every given-back buffer and forgets the given-back lengths (for tests). */
export function dropKept(): void {
  kept.clear();
  keptBytes = 0;
  givenBackLengths.clear();
}
