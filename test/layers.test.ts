// The layers of the design (the guide's DESIGN.md; README.md's Layout), checked on the sources: every import in src/ points to its own folder
// or to a folder below it (kernels < graph < tensor < workers < scheduler < compile < index), and
// what runs inside a worker thread (workers/ and kernels/) imports nothing but kernels/: a worker
// loads no graph, tensor or compile code.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');
/** The layers a worker thread's code may import. */
const IN_WORKERS = new Set(['kernels', 'workers']);
/** Each layer's rank: a file may import its own layer and those ranked lower (sparse, cluster and cli are the design's, still to come). */
const RANK: Readonly<Record<string, number>> = { kernels: 0, graph: 1, tensor: 2, sparse: 3, workers: 4, scheduler: 5, compile: 6, cluster: 7, cli: 8, '.': 9 };

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.(ts|mts|cts)$/.test(e.name) ? [path] : [];
  });
}

/** The layer of a file: its first folder under src/ ('.' for src/index.ts and its neighbours). */
function layerOf(file: string): string {
  const parts = relative(SRC, file).split(/[\\/]/);
  return parts.length === 1 ? '.' : parts[0]!;
}

t.test('every import in src/ points down the layers', async (t) => {
  const wrong: string[] = [];
  const files = sources(SRC);
  for (const file of files) {
    const from = layerOf(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|^\s*import\s+['"](\.[^'"]+)['"]/gm)) {
      const target = resolve(dirname(file), m[1] ?? m[2]!);
      const to = layerOf(target);
      if (!(from in RANK) || !(to in RANK)) {
        wrong.push(`${relative(SRC, file)}: a folder the layers do not name (${from} -> ${to})`);
        continue;
      }
      if (RANK[to]! > RANK[from]!) wrong.push(`${relative(SRC, file)} (${from}) imports ${relative(SRC, target)} (${to})`);
      else if (IN_WORKERS.has(from) && !IN_WORKERS.has(to)) wrong.push(`${relative(SRC, file)} runs in workers but imports ${relative(SRC, target)} (${to})`);
    }
  }
  t.ok(files.length > 100, `${files.length} files read`);
  t.same(wrong, [], 'no import points up');
});

/** The room of a file under src/tensor/ (its folder, or '.' for pt.ts and methods.ts); undefined outside the tensor layer. */
function tensorRoom(file: string): string | undefined {
  const parts = relative(join(SRC, 'tensor'), file).split(/[\\/]/);
  if (parts[0] === '..') return undefined;
  return parts.length === 1 ? '.' : parts[0];
}

t.test('the tensor layer\'s rooms: core/ imports no other room, and only the top (serialize/, pt.ts, methods.ts) imports the top', async (t) => {
  const wrong: string[] = [];
  const top = (room: string | undefined): boolean => room === 'serialize' || room === '.';
  for (const file of sources(join(SRC, 'tensor'))) {
    const from = tensorRoom(file)!;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|^\s*import\s+['"](\.[^'"]+)['"]/gm)) {
      const to = tensorRoom(resolve(dirname(file), m[1] ?? m[2]!));
      if (to === undefined || to === from) continue;
      if (from === 'core') wrong.push(`${relative(SRC, file)} (core) imports the ${to} room`);
      if (top(to) && !top(from)) wrong.push(`${relative(SRC, file)} (${from}) imports ${to === '.' ? 'pt.ts or methods.ts' : to + '/'}`);
    }
  }
  t.same(wrong, [], 'no import crosses the rooms the wrong way');
});

t.test("README.md's Layout names every folder of src/tensor/", async (t) => {
  const readme = readFileSync(join(SRC, '../README.md'), 'utf8');
  const layout = readme.slice(readme.indexOf('## Layout'));
  const folders = readdirSync(join(SRC, 'tensor'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  t.ok(folders.length >= 10, `${folders.length} rooms`);
  t.same(
    folders.filter((f) => !new RegExp(`^\\s+(?:\\S+/ )*${f}/`, 'm').test(layout)),
    [],
    'each has its line',
  );
});
