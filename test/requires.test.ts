// The rule for tests that need a program a fresh machine lacks (test/requires.ts): without it they
// skip with the reason and how to get it, under its required variable they fail. Checked on real
// programs, and on the browser test itself run as a child process with Chromium pointed elsewhere.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { CHROMIUM, isRequired, locate, REDIS, skipReason, type Program } from './requires.js';

const node: Program = { name: 'Node', defaultPath: process.execPath, pathVariable: 'TEST_NODE', requiredVariable: 'TEST_REQUIRE_NODE', install: 'apt-get install -y nodejs', probe: ['--version'] };

t.test('a program that runs is available, with its path and version', async (t) => {
  const found = locate(node, {});
  t.same(found, { kind: 'available', path: process.execPath, version: process.version });
});

t.test('a missing program is unavailable, saying where it was looked for', async (t) => {
  t.same(locate(node, { TEST_NODE: '/nonexistent/node' }), { kind: 'unavailable', reason: 'Node not found at /nonexistent/node' });
});

t.test('a program that is there but does not run is unavailable, with what it said', async (t) => {
  const broken: Program = { ...node, defaultPath: process.execPath, probe: ['-e', 'console.error("no display"); process.exit(3)'] };
  const found = locate(broken, {});
  t.equal(found.kind, 'unavailable');
  t.match(found.kind === 'unavailable' ? found.reason : '', `Node at ${process.execPath} does not run (`);
  t.match(found.kind === 'unavailable' ? found.reason : '', 'no display');
});

t.test('the skip variable skips even where the program runs; the required variable is read as 1 or true', async (t) => {
  const skippable: Program = { ...node, skipVariable: 'TEST_SKIP_NODE' };
  t.same(locate(skippable, { TEST_SKIP_NODE: '1' }), { kind: 'unavailable', reason: 'TEST_SKIP_NODE=1 skips the tests that need Node' });
  t.equal(isRequired(node, { TEST_REQUIRE_NODE: '1' }), true);
  t.equal(isRequired(node, { TEST_REQUIRE_NODE: 'true' }), true);
  t.equal(isRequired(node, { TEST_REQUIRE_NODE: '0' }), false);
  t.equal(isRequired(node, {}), false);
  t.equal(skipReason(CHROMIUM, 'Chromium not found at /x'), 'Chromium not found at /x; to run this test: apt-get install -y chromium, or set WEFT_CHROMIUM=/path/to/it');
});

/** A test file run as tap runs it, with `program` pointed at a path that does not exist (`/nonexistent/NAME`). */
function runWithout(testFile: string, program: Program, env: Record<string, string>): { status: number | null; output: string } {
  const file = fileURLToPath(new URL(testFile, import.meta.url));
  const rest = { ...process.env };
  delete rest[program.requiredVariable];
  if (program.skipVariable) delete rest[program.skipVariable];
  const missing = `/nonexistent/${program.defaultPath.split('/').pop()}`;
  const r = spawnSync(process.execPath, ['--import=tsx', file], { encoding: 'utf8', env: { ...rest, [program.pathVariable]: missing, ...env }, timeout: 120_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

const runBrowserTest = (env: Record<string, string>): { status: number | null; output: string } => runWithout('./browser/browser.test.ts', CHROMIUM, env);

t.test('without Chromium the browser test is skipped, counted as a skip, with its reason', async (t) => {
  const r = runBrowserTest({});
  t.equal(r.status, 0, 'exits 0');
  t.match(r.output, /ok 1 - weft in headless Chromium # SKIP Chromium not found at \/nonexistent\/chromium; to run this test: apt-get install -y chromium, or set WEFT_CHROMIUM=\/path\/to\/it/);
  t.notMatch(r.output, /not ok/, 'nothing fails: the SKIP directive makes tap count it as a skip');
});

t.test('under WEFT_REQUIRE_BROWSER=1 a missing Chromium fails the browser test', async (t) => {
  const r = runBrowserTest({ WEFT_REQUIRE_BROWSER: '1' });
  t.not(r.status, 0, 'exits non-zero');
  t.match(r.output, 'not ok 1 - Chromium not found at /nonexistent/chromium, and WEFT_REQUIRE_BROWSER=1 requires it (apt-get install -y chromium, or set WEFT_CHROMIUM)');
});

const runClusterTest = (env: Record<string, string>): { status: number | null; output: string } => runWithout('./cluster/cluster.test.ts', REDIS, env);

t.test('without redis-server the cluster test is skipped with its reason; under WEFT_REQUIRE_REDIS=1 it fails', async (t) => {
  const skipped = runClusterTest({});
  t.equal(skipped.status, 0, 'exits 0 without it');
  t.match(skipped.output, /ok \d+ - weft\.cluster over Redis # SKIP redis-server not found at \/nonexistent\/redis-server; to run this test: apt-get install -y redis-server, or set WEFT_REDIS_SERVER=\/path\/to\/it/);
  t.notMatch(skipped.output, /not ok/, 'nothing fails');
  const required = runClusterTest({ WEFT_REQUIRE_REDIS: '1' });
  t.not(required.status, 0, 'exits non-zero when required');
  t.match(required.output, /not ok \d+ - redis-server not found at \/nonexistent\/redis-server, and WEFT_REQUIRE_REDIS=1 requires it \(apt-get install -y redis-server, or set WEFT_REDIS_SERVER\)/);
});
