// The destroy handler on small graphs of custom ops that declare destroyMap: every illegal
// overwrite refused with its message, the legal ones accepted and computed right (by the
// reference executor and by plans on 0 and 2 workers), vetoed replacements undone, and the
// orderings that make a destroyer run after the other readers of what it overwrites.
import t, { type Test } from 'tap';
import { Apply } from '../../src/graph/apply.js';
import { nodeRewriter, RewriteContext, walkOnce } from '../../src/graph/rewriting/index.js';
import type { TensorView } from '../../src/kernels/view.js';
import { makeNdArray } from '../../src/tensor/core/ndarray.js';
import { planHazards } from '../../src/scheduler/plan-check.js';
import { PlannedExecutor } from '../../src/scheduler/planned-executor.js';
import { near, pt, throwsExactly, weft } from '../helpers.js';
import { comparable, snapshot } from './fixtures.js';

type TV = weft.pt.TensorVariable;
type NdArray = weft.NdArray;

/** Calls `f` with the data offset of every element of `x` (any layout), in C order. */
function forEachOffset(x: NdArray, f: (offset: number) => void): void {
  const nd = x.shape.length;
  const n = x.shape.reduce((a, b) => a * b, 1);
  const idx = new Array<number>(nd).fill(0);
  for (let k = 0; k < n; k++) {
    let off = x.offset;
    for (let a = 0; a < nd; a++) off += idx[a]! * x.stride[a]!;
    f(off);
    for (let a = nd - 1; a >= 0; a--) {
      idx[a] = idx[a]! + 1;
      if (idx[a]! < x.shape[a]!) break;
      idx[a] = 0;
    }
  }
}

/** x + 1, written into x (it declares so). No worker kernel: plans run it on the calling thread. */
class AddOneInplace extends weft.Op {
  override readonly destroyMap = { 0: [0] };

  override makeNode(x: unknown): Apply {
    const v = pt.asTensorVariable(x as TV);
    return new Apply(this, [v], [v.type.makeVariable()]);
  }

  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }

  override perform(_node: Apply, [x]: readonly NdArray[]): NdArray[] {
    forEachOffset(x!, (o) => (x!.data[o] = x!.data[o]! + 1));
    return [x!];
  }

  override toString(): string {
    return 'AddOneInplace';
  }
}

/** x + y for two values of one shape, written into x. */
class AddIntoFirst extends weft.Op {
  override readonly destroyMap = { 0: [0] };

  override makeNode(x: unknown, y: unknown): Apply {
    const [a, b] = [pt.asTensorVariable(x as TV), pt.asTensorVariable(y as TV)];
    return new Apply(this, [a, b], [a.type.makeVariable()]);
  }

  override toString(): string {
    return 'AddIntoFirst';
  }
}

/** Two outputs, each written over one of its two inputs. */
class DestroyBoth extends weft.Op {
  override readonly destroyMap = { 0: [0], 1: [1] };

  override makeNode(x: unknown, y: unknown): Apply {
    const [a, b] = [pt.asTensorVariable(x as TV), pt.asTensorVariable(y as TV)];
    return new Apply(this, [a, b], [a.type.makeVariable(), b.type.makeVariable()]);
  }

  override toString(): string {
    return 'DestroyBoth';
  }
}

const addOne = (x: TV): TV => new AddOneInplace().call(x) as TV;

function named<T extends TV>(v: T, name: string): T {
  v.name = name;
  return v;
}

/** A graph over `inputs` (not copied) with a destroy handler that may overwrite `destroyable`. */
function guarded(inputs: TV[], outputs: TV[], destroyable: TV[] = []): weft.FunctionGraph {
  const fg = new weft.FunctionGraph(inputs, outputs, { clone: false });
  fg.attachFeature(new weft.DestroyHandler({ destroyable }));
  return fg;
}

async function refused(t: Test, inputs: TV[], outputs: TV[], message: string, destroyable: TV[] = []): Promise<void> {
  const fg = new weft.FunctionGraph(inputs, outputs, { clone: false });
  const handler = new weft.DestroyHandler({ destroyable });
  await throwsExactly(t, () => fg.attachFeature(handler), weft.InconsistencyError, message);
  t.same(fg.features, [], 'the refusing handler is not attached');
}

t.test('illegal overwrites are refused, each with its message', async (t) => {
  const a = pt.vector('a');
  const e = named(pt.exp(a), 'e');

  // A reader that depends on the overwrite's result.
  const d = addOne(e);
  await refused(
    t,
    [a],
    [pt.add(e, d)],
    'AddOneInplace(e) overwrites its input, but Elemwise{add}(e, AddOneInplace.out) reads that value after it ' +
      "(it depends on the overwrite's result)",
  );
  const q = named(pt.exp(pt.matrix('qq')), 'q');
  await refused(
    t,
    [q.owner!.inputs[0] as TV],
    [pt.mul(pt.sin(addOne(q)), q.T)],
    'AddOneInplace(q) overwrites its input, but Elemwise{mul}(Elemwise{sin}.out, DimShuffle{1,0}.out) reads that value after it ' +
      "(it depends on the overwrite's result)",
  );

  // Inputs, constants, shared variables.
  await refused(t, [a], [addOne(a)], 'AddOneInplace(a) would overwrite a, an input of the graph that is not mutable (give it as In(x, { mutable: true }) to allow this)');
  await refused(
    t,
    [a],
    [addOne(a.get(weft.slice(1, null)))],
    'AddOneInplace(Subtensor{start:}.out) would overwrite Subtensor{start:}.out, a view of a, an input of the graph that is not mutable ' +
      '(give it as In(x, { mutable: true }) to allow this)',
  );
  const k = pt.constant([1, 2, 3], { name: 'k' });
  await refused(t, [a], [pt.add(a, addOne(k))], 'AddOneInplace(k) would overwrite k, which is a constant');
  await refused(
    t,
    [a],
    [pt.add(a, addOne(k.dimshuffle('x', 0)))],
    'AddOneInplace(DimShuffle{x,0}.out) would overwrite DimShuffle{x,0}.out, a view of k, which is a constant',
  );
  const s = weft.shared([1, 2, 3], { name: 's' });
  await refused(t, [a, s], [pt.add(a, addOne(s))], 'AddOneInplace(s) would overwrite s, the value of the shared variable s, which this function does not update');

  // Two destroyers of one value, or of two views of it.
  const m = named(pt.exp(pt.matrix('mm')), 'm');
  const mIn = m.owner!.inputs[0] as TV;
  const d1 = addOne(m);
  const d2 = addOne(m);
  await refused(t, [mIn], [pt.add(d1, d2)], 'AddOneInplace(m) and AddOneInplace(m) would both overwrite m');
  await refused(t, [mIn], [pt.add(addOne(m.T), addOne(m.get(1)))], 'AddOneInplace(Subtensor{i}.out) and AddOneInplace(DimShuffle{1,0}.out) would both overwrite m');
  await refused(t, [mIn], [(new DestroyBoth().call(m, m.T) as unknown as TV[])[0]!], 'DestroyBoth(m, DimShuffle{1,0}.out) would overwrite m twice, through two of its inputs');
  await refused(
    t,
    [mIn],
    [new AddIntoFirst().call(m, m.T) as TV],
    'AddIntoFirst(m, DimShuffle{1,0}.out) would overwrite m (input 0) while it also reads m through input 1 (DimShuffle{1,0}.out)',
  );

  // A broadcast view (stride 0: its elements share memory), or a view of one.
  const b = named(pt.exp(pt.vector('bb')), 'b');
  await refused(
    t,
    [b.owner!.inputs[0] as TV],
    [addOne(pt.broadcastTo(b, [4, 3]).get(weft.slice(1, null)))],
    'AddOneInplace(Subtensor{start:}.out) would overwrite Subtensor{start:}.out, a view of b, through a broadcast view whose elements share memory',
  );

  // A value the graph also returns, itself or as a view.
  await refused(t, [mIn], [addOne(m), m], 'AddOneInplace(m) would overwrite m, whose value the graph also returns (as m)');
  await refused(t, [mIn], [m.T, pt.sum(addOne(m))], 'AddOneInplace(m) would overwrite m, whose value the graph also returns (as DimShuffle{1,0}.out)');
});

t.test('legal overwrites are accepted and compute the right values', async (t) => {
  const a = pt.vector('a');
  const raw = new Float64Array([0, 1, -2]);
  const av = makeNdArray(raw, [3]);
  const ex = Array.from(raw, Math.exp);

  // Chained overwrites: each overwrites a different value.
  const chained = addOne(addOne(pt.exp(a)));
  const fg = guarded([a], [chained]);
  t.equal(fg.toposort().length, 3);
  const [got] = new weft.ReferenceExecutor(fg).run([av]) as NdArray[];
  near(t, got!, ex.map((v) => v + 2));
  t.same([...raw], [0, 1, -2], 'the input is untouched');

  // A mutable input may be overwritten; the caller's array still is not.
  const b = pt.vector('b');
  const fgMutable = guarded([b], [addOne(b)], [b]);
  const [one] = new weft.ReferenceExecutor(fgMutable).run([av]) as NdArray[];
  near(t, one!, [1, 2, -1]);
  t.same([...raw], [0, 1, -2], 'the reference executor overwrote a copy');
  for (const workers of [0, 2]) {
    const fn = await weft.compile([weft.In(b, { mutable: true })], addOne(b), { workers });
    t.ok(fn.fgraph.toposort().some((n) => String(n.op) === 'AddOneInplace'), 'compiled with the overwrite');
    near(t, await fn(av), [1, 2, -1], 1e-12, `workers ${workers}`);
    near(t, await fn(av), [1, 2, -1], 1e-12, `workers ${workers}, again`);
    t.same([...raw], [0, 1, -2], `workers ${workers}: the caller's array is untouched`);
  }

  // A view of the destroyed value, read before the destroyer.
  const e = named(pt.exp(a), 'e');
  const readView = pt.sum(e.get(weft.slice(1, null)));
  const d = addOne(e);
  const fgView = guarded([a], [readView, d]);
  const order = fgView.toposort();
  t.ok(order.indexOf(readView.owner!) < order.indexOf(d.owner!), 'the reader of the view runs first');
  const [r, dv] = new weft.ReferenceExecutor(fgView).run([av]) as NdArray[];
  near(t, r!, ex[1]! + ex[2]!);
  near(t, dv!, ex.map((v) => v + 1));
});

t.test('replace is vetoed and undone when it would make an illegal graph', async (t) => {
  const a = pt.vector('a');
  const e = named(pt.exp(a), 'e');
  const s = pt.sin(e);
  const out = pt.add(e, s);
  const fg = guarded([a], [out]);
  const before = comparable(snapshot(fg));
  await throwsExactly(
    t,
    () => fg.replace(s, pt.sin(addOne(e))),
    weft.InconsistencyError,
    'AddOneInplace(e) overwrites its input, but Elemwise{add}(e, Elemwise{sin}.out) reads that value after it ' +
      "(it depends on the overwrite's result)",
  );
  t.same(comparable(snapshot(fg)), before, 'the graph is as it was');
  fg.checkIntegrity();
  await throwsExactly(
    t,
    () => fg.replace(e, addOne(a)),
    weft.InconsistencyError,
    'AddOneInplace(a) would overwrite a, an input of the graph that is not mutable (give it as In(x, { mutable: true }) to allow this)',
  );
  t.same(comparable(snapshot(fg)), before, 'the graph is as it was, again');
  t.same([...fg.orderings()], [], 'no orderings remain');

  // A legal replacement goes through and brings its ordering.
  const c = pt.cos(e);
  const fg2 = guarded([a], [pt.add(c, s)]);
  fg2.replace(c, addOne(e));
  const destroyer = fg2.outputs[0]!.owner!.inputs[0]!.owner!;
  t.equal(String(destroyer.op), 'AddOneInplace');
  t.same(fg2.orderings().get(destroyer), [s.owner], 'sin(e) must run before the overwrite of e');
  const [v] = new weft.ReferenceExecutor(fg2).run([makeNdArray(new Float64Array([0.5]), [1])]) as NdArray[];
  near(t, v!, [Math.exp(0.5) + 1 + Math.sin(Math.exp(0.5))]);

  // The rewriting framework treats a veto as "no change".
  const fg3 = guarded([a], [out]);
  const veto = nodeRewriter('overwrite_e', undefined, (node) => (node === s.owner ? [pt.sin(addOne(e))] : false));
  const ctx = new RewriteContext();
  t.equal(walkOnce(fg3, [veto], 'in2out', ctx), 0, 'the rewrite counts as not applied');
  fg3.checkIntegrity();
});

t.test('orderings: the reader of x always runs before the node that overwrites x', async (t) => {
  const N = 1 << 18;
  const a = pt.vector('a');
  const x = named(pt.exp(a), 'x');
  // The overwrite comes first among the output's operands, so data order alone would run it first.
  const overwrite = pt.sum(addOne(x));
  const read = pt.sum(pt.sin(x));
  const out = pt.add(overwrite, read);
  const fg = guarded([a], [out]);
  const order = fg.toposort();
  const reader = read.owner!.inputs[0]!.owner!;
  const destroyer = overwrite.owner!.inputs[0]!.owner!;
  t.ok(order.indexOf(reader) < order.indexOf(destroyer), 'toposort: sin(x) before AddOneInplace(x)');
  t.same(fg.orderings().get(destroyer), [reader]);
  const plain = weft.ioToposort(fg.inputs, fg.outputs);
  t.ok(plain.indexOf(destroyer) < plain.indexOf(reader), 'without the orderings the overwrite would come first');

  const raw = new Float64Array(N);
  for (let i = 0; i < N; i++) raw[i] = Math.sin(i) * 0.5;
  const av = makeNdArray(raw, [N]);
  let want = 0;
  for (let i = 0; i < N; i++) want += Math.exp(raw[i]!) + 1 + Math.sin(Math.exp(raw[i]!));
  const [ref] = new weft.ReferenceExecutor(fg).run([av]) as NdArray[];
  near(t, ref!, want, 1e-9, 'reference');

  // Through plans: the same order, as task edges, on 0 and 2 workers; the plan has no hazard.
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  for (const workers of [0, 2]) {
    const fn = await weft.compile([a], out, { pool, workers, mode: 'FAST_COMPILE' });
    for (let k = 0; k < 3; k++) near(t, await fn(av), want, 1e-9, `workers ${workers}, call ${k + 1}`);
    const { plan } = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 }).planFor([av]);
    t.same(planHazards(plan.descriptor), [], `workers ${workers}: no hazard`);
  }
});
