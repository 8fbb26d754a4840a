// Inplace rewrites on and off, in one run: W1 (z = exp(x) * y + tanh(w) over 4M float32, with
// plain inputs and with inputs given as In(x, { mutable: true })) and W4 (one SGD step of the
// 784-512-10 MLP, batch 256, float32). Per configuration: the median time of a call (inline and
// on 2 workers), the call's region (plan.descriptor.regionBytes: its peak memory) and an estimate
// of its memory traffic from the plan; then the ratios on/off. Run `npm run build` first (the
// workers load dist/), then `npx tsx bench/inplace.ts`.
import ndarray from 'ndarray';
import * as weft from '../src/index.js';
import { bytesPerElement } from '../src/kernels/dtype.js';
import type { Plan } from '../src/scheduler/plan.js';
import { PlannedExecutor } from '../src/scheduler/planned-executor.js';
import type { ViewDescriptor } from '../src/workers/protocol.js';
import { oneHot, uniform } from './lib/data.js';

const pt = weft.pt;
type TV = weft.pt.TensorVariable;

const WORKERS = [0, 2] as const;
const NO_INPLACE = new weft.Mode({ excluding: ['inplace'] });

/** Bytes of the distinct elements a view covers (a broadcast axis counts once). */
function viewBytes(v: ViewDescriptor): number {
  let n = 1;
  v.shape.forEach((d, a) => {
    if (v.stride[a] !== 0) n *= d;
  });
  return n * bytesPerElement(v.dtype as weft.Dtype);
}

/**
 * Bytes moved by one call of `plan`, estimated from its views: every kernel reads its inputs and
 * writes its outputs once, except that the copying Gemm first copies z into its output and then
 * reads it back (two more passes), the inplace IncSubtensor touches only the region (taken as
 * y's size, read and written) and AllocEmpty moves nothing; plus the copies of the inputs into
 * the region and of the outputs out of it (each read once and written once).
 */
function traffic(plan: Plan): number {
  const d = plan.descriptor;
  let bytes = 0;
  d.calls.forEach((c, i) => {
    // The copies of arguments and results (no node) are the copies counted below.
    const node = plan.callNodes[i];
    if (!node) return;
    const nOut = node.outputs.length;
    const ins = c.inputs.map((v) => viewBytes(d.views[v]!));
    const outs = c.outputs.slice(0, nOut).map((v) => viewBytes(d.views[v]!));
    const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
    switch (c.kernel) {
      case 'allocEmpty':
        break;
      case 'gemm':
        bytes += sum(ins) + 3 * outs[0]!;
        break;
      case 'incSubtensorInplace':
        bytes += sum(ins.slice(1)) + 2 * ins[1]!;
        break;
      default:
        bytes += sum(ins) + sum(outs);
    }
  });
  for (const v of plan.inputViews) if (v >= 0) bytes += 2 * viewBytes(d.views[v]!);
  for (const o of plan.outputs) if (o.kind === 'view') bytes += 2 * viewBytes(d.views[o.view]!);
  return bytes;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

interface Measured {
  /** Median ms per call, by worker count. */
  readonly ms: Record<number, number>;
  /** Fastest call, by worker count: on a loaded machine, the least disturbed figure. */
  readonly best: Record<number, number>;
  readonly regionBytes: number;
  readonly traffic: number;
  readonly overwrites: number;
}

/**
 * Compiles `build()` with and without the inplace rewrites, checks both give the same bits on
 * `values`, and measures each: calls of the two functions alternate, so that a machine whose
 * load changes during the run weighs on both alike.
 */
async function measure(
  pool: weft.Pool,
  build: () => { inputs: Array<TV | weft.FunctionInput>; output: TV; updates?: Array<readonly [weft.pt.TensorSharedVariable, TV]> },
  values: readonly weft.NdArray[],
  runs: number,
): Promise<{ on: Measured; off: Measured }> {
  const keys = ['on', 'off'] as const;
  const ms = { on: {} as Record<number, number>, off: {} as Record<number, number> };
  const best = { on: {} as Record<number, number>, off: {} as Record<number, number> };
  const plans: Partial<Record<'on' | 'off', { regionBytes: number; traffic: number; overwrites: number }>> = {};
  for (const workers of WORKERS) {
    const fns = await Promise.all(
      keys.map(async (key) => {
        const g = build();
        return weft.compile(g.inputs, g.output, { pool, workers, updates: g.updates, mode: key === 'on' ? undefined : NO_INPLACE });
      }),
    );
    const firsts = await Promise.all(fns.map(async (fn) => new Uint8Array((await fn(...values)).data.buffer.slice(0))));
    if (firsts[0]!.length !== firsts[1]!.length || firsts[0]!.some((v, i) => v !== firsts[1]![i])) {
      throw new Error(`workers ${workers}: inplace on and off give different first results`);
    }
    fns.forEach((fn, k) => {
      if (plans[keys[k]!]) return;
      const shared = fn.fgraph.inputs.slice(values.length).map((v) => (v as weft.pt.TensorSharedVariable).getValue({ borrow: true }));
      const { plan } = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 }).planFor([...values, ...shared]);
      const overwrites = fn.fgraph.toposort().filter((n) => Object.keys(n.op.destroyMap).length > 0).length;
      plans[keys[k]!] = { regionBytes: plan.descriptor.regionBytes, traffic: traffic(plan), overwrites };
    });
    for (let k = 0; k < 2; k++) for (const fn of fns) await fn(...values);
    const times: [number[], number[]] = [[], []];
    for (let k = 0; k < runs; k++) {
      for (const j of k % 2 === 0 ? [0, 1] : [1, 0]) {
        const started = performance.now();
        await fns[j]!(...values);
        times[j]!.push(performance.now() - started);
      }
    }
    ms.on[workers] = median(times[0]);
    ms.off[workers] = median(times[1]);
    best.on[workers] = Math.min(...times[0]);
    best.off[workers] = Math.min(...times[1]);
  }
  return { on: { ms: ms.on, best: best.on, ...plans.on! }, off: { ms: ms.off, best: best.off, ...plans.off! } };
}

const MB = 1024 * 1024;

function report(name: string, r: { on: Measured; off: Measured }): string[] {
  const cols = (cells: readonly string[]): string => `  ${cells[0]!.padEnd(12)}${cells.slice(1, -3).map((c) => c.padStart(9)).join('')}${cells.slice(-3).map((c) => c.padStart(12)).join('')}`;
  const row = (label: string, m: Measured): string =>
    cols([label, ...WORKERS.flatMap((w) => [m.ms[w]!.toFixed(1), m.best[w]!.toFixed(1)]), `${(m.regionBytes / MB).toFixed(2)} MB`, `${(m.traffic / MB).toFixed(1)} MB`, String(m.overwrites)]);
  const ratio = (f: (m: Measured) => number): string => (f(r.on) / f(r.off)).toFixed(3);
  return [
    name,
    cols(['', ...WORKERS.flatMap((w) => [`median`, 'best']), 'region', 'traffic', 'overwrites']),
    cols(['', ...WORKERS.flatMap((w) => [`ms, ${w}w`, `ms, ${w}w`]), '', '', '']),
    row('inplace on', r.on),
    row('inplace off', r.off),
    cols(['on / off', ...WORKERS.flatMap((w) => [ratio((m) => m.ms[w]!), ratio((m) => m.best[w]!)]), ratio((m) => m.regionBytes), ratio((m) => m.traffic), '']),
    '',
  ];
}

async function main(): Promise<void> {
  const pool = weft.createPool({ workers: 2 });
  const lines: string[] = [];
  try {
    // W1: with plain inputs there is nothing to overwrite (inputs are not mutable and the
    // fused loop reads only inputs); with mutable inputs z is written into x's place.
    const N = 4 * 1024 * 1024;
    const w1Values = [11, 12, 13].map((seed) => ndarray(uniform(N, seed), [N]) as unknown as weft.NdArray);
    for (const mutable of [false, true]) {
      const r = await measure(
        pool,
        () => {
          const [x, y, w] = ['x', 'y', 'w'].map((n) => pt.vector(n, 'float32'));
          const output = x!.exp().mul(y!).add(w!.tanh());
          return { inputs: [x!, y!, w!].map((v) => (mutable ? weft.In(v, { mutable: true }) : v)), output };
        },
        w1Values,
        15,
      );
      lines.push(...report(`W1 z = exp(x) * y + tanh(w), 4M float32, ${mutable ? 'inputs In(x, { mutable: true })' : 'plain inputs'}`, r));
    }

    // W4: one SGD step; the parameters are shared variables updated by the step.
    const [B, I, H, C] = [256, 784, 512, 10];
    const x = ndarray(uniform(B * I, 45, 0, 1), [B, I]) as unknown as weft.NdArray;
    const y = ndarray(oneHot(B, C, 46), [B, C]) as unknown as weft.NdArray;
    const init: Array<[string, number[], Float32Array]> = [
      ['w1', [I, H], uniform(I * H, 41, -0.05, 0.05)],
      ['b1', [H], uniform(H, 42, -0.01, 0.01)],
      ['w2', [H, C], uniform(H * C, 43, -0.1, 0.1)],
      ['b2', [C], uniform(C, 44, -0.01, 0.01)],
    ];
    const r4 = await measure(
      pool,
      () => {
        const xs = pt.matrix('x', 'float32');
        const ys = pt.matrix('y', 'float32');
        const [w1, b1, w2, b2] = init.map(([name, shape, data]) => weft.shared(ndarray(data.slice(), shape), { name, dtype: 'float32' }));
        const h = pt.relu(xs.dot(w1!).add(b1!));
        const loss = ys.mul(pt.logSoftmax(h.dot(w2!).add(b2!))).sum({ axis: 1 }).mean().neg();
        const params = [w1!, b1!, w2!, b2!];
        const grads = weft.grad(loss, params) as TV[];
        return { inputs: [xs, ys], output: loss, updates: params.map((p, i) => [p, p.sub(grads[i]!.mul(0.1))] as const) };
      },
      [x, y],
      25,
    );
    lines.push(...report('W4 MLP step 784-512-10, batch 256, float32 (SGD updates of 4 shared variables)', r4));
  } finally {
    await pool.close();
  }
  console.log(
    [
      'inplace rewrites on and off: ms per call (median and best; inline and on 2 workers), the call\'s region',
      '(peak memory), estimated memory traffic per call (kernels, copies in and out), nodes that write over an input',
      '',
      ...lines,
    ].join('\n'),
  );
}

await main();
