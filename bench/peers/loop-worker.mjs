// One thread of the plain-JS loop peer (plain JavaScript: worker threads do not go through tsx).
// It waits on a shared control word, runs its slice of the named loop over float32 arrays in
// SharedArrayBuffers, counts itself done and waits again: no message per run.
import { workerData } from 'node:worker_threads';

/** The loops, as a careful programmer writes them by hand: one fused pass, no allocation. */
const LOOPS = {
  /** W1: z = exp(x) * y + tanh(w). */
  fusedChain([x, y, w, z], start, end) {
    for (let i = start; i < end; i++) z[i] = Math.exp(x[i]) * y[i] + Math.tanh(w[i]);
  },
  /** W2: z = x * y + w. */
  multiplyAdd([x, y, w, z], start, end) {
    for (let i = start; i < end; i++) z[i] = x[i] * y[i] + w[i];
  },
};

const { control: controlBuffer, arrays: buffers, loop: name, start, end } = workerData;
const control = new Int32Array(controlBuffer);
const arrays = buffers.map((b) => new Float32Array(b));
const loop = LOOPS[name];
if (!loop) throw new Error(`loop-worker: no loop named ${name}`);
let seen = 0;
for (;;) {
  Atomics.wait(control, 0, seen);
  seen = Atomics.load(control, 0);
  if (seen < 0) break;
  loop(arrays, start, end);
  Atomics.add(control, 1, 1);
  Atomics.notify(control, 1);
}
