// Fresh SharedArrayBuffers for memory the caller will own (large outputs workers write), and their
// announcement to the garbage collector: V8 does not count a SharedArrayBuffer as memory pressure,
// so dropped outputs would pile up (docs/performance.md). A dropped plain Buffer of the same size,
// which V8 counts, is the announcement (Node's allocUnsafeSlow: not zeroed, not touched); browsers
// get none, as they have not shown the problem here.
const NodeBuffer = (globalThis as { Buffer?: { allocUnsafeSlow(size: number): unknown } }).Buffer;

/** Tells this thread's garbage collector of `bytes` of SharedArrayBuffers it now holds (see above). */
export function announceShared(bytes: number): void {
  try {
    NodeBuffer?.allocUnsafeSlow(bytes);
  } catch {
    // Only a hint: a buffer too large for Buffer (or no memory for one) changes nothing.
  }
}

/** A new SharedArrayBuffer of `bytes`, announced to the garbage collector. */
export function freshSharedBuffer(bytes: number): SharedArrayBuffer {
  const buffer = new SharedArrayBuffer(bytes);
  announceShared(bytes);
  return buffer;
}
