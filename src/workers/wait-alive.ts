// The calling thread's wait on shared memory that does not block its event loop and still keeps
// the process alive while something is awaited (region.ts waits for calling-thread tasks with it;
// ring-queue.ts, which waits many times in a row for jobs the workers answer, holds one timer
// for all its waits instead).

/**
 * Atomics.waitAsync that keeps the process alive until it settles, and that ends by `ms` + 5 at
 * the latest. Node does not count a pending waitAsync as work (nodejs/node#61941), and its
 * timeout may not fire while nothing else holds the event loop: without the timer, a missed
 * notify (it came between the last check and the wait) would let the process exit with work
 * unfinished, or leave the waiter asleep. The caller looks again after any wake-up.
 */
export async function waitAsyncAlive(h: Int32Array, index: number, value: number, ms: number): Promise<void> {
  const waited = Atomics.waitAsync(h, index, value, ms);
  if (!waited.async) return;
  let alive: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => (alive = setTimeout(resolve, ms + 5)));
  try {
    await Promise.race([waited.value, timeout]);
  } finally {
    clearTimeout(alive);
  }
}
