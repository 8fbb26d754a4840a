// Fresh SharedArrayBuffers for large outputs workers write, and their announcement to the garbage
// collector (given-back.ts holds the caller's other output memory). V8 does not count a
// SharedArrayBuffer as memory pressure, so dropped outputs would pile up (docs/performance.md); a
// dropped plain Buffer of the same size, which V8 counts, is the announcement (Node's
// allocUnsafeSlow: not zeroed, not touched). Browsers get none, as they have not shown the problem.
const NodeBuffer = (globalThis as { Buffer?: { allocUnsafeSlow(size: number): Uint8Array } }).Buffer;

/** Tells this thread's garbage collector of `bytes` of SharedArrayBuffers it now holds (see above). */
export function announceShared(bytes: number): void {
  try {
    NodeBuffer?.allocUnsafeSlow(bytes);
  } catch {
    // Only a hint: a buffer too large for Buffer (or no memory for one) changes nothing.
  }
}

/**
 * A new ArrayBuffer of `bytes` whose contents are undefined (Node: allocUnsafeSlow, from memory the
 * allocator hands back warm; browsers: a zeroed one).
 */
export function unzeroedBuffer(bytes: number): ArrayBuffer {
  return NodeBuffer ? (NodeBuffer.allocUnsafeSlow(bytes).buffer as ArrayBuffer) : new ArrayBuffer(bytes);
}

/** SharedArrayBuffers made for outputs (freshSharedBuffer). */
const sharedForCaller = new WeakSet<SharedArrayBuffer>();

/** A new SharedArrayBuffer of `bytes` for an output, announced to the garbage collector. */
export function freshSharedBuffer(bytes: number): SharedArrayBuffer {
  const buffer = new SharedArrayBuffer(bytes);
  announceShared(bytes);
  sharedForCaller.add(buffer);
  return buffer;
}

/** Whether `buffer` is a SharedArrayBuffer this thread made for an output (freshSharedBuffer). */
export function isSharedOutput(buffer: ArrayBufferLike): boolean {
  return typeof SharedArrayBuffer !== 'undefined' && buffer instanceof SharedArrayBuffer && sharedForCaller.has(buffer);
}
