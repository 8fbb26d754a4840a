// Features: attach and detach, the events they hear with their arguments and in order, and the
// extra orderings they give toposort (respected; a cycle through them is a CycleError).
import t from 'tap';
import { pt, throwsExactly, weft } from '../helpers.js';
import { Recorder } from './fixtures.js';

type TV = weft.pt.TensorVariable;

/** out = exp(x) + sin(y): two independent nodes before the add. */
function fork(): { x: TV; y: TV; p: TV; q: TV; out: TV; fg: weft.FunctionGraph } {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const p = pt.exp(x);
  const q = pt.sin(y);
  const out = pt.add(p, q);
  return { x, y, p, q, out, fg: new weft.FunctionGraph([x, y], [out], { clone: false }) };
}

/** A feature that only adds orderings: node -> the nodes that must run before it. */
function orderingFeature(pairs: ReadonlyArray<readonly [weft.Apply, weft.Apply[]]>): weft.Feature {
  return { orderings: () => new Map(pairs) };
}

t.test('attach, detach and refusal', async (t) => {
  const { fg } = fork();
  const rec = new Recorder();
  fg.attachFeature(rec);
  fg.attachFeature(rec);
  t.same(rec.take(), ['attach FunctionGraph(Elemwise{add}.out)'], 'attaching twice is a no-op');
  t.same(fg.features, [rec]);
  fg.removeFeature(rec);
  t.same(rec.take(), ['detach FunctionGraph(Elemwise{add}.out)']);
  t.same(fg.features, []);
  fg.removeFeature(rec);
  t.same(rec.take(), [], 'removing a detached feature is a no-op');
  fg.replace(fg.outputs[0]!, pt.exp(fg.inputs[0] as weft.pt.TensorVariable));
  t.same(rec.take(), [], 'a detached feature hears nothing');

  const refusing: weft.Feature = {
    onAttach() {
      throw new weft.InconsistencyError('this graph is not for me');
    },
  };
  await throwsExactly(t, () => fg.attachFeature(refusing), weft.InconsistencyError, 'this graph is not for me');
  t.same(fg.features, [], 'a feature that refuses is not attached');
});

t.test('features given at construction attach after the graph is built', async (t) => {
  const x = pt.vector('x');
  const rec = new Recorder();
  let nodesSeen = -1;
  const counting: weft.Feature = {
    onAttach(fg) {
      nodesSeen = fg.applyNodes.size;
    },
  };
  const fg = new weft.FunctionGraph([x], [pt.exp(pt.sin(x))], { clone: false, features: [rec, counting] });
  t.same(rec.take(), ['attach FunctionGraph(Elemwise{exp}.out)'], 'no import events for the initial nodes');
  t.equal(nodesSeen, 2, 'onAttach sees the whole graph');
  t.same(fg.features, [rec, counting]);
});

t.test('event arguments: the graph, the node, the client, the variables and the reason', async (t) => {
  const { x, p, out, fg } = fork();
  const calls: unknown[][] = [];
  const spy: weft.Feature = {
    onImport: (...args) => void calls.push(['import', ...args]),
    onPrune: (...args) => void calls.push(['prune', ...args]),
    onChangeInput: (...args) => void calls.push(['change', ...args]),
  };
  fg.attachFeature(spy);
  const l = pt.log(pt.cos(x));
  fg.replace(p, l, { reason: 'why' });
  t.equal(calls.length, 4);
  const [imp1, imp2, change, prune] = calls;
  t.same(imp1, ['import', fg, l.owner!.inputs[0]!.owner, 'why'], 'dependencies are imported first');
  t.same(imp2, ['import', fg, l.owner, 'why']);
  t.equal(change![0], 'change');
  t.equal(change![1], fg);
  t.same(change![2], { kind: 'apply', node: out.owner, index: 0 });
  t.equal(change![3], p, 'the old variable');
  t.equal(change![4], l, 'the new variable');
  t.equal(change![5], 'why');
  t.same(prune, ['prune', fg, p.owner, 'why']);
});

t.test('events go to every feature, in the order they were attached', async (t) => {
  const { q, fg } = fork();
  const log: string[] = [];
  const named = (name: string): weft.Feature => ({
    onChangeInput: () => void log.push(`${name} change`),
    onPrune: () => void log.push(`${name} prune`),
  });
  fg.attachFeature(named('first'));
  fg.attachFeature(named('second'));
  fg.replace(q, fg.inputs[1]!);
  t.same(log, ['first change', 'second change', 'first prune', 'second prune']);
});

t.test('pruning is reported from the output side inward, one event per node', async (t) => {
  const x = pt.vector('x');
  const chain = pt.exp(pt.sin(pt.cos(x)));
  const fg = new weft.FunctionGraph([x], [chain], { clone: false });
  const rec = new Recorder();
  fg.attachFeature(rec);
  rec.take();
  fg.replace(chain, x);
  t.same(rec.take(), [
    'change output 0: Elemwise{exp}.out -> x [replace]',
    'prune Elemwise{exp}(Elemwise{sin}.out) [replace]',
    'prune Elemwise{sin}(Elemwise{cos}.out) [replace]',
    'prune Elemwise{cos}(x) [replace]',
  ]);
  t.equal(fg.applyNodes.size, 0);
});

t.test('a node still used elsewhere is not pruned', async (t) => {
  const x = pt.vector('x');
  const s = pt.sin(x);
  const fg = new weft.FunctionGraph([x], [pt.exp(s), pt.cos(s)], { clone: false });
  const rec = new Recorder();
  fg.attachFeature(rec);
  rec.take();
  fg.replace(fg.outputs[0]!, x);
  t.same(rec.take(), ['change output 0: Elemwise{exp}.out -> x [replace]', 'prune Elemwise{exp}(Elemwise{sin}.out) [replace]']);
  t.ok(fg.applyNodes.has(s.owner!));
});

t.test('toposort: data dependencies, then extra orderings from features', async (t) => {
  const { p, q, out, fg } = fork();
  t.same(fg.toposort(), [p.owner, q.owner, out.owner], 'inputs in order, dependencies first');
  t.same(fg.orderings(), new Map());
  const f = orderingFeature([[p.owner!, [q.owner!]]]);
  fg.attachFeature(f);
  t.same(fg.toposort(), [q.owner, p.owner, out.owner], 'sin must run before exp');
  t.same(fg.orderings(), new Map([[p.owner!, [q.owner!]]]));
  fg.removeFeature(f);
  t.same(fg.toposort(), [p.owner, q.owner, out.owner], 'without the feature, the data order again');
});

t.test('toposort: orderings of several features are merged', async (t) => {
  const x = pt.vector('x');
  const a = pt.exp(x);
  const b = pt.sin(x);
  const c = pt.cos(x);
  const out = pt.add(a, b, c);
  const fg = new weft.FunctionGraph([x], [out], { clone: false });
  t.same(fg.toposort(), [a.owner, b.owner, c.owner, out.owner]);
  fg.attachFeature(orderingFeature([[a.owner!, [c.owner!]]]));
  fg.attachFeature(orderingFeature([[a.owner!, [b.owner!, c.owner!]], [b.owner!, [c.owner!]]]));
  t.same(fg.orderings(), new Map([
    [a.owner!, [c.owner!, b.owner!]],
    [b.owner!, [c.owner!]],
  ]), 'duplicates are dropped');
  const order = fg.toposort();
  t.same(order, [c.owner, b.owner, a.owner, out.owner]);
});

t.test('toposort: a cycle through orderings is a CycleError', async (t) => {
  const { p, out, fg } = fork();
  fg.attachFeature(orderingFeature([[p.owner!, [out.owner!]]]));
  await throwsExactly(
    t,
    () => fg.toposort(),
    weft.CycleError,
    'the graph has a cycle through Elemwise{add}(Elemwise{exp}.out, Elemwise{sin}.out) (data edges and orderings together)',
  );
  const { fg: fg2, p: p2, q: q2 } = fork();
  fg2.attachFeature(orderingFeature([[p2.owner!, [q2.owner!]], [q2.owner!, [p2.owner!]]]));
  await throwsExactly(
    t,
    () => fg2.toposort(),
    weft.CycleError,
    'the graph has a cycle through Elemwise{exp}(x) (data edges and orderings together)',
  );
  try {
    fg2.toposort();
  } catch (e) {
    t.equal((e as weft.CycleError).node, p2.owner, 'the error names the node where the cycle closed');
  }
});

t.test('a compiled function runs in an order that respects its graph', async (t) => {
  const x = pt.vector('x');
  const fn = await weft.compile([x], pt.exp(x).add(pt.sin(x)).sum());
  const order = fn.fgraph.toposort();
  const pos = new Map(order.map((n, i) => [n, i]));
  for (const n of order) {
    for (const v of n.inputs) if (v.owner) t.ok(pos.get(v.owner)! < pos.get(n)!, `${v.owner} before ${n}`);
  }
  t.equal(order.length, fn.fgraph.applyNodes.size);
});
