// FunctionGraph bookkeeping: clients after construction, replace/replaceAll with type checks,
// a feature's veto undoing the change completely, pruning, missing inputs, and replacing a
// variable by an expression that uses it.
import t from 'tap';
import { pt, throwsExactly, weft } from '../helpers.js';
import { clientText, comparable, Recorder, snapshot } from './fixtures.js';

type TV = weft.pt.TensorVariable;

/** c = exp(x) + exp(x) * y, with a = exp(x) and b = a * y. */
function diamond(): { x: TV; y: TV; a: TV; b: TV; c: TV; fg: weft.FunctionGraph } {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const a = pt.exp(x);
  const b = pt.mul(a, y);
  const c = pt.add(a, b);
  return { x, y, a, b, c, fg: new weft.FunctionGraph([x, y], [c], { clone: false }) };
}

const clientsOf = (fg: weft.FunctionGraph, v: weft.Variable): string[] => fg.clients(v).map(clientText);

/** Refuses any graph that computes a log: a stand-in for the destroy handler's veto. */
class NoLog implements weft.Feature {
  validations = 0;
  validate(fg: weft.FunctionGraph): void {
    this.validations++;
    for (const n of fg.applyNodes) {
      if (String(n.op) === 'Elemwise{log}') throw new weft.InconsistencyError(`no log allowed: ${n}`);
    }
  }
}

t.test('construction: clients, nodes and variables', async (t) => {
  const { x, y, a, b, c, fg } = diamond();
  t.same(clientsOf(fg, x), ['Elemwise{exp} input 0']);
  t.same(clientsOf(fg, y), ['Elemwise{mul} input 1']);
  t.same(clientsOf(fg, a), ['Elemwise{mul} input 0', 'Elemwise{add} input 0']);
  t.same(clientsOf(fg, b), ['Elemwise{add} input 1']);
  t.same(clientsOf(fg, c), ['output 0']);
  t.same(new Set(fg.applyNodes), new Set([a.owner, b.owner, c.owner]));
  t.same(new Set(fg.variables), new Set([x, y, a, b, c]));
  t.ok(fg.isInput(x) && fg.isInput(y) && !fg.isInput(a));
  t.same(fg.toposort(), [a.owner, b.owner, c.owner]);
  fg.checkIntegrity();
  t.same(clientsOf(fg, pt.vector()), [], 'a variable of no graph has no clients');
});

t.test('construction: clients belong to the graph, not to the variables', async (t) => {
  const { x, a, c } = diamond();
  const y = pt.vector('y');
  const only = new weft.FunctionGraph([x, y], [a], { clone: false });
  const both = new weft.FunctionGraph([x, y], [a, pt.add(a, 1)], { clone: false });
  t.same(clientsOf(only, a), ['output 0']);
  t.same(clientsOf(both, a), ['output 0', 'Elemwise{add} input 0']);
  t.equal(both.outputs[1]!.owner!.inputs[1]!.owner!.inputs[0]!.constructor.name, 'TensorConstant', 'the constant 1, broadcast');
  t.notOk(only.variables.has(c));
});

t.test('construction: cloned by default, with the map from originals to copies', async (t) => {
  const { x, y, a, c } = diamond();
  const fg = new weft.FunctionGraph([x, y], [c]);
  t.not(fg.inputs[0], x);
  t.equal(fg.equiv.get(x), fg.inputs[0]);
  t.equal(fg.equiv.get(c), fg.outputs[0]);
  t.notOk(fg.variables.has(a), 'the original nodes are not in the graph');
  t.ok(fg.variables.has(fg.equiv.get(a)!));
  t.equal(fg.inputs[0]!.name, 'x', 'names are kept');
  t.equal(c.owner!.inputs[0], a, 'the original graph is untouched');
  fg.checkIntegrity();
});

t.test('construction: bad inputs and missing inputs', async (t) => {
  const { x, y, a, c } = diamond();
  await throwsExactly(
    t,
    () => new weft.FunctionGraph([a], [c], { clone: false }),
    Error,
    'FunctionGraph: Elemwise{exp}.out cannot be an input, it is computed by Elemwise{exp}',
  );
  const k = pt.constant(2, { name: 'two' });
  await throwsExactly(t, () => new weft.FunctionGraph([k], [k], { clone: false }), Error, 'FunctionGraph: the constant two cannot be an input');
  await throwsExactly(t, () => new weft.FunctionGraph([x, x], [a], { clone: false }), Error, 'FunctionGraph: x is given twice as an input');
  await throwsExactly(
    t,
    () => new weft.FunctionGraph([x], [c], { clone: false }),
    weft.MissingInputError,
    'y is needed to compute the outputs (Elemwise{mul}(Elemwise{exp}.out, y)) but is neither an input of the graph nor a constant; ' +
      'pass it as an input or give it a value with givens',
  );
  const missing = await (async () => {
    try {
      new weft.FunctionGraph([x], [pt.add(x, y)], { clone: false });
    } catch (e) {
      return e as weft.MissingInputError;
    }
    return undefined;
  })();
  t.equal(missing?.variable, y, 'the error carries the missing variable');
  await throwsExactly(
    t,
    () => new weft.FunctionGraph([], [y], { clone: false }),
    weft.MissingInputError,
    'y is needed to compute the outputs (init) but is neither an input of the graph nor a constant; ' +
      'pass it as an input or give it a value with givens',
  );
  const onlyConstants = new weft.FunctionGraph([], [pt.exp(k)], { clone: false });
  t.equal(onlyConstants.applyNodes.size, 1, 'constants need no input');
  onlyConstants.checkIntegrity();
});

t.test('replace: clients, pruning and the events features hear, in order', async (t) => {
  const { x, y, a, b, c, fg } = diamond();
  const rec = new Recorder();
  fg.attachFeature(rec);
  t.same(rec.take(), ['attach FunctionGraph(Elemwise{add}.out)']);
  const l = pt.log(x);
  fg.replace(a, l, { reason: 'test' });
  t.same(rec.take(), [
    'import Elemwise{log}(x) [test]',
    'change Elemwise{mul} input 0: Elemwise{exp}.out -> Elemwise{log}.out [test]',
    'change Elemwise{add} input 0: Elemwise{exp}.out -> Elemwise{log}.out [test]',
    'prune Elemwise{exp}(x) [test]',
  ]);
  t.same(b.owner!.inputs, [l, y]);
  t.same(c.owner!.inputs, [l, b]);
  t.same(clientsOf(fg, l), ['Elemwise{mul} input 0', 'Elemwise{add} input 0']);
  t.same(clientsOf(fg, x), ['Elemwise{log} input 0']);
  t.notOk(fg.applyNodes.has(a.owner!), 'exp lost its clients and left the graph');
  t.notOk(fg.variables.has(a));
  t.same(fg.toposort(), [l.owner, b.owner, c.owner]);
  fg.checkIntegrity();
  t.same(a.owner!.inputs, [x], 'a pruned node keeps its own inputs');
});

t.test('replace: the default reason, and replacing a graph output', async (t) => {
  const { x, y, c, fg } = diamond();
  const rec = new Recorder();
  fg.attachFeature(rec);
  rec.take();
  fg.replace(c, y);
  t.same(rec.take(), [
    'change output 0: Elemwise{add}.out -> y [replace]',
    'prune Elemwise{add}(Elemwise{exp}.out, Elemwise{mul}.out) [replace]',
    'prune Elemwise{mul}(Elemwise{exp}.out, y) [replace]',
    'prune Elemwise{exp}(x) [replace]',
  ]);
  t.same(fg.outputs, [y]);
  t.equal(fg.applyNodes.size, 0, 'every node was pruned');
  t.same(new Set(fg.variables), new Set([x, y]), 'inputs stay, even without clients');
  t.same(clientsOf(fg, x), []);
  t.same(clientsOf(fg, y), ['output 0']);
  fg.checkIntegrity();
});

t.test('replace: a constant that loses its clients leaves the graph', async (t) => {
  const x = pt.tensor({ shape: [2], name: 'x' });
  const k = pt.constant([1, 2], { name: 'k' });
  const out = pt.add(x, k);
  const fg = new weft.FunctionGraph([x], [out], { clone: false });
  t.ok(fg.variables.has(k));
  fg.replace(out, pt.exp(x));
  t.notOk(fg.variables.has(k));
  t.same(clientsOf(fg, k), []);
  fg.checkIntegrity();
});

t.test('replace: types must match (or the replacement be more specific)', async (t) => {
  const { a, fg } = diamond();
  const before = comparable(snapshot(fg));
  await throwsExactly(
    t,
    () => fg.replace(a, pt.matrix('m')),
    TypeError,
    'cannot replace Elemwise{exp}.out (TensorType(float64, (?,))) with m (TensorType(float64, (?, ?))) for replace: the types are not compatible',
  );
  await throwsExactly(
    t,
    () => fg.replace(a, pt.vector('f', 'float32'), { reason: 'my rewrite' }),
    TypeError,
    'cannot replace Elemwise{exp}.out (TensorType(float64, (?,))) with f (TensorType(float32, (?,))) for my rewrite: the types are not compatible',
  );
  t.same(comparable(snapshot(fg)), before, 'a refused replacement changes nothing');
  const z = pt.tensor({ shape: [3], name: 'z' });
  const fg2 = new weft.FunctionGraph([z], [pt.exp(z)], { clone: false });
  await throwsExactly(
    t,
    () => fg2.replace(fg2.outputs[0]!, pt.vector('v')),
    TypeError,
    'cannot replace Elemwise{exp}.out (TensorType(float64, (3,))) with v (TensorType(float64, (?,))) for replace: the types are not compatible',
    'a less specific type is refused',
  );
  const { x, fg: fg3, a: a3 } = diamond();
  const specific = pt.exp(x).owner!.op.makeNode(pt.tensor({ shape: [3] })).outputs[0]!;
  t.ok(specific.type.equals(new weft.TensorType('float64', [3])));
  const sx = pt.tensor({ shape: [3], name: 'sx' });
  fg3.addInput(sx);
  fg3.replace(a3, pt.exp(sx));
  t.equal(String(fg3.outputs[0]!.owner!.inputs[0]!.type), 'TensorType(float64, (3,))', 'a more specific type is accepted');
  fg3.checkIntegrity();
});

t.test('replace: a variable that is not in the graph', async (t) => {
  const { fg } = diamond();
  const other = pt.exp(pt.vector('w'));
  await throwsExactly(t, () => fg.replace(other, pt.vector()), Error, 'replace (replace): Elemwise{exp}.out is not in this graph');
});

t.test('replace: an expression with an input the graph lacks raises MissingInputError and changes nothing', async (t) => {
  const { x, a, fg } = diamond();
  const rec = new Recorder();
  fg.attachFeature(rec);
  rec.take();
  const before = comparable(snapshot(fg));
  const z = pt.vector('z');
  await throwsExactly(
    t,
    () => fg.replace(a, pt.add(x, z)),
    weft.MissingInputError,
    'z is needed to compute the outputs (Elemwise{add}(x, z)) but is neither an input of the graph nor a constant; ' +
      'pass it as an input or give it a value with givens',
  );
  await throwsExactly(
    t,
    () => fg.replace(a, z),
    weft.MissingInputError,
    'z is needed to compute the outputs (replace) but is neither an input of the graph nor a constant; ' +
      'pass it as an input or give it a value with givens',
  );
  t.same(comparable(snapshot(fg)), before);
  t.same(rec.take(), [], 'no events: nothing was imported');
  fg.addInput(z);
  fg.replace(a, pt.add(x, z));
  t.same(clientsOf(fg, z), ['Elemwise{add} input 1'], 'once z is an input the same replacement works');
  fg.checkIntegrity();
});

t.test('replace: by an expression that uses the replaced variable', async (t) => {
  const { x, a, b, c, fg } = diamond();
  const twice = pt.mul(a, 2);
  fg.replace(a, twice);
  t.equal(b.owner!.inputs[0], twice);
  t.equal(c.owner!.inputs[0], twice);
  t.equal(twice.owner!.inputs[0], a, 'the new node still reads the old variable');
  t.same(clientsOf(fg, a), ['Elemwise{mul} input 0'], 'only the new node reads it now');
  t.ok(fg.applyNodes.has(a.owner!), 'and its node stays');
  t.same(clientsOf(fg, x), ['Elemwise{exp} input 0']);
  fg.checkIntegrity();
  const topo = fg.toposort();
  t.ok(topo.indexOf(a.owner!) < topo.indexOf(twice.owner!));

  const out = fg.outputs[0]!;
  const scaled = pt.mul(out as TV, 3);
  fg.replace(out, scaled);
  t.same(fg.outputs, [scaled], 'an output replaced by an expression of itself');
  t.same(clientsOf(fg, out), ['Elemwise{mul} input 0']);
  fg.checkIntegrity();
});

t.test('replaceAll: one change, validated once', async (t) => {
  const { x, y, a, b, fg } = diamond();
  const guard = new NoLog();
  fg.attachFeature(guard);
  const s = pt.sin(x);
  const q = pt.sub(s, y);
  fg.replaceAll(
    [
      [a, s],
      [b, q],
    ],
    { reason: 'pair' },
  );
  t.equal(guard.validations, 1, 'validated once for both replacements');
  t.same(fg.outputs[0]!.owner!.inputs, [s, q]);
  t.notOk(fg.applyNodes.has(a.owner!));
  t.notOk(fg.applyNodes.has(b.owner!));
  fg.checkIntegrity();
});

/** Two outputs of the input's type. */
class Pair extends weft.Op<TV[]> {
  override makeNode(x: unknown): weft.Apply {
    const xv = pt.asTensorVariable(x as weft.TensorLike);
    return new weft.Apply(this, [xv], [xv.type.makeVariable(), xv.type.makeVariable()]);
  }
}

t.test('replaceAll: a pair whose variable an earlier pair pruned is skipped', async (t) => {
  const x = pt.vector('x');
  const [p0, p1] = new Pair().call(x);
  const fg = new weft.FunctionGraph([x], [pt.exp(p0!)], { clone: false });
  t.ok(fg.variables.has(p1!), 'an unused output of a node in the graph is in the graph');
  fg.replaceAll([
    [p0!, x],
    [p1!, pt.sin(x)],
  ]);
  t.notOk(fg.applyNodes.has(p0!.owner!), 'the Pair node was pruned by the first pair');
  t.notOk([...fg.applyNodes].some((n) => String(n.op) === 'Elemwise{sin}'), 'the second pair had nothing to replace');
  fg.checkIntegrity();
  await throwsExactly(
    t,
    () => fg.replaceAll([[fg.outputs[0]!, x], [p1!, x]]),
    Error,
    'replace (replace): Pair.1 is not in this graph',
    'a variable that is not in the graph at the start is an error',
  );
  t.equal(String(fg.outputs[0]!.owner!.op), 'Elemwise{exp}', 'and nothing was changed');
  fg.checkIntegrity();
});

t.test('a vetoed replace is undone completely', async (t) => {
  const { x, a, fg } = diamond();
  const guard = new NoLog();
  const rec = new Recorder();
  fg.attachFeature(guard);
  fg.attachFeature(rec);
  rec.take();
  const before = snapshot(fg);
  const l = pt.log(x);
  await throwsExactly(t, () => fg.replace(a, l, { reason: 'try' }), weft.InconsistencyError, 'no log allowed: Elemwise{log}(x)');
  const after = snapshot(fg);
  t.same(comparable(after), comparable(before), 'inputs, outputs, nodes, variables, wiring, clients and order as before');
  fg.checkIntegrity();
  t.same(fg.toposort(), before.toposort);
  t.notOk(fg.variables.has(l));
  t.same(rec.take(), [
    'import Elemwise{log}(x) [try]',
    'change Elemwise{mul} input 0: Elemwise{exp}.out -> Elemwise{log}.out [try]',
    'change Elemwise{add} input 0: Elemwise{exp}.out -> Elemwise{log}.out [try]',
    'prune Elemwise{exp}(x) [try]',
    'import Elemwise{exp}(x) [undo try]',
    'change Elemwise{add} input 0: Elemwise{log}.out -> Elemwise{exp}.out [undo try]',
    'change Elemwise{mul} input 0: Elemwise{log}.out -> Elemwise{exp}.out [undo try]',
    'prune Elemwise{log}(x) [undo try]',
  ], 'features hear the change and its undoing, so they stay in step');
  fg.replace(a, pt.sin(x));
  t.equal(String(fg.outputs[0]!.owner!.inputs[0]!.owner!.op), 'Elemwise{sin}', 'the graph still accepts changes');
  fg.checkIntegrity();
});

t.test('a vetoed replaceAll undoes every pair', async (t) => {
  const { x, y, a, b, fg } = diamond();
  fg.attachFeature(new NoLog());
  const before = comparable(snapshot(fg));
  await throwsExactly(
    t,
    () =>
      fg.replaceAll([
        [a, pt.sin(x)],
        [b, pt.log(y)],
      ]),
    weft.InconsistencyError,
    'no log allowed: Elemwise{log}(y)',
  );
  t.same(comparable(snapshot(fg)), before);
  fg.checkIntegrity();
});

t.test('a vetoed replace by a more specific type is undone', async (t) => {
  const x = pt.vector('x');
  const sx = pt.tensor({ shape: [3], name: 'sx' });
  const a = pt.exp(x);
  const out = pt.add(a, 1);
  const fg = new weft.FunctionGraph([x, sx], [out], { clone: false });
  fg.attachFeature(new NoLog());
  const before = comparable(snapshot(fg));
  await throwsExactly(t, () => fg.replace(a, pt.log(sx)), weft.InconsistencyError, 'no log allowed: Elemwise{log}(sx)');
  t.same(comparable(snapshot(fg)), before);
  fg.checkIntegrity();
});

t.test('changeInput of one client, and checkIntegrity catching a broken graph', async (t) => {
  const { x, a, b, fg } = diamond();
  const s = pt.sin(x);
  fg.changeInput({ kind: 'apply', node: b.owner!, index: 0 }, s);
  t.same(clientsOf(fg, a), ['Elemwise{add} input 0'], 'only that client moved');
  t.same(clientsOf(fg, s), ['Elemwise{mul} input 0']);
  fg.checkIntegrity();

  const broken = diamond();
  (broken.c.owner!.inputs as weft.Variable[])[0] = broken.x;
  await throwsExactly(
    t,
    () => broken.fg.checkIntegrity(),
    weft.InconsistencyError,
    'Elemwise{add}(x, Elemwise{mul}.out) reads x (input 0) but is not among its clients',
  );
});

t.test('addOutput and importVar', async (t) => {
  const { x, a, fg } = diamond();
  const e = pt.exp(a);
  fg.addOutput(e);
  t.equal(fg.outputs.length, 2);
  t.same(clientsOf(fg, e), ['output 1']);
  t.same(clientsOf(fg, a), ['Elemwise{mul} input 0', 'Elemwise{add} input 0', 'Elemwise{exp} input 0']);
  fg.checkIntegrity();
  await throwsExactly(
    t,
    () => fg.importVar(pt.vector('w')),
    weft.MissingInputError,
    'w is needed to compute the outputs (importVar) but is neither an input of the graph nor a constant; ' +
      'pass it as an input or give it a value with givens',
  );
  t.ok(fg.isInput(x));
});

t.test('clone of a FunctionGraph: an independent copy without features', async (t) => {
  const { a, fg } = diamond();
  fg.attachFeature(new NoLog());
  const { fgraph, equiv } = fg.clone();
  t.equal(fgraph.features.length, 0);
  t.equal(fgraph.applyNodes.size, 3);
  t.not(equiv.get(a), a);
  fgraph.replace(equiv.get(a)!, pt.log(fgraph.inputs[0] as weft.pt.TensorVariable));
  t.ok(fg.applyNodes.has(a.owner!), 'the original is unchanged');
  fgraph.checkIntegrity();
  fg.checkIntegrity();
});
