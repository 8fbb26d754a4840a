// weft.toSvg: the SVG that Graphviz (WebAssembly) draws from toDot, read back as XML: one
// <g class="node"> per variable and apply node, one <g class="cluster"> per inner graph
// (OpFromGraph, Scan, nested), names with XML's special characters intact, and many renders in a
// row (the WebAssembly Graphviz once broke on the second layout of a graph with clusters).
import t from 'tap';
import { pt, weft } from '../helpers.js';
import { findAll, hasClass, parseSvg, textOf, type XmlElement } from '../svg-xml.js';

/** What a node shows: the text of its <text> elements (not its <title>, the DOT id). */
function shown(node: XmlElement): string {
  return findAll(node, (e) => e.tag === 'text').map(textOf).join(' ');
}

function nodesAndClusters(root: XmlElement): { nodes: XmlElement[]; clusters: string[] } {
  const nodes = findAll(root, (e) => e.tag === 'g' && hasClass(e, 'node'));
  const clusters = findAll(root, (e) => e.tag === 'g' && hasClass(e, 'cluster')).map(shown);
  return { nodes, clusters };
}

/** The step of x_t -> acc + 2 x_t over a vector's elements. */
function runningSum(): weft.pt.TensorVariable {
  const xs = pt.vector('xs');
  const { outputs } = weft.scan({ fn: (xt: weft.pt.TensorVariable, acc: weft.pt.TensorVariable) => acc.add(xt.mul(2)), sequences: [xs], outputsInfo: [pt.zeros([])] });
  return outputs as weft.pt.TensorVariable;
}

t.test('an OpFromGraph: its node outside and its inner graph as one cluster', async (t) => {
  const a = pt.vector('a');
  const b = pt.vector('b');
  const op = new weft.OpFromGraph([a, b], a.mul(b).add(a), { name: 'axpa' });
  const x = pt.vector('x');
  const y = pt.vector('y');
  const svg = await weft.toSvg(op.call(x, y));
  t.type(svg, 'string');
  const { nodes, clusters } = nodesAndClusters(parseSvg(t, svg));
  // Outside: x, y, the OpFromGraph node, its output. Inside: a, b, mul and its output, add and its output.
  t.equal(nodes.length, 4 + 6, 'ten nodes');
  t.same(clusters, ['OpFromGraph{axpa}'], 'one cluster, titled with the op');
  const labels = nodes.map(shown);
  t.equal(labels.filter((l) => l.startsWith('OpFromGraph{axpa}')).length, 1, 'the op node outside the cluster');
  t.ok(labels.some((l) => l.startsWith('a ') && l.includes('TensorType(float64, (?,))')), 'an inner input with its type');
  const titles = nodes.map((n) => textOf(n.children.find((k) => k.tag === 'title')!));
  t.equal(new Set(titles).size, titles.length, 'every node has its own id');
});

t.test('a Scan: its step graph as a cluster', async (t) => {
  const { nodes, clusters } = nodesAndClusters(parseSvg(t, await weft.toSvg(runningSum())));
  // Outside: xs, Shape_i and the length, the initial state 0, the Scan node, its output.
  // The step: xs[t], out0[t-1], the constant 2, mul and its output, add and its output.
  t.equal(nodes.length, 6 + 7, 'thirteen nodes');
  t.same(clusters, ['Scan{scan}']);
});

t.test('an OpFromGraph inside a Scan step: two clusters; a compiled function too', async (t) => {
  const a = pt.vector('a');
  const op = new weft.OpFromGraph([a], a.exp(), { name: 'block' });
  const xs = pt.matrix('xs');
  const { outputs } = weft.scan({ fn: (xt: weft.pt.TensorVariable, acc: weft.pt.TensorVariable) => acc.add(op.call(xt)), sequences: [xs], outputsInfo: [pt.zeros([3])], name: 'loop' });
  const total = (outputs as weft.pt.TensorVariable).sum();
  const { clusters } = nodesAndClusters(parseSvg(t, await weft.toSvg(total)));
  t.same(clusters.sort(), ['OpFromGraph{block}', 'Scan{loop}']);

  const fn = await weft.compile([xs], total, { workers: 0 });
  const { nodes, clusters: compiled } = nodesAndClusters(parseSvg(t, await weft.toSvg(fn)));
  t.equal(compiled.length, 2, 'the compiled graph keeps both inner graphs');
  const applies = fn.fgraph.toposort();
  const outer = new Set(applies.flatMap((n) => [...n.inputs, ...n.outputs]));
  const scan = applies.find((n) => String(n.op) === 'Scan{loop}')!;
  const step = scan.op.innerGraphs!()[0]!;
  const stepApplies = step.toposort();
  const inner = new Set([...step.inputs, ...stepApplies.flatMap((n) => [...n.inputs, ...n.outputs])]);
  const block = stepApplies.find((n) => String(n.op) === 'OpFromGraph{block}')!.op.innerGraphs!()[0]!;
  const blockApplies = block.toposort();
  const innermost = new Set([...block.inputs, ...blockApplies.flatMap((n) => [...n.inputs, ...n.outputs])]);
  t.equal(nodes.length, applies.length + outer.size + stepApplies.length + inner.size + blockApplies.length + innermost.size, 'a node per apply and per variable of the three graphs');
});

t.test("names with XML's special characters stay well-formed and readable", async (t) => {
  const x = pt.vector('a < b & "c"');
  const root = parseSvg(t, await weft.toSvg(pt.exp(x)));
  const labels = nodesAndClusters(root).nodes.map(shown);
  t.ok(labels.some((l) => l.includes('a < b & "c"')), 'the name, unescaped by the parser');
});

t.test('twenty renders in a row of a graph with a cluster', async (t) => {
  const s = runningSum();
  let drawn = 0;
  for (let i = 0; i < 20; i++) {
    const { nodes } = nodesAndClusters(parseSvg(t, await weft.toSvg(s)));
    if (nodes.length === 13) drawn += 1;
  }
  t.equal(drawn, 20, 'every render has all thirteen nodes');
});
