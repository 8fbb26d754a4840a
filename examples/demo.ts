// The main job: trains a multilayer perceptron on seeded synthetic data with weft (a symbolic
// graph, its gradients, shared-variable updates), running every step across the pool's worker
// threads while a progress bar shows the loss fall; then it measures the steps per second on one
// worker and on all of them, and prints a summary.
import { availableParallelism } from 'node:os';
import cliProgress from 'cli-progress';
import ndarray from 'ndarray';
import * as weft from '../src/index.js';

const { pt } = weft;
const FEATURES = 64;
const HIDDEN = 512;
const CLASSES = 10;
const SAMPLES = 16384;
const BATCH = 1024;
const EPOCHS = 8;
const LEARNING_RATE = 0.1;

// Synthetic data: labels given by a random "teacher" network, so the task is learnable.
const rng = new weft.Rng(2026);
const teacher = rng.normal([FEATURES, CLASSES]);
const inputs = rng.normal([SAMPLES, FEATURES], { dtype: 'float32' });
const targets = new Float32Array(SAMPLES * CLASSES);
for (let i = 0; i < SAMPLES; i++) {
  let best = 0;
  let bestScore = -Infinity;
  for (let c = 0; c < CLASSES; c++) {
    let score = 0;
    for (let j = 0; j < FEATURES; j++) score += inputs.get(i, j) * teacher.get(j, c) + 0.3 * Math.sin(j * c + i * 0.01);
    if (score > bestScore) [best, bestScore] = [c, score];
  }
  targets[i * CLASSES + best] = 1;
}
const labels = ndarray(targets, [SAMPLES, CLASSES]);
const batches = Array.from({ length: SAMPLES / BATCH }, (_, b) => [
  inputs.lo(b * BATCH, 0).hi(BATCH, FEATURES),
  labels.lo(b * BATCH, 0).hi(BATCH, CLASSES),
] as const);

// The model: softmax(relu(x W1 + b1) W2 + b2), trained on the mean cross-entropy.
const x = pt.matrix('x', 'float32');
const y = pt.matrix('y', 'float32');
const init = (rows: number, cols: number) => rng.normal([rows, cols], { std: Math.sqrt(2 / rows), dtype: 'float32' });
const w1 = weft.shared(init(FEATURES, HIDDEN), { name: 'w1' });
const b1 = weft.shared(new Float32Array(HIDDEN), { name: 'b1' });
const w2 = weft.shared(init(HIDDEN, CLASSES), { name: 'w2' });
const b2 = weft.shared(new Float32Array(CLASSES), { name: 'b2' });
const hidden = pt.relu(x.dot(w1).add(b1));
const logits = hidden.dot(w2).add(b2);
const loss = y.mul(pt.logSoftmax(logits)).sum({ axis: 1 }).mean().neg();
const accuracy = logits.argmax({ axis: 1 }).eq(y.argmax({ axis: 1 })).astype('float32').mean();
const params = [w1, b1, w2, b2];
const grads = weft.grad(loss, params);
const updates = params.map((p, i): [weft.pt.TensorSharedVariable, weft.pt.TensorVariable] => [p, p.sub(grads[i]!.mul(LEARNING_RATE).astype('float32'))]);

const pool = weft.createPool();
const train = await weft.compile([x, y], [loss, accuracy], { name: 'train', pool, updates });

console.log(`weft demo: an MLP ${FEATURES}-${HIDDEN}-${CLASSES} on ${SAMPLES} samples, batches of ${BATCH}, on ${pool.size} worker threads`);
const steps = EPOCHS * batches.length;
const bar = new cliProgress.SingleBar(
  {
    format: 'training |{bar}| {percentage}% | step {value}/{total} | epoch {epoch} | loss {loss} | accuracy {acc}',
    noTTYOutput: true,
    notTTYSchedule: 1000,
  },
  cliProgress.Presets.shades_classic,
);
bar.start(steps, 0, { epoch: 1, loss: '-', acc: '-' });
let last: weft.NdArray[] = [];
const started = performance.now();
for (let step = 0; step < steps; step++) {
  const [bx, by] = batches[step % batches.length]!;
  last = await train(bx, by);
  bar.update(step + 1, {
    epoch: Math.floor(step / batches.length) + 1,
    loss: Number(weft.tolist(last[0]!)).toFixed(4),
    acc: Number(weft.tolist(last[1]!)).toFixed(3),
  });
}
bar.stop();
const trainingSeconds = (performance.now() - started) / 1000;

/** Steps per second of the same training step on a given number of workers. */
async function stepsPerSecond(workers: number): Promise<number> {
  const fn = await weft.compile([x, y], [loss, accuracy], { pool, workers, updates });
  for (let i = 0; i < 3; i++) await fn(...batches[i]!);
  const n = 20;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn(...batches[i % batches.length]!);
  return (n * 1000) / (performance.now() - t0);
}
const one = await stepsPerSecond(1);
const all = await stepsPerSecond(pool.size);

console.log('');
console.log(`final loss              ${Number(weft.tolist(last[0]!)).toFixed(4)}`);
console.log(`batch accuracy          ${(100 * Number(weft.tolist(last[1]!))).toFixed(1)} %`);
console.log(`training                ${steps} steps in ${trainingSeconds.toFixed(1)} s`);
console.log(`steps per second        ${one.toFixed(1)} on 1 worker, ${all.toFixed(1)} on ${pool.size} workers (${(all / one).toFixed(2)}x; ${availableParallelism()} cores)`);
await pool.close();
