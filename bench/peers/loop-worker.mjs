// One thread of the plain-JS loop peer (plain JavaScript: worker threads do not go through tsx).
// It waits on a shared control word, runs its range of the phase's loop over typed arrays in
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
  /**
   * W13, rows start to end of a csr matrix s (data, indices, indptr) with dense d [k, n] and g
   * [rows, n]: y = s d for these rows, and their part of s^T g scattered (row r's entry at column
   * c adds its value times g's row r to row c) into gd, or on a team into this thread's own part
   * of `parts` (params.part; -1: gd itself), which sumParts adds up.
   */
  csrRows([data, indices, indptr, d, g, parts, y, gd], start, end, { n, part }) {
    const size = gd.length;
    const target = part < 0 ? gd : parts.subarray(part * size, (part + 1) * size);
    target.fill(0);
    for (let r = start; r < end; r++) {
      const row = r * n;
      y.fill(0, row, row + n);
      for (let k = indptr[r]; k < indptr[r + 1]; k++) {
        const v = data[k];
        const col = indices[k] * n;
        for (let j = 0; j < n; j++) {
          y[row + j] += v * d[col + j];
          target[col + j] += v * g[row + j];
        }
      }
    }
  },
  /** W13 on a team: gd = the sum of the threads' parts, for elements start to end. */
  sumParts([, , , , , parts, , gd], start, end, { count }) {
    const size = gd.length;
    for (let i = start; i < end; i++) {
      let sum = 0;
      for (let p = 0; p < count; p++) sum += parts[p * size + i];
      gd[i] = sum;
    }
  },
};

const { control: controlBuffer, arrays: buffers, kinds, phases, params } = workerData;
const control = new Int32Array(controlBuffer);
const arrays = buffers.map((b, i) => (kinds[i] === 'int32' ? new Int32Array(b) : new Float32Array(b)));
const loops = phases.map(({ loop: name, start, end }) => {
  const loop = LOOPS[name];
  if (!loop) throw new Error(`loop-worker: no loop named ${name}`);
  return () => loop(arrays, start, end, params);
});
let seen = 0;
for (;;) {
  Atomics.wait(control, 0, seen);
  seen = Atomics.load(control, 0);
  if (seen < 0) break;
  loops[Atomics.load(control, 2)]();
  Atomics.add(control, 1, 1);
  Atomics.notify(control, 1);
}
