// debugprint and toDot: exact text for small graphs, a repeated subexpression printed once,
// indices of multi-output nodes, execution positions for a compiled function, and DOT text
// that declares every node and every edge.
import t, { type Test } from 'tap';
import { pt, weft } from '../helpers.js';

class Pair extends weft.Op<weft.pt.TensorVariable[]> {
  override makeNode(x: unknown): weft.Apply {
    const xv = pt.asTensorVariable(x as weft.TensorLike);
    return new weft.Apply(this, [xv], [xv.type.makeVariable(), xv.type.makeVariable()]);
  }
}

t.test('debugprint: a small graph, exactly', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const out = pt.add(pt.exp(x), pt.mul(y, 2));
  t.equal(
    weft.debugprint(out),
    [
      'Elemwise{add} [id A]',
      ' |Elemwise{exp} [id B]',
      ' | |x [id C]',
      ' |Elemwise{mul} [id D]',
      '   |y [id E]',
      '   |DimShuffle{x} [id F] v={0: [0]}',
      '     |TensorConstant{2} [id G]',
    ].join('\n'),
  );
});

t.test('debugprint: a repeated subexpression is printed once, then by its id', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const a = pt.exp(x);
  a.name = 'a';
  const out = pt.add(a, pt.mul(a, y)).sum();
  t.equal(
    weft.debugprint(out),
    [
      'Sum{axis=[0]} [id A]',
      ' |Elemwise{add} [id B]',
      '   |Elemwise{exp} [id C] \'a\'',
      '   | |x [id D]',
      '   |Elemwise{mul} [id E]',
      '     |Elemwise{exp} [id C] \'a\'',
      '     |y [id F]',
    ].join('\n'),
  );
  t.equal(
    weft.debugprint([out, a]),
    weft.debugprint(out) + "\nElemwise{exp} [id C] 'a'",
    'several outputs share one numbering',
  );
});

t.test('debugprint: outputs of a multi-output node show their index', async (t) => {
  const x = pt.vector('x');
  const [p, q] = new Pair().call(x);
  t.equal(
    weft.debugprint(pt.sub(q!, p!)),
    ['Elemwise{sub} [id A]', ' |Pair.1 [id B]', ' | |x [id C]', ' |Pair.0 [id D]'].join('\n'),
  );
});

t.test('debugprint: a compiled function shows each node\'s position in the execution order', async (t) => {
  const m = pt.matrix('m');
  const c = m.sum({ axis: 0 });
  const fn = await weft.compile([m], [c.max(), c.min(), m.T]);
  const text = weft.debugprint(fn);
  t.equal(
    text,
    [
      'Max{axis=[0]} [id A]   1',
      ' |Sum{axis=[0]} [id B]   0',
      '   |m [id C]',
      'Min{axis=[0]} [id D]   2',
      ' |Sum{axis=[0]} [id B]   0',
      'DeepCopyOp [id E]   4',
      ' |DimShuffle{1,0} [id F] v={0: [0]}   3',
      '   |m [id C]',
    ].join('\n'),
  );
  const order = fn.fgraph.toposort();
  t.same(order.map(String), [
    'Sum{axis=[0]}(m)',
    'Max{axis=[0]}(Sum{axis=[0]}.out)',
    'Min{axis=[0]}(Sum{axis=[0]}.out)',
    'DimShuffle{1,0}(m)',
    'DeepCopyOp(DimShuffle{1,0}.out)',
  ]);
  t.equal(weft.debugprint(fn.fgraph), text, 'the same for its FunctionGraph');
});

t.test('debugprint: a graph input and a constant alone', async (t) => {
  t.equal(weft.debugprint(pt.vector('x')), 'x [id A]');
  t.equal(weft.debugprint(pt.constant([1, 2])), 'TensorConstant{[1,2]} [id A]');
  t.equal(weft.debugprint(pt.matrix()), '<TensorType(float64, (?, ?))> [id A]');
});

/** The statements of a DOT text (one per line here), or a failure naming the bad line. */
function parseDot(t: Test, text: string): { nodes: Map<string, string>; edges: Array<[string, string]> } {
  const lines = text.split('\n');
  t.equal(lines[0], 'digraph weft {');
  t.equal(lines[lines.length - 1], '}');
  const nodes = new Map<string, string>();
  const edges: Array<[string, string]> = [];
  const quoted = '"(?:[^"\\\\]|\\\\.)*"';
  const attr = `\\w+=(?:${quoted}|[\\w#]+)`;
  const nodeRe = new RegExp(`^  (n\\d+) \\[(${attr}(?:, ${attr})*)\\];$`);
  const edgeRe = new RegExp(`^  (n\\d+) -> (n\\d+)(?: \\[${attr}\\])?;$`);
  for (const line of lines.slice(1, -1)) {
    if (line === '  rankdir=TB;') continue;
    const n = nodeRe.exec(line);
    if (n) {
      t.notOk(nodes.has(n[1]!), `${n[1]} declared once`);
      nodes.set(n[1]!, /label=("(?:[^"\\]|\\.)*")/.exec(n[2]!)![1]!);
      continue;
    }
    const e = edgeRe.exec(line);
    if (e) {
      edges.push([e[1]!, e[2]!]);
      continue;
    }
    t.fail(`not a DOT statement of the expected forms: ${line}`);
  }
  for (const [a, b] of edges) t.ok(nodes.has(a) && nodes.has(b), `edge ${a} -> ${b} joins declared nodes`);
  return { nodes, edges };
}

t.test('toDot: valid DOT with every node, variable and edge', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const k = pt.constant([1, 2, 3], { name: 'k', dtype: 'int8' });
  const out = pt.add(pt.exp(x), pt.mul(y, k)).sum();
  const dot = weft.toDot(out);
  const { nodes, edges } = parseDot(t, dot);
  const boxes = [...nodes.values()].filter((l) => !l.includes('\\n'));
  t.same(boxes.sort(), ['"Elemwise{add}"', '"Elemwise{exp}"', '"Elemwise{mul}"', '"Sum{axis=[0]}"'], 'every op node');
  const ellipses = [...nodes.values()].filter((l) => l.includes('\\n'));
  t.equal(ellipses.length, 7, 'x, y, k and four results');
  t.ok(ellipses.includes('"x\\nTensorType(float64, (?,))"'));
  t.ok(ellipses.includes('"k\\nTensorType(int8, (3,))"'));
  t.equal(edges.length, 4 + 4 + 2, 'one edge per node input and per node output');
  t.match(dot, /label="x\\nTensorType\(float64, \(\?,\)\)", style=filled, fillcolor="#d1e7dd"/, 'inputs are green');
  t.match(dot, /label="k\\nTensorType\(int8, \(3,\)\)", style=filled, fillcolor="#e9ecef"/, 'constants are grey');
  t.match(dot, /label="\\nTensorType\(float64, \(\)\)", style=filled, fillcolor="#cfe2ff"/, 'outputs are blue');
});

t.test('toDot: names with quotes and backslashes are escaped; compiled functions too', async (t) => {
  const x = pt.vector('say "hi" \\ there');
  const fn = await weft.compile([x], pt.exp(x));
  const dot = weft.toDot(fn);
  const { nodes } = parseDot(t, dot);
  t.ok([...nodes.values()].includes('"say \\"hi\\" \\\\ there\\nTensorType(float64, (?,))"'));
  t.equal(nodes.size, 3);
  t.equal(weft.toDot(fn.fgraph), dot);
});
