// A script that has finished its work exits by itself: after weft.shutdown(), and with the
// default pool (or its own pool) left idle, whose threads must not hold the event loop.
import { spawn } from 'node:child_process';
import t from 'tap';

const dist = new URL('../../dist/src/index.js', import.meta.url).href;

/** Runs an ES module given as text; resolves with its exit code, stdout and time taken. */
function runScript(source: string, timeoutMs = 20_000): Promise<{ code: number | null; out: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the script did not exit within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, ms: performance.now() - started });
    });
  });
}

const work = `
  import * as weft from '${dist}';
  const x = weft.pt.vector('x');
  const f = await weft.compile([x], x.exp().mul(2).sum());
  const r = await f(new Float64Array(1 << 17).fill(1));
  console.log('result', weft.tolist(r));
`;

t.test('exits after weft.shutdown()', async (t) => {
  const { code, out } = await runScript(`${work}\nawait weft.shutdown();\nconsole.log('done');`);
  t.equal(code, 0, out);
  t.match(out, /result 712581\.27\d+\ndone/, `2e * 2^17 is ${2 * Math.E * 2 ** 17}`);
});

t.test('exits on its own with the default pool idle', async (t) => {
  const { code, out } = await runScript(`${work}\nconsole.log('done');`);
  t.equal(code, 0, out);
  t.match(out, /done/);
});

t.test('exits on its own with a pool of its own left open', async (t) => {
  const { code, out } = await runScript(`
    import * as weft from '${dist}';
    const pool = weft.createPool({ workers: 2 });
    const x = weft.pt.vector('x');
    const f = await weft.compile([x], x.mul(3).sum(), { pool });
    console.log('result', weft.tolist(await f(new Float64Array(1 << 17).fill(1))));
  `);
  t.equal(code, 0, out);
  t.match(out, /result 393216/);
});
