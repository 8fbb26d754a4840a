// OpFromGraph against PyTensor's own tests (tests/compile/test_builders.py, with the overrides'
// older tests test_grad_override, test_lop_override, test_rop_override): connection patterns
// through inner ops, overrides as a whole and per input/output, disconnected and undefined
// gradients that overrides report, equal overrides making equal (merging, serializable) ops, and
// JS numbers as inputs. Values are PyTensor's expected ones, at seeded random points.
import t from 'tap';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;

const one = (v: TV | TV[]): TV => (Array.isArray(v) ? v[0]! : v);
const list = (a: weft.NdArray): number[] => [weft.tolist(a)].flat(8) as number[];
const values = (n: number, seed: number): number[] => list(rng(seed).uniform([n]));
const ofgNodes = (fn: { fgraph: weft.FunctionGraph }) => fn.fgraph.toposort().filter((n) => n.op instanceof weft.OpFromGraph);

for (const inline of [false, true]) {
  const mode = inline ? 'inline' : 'not inline';

  t.test(`test_connection_pattern (pytensor tests/compile/test_builders.py), ${mode}`, async (t) => {
    const [x, y, z] = ['x', 'y', 'z'].map((n) => pt.matrix(n));
    const op1 = new weft.OpFromGraph([x!, y!, z!], [x!.mul(y!), y!.mul(z!)], { inline });
    t.same(op1.connectionPattern(), [[true, false], [true, true], [false, true]], 'basic case');

    // Inner ops that do not connect every input to every output, with several outputs.
    const [m, n, p, q] = ['m', 'n', 'p', 'q'].map((s) => pt.matrix(s));
    const [o1, o2] = op1.call(m, n, p) as TV[];
    const [out1, out2] = op1.call(o1, q, o2) as TV[];
    const op2 = new weft.OpFromGraph([m!, n!, p!, q!], [out1!, out2!], { inline });
    t.same(op2.connectionPattern(), [[true, false], [true, true], [false, true], [true, true]], 'nested OpFromGraphs');

    // The finer pattern is what grad sees: out1 does not depend on p, although p is its ancestor.
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((s) => pt.matrix(s));
    const [r1] = op2.call(a, b, c, d) as TV[];
    await throwsExactly(
      t,
      () => weft.grad(r1!.sum(), c!),
      weft.DisconnectedInputError,
      'grad was asked for the gradient with respect to c, which is not part of the graph of the cost or is used only by non-differentiable operations (pass disconnectedInputs: "ignore" or "warn" to allow this)',
    );
    t.ok(weft.grad(r1!.sum(), c!, { disconnectedInputs: 'ignore', returnDisconnected: 'disconnected' }).type instanceof weft.DisconnectedType);
    // r1 = (a * b) * d: its gradients with respect to a, b and d.
    const [ga, gb, gd] = weft.grad(r1!.sum(), [a!, b!, d!]);
    const fn = await weft.compile([a!, b!, c!, d!], [ga!, gb!, gd!], { onUnusedInput: 'ignore' });
    const [av, bv, cv, dv] = [1, 2, 3, 4].map((s) => weft.tolist(rng(s).normal([2, 2])) as number[][]);
    const [gav, gbv, gdv] = await fn(av, bv, cv, dv);
    const times = (...ms: number[][][]) => ms[0]!.map((row, i) => row.map((_, j) => ms.reduce((acc, mm) => acc * mm[i]![j]!, 1)));
    near(t, gav!, times(bv!, dv!), 1e-12, 'd/da');
    near(t, gbv!, times(av!, dv!), 1e-12, 'd/db');
    near(t, gdv!, times(av!, bv!), 1e-12, 'd/dd');

    // The older version of the test: an inner random draw's state is an input of the op (an
    // implicit one in weft, after the explicit inputs), connected to the outputs that use the draw.
    const stream = new weft.RandomStream(234);
    const u = stream.uniform([2, 2]);
    const [x3, y3] = [pt.matrix('x3'), pt.matrix('y3')];
    const op3 = new weft.OpFromGraph([x3, y3], [x3.add(u), y3.add(3), u.add(3)], { inline });
    t.same(
      op3.connectionPattern().map((row) => row.slice(0, 3)),
      [[true, false, false], [false, true, false], [true, false, true]],
      'the draw state connects to the outputs that use the draw',
    );
  });

  t.test(`test_grad_override (pytensor tests/compile/test_builders.py), ${mode}: as a function, an OpFromGraph, a list`, async (t) => {
    const [x, y] = [pt.vector('x'), pt.vector('y')];
    const go = ([xi, yi]: readonly TV[], _outs: readonly TV[], [g]: readonly TV[]) => [g!.mul(yi!).mul(2), g!.mul(xi!).mul(1.5)];
    const dedz = pt.vector('dedz');
    const zOut = pt.vector('z');
    const opMulGrad = new weft.OpFromGraph([x, y, zOut, dedz], go([x, y], [zOut], [dedz]), { inline });
    const opMul = new weft.OpFromGraph([x, y], [x.mul(y)], { inline, lopOverrides: go });
    const opMul2 = new weft.OpFromGraph([x, y], [x.mul(y)], { inline, lopOverrides: opMulGrad });
    const [xx, yy] = [pt.vector('xx'), pt.vector('yy')];
    const [xv, yv] = [values(16, 1), values(16, 2)];
    for (const op of [opMul, opMul2]) {
      const [dx, dy] = weft.grad(one(op.call(xx, yy)).sum(), [xx, yy]);
      const [dxv, dyv] = await (await weft.compile([xx, yy], [dx!, dy!]))(xv, yv);
      near(t, dxv!, yv.map((v) => v * 2), 1e-12, 'dx = 2 y');
      near(t, dyv!, xv.map((v) => v * 1.5), 1e-12, 'dy = 1.5 x');
    }

    // The list case: the third gradient is the default one.
    const [w, b] = [pt.vector('w'), pt.vector('b')];
    const go1 = ([, wi]: readonly TV[], _o: readonly TV[], [g]: readonly TV[]) => g!.mul(wi!).mul(2);
    const go2 = ([xi]: readonly TV[], _o: readonly TV[], [g]: readonly TV[]) => g!.mul(xi!).mul(1.5);
    const opLinear = new weft.OpFromGraph([x, w, b], [x.mul(w).add(b)], { inline, lopOverrides: [go1, go2, null] });
    const [ww, bb] = [pt.vector('ww'), pt.vector('bb')];
    const zz = one(opLinear.call(xx, ww, bb)).sum();
    const grads = weft.grad(zz, [xx, ww, bb]);
    const [wv, bv] = [values(16, 3), values(16, 4)];
    const [dxv, dwv, dbv] = await (await weft.compile([xx, ww, bb], grads))(xv, wv, bv);
    near(t, dxv!, wv.map((v) => v * 2), 1e-12, 'dx = 2 w (go1)');
    near(t, dwv!, xv.map((v) => v * 1.5), 1e-12, 'dw = 1.5 x (go2)');
    near(t, dbv!, bv.map(() => 1), 1e-12, 'db = 1 (the inner graph)');

    // NullType and DisconnectedType markers (a fake override, so a fake connection pattern too).
    const opLinear2 = new weft.OpFromGraph([x, w, b], [x.mul(w).add(b)], {
      inline,
      lopOverrides: [go1, new weft.NullType('no gradient for w here').makeVariable(), weft.disconnected()],
      connectionPattern: [[true], [true], [false]],
    });
    const zz2 = one(opLinear2.call(xx, ww, bb)).sum();
    const [dx2, dw2, db2] = weft.grad(zz2, [xx, ww, bb], { returnDisconnected: 'disconnected', disconnectedInputs: 'ignore', nullGradients: 'return' });
    t.ok(dx2!.type instanceof weft.TensorType && dx2!.ndim === 1, 'dx: a vector');
    t.ok(dw2!.type instanceof weft.NullType, 'dw: NullType');
    t.ok(db2!.type instanceof weft.DisconnectedType, 'db: DisconnectedType');
    near(t, await run([xx, ww, bb], dx2!, [xv, wv, bv]), wv.map((v) => v * 2), 1e-12, 'dx = 2 w');
    await throwsExactly(
      t,
      () => weft.grad(zz2, ww),
      weft.NullGradientError,
      `grad: the gradient with respect to ww is needed but the gradient of OpFromGraph{OpFromGraph} with respect to input 1 is undefined: no gradient for w here`,
    );
  });

  t.test(`test_lop_override (pytensor tests/compile/test_builders.py), ${mode}`, async (t) => {
    const x = pt.vector('x');
    const y = pt.constant(1).div(x.neg().exp().add(1));
    const lopOv = (_inps: readonly TV[], [yi]: readonly TV[], [dedy]: readonly TV[]) => [yi!.mul(2).mul(pt.constant(1).sub(yi!)).mul(dedy!)];
    const [yIn, dedy] = [pt.vector('y_'), pt.vector('dedy')];
    const opLopOv = new weft.OpFromGraph([x, yIn, dedy], [yIn.mul(2).mul(pt.constant(1).sub(yIn)).mul(dedy)], { inline });
    const xx = pt.vector('xx');
    const gyy1 = weft.grad(pt.sigmoid(xx).sum(), xx).mul(2);
    const xval = values(32, 5);
    const sig = xval.map((v) => 1 / (1 + Math.exp(-v)));
    for (const ov of [lopOv, opLopOv]) {
      const op = new weft.OpFromGraph([x], [y], { inline, lopOverrides: ov });
      const gyy2 = weft.grad(one(op.call(xx)).sum(), xx);
      const [y1, y2] = await (await weft.compile([xx], [gyy1, gyy2]))(xval);
      near(t, y1!, sig.map((s) => 2 * s * (1 - s)), 1e-12, '2 * grad of sigmoid');
      near(t, y2!, list(y1!), 1e-12, 'the override gives the same');
    }
  });

  t.test(`test_rop_override (pytensor tests/compile/test_builders.py), ${mode}, and the list case`, async (t) => {
    const [x, y] = [pt.vector('x'), pt.vector('y')];
    const ro = ([xi, yi]: readonly TV[], [u, v]: readonly TV[]) => [u!.mul(yi!).mul(2).add(xi!.mul(v!).mul(1.5))];
    const [u, v] = [pt.vector('u'), pt.vector('v')];
    const opMulRop = new weft.OpFromGraph([x, y, u, v], ro([x, y], [u, v]), { inline });
    const opMul = new weft.OpFromGraph([x, y], [x.mul(y)], { inline, ropOverrides: ro });
    const opMul2 = new weft.OpFromGraph([x, y], [x.mul(y)], { inline, ropOverrides: opMulRop });
    const [xx, yy, du, dv] = ['xx', 'yy', 'du', 'dv'].map((n) => pt.vector(n));
    const vals = [0, 1, 2, 3].map((k) => values(32, 10 + k)) as [number[], number[], number[], number[]];
    const expected = vals[0]!.map((_, i) => vals[0]![i]! * vals[3]![i]! * 1.5 + vals[1]![i]! * vals[2]![i]! * 2);
    for (const op of [opMul, opMul2]) {
      const dw = weft.Rop(one(op.call(xx, yy)), [xx!, yy!], [du!, dv!]) as TV;
      near(t, await run([xx!, yy!, du!, dv!], dw, vals), expected, 1e-12, String(op.options.ropOverrides === opMulRop ? 'an OpFromGraph' : 'a function'));
    }
    // The list case (a TODO in PyTensor's test): one entry per output, null keeps the inner Rop.
    const opTwo = new weft.OpFromGraph([x, y], [x.mul(y), x.add(y)], { inline, ropOverrides: [null, ([, yi], [ui]) => ui!.mul(yi!)] });
    const [p0, p1] = weft.Rop(opTwo.call(xx, yy) as TV[], [xx!, yy!], [du!, dv!]) as TV[];
    const fn = await weft.compile([xx!, yy!, du!, dv!], [p0!, p1!]);
    const [p0v, p1v] = await fn(...vals);
    near(t, p0v!, vals[0]!.map((_, i) => vals[2]![i]! * vals[1]![i]! + vals[0]![i]! * vals[3]![i]!), 1e-12, 'output 0: the inner Rop of x*y');
    near(t, p1v!, vals[0]!.map((_, i) => vals[2]![i]! * vals[1]![i]!), 1e-12, 'output 1: the override u*y');
  });

  t.test(`test_connection_pattern_override (pytensor tests/compile/test_builders.py), ${mode}`, async (t) => {
    const [x, y] = [pt.vector('x', 'float32'), pt.vector('y', 'float32')];
    // x is unused, but we know how to backpropagate for it; we do not care about y's gradient.
    const op = new weft.OpFromGraph([x, y], [y.add(pt.round(y))], {
      inline,
      lopOverrides: (_inputs, _outputs, [g]) => [g!, weft.disconnected()],
      connectionPattern: [[true], [false]],
    });
    const c = one(op.call(x, y));
    const g1 = weft.grad(c.sum(), x);
    const ones = new Float32Array(5).fill(1);
    const out = await run([x, y], g1, [ones, ones]);
    near(t, out, [1, 1, 1, 1, 1], 0);
  });
}

t.test('lopOverrides reporting a gradient disconnected or undefined (issue 11 item 4; test_grad_override, test_connection_pattern_override)', async (t) => {
  const [x, y] = [pt.vector('x'), pt.vector('y')];
  const [xx, yy] = [pt.vector('xx'), pt.vector('yy')];
  const message = (v: string) =>
    `grad was asked for the gradient with respect to ${v}, which is not part of the graph of the cost or is used only by non-differentiable operations (pass disconnectedInputs: "ignore" or "warn" to allow this)`;
  // No connection pattern given: the inner graph connects y, the override says it is not.
  const forms: Array<[string, weft.LopOverride]> = [
    ['null from a function', (_i, _o, [g]) => [g!.mul(2), null]],
    ['disconnected() from a function', (_i, _o, [g]) => [g!.mul(2), weft.disconnected()]],
    ['a disconnected() marker in a list', [(_i, _o, [g]) => g!.mul(2), weft.disconnected()]],
  ];
  for (const [what, lopOverrides] of forms) {
    const op = new weft.OpFromGraph([x, y], [x.mul(y)], { lopOverrides });
    const cost = one(op.call(xx, yy)).sum();
    await throwsExactly(t, () => weft.grad(cost, [xx, yy]), weft.DisconnectedInputError, message('yy'), `${what}: disconnectedInputs 'raise'`);
    const [gx, gy] = weft.grad(cost, [xx, yy], { disconnectedInputs: 'ignore', returnDisconnected: 'disconnected' });
    t.ok(gy!.type instanceof weft.DisconnectedType, `${what}: returnDisconnected 'disconnected'`);
    near(t, await run([xx, yy], gx!, [[1, 2], [3, 4]]), [2, 2], 0, `${what}: the other gradient`);
    t.same(weft.grad(cost, [xx, yy], { disconnectedInputs: 'ignore', returnDisconnected: 'null' })[1], null, `${what}: returnDisconnected 'null'`);
    near(t, await run([xx, yy], weft.grad(cost, yy, { disconnectedInputs: 'ignore' }), [[1, 2], [3, 4]]), [0, 0], 0, `${what}: zeros when ignored`);
  }
  // Disconnected through the override only: another path still connects the input.
  const op = new weft.OpFromGraph([x, y], [x.mul(y)], { lopOverrides: (_i, _o, [g]) => [g!, null] });
  const g2 = weft.grad(one(op.call(xx, yy)).sum().add(yy.sum().mul(3)), yy);
  near(t, await run([xx, yy], g2, [[1, 2], [3, 4]]), [3, 3], 0, 'only the other path counts');
  // Upstream of a disconnected input: disconnected too, not zeros.
  const w = pt.vector('w');
  await throwsExactly(t, () => weft.grad(one(op.call(xx, w.exp())).sum(), w), weft.DisconnectedInputError, message('w'));

  // A NullType marker: an error when the gradient is asked for, and returned with nullGradients.
  const undefinedY = new weft.OpFromGraph([x, y], [x.mul(y)], { lopOverrides: (_i, _o, [g]) => [g!, new weft.NullType('y is a label').makeVariable()] });
  const cost = one(undefinedY.call(xx, w.exp())).sum();
  const why = 'the gradient of OpFromGraph{OpFromGraph} with respect to input 1 is undefined: y is a label';
  await throwsExactly(t, () => weft.grad(cost, [xx, w]), weft.NullGradientError, `grad: the gradient with respect to w is needed but ${why}`);
  const [gx, gw] = weft.grad(cost, [xx, w], { nullGradients: 'return' });
  t.ok(gw!.type instanceof weft.NullType && (gw!.type as weft.NullType).why === why, 'the NullType reaches w through exp');
  near(t, await run([xx, w], gx!, [[1, 2], [0, 0]]), [1, 1], 0, 'the other gradient is defined');
});

t.test('test_pullback_disconnected_output_grad (pytensor tests/compile/test_builders.py)', async (t) => {
  const [x, y] = [pt.scalar('x'), pt.scalar('y')];
  const point = list(rng(594).normal([2]));
  const out1 = x.add(y);
  const out2 = x.mul(y);
  const op = new weft.OpFromGraph([x, y], [out1, out2, out1.mul(out2)]);
  const outs = (a: TV, b: TV) => op.call(a, b) as TV[];
  await weft.verifyGrad((a, b) => pt.add(...outs(a!, b!)), point, { rng: 594 });
  await weft.verifyGrad((a, b) => pt.add(...outs(a!, b!).slice(0, -1)), point, { rng: 594 });
  await weft.verifyGrad((a, b) => pt.add(...outs(a!, b!).slice(1)), point, { rng: 594 });
  await weft.verifyGrad((a, b) => pt.add(outs(a!, b!)[0]!, outs(a!, b!)[2]!), point, { rng: 594 });
  for (let k = 0; k < 3; k++) await weft.verifyGrad((a, b) => outs(a!, b!)[k]!, point, { rng: 594 });

  // Two independent outputs: x**2 depends only on x, y**3 only on y.
  const op2 = new weft.OpFromGraph([x, y], [x.sqr(), y.mul(y).mul(y)]);
  const [sq, cube] = op2.call(x, y) as TV[];
  const warned: unknown[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => warned.push(args);
  try {
    t.ok(weft.grad(sq!, y, { returnDisconnected: 'disconnected', disconnectedInputs: 'warn' }).type instanceof weft.DisconnectedType, 'd(x**2)/dy: disconnected');
    t.ok(weft.grad(cube!, x, { returnDisconnected: 'disconnected', disconnectedInputs: 'warn' }).type instanceof weft.DisconnectedType, 'd(y**3)/dx: disconnected');
  } finally {
    console.warn = warn;
  }
  t.equal(warned.length, 2, 'with a warning each');
  t.equal(weft.tolist(await run([x, y], weft.grad(sq!, x), [3, 2])), 6, 'd/dx x**2 = 2x');
  t.equal(weft.tolist(await run([x, y], weft.grad(cube!, y), [3, 2])), 12, 'd/dy y**3 = 3y**2');
});

t.test('test_equality_callable_overrides (pytensor tests/compile/test_builders.py)', async (t) => {
  const [x, y] = [pt.scalar('x'), pt.scalar('y')];
  const e = x.add(y);
  const make = (options: weft.OpFromGraphOptions) => new weft.OpFromGraph([x, y], [e], options);
  const plain = make({});
  const withLop = make({ lopOverrides: (_i, _o, g) => [g[0]!, g[0]!] });
  t.notOk(plain.equals(withLop), 'an override vs none');
  t.ok(withLop.equals(make({ lopOverrides: (_i, _o, g) => [g[0]!, g[0]!] })), 'structurally identical functions: equal');
  t.equal(withLop.key, make({ lopOverrides: (_i, _o, g) => [g[0]!, g[0]!] }).key, 'and equal keys (hashes)');
  t.notOk(withLop.equals(make({ lopOverrides: (_i, _o, g) => [g[0]!.mul(2), g[0]!] })), 'structurally different: not equal');
  const discY = make({ lopOverrides: (_i, _o, g) => [g[0]!, weft.disconnected()] });
  const discX = make({ lopOverrides: (_i, _o, g) => [weft.disconnected(), g[0]!] });
  t.notOk(discY.equals(discX), 'disconnected for different inputs: not equal');
  t.ok(discY.equals(make({ lopOverrides: (_i, _o, g) => [g[0]!, weft.disconnected()] })), 'the same disconnected pattern: equal');
  const allDisc = make({ lopOverrides: () => [weft.disconnected(), weft.disconnected()] });
  t.notOk(allDisc.equals(plain), 'all disconnected is still an override');
  t.notOk(allDisc.equals(discY));
  const withRop = make({ ropOverrides: (_i, p) => [p[0]!.add(p[1]!)] });
  t.ok(withRop.equals(make({ ropOverrides: (_i, p) => [p[0]!.add(p[1]!)] })), 'Rop overrides likewise');
  t.notOk(withRop.equals(plain));
  // Other variables with the same structure make the same op.
  const [a, b] = [pt.scalar('a'), pt.scalar('b')];
  t.ok(withLop.equals(new weft.OpFromGraph([a, b], [a.add(b)], { lopOverrides: (_i, _o, g) => [g[0]!, g[0]!] })), 'whatever the variables are called');
});

t.test('test_equality_list_overrides (pytensor tests/compile/test_builders.py)', async (t) => {
  const [x, y] = [pt.scalar('x'), pt.scalar('y')];
  const e = x.add(y);
  const scaleGrad = (_i: readonly TV[], _o: readonly TV[], g: readonly TV[]) => g[0]!.mul(2);
  const scaleGrad3x = (_i: readonly TV[], _o: readonly TV[], g: readonly TV[]) => g[0]!.mul(3);
  const op1 = new weft.OpFromGraph([x, y], [e], { lopOverrides: [scaleGrad, null] });
  t.ok(op1.equals(new weft.OpFromGraph([x, y], [e], { lopOverrides: [scaleGrad, null] })), 'equal lists: equal');
  t.notOk(op1.equals(new weft.OpFromGraph([x, y], [e], { lopOverrides: [scaleGrad3x, null] })), 'a different entry: not equal');
  t.notOk(op1.equals(new weft.OpFromGraph([x, y], [e], { lopOverrides: [null, scaleGrad] })), 'the position of null matters');
  // A list whose traces equal a function's trace makes the same op.
  t.ok(op1.equals(new weft.OpFromGraph([x, y], [e], { lopOverrides: [(_i, _o, g) => g[0]!.mul(2), null] })), 'another function, the same graph');
});

t.test('test_merge_identical_ofgs (pytensor tests/compile/test_builders.py), with equal overrides', async (t) => {
  const [x, y] = [pt.scalar('x'), pt.scalar('y')];
  const e = x.add(y.mul(x));
  const lop = () => (_i: readonly TV[], _o: readonly TV[], [g]: readonly TV[]) => [g!.mul(2), g!.mul(3)];
  const op1 = new weft.OpFromGraph([x, y], [e], { lopOverrides: lop() });
  const op2 = new weft.OpFromGraph([x, y], [e], { lopOverrides: lop() });
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => pt.scalar(n));
  const same = await weft.compile([a!, b!], [one(op1.call(a, b)), one(op2.call(a, b))], { workers: 0 });
  t.equal(ofgNodes(same).length, 1, 'two applications to the same inputs merge');
  const differ = await weft.compile([a!, b!, c!, d!], [one(op1.call(a, b)), one(op2.call(c, d))], { workers: 0 });
  t.equal(ofgNodes(differ).length, 2, 'to different inputs they stay two');
  t.same((await differ(2, 3, 4, 5)).map((r) => weft.tolist(r)), [2 + 3 * 2, 4 + 5 * 4]);
  // Their gradients, through the (equal) overrides, merge too.
  const [ga, gb] = weft.grad(one(op1.call(a, b)).add(one(op2.call(a, b))), [a!, b!]);
  const grads = await weft.compile([a!, b!], [ga!, gb!], { workers: 0 });
  t.same((await grads(2, 3)).map((r) => weft.tolist(r)), [4, 6], '2 + 2 and 3 + 3');
});

t.test('traced overrides serialize, with their disconnected and undefined slots', async (t) => {
  const [x, y, z] = [pt.vector('x'), pt.vector('y'), pt.vector('z')];
  const op = new weft.OpFromGraph([x, y, z], [x.mul(y).add(z)], {
    name: 'marked',
    lopOverrides: [(_i, _o, [g]) => g!.mul(5), new weft.NullType('z is a label').makeVariable(), null],
    ropOverrides: (_i, [u, v, w]) => [u!.add(v!).add(w!)],
  });
  const [xx, yy, zz] = [pt.vector('xx'), pt.vector('yy'), pt.vector('zz')];
  const copy = weft.deserialize(weft.serialize(one(op.call(xx, yy, zz))));
  if (copy.kind !== 'variables') throw new Error('expected a variables document');
  const loaded = copy.outputs[0]!.owner!.op as weft.OpFromGraph;
  t.not(loaded, op, 'a new op');
  t.ok(loaded.equals(op), 'equal to the original, overrides included');
  const cost = one(loaded.call(xx, yy, zz)).sum();
  const [gx, gy, gz] = weft.grad(cost, [xx, yy, zz], { nullGradients: 'return' });
  t.ok(gy!.type instanceof weft.NullType, 'the undefined slot');
  const [u, v, w] = [pt.vector('u'), pt.vector('v'), pt.vector('w')];
  const jvp = weft.Rop(one(loaded.call(xx, yy, zz)), [xx, yy, zz], [u, v, w]) as TV;
  const fn = await weft.compile([xx, yy, zz, u, v, w], [gx!, gz!, jvp], { onUnusedInput: 'ignore' });
  const [gxv, gzv, jv] = await fn([1, 2], [3, 4], [5, 6], [1, 1], [2, 2], [4, 8]);
  near(t, gxv!, [5, 5], 0, 'the traced slot');
  near(t, gzv!, [1, 1], 0, 'the default slot');
  near(t, jv!, [7, 11], 0, 'the traced Rop');
});

t.test('bad overrides fail at construction, naming the op', async (t) => {
  const [x, y] = [pt.vector('x'), pt.vector('y')];
  const make = (options: weft.OpFromGraphOptions) => () => new weft.OpFromGraph([x, y], [x.mul(y)], { name: 'f', ...options });
  await throwsExactly(t, make({ lopOverrides: [null] }), TypeError, 'OpFromGraph{f}: lopOverrides as a list must have one entry per input (2), it has 1');
  await throwsExactly(t, make({ lopOverrides: () => [null] }), TypeError, 'OpFromGraph{f}: lopOverrides returned 1 derivatives for 2 inputs');
  await throwsExactly(
    t,
    make({ lopOverrides: [x, null] }),
    TypeError,
    'OpFromGraph{f}: lopOverrides entry 0 is x; a list holds functions, OpFromGraph ops, null, or disconnected()/NullType markers',
  );
  await throwsExactly(
    t,
    make({ lopOverrides: (_i, _o, [g]) => [Object.assign(g!.sum(), { name: 'total' }), g!] }),
    TypeError,
    'OpFromGraph{f}: lopOverrides gives total (TensorType(float64, ())) for input 0, which has 1 dimensions (TensorType(float64, (?,)))',
  );
  const w = pt.vector('w');
  await throwsExactly(
    t,
    make({ lopOverrides: (_i, _o, [g]) => [g!.mul(w), g!] }),
    TypeError,
    'OpFromGraph{f}: lopOverrides computes with w (TensorType(float64, (?,))), which is not among the arguments it was given; pass it to the op as an input',
  );
  await throwsExactly(
    t,
    make({ ropOverrides: () => { throw new Error('boom'); } }),
    TypeError,
    'OpFromGraph{f}: ropOverrides failed when the function was traced on placeholder variables at construction: boom',
  );
  const wrongArity = new weft.OpFromGraph([x, y], [x.add(y)]);
  await throwsExactly(t, make({ lopOverrides: wrongArity }), TypeError, 'OpFromGraph{f}: lopOverrides as an OpFromGraph must take 4 inputs (2 + 1 + 1), it takes 2');
  await throwsExactly(
    t,
    make({ connectionPattern: [[true, false], [true]] }),
    TypeError,
    'OpFromGraph{f}: connectionPattern must have one row per input (2) and one boolean per output in each (1)',
  );
});

t.test('test_explicit_input_from_constant (pytensor tests/compile/test_builders.py), as JS numbers (issue 11 item 10)', async (t) => {
  const [x, y] = [pt.scalar('x'), pt.scalar('y')];
  const op = new weft.OpFromGraph([x, y], [x.add(y)], { name: 'add' });
  const out = one(op.call(x, 1));
  t.equal(out.owner!.inputs[1]!.type.toString(), 'TensorType(float64, ())', 'the number takes the input dtype');
  t.equal(weft.tolist(await run([x], out, [5])), 6);
  t.equal(weft.tolist(await run([x], one(op.call(x, x)), [5])), 10);
  t.equal(weft.tolist(await run([], one(op.call(1, 2.5)), [])), 3.5, 'two numbers');
  // Other dtypes and nested arrays.
  const v32 = pt.vector('v', 'float32');
  const op32 = new weft.OpFromGraph([v32], [v32.mul(2)], { name: 'twice32' });
  const o32 = one(op32.call([1, 2, 3]));
  t.equal(o32.dtype, 'float32');
  near(t, await run([], o32, []), [2, 4, 6], 0);
  const i = pt.scalar('i', 'int32');
  const opInt = new weft.OpFromGraph([i], [i.add(1)], { name: 'inc' });
  t.equal(weft.tolist(await run([], one(opInt.call(41)), [])), 42);
  await throwsExactly(t, () => opInt.call(1.5), TypeError, "OpFromGraph{inc}: input 0 (1.5) does not fit the graph's TensorType(int32, ())");
  await throwsExactly(t, () => opInt.call(2 ** 40), TypeError, "OpFromGraph{inc}: input 0 (1099511627776) does not fit the graph's TensorType(int32, ())");
  await throwsExactly(
    t,
    () => op32.call(3),
    TypeError,
    'OpFromGraph{twice32}: input 0 (TensorConstant{3}) has type TensorType(float32, ()), the graph expects TensorType(float32, (?,))',
  );
});
