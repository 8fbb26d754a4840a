// The browser test's page script (served as JavaScript by server.ts): it loads weft's browser
// bundle and offers `globalThis.weftTests`, whose scenarios build graphs, compile them on pools of
// Web Workers and on the calling thread, call them and report outputs, threads and errors.
import type { Apply } from '../../src/graph/apply.js';
import type { KernelCall } from '../../src/graph/op.js';
import type * as Weft from '../../src/index.js';
import { catalog, encode, mlp, small, type Case, type Encoded } from './cases.js';

const WEFT: string = '/dist/browser/weft.js';
const weft = (await import(WEFT)) as typeof Weft;
const KERNELS = ['/test/browser/fault-kernel.js'];

/** An op whose worker kernel comes from the page's kernel module (fault-kernel.js). */
class KernelOp extends weft.Op {
  static override readonly props = ['kernelName'] as const;

  constructor(readonly kernelName: string) {
    super();
  }

  override makeNode(x: unknown): Apply {
    const v = weft.pt.asTensorVariable(x as Weft.pt.TensorVariable);
    return new weft.Apply(this, [v], [v.type.makeVariable()]);
  }

  override kernel(): KernelCall {
    return { name: this.kernelName, params: {}, chunking: { by: 'none' } };
  }

  override outputShapes(_node: Apply, [x]: readonly { shape: readonly number[] }[]): number[][] {
    return [[...x!.shape]];
  }

  override perform(): Weft.NdArray[] {
    throw new Error(`${this.kernelName} runs only as a worker kernel`);
  }
}

interface Run {
  readonly outputs: Encoded[];
  /** Threads that ran the call's tasks (fn.profile): 0 is the page's thread, k > 0 Web Worker k. */
  readonly threads: number[];
}

/**
 * The outputs of call 0 of `c`, and the threads that ran the tasks of `calls` calls, or of up to
 * 60 until `spread` threads have run tasks (whether a second worker wakes in time for a small
 * call's tasks is the machine's timing, not weft's: one worker may drain a call alone).
 */
async function runCase(c: Case, options: Weft.CompileOptions, calls = 12, spread = 1): Promise<Run> {
  const fn = await weft.compile(c.inputs, c.outputs, { ...options, profile: true });
  const outputs = (await fn(...c.values(0))) as Weft.NdArray[];
  const threadsSoFar = () => [...new Set(fn.profile!.events.map((e) => e.thread))].sort((a, b) => a - b);
  for (let k = 1; k < calls || (threadsSoFar().length < spread && k < 60); k++) await fn(...c.values(k % 12));
  const threads = threadsSoFar();
  fn.dispose();
  return { outputs: outputs.map(encode), threads };
}

function messageOf(e: unknown): { name: string; message: string } {
  return e instanceof Error ? { name: e.name, message: e.message } : { name: 'not an Error', message: String(e) };
}

const weftTests = {
  /** Whether the page is cross-origin isolated, and the default pool's size. */
  async environment() {
    const pool = weft.createPool();
    const size = pool.size;
    await pool.close();
    return { crossOriginIsolated, sharedArrayBuffer: typeof SharedArrayBuffer, hardwareConcurrency: navigator.hardwareConcurrency, defaultPoolSize: size };
  },

  /** The MLPs and the small graph on a pool of two Web Workers and with workers: 0. */
  async values() {
    const pool = weft.createPool({ workers: 2 });
    const both = async (c: () => Case) => ({ pooled: await runCase(c(), { pool, workers: 2 }, 12, 2), inline: await runCase(c(), { workers: 0 }) });
    try {
      return {
        poolSize: pool.size,
        memoryShared: pool.arena.memory.buffer instanceof SharedArrayBuffer,
        mlp: await both(() => mlp(weft)),
        mlpTanh: await both(() => mlp(weft, 'tanh')),
        catalog32: await both(() => catalog(weft, 'float32')),
        catalog64: await both(() => catalog(weft, 'float64')),
        small: await both(() => small(weft)),
      };
    } finally {
      await pool.close();
    }
  },

  /** `calls` calls of one function in flight at once on a pool of two Web Workers. */
  async concurrent(calls: number) {
    const pool = weft.createPool({ workers: 2 });
    try {
      const c = mlp(weft);
      const fn = await weft.compile(c.inputs, c.outputs, { pool, workers: 2 });
      const all = await Promise.all(Array.from({ length: calls }, (_, k) => fn(...c.values(k)) as Promise<Weft.NdArray[]>));
      return all.map((outputs) => outputs.map(encode));
    } finally {
      await pool.close();
    }
  },

  /**
   * A kernel of a user's module that works and one that throws, on Web Workers: the failing call
   * rejects with the node, the shared variable keeps its value, and the pool goes on working.
   */
  async fault() {
    const pool = weft.createPool({ workers: 2, kernelModules: KERNELS });
    try {
      const x = weft.pt.vector('x');
      const s = weft.shared([1, 2, 3], { name: 's' });
      const big = new Float64Array(1 << 16).fill(1);
      const bad = await weft.compile([x], new KernelOp('test.throw').call(x.mul(2)).sum(), { pool, updates: [[s, s.add(1)]] });
      const doubled = await weft.compile([x], new KernelOp('test.double').call(x.mul(3)).sum(), { pool, profile: true });
      const good = await weft.compile([x], x.mul(2).sum(), { pool });
      const error = await bad(big).then(() => undefined, messageOf);
      return {
        error,
        shared: weft.tolist(s.getValue()),
        after: weft.tolist((await good(big)) as Weft.NdArray),
        doubled: weft.tolist((await doubled(big)) as Weft.NdArray),
        doubledThreads: [...new Set(doubled.profile!.events.map((e) => e.thread))],
      };
    } finally {
      await pool.close();
    }
  },

  /**
   * weft.release in the page: an output copied out of the pool's memory (256 KiB) is given back,
   * becomes empty, and the next call's output takes its memory with that call's values; a large
   * output the workers wrote in shared memory is left alone, and the next of its size is copied out.
   */
  async release() {
    const pool = weft.createPool({ workers: 2 });
    try {
      const x = weft.pt.vector('x', 'float32');
      const n = 1 << 16;
      const fn = await weft.compile([x], x.mul(2).add(1), { pool, workers: 2 });
      const input = (i: number) => new Float32Array(n).map((_, k) => k + i);
      const first = (await fn(input(0))) as Weft.NdArray;
      const given = weft.release(first);
      const emptied = first.data.length;
      const second = (await fn(input(1))) as Weft.NdArray;
      let wrong = 0;
      for (let k = 0; k < n; k++) if (second.data[k] !== 2 * (k + 1) + 1) wrong += 1;
      const big = (1 << 20) / 4;
      const cumulative = await weft.compile([x], weft.pt.cumsum(x), { pool, workers: 1 });
      const ones = new Float32Array(big).fill(1);
      const shared = (await cumulative(ones)) as Weft.NdArray;
      const sharedGiven = weft.release(shared);
      const copied = (await cumulative(ones.map(() => 2))) as Weft.NdArray;
      return {
        given,
        emptied,
        wrong,
        secondGiven: weft.release(second),
        sharedWasShared: shared.data.buffer instanceof SharedArrayBuffer,
        sharedGiven,
        sharedLast: shared.data[big - 1],
        copiedLast: copied.data[big - 1],
        copiedGiven: weft.release(copied),
      };
    } finally {
      await pool.close();
    }
  },

  /** A pool whose worker script does not load: calls reject and say why. */
  async missingWorker() {
    const pool = weft.createPool({ workers: 2, workerUrl: '/dist/browser/missing-worker.js' });
    try {
      const c = mlp(weft);
      const fn = await weft.compile(c.inputs, c.outputs, { pool, workers: 2 });
      return { first: await fn(...c.values(0)).then(() => undefined, messageOf), second: await fn(...c.values(1)).then(() => undefined, messageOf) };
    } finally {
      await pool.close();
    }
  },

  /** A pool that closes: it says so, and a function on it rejects its next call. */
  async close() {
    const pool = weft.createPool({ workers: 2 });
    const c = mlp(weft);
    const fn = await weft.compile(c.inputs, c.outputs, { pool, workers: 2 });
    const before = ((await fn(...c.values(0))) as Weft.NdArray[]).map(encode);
    await pool.close();
    const after = await fn(...c.values(0)).then(() => undefined, messageOf);
    return { closed: pool.closed, before, after };
  },
};

Object.assign(globalThis, { weftTests, weftReady: true });
