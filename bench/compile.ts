// BENCH.md W7, compile time: element-wise graphs of about 1k and 10k nodes compiled in FAST_RUN,
// with the time of each size, the growth ratio and the rewriters that took the most time.
// `npx tsx bench/compile.ts [sizes...] [--repeats N] [--top K]`, e.g. `npx tsx bench/compile.ts 1000 10000 30000`;
// a suite runner imports `compileBench` instead.
import { pathToFileURL } from 'node:url';
import * as weft from '../src/index.js';
import { Prng } from '../src/kernels/prng.js';

const pt = weft.pt;
type TV = weft.pt.TensorVariable;

interface Args {
  readonly sizes: number[];
  readonly repeats: number;
  readonly top: number;
}

function parseArgs(argv: readonly string[]): Args {
  const sizes: number[] = [];
  let repeats = 3;
  let top = 8;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--repeats') repeats = Number(argv[++i]);
    else if (a === '--top') top = Number(argv[++i]);
    else sizes.push(Number(a));
  }
  return { sizes: sizes.length > 0 ? sizes : [1000, 10000], repeats, top };
}

/** Apply nodes between the graph's inputs and `outputs` (constants included as leaves). */
function countNodes(outputs: readonly weft.Variable[]): number {
  return weft.ioToposort([], outputs).length;
}

/**
 * About `target` element-wise nodes in layers of `width` variables over four inputs: each new
 * node reads one or two variables of the layer before it (so some variables have many clients
 * and fusion must stop at them), a tenth are copies of an earlier node (merge), and some multiply
 * by 1, add 0, nest sums or carry several constants (canonicalize).
 */
function buildLayers(target: number, seed: number): { inputs: TV[]; outputs: TV[]; nodes: number } {
  const prng = new Prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(prng.nextFloat() * xs.length)]!;
  const inputs = ['a', 'b', 'c', 'd'].map((n) => pt.vector(n, 'float32'));
  const width = 24;
  let layer: TV[] = [];
  for (let i = 0; i < width; i++) layer.push(inputs[i % inputs.length]!);
  const built: Array<() => TV> = [];
  let nodes = 0;
  while (nodes < target) {
    const next: TV[] = [];
    for (let i = 0; i < width && nodes < target; i++) {
      const x = pick(layer);
      const y = pick(layer);
      const r = prng.nextFloat();
      let v: TV;
      let cost: number;
      if (r < 0.1 && built.length > 0) {
        // A twin of an earlier expression (same op, same inputs): merge removes it.
        v = pick(built.slice(-width))();
        cost = 1;
      } else if (r < 0.25) {
        const make = (): TV => pt.tanh(x);
        built.push(make);
        v = make();
        cost = 1;
      } else if (r < 0.35) {
        const make = (): TV => pt.exp(pt.tanh(x));
        built.push(make);
        v = make();
        cost = 2;
      } else if (r < 0.55) {
        const make = (): TV => pt.add(x, y);
        built.push(make);
        v = make();
        cost = 1;
      } else if (r < 0.7) {
        const make = (): TV => pt.mul(x, y);
        built.push(make);
        v = make();
        cost = 1;
      } else if (r < 0.78) {
        v = pt.mul(pt.add(x, 0), 1); // canonicalize drops both
        cost = 2;
      } else if (r < 0.88) {
        v = pt.add(pt.add(x, 0.5), pt.mul(y, 0.25)); // a nested sum with constants
        cost = 3;
      } else {
        v = pt.mul(pt.mul(x, 2), pt.mul(y, 3)); // flattened, constants gathered
        cost = 3;
      }
      nodes += cost;
      next.push(v);
    }
    // Variables a layer does not read are carried forward so that every output stays used.
    layer = next.length === width ? next : [...next, ...layer.slice(next.length)];
  }
  const outputs = [pt.add(...layer.slice(0, width / 2)), pt.mul(...layer.slice(width / 2))];
  return { inputs, outputs, nodes: countNodes(outputs) };
}

/** A graph of about `size` live nodes: variables no later layer reads are dead, so aim higher. */
function buildGraph(size: number, seed: number): { inputs: TV[]; outputs: TV[]; nodes: number } {
  const first = buildLayers(size, seed);
  return first.nodes >= size ? first : buildLayers(Math.round((size * size) / first.nodes), seed);
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((p, q) => p - q);
  return s[Math.floor(s.length / 2)]!;
}

export interface Result {
  readonly size: number;
  readonly nodes: number;
  readonly after: number;
  /** Median wall-clock and CPU milliseconds of one compile; the first and the fastest (wall clock). */
  readonly ms: number;
  readonly cpuMs: number;
  readonly firstMs: number;
  readonly minMs: number;
  readonly profile: weft.FunctionProfile;
}

async function measure(size: number, repeats: number): Promise<Result> {
  const times: number[] = [];
  const cpu: number[] = [];
  let last: { profile: weft.FunctionProfile; after: number; nodes: number } | undefined;
  for (let k = 0; k < repeats; k++) {
    // A fresh graph each time: compile clones it, but caches on ops or variables must not help.
    const g = buildGraph(size, 7);
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    const fn = await weft.compile(g.inputs, g.outputs, { mode: 'FAST_RUN', profile: true, workers: 0 });
    const used = process.cpuUsage(cpuStarted);
    times.push(performance.now() - started);
    cpu.push((used.user + used.system) / 1000);
    last = { profile: fn.profile!, after: fn.fgraph.applyNodes.size, nodes: g.nodes };
    if (k === 0) await check(fn, g);
  }
  return { size, nodes: last!.nodes, after: last!.after, ms: median(times), cpuMs: median(cpu), firstMs: times[0]!, minMs: Math.min(...times), profile: last!.profile };
}

/** The compiled function runs, and agrees with FAST_COMPILE (no fusion) on seeded values. */
async function check(fn: weft.WeftFunction<weft.NdArray[]>, g: { inputs: TV[]; outputs: TV[] }): Promise<void> {
  const prng = new Prng(3);
  const values = g.inputs.map(() => Float32Array.from({ length: 16 }, () => prng.nextFloat() - 0.5));
  const slow = await weft.compile(g.inputs, g.outputs, { mode: 'FAST_COMPILE', workers: 0 });
  const [a, b] = [await fn(...values), await slow(...values)];
  a.forEach((x, i) => {
    const y = b[i]!;
    for (let j = 0; j < x.size; j++) {
      const p = x.data[j] as number;
      const q = y.data[j] as number;
      const ok = (Number.isNaN(p) && Number.isNaN(q)) || p === q || Math.abs(p - q) <= 1e-3 * Math.max(1, Math.abs(q));
      if (!ok) throw new Error(`output ${i}[${j}]: FAST_RUN gives ${p}, FAST_COMPILE ${q}`);
    }
  });
}

function top(rows: Map<string, { time: number; calls: number; applied: number }>, k: number): string[] {
  return [...rows]
    .sort((a, b) => b[1].time - a[1].time)
    .slice(0, k)
    .map(([name, s]) => `    ${s.time.toFixed(1).padStart(8)} ms ${String(s.calls).padStart(8)} calls ${String(s.applied).padStart(7)} applied  ${name}`);
}

/** W7 for each size (after a warm-up): the timings, the graph sizes and the last profile. */
export async function compileBench(sizes: readonly number[] = [1000, 10000], repeats = 3): Promise<Result[]> {
  await measure(300, 2);
  const results: Result[] = [];
  for (const size of sizes) results.push(await measure(size, repeats));
  return results;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const results = await compileBench(args.sizes, args.repeats);
  for (const r of results) {
    const p = r.profile;
    console.log(
      `W7 compile ${r.nodes} nodes -> ${r.after} after rewriting: ${r.ms.toFixed(0)} ms ` +
        `(median of ${args.repeats}, CPU ${r.cpuMs.toFixed(0)} ms; first ${r.firstMs.toFixed(0)} ms, fastest ${r.minMs.toFixed(0)} ms; ` +
        `rewrites ${p.rewrites.total.toFixed(0)} ms in the last)`,
    );
    console.log(`  stages (inclusive):\n${top(p.rewrites.byStage, args.top).join('\n')}`);
    console.log(`  rewriters:\n${top(p.rewrites.byRewriter, args.top).join('\n')}`);
  }
  for (let i = 1; i < results.length; i++) {
    const a = results[i - 1]!;
    const b = results[i]!;
    const growth = b.ms / a.ms / (b.nodes / a.nodes);
    console.log(`growth ${a.nodes} -> ${b.nodes} nodes: time x${(b.ms / a.ms).toFixed(1)} for nodes x${(b.nodes / a.nodes).toFixed(1)} (${growth.toFixed(2)} of linear)`);
  }
  const tenK = results.find((r) => r.size === 10000);
  if (tenK) console.log(`goal: 10k nodes under 1000 ms: ${tenK.ms < 1000 ? 'met' : 'not met'} (${tenK.ms.toFixed(0)} ms)`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
