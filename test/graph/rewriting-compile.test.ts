// Rewriting as compile() does it: the modes (FAST_RUN, FAST_COMPILE, weft.Mode with including,
// excluding and requiring), a user's rewrite registered with registerCanonicalize and a user's
// pass registered in optdb, the verbose log, and the profile (per rewriter, per node, per op, and
// the Chrome trace).
import t from 'tap';
import { near, pt, throwsExactly, weft } from '../helpers.js';
import { Double, opNames } from './rewriting-fixtures.js';
import { canonicalizeDB, optdb, registerCanonicalize, nodeRewriter, in2out } from '../../src/graph/rewriting/index.js';

const xs = [0.5, -1, 2];
const ys = [3, 0.25, -2];
const ws = [-0.5, 1.5, 0];

/** z = exp(x) * y + tanh(w), computed in plain JS. */
const fusedExpected = xs.map((x, i) => Math.exp(x) * ys[i]! + Math.tanh(ws[i]!));

function fusedGraph(): { inputs: weft.pt.TensorVariable[]; out: weft.pt.TensorVariable } {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const w = pt.vector('w');
  return { inputs: [x, y, w], out: pt.add(pt.mul(pt.exp(x), y), pt.tanh(w)) };
}

async function compiled(mode: weft.CompileOptions['mode']): Promise<weft.WeftFunction<weft.NdArray>> {
  const { inputs, out } = fusedGraph();
  return weft.compile(inputs, out, { mode, workers: 0 });
}

/** Double(a)(Double(b)(x)) -> Double(a * b)(x): a user's rewrite of a user's op. */
const doubleDouble = nodeRewriter('double_double', [Double], (node) => {
  const inner = node.inputs[0]!.owner;
  if (!(inner?.op instanceof Double)) return false;
  return [new Double((node.op as Double).factor * inner.op.factor).call(inner.inputs[0]!)];
});
registerCanonicalize(doubleDouble, 'user');

/** A user's pass of its own in the pipeline: Double{factor=6}(x) -> x + x + ... (six times), for FAST_RUN only. */
optdb.register(
  'unroll_six',
  in2out(
    'unroll_six',
    nodeRewriter('unroll_six', [new Double(6)], (node) => {
      const x = node.inputs[0] as weft.pt.TensorVariable;
      return [pt.add(x, x, x, x, x, x)];
    }),
  ),
  { tags: ['fast_run', 'mine'], position: 2.5 },
);

t.test('FAST_RUN fuses exp(x) * y + tanh(w) into one Composite; FAST_COMPILE does not', async (t) => {
  const fast = await compiled('FAST_RUN');
  t.same(opNames(fast), ['Composite{add(mul(exp(i0),i1),tanh(i2))}']);
  near(t, await fast(xs, ys, ws), fusedExpected);
  const plain = await compiled('FAST_COMPILE');
  t.same(opNames(plain), ['Elemwise{exp}', 'Elemwise{mul}', 'Elemwise{tanh}', 'Elemwise{add}']);
  near(t, await plain(xs, ys, ws), fusedExpected);
  t.equal(fast.mode, weft.FAST_RUN);
  t.equal(plain.mode, weft.FAST_COMPILE);
  t.equal((await compiled(undefined)).mode, weft.FAST_RUN, 'FAST_RUN is the default');
});

t.test('FAST_COMPILE applies merge and canonicalize only', async (t) => {
  const x = pt.vector('x');
  // log(1 + x * 1) + exp(x) + exp(x): canonicalize drops the * 1, merge makes one exp,
  // stabilize (FAST_RUN only) would turn log(1 + x) into log1p(x).
  const out = pt.add(pt.log(pt.add(1, pt.mul(x, 1))), pt.exp(x), pt.exp(x));
  const fc = await weft.compile([x], out, { mode: 'FAST_COMPILE', workers: 0 });
  const names = opNames(fc);
  t.notOk(names.includes('Elemwise{mul}'), 'x * 1 is gone');
  t.equal(names.filter((n) => n === 'Elemwise{exp}').length, 1, 'one exp');
  t.ok(names.includes('Elemwise{log}'), 'log(1 + x) is not stabilized');
  t.notOk(names.some((n) => n.startsWith('Composite')), 'nothing fused');
  const fr = await weft.compile([x], out, { mode: 'FAST_RUN', workers: 0 });
  t.match(opNames(fr).join(' '), /log1p/, 'FAST_RUN stabilizes');
  const values = [0.5, 0.25, 2];
  const expected = values.map((v) => Math.log(1 + v) + 2 * Math.exp(v));
  near(t, await fc(values), expected);
  near(t, await fr(values), expected);
});

t.test('weft.Mode: including, excluding and requiring tags', async (t) => {
  const unfused = await compiled(new weft.Mode({ excluding: ['fusion'] }));
  t.same(
    opNames(unfused).map((n) => n.replace(',inplace', '')),
    ['Elemwise{exp}', 'Elemwise{mul}', 'Elemwise{tanh}', 'Elemwise{add}'],
    "excluding: ['fusion'] keeps the nodes apart (FAST_RUN may still make them inplace)",
  );
  const plain = await compiled(new weft.Mode({ excluding: ['fusion', 'inplace'] }));
  t.same(opNames(plain), ['Elemwise{exp}', 'Elemwise{mul}', 'Elemwise{tanh}', 'Elemwise{add}'], 'and without inplace, as they were written');
  near(t, await unfused(xs, ys, ws), fusedExpected);
  const fusedFastCompile = await compiled(new weft.Mode({ base: 'FAST_COMPILE', including: ['fusion'] }));
  t.same(opNames(fusedFastCompile), ['Composite{add(mul(exp(i0),i1),tanh(i2))}'], 'FAST_COMPILE including fusion');
  near(t, await fusedFastCompile(xs, ys, ws), fusedExpected);

  const m = weft.FAST_RUN.excluding('fusion', 'inplace').including('mine');
  t.same(m.query, { include: ['fast_run', 'mine'], exclude: ['fusion', 'inplace'], require: [] });
  t.same(new weft.Mode({ base: 'FAST_COMPILE', requiring: ['merge'] }).query, { include: ['fast_compile'], exclude: [], require: ['merge'] });
  t.equal(String(new weft.Mode({ name: 'mine' })), 'Mode(mine)');
  t.equal(String(weft.FAST_COMPILE), 'Mode(FAST_COMPILE)');

  const x = pt.vector('x');
  const out = pt.add(pt.mul(x, 1), pt.exp(x), pt.exp(x));
  const mergeOnly = await weft.compile([x], out, { mode: new weft.Mode({ requiring: ['merge'] }), workers: 0 });
  const names = opNames(mergeOnly);
  t.equal(names.filter((n) => n === 'Elemwise{exp}').length, 1, 'merged');
  t.ok(names.includes('Elemwise{mul}'), 'requiring merge: canonicalize did not run');
  near(t, await mergeOnly([1, 2]), [1 + 2 * Math.exp(1), 2 + 2 * Math.exp(2)]);
});

t.test('an unknown mode is refused', async (t) => {
  const { inputs, out } = fusedGraph();
  await throwsExactly(
    t,
    () => weft.compile(inputs, out, { mode: 'FAST' as never }),
    TypeError,
    `compile (the function): unknown mode "FAST" (expected 'FAST_RUN', 'FAST_COMPILE', 'DebugMode', 'NanGuardMode' or a weft.Mode)`,
  );
});

t.test("a user's rewrite registered with registerCanonicalize is applied by compile", async (t) => {
  t.ok(canonicalizeDB.has('double_double'));
  t.same(canonicalizeDB.entries().find((e) => e.name === 'double_double')!.tags, ['fast_run', 'fast_compile', 'user']);
  const x = pt.vector('x');
  const out = new Double(3).call(new Double(2).call(x)) as weft.pt.TensorVariable;
  for (const mode of ['FAST_COMPILE', new weft.Mode({ excluding: ['mine'] })] as const) {
    const fn = await weft.compile([x], out, { mode, workers: 0 });
    t.same(opNames(fn), ['Double{factor=6}'], `${String(mode)}: two Doubles became one`);
    near(t, await fn([1, -2, 0.5]), [6, -12, 3]);
  }
  for (const excluding of ['double_double', 'user']) {
    const fn = await weft.compile([x], out, { mode: new weft.Mode({ excluding: [excluding] }), workers: 0 });
    t.same(opNames(fn), ['Double{factor=2}', 'Double{factor=3}'], `excluding '${excluding}' leaves them apart`);
    near(t, await fn([1, -2, 0.5]), [6, -12, 3]);
  }
});

t.test("a user's pass registered in optdb runs where its tags select it", async (t) => {
  const x = pt.vector('x');
  const out = new Double(3).call(new Double(2).call(x)) as weft.pt.TensorVariable;
  const fr = await weft.compile([x], out, { mode: new weft.Mode({ excluding: ['fusion', 'inplace'] }), workers: 0 });
  t.same(opNames(fr), ['Elemwise{add}'], 'canonicalize made Double{factor=6}, then the FAST_RUN pass unrolled it');
  near(t, await fr([1, -2, 0.5]), [6, -12, 3]);
  const fc = await weft.compile([x], out, { mode: new weft.Mode({ base: 'FAST_COMPILE', including: ['mine'] }), workers: 0 });
  t.same(opNames(fc), ['Elemwise{add}'], 'FAST_COMPILE including its tag');
  const without = await weft.compile([x], out, { mode: new weft.Mode({ excluding: ['unroll_six'] }), workers: 0 });
  t.same(opNames(without), ['Double{factor=6}'], 'excluded by name');
});

t.test('verbose: the logger hears each rewrite applied, with the graph before and after', async (t) => {
  const lines: string[] = [];
  const x = pt.vector('x');
  const out = new Double(3).call(new Double(2).call(x)) as weft.pt.TensorVariable;
  const mode = new weft.Mode({ base: 'FAST_COMPILE', verbose: true, logger: (l) => lines.push(l) });
  t.equal(mode.verbose, true);
  await weft.compile([x], out, { mode });
  t.same(lines, [
    ['rewrite double_double:', '    Double{factor=3}', '     |Double{factor=2}', '       |x', '  ->', '    Double{factor=6}', '     |x'].join('\n'),
  ]);
  const quiet: string[] = [];
  await weft.compile([x], out, { mode: new weft.Mode({ base: 'FAST_COMPILE', logger: (l) => quiet.push(l) }) });
  t.same(quiet, [], 'not verbose: nothing logged');

  lines.length = 0;
  const y = pt.vector('y');
  const deep = pt.log(pt.add(pt.exp(pt.exp(pt.exp(y))), 1));
  await weft.compile([y], deep, { mode: new weft.Mode({ verbose: true, logger: (l) => lines.push(l), excluding: ['fusion'] }) });
  const log1p = lines.find((l) => l.startsWith('rewrite log1p:'));
  t.equal(
    log1p,
    [
      'rewrite log1p:',
      '    Elemwise{log}',
      '     |Elemwise{add}',
      '       |Elemwise{exp}',
      '       | |...',
      '       |TensorConstant{[1]}',
      '  ->',
      '    Elemwise{log1p}',
      '     |Elemwise{exp}',
      '       |Elemwise{exp}',
      '         |...',
    ].join('\n'),
    'deep inputs are cut after three levels',
  );
});

t.test('profile: time, calls and applications per rewriter; stages; compile time', async (t) => {
  const x = pt.vector('x');
  const out = pt.add(new Double(3).call(new Double(2).call(x)) as weft.pt.TensorVariable, pt.exp(x), pt.exp(x));
  const fn = await weft.compile([x], out, { profile: true, mode: new weft.Mode({ excluding: ['mine'] }), workers: 0 });
  const p = fn.profile!;
  t.ok(p instanceof weft.FunctionProfile);
  t.ok(p.compileTime > 0);
  t.ok(p.rewrites.total > 0 && p.rewrites.total <= p.compileTime);
  const dd = p.rewrites.byRewriter.get('double_double')!;
  t.equal(dd.applied, 1);
  t.ok(dd.calls >= 2, 'asked about each Double node');
  t.ok(dd.time >= 0);
  const merge = p.rewrites.byRewriter.get('merge1')!;
  t.same({ calls: merge.calls, applied: merge.applied }, { calls: 1, applied: 1 }, 'merge1 ran once and merged the two exps');
  const canon = p.rewrites.byStage.get('canonicalize')!;
  t.equal(canon.calls, 1);
  t.ok(canon.time >= dd.time, 'a stage includes the time of the rewriters it ran');
  t.ok(p.rewrites.byStage.has('optdb'));
  t.notOk(p.rewrites.byRewriter.has('canonicalize'), 'stages and rewriters do not overlap');
  const text = p.rewrites.toString();
  t.match(text, /^rewrites: [\d.]+ ms in total\n/);
  t.match(text, /\n +[\d.]+ +\d+ +1  double_double\n/);
  t.equal(fn.profile, p);
  const plain = await weft.compile([x], out, { workers: 0 });
  t.equal(plain.profile, undefined, 'no profile unless asked');
});

t.test('profile: per-node and per-op times over calls, and a Chrome trace with one event per node per call', async (t) => {
  const { inputs, out } = fusedGraph();
  const fn = await weft.compile(inputs, out, { profile: true, mode: new weft.Mode({ excluding: ['fusion', 'inplace'] }), workers: 0 });
  const p = fn.profile!;
  const nodes = fn.fgraph.toposort();
  t.equal(nodes.length, 4);
  for (let k = 0; k < 3; k++) near(t, await fn(xs, ys, ws), fusedExpected);
  t.equal(p.calls, 3);
  t.ok(p.callTime > 0);
  t.equal(p.nodes.size, 4, 'every node timed');
  for (const n of nodes) {
    const s = p.nodes.get(n)!;
    t.equal(s.calls, 3, `${n.op}: once per call`);
    t.ok(s.time >= 0);
  }
  const byOp = p.byOp();
  t.same(byOp.map((r) => r.op).sort(), ['Elemwise{add}', 'Elemwise{exp}', 'Elemwise{mul}', 'Elemwise{tanh}']);
  t.ok(byOp.every((r) => r.calls === 3 && r.nodes === 1));
  t.ok(byOp.every((r, i) => i === 0 || byOp[i - 1]!.time >= r.time), 'slowest op first');
  t.match(p.toString(), /per op:/);

  const trace = JSON.parse(p.toChromeTrace()) as { traceEvents: Array<Record<string, unknown>>; displayTimeUnit: string };
  t.equal(trace.displayTimeUnit, 'ms');
  const complete = trace.traceEvents.filter((e) => e.ph === 'X');
  t.equal(complete.length, 12, 'four nodes, three calls');
  for (const e of complete) {
    t.type(e.name, 'string');
    t.ok(Number.isInteger(e.ts) && (e.ts as number) >= 0, 'ts in whole microseconds');
    t.ok(Number.isInteger(e.dur) && (e.dur as number) >= 1, 'dur in whole microseconds');
    t.equal(e.pid, 1);
    t.equal(e.tid, 0, 'the calling thread');
  }
  for (const n of nodes) t.equal(complete.filter((e) => e.name === String(n.op)).length, 3, `${n.op}: one event per call`);
  const calls = complete.map((e) => (e.args as { call: number }).call);
  t.same([...new Set(calls)].sort(), [0, 1, 2]);
  const meta = trace.traceEvents.filter((e) => e.ph === 'M');
  t.same(meta, [{ name: 'thread_name', ph: 'M', pid: 1, tid: 0, args: { name: 'calling thread' } }]);
});
