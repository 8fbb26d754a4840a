// Fresh SharedArrayBuffers for memory the caller will own (large outputs written by workers), and
// their arrival in a worker, whose copy of the buffer holds the memory as long as the caller's.
// V8 (Node 20) does not count a SharedArrayBuffer's bytes as memory pressure, so a loop of calls
// that drops its outputs grows the process by every output until some unrelated collection runs
// (60 calls with 64 MiB outputs: 3.8 GiB resident), and every new buffer is fresh pages. A plain
// buffer of the same size, which V8 does count, is allocated beside each one and dropped: the
// dropped outputs are then collected at V8's usual pace, memory stays flat, and their pages are
// reused (64 MiB outputs: 131 -> 33 ms a call for the buffer and its first touch). In Node the
// plain buffer is Buffer.allocUnsafeSlow (memory neither zeroed nor touched: a few microseconds);
// elsewhere nothing is done, as browsers have not shown the problem here.
const NodeBuffer = (globalThis as { Buffer?: { allocUnsafeSlow(size: number): unknown } }).Buffer;

/** Tells this thread's garbage collector of `bytes` of SharedArrayBuffers it now holds (see above). */
export function announceShared(bytes: number): void {
  NodeBuffer?.allocUnsafeSlow(bytes);
}

/** A new SharedArrayBuffer of `bytes`, announced to the garbage collector. */
export function freshSharedBuffer(bytes: number): SharedArrayBuffer {
  const buffer = new SharedArrayBuffer(bytes);
  announceShared(bytes);
  return buffer;
}
