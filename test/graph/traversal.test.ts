// Walking graphs: ancestors (pre-order, each variable once), graph inputs (constants included,
// blockers respected), and ioToposort, which must handle graphs far deeper than the JS stack.
import t from 'tap';
import { pt, weft } from '../helpers.js';

t.test('ancestors: every variable once, outputs first, inputs in order', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const a = pt.exp(x);
  const b = pt.mul(a, y);
  const c = pt.add(a, b);
  t.same(weft.ancestors([c]), [c, a, x, b, y]);
  t.same(weft.ancestors([b, a]), [b, a, x, y]);
  t.same(weft.ancestors([x]), [x]);
  t.same(weft.ancestors([c], new Set([a])), [c, a, b, y], 'the walk stops at a blocker (kept) and does not pass it');
});

t.test('graphInputs: roots, constants included, blockers become roots', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const k = pt.constant([1, 2], { name: 'k' });
  const a = pt.exp(x);
  const out = pt.add(pt.mul(a, y), k);
  t.same(weft.graphInputs([out]), [x, y, k]);
  t.same(weft.graphInputs([out], new Set([a])), [a, y, k]);
  const s = weft.shared([1, 2], { name: 's' });
  t.same(weft.graphInputs([pt.add(x, s)]), [x, s], 'a shared variable is a root');
});

t.test('ioToposort: only the nodes between the inputs and the outputs', async (t) => {
  const x = pt.vector('x');
  const a = pt.exp(x);
  const b = pt.sin(a);
  const c = pt.cos(b);
  t.same(weft.ioToposort([x], [c]), [a.owner, b.owner, c.owner]);
  t.same(weft.ioToposort([a], [c]), [b.owner, c.owner], 'given a, exp is not needed');
  t.same(weft.ioToposort([c], [c]), [], 'an output that is an input needs nothing');
  t.same(weft.ioToposort([], [c]), [a.owner, b.owner, c.owner], 'without inputs, down to the roots');
  const two = pt.add(b, pt.exp(x));
  t.same(weft.ioToposort([x], [c, two]), [a.owner, b.owner, c.owner, two.owner!.inputs[1]!.owner, two.owner]);
});

t.test('ioToposort and ancestors on a chain of 10000 nodes: no stack overflow', async (t) => {
  const x = pt.vector('x');
  let v: weft.pt.TensorVariable = x;
  const nodes: weft.Apply[] = [];
  for (let i = 0; i < 10000; i++) {
    v = i % 2 === 0 ? pt.sin(v) : pt.cos(v);
    nodes.push(v.owner!);
  }
  const order = weft.ioToposort([x], [v]);
  t.equal(order.length, 10000);
  t.ok(order.every((n, i) => n === nodes[i]), 'the chain in order');
  t.equal(weft.ancestors([v]).length, 10001);
  t.same(weft.graphInputs([v]), [x]);
  const fg = new weft.FunctionGraph([x], [v]);
  t.equal(fg.applyNodes.size, 10000, 'a FunctionGraph (cloned) of the chain');
  fg.checkIntegrity();
  fg.replace(fg.outputs[0]!, fg.inputs[0]!);
  t.equal(fg.applyNodes.size, 0, 'pruning the whole chain');
  t.equal(weft.debugprint(v).split('\n').length, 10001, 'debugprint of the chain');
  t.equal(weft.cloneReplace([v], [[x, pt.vector('z')]])[0]!.owner!.op, v.owner!.op, 'cloneReplace of the chain');
});

t.test('ioToposort on a wide diamond lattice: each node once, after its inputs', async (t) => {
  const x = pt.vector('x');
  let layer: weft.pt.TensorVariable[] = [pt.exp(x), pt.sin(x)];
  for (let i = 0; i < 200; i++) layer = [pt.add(layer[0]!, layer[1]!), pt.mul(layer[0]!, layer[1]!)];
  const order = weft.ioToposort([x], layer);
  t.equal(order.length, 2 + 400);
  const pos = new Map(order.map((n, i) => [n, i]));
  t.ok(order.every((n) => n.inputs.every((v) => !v.owner || pos.get(v.owner)! < pos.get(n)!)));
});
