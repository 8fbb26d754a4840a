// The main job: trains logistic regression on seeded synthetic data with weft (symbolic graph,
// gradients, shared-variable updates), showing the loss fall in a progress bar, then prints the
// final loss, the accuracy and the training speed.
import cliProgress from 'cli-progress';
import * as weft from '../src/index.js';

const { pt } = weft;
const SAMPLES = 4096;
const FEATURES = 64;
const STEPS = 2000;
const LEARNING_RATE = 0.5;

// Synthetic data: labels drawn from a logistic model with known weights.
const rng = new weft.Rng(2026);
const trueW = rng.normal([FEATURES], { std: 1.5 });
const features = rng.normal([SAMPLES, FEATURES]);
const labels = new Float64Array(SAMPLES);
for (let i = 0; i < SAMPLES; i++) {
  let z = 0.3;
  for (let j = 0; j < FEATURES; j++) z += features.get(i, j) * trueW.get(j);
  labels[i] = rng.random() < 1 / (1 + Math.exp(-z)) ? 1 : 0;
}

// The model: p(y = 1 | x) = sigmoid(x . w + b), trained on the mean cross-entropy.
const x = pt.matrix('x');
const y = pt.vector('y');
const w = weft.shared(new Float64Array(FEATURES), { name: 'w' });
const b = weft.shared(0, { name: 'b' });
const logits = x.dot(w).add(b);
const loss = pt.softplus(logits).sub(y.mul(logits)).mean();
const accuracy = logits.gt(0).eq(y).astype('float64').mean();
const [gw, gb] = weft.grad(loss, [w, b]);

const train = await weft.compile([x, y], [loss, accuracy], {
  name: 'train',
  updates: [
    [w, w.sub(gw.mul(LEARNING_RATE))],
    [b, b.sub(gb.mul(LEARNING_RATE))],
  ],
});

const bar = new cliProgress.SingleBar(
  {
    format: 'training |{bar}| {percentage}% | step {value}/{total} | loss {loss} | accuracy {acc}',
    noTTYOutput: true,
    notTTYSchedule: 500,
  },
  cliProgress.Presets.shades_classic,
);
bar.start(STEPS, 0, { loss: '-', acc: '-' });
let last: weft.NdArray[] = [];
const started = performance.now();
for (let step = 1; step <= STEPS; step++) {
  last = await train(features, labels);
  if (step % 10 === 0 || step === STEPS) {
    bar.update(step, { loss: Number(weft.tolist(last[0]!)).toFixed(4), acc: Number(weft.tolist(last[1]!)).toFixed(3) });
  }
}
bar.stop();
const seconds = (performance.now() - started) / 1000;

console.log('');
console.log(`samples x features       ${SAMPLES} x ${FEATURES}`);
console.log(`final loss               ${Number(weft.tolist(last[0]!)).toFixed(5)}`);
console.log(`training accuracy        ${(100 * Number(weft.tolist(last[1]!))).toFixed(2)} %`);
console.log(`steps per second         ${(STEPS / seconds).toFixed(1)} (${STEPS} full-batch steps in ${seconds.toFixed(2)} s, calling thread)`);
