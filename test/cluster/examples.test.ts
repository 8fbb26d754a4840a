// The cluster examples run as a user runs them (tsx), briefly, each starting its own redis-server
// and two `weft worker` processes: examples/cluster.ts (500 calls, results equal local
// calls bit for bit) and examples/cluster-sgd.ts (30 steps, the loss falls).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { requires } from '../helpers.js';
import { REDIS } from '../requires.js';

// Real processes (redis-server, weft worker): each takes seconds to start on a loaded machine.
t.setTimeout(300_000);

const run = promisify(execFile);
const root = new URL('../..', import.meta.url);

const redisPath = requires(t, REDIS, 'the cluster examples');
if (redisPath) {
  const env = { ...process.env, NODE_OPTIONS: '', WEFT_REDIS_SERVER: redisPath, REDIS_URL: '' };

  t.test('examples/cluster.ts: 500 calls over 2 worker processes, equal to local calls', async (t) => {
    const { stdout } = await run(process.execPath, ['--import=tsx', 'examples/cluster.ts', '500'], { cwd: root, env, timeout: 120_000 });
    t.match(stdout, /500 calls in [\d.]+ s \(\d+ calls\/s over 2 worker processes\); 500 of 500 equal the local calls bit for bit/, 'its summary line');
  });

  t.test('examples/cluster-sgd.ts learns (30 steps)', async (t) => {
    const { stdout } = await run(process.execPath, ['--import=tsx', 'examples/cluster-sgd.ts', '30'], { cwd: root, env, timeout: 120_000 });
    const m = /loss ([\d.]+) -> ([\d.]+) over 30 steps/.exec(stdout);
    t.ok(m, 'its summary line');
    t.ok(Number(m![2]) < 0.7 * Number(m![1]), `the loss fell: ${m![1]} -> ${m![2]}`);
  });
}
