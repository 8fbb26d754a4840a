// Data-parallel SGD over a cluster: each step cuts the batch into one shard per worker process,
// each job computes the loss and the gradient on its shard (weft.cluster, `remote.map`), and the
// caller averages the gradients and updates the parameters, which live here and travel with each
// job as inputs. `npx tsx examples/cluster-sgd.ts [steps]`.
import * as weft from '../src/index.js';
import { startLocalCluster } from './lib/local-cluster.js';

const { pt } = weft;
const STEPS = Number(process.argv[2] ?? 200);
const [FEATURES, SAMPLES, SHARDS, RATE] = [32, 4096, 2, 0.5];

// Synthetic, linearly separable-ish data: labels from a hidden weight vector, with noise.
const rng = new weft.Rng(11);
const truth = rng.normal([FEATURES], { dtype: 'float32' });
const xs = rng.normal([SAMPLES, FEATURES], { dtype: 'float32' });
const noise = rng.normal([SAMPLES], { std: 0.5 });
const ys = Float32Array.from({ length: SAMPLES }, (_, i) => {
  let z = noise.data[i]!;
  for (let j = 0; j < FEATURES; j++) z += xs.get(i, j) * truth.data[j]!;
  return z > 0 ? 1 : 0;
});

// The shard's loss and gradients as a function of the data and the parameters (no shared state).
const x = pt.matrix('x', 'float32');
const y = pt.vector('y', 'float32');
const w = pt.vector('w', 'float32');
const b = pt.scalar('b', 'float32');
const p = pt.sigmoid(x.dot(w).add(b));
const loss = pt.binaryCrossentropy(p, y).mean();
const [gw, gb] = weft.grad(loss, [w, b]);
const shardGradient = await weft.compile([x, y, w, b], [loss, gw!, gb!], { name: 'shard gradient', workers: 0 });

const cluster = await startLocalCluster(SHARDS);
const remote = await weft.cluster.connect(shardGradient, { connection: cluster.url, queue: cluster.queue });
console.log(`${SHARDS} worker processes on ${cluster.url}; each step: ${SHARDS} shards of ${SAMPLES / SHARDS} samples`);

const params = { w: new Float32Array(FEATURES), b: 0 };
const shardRows = SAMPLES / SHARDS;
const shards = Array.from({ length: SHARDS }, (_, s) => ({
  x: weft.ndarray(xs.data.subarray(s * shardRows * FEATURES, (s + 1) * shardRows * FEATURES) as Float32Array, [shardRows, FEATURES]),
  y: ys.subarray(s * shardRows, (s + 1) * shardRows),
}));
const losses: number[] = [];
for (let step = 1; step <= STEPS; step++) {
  const answers = await remote.map(shards.map((s) => [s.x, s.y, params.w, params.b] as const));
  // Equal shards: the batch's gradient is the mean of the shards' gradients.
  let meanLoss = 0;
  const meanW = new Float32Array(FEATURES);
  let meanB = 0;
  for (const [l, g, gbias] of answers) {
    meanLoss += l!.data[0]! / SHARDS;
    for (let j = 0; j < FEATURES; j++) meanW[j]! += g!.data[j]! / SHARDS;
    meanB += gbias!.data[0]! / SHARDS;
  }
  for (let j = 0; j < FEATURES; j++) params.w[j]! -= RATE * meanW[j]!;
  params.b -= RATE * meanB;
  losses.push(meanLoss);
  if (step === 1 || step % 10 === 0 || step === STEPS) console.log(`step ${step}: loss ${meanLoss.toFixed(4)}`);
}
await remote.close();
await cluster.stop();
await weft.shutdown();
console.log(`loss ${losses[0]!.toFixed(4)} -> ${losses[losses.length - 1]!.toFixed(4)} over ${STEPS} steps`);
if (STEPS >= 20 && !(losses[losses.length - 1]! < 0.7 * losses[0]!)) throw new Error('the loss did not fall');
