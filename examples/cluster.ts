// 10,000 calls of an MLP's forward pass spread over two `weft worker` processes through Redis
// (weft.cluster), with a progress bar; a sample of the results is checked bit for bit against the
// same calls made locally. `npx tsx examples/cluster.ts [calls]` (REDIS_URL, or a local
// redis-server that the example starts).
import cliProgress from 'cli-progress';
import * as weft from '../src/index.js';
import { startLocalCluster } from './lib/local-cluster.js';

const { pt } = weft;
const CALLS = Number(process.argv[2] ?? 10_000);
const [FEATURES, HIDDEN, CLASSES, BATCH] = [64, 128, 10, 32];

const rng = new weft.Rng(3);
const x = pt.matrix('x', 'float32');
const w1 = weft.shared(rng.normal([FEATURES, HIDDEN], { std: 0.125, dtype: 'float32' }), { name: 'w1' });
const w2 = weft.shared(rng.normal([HIDDEN, CLASSES], { std: 0.09, dtype: 'float32' }), { name: 'w2' });
const probabilities = pt.softmax(pt.relu(x.dot(w1)).dot(w2));
const forward = await weft.compile([x], probabilities, { name: 'mlp forward', workers: 0 });

const cluster = await startLocalCluster(2);
const remote = await weft.cluster.connect(forward, { connection: cluster.url, queue: cluster.queue });
console.log(`queue '${cluster.queue}' on ${cluster.url}: 2 worker processes; function ${remote.hash.slice(0, 12)}`);

const batches = Array.from({ length: 16 }, () => rng.normal([BATCH, FEATURES], { dtype: 'float32' }));
const bar = new cliProgress.SingleBar({ format: 'calls |{bar}| {value}/{total} {rate}/s', noTTYOutput: true, notTTYSchedule: 1000 }, cliProgress.Presets.shades_classic);
const started = performance.now();
bar.start(CALLS, 0, { rate: 0 });
const results = await remote.map(
  Array.from({ length: CALLS }, (_, i) => [batches[i % batches.length]!] as [weft.NdArray]),
  { onProgress: (done) => bar.update(done, { rate: Math.round(done / ((performance.now() - started) / 1000)) }) },
);
bar.stop();
const seconds = (performance.now() - started) / 1000;

const bytes = (a: weft.NdArray): string => Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength).toString('hex');
const expected = await Promise.all(batches.map((b) => forward(b)));
const wrong = results.filter((r, i) => bytes(r) !== bytes(expected[i % batches.length]!)).length;
console.log(`${CALLS} calls in ${seconds.toFixed(2)} s (${Math.round(CALLS / seconds)} calls/s over 2 worker processes); ${CALLS - wrong} of ${CALLS} equal the local calls bit for bit`);
await remote.close();
await cluster.stop();
await weft.shutdown();
if (wrong > 0) throw new Error(`${wrong} results differ from the local calls`);
