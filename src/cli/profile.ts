// `weft profile FILE.json --inputs FILE`: runs a serialized function on a pool with profiling,
// then writes the calls' Perfetto trace and an SVG timeline of the last call (a lane per worker
// and one for the calling thread), and prints the profile's table.
import { writeFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { compile } from '../compile/function.js';
import { createPool } from '../compile/pool.js';
import { deserialize } from '../compile/serialize-function.js';
import { EXIT_OK, parseOptions, UsageError, wholeNumber, type Command, type Io } from './command.js';
import { readText } from './print.js';

const USAGE = `Usage: weft profile FILE.json --inputs INPUTS.json [options]

Runs a function that weft.serialize wrote, with profiling, and writes where its time went.

Options:
  --inputs INPUTS.json  the call's arguments: a JSON array, one entry per input (numbers or
                        nested arrays of numbers, as a call takes them)
  --workers N           worker threads of the pool (default: one per core)
  --calls N             calls to make, one after another (default: 10)
  --trace OUT.json      the Perfetto trace of the calls (default: FILE.trace.json)
  --svg OUT.svg         an SVG timeline of the last call (default: FILE.timeline.svg)
  -h, --help            this text

Open the trace at https://ui.perfetto.dev; the SVG in any browser.
`;

async function run(args: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(
    args,
    { inputs: { type: 'string' }, workers: { type: 'string' }, calls: { type: 'string' }, trace: { type: 'string' }, svg: { type: 'string' } },
    true,
  );
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'FILE.json is required' : `one file at a time, got ${positionals.length}`);
  if (!values.inputs) throw new UsageError('--inputs INPUTS.json is required');
  const file = positionals[0]!;
  const workers = wholeNumber(values.workers, 'workers');
  const calls = wholeNumber(values.calls, 'calls', 1) ?? 10;
  const stem = basename(file, extname(file));
  const tracePath = values.trace ?? `${stem}.trace.json`;
  const svgPath = values.svg ?? `${stem}.timeline.svg`;
  const doc = deserialize(readText(file));
  let inputs: unknown;
  try {
    inputs = JSON.parse(readText(values.inputs));
  } catch (e) {
    throw new UsageError(`${values.inputs} is not JSON: ${(e as Error).message}`);
  }
  if (!Array.isArray(inputs) || inputs.length !== doc.inputs.length) {
    throw new UsageError(`${values.inputs} must be a JSON array of ${doc.inputs.length} value${doc.inputs.length === 1 ? '' : 's'} (one per input of ${file}), got ${Array.isArray(inputs) ? `${inputs.length}` : typeof inputs}`);
  }
  const pool = createPool(workers !== undefined ? { workers } : {});
  try {
    const updates = doc.kind === 'function' ? doc.updates : [];
    const fn = await compile(doc.inputs, doc.outputs, { pool, profile: true, updates, ...(doc.kind === 'function' && doc.name ? { name: doc.name } : {}) });
    for (let i = 0; i < calls; i++) await fn(...inputs);
    writeFileSync(tracePath, fn.profile.toChromeTrace());
    writeFileSync(svgPath, fn.profile.toSvgTimeline({ call: calls - 1 }));
    io.out.write(`${fn.profile.toString()}\n`);
    io.err.write(`${calls} call${calls === 1 ? '' : 's'} on ${pool.size} worker${pool.size === 1 ? '' : 's'}: wrote ${tracePath} (open it at https://ui.perfetto.dev) and ${svgPath}\n`);
    fn.dispose();
  } finally {
    await pool.close();
  }
  return EXIT_OK;
}

export const profileCommand: Command = { name: 'profile', summary: 'run a serialized function with profiling: a Perfetto trace and an SVG timeline', usage: USAGE, run };
