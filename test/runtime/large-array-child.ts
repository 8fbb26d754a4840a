// Child process of large-array.test.ts (run with a small heap limit): builds and calls the graph
// named on the command line, whose values the arena cannot hold, and prints one JSON line: the
// error's name and message and how long the whole attempt took (compile included). A graph
// that built its arrays would run for minutes or die of a full heap instead.
import { pt, weft } from '../helpers.js';

const n = 2 ** 31 - 1;
const cases: Record<string, () => Promise<unknown>> = {
  /** zeros(n).sum() on the default pool. */
  zeros: async () => (await weft.compile([], pt.zeros([n]).sum()))(),
  /** The same on the calling thread alone. */
  inline: async () => (await weft.compile([], pt.zeros([n]).sum(), { workers: 0 }))(),
  /** A 70000 x 70000 alloc as the output. */
  alloc: async () => (await weft.compile([], pt.alloc(0, 70000, 70000)))(),
  /** Variable.eval, which compiles for the calling thread. */
  eval: () => pt.zeros([n]).sum().eval(),
  /** Values that each fit, in a region that cannot: two float64 vectors of 2 GiB. */
  // (Both operands computed: an Alloc that the other operand broadcasts would be read as its value, local_elemwise_alloc.)
  region: async () => (await weft.compile([], pt.ones([2 ** 28]).exp().add(pt.zeros([2 ** 28]).exp()).sum(), { workers: 0 }))(),
};

const name = process.argv[2]!;
const started = performance.now();
try {
  await cases[name]!();
  console.log(JSON.stringify({ name, ms: performance.now() - started, error: null }));
} catch (e) {
  const error = e as Error;
  console.log(JSON.stringify({ name, ms: performance.now() - started, error: { name: error.name, message: error.message } }));
}
await weft.shutdown();
