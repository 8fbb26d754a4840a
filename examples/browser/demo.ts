// The browser demo page's script (served as JavaScript by scripts/demo-browser.ts): trains a small
// MLP with weft's browser build on a pool of two Web Workers over one SharedArrayBuffer, draws the
// loss curve as it falls and, every few steps, the profiled timeline of the last call.
// `globalThis.weftDemo` reports progress (the browser test reads it).
import type * as Weft from '../../src/index.js';

const WEFT: string = '/dist/browser/weft.js';
const weft = (await import(WEFT)) as typeof Weft;
const { pt } = weft;

const STEPS = Number(new URLSearchParams(location.search).get('steps') ?? 150);
const [FEATURES, HIDDEN, CLASSES, BATCH, RATE] = [32, 256, 4, 2048, 0.1];

interface DemoState {
  steps: number;
  losses: number[];
  done: boolean;
  error?: string;
  workers: number;
}
const state: DemoState = { steps: 0, losses: [], done: false, workers: 0 };
(globalThis as { weftDemo?: DemoState }).weftDemo = state;
const status = document.getElementById('status')!;

function drawLoss(losses: readonly number[]): void {
  const svg = document.getElementById('loss')!;
  const [w, h, pad] = [960, 260, 36];
  const top = Math.max(...losses);
  const points = losses.map((l, i) => `${(pad + (i / Math.max(1, STEPS - 1)) * (w - 2 * pad)).toFixed(1)},${(h - pad - (l / top) * (h - 2 * pad)).toFixed(1)}`);
  svg.innerHTML =
    `<line x1="${pad}" y1="${h - pad}" x2="${w - pad}" y2="${h - pad}" stroke="#adb5bd"/>` +
    `<line x1="${pad}" y1="${pad}" x2="${pad}" y2="${h - pad}" stroke="#adb5bd"/>` +
    `<text x="${pad}" y="${pad - 10}" font-size="11" fill="#495057">${top.toFixed(3)}</text>` +
    `<text x="${w - pad}" y="${h - pad + 16}" font-size="11" text-anchor="end" fill="#495057">step ${STEPS}</text>` +
    `<polyline fill="none" stroke="#4e79a7" stroke-width="2" points="${points.join(' ')}"/>`;
}

async function main(): Promise<void> {
  // Each class is a cloud around its own centre.
  const rng = new weft.Rng(5);
  const centres = rng.normal([CLASSES, FEATURES], { std: 0.3 });
  const noise = rng.normal([BATCH, FEATURES], { dtype: 'float32' });
  const labels = Int32Array.from({ length: BATCH }, (_, i) => i % CLASSES);
  const features = Float32Array.from({ length: BATCH * FEATURES }, (_, k) => centres.get(labels[Math.floor(k / FEATURES)]!, k % FEATURES) + noise.data[k]!);

  const x = pt.matrix('x', 'float32');
  const y = pt.vector('y', 'int32');
  const init = (r: number, c: number) => rng.normal([r, c], { std: Math.sqrt(2 / r), dtype: 'float32' });
  const w1 = weft.shared(init(FEATURES, HIDDEN), { name: 'w1' });
  const w2 = weft.shared(init(HIDDEN, CLASSES), { name: 'w2' });
  const loss = pt.categoricalCrossentropy(pt.softmax(pt.relu(x.dot(w1)).dot(w2)), y).mean();
  const params = [w1, w2];
  const grads = weft.grad(loss, params);
  const updates = params.map((p, i): [Weft.pt.TensorSharedVariable, Weft.pt.TensorVariable] => [p, p.sub(grads[i]!.mul(RATE)).astype('float32')]);

  const pool = weft.createPool({ workers: 2 });
  state.workers = pool.size;
  const train = await weft.compile([x, y], loss, { pool, updates, profile: true, name: 'train step' });
  const batch = weft.ndarray(features, [BATCH, FEATURES]);
  for (let step = 1; step <= STEPS; step++) {
    const value = (await train(batch, labels)).data[0]!;
    state.losses.push(value);
    state.steps = step;
    status.textContent = `step ${step} of ${STEPS} on ${pool.size} Web Workers: loss ${value.toFixed(4)}`;
    drawLoss(state.losses);
    if (step % 10 === 0 || step === STEPS) document.getElementById('timeline')!.innerHTML = train.profile.toSvgTimeline({ call: step - 1 });
    // Let the page paint between steps.
    await new Promise((r) => setTimeout(r, 0));
  }
  status.textContent += ' (done)';
  state.done = true;
}

main().catch((e: unknown) => {
  state.error = String((e as Error)?.stack ?? e);
  status.textContent = `failed: ${state.error}`;
});
