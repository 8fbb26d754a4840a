// The FunctionGraph under a rewriting load: variables with hundreds of clients (merged
// constants, inputs) lose and gain uses in any order, client lists keep their order through
// removals and compaction, and a vetoed replaceAll that touched them is undone exactly.
import t from 'tap';
import { pt, weft } from '../helpers.js';
import { comparable, snapshot } from './fixtures.js';
import { graph, Veto } from './rewriting-fixtures.js';

/** The clients of `v` as "node output id:input index" (or "out:k"). */
function clientIds(fg: weft.FunctionGraph, v: weft.Variable): string[] {
  return fg.clients(v).map((c) => (c.kind === 'output' ? `out:${c.index}` : `${c.node.outputs[0]!.id}:${c.index}`));
}

/** n nodes add(x, k) (each one output of the graph) sharing the constant k. */
function fan(n: number): { x: weft.pt.TensorVariable; k: weft.pt.TensorConstant; nodes: weft.pt.TensorVariable[]; fg: weft.FunctionGraph } {
  const x = pt.scalar('x');
  const k = pt.constant(2.5);
  const nodes = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? pt.add(x, k) : pt.mul(k, x)));
  return { x, k, nodes, fg: graph([x], nodes) };
}

t.test('removing many uses of a shared constant keeps the order of the others', async (t) => {
  const { x, k, nodes, fg } = fan(300);
  const order = clientIds(fg, k);
  t.equal(order.length, 300);
  // Replace every node whose index is not a multiple of 3, from the last to the first.
  for (let i = nodes.length - 1; i >= 0; i--) {
    if (i % 3 !== 0) fg.replace(nodes[i]!, pt.exp(x));
  }
  t.same(clientIds(fg, k), order.filter((_, i) => i % 3 === 0), 'the survivors, in their first order');
  t.equal(fg.clients(x).length, 300, 'x: 100 old uses and 200 new exps');
  fg.checkIntegrity();
  // And gaining uses again appends them.
  const extra = pt.add(x, k);
  fg.replace(fg.outputs[1]!, extra);
  t.same(clientIds(fg, k), [...order.filter((_, i) => i % 3 === 0), `${extra.id}:1`]);
  fg.checkIntegrity();
});

t.test('a vetoed replaceAll that compacted a long client list is undone exactly', async (t) => {
  const { x, nodes, fg } = fan(120);
  const veto = new Veto(() => true, 'no');
  const before = comparable(snapshot(fg));
  fg.attachFeature(veto);
  // 100 of the 120 uses of k go away in one change: enough holes to compact k's list midway.
  const pairs = nodes.slice(0, 100).map((v): [weft.Variable, weft.Variable] => [v, pt.tanh(x)]);
  t.throws(() => fg.replaceAll(pairs), weft.InconsistencyError);
  t.equal(veto.refusals, 1);
  fg.removeFeature(veto);
  t.same(comparable(snapshot(fg)), before, 'nodes, variables, wiring, clients and their order as before');
  fg.checkIntegrity();
  fg.replaceAll(pairs);
  t.equal(fg.clients(nodes[0]!.owner!.inputs[1]!).length, 20, 'the same change, allowed, leaves 20 uses of k');
  fg.checkIntegrity();
});

t.test('seeded random replacements, some vetoed: each veto restores the graph exactly', async (t) => {
  const rng = new weft.Rng(20261129);
  const x = pt.scalar('x');
  const y = pt.scalar('y');
  const k = pt.constant(1.5);
  const pool: weft.pt.TensorVariable[] = [x, y];
  for (let i = 0; i < 60; i++) {
    const a = pool[Math.floor(rng.random() * pool.length)]!;
    const b = pool[Math.floor(rng.random() * pool.length)]!;
    const r = rng.random();
    pool.push(r < 0.3 ? pt.add(a, k) : r < 0.6 ? pt.mul(a, b) : r < 0.8 ? pt.exp(a) : pt.sub(b, k));
  }
  const fg = graph([x, y], pool.slice(-12));
  let refuse = false;
  fg.attachFeature(new Veto(() => refuse, 'random veto'));
  let vetoed = 0;
  let applied = 0;
  for (let step = 0; step < 150; step++) {
    const live = [...fg.applyNodes].map((n) => n.outputs[0] as weft.pt.TensorVariable);
    if (live.length === 0) break;
    const target = live[Math.floor(rng.random() * live.length)]!;
    const inputs = target.owner!.inputs as weft.pt.TensorVariable[];
    const replacement = rng.random() < 0.5 ? pt.add(inputs[0]!, k) : inputs[0]!.owner ? (inputs[0] as weft.pt.TensorVariable) : pt.neg(inputs[0]!);
    if (!replacement.type.equals(target.type)) continue;
    refuse = rng.random() < 0.4;
    const before = comparable(snapshot(fg));
    try {
      fg.replace(target, replacement, { reason: `step ${step}` });
      applied += 1;
    } catch (e) {
      t.type(e, weft.InconsistencyError);
      vetoed += 1;
      const after = comparable(snapshot(fg));
      if (JSON.stringify(after) !== JSON.stringify(before)) {
        t.same(after, before, `step ${step}: the veto restored the graph`);
        break;
      }
    }
    fg.checkIntegrity();
  }
  t.ok(vetoed > 20 && applied > 20, `both outcomes exercised (${vetoed} vetoed, ${applied} applied)`);
});
