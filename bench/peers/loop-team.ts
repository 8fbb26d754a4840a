// The plain-JS loop peer on N threads: worker_threads over SharedArrayBuffers, each thread a
// fixed range of each phase of a run, started and awaited through Atomics on a shared control word
// (the main thread only waits). This is the floor any JS thread runtime is measured against.
import { Worker } from 'node:worker_threads';

/** The loops that loop-worker.mjs knows. */
export type LoopName = 'fusedChain' | 'multiplyAdd' | 'csrRows' | 'sumParts';

/** The arrays a team's loops read and write, in shared memory. */
export type LoopArray = Float32Array | Int32Array;

/** One thread's part of a run: for each phase in turn, a loop over the range [start, end). */
export interface Seat {
  readonly phases: readonly { readonly loop: LoopName; readonly start: number; readonly end: number }[];
  /** Numbers the thread's loops read (a row length, which part of a scratch array is its own). */
  readonly params?: Readonly<Record<string, number>>;
}

export class LoopTeam {
  /** [0] the run's generation (-1: stop), [1] threads done with the phase, [2] the phase. */
  readonly #control = new Int32Array(new SharedArrayBuffer(12));
  readonly #workers: Worker[];
  readonly #phases: number;
  /** The inputs and outputs in shared memory, in the order given. */
  readonly arrays: readonly LoopArray[];
  /** The last of `arrays`, which run() returns. */
  readonly #last: Float32Array;
  #generation = 0;
  #failure: Error | undefined;

  /** `arrays` are copied once into shared memory. */
  private constructor(arrays: readonly LoopArray[], seats: readonly Seat[]) {
    const shared = arrays.map((a) => {
      const s = a instanceof Int32Array ? new Int32Array(new SharedArrayBuffer(a.byteLength)) : new Float32Array(new SharedArrayBuffer(a.byteLength));
      s.set(a);
      return s;
    });
    this.arrays = shared;
    const last = shared[shared.length - 1];
    if (!(last instanceof Float32Array)) throw new Error('LoopTeam: the last array (what run() returns) must be a Float32Array');
    this.#last = last;
    this.#phases = seats[0]!.phases.length;
    if (seats.some((s) => s.phases.length !== this.#phases)) throw new Error('LoopTeam: every thread takes part in every phase');
    const kinds = shared.map((a) => (a instanceof Int32Array ? 'int32' : 'float32'));
    this.#workers = seats.map(({ phases, params }) => {
      const worker = new Worker(new URL('./loop-worker.mjs', import.meta.url), {
        workerData: { control: this.#control.buffer, arrays: shared.map((a) => a.buffer), kinds, phases, params: params ?? {} },
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

  get threads(): number {
    return this.#workers.length;
  }

  /**
   * An element-wise team: `inputs` (of one length) and an output of that length, the last of
   * `arrays`; each thread a contiguous slice of the elements.
   */
  static async start(threads: number, loop: LoopName, inputs: readonly Float32Array[]): Promise<LoopTeam> {
    const n = inputs[0]!.length;
    // Slices aligned to 16 elements (a cache line) so that no two threads write the same line.
    const per = Math.ceil(n / threads / 16) * 16;
    const seats = Array.from({ length: threads }, (_, t) => {
      const start = Math.min(n, t * per);
      return { phases: [{ loop, start, end: Math.min(n, start + per) }] };
    });
    return LoopTeam.startSeats([...inputs, new Float32Array(n)], seats);
  }

  /** A team of one thread per seat over `arrays` (outputs among them, given as zeros); its threads are up. */
  static async startSeats(arrays: readonly LoopArray[], seats: readonly Seat[]): Promise<LoopTeam> {
    const team = new LoopTeam(arrays, seats);
    await Promise.all(team.#workers.map((w) => new Promise((resolve, reject) => (w.once('online', resolve), w.once('error', reject)))));
    await team.run();
    return team;
  }

  /** One run: each phase split across the threads, the next phase once every thread is done; the last array. */
  async run(): Promise<Float32Array> {
    const c = this.#control;
    for (let phase = 0; phase < this.#phases; phase++) {
      Atomics.store(c, 1, 0);
      Atomics.store(c, 2, phase);
      Atomics.store(c, 0, ++this.#generation);
      Atomics.notify(c, 0);
      for (let done = Atomics.load(c, 1); done < this.threads; done = Atomics.load(c, 1)) {
        if (this.#failure) throw this.#failure;
        await Atomics.waitAsync(c, 1, done, 1000).value;
      }
    }
    return this.#last;
  }

  async close(): Promise<void> {
    Atomics.store(this.#control, 0, -1);
    Atomics.notify(this.#control, 0);
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
