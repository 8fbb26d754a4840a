// OpFromGraph: the examples of Theano's page with their values, gradients and Rop through the
// inner graph and through overrides, inline and not, merging, nesting, shared variables read
// inside and updated outside, shapes, and bad input.
import t from 'tap';
import type { FunctionGraph } from '../../src/graph/fgraph.js';
import type { KernelCall, KernelContext } from '../../src/graph/op.js';
import type { TensorView } from '../../src/kernels/view.js';
import { innerPlanning } from '../../src/scheduler/inner-planner.js';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

const scalars = (): weft.pt.TensorVariable[] => ['x', 'y', 'z'].map((n) => pt.scalar(n));
const one = (v: weft.pt.TensorVariable | weft.pt.TensorVariable[]): weft.pt.TensorVariable => (Array.isArray(v) ? v[0]! : v);

t.test("Theano's example 1: op(x, y, z) + op(z, y, x) for scalars", async (t) => {
  const [x, y, z] = scalars();
  const op = new weft.OpFromGraph([x!, y!, z!], [x!.add(y!.mul(z!))]);
  const e2 = one(op.call(x, y, z)).add(one(op.call(z, y, x)));
  for (const workers of [0, 2]) {
    const fn = await weft.compile([x!, y!, z!], e2, { workers });
    t.equal(weft.tolist(await fn(1, 2, 3)), 1 + 2 * 3 + (3 + 2 * 1), `workers ${workers}`);
    t.equal(weft.tolist(await fn(-0.5, 4, 0.25)), -0.5 + 4 * 0.25 + (0.25 + 4 * -0.5));
  }
});

t.test("Theano's example 2: with a shared 2x2 matrix", async (t) => {
  const [x, y, z] = scalars();
  const value = rng(2).uniform([2, 2]);
  const s = weft.shared(value, { name: 's' });
  const op = new weft.OpFromGraph([x!, y!, z!], [x!.add(y!.mul(z!)).add(s)]);
  t.same(op.shared, [s], 'the shared variable is an implicit input');
  const e2 = one(op.call(x, y, z)).add(one(op.call(z, y, x)));
  const fn = await weft.compile([x!, y!, z!], e2);
  const sv = weft.tolist(value) as number[][];
  near(t, await fn(1, 2, 3), sv.map((r) => r.map((v) => 1 + 6 + v + 3 + 2 + v)));
  // Its current value is used at each call.
  s.setValue([[1, 1], [1, 1]]);
  near(t, await fn(1, 2, 3), [[14, 14], [14, 14]]);
});

t.test('a shared variable read inside and updated by the outer function', async (t) => {
  const x = pt.scalar('x');
  const s = weft.shared(1, { name: 's' });
  const op = new weft.OpFromGraph([x], [x.mul(s)]);
  const fn = await weft.compile([x], one(op.call(x)), { updates: [[s, s.add(1)]] });
  t.same([weft.tolist(await fn(10)), weft.tolist(await fn(10)), weft.tolist(await fn(10))], [10, 20, 30]);
  t.equal(weft.tolist(s.getValue()), 4);
});

t.test('multiple outputs, unused inputs, constants inside', async (t) => {
  const [x, y, z] = scalars();
  const op = new weft.OpFromGraph([x!, y!, z!], [x!.add(2), x!.mul(y!).sub(pt.constant(0.5))]);
  const outs = op.call(x, y, z) as weft.pt.TensorVariable[];
  t.equal(outs.length, 2);
  const fn = await weft.compile([x!, y!, z!], outs, { onUnusedInput: 'ignore' });
  t.same((await fn(3, 4, 99)).map((v) => weft.tolist(v)), [5, 11.5]);
  t.same(op.connectionPattern(), [[true, true], [false, true], [false, false]]);
});

t.test('gradients: through the inner graph, verifyGrad, second derivatives', async (t) => {
  const a = pt.vector('a');
  const b = pt.vector('b');
  const op = new weft.OpFromGraph([a, b], [a.exp().mul(b).sum(), a.mul(b)], { name: 'f' });
  const r = rng(5);
  const av = r.normal([4]);
  const bv = r.normal([4]);
  await weft.verifyGrad((p, q) => (op.call(p!, q!) as weft.pt.TensorVariable[])[0]!, [av, bv]);
  await weft.verifyGrad((p, q) => (op.call(p!, q!) as weft.pt.TensorVariable[])[1]!.sqr(), [av, bv]);
  const [g] = weft.grad((op.call(a, b) as weft.pt.TensorVariable[])[0]!, [a]);
  const hess = weft.hessian((op.call(a, b) as weft.pt.TensorVariable[])[0]!, a);
  const fn = await weft.compile([a, b], [g!, hess]);
  const [gv, hv] = await fn(av, bv);
  const A = weft.tolist(av) as number[];
  const B = weft.tolist(bv) as number[];
  near(t, gv!, A.map((v, i) => Math.exp(v) * B[i]!), 1e-12, 'd/da sum(exp(a) b)');
  near(t, hv!, A.map((v, i) => A.map((_, k) => (i === k ? Math.exp(v) * B[i]! : 0))), 1e-12, 'its Hessian');
  t.ok(op.pullback() === op.pullback(), 'the pullback is built once');
  t.match(String(op.pullback()), /^OpFromGraph\{f\.grad\}$/);
});

t.test('Rop through the inner graph', async (t) => {
  const a = pt.vector('a');
  const op = new weft.OpFromGraph([a], [a.tanh().mul(a)]);
  await weft.checkRop((p) => one(op.call(p!)), [rng(8).normal([5])]);
});

t.test('lopOverrides and ropOverrides, as functions and as OpFromGraph', async (t) => {
  const x = pt.vector('x');
  const lop = (_inputs: readonly weft.pt.TensorVariable[], _outputs: readonly weft.pt.TensorVariable[], [gz]: readonly weft.pt.TensorVariable[]) => [
    gz!.mul(10),
  ];
  const op = new weft.OpFromGraph([x], [x.sqr()], { lopOverrides: lop });
  const g = weft.grad(one(op.call(x)).sum(), x);
  near(t, await run([x], g, [[1, 2, 3]]), [10, 10, 10], 0, 'the override replaces the pullback');
  const gx = pt.vector('gx');
  const ox = pt.vector('ox');
  const lopOp = new weft.OpFromGraph([x, ox, gx], [gx.mul(x).mul(3)]);
  const op2 = new weft.OpFromGraph([x], [x.sqr()], { lopOverrides: lopOp });
  near(t, await run([x], weft.grad(one(op2.call(x)).sum(), x), [[1, 2, 3]]), [3, 6, 9], 0, 'an OpFromGraph override');
  const ev = pt.vector('ev');
  const op3 = new weft.OpFromGraph([x], [x.sqr()], { ropOverrides: (_i, [e]) => [e!.mul(-1)] });
  near(t, await run([x, ev], weft.Rop(one(op3.call(x)), x, ev) as weft.pt.TensorVariable, [[1, 2], [5, 7]]), [-5, -7], 0, 'the Rop override');
  t.notOk(op.equals(new weft.OpFromGraph([x], [x.sqr()])), 'an override makes the op different from one without');
});

t.test('inline and not inline give equal values; equal ops merge', async (t) => {
  const [x, y, z] = scalars();
  const build = (inline: boolean) => new weft.OpFromGraph([x!, y!, z!], [x!.mul(y!).add(z!.exp())], { inline });
  const out = (op: weft.OpFromGraph) => one(op.call(x, y, z)).add(one(op.call(z, x, y)));
  const f1 = await weft.compile([x!, y!, z!], out(build(false)));
  const f2 = await weft.compile([x!, y!, z!], out(build(true)));
  t.equal(weft.tolist(await f1(0.5, 2, -1)), weft.tolist(await f2(0.5, 2, -1)));
  t.ok(f1.fgraph.toposort().some((n) => n.op instanceof weft.OpFromGraph), 'not inline: an OpFromGraph node');
  t.notOk(f2.fgraph.toposort().some((n) => n.op instanceof weft.OpFromGraph), 'inline: expanded');
  const a = build(false);
  const b = build(false);
  t.ok(a.equals(b), 'equal inner graphs make equal ops');
  const merged = await weft.compile([x!, y!, z!], one(a.call(x, y, z)).add(one(b.call(x, y, z))));
  t.equal(merged.fgraph.toposort().filter((n) => n.op instanceof weft.OpFromGraph).length, 1, 'their applications merge');
  t.notOk(a.equals(new weft.OpFromGraph([x!, y!, z!], [x!.mul(y!).add(z!.exp()).add(1)])), 'different graphs are different ops');
});

t.test('nested OpFromGraph', async (t) => {
  const x = pt.vector('x');
  const inner = new weft.OpFromGraph([x], [x.mul(2)], { name: 'inner' });
  const y = pt.vector('y');
  const outer = new weft.OpFromGraph([y], [one(inner.call(y)).add(one(inner.call(y.exp())))], { name: 'outer' });
  const v = [0.5, -1, 2];
  near(t, await run([x], one(outer.call(x)), [v]), v.map((a) => 2 * a + 2 * Math.exp(a)));
  await weft.verifyGrad((p) => one(outer.call(p!)), [rng(4).normal([3])]);
});

t.test('inferShape through the inner graph', async (t) => {
  const m = pt.matrix('m');
  const op = new weft.OpFromGraph([m], [m.sum({ axis: 0 }), m.T.dot(m)]);
  const outs = op.call(m) as weft.pt.TensorVariable[];
  t.equal(await weft.checkInferShape([m], outs, [rng(3).normal([5, 3])], weft.OpFromGraph), 1);
});

t.test('bad input', async (t) => {
  const [x, y] = scalars();
  const op = new weft.OpFromGraph([x!, y!], [x!.add(y!)]);
  await throwsExactly(t, () => op.call(x), TypeError, 'OpFromGraph{OpFromGraph}: expected 2 inputs, got 1');
  await throwsExactly(
    t,
    () => op.call(pt.vector('v'), y),
    TypeError,
    'OpFromGraph{OpFromGraph}: input 0 (v) has type TensorType(float64, (?,)), the graph expects TensorType(float64, ())',
  );
  const s = weft.shared(1, { name: 's' });
  await throwsExactly(
    t,
    () => new weft.OpFromGraph([s], [s.add(1)]),
    TypeError,
    'OpFromGraph: input 0 (s) is a shared variable; shared variables are found by themselves',
  );
  const w = pt.scalar('w');
  await throwsExactly(
    t,
    () => new weft.OpFromGraph([x!], [x!.add(w)]),
    TypeError,
    'OpFromGraph: the outputs depend on w (TensorType(float64, ())), which is not among the inputs',
  );
});

t.test('OpFromGraph plans its inner graph through the kernel context a planner gives it', async (t) => {
  const x = pt.vector('x');
  const op = new weft.OpFromGraph([x], [x.exp().mul(2)]);
  const node = (op.call(x) as weft.pt.TensorVariable).owner!;
  t.equal(node.op.kernel!(node), undefined, 'without a context: the calling thread runs it');
  const xv = rng(1).normal([8]);
  t.equal(node.op.kernel!(node, { ...innerPlanning, inputs: [xv] })?.name, 'innerPlan', "with the scheduler's: one task running the inner plan");
  // Any planner can stand behind the context: the op hands it its rewritten inner graph.
  const asked: Array<[FunctionGraph, readonly TensorView[]]> = [];
  const mine: KernelCall = { name: 'mine', params: {}, chunking: { by: 'none' } };
  const context: KernelContext = {
    inputs: [xv],
    planInner: (fg, inputs) => {
      asked.push([fg, inputs]);
      return mine;
    },
    valueInputs: () => [],
  };
  t.equal(node.op.kernel!(node, context), mine);
  t.equal(asked.length, 1);
  t.equal(asked[0]![0], op.compiled, 'the inner graph as it runs (rewritten once)');
  t.equal(asked[0]![1][0], xv, 'for the inputs of the context');
  t.ok(
    op.compiled.toposort().some((n) => String(n.op).includes('Composite')),
    'rewritten with the FAST_RUN pipeline: exp and mul are fused',
  );
});
