// Elemwise fusion: exp(x) * y + tanh(w) becomes one Composite node whose values equal the
// unfused graph's bit for bit (float64, float32, integer wrapping in the middle of a chain),
// broadcasting and strided inputs, what must not be absorbed, the input limit, nested fusions,
// the gradient of a fused op, and one kernel source for equal fusions.
import t, { type Test } from 'tap';
import { Composite } from '../../src/tensor/elemwise/composite.js';
import { exp32, tanh32 } from '../../src/kernels/vmath/float32.js';
import * as vmath from '../../src/kernels/vmath/functions.js';
import { pt, rng, throwsExactly, weft } from '../helpers.js';

type Nested = number | Nested[];
const flat = (x: Nested): number[] => (Array.isArray(x) ? x.flatMap(flat) : [x]);
const values = (a: weft.NdArray): number[] => flat(weft.tolist(a) as Nested);

/** FAST_RUN without the fusion: the reference the fused loops must match exactly. */
const UNFUSED = new weft.Mode({ excluding: ['fusion', 'inplace'] });

function opNames(fn: weft.CompiledFunction): string[] {
  return fn.fgraph.toposort().map((n) => String(n.op));
}

/** Same dtype, shape and bits (Object.is per element: NaN matches NaN, -0 only -0). */
function sameBits(t: Test, got: weft.NdArray, want: weft.NdArray, msg: string): void {
  t.equal(got.data.constructor.name, want.data.constructor.name, `${msg}: storage`);
  t.same(got.shape, want.shape, `${msg}: shape`);
  const g = values(got);
  const w = values(want);
  const bad = g.map((v, i) => (Object.is(v, w[i]) ? '' : `[${i}] ${v} vs ${w[i]}`)).filter((s) => s !== '');
  t.same(bad.slice(0, 5), [], `${msg}: bit for bit`);
}

function sameNumbers(t: Test, got: weft.NdArray, want: readonly number[], msg: string): void {
  const g = values(got);
  const bad = want.map((v, i) => (Object.is(g[i], v) ? '' : `[${i}] ${g[i]} vs ${v}`)).filter((s) => s !== '');
  t.same(bad.slice(0, 5), [], msg);
}

/** Compiles fused (FAST_RUN) and unfused, runs both on `args`. */
async function fusedAndUnfused(inputs: weft.pt.TensorVariable[], out: weft.pt.TensorVariable, args: readonly weft.InputValue[]) {
  const fused = await weft.compile(inputs, out, { onUnusedInput: 'ignore' });
  const plain = await weft.compile(inputs, out, { mode: UNFUSED, onUnusedInput: 'ignore' });
  return { fused, plain, got: await fused(...args), want: await plain(...args) };
}

t.test('exp(x) * y + tanh(w): one Composite node, equal to the unfused graph', async (t) => {
  for (const dtype of ['float64', 'float32'] as const) {
    const x = pt.matrix('x', dtype);
    const y = pt.matrix('y', dtype);
    const w = pt.matrix('w', dtype);
    const r = rng(11);
    const args = [r.normal([3, 5], { dtype }), r.normal([3, 5], { dtype }), r.normal([3, 5], { dtype })];
    const { fused, plain, got, want } = await fusedAndUnfused([x, y, w], pt.add(pt.mul(pt.exp(x), y), pt.tanh(w)), args);
    const nodes = fused.fgraph.toposort();
    t.equal(nodes.length, 1, `${dtype}: one node`);
    t.ok(String(nodes[0]!.op).startsWith('Composite{'), `${dtype}: ${String(nodes[0]!.op)}`);
    t.type(nodes[0]!.op, Composite);
    t.equal(weft.debugprint(fused), 'Composite{add(mul(exp(i0),i1),tanh(i2))} [id A]   0\n |x [id B]\n |y [id C]\n |w [id D]');
    t.same(opNames(plain).sort(), ['Elemwise{add}', 'Elemwise{exp}', 'Elemwise{mul}', 'Elemwise{tanh}'], `${dtype}: unfused`);
    sameBits(t, got, want, dtype);
    // And against plain JS arithmetic, rounding every intermediate as its node stores it (with
    // weft's own exp and tanh, kernels/vmath, which every kernel computes).
    const round = dtype === 'float32' ? Math.fround : (v: number) => v;
    const [a, b, c] = args.map(values);
    const e = dtype === 'float32' ? exp32 : vmath.exp;
    const th = dtype === 'float32' ? tanh32 : vmath.tanh;
    const expected = a!.map((_, i) => round(round(round(e(a![i]!)) * b![i]!) + round(th(c![i]!))));
    sameNumbers(t, got, expected, `${dtype}: independent values`);
  }
});

t.test('fused integer chains wrap every intermediate to its dtype', async (t) => {
  // int8: a + b overflows in the middle of the chain, then the product wraps again.
  const a = pt.vector('a', 'int8');
  const b = pt.vector('b', 'int8');
  const av = [100, -100, 127, -128, 3];
  const bv = [100, -100, 1, -1, 4];
  let res = await fusedAndUnfused([a, b], pt.sub(pt.mul(pt.add(a, b), 3), b), [new Int8Array(av), new Int8Array(bv)]);
  t.equal(res.fused.fgraph.toposort().length, 1, 'int8: one node');
  t.match(String(res.fused.fgraph.toposort()[0]!.op), /^Composite\{/);
  sameBits(t, res.got, res.want, 'int8');
  const w8 = (v: number) => (v << 24) >> 24;
  sameNumbers(t, res.got, av.map((v, i) => w8(w8(w8(v + bv[i]!) * 3) - bv[i]!)), 'int8: independent values');

  // int32: the product wraps modulo 2^32 (a float product would lose the low bits).
  const i = pt.vector('i', 'int32');
  const j = pt.vector('j', 'int32');
  const iv = [2 ** 30, 123456789, -5, 2147483647];
  const jv = [7, 987654321, 3, 2147483647];
  res = await fusedAndUnfused([i, j], pt.add(pt.mul(i, j), pt.neg(j)), [new Int32Array(iv), new Int32Array(jv)]);
  t.equal(res.fused.fgraph.toposort().length, 1, 'int32: one node');
  sameBits(t, res.got, res.want, 'int32');
  sameNumbers(t, res.got, iv.map((v, k) => (Math.imul(v, jv[k]!) - jv[k]!) | 0), 'int32: independent values');

  // uint8 with a repeated input, bool logic feeding integer arithmetic.
  const u = pt.vector('u', 'uint8');
  res = await fusedAndUnfused([u], pt.mul(pt.add(u, u), u), [new Uint8Array([200, 3, 255, 0])]);
  sameBits(t, res.got, res.want, 'uint8');
  sameNumbers(t, res.got, [200, 3, 255, 0].map((v) => (((v + v) & 255) * v) & 255), 'uint8: independent values');
  const c = pt.vector('c', 'bool');
  res = await fusedAndUnfused([c, a], pt.add(pt.and(c, pt.not(pt.lt(a, 0))), a), [[true, true, false, true, false], new Int8Array(av)]);
  t.equal(res.fused.fgraph.toposort().length, 1, 'bool and int8: one node');
  sameBits(t, res.got, res.want, 'bool and int8');
  sameNumbers(t, res.got, av.map((v, k) => w8(([1, 1, 0, 1, 0][k]! & (v < 0 ? 0 : 1)) + v)), 'bool and int8: independent values');
});

t.test('fused float32 intermediates are rounded as their nodes round them', async (t) => {
  const f = pt.vector('f', 'float32');
  const g = pt.vector('g', 'float32');
  const fv = new Float32Array([0.1, 0.2, 0.3, 1e-8, 16777217]);
  const gv = new Float32Array([1.1, 2.2, 3.3, 1, 1]);
  // (f + g) * g - f / g: every intermediate differs in float64.
  const out = pt.sub(pt.mul(pt.add(f, g), g), pt.trueDiv(f, g));
  const res = await fusedAndUnfused([f, g], out, [fv, gv]);
  t.equal(res.fused.fgraph.toposort().length, 1);
  t.equal(res.got.dtype, 'float32');
  sameBits(t, res.got, res.want, 'float32');
  const r = Math.fround;
  sameNumbers(t, res.got, [...fv].map((v, i) => r(r(r(v + gv[i]!) * gv[i]!) - r(v / gv[i]!))), 'float32: independent values');
  // Mixed float32 and int8 inputs: the sum is float32.
  const a = pt.vector('a', 'int8');
  const res2 = await fusedAndUnfused([f, a], pt.mul(pt.add(f, a), pt.exp(a)), [fv, new Int8Array([1, 2, 3, -4, 5])]);
  sameBits(t, res2.got, res2.want, 'float32 with int8');
});

t.test('fusion with broadcasting, 0-d, empty and strided inputs', async (t) => {
  const m = pt.matrix('m');
  const row = pt.tensor({ shape: [1, null], name: 'row' });
  const s = pt.scalar('s');
  const r = rng(3);
  const mv = r.normal([3, 4]);
  const rv = r.normal([1, 4]);
  const out = pt.add(pt.mul(pt.exp(m), row), pt.sqr(s));
  const res = await fusedAndUnfused([m, row, s], out, [mv, rv, 0.5]);
  const nodes = res.fused.fgraph.toposort().filter((n) => String(n.op).startsWith('Composite'));
  t.equal(nodes.length, 1, 'one Composite');
  sameBits(t, res.got, res.want, 'broadcast');
  const mf = values(mv);
  const rf = values(rv);
  sameNumbers(t, res.got, mf.map((v, i) => Math.exp(v) * rf[i % 4]! + 0.25), 'broadcast: independent values');

  // A transposed (non-contiguous) input.
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const xv = r.normal([4, 3]);
  const yv = r.normal([3, 4]);
  const res2 = await fusedAndUnfused([x, y], pt.sub(pt.exp(x.T), pt.mul(y, 2)), [xv, yv]);
  sameBits(t, res2.got, res2.want, 'transposed');
  const xf = values(xv);
  const yf = values(yv);
  sameNumbers(t, res2.got, yf.map((v, k) => Math.exp(xf[(k % 4) * 3 + Math.floor(k / 4)]!) - v * 2), 'transposed: independent values');

  // 0-d and empty.
  const a = pt.scalar('a');
  const b = pt.scalar('b');
  const res3 = await fusedAndUnfused([a, b], pt.add(pt.exp(a), pt.tanh(b)), [0.25, -2]);
  t.same(res3.got.shape, []);
  sameNumbers(t, res3.got, [Math.exp(0.25) + Math.tanh(-2)], '0-d');
  const res4 = await fusedAndUnfused([x, y], pt.add(pt.exp(x), pt.tanh(y)), [[[], []], [[], []]]);
  t.equal(res4.fused.fgraph.toposort().length, 1);
  t.same(res4.got.shape, [2, 0], 'empty');
});

t.test('what fusion must not absorb', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const r = rng(5);
  const xv = r.normal([6]);
  const yv = r.normal([6]);

  // exp(x) is also an output: it stays a node of its own.
  const e = pt.exp(x);
  const fn = await weft.compile([x, y], [pt.add(pt.mul(e, y), 1), e]);
  t.same(opNames(fn).sort(), ['Composite{add(mul(i0,i1),i2)}', 'Elemwise{exp}'].sort());
  const [o1, o2] = await fn(xv, yv);
  const xf = values(xv);
  const yf = values(yv);
  sameNumbers(t, o1!, xf.map((v, i) => Math.exp(v) * yf[i]! + 1), 'with an output as operand');
  sameNumbers(t, o2!, xf.map((v) => Math.exp(v)), 'the shared operand');

  // exp(x) read twice by the same node (two clients): an input of the fusion.
  const e2 = pt.exp(x);
  const fn2 = await weft.compile([x, y], pt.add(pt.mul(e2, e2), y));
  t.same(opNames(fn2), ['Elemwise{exp}', 'Composite{add(mul(i0,i0),i1),inplace}'], 'fused, and written over its input');
  sameNumbers(t, await fn2(xv, yv), xf.map((v, i) => Math.exp(v) * Math.exp(v) + yf[i]!), 'a twice-read operand');

  // exp(x) read by two different nodes.
  const e3 = pt.exp(x);
  const fn3 = await weft.compile([x, y], pt.mul(pt.add(e3, y), pt.sub(e3, y)));
  t.same(opNames(fn3), ['Elemwise{exp}', 'Composite{mul(add(i0,i1),sub(i0,i1)),inplace}'], 'fused, and written over its input');

  // Different broadcast patterns: exp of a row is computed once per row, not fused into the matrix loop.
  const m = pt.matrix('m');
  const row = pt.tensor({ shape: [1, null], name: 'row' });
  const fn4 = await weft.compile([m, row], pt.add(pt.exp(row), m));
  t.same(opNames(fn4), ['Elemwise{exp}', 'Elemwise{add}'], 'nothing fused');
  const fn5 = await weft.compile([m, row], pt.mul(pt.add(pt.exp(row), m), m));
  t.same(opNames(fn5), ['Elemwise{exp}', 'Composite{mul(add(i0,i1),i1)}']);

  // A single element-wise node is left as it is.
  const fn6 = await weft.compile([x], pt.exp(x));
  t.same(opNames(fn6), ['Elemwise{exp}']);
});

t.test('a long chain is split so that no fused loop takes more than 24 inputs', async (t) => {
  const xs = [...Array(40).keys()].map((i) => pt.vector(`x${i}`));
  let out = xs[0]!;
  for (let i = 1; i < xs.length; i++) out = i % 2 ? pt.sub(out, pt.exp(xs[i]!)) : pt.mul(pt.tanh(out), xs[i]!);
  const r = rng(9);
  const args = xs.map(() => r.normal([3]));
  const res = await fusedAndUnfused(xs, out, args);
  const nodes = res.fused.fgraph.toposort();
  t.ok(nodes.length >= 2 && nodes.length <= 4, `${nodes.length} fused nodes`);
  for (const n of nodes) {
    t.type(n.op, Composite);
    t.ok(n.inputs.length <= 24, `${n.inputs.length} inputs`);
  }
  sameBits(t, res.got, res.want, 'split chain');
});

t.test('a chain of thousands of nodes becomes a few fusions of at most 256 steps', async (t) => {
  const x = pt.vector('x', 'float32');
  const y = pt.vector('y', 'float32');
  let out = x;
  // y is read by every other node: it counts once among the inputs of each fusion.
  for (let i = 0; i < 3000; i++) out = i % 2 ? pt.tanh(pt.add(out, y)) : pt.sin(out);
  const args = [new Float32Array([0.5, 1, -2]), new Float32Array([0.25, -1, 3])];
  const res = await fusedAndUnfused([x, y], out, args);
  const nodes = res.fused.fgraph.toposort();
  t.ok(nodes.length <= 20, `${nodes.length} fused nodes for 4500 element-wise nodes`);
  for (const n of nodes) t.ok((n.op as Composite).composite.steps.length <= 256, 'at most 256 steps');
  sameBits(t, res.got, res.want, 'deep chain');
});

t.test('a fusion absorbs an earlier Composite, flattening its steps', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const w = pt.vector('w');
  const first = await weft.compile([x, y, w], pt.add(pt.mul(pt.exp(x), y), pt.tanh(w)));
  const op = first.fgraph.toposort()[0]!.op as Composite;
  const fn = await weft.compile([x, y, w], pt.sqrt(pt.sqr(op.call(x, y, w) as weft.pt.TensorVariable)));
  t.same(opNames(fn), ['Composite{sqrt(sqr(add(mul(exp(i0),i1),tanh(i2))))}']);
  const r = rng(2);
  const args = [r.normal([5]), r.normal([5]), r.normal([5])] as const;
  const [a, b, c] = args.map(values);
  sameNumbers(t, await fn(...args), a!.map((v, i) => Math.sqrt((Math.exp(v) * b![i]! + Math.tanh(c![i]!)) ** 2)), 'values');
});

t.test('the gradient through a fused op', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const w = pt.matrix('w');
  const out = pt.add(pt.mul(pt.exp(x), y), pt.tanh(w));
  const fn = await weft.compile([x, y, w], out);
  const op = fn.fgraph.toposort()[0]!.op as Composite;
  const r = rng(21);
  const pts = [r.normal([2, 3]), r.normal([2, 3]), r.normal([2, 3])] as const;
  await weft.verifyGrad((a, b, c) => op.call(a, b, c) as weft.pt.TensorVariable, pts);
  await weft.checkRop((a, b, c) => op.call(a, b, c) as weft.pt.TensorVariable, pts);
  t.equal(await weft.checkInferShape([x, y, w], [op.call(x, y, w) as weft.pt.TensorVariable], pts), 1);

  // Gradients of a graph whose forward part fuses, compiled in FAST_RUN: the same numbers as
  // without fusion, and the symbolic gradient (exp(x) * y).
  const cost = pt.sum(out);
  const grads = weft.grad(cost, [x, y, w]);
  const gfused = await weft.compile([x, y, w], grads);
  const gplain = await weft.compile([x, y, w], grads, { mode: UNFUSED });
  t.ok(gfused.fgraph.toposort().some((n) => n.op instanceof Composite), 'the gradient graph fuses');
  const got = await gfused(...pts);
  const want = await gplain(...pts);
  got.forEach((g, i) => sameBits(t, g, want[i]!, `gradient ${i}`));
  const [a, b, c] = pts.map(values);
  sameNumbers(t, got[0]!, a!.map((v, i) => Math.exp(v) * b![i]!), 'd/dx');
  await weft.verifyGrad((p, q, s) => pt.sum(pt.add(pt.mul(pt.exp(p), q), pt.tanh(s))), pts);
});

t.test('equal fusions share one op identity and one kernel source', async (t) => {
  const make = async (tag: string) => {
    const x = pt.vector(`x${tag}`);
    const y = pt.vector(`y${tag}`);
    const w = pt.vector(`w${tag}`);
    const fn = await weft.compile([x, y, w], pt.add(pt.mul(pt.exp(x), y), pt.tanh(w)));
    return fn.fgraph.toposort()[0]!;
  };
  const n1 = await make('1');
  const n2 = await make('2');
  const op1 = n1.op as Composite;
  const op2 = n2.op as Composite;
  t.not(op1, op2, 'two fusions make two op objects');
  t.ok(op1.equals(op2), 'equal ops');
  t.equal(op1.key, op2.key);
  t.equal(op1.source(n1), op2.source(n2), 'one kernel source object');
  // The same structure in float32 is a different fusion.
  const [x, y, w] = ['x', 'y', 'w'].map((n) => pt.vector(n, 'float32'));
  const fn = await weft.compile([x!, y!, w!], pt.add(pt.mul(pt.exp(x!), y!), pt.tanh(w!)));
  const n3 = fn.fgraph.toposort()[0]!;
  t.equal(String(n3.op), String(op1), 'printed alike');
  t.notOk(n3.op.equals(op1), 'float32 fusion differs');
  t.not((n3.op as Composite).source(n3), op1.source(n1));
});

t.test('fusion can be turned off and logs what it did', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const out = pt.add(pt.exp(x), y);
  const off = await weft.compile([x, y], out, { mode: new weft.Mode({ excluding: ['elemwise_fusion', 'inplace'] }) });
  t.same(opNames(off), ['Elemwise{exp}', 'Elemwise{add}']);
  const lines: string[] = [];
  await weft.compile([x, y], out, { mode: new weft.Mode({ verbose: true, logger: (l) => lines.push(l) }) });
  const log = lines.filter((l) => l.startsWith('rewrite elemwise_fusion'));
  t.equal(log.length, 1, 'one fusion logged');
  t.match(log[0]!, /Elemwise\{add\}[\s\S]*->[\s\S]*Composite\{add\(exp\(i0\),i1\)\}/);
  await throwsExactly(t, () => weft.compile([x], out, { mode: 'FAST' as 'FAST_RUN' }), TypeError,
    "compile (the function): unknown mode \"FAST\" (expected 'FAST_RUN', 'FAST_COMPILE', 'DebugMode', 'NanGuardMode' or a weft.Mode)");
});
