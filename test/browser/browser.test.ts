// weft in a browser: real headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core)
// loads a cross-origin isolated page that runs the browser bundle on pools of real Web Workers.
// Outputs must have the same bits as the same functions in Node (same kernels, same chunks), and
// the profiles must show that the tasks ran on the workers. Without Chromium it is skipped, and
// under WEFT_REQUIRE_BROWSER=1 (as .ci/run sets) it fails instead (test/requires.ts).
import { chromium, type Browser, type Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { buildBrowser } from '../../scripts/build-browser.js';
import { weft } from '../helpers.js';
import { CHROMIUM as CHROMIUM_PROGRAM, requires } from '../requires.js';
import { catalog, encode, mlp, small, type Case, type Encoded } from './cases.js';
import { serve, type TestServer } from './server.js';

const CHROMIUM = requires(t, CHROMIUM_PROGRAM, 'weft in headless Chromium');

/** What the page's scenarios answer (see page.ts). */
interface Run {
  readonly outputs: Encoded[];
  readonly threads: number[];
}
interface Values {
  readonly poolSize: number;
  readonly memoryShared: boolean;
  readonly mlp: { readonly pooled: Run; readonly inline: Run };
  readonly mlpTanh: { readonly pooled: Run; readonly inline: Run };
  readonly catalog32: { readonly pooled: Run; readonly inline: Run };
  readonly catalog64: { readonly pooled: Run; readonly inline: Run };
  readonly small: { readonly pooled: Run; readonly inline: Run };
}
interface Failure {
  readonly name: string;
  readonly message: string;
}

function decode(e: Encoded): Float64Array {
  const bytes = Buffer.from(e.hex, 'hex');
  return new Float64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8);
}

/** How two encoded float64 outputs differ, in a line (the arrays are too long to show). */
function difference(a: Encoded, b: Encoded): string {
  if (String(a.shape) !== String(b.shape) || a.dtype !== b.dtype) return `${a.dtype}[${a.shape}] against ${b.dtype}[${b.shape}]`;
  const [x, y] = [decode(a), decode(b)];
  let n = 0;
  let worst = 0;
  for (let i = 0; i < x.length; i++) {
    if (Object.is(x[i], y[i])) continue;
    n += 1;
    if (Math.abs(x[i]! - y[i]!) >= Math.abs(x[worst]! - y[worst]!) || n === 1) worst = i;
  }
  return `${n} of ${x.length} elements differ; at ${worst}: ${x[worst]} against ${y[worst]}`;
}

/** Asserts that outputs have equal shapes, dtypes and bits. */
function sameBits(t: Test, got: readonly Encoded[], want: readonly Encoded[], message: string): void {
  const diffs = want.map((w, j) => (got[j] && got[j]!.hex === w.hex && String(got[j]!.shape) === String(w.shape) ? '' : got[j] ? `output ${j}: ${difference(got[j]!, w)}` : `output ${j} missing`));
  t.ok(got.length === want.length && diffs.every((d) => d === ''), message, { diffs: diffs.filter((d) => d !== '') });
}

/** The same case in Node: on a pool of two worker threads, and on the calling thread. */
async function inNode(c: Case, pool: weft.Pool, k = 0): Promise<{ pooled: Encoded[]; inline: Encoded[] }> {
  const pooled = await weft.compile(c.inputs, c.outputs, { pool, workers: 2 });
  const inline = await weft.compile(c.inputs, c.outputs, { workers: 0 });
  const result = {
    pooled: ((await pooled(...c.values(k))) as weft.NdArray[]).map(encode),
    inline: ((await inline(...c.values(k))) as weft.NdArray[]).map(encode),
  };
  pooled.dispose();
  inline.dispose();
  return result;
}

if (CHROMIUM !== undefined) {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const run = <T>(expression: string): Promise<T> => page.evaluate(expression) as Promise<T>;

  t.before(async () => {
    await buildBrowser();
    server = await serve();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && pageErrors.push(m.text()));
    await page.goto(`${server.url}/`);
    await page.waitForFunction('globalThis.weftReady === true', undefined, { timeout: 30_000 });
  });
  t.teardown(async () => {
    await browser?.close();
    await server?.close();
  });

  const nodePool = weft.createPool({ workers: 2 });
  t.teardown(() => nodePool.close());

  t.test('the page is cross-origin isolated; the default pool has a worker per core', async (t) => {
    const env = await run<{ crossOriginIsolated: boolean; sharedArrayBuffer: string; hardwareConcurrency: number; defaultPoolSize: number }>(
      'weftTests.environment()',
    );
    t.equal(env.crossOriginIsolated, true);
    t.equal(env.sharedArrayBuffer, 'function', 'SharedArrayBuffer exists');
    t.ok(env.hardwareConcurrency >= 1);
    t.equal(env.defaultPoolSize, env.hardwareConcurrency, 'createPool() makes navigator.hardwareConcurrency workers');
  });

  t.test('an MLP on two Web Workers and on the page thread: the bits of Node', async (t) => {
    const got = await run<Values>('weftTests.values()');
    t.equal(got.poolSize, 2);
    t.equal(got.memoryShared, true, "the arena's memory is a SharedArrayBuffer");
    for (const name of ['mlp', 'small'] as const) {
      const want = await inNode(name === 'mlp' ? mlp(weft) : small(weft), nodePool);
      sameBits(t, want.pooled, want.inline, `${name}: Node's pool and calling thread agree`);
      sameBits(t, got[name].pooled.outputs, want.pooled, `${name}: the browser's pool gives Node's bits`);
      sameBits(t, got[name].inline.outputs, want.inline, `${name}: the browser's workers: 0 gives Node's bits`);
      t.same(got[name].inline.threads, [0], `${name}: workers: 0 runs on the page's thread`);
    }
    t.same(got.mlp.pooled.outputs[0]!.shape, [256, 10]);
    // Math.tanh of Chromium's V8 and of Node's differ in the last bits, but weft's tanh is its
    // own (kernels/vmath), in the JS and the WebAssembly loops alike: the same bits everywhere.
    const tanh = await inNode(mlp(weft, 'tanh'), nodePool);
    sameBits(t, got.mlpTanh.pooled.outputs, got.mlpTanh.inline.outputs, 'tanh MLP: the browser\'s pool and page thread agree');
    sameBits(t, got.mlpTanh.pooled.outputs, tanh.pooled, "tanh MLP: the browser's pool gives Node's bits");
    t.same(got.mlpTanh.pooled.threads, [1, 2], 'the tanh MLP ran on both Web Workers (over 12 to 60 calls)');
    // Every function and reduction that is weft's own: the same bits in Chromium and in Node.
    for (const [name, dtype] of [['catalog32', 'float32'], ['catalog64', 'float64']] as const) {
      const want = await inNode(catalog(weft, dtype), nodePool);
      sameBits(t, want.pooled, want.inline, `${dtype} math functions, sums and softmax: Node's pool and calling thread agree`);
      sameBits(t, got[name].pooled.outputs, want.pooled, `${dtype} math functions, sums and softmax: the browser's pool gives Node's bits`);
      sameBits(t, got[name].inline.outputs, want.inline, `${dtype} math functions, sums and softmax: the browser's page thread gives Node's bits`);
    }
    t.same(got.mlp.pooled.threads, [1, 2], 'the MLP ran its tasks on both Web Workers (over 12 to 60 calls), none on the page thread');
    t.same(got.small.pooled.threads, [0], 'the small graph ran inline on the page thread');
  });

  t.test('concurrent calls on Web Workers each give their own bits', async (t) => {
    const calls = 6;
    const got = await run<Encoded[][]>(`weftTests.concurrent(${calls})`);
    t.equal(got.length, calls);
    for (let k = 0; k < calls; k++) sameBits(t, got[k]!, (await inNode(mlp(weft), nodePool, k)).pooled, `call ${k}`);
    t.not(got[0]![1]!.hex, got[1]![1]!.hex, 'the calls had different inputs');
  });

  t.test("users' kernel modules in Web Workers; a kernel that throws rejects the call with its node", async (t) => {
    const got = await run<{ error?: Failure; shared: number[]; after: number; doubled: number; doubledThreads: number[] }>('weftTests.fault()');
    t.equal(got.error?.name, 'NodeError');
    t.match(got.error?.message, /^boom from a kernel\n {2}in node \d+: KernelOp\{kernelName=test\.throw\}\(/);
    t.same(got.shared, [1, 2, 3], 'the shared variable kept its value');
    t.equal(got.after, 2 * (1 << 16), 'the pool still works');
    t.equal(got.doubled, 6 * (1 << 16), "a kernel from the user's module computes on the workers");
    t.notOk(got.doubledThreads.includes(0), `its tasks ran on workers ${got.doubledThreads}`);
  });

  t.test('weft.release in the page: memory given back holds the next output', async (t) => {
    const got = await run<Record<string, number | boolean>>('weftTests.release()');
    t.equal(got.given, 4 << 16, 'release took the 256 KiB output back');
    t.equal(got.emptied, 0, 'the released array is empty');
    t.equal(got.wrong, 0, "the next output holds its own call's values");
    t.equal(got.secondGiven, 4 << 16, 'and goes back in turn');
    t.equal(got.sharedWasShared, true, 'a 1 MiB cumsum on a worker is written in shared memory');
    t.equal(got.sharedGiven, 0, 'which release leaves alone');
    t.equal(got.sharedLast, (1 << 20) / 4, 'intact');
    t.equal(got.copiedLast, (1 << 20) / 2, 'the next output of its size holds its own call\'s values');
    t.equal(got.copiedGiven, 1 << 20, 'and was copied out into memory release takes');
  });

  t.test('pool.close() ends the workers; a function on the closed pool rejects', async (t) => {
    const got = await run<{ closed: boolean; before: Encoded[]; after?: Failure }>('weftTests.close()');
    sameBits(t, got.before, (await inNode(mlp(weft), nodePool)).pooled, 'before closing: the bits of Node');
    t.equal(got.closed, true);
    t.equal(got.after?.name, 'PoolClosedError');
    t.match(got.after?.message, /: the pool was closed \(pool\.close\(\) or weft\.shutdown\(\)\)/);
  });

  t.test('a pool whose worker script does not load rejects its calls, saying so', async (t) => {
    const got = await run<{ first?: Failure; second?: Failure }>('weftTests.missingWorker()');
    t.match(got.first?.message, /a Web Worker failed: its script \(\/dist\/browser\/missing-worker\.js\) did not load/);
    t.match(got.second?.message, /a Web Worker failed/);
  });

  t.test('no errors on the page', async (t) => {
    // The missing worker script of the test above is the one 404 expected.
    t.same(
      pageErrors.filter((e) => !/404/.test(e)),
      [],
    );
    t.ok(pageErrors.filter((e) => /404/.test(e)).length <= 2, 'only the missing worker script was not found');
  });
}
