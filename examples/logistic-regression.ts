// Logistic regression, as in Theano's tutorial: a weight vector and a bias as shared variables, the
// crossentropy of the sigmoid plus an L2 penalty, its gradient, and a training function whose
// updates take one gradient step per call; then the accuracy of the thresholded predictions.
// Synthetic data: labels from a hidden linear rule with noise. `npx tsx examples/logistic-regression.ts [steps]`.
import * as weft from '../src/index.js';

const { pt } = weft;
const [SAMPLES, FEATURES] = [400, 50];
const STEPS = Number(process.argv[2] ?? 200);
const LEARNING_RATE = 0.5;

const rng = new weft.Rng(3);
const features = rng.normal([SAMPLES, FEATURES]);
const rule = rng.normal([FEATURES]);
const labels = Float64Array.from({ length: SAMPLES }, (_, i) => {
  let s = 0.5 * rng.normal([1]).data[0]!;
  for (let j = 0; j < FEATURES; j++) s += features.get(i, j) * rule.get(j);
  return s > 0 ? 1 : 0;
});

const x = pt.matrix('x');
const y = pt.vector('y');
const w = weft.shared(new Float64Array(FEATURES), { name: 'w' });
const b = weft.shared(0, { name: 'b' });
const p1 = pt.sigmoid(x.dot(w).add(b)); // the probability that the label is 1
const prediction = p1.gt(0.5);
const crossentropy = pt.binaryCrossentropy(p1, y);
const cost = crossentropy.mean().add(w.sqr().sum().mul(0.01));
const [gw, gb] = weft.grad(cost, [w, b]);

const train = await weft.compile([x, y], cost, {
  updates: [
    [w, w.sub(gw!.mul(LEARNING_RATE))],
    [b, b.sub(gb!.mul(LEARNING_RATE))],
  ],
  name: 'train',
});
const predict = await weft.compile([x], prediction, { name: 'predict' });

const losses: number[] = [];
for (let step = 1; step <= STEPS; step++) {
  losses.push((await train(features, labels)).data[0]!);
  if (step % Math.max(1, Math.floor(STEPS / 5)) === 0) console.log(`step ${step}: loss ${losses[losses.length - 1]!.toFixed(4)}`);
}
const predicted = (await predict(features)).data;
const correct = labels.reduce((n, label, i) => n + (Number(predicted[i]) === label ? 1 : 0), 0);
console.log(`loss ${losses[0]!.toFixed(4)} -> ${losses[losses.length - 1]!.toFixed(4)} over ${STEPS} steps; training accuracy ${((100 * correct) / SAMPLES).toFixed(1)} %`);
await weft.shutdown();
if (losses[losses.length - 1]! >= losses[0]!) throw new Error(`logistic regression did not learn: loss ${losses[0]} -> ${losses[losses.length - 1]}`);
