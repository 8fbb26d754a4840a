// Apply nodes: outputs know their owner and index, `out` is for single-output nodes only, and
// cloneWithNewInputs rebuilds a node on other inputs (strict: only compatible input types).
import t from 'tap';
import { pt, throwsExactly, weft } from '../helpers.js';

/** Two outputs of the input's type: enough to test indices of multi-output nodes. */
class Pair extends weft.Op<weft.pt.TensorVariable[]> {
  override makeNode(x: unknown): weft.Apply {
    const xv = pt.asTensorVariable(x as weft.TensorLike);
    return new weft.Apply(this, [xv], [xv.type.makeVariable(), xv.type.makeVariable()]);
  }
}

t.test('outputs know their owner and index', async (t) => {
  const x = pt.vector('x');
  const [p, q] = new Pair().call(x);
  const node = p!.owner!;
  t.equal(q!.owner, node);
  t.equal(p!.index, 0);
  t.equal(q!.index, 1);
  t.same(node.inputs, [x]);
  t.equal(x.owner, null, 'an input has no owner');
  await throwsExactly(t, () => node.out, Error, 'Pair has 2 outputs; use node.outputs[i]');
  const e = pt.exp(x);
  t.equal(e.owner!.out, e, 'out of a single-output node');
  t.equal(String(e.owner), 'Elemwise{exp}(x)');
  t.equal(String(e), 'Elemwise{exp}.out', 'an unnamed output is named after its op');
  t.equal(String(q), 'Pair.1', 'an unnamed output of a multi-output node shows its index');
});

t.test('an output can belong to one node only', async (t) => {
  const x = pt.vector('x');
  const e = pt.exp(x);
  await throwsExactly(
    t,
    () => new weft.Apply(e.owner!.op, [x], [e]),
    Error,
    'Apply(Elemwise{exp}): output 0 (Elemwise{exp}.out) already belongs to another node',
  );
});

t.test('clone: same op and inputs, fresh outputs of the same types', async (t) => {
  const x = pt.vector('x');
  const [p] = new Pair().call(x);
  const node = p!.owner!;
  const copy = node.clone();
  t.not(copy, node);
  t.equal(copy.op, node.op);
  t.same(copy.inputs, node.inputs);
  t.not(copy.inputs, node.inputs, 'its own input list');
  copy.outputs.forEach((o, i) => {
    t.not(o, node.outputs[i]);
    t.equal(o.owner, copy);
    t.equal(o.index, i);
    t.ok(o.type.equals(node.outputs[i]!.type));
  });
});

t.test('cloneWithNewInputs: inputs of the same type give outputs of the same type', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const node = pt.exp(x).owner!;
  for (const strict of [true, false]) {
    const copy = node.cloneWithNewInputs([y], strict);
    t.equal(copy.op, node.op, `strict=${strict}: the same op`);
    t.same(copy.inputs, [y]);
    t.ok(copy.outputs[0]!.type.equals(node.outputs[0]!.type));
    t.same(node.inputs, [x], 'the original node is untouched');
  }
});

t.test('cloneWithNewInputs: a more specific input type remakes the node', async (t) => {
  const x = pt.vector('x');
  const xs = pt.tensor({ shape: [3], name: 'xs' });
  const node = pt.exp(x).owner!;
  for (const strict of [true, false]) {
    const copy = node.cloneWithNewInputs([xs], strict);
    t.equal(String(copy.outputs[0]!.type), 'TensorType(float64, (3,))', `strict=${strict}: the output gets the static length`);
  }
});

t.test('cloneWithNewInputs: strict refuses inputs of another type, non-strict lets the op decide', async (t) => {
  const x = pt.vector('x');
  const node = pt.exp(x).owner!;
  const xi = pt.vector('xi', 'int32');
  await throwsExactly(
    t,
    () => node.cloneWithNewInputs([xi]),
    TypeError,
    'Elemwise{exp}: cloneWithNewInputs (strict) got xi of type TensorType(int32, (?,)) for input 0, ' +
      'where TensorType(float64, (?,)) (or a more specific type) was expected',
  );
  const loose = node.cloneWithNewInputs([xi], false);
  t.equal(String(loose.outputs[0]!.type), 'TensorType(float64, (?,))', 'exp of int32 is float64');
  const m = pt.matrix('m');
  await throwsExactly(
    t,
    () => node.cloneWithNewInputs([m]),
    TypeError,
    'Elemwise{exp}: cloneWithNewInputs (strict) got m of type TensorType(float64, (?, ?)) for input 0, ' +
      'where TensorType(float64, (?,)) (or a more specific type) was expected',
  );
  const wider = node.cloneWithNewInputs([m], false);
  t.equal(String(wider.outputs[0]!.type), 'TensorType(float64, (?, ?))', 'non-strict: the op makes a matrix node');
  const xf = pt.vector('xf', 'float32');
  t.equal(String(node.cloneWithNewInputs([xf], false).outputs[0]!.type), 'TensorType(float32, (?,))');
});

t.test('cloneWithNewInputs: the wrong number of inputs', async (t) => {
  const x = pt.vector('x');
  const node = pt.exp(x).owner!;
  await throwsExactly(t, () => node.cloneWithNewInputs([x, x]), Error, 'Elemwise{exp}: cloneWithNewInputs got 2 inputs, the node has 1');
  await throwsExactly(t, () => node.cloneWithNewInputs([], false), Error, 'Elemwise{exp}: cloneWithNewInputs got 0 inputs, the node has 1');
});
