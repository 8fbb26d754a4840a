// `weft print FILE.json`: a serialized graph or function as text (debugprint), DOT, or an SVG
// picture drawn in-process (weft.toSvg). By default the graph is shown as compiled (FAST_RUN's
// rewrites applied); --before-rewrites shows it as the document stores it.
import { readFileSync, writeFileSync } from 'node:fs';
import { compile } from '../compile/function.js';
import { deserialize } from '../compile/serialize-function.js';
import { debugprint, toDot, type Printable } from '../graph/printing.js';
import { toSvg } from '../graph/svg.js';
import { EXIT_OK, parseOptions, UsageError, type Command, type Io } from './command.js';

const USAGE = `Usage: weft print FILE.json [--dot] [--svg OUT.svg] [--before-rewrites]

Shows a graph or function that weft.serialize wrote.

Options:
  --dot               Graphviz DOT instead of text
  --svg OUT.svg       also write an SVG picture of the graph to OUT.svg
  --before-rewrites   the graph as the document stores it (default: as compiled, rewrites applied)
  -h, --help          this text
`;

/** The graph of a document: as stored, or compiled (on the calling thread). */
export async function documentGraph(text: string, file: string, beforeRewrites: boolean): Promise<Printable> {
  let doc;
  try {
    doc = deserialize(text);
  } catch (e) {
    throw new Error(`${file}: ${(e as Error).message}`, { cause: e });
  }
  if (beforeRewrites) return doc.outputs;
  const fn = await compile(doc.inputs, doc.outputs, { workers: 0, ...(doc.kind === 'function' && doc.updates.length > 0 ? { updates: doc.updates } : {}) });
  return fn;
}

export function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

async function run(args: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(args, { dot: { type: 'boolean' }, svg: { type: 'string' }, 'before-rewrites': { type: 'boolean' } }, true);
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'FILE.json is required' : `one file at a time, got ${positionals.length}`);
  const file = positionals[0]!;
  const graph = await documentGraph(readText(file), file, values['before-rewrites'] ?? false);
  io.out.write(values.dot ? toDot(graph) : `${debugprint(graph)}\n`);
  if (values.svg) {
    writeFileSync(values.svg, await toSvg(graph));
    io.err.write(`wrote ${values.svg}\n`);
  }
  return EXIT_OK;
}

export const printCommand: Command = { name: 'print', summary: 'show a serialized graph or function: text, DOT or an SVG picture', usage: USAGE, run };
