// `npm run bench [-- W1 W3 ...] [--quick] [--json FILE] [--chart FILE.svg]`: the suite of BENCH.md
// (W1-W15 and W2r), weft and its peers in one process, side by side. Prints one table (figures are
// medians; ratios are to each group's reference row, measured in this run) and writes
// bench/results/latest.json with the machine, the load, the counts and every sample (and FILE too
// with --json). `--quick` takes fewer runs per row; `--chart` draws the rows as an SVG bar chart.
import { mkdirSync, writeFileSync } from 'node:fs';
import { benchChartSvg } from './lib/chart.js';
import { rowsLastTime, WorkloadProgress } from './lib/progress.js';
import { load, machine, type Load } from './lib/machine.js';
import { FULL_COUNTS, QUICK_COUNTS, Suite } from './lib/suite.js';
import { renderTable } from './lib/table.js';
import type { Workload } from './lib/workload.js';
import { weft } from './peers/weft.js';
import { w1 } from './workloads/w1-fused-chain.js';
import { w2 } from './workloads/w2-bandwidth.js';
import { w2r } from './workloads/w2r-reductions.js';
import { w3 } from './workloads/w3-matmul.js';
import { w4 } from './workloads/w4-mlp.js';
import { w5 } from './workloads/w5-wide-dag.js';
import { w6 } from './workloads/w6-dispatch.js';
import { w7 } from './workloads/w7-compile.js';
import { w8 } from './workloads/w8-throughput.js';
import { w9 } from './workloads/w9-conv.js';
import { w10 } from './workloads/w10-gather.js';
import { w11 } from './workloads/w11-factorizations.js';
import { w12 } from './workloads/w12-random.js';
import { w13 } from './workloads/w13-sparse.js';
import { w14 } from './workloads/w14-rnn.js';
import { w15 } from './workloads/w15-cluster.js';

const WORKLOADS: readonly Workload[] = [w1, w2, w2r, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12, w13, w14, w15];

const USAGE = `usage: npm run bench [-- [W1 ... W15] [--quick] [--json FILE] [--chart FILE.svg]]
  W1..W15, W2r   run only these workloads (default: all)
  --quick        fewer warm-up and timed runs per row (about 60% of the time)
  --json FILE    also write the results (as in bench/results/latest.json) to FILE
  --chart FILE   write the rows as an SVG bar chart (a panel per group, log axes for wide ranges)
  --progress     a progress bar per workload instead of a line per row`;

interface Args {
  readonly only: readonly string[];
  readonly quick: boolean;
  readonly json?: string;
  readonly chart?: string;
  readonly progress: boolean;
}

function parseArgs(argv: readonly string[]): Args {
  const only: string[] = [];
  let quick = false;
  let progress = false;
  const files: { json?: string; chart?: string } = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const file = /^--(json|chart)(?:=(.*))?$/.exec(a);
    if (file) {
      const path = file[2] ?? argv[++i];
      if (!path || path.startsWith('--')) {
        console.error(`bench: --${file[1]} needs a file name\n${USAGE}`);
        process.exit(2);
      }
      files[file[1] as 'json' | 'chart'] = path;
    } else if (a === '--quick') quick = true;
    else if (a === '--progress') progress = true;
    else if (a === '--help' || a === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else if (/^w\d+r?$/i.test(a) && WORKLOADS.some((w) => w.id === a.toUpperCase().replace(/R$/, 'r'))) only.push(a.toUpperCase().replace(/R$/, 'r'));
    else {
      console.error(`bench: unknown argument ${a}\n${USAGE}`);
      process.exit(2);
    }
  }
  return { only, quick, progress, ...files };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const selected = WORKLOADS.filter((w) => args.only.length === 0 || args.only.includes(w.id));
  const counts = args.quick ? QUICK_COUNTS : FULL_COUNTS;
  const dir = new URL('./results/', import.meta.url);
  const bars = args.progress ? new WorkloadProgress(rowsLastTime(new URL('latest.json', dir))) : undefined;
  const suite = new Suite(args.quick, counts, (line) => (bars ? bars.row(line) : console.error(line)));
  const started = performance.now();
  const loads: Array<Load & { workload: string; when: 'start' | 'end' }> = [];
  const info = machine();
  console.error(`weft bench: ${selected.map((w) => w.id).join(' ')}${args.quick ? ' (quick)' : ''} on ${info.cpu} x${info.cpus}, Node ${process.version}, load ${load().loadavg.join(' ')}, fresh memory ${String(info.freshPageMicros)} µs per 4 KiB page`);
  for (const w of selected) {
    suite.workload = w.id;
    console.error(`${w.id}: ${w.title}`);
    bars?.start(w.id);
    loads.push({ workload: w.id, when: 'start', ...load() });
    try {
      await w.run(suite);
    } catch (e) {
      // A workload that breaks leaves its rows so far and the other workloads.
      console.error(`${w.id} stopped: ${(e as Error)?.stack ?? e}`);
      suite.skip({ group: w.id, system: 'suite', config: '-', unit: 'ms' }, `the workload stopped: ${(e as Error)?.message ?? e}`);
    }
    loads.push({ workload: w.id, when: 'end', ...load() });
    bars?.stop();
  }
  await weft.shutdown();
  suite.finish();

  const seconds = (performance.now() - started) / 1000;
  console.log(renderTable(suite.rows));
  const maxLoad = Math.max(...loads.map((l) => l.loadavg[0]!));
  console.log(
    `\n${args.quick ? 'quick run' : 'full run'} in ${seconds.toFixed(0)} s; figures are medians of ${counts.minRuns}-${counts.runs} timed runs after ` +
      `${counts.warmup} warm-up calls, the first one checked (slow peers: fewer; rows whose notes say "in turns": ` +
      `${counts.minRuns} rounds of turns with the peers their goals name, bench/README.md; every sample is in the JSON); ` +
      `vs ref = speed relative to the group's reference row (> 1: faster). ` +
      `Load average (1 min) during the run: up to ${maxLoad.toFixed(2)} on ${info.cpus} CPUs.`,
  );

  const results = {
    date: new Date().toISOString(),
    quick: args.quick,
    workloads: selected.map((w) => ({ id: w.id, title: w.title })),
    seconds,
    machine: info,
    load: loads,
    counts,
    rows: suite.rows,
  };
  mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify(results, null, 2)}\n`;
  writeFileSync(new URL('latest.json', dir), json);
  console.log('wrote bench/results/latest.json');
  if (args.json) {
    writeFileSync(args.json, json);
    console.log(`wrote ${args.json}`);
  }
  if (args.chart) {
    writeFileSync(args.chart, await benchChartSvg(results));
    console.log(`wrote ${args.chart}`);
  }
}

await main();
