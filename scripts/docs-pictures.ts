// The pictures of the README (docs/img/), made by the tools they show: `npx tsx scripts/docs-pictures.ts`
// writes graph.svg (weft.toSvg of a compiled function: a Scan whose step applies an OpFromGraph,
// both drawn as clusters) and timeline.svg (toSvgTimeline of one training step of an MLP on a
// 2-worker pool). The bench chart (bench-w1.svg) comes from `npm run bench -- W1 --quick --chart`.
import { mkdirSync, writeFileSync } from 'node:fs';
import * as weft from '../src/index.js';

const { pt } = weft;
const dir = new URL('../docs/img/', import.meta.url);
mkdirSync(dir, { recursive: true });

// A graph: a running state h_t = cell(h_{t-1}, x_t), the cell an OpFromGraph, summed at the end.
const h = pt.vector('h');
const xt = pt.vector('x_t');
const cell = new weft.OpFromGraph([h, xt], pt.tanh(h.add(xt)), { name: 'cell' });
const xs = pt.matrix('xs');
const { outputs } = weft.scan({ fn: (row: weft.pt.TensorVariable, state: weft.pt.TensorVariable) => cell.call(state, row), sequences: [xs], outputsInfo: [pt.zeros([4])], name: 'loop' });
const total = await weft.compile([xs], (outputs as weft.pt.TensorVariable).sum(), { workers: 0 });
writeFileSync(new URL('graph.svg', dir), await weft.toSvg(total));

// A timeline: the third training step of a 2-layer MLP on 2 workers (the first two warm up).
const rng = new weft.Rng(1);
const x = pt.matrix('x', 'float32');
const y = pt.matrix('y', 'float32');
const w1 = weft.shared(rng.normal([256, 512], { std: 0.05, dtype: 'float32' }), { name: 'w1' });
const w2 = weft.shared(rng.normal([512, 64], { std: 0.05, dtype: 'float32' }), { name: 'w2' });
const loss = pt.relu(x.dot(w1)).dot(w2).sub(y).sqr().mean();
const [g1, g2] = weft.grad(loss, [w1, w2]);
const pool = weft.createPool({ workers: 2 });
const step = await weft.compile([x, y], loss, { pool, profile: true, name: 'MLP training step', updates: [[w1, w1.sub(g1!.mul(0.1))], [w2, w2.sub(g2!.mul(0.1))]] });
const batch = rng.normal([1024, 256], { dtype: 'float32' });
const targets = rng.normal([1024, 64], { dtype: 'float32' });
for (let k = 0; k < 3; k++) await step(batch, targets);
writeFileSync(new URL('timeline.svg', dir), step.profile.toSvgTimeline({ call: 2, width: 880 }));
await pool.close();
console.log('wrote docs/img/graph.svg and docs/img/timeline.svg');
