// `weft bench`: the benchmark suite (bench/run.ts: weft and its peers side by side) with a
// progress bar per workload, the table, and optionally the results as JSON and a chart. The suite
// and its peers (tfjs, onnxruntime, jax-js) live in the repository, not in the npm package.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXIT_FAILED, parseOptions, UsageError, type Command, type Io } from './command.js';

const USAGE = `Usage: weft bench [W1 ...] [--quick] [--json FILE] [--chart FILE.svg]

Runs the benchmark suite (bench/ of a clone of the weft repository; npm ci installs its peers).

Options:
  W1 ... W15, W2r   only these workloads (default: all)
  --quick           fewer runs per row
  --json FILE       write the results as JSON
  --chart FILE.svg  write a chart of the results (a panel per workload, a bar per row)
  -h, --help        this text
`;

/** The folder of the weft checkout this command runs from (the one with bench/run.ts), if any. */
export function checkoutRoot(from = dirname(fileURLToPath(import.meta.url))): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'bench', 'run.ts')) && existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

async function run(args: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(args, { quick: { type: 'boolean' }, json: { type: 'string' }, chart: { type: 'string' } }, true);
  const bad = positionals.filter((w) => !/^w\d+r?$/i.test(w));
  if (bad.length > 0) throw new UsageError(`not a workload: ${bad.join(', ')} (W1 ... W15, W2r)`);
  const root = checkoutRoot();
  if (!root) {
    io.err.write('weft bench: the suite is not here: it runs from a clone of the weft repository (bench/ and its peers are not part of the npm package)\n');
    return EXIT_FAILED;
  }
  const tsx = join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
  const argv = [tsx, join(root, 'bench', 'run.ts'), ...positionals, ...(values.quick ? ['--quick'] : []), ...(values.json ? ['--json', values.json] : []), ...(values.chart ? ['--chart', values.chart] : []), '--progress'];
  const child = spawn(process.execPath, argv, { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
  child.stdout.on('data', (d: Buffer) => io.out.write(d));
  child.stderr.on('data', (d: Buffer) => io.err.write(d));
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? EXIT_FAILED : 0))));
}

export const benchCommand: Command = { name: 'bench', summary: 'run the benchmark suite against the peers: table, JSON, chart', usage: USAGE, run };
