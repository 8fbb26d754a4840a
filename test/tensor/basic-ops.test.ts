// DeepCopyOp (deepCopy) and ViewOp (viewOf): values for every dtype and layout, the copy that
// shares no memory and the view that does (through perform on a node), their declarations
// (viewMap, constant folding, identity), what compile adds around them, inferShape, gradients,
// Rop and bad inputs.
import ndarray from 'ndarray';
import t from 'tap';
import { DeepCopyOp, ViewOp, deepCopy, viewOf } from '../../src/tensor/shape/basic-ops.js';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
type Nested = number | Nested[];

const OPS: ReadonlyArray<[string, (x: weft.TensorLike) => TV]> = [
  ['deepCopy', deepCopy],
  ['viewOf', viewOf],
];

t.test('values: the identity, for every dtype, 0-d, empty and non-contiguous inputs', async (t) => {
  for (const [name, f] of OPS) {
    const m = pt.matrix('m');
    near(t, await run([m], f(m), [[[1, 2, 3], [4, 5, 6]]]), [[1, 2, 3], [4, 5, 6]], 0, `${name}: float64`);
    const m32 = pt.matrix('m32', 'float32');
    const r32 = await run([m32], f(m32), [[[0.5, -1.25]]]);
    t.equal(r32.data.constructor, Float32Array, `${name}: float32 stays float32`);
    near(t, r32, [[0.5, -1.25]], 0, `${name}: float32`);
    for (const [dtype, values] of [['int8', [-128, 0, 127]], ['uint16', [0, 65535, 7]], ['int32', [-2147483648, 1, 2147483647]], ['uint32', [0, 4294967295, 3]]] as const) {
      const v = pt.vector('v', dtype);
      const r = await run([v], f(v), [values]);
      t.equal(f(v).dtype, dtype, `${name}: the output has the input's dtype`);
      near(t, r, [...values], 0, `${name}: ${dtype}`);
    }
    const b = pt.vector('b', 'bool');
    near(t, await run([b], f(b), [[true, false, true]]), [1, 0, 1], 0, `${name}: bool`);
    const s = pt.scalar('s');
    const r0 = await run([s], f(s), [2.5]);
    t.same(r0.shape, [], `${name}: a 0-d output`);
    t.equal(weft.tolist(r0), 2.5);
    const e = await run([m], f(m), [ndarray(new Float64Array(0), [0, 3])]);
    t.same(e.shape, [0, 3], `${name}: an empty input`);
    // Logical [[5, 4, 3], [2, 1, 0]] stored backwards, and a transposed variable.
    const reversed = ndarray(new Float64Array([0, 1, 2, 3, 4, 5]), [2, 3], [-3, -1], 5);
    near(t, await run([m], f(m), [reversed]), [[5, 4, 3], [2, 1, 0]], 0, `${name}: a non-contiguous input value`);
    near(t, await run([m], f(m.T), [[[1, 2, 3], [4, 5, 6]]]), [[1, 4], [2, 5], [3, 6]], 0, `${name}: of a transposed variable`);
    near(t, await run([m], f(m).mul(2).add(f(m.T).T), [[[1, 2], [3, 4]]]), [[3, 6], [9, 12]], 0, `${name}: inside a larger graph`);
  }
});

t.test('types, names and declarations of the two ops', async (t) => {
  const x = pt.tensor({ shape: [2, null, 1], dtype: 'int16', name: 'x' });
  const c = deepCopy(x);
  const v = viewOf(x);
  t.ok(c.type.equals(x.type), 'the copy has the input type, static shape included');
  t.ok(v.type.equals(x.type), 'the view has the input type');
  t.ok(c.owner!.op instanceof DeepCopyOp);
  t.ok(v.owner!.op instanceof ViewOp);
  t.equal(c.owner!.inputs[0], x);
  t.equal(String(c.owner!.op), 'DeepCopyOp');
  t.equal(String(v.owner!.op), 'ViewOp');
  t.same(c.owner!.op.viewMap, {}, 'a copy views nothing');
  t.same(v.owner!.op.viewMap, { 0: [0] }, 'the view declares that output 0 views input 0');
  t.same(c.owner!.op.destroyMap, {}, 'neither writes its input');
  t.same(v.owner!.op.destroyMap, {});
  t.equal(c.owner!.op.doConstantFolding(c.owner!), false, 'a copy is never folded (it exists to give fresh memory)');
  t.equal(v.owner!.op.doConstantFolding(v.owner!), true);
  t.ok(new DeepCopyOp().equals(new DeepCopyOp()), 'instances are equal (no props)');
  t.ok(new ViewOp().equals(new ViewOp()));
  t.notOk(new DeepCopyOp().equals(new ViewOp()), 'a copy is not a view');
  t.equal(deepCopy(x).owner!.op, c.owner!.op, 'one shared instance');
  const k = deepCopy([[1, 2], [3, 4]]);
  t.ok(k.owner!.inputs[0] instanceof pt.TensorConstant, 'values are wrapped as constants');
  t.equal(k.dtype, weft.config.floatX, 'plain numbers alone are wrapped as floatX');
  t.equal(deepCopy(new Int8Array([1, 2])).dtype, 'int8', 'a typed array keeps its dtype through the copy');
  near(t, (await viewOf(2.5).eval()) as weft.NdArray, 2.5, 0, 'eval of a view of a constant');
  near(t, (await deepCopy(new Float32Array([1, 2])).eval()) as weft.NdArray, [1, 2], 0, 'eval of a copy of a typed array');
});

t.test('perform: the copy shares no memory with its input, the view shares it', async (t) => {
  const x = pt.matrix('x');
  const copyNode = deepCopy(x).owner!;
  const viewNode = viewOf(x).owner!;
  for (const [layout, input] of [
    ['contiguous', ndarray(new Float64Array([1, 2, 3, 4, 5, 6]), [2, 3])],
    ['transposed', ndarray(new Float64Array([1, 4, 2, 5, 3, 6]), [2, 3], [1, 2])],
    ['offset and reversed', ndarray(new Float64Array([9, 6, 5, 4, 3, 2, 1]), [2, 3], [-3, -1], 6)],
  ] as const) {
    const before = weft.tolist(input);
    t.same(before, [[1, 2, 3], [4, 5, 6]], `${layout}: the input holds [[1, 2, 3], [4, 5, 6]]`);
    const [copy] = copyNode.op.perform(copyNode, [input]) as weft.NdArray[];
    t.not(copy!.data.buffer, input.data.buffer, `${layout}: the copy has its own buffer`);
    t.same(weft.tolist(copy!), before, `${layout}: the copy holds the same values`);
    t.same(copy!.stride, [3, 1], `${layout}: the copy is contiguous`);
    t.equal(copy!.offset, 0);
    t.notOk(x.type.mayShareMemory(copy!, input));
    copy!.set(0, 0, 100);
    t.same(weft.tolist(input), before, `${layout}: writing the copy leaves the input alone`);

    const [view] = viewNode.op.perform(viewNode, [input]) as weft.NdArray[];
    t.equal(view!.data, input.data, `${layout}: the view has the input's data`);
    t.same(view!.shape, input.shape);
    t.same(view!.stride, input.stride, `${layout}: and its strides`);
    t.equal(view!.offset, input.offset, `${layout}: and its offset`);
    t.not(view, input, 'a new ndarray object');
    t.ok(x.type.mayShareMemory(view!, input));
    view!.set(1, 2, -6);
    t.equal(input.get(1, 2), -6, `${layout}: writing through the view changes the input`);
  }
  const s = pt.scalar('s', 'int8');
  const sNode = deepCopy(s).owner!;
  const [c0] = sNode.op.perform(sNode, [ndarray(new Int8Array([7]), [])]) as weft.NdArray[];
  t.equal(c0!.data.constructor, Int8Array, 'a 0-d int8 copy keeps its dtype');
  t.equal(weft.tolist(c0!), 7);
});

t.test('compiled: outputs are the caller\'s memory, the view is copied on the way out', async (t) => {
  const x = pt.vector('x');
  const input = ndarray(new Float64Array([1, 2, 3]), [3]);
  const fv = await weft.compile([x], viewOf(x));
  t.same(fv.fgraph.toposort().map((n) => String(n.op)), ['ViewOp', 'DeepCopyOp'], 'a view of an input is copied for the caller');
  const r = await fv(input);
  t.not(r.data.buffer, input.data.buffer, 'the output does not alias the input');
  r.data[0] = 50;
  t.equal(input.data[0], 1);
  const fc = await weft.compile([x], deepCopy(x));
  t.same(fc.fgraph.toposort().map((n) => String(n.op)), ['DeepCopyOp']);
  const rc = await fc(input);
  t.not(rc.data.buffer, input.data.buffer);
  const r1 = await fc(input);
  const r2 = await fc(input);
  t.not(r1.data, r2.data, 'each call gives fresh memory');
  near(t, r1, [1, 2, 3], 0);
  const k = await weft.compile([], deepCopy(pt.constant([1, 2])));
  const k1 = await k();
  k1.data[0] = 9;
  near(t, await k(), [1, 2], 0, 'a copied constant is not folded away: changing one result leaves the next alone');
});

t.test('inferShape', async (t) => {
  const x = pt.tensor3('x');
  const value = rng(1).normal([2, 3, 4]);
  t.equal(await weft.checkInferShape([x], [deepCopy(x)], [value], DeepCopyOp), 1, 'DeepCopyOp');
  t.equal(await weft.checkInferShape([x], [viewOf(x)], [value], ViewOp), 1, 'ViewOp');
  t.equal(await weft.checkInferShape([x], [viewOf(x.dimshuffle(2, 0, 1))], [value], ViewOp), 1, 'ViewOp of a transposed input');
  t.equal(await weft.checkInferShape([x], [deepCopy(x)], [ndarray(new Float64Array(0), [0, 2, 5])], DeepCopyOp), 1, 'an empty input');
  const s = pt.scalar('s');
  t.equal(await weft.checkInferShape([s], [deepCopy(s), viewOf(s)], [3]), 2, '0-d inputs');
});

t.test('gradients and Rop', async (t) => {
  const r = rng(2);
  for (const [name, f] of OPS) {
    await weft.verifyGrad((x) => f(x), [r.normal([2, 3])]);
    await weft.verifyGrad((x) => f(x).mul(x), [r.normal([3])]);
    await weft.verifyGrad((x) => f(x.T).exp(), [r.normal([3, 2], { dtype: 'float32' })]);
    await weft.verifyGrad((x) => f(x).sum(), [r.normal([4])]);
    await weft.checkRop((x) => f(x), [r.normal([2, 3])]);
    await weft.checkRop((x) => f(x.sin()).mul(x), [r.normal([3])]);
    await weft.checkRop((x) => f(x), [r.normal([2, 2], { dtype: 'float32' })]);
    // The gradient passes through unchanged: d sum(f(x) * w) / dx = w.
    const x = pt.matrix('x');
    const g = weft.grad(f(x).mul([[1, 2], [3, 4]]).sum(), x);
    near(t, await run([x], g, [[[0, 0], [0, 0]]]), [[1, 2], [3, 4]], 0, `${name}: the gradient is the output gradient`);
    const ev = pt.matrix('ev');
    const jv = weft.Rop(f(x), x, ev) as TV;
    near(t, await run([x, ev], jv, [[[0, 0], [0, 0]], [[5, 6], [7, 8]]]), [[5, 6], [7, 8]], 0, `${name}: Rop is the eval point`);
  }
});

t.test('bad inputs name the op', async (t) => {
  await throwsExactly(t, () => deepCopy('a' as unknown as weft.TensorLike), TypeError,
    'DeepCopyOp: argument 0: constant: cannot make a constant from string');
  await throwsExactly(t, () => viewOf(null as unknown as weft.TensorLike), TypeError, 'ViewOp: argument 0 is null; expected a tensor or a value');
  await throwsExactly(t, () => deepCopy([[1, 2], [3]] as Nested as weft.TensorLike), TypeError,
    'DeepCopyOp: argument 0: the nested array is ragged (expected length 2 at depth 1)');
  const n = new weft.Variable(new weft.NullType('no value'), 'n');
  await throwsExactly(t, () => viewOf(n as unknown as weft.TensorLike), TypeError,
    'ViewOp: argument 0: expected a tensor variable, got n of type NullType("no value")');
});
