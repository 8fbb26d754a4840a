// Node rewriters: nodeRewriter, the three kinds of OpMatcher, rewriteNode (replacements as
// arrays and maps, undefined entries, no-ops, vetoes, wrong lengths and types), opSub and
// opRemove, and patternSub (nesting, bound variables, constants, constraints, multiple clients).
import t from 'tap';
import { pt, throwsExactly, weft } from '../helpers.js';
import { comparable, snapshot } from './fixtures.js';
import { countOps, Double, graph, Identity, loggingContext, ops, Pair, show, showGraph, Veto } from './rewriting-fixtures.js';
import { RewriteContext, opRemove, opSub, patternSub, matches, nodeRewriter, rewriteNode, tracksNode, type NodeRewriter, in2out } from '../../src/graph/rewriting/index.js';
import { Elemwise } from '../../src/tensor/elemwise/elemwise.js';

/** Offers every node of `fg` once (inputs first) to `rewriters`; returns the context. */
function walk(fg: weft.FunctionGraph, ...rewriters: NodeRewriter[]): RewriteContext {
  const ctx = new RewriteContext();
  in2out('test walk', ...rewriters).apply(fg, ctx);
  return ctx;
}

t.test('OpMatcher: an op (equal props match), an op class, a predicate', async (t) => {
  const d2 = new Double(2);
  t.ok(matches(d2, new Double(2)), 'another instance with equal props');
  t.notOk(matches(d2, new Double(3)), 'other props');
  t.notOk(matches(d2, new Identity()), 'another op');
  t.ok(matches(Double, new Double(7)), 'a class matches its instances');
  t.notOk(matches(Double, new Identity()));
  t.ok(matches(Elemwise, ops.exp), 'a built-in op class');
  const small = { name: 'small factor', test: (op: weft.Apply['op']) => op instanceof Double && op.factor < 5 };
  t.ok(matches(small, new Double(2)));
  t.notOk(matches(small, new Double(5)));
  t.notOk(matches(small, ops.exp));
  t.ok(matches(ops.exp, pt.exp(pt.vector()).owner!.op), 'element-wise ops compare by props');
  t.notOk(matches(ops.exp, ops.log));

  const x = pt.scalar('x');
  const node = new Double(2).call(x).owner!;
  t.ok(tracksNode(nodeRewriter('all', undefined, () => false), node), 'no tracks: every node');
  t.ok(tracksNode(nodeRewriter('some', [Identity, new Double(2)], () => false), node), 'any matcher of the list');
  t.notOk(tracksNode(nodeRewriter('none', [Identity, ops.exp], () => false), node));
});

t.test('nodeRewriter: only the nodes of the ops it tracks are offered to it', async (t) => {
  const x = pt.scalar('x');
  const out = pt.add(new Double(2).call(x), pt.exp(new Double(3).call(x)));
  const fg = graph([x], [out]);
  const seen: string[] = [];
  const spy = (name: string, tracks: Parameters<typeof nodeRewriter>[1]): NodeRewriter =>
    nodeRewriter(name, tracks, (node, g) => {
      t.equal(g, fg, 'the transform gets the graph');
      seen.push(`${name}: ${show(node.outputs[0]!)}`);
      return false;
    });
  walk(fg, spy('doubles', [Double]), spy('exp', [ops.exp]), spy('factor 3', [new Double(3)]));
  t.same(seen, [
    'doubles: Double{factor=2}(x)',
    'doubles: Double{factor=3}(x)',
    'factor 3: Double{factor=3}(x)',
    'exp: exp(Double{factor=3}(x))',
  ]);
  const r = nodeRewriter('r', [Double], () => false);
  t.equal(r.kind, 'node');
  t.equal(r.name, 'r');
  t.same(r.tracks, [Double]);
});

t.test('rewriteNode: an array of replacements, one per output', async (t) => {
  const x = pt.scalar('x');
  const fg = graph([x], [pt.neg(pt.exp(x))]);
  const ctx = new RewriteContext();
  const expToTanh = nodeRewriter('exp_to_tanh', [ops.exp], (node) => [pt.tanh(node.inputs[0] as weft.pt.TensorVariable)]);
  const expNode = fg.outputs[0]!.owner!.inputs[0]!.owner!;
  t.equal(rewriteNode(fg, expToTanh, expNode, ctx), true);
  t.equal(showGraph(fg), 'neg(tanh(x))');
  t.notOk(fg.applyNodes.has(expNode), 'the old node left the graph');
  fg.checkIntegrity();
  const stats = ctx.profile.byRewriter.get('exp_to_tanh')!;
  t.equal(stats.calls, 1);
  t.equal(stats.applied, 1);
  t.ok(stats.time >= 0);
});

t.test('rewriteNode: a map from old outputs to new ones, and undefined entries, replace only some outputs', async (t) => {
  const x = pt.scalar('x');
  const [p, m] = new Pair().call(x);
  const fg = graph([x], [pt.exp(p!), pt.log(m!)]);
  const pair = p!.owner!;
  const ctx = new RewriteContext();
  const first = nodeRewriter('first', [Pair], (node) => new Map([[node.outputs[0]!, pt.add(node.inputs[0] as weft.pt.TensorVariable, 1)]]));
  t.equal(rewriteNode(fg, first, pair, ctx), true);
  t.equal(showGraph(fg), 'exp(add(x, 1)) ; log(Pair.1(x))', 'output 0 replaced, output 1 kept');
  t.ok(fg.applyNodes.has(pair), 'the node stays: its other output is still used');
  const second = nodeRewriter('second', [Pair], (node) => [undefined, pt.sub(node.inputs[0] as weft.pt.TensorVariable, 1)]);
  t.equal(rewriteNode(fg, second, pair, ctx), true);
  t.equal(showGraph(fg), 'exp(add(x, 1)) ; log(sub(x, 1))');
  t.notOk(fg.applyNodes.has(pair), 'no output used any more: pruned');
  fg.checkIntegrity();
});

t.test('rewriteNode: nothing to do is no change', async (t) => {
  const x = pt.scalar('x');
  const fg = graph([x], [pt.exp(x)]);
  const node = fg.outputs[0]!.owner!;
  const ctx = new RewriteContext();
  const results: Array<[string, () => ReturnType<NodeRewriter['transform']>]> = [
    ['false', () => false],
    ['undefined', () => undefined],
    ['[undefined]', () => [undefined]],
    ['the same outputs', () => [node.outputs[0]!]],
    ['an empty map', () => new Map()],
    ['a map to themselves', () => new Map([[node.outputs[0]!, node.outputs[0]!]])],
  ];
  for (const [what, result] of results) {
    t.equal(rewriteNode(fg, nodeRewriter(what, undefined, result), node, ctx), false, what);
    t.equal(ctx.profile.byRewriter.get(what)!.applied, 0, `${what}: not counted as applied`);
    t.equal(ctx.profile.byRewriter.get(what)!.calls, 1, `${what}: counted as a call`);
  }
  t.equal(showGraph(fg), 'exp(x)');
});

t.test('rewriteNode: a replacement a feature vetoes counts as no change and leaves no trace', async (t) => {
  const x = pt.scalar('x');
  const fg = graph([x], [pt.neg(pt.exp(x))]);
  const veto = new Veto((g) => countOps(g, 'Elemwise{tanh}') > 0, 'no tanh here');
  fg.attachFeature(veto);
  const before = comparable(snapshot(fg));
  const { ctx, lines } = loggingContext();
  const expToTanh = nodeRewriter('exp_to_tanh', [ops.exp], (node) => [pt.tanh(node.inputs[0] as weft.pt.TensorVariable)]);
  t.equal(rewriteNode(fg, expToTanh, fg.outputs[0]!.owner!.inputs[0]!.owner!, ctx), false);
  t.equal(veto.refusals, 1);
  t.same(comparable(snapshot(fg)), before, 'the graph is exactly as before');
  t.same(lines, ['rewrite exp_to_tanh vetoed: no tanh here']);
  t.same(ctx.profile.byRewriter.get('exp_to_tanh'), { time: ctx.profile.byRewriter.get('exp_to_tanh')!.time, calls: 1, applied: 0 });
  fg.checkIntegrity();
});

t.test('rewriteNode: a wrong number of replacements, or a replacement of another type, is an error', async (t) => {
  const x = pt.scalar('x');
  const fg = graph([x], [pt.exp(x)]);
  const node = fg.outputs[0]!.owner!;
  const ctx = new RewriteContext();
  await throwsExactly(
    t,
    () => rewriteNode(fg, nodeRewriter('two', [ops.exp], () => [x, x]), node, ctx),
    Error,
    'rewrite two returned 2 replacements for Elemwise{exp}, which has 1 outputs',
  );
  await throwsExactly(
    t,
    () => rewriteNode(fg, nodeRewriter('to_vector', [ops.exp], () => [pt.vector('v')]), node, ctx),
    TypeError,
    'cannot replace Elemwise{exp}.out (TensorType(float64, ())) with v (TensorType(float64, (?,))) for to_vector: the types are not compatible',
  );
  t.equal(showGraph(fg), 'exp(x)');
  t.equal(ctx.profile.byRewriter.get('two')!.calls, 1, 'a failing rewrite is still timed');
});

t.test('opSub: every application of one op becomes the other, on the same inputs', async (t) => {
  const x = pt.scalar('x');
  const fg = graph([x], [pt.add(pt.exp(x), pt.exp(pt.neg(x)))]);
  const sub = opSub(ops.exp, ops.log);
  t.equal(sub.name, 'OpSub(Elemwise{exp} -> Elemwise{log})');
  const ctx = walk(fg, sub);
  t.equal(showGraph(fg), 'add(log(x), log(neg(x)))');
  t.equal(ctx.profile.byRewriter.get(sub.name)!.applied, 2);

  const y = pt.scalar('y');
  const fg2 = graph([y], [pt.add(new Double(2).call(y), new Double(5).call(y))]);
  walk(fg2, opSub(new Double(2), new Double(3), 'two_to_three'));
  t.equal(showGraph(fg2), 'add(Double{factor=3}(y), Double{factor=5}(y))', 'only the equal op is substituted');
});

t.test('opRemove: an identity-like op is replaced by its input, unless the type changes', async (t) => {
  const x = pt.scalar('x');
  const fg = graph([x], [pt.exp(new Identity().call(new Identity().call(x)))]);
  const remove = opRemove(new Identity());
  t.equal(remove.name, 'OpRemove(Identity)');
  walk(fg, remove);
  t.equal(showGraph(fg), 'exp(x)');
  fg.checkIntegrity();

  const f = pt.scalar('f', 'float32');
  const cast = pt.cast(f, 'float64');
  const fg2 = graph([f], [pt.exp(cast)]);
  const ctx = walk(fg2, opRemove(cast.owner!.op, 'remove_cast'));
  t.equal(showGraph(fg2), 'exp(cast{float64}(f))', 'float32 -> float64 is not an identity');
  t.equal(ctx.profile.byRewriter.get('remove_cast')!.applied, 0);
});

t.test('patternSub: nested patterns', async (t) => {
  const x = pt.scalar('x');
  const negneg = patternSub([ops.neg, [ops.neg, 'x']], 'x');
  t.equal(negneg.name, 'PatternSub (Elemwise{neg} (Elemwise{neg} x)) -> x');
  t.same(negneg.tracks, [ops.neg], 'it tracks the root op');
  const fg = graph([x], [pt.exp(pt.neg(pt.neg(pt.neg(pt.neg(x))))), pt.neg(x)]);
  walk(fg, negneg);
  t.equal(showGraph(fg), 'exp(x) ; neg(x)', 'two pairs removed in one walk; a single neg is no match');
});

t.test('patternSub: a variable used twice must be bound to the same variable', async (t) => {
  const x = pt.scalar('x');
  const y = pt.scalar('y');
  const subSelf = patternSub([ops.sub, 'a', 'a'], [(a: unknown) => pt.zerosLike(a as weft.pt.TensorVariable), 'a'], { name: 'sub_self' });
  const fg = graph([x, y], [pt.sub(x, x), pt.sub(x, y), pt.sub(pt.exp(y), pt.exp(y))]);
  const ctx = walk(fg, subSelf);
  t.equal(showGraph(fg), '0 ; sub(x, y) ; sub(exp(y), exp(y))', 'x - x is zeros_like(x), a constant 0 for a scalar');
  t.equal(ctx.profile.byRewriter.get('sub_self')!.applied, 1, 'x - y, and two distinct exp(y) nodes, are no match');
});

t.test('patternSub: numbers match constants of that value', async (t) => {
  const x = pt.scalar('x');
  const mulOne = patternSub([ops.mul, 'x', 1], 'x', { name: 'mul_one' });
  const fg = graph([x], [pt.exp(pt.mul(x, 1)), pt.mul(x, 2), pt.mul(1, x)]);
  walk(fg, mulOne);
  t.equal(showGraph(fg), 'exp(x) ; mul(x, 2) ; mul(1, x)', 'the constant must be where the pattern has it');
  const f = pt.scalar('f', 'float32');
  const fg2 = graph([f], [pt.mul(f, 1.0), pt.mul(f, 1.5)]);
  walk(fg2, mulOne);
  t.equal(showGraph(fg2), 'f ; mul(f, 1.5)', 'a float32 one is a one');
  const halves = patternSub([ops.mul, 'x', 0.5], [ops.neg, 'x'], { name: 'custom', constantValue: (v) => (v.name === 'half' ? 0.5 : undefined) });
  const half = pt.constant(7, { name: 'half' });
  const fg3 = graph([x], [pt.mul(x, half), pt.mul(x, 0.5)]);
  walk(fg3, halves);
  t.equal(showGraph(fg3), 'neg(x) ; mul(x, 0.5)', 'constantValue decides what a constant is worth');
});

t.test('patternSub: constraints and bindings of sub-patterns', async (t) => {
  const a = pt.scalar('a');
  const b = pt.scalar('b');
  const onlyA = patternSub([ops.exp, { bind: 'x', constraint: (v) => v.name === 'a' }], [ops.tanh, 'x'], { name: 'exp_a' });
  const fg = graph([a, b], [pt.exp(a), pt.exp(b)]);
  walk(fg, onlyA);
  t.equal(showGraph(fg), 'tanh(a) ; exp(b)');

  const logOfExp = patternSub([ops.log, { bind: 'e', pattern: [ops.exp, 'x'] }], [ops.add, 'e', 'x'], { name: 'bound_subpattern' });
  const fg2 = graph([a], [pt.log(pt.exp(a))]);
  walk(fg2, logOfExp);
  t.equal(showGraph(fg2), 'add(exp(a), a)', "'e' is the inner node's output, 'x' its input");

  const byClass = patternSub([Double, [Double, 'x']], [new Double(4), 'x'], { name: 'double_double' });
  const fg3 = graph([a], [new Double(2).call(new Double(2).call(a)), new Double(3).call(a)]);
  walk(fg3, byClass);
  t.equal(showGraph(fg3), 'Double{factor=4}(a) ; Double{factor=3}(a)', 'class matchers in patterns');
});

t.test('patternSub: inner nodes with other clients match only with allowMultipleClients', async (t) => {
  const x = pt.scalar('x');
  const build = (): weft.FunctionGraph => {
    const l = pt.log(x);
    return graph([x], [pt.exp(l), pt.add(l, 1)]);
  };
  const fg = build();
  const ctx = walk(fg, patternSub([ops.exp, [ops.log, 'x']], 'x', { name: 'exp_log' }));
  t.equal(showGraph(fg), 'exp(log(x)) ; add(log(x), 1)', 'log(x) has two clients: no match by default');
  t.equal(ctx.profile.byRewriter.get('exp_log')!.applied, 0);
  const fg2 = build();
  walk(fg2, patternSub([ops.exp, [ops.log, 'x']], 'x', { name: 'exp_log_shared', allowMultipleClients: true }));
  t.equal(showGraph(fg2), 'x ; add(log(x), 1)');
  fg2.checkIntegrity();
});

t.test('patternSub: bad patterns are refused when the rewrite is made', async (t) => {
  await throwsExactly(t, () => patternSub('x' as never, 'x'), TypeError, 'patternSub: the input pattern must be [op, ...inputs]');
  await throwsExactly(
    t,
    () => patternSub([ops.exp, 'x'], [ops.add, 'x', 'y']),
    Error,
    "patternSub (Elemwise{exp} x) -> (Elemwise{add} x y): the output pattern uses 'y', which the input pattern does not bind",
  );
  const p = patternSub([{ name: 'any exp', test: (op) => String(op) === 'Elemwise{exp}' }, 'x'], 'x');
  t.equal(p.name, 'PatternSub (any exp x) -> x', 'a predicate reads as its name');
});
