// The plan's ancestry answers (vector clocks over chains, and the bitset fallback) against
// reachability computed by brute force on seeded random DAGs of several shapes; and the size of a
// long graph planned and run (its ancestry was a bitset of n x n bits: 312 MB at 50k nodes).
import t from 'tap';
import { buildAncestry, type AncestryForm } from '../../src/scheduler/ancestry.js';
import { pt, rng, weft } from '../helpers.js';

/** A random DAG in topological order: each node draws up to `fanIn` predecessors among the last `reach` nodes. */
function randomDag(n: number, fanIn: number, reach: number, seed: number): number[][] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, k) => {
    const preds: number[] = [];
    const count = Math.floor(r.random() * (fanIn + 1));
    for (let i = 0; i < count && k > 0; i++) preds.push(k - 1 - Math.floor(r.random() * Math.min(k, reach)));
    return preds;
  });
}

function reachability(dag: readonly number[][]): boolean[][] {
  const anc = dag.map(() => new Array<boolean>(dag.length).fill(false));
  dag.forEach((preds, k) => {
    for (const p of preds) {
      anc[k]![p] = true;
      anc[p]!.forEach((yes, a) => {
        if (yes) anc[k]![a] = true;
      });
    }
  });
  return anc;
}

t.test('every pair of random DAGs is answered as brute force does, in both forms', (t) => {
  const shapes: ReadonlyArray<[string, number, number, number]> = [
    ['a chain with side branches', 300, 2, 3],
    ['wide and shallow', 300, 2, 150],
    ['dense', 200, 5, 200],
    ['independent nodes', 100, 0, 1],
  ];
  for (const [name, n, fanIn, reach] of shapes) {
    for (const seed of [1, 2, 3]) {
      const dag = randomDag(n, fanIn, reach, seed);
      const want = reachability(dag);
      for (const form of ['chains', 'bitsets'] as AncestryForm[]) {
        const got = buildAncestry(n, (k) => dag[k]!, form);
        t.equal(got.form, form);
        const wrong: string[] = [];
        for (let of = 0; of < n && wrong.length < 3; of++) {
          for (let a = 0; a < n; a++) if (got.isAncestor(a, of) !== want[of]![a]) wrong.push(`${a} -> ${of}`);
        }
        t.same(wrong, [], `${name}, seed ${seed}, ${form}`);
      }
    }
  }
  t.end();
});

t.test('the default form: vector clocks, unless the graph needs more chains than a bitset has words', (t) => {
  t.equal(buildAncestry(3000, (k) => (k > 0 ? [k - 1] : [])).form, 'chains', 'a chain is one chain');
  const sideBranches = (k: number): number[] => (k % 4 === 3 ? [k - 1, k - 2] : k % 4 === 2 ? [k - 3] : k > 0 ? [k - 1] : []);
  t.equal(buildAncestry(4000, (k) => (k < 3 ? [] : sideBranches(k))).form, 'chains', 'a chain with side branches needs few chains');
  t.equal(buildAncestry(3000, () => []).form, 'bitsets', 'independent nodes: one chain each, more than n / 32');
  t.end();
});

t.test('a graph of 20k nodes is planned and runs', async (t) => {
  const x = pt.vector('x');
  let v = x;
  for (let i = 0; i < 4000; i++) v = pt.tanh(v.mul(0.5)).add(pt.sum(v).mul(0.25));
  const fn = await weft.compile([x], v, { workers: 0, mode: 'FAST_COMPILE' });
  t.ok(fn.fgraph.toposort().length >= 20_000, `${fn.fgraph.toposort().length} nodes`);
  const out = await fn(new Float64Array([0.001, -0.002]));
  let want = [0.001, -0.002];
  for (let i = 0; i < 4000; i++) {
    const s = (want[0]! + want[1]!) * 0.25;
    want = want.map((w) => Math.tanh(w * 0.5) + s);
  }
  t.ok(out.data.every((g, i) => Math.abs(g - want[i]!) <= 1e-9 * Math.max(1, Math.abs(want[i]!))), `values ${[...out.data]} vs ${want}`);
});
