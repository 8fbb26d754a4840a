// Differential fuzzing of the worker runtime: seeded random graphs, each compiled for 0 (inline
// plan), 1, 2 and 3 workers on one pool and checked against the reference executor (bitwise
// equal across worker counts, within tolerance of the reference, hazard-free plans).
// Replay one seed (or a comma-separated list): WEFT_FUZZ_SEED=123 npx tap test/runtime/fuzz.test.ts
// Other counts: WEFT_FUZZ_COUNT=1000 (seeds 1..N), WEFT_FUZZ_FROM=5000 (first seed).
import t from 'tap';
import { weft } from '../helpers.js';
import { sizeClassOf } from './fuzz-graph.js';
import { runCase, type CaseResult } from './fuzz-run.js';

const COUNT = Number(process.env['WEFT_FUZZ_COUNT'] ?? 300);
const FROM = Number(process.env['WEFT_FUZZ_FROM'] ?? 1);
const only = process.env['WEFT_FUZZ_SEED'];
const seeds = only
  ? only.split(',').map((s) => Number(s.trim()))
  : Array.from({ length: COUNT }, (_, i) => FROM + i);
const BATCH = 60;

t.test('differential fuzzing of the worker runtime', async (t) => {
  const pool = weft.createPool({ workers: 3 });
  t.teardown(() => pool.close());
  const results: CaseResult[] = [];
  for (let b = 0; b < seeds.length; b += BATCH) {
    const batch = seeds.slice(b, b + BATCH);
    await t.test(`seeds ${batch[0]}..${batch[batch.length - 1]}`, async (t) => {
      for (const seed of batch) {
        const result = await runCase(seed, pool);
        results.push(result);
        if (result.problems.length > 0) {
          // Plain text on stderr as well: the graph reads better there than folded in YAML.
          console.error(result.report);
          t.fail(`seed ${seed}`, { diagnostic: true, report: result.report });
        } else t.pass(`seed ${seed}`);
      }
    });
  }
  const ran = results.filter((r) => r.stats);
  const chunked = ran.filter((r) => r.stats!.chunkedCalls > 0).length;
  const workers = ran.filter((r) => r.stats!.onWorkers).length;
  const big = ran.filter((r) => r.stats!.largestInput >= 100_000).length;
  const inplace = ran.filter((r) => r.stats!.inplace).length;
  const callingThread = ran.filter((r) => r.stats!.callingThread).length;
  const updates = ran.filter((r) => r.stats!.updates).length;
  const updatesInplace = ran.filter((r) => r.stats!.updatesInplace).length;
  const wasm = ran.filter((r) => r.stats!.wasmCalls > 0).length;
  const [wasmCalls, elemwiseCalls] = ran.reduce(([w, e], r) => [w + r.stats!.wasmCalls, e + r.stats!.elemwiseCalls], [0, 0]);
  const slowest = [...results].sort((a, b) => b.ms - a.ms)[0];
  for (const size of ['small', 'medium', 'big'] as const) {
    const of = results.filter((r) => sizeClassOf(r.seed) === size);
    t.comment(`${of.length} ${size} graphs in ${(of.reduce((s, r) => s + r.ms, 0) / 1000).toFixed(1)} s`);
  }
  t.comment(
    `${results.length} graphs: ${workers} planned onto the workers, ${chunked} with chunked calls, ${big} with an input of 100k+ elements, ` +
      `${inplace} with inplace nodes, ${callingThread} with calling-thread tasks, ` +
      `${updates} updating shared variables (${updatesInplace} in place); ` +
      `${wasm} with WebAssembly element-wise loops (${wasmCalls} of ${elemwiseCalls} element-wise calls); ` +
      `${results.filter((r) => r.problems.length > 0).length} failing; slowest seed ${slowest?.seed} (${slowest?.ms.toFixed(0)} ms); ` +
      `arena ${(pool.arena.byteLength / 2 ** 20).toFixed(0)} MiB`,
  );
  if (!only) {
    // The fuzzer must reach the runtime's interesting paths, not only the inline one.
    t.ok(workers >= seeds.length / 3, 'a third of the graphs or more run on the workers');
    t.ok(chunked >= seeds.length / 6, 'a sixth of the graphs or more split calls into tasks');
    // Most graphs have element-wise calls the WebAssembly loops can run (their bits checked with
    // the rest): calls with a program, run in wasm wherever their views allow it.
    t.ok(wasm >= seeds.length / 2, `half of the graphs or more have WebAssembly element-wise loops (${wasm})`);
  }
});
