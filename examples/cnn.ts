// A small convolutional network, trained a few steps: conv2d (8 filters 3x3, half padding), relu,
// 2x2 max pooling, a dense layer to 4 classes, softmax and the crossentropy at integer labels, on
// synthetic 1x12x12 images whose class is which quadrant holds a bright square. The loss falls
// under a progress bar. `npx tsx examples/cnn.ts [steps]`.
import cliProgress from 'cli-progress';
import * as weft from '../src/index.js';

const { pt } = weft;
const [N, S, F, CLASSES] = [64, 12, 8, 4];
const STEPS = Number(process.argv[2] ?? 60);
const LEARNING_RATE = 0.05;

const rng = new weft.Rng(11);
/** A batch: noise, plus a bright 3x3 square in the quadrant the label names. */
function batch(): [weft.NdArray, Int32Array] {
  const labels = Int32Array.from({ length: N }, () => Math.floor(rng.random() * CLASSES));
  const images = rng.normal([N, 1, S, S], { std: 0.3, dtype: 'float32' });
  labels.forEach((label, n) => {
    const [r0, c0] = [label < 2 ? 1 : 7, label % 2 === 0 ? 1 : 7];
    for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) images.set(n, 0, r0 + a + Math.floor(rng.random() * 2), c0 + b + Math.floor(rng.random() * 2), 1.5);
  });
  return [images, labels];
}

const x = pt.tensor4('x', 'float32');
const y = pt.vector('y', 'int32');
const filters = weft.shared(rng.normal([F, 1, 3, 3], { std: 0.5, dtype: 'float32' }), { name: 'filters' });
const dense = weft.shared(rng.normal([F * (S / 2) * (S / 2), CLASSES], { std: 0.05, dtype: 'float32' }), { name: 'dense' });
const bias = weft.shared(new Float32Array(CLASSES), { name: 'bias' });
const features = pt.pool2d(pt.relu(pt.conv2d(x, filters, { borderMode: 'half' })), { ws: [2, 2] });
const logits = features.reshape([N, -1]).dot(dense).add(bias);
const loss = pt.categoricalCrossentropy(pt.softmax(logits), y).mean();
const accuracy = logits.argmax({ axis: 1 }).eq(y).astype('float32').mean();
const params = [filters, dense, bias];
const grads = weft.grad(loss, params);
const updates = params.map((p, i): [weft.pt.TensorSharedVariable, weft.pt.TensorVariable] => [p, p.sub(grads[i]!.mul(LEARNING_RATE)).astype('float32')]);
const pool = weft.createPool({ workers: 2 });
const train = await weft.compile([x, y], [loss, accuracy], { pool, updates });

const bar = new cliProgress.SingleBar({ format: 'training |{bar}| step {value}/{total} | loss {loss} | accuracy {acc}', noTTYOutput: true, notTTYSchedule: 1000 }, cliProgress.Presets.shades_classic);
bar.start(STEPS, 0, { loss: '-', acc: '-' });
const losses: number[] = [];
let lastAccuracy = 0;
for (let step = 1; step <= STEPS; step++) {
  const [images, labels] = batch();
  const [l, a] = (await train(images, labels)) as weft.NdArray[];
  losses.push(l!.data[0]!);
  lastAccuracy = a!.data[0]!;
  bar.update(step, { loss: l!.data[0]!.toFixed(4), acc: lastAccuracy.toFixed(3) });
}
bar.stop();
await pool.close();
const first = losses.slice(0, 5).reduce((s, v) => s + v, 0) / 5;
const last = losses.slice(-5).reduce((s, v) => s + v, 0) / 5;
console.log(`loss ${first.toFixed(4)} -> ${last.toFixed(4)} over ${STEPS} steps; last batch accuracy ${(100 * lastAccuracy).toFixed(1)} %`);
if (STEPS >= 20 && !(last < 0.7 * first)) throw new Error(`the network did not learn: loss ${first} -> ${last}`);
