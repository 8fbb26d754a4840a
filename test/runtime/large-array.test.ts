// Values too large for the arena are refused at once, with an ArenaFullError that names the node,
// the dtype and shape and the limit, before anything large is built: on the pool, on the calling
// thread, through eval, and for a region that cannot hold values that each fit. Constant folding
// leaves large outputs to run time (it once built them at compile time, for minutes), and the
// arena's size classes let a region of 2 GiB and a little fit in its 4 GiB.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { FOLD_MAX_ELEMENTS } from '../../src/graph/rewriting/constant-folding.js';
import { Arena, ARENA_LIMIT_BYTES, arenaCanHold } from '../../src/workers/arena.js';
import { pt, weft } from '../helpers.js';

const child = fileURLToPath(new URL('./large-array-child.ts', import.meta.url));

interface Outcome {
  readonly name: string;
  readonly ms: number;
  readonly error: { readonly name: string; readonly message: string } | null;
}

/** Runs one case of the child under a heap limit of 128 MB; resolves with what it printed. */
function runCase(name: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--max-old-space-size=128', '--import', 'tsx', child, name], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error(`case ${name} did not end within 60 s (stderr: ${err})`));
    }, 60_000);
    p.on('exit', (code) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`case ${name} exited with ${code}: ${out}${err}`));
      else resolve(JSON.parse(line) as Outcome);
    });
  });
}

const limit = `the shared memory is limited to 4 GiB (one block at most ${ARENA_LIMIT_BYTES} bytes)`;
const huge = `weft arena: output 0 of node 0 (Alloc(TensorConstant{0}, TensorConstant{2147483647})), float64 [2147483647] needs 17179869176 bytes, more than any block can hold: ${limit}`;
const expected: Record<string, string> = {
  zeros: huge,
  inline: huge,
  eval: huge,
  alloc: `weft arena: output 0 of node 0 (Alloc(TensorConstant{0}, TensorConstant{70000}, TensorConstant{70000})), float64 [70000, 70000] needs 39200000000 bytes, more than any block can hold: ${limit}`,
  region:
    'weft arena: the region of a call (its largest value: 2147483648 bytes, from node 0 (Alloc(TensorConstant{1}, TensorConstant{268435456}))) ' +
    `needs 4295083520 bytes, more than any block can hold: ${limit}`,
};

t.test('a value the arena cannot hold is refused at once, in a child with a heap of 128 MB', async (t) => {
  for (const [name, message] of Object.entries(expected)) {
    const outcome = await runCase(name);
    t.same(outcome.error, { name: 'ArenaFullError', message }, `${name}: the exact error`);
    // It took 80 s and ended in a fatal heap error (zeros(2^31).sum()), or minutes of folding.
    t.ok(outcome.ms < 10_000, `${name}: refused in ${outcome.ms.toFixed(0)} ms`);
  }
});

t.test('constant folding leaves outputs of more than FOLD_MAX_ELEMENTS elements to run time', async (t) => {
  const ops = async (v: weft.pt.TensorVariable): Promise<string[]> => (await weft.compile([], v, { workers: 0 })).fgraph.toposort().map((n) => String(n.op));
  t.same(await ops(pt.zeros([16]).sum()), ['DeepCopyOp'], 'a small sum of zeros is folded away (a constant output is copied)');
  const big = FOLD_MAX_ELEMENTS + 1;
  t.ok((await ops(pt.ones([big]).sum())).includes('Alloc'), 'a large Alloc stays in the graph');
  t.equal(weft.tolist(await pt.ones([big]).sum().eval()), big, 'and computes its value when the function runs');
  t.ok((await ops(pt.ones([FOLD_MAX_ELEMENTS]).sum())).every((op) => op !== 'Alloc'), 'one of FOLD_MAX_ELEMENTS elements is still folded');
});

t.test('size classes above 64 MiB step by eighths of the power of two below: a region of 2 GiB and a little fits', (t) => {
  t.ok(arenaCanHold(2 ** 31 + 2 ** 20), 'a float32 chain of 2^28 elements (1 GiB in, 1 GiB between) can run');
  t.notOk(arenaCanHold(ARENA_LIMIT_BYTES + 1));
  const arena = new Arena(1 << 16);
  // Address space only: none of these pages is touched.
  const large = arena.allocate(2 ** 31 + 1);
  t.equal(large.size, 2 ** 31 + 2 ** 28, 'a block of 2 GiB + 1 byte takes 2.25 GiB (it took 4 GiB)');
  t.equal(arena.allocate(2 ** 26 + 1).size, 2 ** 26 + 2 ** 23, 'just above 64 MiB: an eighth more');
  t.equal(arena.allocate(2 ** 20 + 1).size, 2 ** 21, 'below: powers of two');
  arena.allocate(3 * 2 ** 29);
  arena.release(large);
  // The memory cannot grow by 1.125 GiB now: the released block is cut, its rest serves the next.
  const first = arena.allocate(2 ** 30 + 1);
  const second = arena.allocate(2 ** 30 + 1);
  t.same([first.offset - large.offset, second.offset - large.offset], [0, 2 ** 30 + 2 ** 27], 'both cut from the released block');
  t.throws(() => arena.allocate(2 ** 30 + 1), { name: 'ArenaFullError', message: `weft arena: cannot allocate ${2 ** 30 + 1} bytes; ${limit}, and the rest is in use` });
  t.end();
});
