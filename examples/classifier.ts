// A classifier with integer labels, as a new user writes one: an MLP whose loss is the
// crossentropy of its softmax at the labels (pt.categoricalCrossentropy picks log-probabilities
// with x.get(arange(n), labels)), trained by SGD on the worker pool; each epoch's loss and the
// accuracy on held-out samples print under a progress bar. `npx tsx examples/classifier.ts [epochs]`.
import cliProgress from 'cli-progress';
import * as weft from '../src/index.js';

const { pt } = weft;
const [FEATURES, HIDDEN, CLASSES] = [32, 128, 5];
const [SAMPLES, HELD_OUT, BATCH] = [8192, 2048, 512];
const EPOCHS = Number(process.argv[2] ?? 10);
const LEARNING_RATE = 0.5;

// Synthetic data: each class is a cloud around its own centre; labels are int32.
const rng = new weft.Rng(7);
const centres = rng.normal([CLASSES, FEATURES], { std: 0.6 });
const total = SAMPLES + HELD_OUT;
const labels = Int32Array.from({ length: total }, () => Math.floor(rng.random() * CLASSES));
const noise = rng.normal([total, FEATURES], { dtype: 'float32' });
const features = Float32Array.from({ length: total * FEATURES }, (_, k) => centres.get(labels[Math.floor(k / FEATURES)]!, k % FEATURES) + noise.data[k]!);
const rows = (from: number, n: number) => weft.ndarray(features.subarray(from * FEATURES, (from + n) * FEATURES), [n, FEATURES]);

const x = pt.matrix('x', 'float32');
const y = pt.vector('y', 'int32');
const init = (r: number, c: number) => rng.normal([r, c], { std: Math.sqrt(2 / r), dtype: 'float32' });
const w1 = weft.shared(init(FEATURES, HIDDEN), { name: 'w1' });
const b1 = weft.shared(new Float32Array(HIDDEN), { name: 'b1' });
const w2 = weft.shared(init(HIDDEN, CLASSES), { name: 'w2' });
const b2 = weft.shared(new Float32Array(CLASSES), { name: 'b2' });
const logits = pt.relu(x.dot(w1).add(b1)).dot(w2).add(b2);
const loss = pt.categoricalCrossentropy(pt.softmax(logits), y).mean();
const accuracy = logits.argmax({ axis: 1 }).eq(y).astype('float32').mean();
const params = [w1, b1, w2, b2];
const grads = weft.grad(loss, params);
const updates = params.map((p, i): [weft.pt.TensorSharedVariable, weft.pt.TensorVariable] => [p, p.sub(grads[i]!.mul(LEARNING_RATE)).astype('float32')]);

const pool = weft.createPool({ workers: 2 });
const train = await weft.compile([x, y], loss, { pool, updates });
const evaluate = await weft.compile([x, y], accuracy, { pool });

const batches = SAMPLES / BATCH;
const bar = new cliProgress.SingleBar(
  { format: 'epoch {epoch} |{bar}| loss {loss} | held-out accuracy {acc}', noTTYOutput: true, notTTYSchedule: 1000 },
  cliProgress.Presets.shades_classic,
);
bar.start(EPOCHS * batches, 0, { epoch: 1, loss: '-', acc: '-' });
const history: number[] = [];
for (let epoch = 1; epoch <= EPOCHS; epoch++) {
  let sum = 0;
  for (let b = 0; b < batches; b++) {
    sum += (await train(rows(b * BATCH, BATCH), labels.subarray(b * BATCH, (b + 1) * BATCH))).data[0]!;
    bar.increment(1, { epoch });
  }
  const acc = (await evaluate(rows(SAMPLES, HELD_OUT), labels.subarray(SAMPLES))).data[0]!;
  history.push(acc);
  bar.update({ epoch, loss: (sum / batches).toFixed(4), acc: acc.toFixed(3) });
  console.log(`\nepoch ${epoch}: mean loss ${(sum / batches).toFixed(4)}, held-out accuracy ${(100 * acc).toFixed(1)} %`);
}
bar.stop();
await pool.close();
if (EPOCHS >= 3 && history[history.length - 1]! < 0.8) throw new Error(`the classifier did not learn: accuracy ${history.join(', ')}`);
