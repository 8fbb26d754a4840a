// The README's Quick start must stay true: its commands are npm's own or scripts package.json
// defines, the test command it names is the one .ci/run runs, and the README names the variables
// of the tests that need a program (test/requires.ts).
import { readFileSync } from 'node:fs';
import t from 'tap';
import { CHROMIUM, REDIS } from './requires.js';

const root = new URL('../', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');
const ciRun = readFileSync(new URL('.ci/run', root), 'utf8');
const scripts = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** The shell commands of the README's Quick start block, comments and `&&` chains split. */
function quickStartCommands(): string[] {
  const section = readme.split(/^## Quick start$/m)[1]?.split(/^## /m)[0] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line !== '')
    .flatMap((line) => line.split('&&').map((c) => c.trim()));
}

/** The npm script a command runs (npm test and npm run X), or null for npm's own commands. */
function scriptOf(command: string): string | null {
  const words = command.split(/\s+/);
  if (words[0] !== 'npm') throw new Error(`not an npm command: ${command}`);
  if (words[1] === 'run' || words[1] === 'run-script') return words[2]!;
  if (['test', 'start', 'stop', 'restart'].includes(words[1]!)) return words[1]!;
  return null;
}

t.test('the Quick start is two lines: install and demo, then the tests', async (t) => {
  t.same(quickStartCommands(), ['npm ci', 'npm run demo', 'npm test']);
});

t.test('every command of the Quick start is npm\'s own or a script package.json defines', async (t) => {
  for (const command of quickStartCommands()) {
    const script = scriptOf(command);
    if (script === null) t.equal(command, 'npm ci', `${command} is npm's own`);
    else t.ok(scripts[script], `${command}: package.json defines the script '${script}'`);
  }
});

t.test('.ci/run installs with npm ci and runs the test command of the Quick start', async (t) => {
  const testCommand = quickStartCommands().find((c) => scriptOf(c) === 'test');
  const lines = ciRun.split('\n').map((l) => l.trim()).filter((l) => !l.startsWith('#'));
  t.ok(lines.some((l) => /^npm ci\b/.test(l)), '.ci/run runs npm ci');
  t.ok(testCommand && lines.some((l) => l.startsWith(`${testCommand} `) || l === testCommand), `.ci/run runs ${testCommand}`);
  t.match(ciRun, /echo "\$\{passed\} passed, \$\{failed\} failed/, '.ci/run closes with its own "N passed, N failed" line');
});

t.test('tests that need a program: .ci/run requires it, the README explains the skip and the rule', async (t) => {
  for (const program of [CHROMIUM, REDIS]) {
    const apt = program.install.split(' ').pop()!;
    t.match(ciRun, new RegExp(`export ${program.requiredVariable}=1`), `.ci/run sets ${program.requiredVariable}=1`);
    t.match(ciRun, new RegExp(`\\[ -x ${program.defaultPath} \\] \\|\\| missing\\+=\\(${apt}\\)`), `.ci/run installs ${apt} when it is missing`);
    for (const v of [program.requiredVariable, program.pathVariable, program.skipVariable!, apt]) t.ok(readme.includes(v), `README names ${v}`);
  }
  t.match(ciRun, /apt-get install -y -qq "\$\{missing\[@\]\}"/, '.ci/run installs what is missing with apt');
  t.match(readme, /^### Tests that need a browser or a server$/m);
});
