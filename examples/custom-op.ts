// An op of your own with a worker kernel (docs/extending.md): Softsign, x / (1 + |x|), with its
// shapes, its gradient and a kernel registered in examples/softsign-kernel.mjs that the pool's
// workers import. It serves as the activation of a small network fitted to a curve on a 2-worker
// pool; the profile shows which threads ran its chunks. `npx tsx examples/custom-op.ts [steps]`.
import type { TensorView } from '../src/kernels/index.js';
import * as weft from '../src/index.js';

const { pt } = weft;
const [SAMPLES, HIDDEN] = [1024, 256];
const STEPS = Number(process.argv[2] ?? 200);
const LEARNING_RATE = 0.05;

class Softsign extends weft.Op<weft.pt.TensorVariable> {
  override makeNode(x: unknown): weft.Apply {
    const v = pt.asTensorVariable(x as weft.TensorLike);
    if (v.dtype !== 'float64' && v.dtype !== 'float32') throw new TypeError(`${this}: expected a float tensor, got ${v.type}`);
    return new weft.Apply(this, [v], [v.type.makeVariable()]);
  }
  override inferShape(_node: weft.Apply, [shape]: readonly weft.SymbolicShape[]): weft.SymbolicShape[] {
    return [shape!];
  }
  // d/dx x / (1 + |x|) = 1 / (1 + |x|)^2
  override grad([x]: readonly weft.pt.TensorVariable[], [gz]: readonly weft.pt.TensorVariable[]): weft.pt.TensorVariable[] {
    return [gz!.trueDiv(pt.sqr(pt.abs(x!).add(1)))];
  }
  override outputShapes(_node: weft.Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }
  // No perform: weft's Op runs this same kernel on the calling thread when a call runs there.
  override kernel(): weft.KernelCall {
    return { name: 'examples.softsign', params: {}, chunking: { by: 'elements' }, contiguousInputs: true };
  }
}
const softsign = (x: weft.pt.TensorVariable): weft.pt.TensorVariable => new Softsign().call(x);

const pool = weft.createPool({ workers: 2, kernelModules: [new URL('./softsign-kernel.mjs', import.meta.url)] });

// The kernel against the formula, on the pool.
const v = pt.vector('v');
const check = await weft.compile([v], softsign(v), { pool });
const probe = Float64Array.from({ length: 1 << 16 }, (_, i) => (i - 32768) / 1000);
const got = (await check(probe)).data;
const worst = probe.reduce((m, p, i) => Math.max(m, Math.abs(got[i]! - p / (1 + Math.abs(p)))), 0);
console.log(`softsign kernel vs x / (1 + |x|) on ${probe.length} values: largest difference ${worst}`);

// A network with softsign units fitted to y = sin(3 a) + b^2 over points (a, b) in [-1, 1]^2.
const rng = new weft.Rng(9);
const points = rng.uniform([SAMPLES, 2], { low: -1, high: 1 });
const curve = Float64Array.from({ length: SAMPLES }, (_, i) => Math.sin(3 * points.get(i, 0)) + points.get(i, 1) ** 2);
const x = pt.matrix('x');
const y = pt.vector('y');
const w1 = weft.shared(rng.normal([2, HIDDEN], { std: 1 }), { name: 'w1' });
const b1 = weft.shared(rng.normal([HIDDEN], { std: 0.5 }), { name: 'b1' });
const w2 = weft.shared(rng.normal([HIDDEN], { std: 1 / Math.sqrt(HIDDEN) }), { name: 'w2' });
const b2 = weft.shared(0, { name: 'b2' });
const fitted = softsign(x.dot(w1).add(b1)).dot(w2).add(b2);
const loss = fitted.sub(y).sqr().mean();
const params = [w1, b1, w2, b2];
const grads = weft.grad(loss, params);
const train = await weft.compile([x, y], loss, {
  pool,
  profile: true,
  updates: params.map((p, i): [weft.pt.TensorSharedVariable, weft.pt.TensorVariable] => [p, p.sub(grads[i]!.mul(LEARNING_RATE))]),
  name: 'train',
});

const losses: number[] = [];
for (let step = 1; step <= STEPS; step++) {
  losses.push((await train(points, curve)).data[0]!);
  if (step % Math.max(1, Math.floor(STEPS / 5)) === 0) console.log(`step ${step}: mean squared error ${losses[losses.length - 1]!.toFixed(4)}`);
}
const ran = train.profile.events.filter((e) => e.node.op instanceof Softsign);
const onWorkers = ran.filter((e) => e.thread !== 0).length;
console.log(`Softsign ran as ${ran.length} tasks over ${train.profile.calls} calls, ${onWorkers} of them on worker threads`);
console.log(`loss ${losses[0]!.toFixed(4)} -> ${losses[losses.length - 1]!.toFixed(4)} over ${STEPS} steps`);
await pool.close();
if (worst !== 0) throw new Error(`the softsign kernel differs from the formula by ${worst}`);
if (!(losses[losses.length - 1]! < losses[0]!)) throw new Error(`the network did not learn: loss ${losses[0]} -> ${losses[losses.length - 1]}`);
