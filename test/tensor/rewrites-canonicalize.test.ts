// The canonicalize rewrites, one by one: the compiled graph with the rewrite and without it
// (debugprint), equal values on seeded inputs, and cases where the rewrite must not fire.
// Useless ops (x*1, x+0, x-x, x-0, x/1, --x, casts to the same dtype, dimshuffles that undo
// each other), flattened add/mul chains, gathered constants, cancelled factors, log(exp(x)).
import t, { type Test } from 'tap';
import { elemwise } from '../../src/tensor/elemwise/elemwise.js';
import * as S from '../../src/tensor/scalar/catalog.js';
import { pt, rng, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
type Nested = number | Nested[];
const flat = (x: Nested): number[] => (Array.isArray(x) ? x.flatMap(flat) : [x]);

interface Compared {
  readonly on: weft.WeftFunction<weft.NdArray>;
  readonly off: weft.WeftFunction<weft.NdArray>;
  readonly applied: number;
}

/**
 * Compiles `out` in FAST_RUN and in FAST_RUN without `rewrite`, checks both graphs against the
 * expected debugprints (when given) and that both give the same values (within `tol`, relative)
 * on `args`.
 */
async function compare(
  t: Test,
  rewrite: string,
  inputs: TV[],
  out: TV,
  args: unknown[],
  expect: { before?: string; after?: string; tol?: number } = {},
): Promise<Compared> {
  const on = await weft.compile(inputs, out, { onUnusedInput: 'ignore', profile: true });
  const off = await weft.compile(inputs, out, { onUnusedInput: 'ignore', mode: new weft.Mode({ excluding: [rewrite] }) });
  if (expect.before !== undefined) t.equal(weft.debugprint(off), expect.before, `${rewrite}: the graph without it`);
  if (expect.after !== undefined) t.equal(weft.debugprint(on), expect.after, `${rewrite}: the graph with it`);
  const a = await on(...(args as weft.InputValue[]));
  const b = await off(...(args as weft.InputValue[]));
  t.equal(a.dtype, b.dtype, `${rewrite}: dtype`);
  t.same(a.shape, b.shape, `${rewrite}: shape`);
  const x = flat(weft.tolist(a) as Nested);
  const y = flat(weft.tolist(b) as Nested);
  const tol = expect.tol ?? 0;
  const bad = x.map((v, i) => (Object.is(v, y[i]) || Math.abs(v - y[i]!) <= tol * Math.max(1, Math.abs(y[i]!)) ? '' : `[${i}] ${v} vs ${y[i]}`));
  t.same(bad.filter((s) => s).slice(0, 5), [], `${rewrite}: same values${tol ? ` within ${tol}` : ''}`);
  return { on, off, applied: on.profile!.rewrites.byRewriter.get(rewrite)?.applied ?? 0 };
}

/** The rewrite must leave this graph alone: not applied, and the same graph as without it. */
async function notFired(t: Test, rewrite: string, inputs: TV[], out: TV, args: unknown[], why: string): Promise<void> {
  const c = await compare(t, rewrite, inputs, out, args);
  t.equal(c.applied, 0, `${rewrite} does not fire: ${why}`);
  t.equal(weft.debugprint(c.on), weft.debugprint(c.off), `${rewrite}: graph unchanged (${why})`);
}

const r = rng(101);
const xv = r.normal([5]);
const yv = r.normal([5]);
const zv = r.normal([5]);

t.test('mul_one: x * 1 -> x', async (t) => {
  const x = pt.vector('x');
  const c = await compare(t, 'mul_one', [x], pt.mul(x, 1), [xv], {
    before: 'Elemwise{mul} [id A]   0\n |x [id B]\n |TensorConstant{[1]} [id C]',
    after: 'DeepCopyOp [id A]   0\n |x [id B]',
  });
  t.equal(c.applied, 1);
  // A ones of a larger shape still shapes the result: row * onesLike(M) is row broadcast to M's
  // shape, with lengths from the inputs (never from the replaced node).
  const row = pt.tensor({ shape: [1, null], name: 'row' });
  const m = pt.matrix('M');
  await compare(t, 'mul_one', [row, m], pt.mul(row, pt.onesLike(m)), [r.normal([1, 3]), r.normal([2, 3])], {
    after: 'Alloc [id A]   2\n |row [id B]\n |Shape_i{0} [id C]   0\n | |M [id D]\n |Shape_i{1} [id E]   1\n   |row [id B]',
  });
  // mul(x, 1, y) keeps the other operands; an int8 x times a float 1.0 becomes a cast.
  const y = pt.vector('y');
  await compare(t, 'mul_one', [x, y], pt.mul(x, 1, y), [xv, yv], { after: 'Elemwise{mul} [id A]   0\n |x [id B]\n |y [id C]' });
  const i = pt.vector('i', 'int8');
  const cf = await compare(t, 'mul_one', [i], pt.mul(i, pt.constant(1, { dtype: 'float32' })), [new Int8Array([1, -128, 127])], {
    after: 'Elemwise{cast{float32}} [id A]   0\n |i [id B]',
  });
  t.equal(cf.applied, 1);
  await notFired(t, 'mul_one', [x], pt.mul(x, 2), [xv], 'x * 2');
  await notFired(t, 'mul_one', [x], pt.mul(x, [1, 1, 1, 1, 2]), [xv], 'a constant with one element not 1');
});

t.test('add_zero: x + 0 -> x', async (t) => {
  const x = pt.vector('x');
  const c = await compare(t, 'add_zero', [x], pt.add(pt.exp(x), 0), [xv], {
    before: 'Composite{add(exp(i0),i1)} [id A]   0\n |x [id B]\n |TensorConstant{[0]} [id C]',
    after: 'Elemwise{exp} [id A]   0\n |x [id B]',
  });
  t.equal(c.applied, 1);
  // 0 + 0: a fill of zeros of the output's shape.
  const s = pt.scalar('s');
  await compare(t, 'add_zero', [s], pt.add(pt.mul(s, 0), 0), [2.5]);
  await notFired(t, 'add_zero', [x], pt.add(pt.exp(x), 1), [xv], 'x + 1');
});

t.test('sub_self: x - x -> zeros; sub_zero: x - 0 -> x', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const c = await compare(t, 'sub_self', [x], pt.sub(pt.exp(x), pt.exp(x)), [xv], {
    before: 'Elemwise{sub} [id A]   1\n |Elemwise{exp} [id B]   0\n | |x [id C]\n |Elemwise{exp} [id B]   0',
    after: 'Alloc [id A]   1\n |TensorConstant{0} [id B]\n |Shape_i{0} [id C]   0\n   |x [id D]',
  });
  t.equal(c.applied, 1);
  t.same(weft.tolist(await c.on(xv)), [0, 0, 0, 0, 0]);
  await notFired(t, 'sub_self', [x, y], pt.sub(x, y), [xv, yv], 'x - y');
  const d = await compare(t, 'sub_zero', [x], pt.sub(x, 0), [xv], {
    before: 'Elemwise{sub} [id A]   0\n |x [id B]\n |TensorConstant{[0]} [id C]',
    after: 'DeepCopyOp [id A]   0\n |x [id B]',
  });
  t.equal(d.applied, 1);
  await notFired(t, 'sub_zero', [x], pt.sub(0, x), [xv], '0 - x');
});

t.test('div_one: x / 1 -> x; neg_neg: -(-x) -> x', async (t) => {
  const x = pt.vector('x');
  const c = await compare(t, 'div_one', [x], pt.trueDiv(pt.exp(x), 1), [xv], {
    before: 'Composite{trueDiv(exp(i0),i1)} [id A]   0\n |x [id B]\n |TensorConstant{[1]} [id C]',
    after: 'Elemwise{exp} [id A]   0\n |x [id B]',
  });
  t.equal(c.applied, 1);
  // An integer divided by 1 is a float: the rewrite casts.
  const i = pt.vector('i', 'int16');
  await compare(t, 'div_one', [i], pt.trueDiv(i, 1), [new Int16Array([3, -7, 30000])], { after: 'Elemwise{cast{float64}} [id A]   0\n |i [id B]' });
  await notFired(t, 'div_one', [x], pt.trueDiv(1, x), [xv], '1 / x');
  const d = await compare(t, 'neg_neg', [x], pt.neg(pt.neg(pt.exp(x))), [xv], {
    before: 'Composite{neg(neg(exp(i0)))} [id A]   0\n |x [id B]',
    after: 'Elemwise{exp} [id A]   0\n |x [id B]',
  });
  t.equal(d.applied, 1);
  await notFired(t, 'neg_neg', [x], pt.neg(pt.exp(x)), [xv], 'a single negation');
});

t.test('useless_cast: a cast to the dtype a value already has', async (t) => {
  const x = pt.vector('x');
  const c = await compare(t, 'useless_cast', [x], pt.exp(elemwise(S.castTo('float64'), x)), [xv], {
    before: 'Composite{exp(cast{float64}(i0))} [id A]   0\n |x [id B]',
    after: 'Elemwise{exp} [id A]   0\n |x [id B]',
  });
  t.equal(c.applied, 1);
  await notFired(t, 'useless_cast', [x], pt.exp(pt.cast(x, 'float32')), [xv], 'a cast to float32');
  const i = pt.vector('i', 'int32');
  await notFired(t, 'useless_cast', [i], pt.cast(i, 'int8'), [new Int32Array([300, -1, 5])], 'a narrowing cast');
});

t.test('log_exp: log(exp(x)) -> x', async (t) => {
  const x = pt.vector('x');
  const c = await compare(t, 'log_exp', [x], pt.log(pt.exp(x)), [[1, -2, 0.5]], {
    before: 'Composite{log(exp(i0))} [id A]   0\n |x [id B]',
    after: 'DeepCopyOp [id A]   0\n |x [id B]',
    tol: 1e-15,
  });
  t.equal(c.applied, 1);
  // Where exp overflows the rewrite is exact and the unrewritten graph is not.
  t.same(weft.tolist(await c.on([800])), [800]);
  t.same(weft.tolist(await c.off([800])), [Infinity]);
  await notFired(t, 'log_exp', [x], pt.exp(pt.log(x)), [[1, 2, 3]], 'exp(log(x))');
});

t.test('dimshuffle_merge: nested DimShuffles compose, identities vanish', async (t) => {
  const m = pt.matrix('M');
  const mv = r.normal([2, 3]);
  const c = await compare(t, 'dimshuffle_merge', [m], pt.exp(m.T.T), [mv], {
    before: 'Elemwise{exp} [id A]   2\n |DimShuffle{1,0} [id B] v={0: [0]}   1\n   |DimShuffle{1,0} [id C] v={0: [0]}   0\n     |M [id D]',
    after: 'Elemwise{exp} [id A]   0\n |M [id B]',
  });
  t.equal(c.applied, 1);
  await compare(t, 'dimshuffle_merge', [m], pt.exp(m.T.dimshuffle('x', 1, 0)), [mv], {
    before: 'Elemwise{exp} [id A]   2\n |DimShuffle{x,1,0} [id B] v={0: [0]}   1\n   |DimShuffle{1,0} [id C] v={0: [0]}   0\n     |M [id D]',
    after: 'Elemwise{exp} [id A]   1\n |DimShuffle{x,0,1} [id B] v={0: [0]}   0\n   |M [id C]',
  });
  // Dropping a broadcastable axis through two shuffles.
  const b = pt.tensor({ shape: [null, 1, null], name: 'b' });
  await compare(t, 'dimshuffle_merge', [b], pt.exp(b.dimshuffle(2, 1, 0).dimshuffle(2, 0)), [r.normal([2, 1, 3])], {
    after: 'Elemwise{exp} [id A]   1\n |DimShuffle{0,2} [id B] v={0: [0]}   0\n   |b [id C]',
  });
  await notFired(t, 'dimshuffle_merge', [m], pt.exp(m.T), [mv], 'a single transpose');
});

t.test('add_flatten and mul_flatten: nested chains become one node', async (t) => {
  const [x, y, z] = ['x', 'y', 'z'].map((n) => pt.vector(n)) as [TV, TV, TV];
  const c = await compare(t, 'add_flatten', [x, y, z], pt.add(pt.add(x, y), z), [xv, yv, zv], {
    before: 'Composite{add(add(i0,i1),i2)} [id A]   0\n |x [id B]\n |y [id C]\n |z [id D]',
    after: 'Elemwise{add} [id A]   0\n |x [id B]\n |y [id C]\n |z [id D]',
  });
  t.equal(c.applied, 1);
  const d = await compare(t, 'mul_flatten', [x, y, z], pt.mul(x, pt.mul(y, z)), [xv, yv, zv], {
    before: 'Composite{mul(i0,mul(i1,i2))} [id A]   0\n |x [id B]\n |y [id C]\n |z [id D]',
    after: 'Elemwise{mul} [id A]   0\n |x [id B]\n |y [id C]\n |z [id D]',
    tol: 1e-15,
  });
  t.equal(d.applied, 1);
  // float32 and integer chains flatten exactly (the variadic code rounds and wraps as the nest did).
  const [f, g, h] = ['f', 'g', 'h'].map((n) => pt.vector(n, 'float32')) as [TV, TV, TV];
  const f32 = [new Float32Array([0.1, 1e8, 3]), new Float32Array([0.2, 1, -3]), new Float32Array([0.3, -1e8, 1e-8])];
  await compare(t, 'add_flatten', [f, g, h], pt.add(pt.add(f, g), h), f32);
  const [i, j, k] = ['i', 'j', 'k'].map((n) => pt.vector(n, 'int32')) as [TV, TV, TV];
  const i32 = [new Int32Array([65536, 2 ** 30, -7]), new Int32Array([65536, 5, 3]), new Int32Array([3, 7, 11])];
  await compare(t, 'mul_flatten', [i, j, k], pt.mul(pt.mul(i, j), k), i32);
  // Not when the inner sum has another client, nor when it has another dtype.
  const inner = pt.add(x, y);
  await notFired(t, 'add_flatten', [x, y, z], pt.mul(pt.add(inner, z), inner), [xv, yv, zv], 'the inner add has another client');
  await notFired(t, 'add_flatten', [f, g, z], pt.add(pt.add(f, g), z), [f32[0], f32[1], [1, 2, 3]], 'the inner add is float32, the outer float64');
  const i8 = pt.vector('i8', 'int8');
  await notFired(t, 'mul_flatten', [i8, j], pt.mul(pt.mul(i8, i8), j), [new Int8Array([100, 3, -128]), i32[1]], 'int8 product inside an int32 one');
});

t.test('add_constants and mul_constants: constants of one chain combined', async (t) => {
  const x = pt.vector('x');
  const c = await compare(t, 'add_constants', [x], pt.add(pt.add(x, 1), 2), [xv], {
    before: 'Elemwise{add} [id A]   0\n |x [id B]\n |TensorConstant{[1]} [id C]\n |TensorConstant{[2]} [id D]',
    after: 'Elemwise{add} [id A]   0\n |x [id B]\n |TensorConstant{[3]} [id C]',
    tol: 1e-15, // (x + 1) + 2 and x + 3 may round differently
  });
  t.equal(c.applied, 1);
  const d = await compare(t, 'mul_constants', [x], pt.mul(pt.mul(x, 2), 3), [xv], {
    before: 'Elemwise{mul} [id A]   0\n |x [id B]\n |TensorConstant{[2]} [id C]\n |TensorConstant{[3]} [id D]',
    after: 'Elemwise{mul} [id A]   0\n |x [id B]\n |TensorConstant{[6]} [id C]',
  });
  t.equal(d.applied, 1);
  // int8 + int16 constants: the combined constant keeps the sum int16 (a weak 100 would make it
  // int8 and wrap at 127).
  const i8 = pt.vector('i8', 'int8');
  const c200 = pt.constant(200, { dtype: 'int16' });
  const cm100 = pt.constant(-100, { dtype: 'int16' });
  const e = await compare(t, 'add_constants', [i8], pt.add(i8, c200, cm100), [new Int8Array([100, 127, -128])]);
  t.equal(e.applied, 1);
  t.same(weft.tolist(await e.on(new Int8Array([100, 127, -128]))), [200, 227, -28]);
  // int32 constants multiply modulo 2^32: 65536 * 65536 wraps to 0.
  const i = pt.vector('i', 'int32');
  const big = pt.constant(65536, { dtype: 'int32' });
  const w = await compare(t, 'mul_constants', [i], pt.mul(i, big, big, pt.constant(3, { dtype: 'int32' })), [new Int32Array([1, -5, 7])]);
  t.same(weft.tolist(await w.on(new Int32Array([1, -5, 7]))), [0, 0, 0]);
  const u = pt.vector('u', 'uint8');
  const w2 = await compare(t, 'mul_constants', [u], pt.mul(u, pt.constant(16, { dtype: 'uint8' }), pt.constant(20, { dtype: 'uint8' })), [new Uint8Array([1, 2, 255])]);
  t.same(weft.tolist(await w2.on(new Uint8Array([1, 2, 255]))), [1, 2, 255].map((v) => (v * 320) & 255));
  await notFired(t, 'add_constants', [x], pt.add(x, 1), [xv], 'one constant');
  const y = pt.vector('y');
  await notFired(t, 'mul_constants', [x, y], pt.mul(x, 2, y), [xv, yv], 'one constant');
});

t.test('mul_div_cancel: factors above and below a division cancel', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const z = pt.vector('z');
  const c = await compare(t, 'mul_div_cancel', [x, y], pt.mul(pt.trueDiv(x, y), y), [xv, yv], {
    before: 'Composite{mul(trueDiv(i0,i1),i1)} [id A]   0\n |x [id B]\n |y [id C]',
    after: 'DeepCopyOp [id A]   0\n |x [id B]',
    tol: 1e-15,
  });
  t.equal(c.applied, 1);
  const d = await compare(t, 'mul_div_cancel', [x], pt.trueDiv(pt.exp(x), pt.exp(x)), [xv], {
    before: 'Elemwise{trueDiv} [id A]   1\n |Elemwise{exp} [id B]   0\n | |x [id C]\n |Elemwise{exp} [id B]   0',
    after: 'Alloc [id A]   1\n |TensorConstant{1} [id B]\n |Shape_i{0} [id C]   0\n   |x [id D]',
  });
  t.equal(d.applied, 1);
  // (x / (y * z)) * y -> x / z
  const e = await compare(t, 'mul_div_cancel', [x, y, z], pt.mul(pt.trueDiv(x, pt.mul(y, z)), y), [xv, yv, zv], {
    after: 'Elemwise{trueDiv} [id A]   0\n |x [id B]\n |z [id C]',
    tol: 1e-14,
  });
  t.equal(e.applied, 1);
  // Only x cancels with x: (x / y) * z stays; a division with another client is not looked into.
  await notFired(t, 'mul_div_cancel', [x, y, z], pt.mul(pt.trueDiv(x, y), z), [xv, yv, zv], 'nothing to cancel');
  const q = pt.trueDiv(x, y);
  await notFired(t, 'mul_div_cancel', [x, y], pt.add(pt.mul(q, y), q), [xv, yv], 'the division has another client');
  const i = pt.vector('i', 'int32');
  await notFired(t, 'mul_div_cancel', [i], pt.intDiv(pt.mul(i, 3), i), [new Int32Array([1, 2, 3])], 'integer floor division');
});

t.test('canonicalize belongs to FAST_COMPILE too; excluding an unknown name is harmless', async (t) => {
  const x = pt.vector('x');
  const fc = await weft.compile([x], pt.mul(pt.add(x, 0), 1), { mode: 'FAST_COMPILE' });
  t.equal(weft.debugprint(fc), 'DeepCopyOp [id A]   0\n |x [id B]');
  const fn = await weft.compile([x], pt.mul(x, 1), { mode: new weft.Mode({ excluding: ['no_such_rewrite'] }) });
  t.equal(weft.debugprint(fn), 'DeepCopyOp [id A]   0\n |x [id B]');
  await throwsExactly(t, () => weft.compile([x], x, { mode: 'FAST' as 'FAST_RUN' }), TypeError,
    "compile (the function): unknown mode \"FAST\" (expected 'FAST_RUN', 'FAST_COMPILE', 'DebugMode', 'NanGuardMode' or a weft.Mode)");
});

t.test('useless_reshape and reshape_reshape', async (t) => {
  const x = pt.matrix('x');
  const names = (fn: weft.CompiledFunction) => fn.fgraph.toposort().map((n) => String(n.op));
  const same = await weft.compile([x], x.reshape(x.shape).exp());
  t.notOk(names(same).some((n) => n.startsWith('Reshape')), 'reshape(x, shape(x)) is x');
  const own = await weft.compile([x], x.reshape([x.shape.get(0), x.shape.get(1)]).exp());
  t.notOk(names(own).some((n) => n.startsWith('Reshape')), "reshape to x's own lengths is x");
  const twice = await weft.compile([x], x.reshape([-1]).reshape([3, 2]));
  t.equal(names(twice).filter((n) => n.startsWith('Reshape')).length, 1, 'two reshapes become one');
  t.same(weft.tolist(await twice([[1, 2, 3], [4, 5, 6]])), [[1, 2], [3, 4], [5, 6]]);
  const swapped = await weft.compile([x], x.reshape([x.shape.get(1), x.shape.get(0)]));
  t.ok(names(swapped).some((n) => n.startsWith('Reshape')), 'a reshape that changes the shape stays');
  t.same(weft.tolist(await swapped([[1, 2, 3], [4, 5, 6]])), [[1, 2], [3, 4], [5, 6]]);
});

t.test('join_of_scalars: a stack of scalars is a MakeVector', async (t) => {
  const a = pt.scalar('a');
  const b = pt.scalar('b');
  const fn = await weft.compile([a, b], pt.stack([a, b.mul(2), a.add(b)]));
  t.ok(fn.fgraph.toposort().some((n) => String(n.op) === 'MakeVector'), 'a MakeVector');
  t.notOk(fn.fgraph.toposort().some((n) => String(n.op).startsWith('Join')), 'no Join');
  t.same(weft.tolist(await fn(1.5, 4)), [1.5, 8, 5.5]);
  const v = pt.vector('v');
  const kept = await weft.compile([v, a], pt.concatenate([v, pt.stack([a])]));
  t.ok(kept.fgraph.toposort().some((n) => String(n.op).startsWith('Join')), 'a join with a non-scalar piece stays');
});
