// Every ```ts block of README.md and docs/*.md type-checks under `tsc --strict` and runs, as a user
// would run it: importing 'weft' (the built package in dist/, as installed), so that a guide cannot
// rot. How blocks become programs: test/doc-blocks.ts and docs/README.md.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { blocksOf, needsRedis, programsOf, type DocProgram } from './doc-blocks.js';
import { startRedis, type RedisServer } from './redis.js';
import { REDIS, requires } from './requires.js';

// Some 35 programs, each starting weft (and some a pool or Redis): minutes on a loaded machine.
t.setTimeout(300_000);

const root = fileURLToPath(new URL('../', import.meta.url));
// Inside the package, so that 'weft' resolves to the package itself (its exports: dist/).
const dir = `${root}.doc-tests/`;

const docs = ['README.md', ...readdirSync(`${root}docs`).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const programs = docs.flatMap((d) => programsOf(blocksOf(d, readFileSync(`${root}${d}`, 'utf8'))));

rmSync(dir, { recursive: true, force: true });
mkdirSync(dir);
for (const p of programs) {
  writeFileSync(`${dir}${p.name}`, p.source);
  for (const [file, code] of p.files) writeFileSync(`${dir}${file}`, code);
}
writeFileSync(
  `${dir}tsconfig.json`,
  JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2024', 'DOM'],
      types: ['node'],
      strict: true,
      noImplicitOverride: true,
      skipLibCheck: true,
      noEmit: true,
    },
    include: ['*.ts'],
  }),
);

t.test('the guides have code to check', async (t) => {
  t.ok(programs.length >= 10, `${programs.length} programs from ${docs.length} documents`);
});

t.test('every code block type-checks under tsc --strict', async (t) => {
  // tsc's .js entry, not its extensionless bin: under tap's process hooks node would require()
  // the bin, an ES module, and fail before tsc starts.
  const tsc = spawnSync(process.execPath, [`${root}node_modules/typescript/lib/tsc.js`, '-p', `${dir}tsconfig.json`], { encoding: 'utf8' });
  const errors = `${tsc.stdout}${tsc.stderr}`.split('\n').filter((l) => /error TS/.test(l));
  t.same(errors, [], 'no type errors (files are named document-line.ts)');
  t.equal(tsc.status, 0, 'tsc exits 0', { output: `${tsc.stdout}${tsc.stderr}`.slice(-3000) });
});

// Programs that read process.env.REDIS_URL get a redis-server of the test's own (or are skipped,
// with the reason, on a machine without one; CI requires it).
const redisPath = programs.some(needsRedis) ? requires(t, REDIS, 'the guides\' cluster programs') : undefined;
const redis: Promise<RedisServer> | undefined = redisPath ? startRedis(redisPath) : undefined;
t.teardown(async () => (await redis)?.stop());
const runnable = programs.filter((p) => !needsRedis(p) || redis);

/** Runs one program as a user would: tsx for TypeScript, in the folder beside its files. */
async function runProgram(p: DocProgram): Promise<{ code: number | null; output: string }> {
  const env = { ...process.env, NODE_OPTIONS: '', ...(needsRedis(p) ? { REDIS_URL: (await redis!).url } : {}) };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import=tsx', p.name], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d));
    child.stderr.on('data', (d: Buffer) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Runs `programs` three at a time (each takes seconds, mostly loading weft and starting workers). */
function runAll(all: readonly DocProgram[], concurrency = 3): Promise<{ code: number | null; output: string }>[] {
  const results: Promise<{ code: number | null; output: string }>[] = [];
  const slots: Promise<unknown>[] = [];
  all.forEach((p, i) => {
    const started = (slots[i - concurrency] ?? Promise.resolve()).then(() => runProgram(p));
    results.push(started);
    slots.push(started);
  });
  return results;
}

const results = runAll(runnable);
runnable.forEach((p, i) => {
  t.test(`${p.doc}, the block at line ${p.line} runs`, async (t) => {
    const r = await results[i]!;
    t.equal(r.code, 0, 'exits 0', { output: r.output.slice(-2000) });
  });
});
