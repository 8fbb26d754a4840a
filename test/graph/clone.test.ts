// Copying graphs: cloneGraph gives fresh nodes and variables (constants and shared variables are
// kept, names too); cloneReplace rebuilds only what depends on a replaced variable.
import t from 'tap';
import { near, pt, run, throwsExactly, weft } from '../helpers.js';

t.test('cloneGraph: fresh nodes and variables, constants shared, names kept', async (t) => {
  const x = pt.vector('x');
  const k = pt.constant([1, 2, 3], { name: 'k' });
  const a = pt.exp(x);
  a.name = 'a';
  const out = pt.add(a, k);
  const c = weft.cloneGraph([x], [out]);
  const [cx] = c.inputs;
  const [cout] = c.outputs;
  t.not(cx, x, 'a fresh input');
  t.equal(cx!.name, 'x');
  t.ok(cx!.type.equals(x.type));
  t.not(cout, out);
  t.not(cout!.owner, out.owner, 'fresh nodes');
  t.equal(cout!.owner!.op, out.owner!.op, 'the same ops');
  const ca = cout!.owner!.inputs[0]!;
  t.not(ca, a);
  t.equal(ca.name, 'a', 'the name of an intermediate is kept');
  t.equal(ca.owner!.inputs[0], cx);
  t.equal(cout!.owner!.inputs[1], k, 'the constant is shared, not copied');
  t.equal(c.equiv.get(x), cx);
  t.equal(c.equiv.get(a), ca);
  t.equal(c.nodeEquiv.get(out.owner!), cout!.owner);
  t.equal(c.nodeEquiv.size, 2);
  t.equal(out.owner!.inputs[0], a, 'the original is untouched');
});

t.test('cloneGraph: copyInputs false keeps the inputs; shared variables are always kept', async (t) => {
  const x = pt.vector('x');
  const s = weft.shared([1, 2, 3], { name: 's' });
  const out = pt.mul(x, s);
  const c = weft.cloneGraph([x], [out], { copyInputs: false });
  t.equal(c.inputs[0], x);
  t.equal(c.outputs[0]!.owner!.inputs[0], x);
  t.equal(c.outputs[0]!.owner!.inputs[1], s, 'a shared variable holds its value: it is never copied');
  t.not(c.outputs[0], out);
  const full = weft.cloneGraph([x], [out]);
  t.equal(full.outputs[0]!.owner!.inputs[1], s);
});

t.test('cloneGraph: an output that is an input, and an output that is a constant', async (t) => {
  const x = pt.vector('x');
  const k = pt.constant(2);
  const c = weft.cloneGraph([x], [x, k]);
  t.equal(c.outputs[0], c.inputs[0]);
  t.equal(c.outputs[1], k);
});

t.test('cloneReplace: only nodes downstream of a replacement are rebuilt', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const a = pt.exp(x);
  const b = pt.sin(y);
  const out = pt.add(a, b);
  const z = pt.vector('z');
  const [r] = weft.cloneReplace([out], [[x, z]]);
  t.not(r, out);
  t.equal(r!.owner!.inputs[1], b, 'sin(y) does not depend on x: shared with the original');
  const ra = r!.owner!.inputs[0]!;
  t.not(ra, a, 'exp(x) is rebuilt');
  t.equal(ra.owner!.inputs[0], z);
  t.equal(ra.owner!.op, a.owner!.op);
  t.equal(out.owner!.inputs[0], a, 'the original is untouched');
  t.equal(a.owner!.inputs[0], x);

  const [same] = weft.cloneReplace([out], []);
  t.equal(same, out, 'no replacements: the same variables');
  const [unrelated] = weft.cloneReplace([b], [[x, z]]);
  t.equal(unrelated, b, 'an output that does not depend on the replaced variable is returned as is');
  const [itself] = weft.cloneReplace([x], [[x, z]]);
  t.equal(itself, z);
});

t.test('cloneReplace: replacing an intermediate by an expression', async (t) => {
  const x = pt.vector('x');
  const a = pt.exp(x);
  const out = pt.mul(a, 2).sum();
  const [r] = weft.cloneReplace([out], [[a, pt.log(x)]]);
  near(t, await run([x], r as weft.pt.TensorVariable, [[1, 2]]), Math.log(1) * 2 + Math.log(2) * 2);
  near(t, await run([x], out, [[1, 2]]), 2 * Math.exp(1) + 2 * Math.exp(2), 1e-12, 'the original still computes exp');
});

t.test('cloneReplace: a more specific replacement tightens the types downstream', async (t) => {
  const x = pt.vector('x');
  const out = pt.exp(x).add(1);
  const xs = pt.tensor({ shape: [3], name: 'xs' });
  const [r] = weft.cloneReplace([out], [[x, xs]]);
  t.equal(String(r!.type), 'TensorType(float64, (3,))');
});

t.test('cloneReplace: the replacement must have a compatible type', async (t) => {
  const x = pt.vector('x');
  const out = pt.exp(x);
  await throwsExactly(
    t,
    () => weft.cloneReplace([out], [[x, pt.matrix('m')]]),
    TypeError,
    'cannot replace x (TensorType(float64, (?,))) with m (TensorType(float64, (?, ?))): the types are not compatible',
  );
  await throwsExactly(
    t,
    () => weft.cloneReplace([out], [[x, pt.vector('i', 'int32')]]),
    TypeError,
    'cannot replace x (TensorType(float64, (?,))) with i (TensorType(int32, (?,))): the types are not compatible',
  );
  const xs = pt.tensor({ shape: [3], name: 'xs' });
  await throwsExactly(
    t,
    () => weft.cloneReplace([pt.exp(xs)], [[xs, pt.vector('v')]]),
    TypeError,
    'cannot replace xs (TensorType(float64, (3,))) with v (TensorType(float64, (?,))): the types are not compatible',
  );
});

t.test('cloneReplace: several replacements at once, and a name on a rebuilt output', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const out = pt.sub(x, y);
  out.name = 'diff';
  const [r] = weft.cloneReplace([out], [
    [x, pt.constant([5, 7], { dtype: 'float64' })],
    [y, pt.constant([1, 2], { dtype: 'float64' })],
  ]);
  t.equal(r!.name, 'diff', 'the rebuilt output keeps its name');
  near(t, (await r!.eval()) as weft.NdArray, [4, 5]);
});
