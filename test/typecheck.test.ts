// The project type-checks under `tsc --strict` (src, tests, examples, bench), and with it the
// public API's types hold what test/types/api-types.ts expects (typed calls, profile, ops' calls,
// setValue, tolist): a type that stops helping fails npm test, not only `npm run typecheck`.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = fileURLToPath(new URL('../', import.meta.url));

t.test('tsc --strict accepts the project and the API type checks', async (t) => {
  // tsc's .js entry: under tap's process hooks node would require() the extensionless bin.
  const tsc = spawnSync(process.execPath, [`${root}node_modules/typescript/lib/tsc.js`, '-p', `${root}tsconfig.json`, '--noEmit'], { encoding: 'utf8' });
  const errors = `${tsc.stdout}${tsc.stderr}`.split('\n').filter((l) => /error TS/.test(l));
  t.same(errors, [], 'no type errors');
  t.equal(tsc.status, 0, 'tsc exits 0', { output: `${tsc.stdout}${tsc.stderr}`.slice(-3000) });
});
