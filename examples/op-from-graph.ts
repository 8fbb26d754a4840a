// Blocks as ops with OpFromGraph: one graph, a dense layer tanh(x W + b), packaged once and applied
// at two layers of a regression network with their own parameters. The compiled function keeps
// each application as one node (one task of the plan), its gradient is another OpFromGraph, and
// the network learns a curve. `npx tsx examples/op-from-graph.ts [steps]`.
import * as weft from '../src/index.js';

const { pt } = weft;
const [SAMPLES, WIDTH] = [512, 32];
const STEPS = Number(process.argv[2] ?? 200);
const LEARNING_RATE = 0.1;

// The block, built on placeholders: any x, W and b of these ranks.
const bx = pt.matrix('x');
const bw = pt.matrix('W');
const bb = pt.vector('b');
const dense = new weft.OpFromGraph([bx, bw, bb], pt.tanh(bx.dot(bw).add(bb)), { name: 'dense' });

const rng = new weft.Rng(13);
const points = rng.uniform([SAMPLES, 1], { low: -2, high: 2 });
const curve = Float64Array.from({ length: SAMPLES }, (_, i) => Math.sin(2 * points.get(i, 0)) * 0.8);
const layer = (rows: number, cols: number, name: string) => ({
  w: weft.shared(rng.normal([rows, cols], { std: 1 / Math.sqrt(rows) }), { name: `W${name}` }),
  b: weft.shared(new Float64Array(cols), { name: `b${name}` }),
});
const first = layer(1, WIDTH, '1');
const second = layer(WIDTH, WIDTH, '2');
const out = weft.shared(rng.normal([WIDTH], { std: 1 / Math.sqrt(WIDTH) }), { name: 'out' });

const x = pt.matrix('points');
const y = pt.vector('curve');
const hidden = dense.call(dense.call(x, first.w, first.b), second.w, second.b);
const fitted = hidden.dot(out);
const loss = fitted.sub(y).sqr().mean();
const params = [first.w, first.b, second.w, second.b, out];
const grads = weft.grad(loss, params);
const train = await weft.compile([x, y], loss, {
  updates: params.map((p, i): [weft.pt.TensorSharedVariable, weft.pt.TensorVariable] => [p, p.sub(grads[i]!.mul(LEARNING_RATE))]),
  name: 'train',
});

// The blocks in the compiled graph: forward applications and their pullbacks, each one node.
const blocks = new Map<string, number>();
for (const node of train.fgraph.toposort()) {
  if (node.op instanceof weft.OpFromGraph) blocks.set(String(node.op), (blocks.get(String(node.op)) ?? 0) + 1);
}
console.log(`blocks in the compiled graph: ${[...blocks].map(([op, n]) => `${n} x ${op}`).join(', ')}`);

const losses: number[] = [];
for (let step = 1; step <= STEPS; step++) {
  losses.push((await train(points, curve)).data[0]!);
  if (step % Math.max(1, Math.floor(STEPS / 5)) === 0) console.log(`step ${step}: mean squared error ${losses[losses.length - 1]!.toFixed(4)}`);
}
console.log(`loss ${losses[0]!.toFixed(4)} -> ${losses[losses.length - 1]!.toFixed(4)} over ${STEPS} steps`);
await weft.shutdown();
if ((blocks.get('OpFromGraph{dense}') ?? 0) !== 2) throw new Error(`expected the two dense blocks in the compiled graph, found ${JSON.stringify([...blocks])}`);
if (!(losses[losses.length - 1]! < losses[0]!)) throw new Error(`the network did not learn: loss ${losses[0]} -> ${losses[losses.length - 1]}`);
