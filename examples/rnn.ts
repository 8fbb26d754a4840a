// A recurrent network with weft.scan: an Elman RNN (h_t = tanh(x_t Wx + h_{t-1} Wh + bh), y_t =
// h_t Wo + bo) reads batches of sine waves with random phases and frequencies and learns to predict
// each wave's next value. The gradient goes back through every step of the loop (backpropagation
// through time); the loss falls under plain SGD. `npx tsx examples/rnn.ts [steps]`.
import * as weft from '../src/index.js';

const { pt } = weft;
const [T, BATCH, HIDDEN] = [20, 32, 16];
const STEPS = Number(process.argv[2] ?? 150);
const LEARNING_RATE = 0.1;

const rng = new weft.Rng(5);
/** A batch of waves, [T + 1, BATCH, 1]: the inputs are rows 0..T-1, the targets rows 1..T. */
function waves(): { inputs: weft.NdArray; targets: weft.NdArray } {
  const data = new Float64Array((T + 1) * BATCH);
  for (let b = 0; b < BATCH; b++) {
    const phase = 2 * Math.PI * rng.random();
    const frequency = 0.2 + 0.3 * rng.random();
    for (let t = 0; t <= T; t++) data[t * BATCH + b] = Math.sin(phase + frequency * t);
  }
  return { inputs: weft.ndarray(data.subarray(0, T * BATCH), [T, BATCH, 1]), targets: weft.ndarray(data.subarray(BATCH), [T, BATCH, 1]) };
}

const init = (rows: number, cols: number, std: number) => weft.shared(rng.normal([rows, cols], { std }));
const wx = init(1, HIDDEN, 0.5);
const wh = init(HIDDEN, HIDDEN, 0.3);
const bh = weft.shared(new Float64Array(HIDDEN), { name: 'bh' });
const wo = init(HIDDEN, 1, 0.3);
const bo = weft.shared(new Float64Array(1), { name: 'bo' });

const xs = pt.tensor3('xs');
const targets = pt.tensor3('targets');
const { outputs } = weft.scan({
  // (a row of the sequence, the previous state, the non-sequences) => [the new state, the prediction]
  fn: (xt: weft.pt.TensorVariable, hPrev: weft.pt.TensorVariable, Wx: weft.pt.TensorVariable, Wh: weft.pt.TensorVariable, Bh: weft.pt.TensorVariable, Wo: weft.pt.TensorVariable, Bo: weft.pt.TensorVariable) => {
    const h = pt.tanh(xt.dot(Wx).add(hPrev.dot(Wh)).add(Bh));
    return [h, h.dot(Wo).add(Bo)];
  },
  sequences: [xs],
  outputsInfo: [pt.zeros([BATCH, HIDDEN]), null],
  nonSequences: [wx, wh, bh, wo, bo],
  name: 'rnn',
});
const predictions = (outputs as weft.pt.TensorVariable[])[1]!;
const loss = predictions.sub(targets).sqr().mean();
const params = [wx, wh, bh, wo, bo];
const grads = weft.grad(loss, params);
const train = await weft.compile([xs, targets], loss, { updates: params.map((p, i): [weft.pt.TensorSharedVariable, weft.pt.TensorVariable] => [p, p.sub(grads[i]!.mul(LEARNING_RATE))]), name: 'train' });

const losses: number[] = [];
for (let step = 1; step <= STEPS; step++) {
  const { inputs, targets: next } = waves();
  losses.push((await train(inputs, next)).data[0]!);
  if (step % Math.max(1, Math.floor(STEPS / 5)) === 0) console.log(`step ${step}: mean squared error ${losses[losses.length - 1]!.toFixed(4)}`);
}
const first = losses.slice(0, 5).reduce((a, b) => a + b) / 5;
const last = losses.slice(-5).reduce((a, b) => a + b) / 5;
console.log(`loss ${first.toFixed(4)} -> ${last.toFixed(4)} over ${STEPS} steps (means of the first and last five batches)`);
await weft.shutdown();
if (!(last < first)) throw new Error(`the RNN did not learn: loss ${first} -> ${last}`);
