// The `weft` command, run as a user runs it (the built bin, dist/src/cli/main.js): --help on the
// command and every subcommand, exit codes (0 done, 1 failed, 2 a wrong command line), and
// `weft print` / `weft profile` on real documents, their output checked against the library's own
// debugprint, toDot, toSvg and profile (`weft worker` is tested with the cluster, test/cluster).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { pt, weft } from '../helpers.js';
import { findAll, hasClass, parseSvg } from '../svg-xml.js';

const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'weft-cli-'));

function weftCommand(args: readonly string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

// A function with a shared variable and an update, and a graph of variables.
const x = pt.matrix('x');
const w = weft.shared([[0.5, -1], [2, 0.25]], { name: 'w' });
const steps = weft.shared(0, { name: 'steps' });
const fnFile = join(dir, 'layer.json');
const graphFile = join(dir, 'graph.json');
const inputsFile = join(dir, 'inputs.json');
const graph = pt.exp(x).mul(2).add(pt.exp(x).mul(2));

t.before(async () => {
  const f = await weft.compile([x], pt.tanh(x.dot(w)).sum({ axis: 1 }), { name: 'layer', updates: [[steps, steps.add(1)]], workers: 0 });
  writeFileSync(fnFile, weft.serialize(f));
  writeFileSync(graphFile, weft.serialize(graph));
  writeFileSync(inputsFile, JSON.stringify([Array.from({ length: 512 }, (_, i) => [Math.sin(i), Math.cos(i)])]));
});
t.teardown(() => weft.shutdown());

t.test('weft --help lists every subcommand; each has --help; wrong lines exit 2', async (t) => {
  const help = await weftCommand(['--help']);
  t.equal(help.code, 0, 'weft --help exits 0');
  for (const name of ['bench', 'print', 'profile', 'worker']) {
    t.match(help.out, new RegExp(`^  ${name}\\s+\\S`, 'm'), `lists ${name}`);
    const own = await weftCommand([name, '--help']);
    t.equal(own.code, 0, `weft ${name} --help exits 0`);
    t.match(own.out, new RegExp(`^Usage: weft ${name}`), `weft ${name} --help shows its usage`);
  }
  const none = await weftCommand([]);
  t.equal(none.code, 2, 'no command exits 2');
  t.match(none.out, /^weft: symbolic tensor graphs/, 'and shows the overview');
  const badFlag = await weftCommand(['print', graphFile, '--colour']);
  t.equal(badFlag.code, 2, 'an unknown flag exits 2');
  t.match(badFlag.err, /^weft print: Unknown option '--colour'/, 'and names it');
  const badWorkload = await weftCommand(['bench', 'W99x']);
  t.equal(badWorkload.code, 2, 'a workload that does not exist exits 2');
  t.match(badWorkload.err, /^weft bench: not a workload: W99x \(W1 \.\.\. W15, W2r\)/, 'and names it');
});

t.test('weft print: as compiled, --before-rewrites, --dot and --svg, equal to the library\'s pictures', async (t) => {
  const compiled = await weft.compile([x], graph, { workers: 0 });
  const text = await weftCommand(['print', graphFile]);
  t.equal(text.code, 0, 'exits 0');
  t.equal(text.out, `${weft.debugprint(compiled)}\n`, 'the compiled graph, as debugprint shows it');
  const asStored = await weftCommand(['print', graphFile, '--before-rewrites']);
  const loaded = weft.deserialize(readFileSync(graphFile, 'utf8'));
  t.equal(asStored.out, `${weft.debugprint(loaded.outputs)}\n`, '--before-rewrites: the graph as the document stores it');
  t.not(asStored.out, text.out, 'which differs from the compiled one (the two exp(x)*2 merge and fuse)');
  const dot = await weftCommand(['print', graphFile, '--dot']);
  t.equal(dot.out, weft.toDot(compiled), '--dot: toDot of the compiled graph');
  const svgFile = join(dir, 'graph.svg');
  const svg = await weftCommand(['print', fnFile, '--svg', svgFile]);
  t.equal(svg.code, 0, '--svg exits 0');
  t.match(svg.err, `wrote ${svgFile}`, 'and says where it wrote');
  const picture = parseSvg(t, readFileSync(svgFile, 'utf8'));
  const doc = weft.deserialize(readFileSync(fnFile, 'utf8'));
  if (doc.kind !== 'function') throw new Error('expected a function document');
  const expected = parseSvg(t, await weft.toSvg(await weft.compile(doc.inputs, doc.outputs, { updates: doc.updates, workers: 0 })));
  const nodes = (root: typeof picture) => findAll(root, (e) => e.tag === 'g' && hasClass(e, 'node')).length;
  t.ok(nodes(picture) >= 4, `the picture has the graph's nodes (${nodes(picture)})`);
  t.equal(nodes(picture), nodes(expected), 'as many as toSvg draws for the compiled function');
  const missing = await weftCommand(['print', join(dir, 'nope.json')]);
  t.equal(missing.code, 2, 'a missing file exits 2');
  t.match(missing.err, /^weft print: cannot read .*nope\.json: ENOENT/, 'and says so');
  writeFileSync(join(dir, 'bad.json'), readFileSync(graphFile, 'utf8').replace('"Elemwise"', '"constructor"'));
  const hostile = await weftCommand(['print', join(dir, 'bad.json')]);
  t.equal(hostile.code, 1, 'a document that does not load exits 1');
  t.match(hostile.err, /^weft print: Error: .*bad\.json: nodes\[\d+\]\.op\.type: /, 'with the loader\'s reason');
});

t.test('weft profile: a Perfetto trace and an SVG timeline of the last call', async (t) => {
  const trace = join(dir, 'layer.trace.json');
  const timeline = join(dir, 'layer.timeline.svg');
  const r = await weftCommand(['profile', fnFile, '--inputs', inputsFile, '--workers', '2', '--calls', '3', '--trace', trace, '--svg', timeline]);
  t.equal(r.code, 0, 'exits 0', { err: r.err });
  t.match(r.err, /^3 calls on 2 workers: wrote .*layer\.trace\.json \(open it at https:\/\/ui\.perfetto\.dev\) and .*layer\.timeline\.svg/m, 'says what it wrote');
  t.match(r.out, /layer/, 'prints the profile');
  const events = JSON.parse(readFileSync(trace, 'utf8')) as { traceEvents: Array<{ ph: string; name: string }> };
  const complete = events.traceEvents.filter((e) => e.ph === 'X');
  t.ok(complete.length >= 3, `the trace has the calls' events (${complete.length})`);
  const svg = parseSvg(t, readFileSync(timeline, 'utf8'));
  const lanes = findAll(svg, (e) => e.tag === 'g' && hasClass(e, 'lane'));
  t.ok(lanes.length >= 1 && lanes.length <= 3, `a lane for the calling thread and at most one per worker (${lanes.length})`);
  t.ok(findAll(svg, (e) => e.tag === 'rect' && hasClass(e, 'task')).length >= 1, 'tasks as bars');
  const wrong = await weftCommand(['profile', fnFile, '--inputs', graphFile]);
  t.equal(wrong.code, 2, 'inputs that do not fit exit 2');
  t.match(wrong.err, /must be a JSON array of 1 value \(one per input of .*layer\.json\), got object/, 'and say what was expected');
  const noInputs = await weftCommand(['profile', fnFile]);
  t.match(noInputs.err, /^weft profile: --inputs INPUTS\.json is required/, '--inputs is required');
});
