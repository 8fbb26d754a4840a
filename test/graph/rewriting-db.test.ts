// The rewrite database: registration with tags and positions, duplicate and unknown names,
// removal, queries (include, exclude, require; a rewrite's name is a tag), the order of a
// SequenceDB, EquilibriumDB and LocalGroupDB, databases nested in databases, and optdb itself.
import t from 'tap';
import { pt, throwsExactly, weft } from '../helpers.js';
import { graph, ops, showGraph } from './rewriting-fixtures.js';
import { RewriteContext, EquilibriumDB, LocalGroupDB, SequenceDB, type RewriteQuery, EquilibriumRewriter, opSub, canonicalizeDB, optdb, type GraphRewriter, type Rewriter } from '../../src/graph/rewriting/index.js';

/** A graph rewriter that changes nothing and writes its name down when it runs. */
function step(name: string, log: string[]): GraphRewriter {
  return {
    kind: 'graph',
    name,
    apply: () => {
      log.push(name);
      return 0;
    },
  };
}

/** Runs what `db` selects for `q` on a small graph; returns the names of the steps that ran. */
function runQuery(db: SequenceDB, q: RewriteQuery, log: string[]): string[] {
  log.length = 0;
  const x = pt.scalar('x');
  const fg = graph([x], [pt.exp(x)]);
  for (const r of db.query(q)) (r as GraphRewriter).apply(fg, new RewriteContext());
  return [...log];
}

function sample(log: string[]): SequenceDB {
  const db = new SequenceDB('pipeline');
  db.register('late', step('late', log), { tags: ['fast', 'cheap'], position: 10 });
  db.register('early', step('early', log), { tags: ['fast'], position: -1 });
  db.register('middle', step('middle', log), { tags: ['slow', 'cheap'], position: 2.5 });
  db.register('unpositioned', step('unpositioned', log), { tags: ['slow'] });
  return db;
}

t.test('register: names, tags and positions; has and entries', async (t) => {
  const log: string[] = [];
  const db = sample(log);
  t.ok(db.has('early'));
  t.notOk(db.has('nothing'));
  t.same(db.entries(), [
    { name: 'late', tags: ['fast', 'cheap'], position: 10 },
    { name: 'early', tags: ['fast'], position: -1 },
    { name: 'middle', tags: ['slow', 'cheap'], position: 2.5 },
    { name: 'unpositioned', tags: ['slow'], position: 0 },
  ]);
  await throwsExactly(t, () => db.register('early', step('again', log)), Error, "pipeline: a rewrite named 'early' is already registered");
  db.remove('early');
  t.notOk(db.has('early'));
  await throwsExactly(t, () => db.remove('early'), Error, "pipeline: no rewrite named 'early' is registered");
  db.register('early', step('early again', log), { tags: ['fast'] });
  t.same(runQuery(db, { include: ['fast'] }, log), ['early again', 'late'], 'a removed name can be registered again');
});

t.test('query: include, exclude and require; a name counts as a tag', async (t) => {
  const log: string[] = [];
  const db = sample(log);
  t.same(runQuery(db, { include: ['fast'] }, log), ['early', 'late'], 'in position order');
  t.same(runQuery(db, { include: ['fast', 'slow'] }, log), ['early', 'unpositioned', 'middle', 'late'], 'any included tag selects');
  t.same(runQuery(db, { include: ['fast', 'slow'], exclude: ['cheap'] }, log), ['early', 'unpositioned']);
  t.same(runQuery(db, { include: ['fast', 'slow'], require: ['cheap'] }, log), ['middle', 'late']);
  t.same(runQuery(db, { include: ['fast', 'slow'], require: ['cheap', 'slow'] }, log), ['middle'], 'every required tag');
  t.same(runQuery(db, { include: ['middle'] }, log), ['middle'], 'include by name');
  t.same(runQuery(db, { include: ['slow'], exclude: ['middle'] }, log), ['unpositioned'], 'exclude by name');
  t.same(runQuery(db, { include: ['nothing'] }, log), []);
  t.same(runQuery(db, { include: [] }, log), [], 'nothing included, nothing selected');
});

t.test('SequenceDB: node rewriters run as one in2out walk each, between the graph rewriters', async (t) => {
  const log: string[] = [];
  const db = new SequenceDB('seq');
  db.register('exp_to_log', opSub(ops.exp, ops.log, 'exp_to_log'), { tags: ['t'], position: 1 });
  db.register('log_to_tanh', opSub(ops.log, ops.tanh, 'log_to_tanh'), { tags: ['t'], position: 2 });
  db.register('before', step('before', log), { tags: ['t'], position: 0 });
  const [run] = db.query({ include: ['t'] });
  t.equal(run!.kind, 'graph');
  t.equal(run!.name, 'seq');
  t.equal((run as GraphRewriter).composite, true, 'a stage of the profile');
  const x = pt.scalar('x');
  const fg = graph([x], [pt.exp(x)]);
  const ctx = new RewriteContext();
  t.equal((run as GraphRewriter).apply(fg, ctx), 2);
  t.equal(showGraph(fg), 'tanh(x)', 'exp -> log in the first walk, log -> tanh in the second');
  t.same(log, ['before']);
  t.equal(ctx.profile.byRewriter.get('before')!.calls, 1, 'graph rewriters are recorded by the sequence');
});

t.test('EquilibriumDB and LocalGroupDB: what a query of them gives', async (t) => {
  const eqdb = new EquilibriumDB('eqdb', { maxUseRatio: 3 });
  eqdb.register('a', opSub(ops.exp, ops.log, 'a'), { tags: ['on'] });
  eqdb.register('b', opSub(ops.tanh, ops.neg, 'b'), { tags: ['off'] });
  const [eq] = eqdb.query({ include: ['on'] });
  t.ok(eq instanceof EquilibriumRewriter);
  t.equal((eq as EquilibriumRewriter).maxUseRatio, 3, 'the options reach the rewriter');
  t.same((eq as EquilibriumRewriter).rewriters.map((r) => r.name), ['a']);
  t.equal(eq!.name, 'eqdb');

  const group = new LocalGroupDB('group');
  group.register('a', opSub(ops.exp, ops.log, 'a'), { tags: ['x'] });
  group.register('b', opSub(ops.log, ops.exp, 'b'), { tags: ['x', 'y'] });
  t.same(group.query({ include: ['x'], exclude: ['y'] }).map((r: Rewriter) => r.name), ['a']);
  t.same(group.query({ include: ['x'] }).map((r) => r.kind), ['node', 'node']);
});

t.test('nested databases: the query selects the entry, then inside it', async (t) => {
  const log: string[] = [];
  const outer = new SequenceDB('outer');
  const inner = new SequenceDB('inner');
  inner.register('inner_fast', step('inner_fast', log), { tags: ['fast'], position: 1 });
  inner.register('inner_slow', step('inner_slow', log), { tags: ['slow'], position: 0 });
  const eq = new EquilibriumDB('inner_eq');
  eq.register('neg_to_tanh', opSub(ops.neg, ops.tanh, 'neg_to_tanh'), { tags: ['fast'] });
  outer.register('first', step('first', log), { tags: ['fast'], position: 0 });
  outer.register('inner', inner, { tags: ['fast', 'slow'], position: 1 });
  outer.register('eq', eq, { tags: ['fast'], position: 2 });
  outer.register('last', step('last', log), { tags: ['fast'], position: 3 });
  t.same(runQuery(outer, { include: ['fast'] }, log), ['first', 'inner_fast', 'last']);
  t.same(runQuery(outer, { include: ['fast', 'slow'] }, log), ['first', 'inner_slow', 'inner_fast', 'last']);
  t.same(runQuery(outer, { include: ['fast'], exclude: ['inner'] }, log), ['first', 'last'], 'excluding a database by name');
  t.same(runQuery(outer, { include: ['slow'] }, log), ['inner_slow'], 'the outer entry matches, then the inner ones');
  t.same(runQuery(outer, { include: ['inner_fast'] }, log), [], "an inner name alone does not select the outer entry");

  const x = pt.scalar('x');
  const fg = graph([x], [pt.neg(pt.neg(x))]);
  const ctx = new RewriteContext();
  for (const r of outer.query({ include: ['fast'] })) (r as GraphRewriter).apply(fg, ctx);
  t.equal(showGraph(fg), 'tanh(tanh(x))', 'the nested equilibrium ran');
  t.equal(ctx.profile.byRewriter.get('neg_to_tanh')!.applied, 2);
  t.same([...ctx.profile.byStage.keys()].sort(), ['inner', 'inner_eq'], 'nested databases are stages');
});

t.test('optdb: the standard pipeline, in order, with its tags', async (t) => {
  // Other layers add entries of their own (e.g. OpFromGraph inlining); the standard ones are these.
  const standard = ['merge1', 'canonicalize', 'merge1.2', 'stabilize', 'specialize', 'uncanonicalize', 'merge2', 'elemwise_fusion', 'inplace', 'merge3'];
  const entries = optdb.entries().filter((e) => standard.includes(e.name));
  t.same(entries.sort((a, b) => a.position - b.position).map((e) => e.name), standard, 'all there, in position order');
  t.same(entries.filter((e) => e.tags.includes('fast_compile')).map((e) => e.name), ['merge1', 'canonicalize', 'merge1.2'], 'FAST_COMPILE: merge and canonicalize');
  t.ok(entries.every((e) => e.tags.includes('fast_run')), 'FAST_RUN: all of it');
  t.ok(canonicalizeDB.has('constant_folding'));
  t.ok(canonicalizeDB.entries().every((e) => e.tags.includes('fast_run') && e.tags.includes('fast_compile')));
});
