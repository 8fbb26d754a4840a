// The plain-JS loop peer on N threads: worker_threads over SharedArrayBuffers, each thread a
// fixed contiguous slice, started and awaited through Atomics on a shared control word (the
// main thread only waits). This is the floor any JS thread runtime is measured against.
import { Worker } from 'node:worker_threads';

/** The loops that loop-worker.mjs knows. */
export type LoopName = 'fusedChain' | 'multiplyAdd';

export class LoopTeam {
  readonly #control = new Int32Array(new SharedArrayBuffer(8));
  readonly #workers: Worker[];
  readonly arrays: readonly Float32Array[];
  #generation = 0;
  #failure: Error | undefined;

  /** `inputs` are copied once into shared memory; the output array is the last of `arrays`. */
  private constructor(
    readonly threads: number,
    loop: LoopName,
    inputs: readonly Float32Array[],
  ) {
    const n = inputs[0]!.length;
    const shared = [...inputs.map((a) => a), new Float32Array(n)].map((a) => {
      const s = new Float32Array(new SharedArrayBuffer(n * 4));
      s.set(a);
      return s;
    });
    this.arrays = shared;
    // Slices aligned to 16 elements (a cache line) so that no two threads write the same line.
    const per = Math.ceil(n / threads / 16) * 16;
    this.#workers = Array.from({ length: threads }, (_, t) => {
      const start = Math.min(n, t * per);
      const end = Math.min(n, start + per);
      const worker = new Worker(new URL('./loop-worker.mjs', import.meta.url), {
        workerData: { control: this.#control.buffer, arrays: shared.map((a) => a.buffer), loop, start, end },
      });
      // A thread that fails would leave run() waiting forever (waitAsync holds no event-loop ref).
      worker.on('error', (e: Error) => {
        this.#failure = e;
        Atomics.store(this.#control, 1, -1000);
        Atomics.notify(this.#control, 1);
      });
      return worker;
    });
  }

  /** A team whose threads are up (each has run the loop once). */
  static async start(threads: number, loop: LoopName, inputs: readonly Float32Array[]): Promise<LoopTeam> {
    const team = new LoopTeam(threads, loop, inputs);
    await Promise.all(team.#workers.map((w) => new Promise((resolve, reject) => (w.once('online', resolve), w.once('error', reject)))));
    await team.run();
    return team;
  }

  /** One pass of the loop over the whole arrays, split across the threads. */
  async run(): Promise<Float32Array> {
    const c = this.#control;
    Atomics.store(c, 1, 0);
    Atomics.store(c, 0, ++this.#generation);
    Atomics.notify(c, 0);
    for (let done = Atomics.load(c, 1); done < this.threads; done = Atomics.load(c, 1)) {
      if (this.#failure) throw this.#failure;
      await Atomics.waitAsync(c, 1, done, 1000).value;
    }
    return this.arrays[this.arrays.length - 1]!;
  }

  async close(): Promise<void> {
    Atomics.store(this.#control, 0, -1);
    Atomics.notify(this.#control, 0);
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
