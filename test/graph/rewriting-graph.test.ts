// Graph rewriters: the walkers in2out and out2in (order of visits, new nodes visited, removed
// nodes skipped), the equilibrium rewriter (fixed point, a cycle stopped by its error), the
// merge rewriter (nodes and constants by props; multi-output nodes; a veto), constant folding.
import t from 'tap';
import { pt, throwsExactly, weft } from '../helpers.js';
import { countOps, Double, graph, Lazy, loggingContext, ops, Pair, show, showGraph, Veto } from './rewriting-fixtures.js';
import { constantFolding, RewriteContext, EquilibriumRewriter, RewriteCycleError, MergeRewriter, opSub, patternSub, nodeRewriter, type NodeRewriter, in2out, out2in } from '../../src/graph/rewriting/index.js';

/** A rewriter that changes nothing and writes down each node it is offered. */
function recorder(into: string[]): NodeRewriter {
  return nodeRewriter('recorder', undefined, (node) => {
    into.push(show(node.outputs[0]!));
    return false;
  });
}

/** log(neg(exp(x))) and tanh(x), sharing x. */
function chain(): { x: weft.pt.TensorVariable; fg: weft.FunctionGraph } {
  const x = pt.scalar('x');
  return { x, fg: graph([x], [pt.log(pt.neg(pt.exp(x))), pt.tanh(x)]) };
}

t.test('in2out visits inputs first, out2in outputs first', async (t) => {
  const seen: string[] = [];
  const { fg } = chain();
  t.equal(in2out('forward', recorder(seen)).apply(fg, new RewriteContext()), 0, 'no change made');
  t.same(seen, ['exp(x)', 'neg(exp(x))', 'log(neg(exp(x)))', 'tanh(x)']);
  seen.length = 0;
  out2in('backward', recorder(seen)).apply(fg, new RewriteContext());
  t.same(seen, ['tanh(x)', 'log(neg(exp(x)))', 'neg(exp(x))', 'exp(x)']);
});

t.test('a walk offers each node to its rewriters in order until one applies', async (t) => {
  const { fg } = chain();
  const tried: string[] = [];
  const first = nodeRewriter('first', undefined, (node) => {
    tried.push(`first ${show(node.outputs[0]!)}`);
    return false;
  });
  const expToSin = nodeRewriter('exp_to_sin', [ops.exp], (node) => {
    tried.push(`exp_to_sin ${show(node.outputs[0]!)}`);
    return [pt.sin(node.inputs[0] as weft.pt.TensorVariable)];
  });
  const last = nodeRewriter('last', [ops.exp, ops.tanh], (node) => {
    tried.push(`last ${show(node.outputs[0]!)}`);
    return false;
  });
  const ctx = new RewriteContext();
  t.equal(in2out('walk', first, expToSin, last).apply(fg, ctx), 1);
  t.same(tried, [
    'first exp(x)',
    'exp_to_sin exp(x)',
    'first sin(x)',
    'first neg(sin(x))',
    'first log(neg(sin(x)))',
    'first tanh(x)',
    'last tanh(x)',
  ], 'after exp_to_sin applied the node is gone; the new sin(x) is offered next');
});

t.test('nodes a rewrite creates are visited in the same walk', async (t) => {
  const x = pt.scalar('x');
  const fg = graph([x], [pt.exp(x)]);
  // exp(x) -> neg(neg(tanh(x))), then the new neg(neg(.)) is removed in the same walk.
  const expand = nodeRewriter('expand', [ops.exp], (node) => [pt.neg(pt.neg(pt.tanh(node.inputs[0] as weft.pt.TensorVariable)))]);
  const negneg = patternSub([ops.neg, [ops.neg, 'y']], 'y', { name: 'negneg' });
  const seen: string[] = [];
  const ctx = new RewriteContext();
  t.equal(in2out('walk', expand, negneg, recorder(seen)).apply(fg, ctx), 2);
  t.equal(showGraph(fg), 'tanh(x)');
  t.same(seen, ['tanh(x)', 'neg(tanh(x))'], 'the new nodes, inputs first (the outer neg was rewritten before the recorder saw it)');

  const fg2 = graph([x], [pt.neg(pt.neg(pt.neg(pt.neg(x))))]);
  t.equal(out2in('walk', negneg).apply(fg2, new RewriteContext()), 2, 'out2in: the outer pair, then the inner one');
  t.equal(showGraph(fg2), 'x');
});

t.test('nodes a rewrite removes are not visited', async (t) => {
  const { fg } = chain();
  const seen: string[] = [];
  const logToX = nodeRewriter('log_to_x', [ops.log], () => [fg.inputs[0]!]);
  out2in('walk', logToX, recorder(seen)).apply(fg, new RewriteContext());
  t.equal(showGraph(fg), 'x ; tanh(x)');
  t.same(seen, ['tanh(x)'], 'neg and exp left the graph with log: never offered');
});

t.test('EquilibriumRewriter: graph and node rewriters until nothing changes', async (t) => {
  const x = pt.scalar('x');
  // add(exp(neg(neg(x))), exp(x)): negneg, then merge makes both exps one node, then add(a, a) -> mul(a, 2).
  const fg = graph([x], [pt.add(pt.exp(pt.neg(pt.neg(x))), pt.exp(x))]);
  const negneg = patternSub([ops.neg, [ops.neg, 'y']], 'y', { name: 'negneg' });
  const addSelf = patternSub([ops.add, 'a', 'a'], [ops.mul, 'a', 2], { name: 'add_self' });
  const eq = new EquilibriumRewriter('eq', [new MergeRewriter(), negneg, addSelf]);
  t.same(eq.rewriters.map((r) => r.name), ['merge', 'negneg', 'add_self'], 'graph rewriters first');
  t.equal(eq.composite, true);
  const ctx = new RewriteContext();
  t.equal(eq.apply(fg, ctx), 3);
  t.equal(showGraph(fg), 'mul(exp(x), 2)');
  t.equal(ctx.profile.byRewriter.get('merge')!.calls, 3, 'merge ran in each of the three passes');
  t.equal(ctx.profile.byRewriter.get('merge')!.applied, 1);
  t.equal(ctx.profile.byRewriter.get('add_self')!.applied, 1);
  t.equal(eq.apply(fg, ctx), 0, 'at the fixed point nothing applies');
  fg.checkIntegrity();
});

t.test('EquilibriumRewriter: two rewrites that undo each other are stopped with RewriteCycleError', async (t) => {
  const x = pt.scalar('x');
  const fg = graph([x], [pt.exp(x)]);
  const eq = new EquilibriumRewriter('canon', [opSub(ops.exp, ops.log, 'exp_to_log'), opSub(ops.log, ops.exp, 'log_to_exp')]);
  t.equal(eq.maxUseRatio, 8);
  await throwsExactly(
    t,
    () => eq.apply(fg, new RewriteContext()),
    RewriteCycleError,
    'canon: rewrite exp_to_log was applied 9 times, more than 8 (8 per node of the graph); ' +
      'the rewrites applied in the last passes (exp_to_log, log_to_exp) probably undo each other',
  );
  const y = pt.scalar('y');
  const fg2 = graph([y], [pt.add(pt.exp(y), pt.tanh(y))]);
  const tight = new EquilibriumRewriter('tight', [opSub(ops.exp, ops.log, 'e2l'), opSub(ops.log, ops.exp, 'l2e'), opSub(ops.tanh, ops.tanh, 'noop')], { maxUseRatio: 2 });
  await throwsExactly(
    t,
    () => tight.apply(fg2, new RewriteContext()),
    RewriteCycleError,
    'tight: rewrite e2l was applied 7 times, more than 6 (2 per node of the graph); ' +
      'the rewrites applied in the last passes (e2l, l2e) probably undo each other',
    'the limit scales with the graph; rewrites that did not apply are not named',
  );
  t.equal(new RewriteCycleError('m').name, 'RewriteCycleError');
});

t.test('EquilibriumRewriter: the budget follows the graph as it grows (one node expanded into twelve, each rewritten once)', async (t) => {
  const x = pt.scalar('x');
  const fg = graph([x], [pt.log(x)]);
  const expand = nodeRewriter('expand', [ops.log], (node) => {
    let v = node.inputs[0] as weft.pt.TensorVariable;
    for (let k = 0; k < 12; k++) v = pt.exp(v);
    return [v];
  });
  const eq = new EquilibriumRewriter('grow', [expand, opSub(ops.exp, ops.tanh, 'exp_to_tanh')]);
  t.equal(eq.apply(fg, new RewriteContext()), 13, 'the expansion, then twelve rewrites: more than 8 x the one node it began with');
  t.equal(countOps(fg, 'Elemwise{tanh}'), 12);
});

t.test('EquilibriumRewriter: a rewrite that grows the graph without end still stops with RewriteCycleError (the budget grows at most 32 times)', async (t) => {
  const x = pt.scalar('x');
  const fg = graph([x], [pt.exp(x)]);
  // exp(v) -> exp(-v) applies again to its own result, one node more each time.
  const grows = nodeRewriter('exp_grows', [ops.exp], (node) => [pt.exp(pt.neg(node.inputs[0] as weft.pt.TensorVariable))]);
  await throwsExactly(
    t,
    () => new EquilibriumRewriter('grow', [grows]).apply(fg, new RewriteContext()),
    RewriteCycleError,
    'grow: rewrite exp_grows was applied 257 times, more than 256 (8 per node of the graph); the rewrites applied in the last passes (exp_grows) probably undo each other',
  );
});

t.test('MergeRewriter: equal nodes become one', async (t) => {
  const x = pt.scalar('x');
  const y = pt.scalar('y');
  const fg = graph([x, y], [pt.add(pt.exp(pt.exp(x)), pt.exp(pt.exp(x))), pt.mul(pt.exp(x), pt.exp(y))]);
  t.equal(countOps(fg, 'Elemwise{exp}'), 6);
  const { ctx, lines } = loggingContext();
  t.equal(new MergeRewriter().apply(fg, ctx), 3, 'exp(x) twice more, then exp(exp(x)) once: found in one pass');
  t.equal(countOps(fg, 'Elemwise{exp}'), 3, 'exp(x), exp(exp(x)), exp(y)');
  const [sum] = fg.outputs;
  t.equal(sum!.owner!.inputs[0], sum!.owner!.inputs[1], 'the add reads one variable twice');
  t.equal(lines.length, 3, 'one verbose line per merged node');
  t.match(lines[0]!, /^merge: Elemwise\{exp\}\(x\) into Elemwise\{exp\}\(x\)$/);
  t.equal(new MergeRewriter().apply(fg, ctx), 0, 'nothing left to merge');
  fg.checkIntegrity();
});

t.test('MergeRewriter: ops are compared by props', async (t) => {
  const x = pt.scalar('x');
  const fg = graph([x], [pt.add(new Double(2).call(x), new Double(2).call(x)), pt.add(new Double(3).call(x), new Lazy(3).call(x))]);
  t.equal(new MergeRewriter().apply(fg, new RewriteContext()), 1);
  t.equal(showGraph(fg), 'add(Double{factor=2}(x), Double{factor=2}(x)) ; add(Double{factor=3}(x), Lazy{factor=3}(x))');
  const [a, b] = fg.outputs.map((o) => o.owner!.inputs);
  t.equal(a![0], a![1], 'two instances with equal props merged');
  t.not(b![0], b![1], 'equal props but another class: not merged');
  const d = new Double(5);
  const fg2 = graph([x], [pt.add(d.call(x), new Double(6).call(x))]);
  t.equal(new MergeRewriter().apply(fg2, new RewriteContext()), 0, 'unequal props: not merged');
});

t.test('MergeRewriter: equal constants become one, constants of other types or values stay', async (t) => {
  const x = pt.scalar('x');
  const c1 = pt.constant(2, { dtype: 'float64' });
  const c2 = pt.constant(2, { dtype: 'float64' });
  const c3 = pt.constant(2, { dtype: 'int32' });
  const c4 = pt.constant(3, { dtype: 'float64' });
  const fg = graph([x], [pt.add(x, c1), pt.mul(x, c2), pt.sub(x, c3), pt.trueDiv(x, c4)]);
  t.equal(new MergeRewriter().apply(fg, new RewriteContext()), 1);
  const second = fg.outputs.map((o) => o.owner!.inputs[1]!);
  t.equal(second[0], second[1], 'the two float64 twos are one constant');
  t.not(second[2], second[0], 'an int32 two is another constant');
  t.equal(second[3], c4);
  t.notOk(fg.variables.has(c1) && fg.variables.has(c2), 'one of the twins left the graph');
  t.equal(show(fg.outputs[1]!), 'mul(x, 2)');
  fg.checkIntegrity();
});

t.test('MergeRewriter: multi-output nodes merge all their outputs', async (t) => {
  const x = pt.scalar('x');
  const [p0] = new Pair().call(x);
  const [, q1] = new Pair().call(x);
  const fg = graph([x], [pt.exp(p0!), pt.log(q1!)]);
  t.equal(new MergeRewriter().apply(fg, new RewriteContext()), 1);
  t.equal(showGraph(fg), 'exp(Pair.0(x)) ; log(Pair.1(x))');
  const [e, l] = fg.outputs;
  t.equal(e!.owner!.inputs[0]!.owner, l!.owner!.inputs[0]!.owner, 'both read outputs of one Pair node');
  t.equal(countOps(fg, 'Pair'), 1);
  fg.checkIntegrity();
});

t.test('MergeRewriter: when a feature vetoes the merges together, the others are made one by one', async (t) => {
  const x = pt.scalar('x');
  const fg = graph([x], [pt.add(pt.exp(x), pt.exp(x)), pt.mul(pt.tanh(x), pt.tanh(x))]);
  const veto = new Veto((g) => countOps(g, 'Elemwise{exp}') < 2, 'keep both exps');
  fg.attachFeature(veto);
  const { ctx, lines } = loggingContext();
  t.equal(new MergeRewriter().apply(fg, ctx), 1, 'the tanh nodes merged');
  t.equal(countOps(fg, 'Elemwise{exp}'), 2);
  t.equal(countOps(fg, 'Elemwise{tanh}'), 1);
  t.same(lines, [
    'merge of 2 duplicates vetoed: keep both exps',
    'merge of Elemwise{exp}(x) vetoed: keep both exps',
    'merge: Elemwise{tanh}(x) into Elemwise{tanh}(x)',
  ]);
  fg.checkIntegrity();
});

t.test('constant folding: nodes of constants are computed once', async (t) => {
  const x = pt.scalar('x');
  const two = pt.constant(2, { dtype: 'int8' });
  const three = pt.constant(3, { dtype: 'int8' });
  const fg = graph([x], [pt.add(x, pt.mul(pt.exp(pt.constant(0, { dtype: 'int8' })), pt.add(two, three)))]);
  const ctx = new RewriteContext();
  t.equal(in2out('fold', constantFolding).apply(fg, ctx), 3, 'exp(0), add(2, 3), mul(1, 5), and nothing with x');
  t.equal(showGraph(fg), 'add(x, 5)');
  const folded = fg.outputs[0]!.owner!.inputs[1]!;
  t.ok(folded instanceof weft.Constant);
  t.equal(String(folded.type), 'TensorType(float32, ())', 'the folded constant has the type of the output it replaces (exp of an int8 is float32)');
  t.equal(ctx.profile.byRewriter.get('constant_folding')!.applied, 3);
  t.equal(ctx.profile.byRewriter.get('constant_folding')!.calls, 4, 'offered every node');
});

t.test('constant folding: an op that declines (doConstantFolding false) is left to run time', async (t) => {
  const fg = graph([], [pt.exp(new Lazy(2).call(pt.constant(1))), pt.exp(new Double(2).call(pt.constant(1)))]);
  in2out('fold', constantFolding).apply(fg, new RewriteContext());
  t.equal(showGraph(fg), 'exp(Lazy{factor=2}(1)) ; 7.38905609893065');
  t.equal(Number(show(fg.outputs[1]!)), Math.exp(2));
});
