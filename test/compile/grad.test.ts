// Differentiation: grad (single and list wrt, considerConstant, knownGrads, disconnected inputs,
// integer wrt, undefined gradients), Lop, Rop (against finite differences), jacobian, hessian
// and second derivatives, each checked against hand-derived formulas.
import t from 'tap';
import ndarray from 'ndarray';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;

const values = (a: weft.NdArray): number[] => [weft.tolist(a)].flat(8) as number[];

/** out = x + 2 * y element-wise; its gradient with respect to y is declared undefined. */
class AddTwiceNoGradY extends weft.Op {
  override makeNode(x: unknown, y: unknown): weft.Apply {
    const xv = pt.asTensorVariable(x as weft.TensorLike);
    const yv = pt.asTensorVariable(y as weft.TensorLike);
    return new weft.Apply(this, [xv, yv], [xv.type.makeVariable()]);
  }
  override perform(_node: weft.Apply, [x, y]: readonly weft.NdArray[]): weft.NdArray[] {
    const xs = values(x!);
    const ys = values(y!);
    return [ndarray(Float64Array.from(xs, (v, i) => v + 2 * ys[i]!), [...x!.shape])];
  }
  override grad(_inputs: readonly weft.Variable[], [gz]: readonly weft.Variable[]): weft.Variable[] {
    return [gz!, weft.gradUndefined(this, 1, 'y is a label')];
  }
}

t.test('grad: one wrt gives one gradient, a list gives a list', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const cost = pt.sum(pt.mul(x, x, y));
  cost.name = 'c';
  const gx = weft.grad(cost, x);
  t.notOk(Array.isArray(gx));
  t.equal(gx.name, '(dc/dx)', 'named after the cost and the variable');
  near(t, await run([x, y], gx, [[1, 2, 3], [4, 5, 6]]), [8, 20, 36], 1e-12, 'd/dx sum(x*x*y) = 2xy');
  const gs = weft.grad(cost, [x, y]);
  t.ok(Array.isArray(gs));
  t.equal(gs.length, 2);
  const fn = await weft.compile([x, y], gs);
  const [dx, dy] = await fn([1, 2, 3], [4, 5, 6]);
  near(t, dx!, [8, 20, 36]);
  near(t, dy!, [1, 4, 9], 1e-12, 'd/dy = x^2');
  t.same(weft.grad(cost, []), [], 'an empty list');
});

t.test('grad: elementary functions against their derivatives', async (t) => {
  const x = pt.vector('x');
  const pts = [0.3, -1.2, 2.5];
  const cases: Array<[string, (v: TV) => TV, (v: number) => number]> = [
    ['exp', (v) => pt.exp(v), Math.exp],
    ['log', (v) => pt.log(pt.abs(v)), (v) => 1 / v],
    ['sin', (v) => pt.sin(v), Math.cos],
    ['tanh', (v) => pt.tanh(v), (v) => 1 - Math.tanh(v) ** 2],
    ['sigmoid', (v) => pt.sigmoid(v), (v) => Math.exp(-v) / (1 + Math.exp(-v)) ** 2],
    ['x^3 / 3', (v) => pt.trueDiv(pt.pow(v, 3), 3), (v) => v * v],
    ['mean of x^2', (v) => pt.mul(v, v).mean().mul(3), (v) => 2 * v],
  ];
  for (const [name, f, df] of cases) {
    const g = weft.grad(f(x).sum(), x);
    near(t, await run([x], g, [pts]), pts.map(df), 1e-12, name);
  }
});

t.test('grad: max sends the gradient to the maximum, reductions over an axis broadcast it back', async (t) => {
  const m = pt.matrix('m');
  const gmax = weft.grad(pt.max(m), m);
  near(t, await run([m], gmax, [[[1, 5], [3, 2]]]), [[0, 1], [0, 0]]);
  const w = pt.matrix('w');
  const g = weft.grad(pt.sum(pt.mul(pt.sum(m, { axis: 1 }), [1, 10])), m);
  near(t, await run([m], g, [[[1, 5, 0], [3, 2, 0]]]), [[1, 1, 1], [10, 10, 10]]);
  const gt = weft.grad(pt.sum(pt.mul(m.T, w)), m);
  near(t, await run([m, w], gt, [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]), [[5, 7], [6, 8]], 1e-12, 'through a transpose');
});

t.test('grad: the gradient has the dtype of its variable', async (t) => {
  const x = pt.vector('x', 'float32');
  const cost = pt.sum(pt.cast(x, 'float64').mul(pt.cast(x, 'float64')));
  const g = weft.grad(cost, x);
  t.equal(g.dtype, 'float32', 'a float64 computation gives a float32 variable a float32 gradient');
  const out = await run([x], g, [new Float32Array([1.5, -2])]);
  t.equal(out.dtype, 'float32');
  near(t, out, [3, -4]);
  const c32 = pt.sum(pt.mul(x, 2.5));
  t.equal(c32.dtype, 'float32', 'a weak literal keeps float32');
  t.equal(weft.grad(c32, x).dtype, 'float32');
});

t.test('grad: with respect to an intermediate variable, a shared variable, or the cost itself', async (t) => {
  const x = pt.vector('x');
  const a = pt.exp(x);
  const cost = pt.sum(pt.mul(a, a));
  near(t, await run([x], weft.grad(cost, a), [[0, 1]]), [2, 2 * Math.E], 1e-12, 'd/da sum(a^2) = 2a');
  const [ga, gx] = weft.grad(cost, [a, x]);
  const fn = await weft.compile([x], [ga!, gx!]);
  const [va, vx] = await fn([0, 1]);
  near(t, va!, [2, 2 * Math.E]);
  near(t, vx!, [2, 2 * Math.E ** 2], 1e-12, 'd/dx sum(e^2x) = 2 e^2x, through a');
  const w = weft.shared([1, 2, 3], { name: 'w' });
  const gw = weft.grad(pt.sum(pt.mul(w, x)), w);
  near(t, await run([x], gw, [[4, 5, 6]]), [4, 5, 6], 0, 'a shared variable');
  const c = pt.sum(x);
  near(t, await run([x], weft.grad(c, c), [[4, 5]]), 1, 0, 'dc/dc = 1');
});

t.test('grad: considerConstant stops the gradient at a variable', async (t) => {
  const x = pt.vector('x');
  const e = pt.exp(x);
  const cost = pt.sum(pt.mul(x, e));
  const full = weft.grad(cost, x);
  const blocked = weft.grad(cost, x, { considerConstant: [e] });
  const v = [0.5, -1];
  near(t, await run([x], full, [v]), v.map((a) => Math.exp(a) * (1 + a)), 1e-12, 'd/dx x e^x = e^x (1 + x)');
  near(t, await run([x], blocked, [v]), v.map(Math.exp), 1e-12, 'with e^x constant: e^x');
  const y = pt.vector('y');
  const g = weft.grad(pt.sum(pt.mul(x, y)), [x, y], { considerConstant: [y], disconnectedInputs: 'ignore' });
  near(t, await run([x, y], g[1]!, [[1, 2], [3, 4]]), [0, 0], 0, 'a wrt that is itself constant gets zeros');
  const asConstant = weft.grad(cost, x, { considerConstant: [cost], disconnectedInputs: 'ignore' });
  near(t, await run([x], asConstant, [v]), [0, 0], 0, 'a constant cost passes no gradient');
  await throwsExactly(
    t,
    () => weft.grad(null, x, { knownGrads: [[e, pt.vector('ge')]], considerConstant: [e] }),
    weft.DisconnectedInputError,
    'grad was asked for the gradient with respect to x, which is not part of the graph of the cost or is used only by ' +
      'non-differentiable operations (pass disconnectedInputs: "ignore" or "warn" to allow this)',
    'nor does a constant with a known gradient',
  );
});

t.test('grad: knownGrads, alone (no cost) and with a cost', async (t) => {
  const x = pt.vector('x');
  const y = pt.exp(x);
  const gy = pt.vector('gy');
  const g = weft.grad(null, x, { knownGrads: [[y, gy]] });
  near(t, await run([x, gy], g, [[0, 1], [2, 3]]), [2, 3 * Math.E], 1e-12, 'gy * e^x');
  const g2 = weft.grad(null, x, { knownGrads: new Map([[y, gy]]) });
  near(t, await run([x, gy], g2, [[0, 1], [2, 3]]), [2, 3 * Math.E], 1e-12, 'as a Map');
  const cost = pt.sum(pt.mul(x, 10));
  const both = weft.grad(cost, x, { knownGrads: [[y, gy]] });
  near(t, await run([x, gy], both, [[0, 1], [2, 3]]), [12, 10 + 3 * Math.E], 1e-12, 'the known gradient adds to the cost\'s');
  await throwsExactly(t, () => weft.grad(null, x), Error, 'grad: give a cost or knownGrads');
  await throwsExactly(
    t,
    () => weft.grad(null, x, { knownGrads: [[y, pt.matrix('gm')]] }),
    TypeError,
    'grad: knownGrads[0] (gm, TensorType(float64, (?, ?))) cannot be the gradient of Elemwise{exp}.out (TensorType(float64, (?,))): ' +
      'it has 2 dimensions where Elemwise{exp}.out has 1',
  );
  await throwsExactly(
    t,
    () => weft.grad(null, x, { knownGrads: [[y, pt.vector('gi', 'int32')]] }),
    TypeError,
    'grad: knownGrads[0] (gi, TensorType(int32, (?,))) cannot be the gradient of Elemwise{exp}.out (TensorType(float64, (?,))): ' +
      'a gradient must have a float dtype',
  );
  const fixed = pt.tensor({ shape: [3], name: 'fixed' });
  await throwsExactly(
    t,
    () => weft.grad(null, fixed, { knownGrads: [[fixed, pt.tensor({ shape: [2], name: 'g2' })]] }),
    TypeError,
    'grad: knownGrads[0] (g2, TensorType(float64, (2,))) cannot be the gradient of fixed (TensorType(float64, (3,))): their static shapes differ',
  );
  await throwsExactly(
    t,
    () => weft.grad(null, x, { knownGrads: [[y, 3 as never]] }),
    TypeError,
    'grad: knownGrads[0] must be a tensor variable, got 3',
  );
  const g32 = weft.grad(null, x, { knownGrads: [[y, pt.vector('g32', 'float32')]] });
  t.equal(g32.dtype, 'float64', 'a float32 known gradient is fine, and the result has x\'s dtype');
});

t.test('grad: disconnected inputs', async (t) => {
  const x = pt.vector('x');
  const z = pt.vector('z');
  const cost = pt.sum(pt.exp(x));
  await throwsExactly(
    t,
    () => weft.grad(cost, [x, z]),
    weft.DisconnectedInputError,
    'grad was asked for the gradient with respect to z, which is not part of the graph of the cost or is used only by ' +
      'non-differentiable operations (pass disconnectedInputs: "ignore" or "warn" to allow this)',
  );
  const warnings: unknown[][] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void warnings.push(args);
  let warned: Array<TV | null>;
  try {
    warned = weft.grad(cost, [x, z], { disconnectedInputs: 'warn' });
  } finally {
    console.warn = warn;
  }
  t.same(warnings, [
    [
      'weft: grad was asked for the gradient with respect to z, which is not part of the graph of the cost or is used only by ' +
        'non-differentiable operations (pass disconnectedInputs: "ignore" or "warn" to allow this)',
    ],
  ]);
  near(t, await run([z], warned[1]!, [[1, 2, 3]]), [0, 0, 0], 0, 'warn: zeros of its shape');
  const ignored = weft.grad(cost, z, { disconnectedInputs: 'ignore' });
  const zeros = await run([z], ignored, [[1, 2]]);
  near(t, zeros, [0, 0], 0, 'ignore: zeros');
  t.equal(zeros.dtype, 'float64');
  // Used only through a comparison: connected, with a zero gradient (as PyTensor), not an error.
  const through = pt.sum(pt.cast(pt.gt(z, 0), 'float64'));
  near(t, await run([z], weft.grad(through, z), [[-1, 2]]), [0, 0], 0, 'through a comparison: zeros');
});

t.test('grad: returnDisconnected', async (t) => {
  const x = pt.vector('x');
  const z = pt.vector('z', 'float32');
  const cost = pt.sum(pt.exp(x));
  const [, zero] = weft.grad(cost, [x, z], { disconnectedInputs: 'ignore', returnDisconnected: 'zero' });
  t.equal(zero!.dtype, 'float32', 'zeros of the variable\'s dtype');
  near(t, await run([z], zero!, [[1, 2]]), [0, 0], 0);
  const [gx, nothing] = weft.grad(cost, [x, z], { disconnectedInputs: 'ignore', returnDisconnected: 'null' });
  t.equal(nothing, null);
  t.ok(gx);
  const [, d] = weft.grad(cost, [x, z], { disconnectedInputs: 'ignore', returnDisconnected: 'disconnected' });
  t.type(d!.type, weft.DisconnectedType);
  await throwsExactly(
    t,
    () => weft.grad(cost, [x, z], { returnDisconnected: 'null' }),
    weft.DisconnectedInputError,
    'grad was asked for the gradient with respect to z, which is not part of the graph of the cost or is used only by ' +
      'non-differentiable operations (pass disconnectedInputs: "ignore" or "warn" to allow this)',
    'returnDisconnected does not imply ignore',
  );
});

t.test('grad: the gradient with respect to an integer variable is zeros', async (t) => {
  const i = pt.vector('i', 'int32');
  const x = pt.vector('x');
  const cost = pt.sum(pt.mul(pt.cast(i, 'float64'), x));
  const [gi, gx] = weft.grad(cost, [i, x]);
  t.equal(gi!.dtype, weft.config.floatX, 'a float gradient');
  near(t, await run([i, x], gi!, [[1, 2, 3], [4, 5, 6]]), [0, 0, 0], 0);
  near(t, await run([i, x], gx!, [[1, 2, 3], [4, 5, 6]]), [1, 2, 3], 0);
  const unused = weft.grad(pt.sum(x), i);
  near(t, await run([i], unused, [[7, 8]]), [0, 0], 0, 'even when not used: no DisconnectedInputError for discrete wrt');
});

t.test('grad: the cost must be a float scalar', async (t) => {
  const x = pt.vector('x');
  await throwsExactly(
    t,
    () => weft.grad(pt.exp(x), x),
    TypeError,
    'grad: the cost must be a scalar (0-d), got Elemwise{exp}.out (TensorType(float64, (?,))); reduce it first, e.g. cost.sum()',
  );
  const i = pt.scalar('i', 'int32');
  await throwsExactly(
    t,
    () => weft.grad(i, i),
    TypeError,
    'grad: the cost i has the discrete dtype int32; its gradient is zero everywhere (cast it to a float dtype)',
  );
  await throwsExactly(
    t,
    () => weft.grad(pt.sum(x), [x, 3 as unknown as TV]),
    TypeError,
    'grad: wrt[1] must be a variable, got 3',
  );
});

t.test('grad: an undefined gradient that reaches wrt is a NullGradientError', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const op = new AddTwiceNoGradY();
  const out = op.call(x, pt.exp(y)) as TV;
  await throwsExactly(
    t,
    () => weft.grad(pt.sum(out), y),
    weft.NullGradientError,
    'grad: the gradient with respect to y is needed but the gradient of AddTwiceNoGradY with respect to input 1 is undefined: y is a label',
  );
  await throwsExactly(
    t,
    () => weft.grad(pt.sum(op.call(x, x) as TV), x),
    weft.NullGradientError,
    'grad: the gradient with respect to x is needed but the gradient of AddTwiceNoGradY with respect to input 1 is undefined: y is a label',
    'x also reaches the undefined input',
  );
  const gx = weft.grad(pt.sum(pt.mul(out, out)), x);
  near(t, await run([x, y], gx, [[1, 2], [0, 0]]), [2 * (1 + 2), 2 * (2 + 2)], 1e-12, 'x alone is fine: d/dx (x + 2e^y)^2');
  await weft.verifyGrad((p) => op.call(p, pt.constant([0.5, 1, 1.5, 2])) as TV, [rng(3).normal([4])]);
});

t.test('second derivatives: grad of grad', async (t) => {
  const x = pt.scalar('x');
  const f = pt.mul(pt.sin(x), pt.exp(x));
  const g = weft.grad(f, x);
  const h = weft.grad(g, x);
  const h3 = weft.grad(h, x);
  const fn = await weft.compile([x], [g, h, h3]);
  for (const v of [0, 0.7, -1.3]) {
    const [d1, d2, d3] = await fn(v);
    near(t, d1!, Math.exp(v) * (Math.sin(v) + Math.cos(v)), 1e-12, `f' at ${v}`);
    near(t, d2!, 2 * Math.exp(v) * Math.cos(v), 1e-12, `f'' at ${v}`);
    near(t, d3!, 2 * Math.exp(v) * (Math.cos(v) - Math.sin(v)), 1e-12, `f''' at ${v}`);
  }
  const v = pt.vector('v');
  const cost = pt.sum(pt.pow(v, 4));
  const gsum = weft.grad(pt.sum(weft.grad(cost, v)), v);
  near(t, await run([v], gsum, [[1, -2, 0.5]]), [12, 48, 3], 1e-12, 'd/dv sum(4v^3) = 12v^2');
});

t.test('Lop: the vector-Jacobian product', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const f = pt.mul(pt.exp(x), y);
  const u = pt.vector('u');
  const [lx, ly] = weft.Lop(f, [x, y], u) as TV[];
  const fn = await weft.compile([x, y, u], [lx!, ly!]);
  const [a, b] = await fn([0, 1], [2, 3], [5, 7]);
  near(t, a!, [5 * 2, 7 * 3 * Math.E], 1e-12, 'u * y e^x');
  near(t, b!, [5, 7 * Math.E], 1e-12, 'u * e^x');
  const single = weft.Lop(f, x, u) as TV;
  t.notOk(Array.isArray(single));
  const two = weft.Lop([f, pt.sin(x)], x, [u, u]) as TV;
  near(t, await run([x, y, u], two, [[0, 1], [2, 3], [5, 7]]), [5 * 2 + 5, 7 * 3 * Math.E + 7 * Math.cos(1)], 1e-12, 'several expressions: summed');
  await throwsExactly(t, () => weft.Lop([f, f], x, [u]), Error, 'Lop: 2 expressions but 1 evaluation points');
  await throwsExactly(
    t,
    () => weft.Lop(f, x, pt.matrix('um')),
    TypeError,
    'Lop: evaluation point 0 (um, TensorType(float64, (?, ?))) cannot be the gradient of Elemwise{mul}.out (TensorType(float64, (?,))): ' +
      'it has 2 dimensions where Elemwise{mul}.out has 1',
  );
});

t.test('Rop: the Jacobian-vector product, against finite differences', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const f = pt.mul(pt.exp(x), pt.sin(y)).add(pt.mul(x, x).sum());
  const vx = pt.vector('vx');
  const vy = pt.vector('vy');
  const r = weft.Rop(f, [x, y], [vx, vy]) as TV;
  t.notOk(Array.isArray(r));
  const X = [0.2, -0.4, 1.1];
  const Y = [0.5, 2, -1];
  const VX = [1, -0.5, 0.25];
  const VY = [0.3, 0.2, -2];
  const got = values(await run([x, y, vx, vy], r, [X, Y, VX, VY]));
  const sx = X.reduce((s, a, i) => s + 2 * a * VX[i]!, 0);
  const formula = X.map((a, i) => Math.exp(a) * VX[i]! * Math.sin(Y[i]!) + Math.exp(a) * Math.cos(Y[i]!) * VY[i]! + sx);
  near(t, ndarray(Float64Array.from(got), [3]), formula, 1e-12, 'hand-derived');
  const fx = await weft.compile([x, y], f);
  const eps = 1e-6;
  const plus = values(await fx(X.map((a, i) => a + eps * VX[i]!), Y.map((b, i) => b + eps * VY[i]!)));
  const minus = values(await fx(X.map((a, i) => a - eps * VX[i]!), Y.map((b, i) => b - eps * VY[i]!)));
  const fd = plus.map((p, i) => (p - minus[i]!) / (2 * eps));
  near(t, ndarray(Float64Array.from(got), [3]), fd, 1e-7, 'finite differences');
  const rs = weft.Rop([f, pt.exp(x)], x, vx) as TV[];
  t.equal(rs.length, 2);
  near(t, await run([x, y, vx], rs[1]!, [X, Y, VX]), X.map((a, i) => Math.exp(a) * VX[i]!), 1e-12);
  const unrelated = weft.Rop(pt.sin(y), x, vx) as TV;
  near(t, await run([y], unrelated, [[1, 2]]), [0, 0], 0, 'an expression that does not depend on wrt: zeros');
});

t.test('Rop: the evaluation points must fit the variables', async (t) => {
  const x = pt.vector('x');
  const f = pt.exp(x);
  await throwsExactly(
    t,
    () => weft.Rop(f, x, pt.matrix('m')),
    TypeError,
    'Rop: the evaluation point for x has type TensorType(float64, (?, ?)), expected TensorType(float64, (?,))',
  );
  await throwsExactly(
    t,
    () => weft.Rop(f, x, pt.vector('v', 'float32')),
    TypeError,
    'Rop: the evaluation point for x has type TensorType(float32, (?,)), expected TensorType(float64, (?,))',
  );
  await throwsExactly(t, () => weft.Rop(f, [x], []), Error, 'Rop: 1 variables but 0 evaluation points');
});

t.test('Rop: discrete variables have no tangent, and discrete inputs of products, joins and increments add none', async (t) => {
  const x = pt.vector('x');
  const vx = pt.vector('vx');
  const n = pt.scalar('n', 'int32');
  const m = pt.matrix('m', 'int32');
  const X = [0.5, -1, 2];
  const VX = [1, 0.25, -3];
  const M = [[1, 2, 3], [-4, 0, 5]];
  // An integer wrt moves nothing: its eval point is checked, then left out (as grad gives it zeros).
  const f = x.mul(n).add(pt.dot(m, x).sum());
  const r = weft.Rop(f, [x, n], [vx, pt.scalar('vn', 'int32')]) as TV;
  const colSums = [M[0]![0]! + M[1]![0]!, M[0]![1]! + M[1]![1]!, M[0]![2]! + M[1]![2]!];
  const sumMv = VX.reduce((s, v, i) => s + colSums[i]! * v, 0);
  near(t, await run([x, n, m, vx], r, [X, 3, M, VX]), VX.map((v) => 3 * v + sumMv), 1e-12, 'd(n x + sum(M x)) = n v + sum(M v)');
  near(t, await run([x, n, m], weft.Rop(f, n, pt.scalar('vn', 'int32')) as TV, [X, 3, M]), [0, 0, 0], 0, 'only an integer wrt: zeros');
  await throwsExactly(t, () => weft.Rop(f, n, pt.scalar('vn')), TypeError,
    'Rop: the evaluation point for n has type TensorType(float64, ()), expected TensorType(int32, ())');
  // A product with an integer matrix: the one term of the float vector, no product of zeros.
  const dm = weft.Rop(pt.dot(m, x), x, vx) as TV;
  t.equal(weft.ancestors([dm]).filter((v) => String(v.owner?.op) === 'Alloc').length, 0, 'no zeros built for the integer matrix');
  near(t, await run([m, vx], dm, [M, VX]), M.map((row) => row.reduce((s, a, i) => s + a * VX[i]!, 0)), 1e-12, 'M v');
  // Joined with integers: their part of the tangent is zeros.
  const joined = weft.Rop(pt.concatenate([x, pt.arange(n)]), x, vx) as TV;
  near(t, await run([vx, n], joined, [VX, 2]), [...VX, 0, 0], 0, 'concatenate([x, arange(n)])');
  // An arange with an integer start and a float step moves with the step only.
  const s = pt.scalar('s');
  const vs = pt.scalar('vs');
  const ar = weft.Rop(pt.arange(1, 4, s), s, vs) as TV;
  near(t, await run([s, vs], ar, [0.5, 2]), [0, 2, 4, 6, 8, 10], 1e-12, 'd arange(1, 4, s) = i vs');
  // Integers added into a float vector do not move it.
  const inc = pt.incSubtensor(x.get(weft.slice(0, 2)), pt.arange(n));
  near(t, await run([vx, n], weft.Rop(inc, x, vx) as TV, [VX, 2]), VX, 0, 'incSubtensor(x[0:2], arange(n))');
  const set = pt.setSubtensor(x.get(weft.slice(1, null)), pt.arange(n));
  near(t, await run([vx, n], weft.Rop(set, x, vx) as TV, [VX, 2]), [VX[0]!, 0, 0], 0, 'setSubtensor(x[1:], arange(n))');
});

t.test('jacobian: a vector expression of static length', async (t) => {
  const x = pt.tensor({ shape: [3], name: 'x' });
  const y = pt.mul(pt.exp(x), x.sum());
  const j = weft.jacobian(y, x);
  t.equal(String(j.type), 'TensorType(float64, (3, 3))');
  const X = [0.1, -0.2, 0.3];
  const s = X.reduce((a, b) => a + b, 0);
  const expected = X.map((a, i) => X.map((_, k) => (i === k ? Math.exp(a) * s : 0) + Math.exp(a)));
  near(t, await run([x], j, [X]), expected, 1e-12, 'J[i][k] = δik e^xi s + e^xi');
  const w = pt.tensor({ shape: [2], name: 'w' });
  const [jx, jw] = weft.jacobian(pt.mul(x.sum(), pt.exp(w)), [x, w]);
  const fn = await weft.compile([x, w], [jx!, jw!]);
  const [a, b] = await fn(X, [0, 1]);
  near(t, a!, [[1, 1, 1], [Math.E, Math.E, Math.E]], 1e-12, 'dy/dx of s * e^w');
  near(t, b!, [[s, 0], [0, s * Math.E]], 1e-12, 'dy/dw of s * e^w');
});

t.test('jacobian: a scalar expression is its gradient; a vector of unknown length works too', async (t) => {
  const x = pt.vector('x');
  const j = weft.jacobian(pt.sum(pt.sqr(x)), x);
  near(t, await run([x], j, [[1, 2]]), [2, 4]);
  const je = weft.jacobian(pt.exp(x), x);
  t.equal(String(je.type), 'TensorType(float64, (?, ?))');
  const X = [0.5, -1, 2, 0];
  near(t, await run([x], je, [X]), X.map((a, i) => X.map((_, k) => (i === k ? Math.exp(a) : 0))), 1e-12, 'diag(e^x)');
  t.same((await run([x], weft.jacobian(pt.exp(x), x), [[]])).shape, [0, 0], 'an empty vector gives a 0 x 0 Jacobian');
  const h = weft.hessian(pt.sum(pt.mul(pt.sqr(x), x)), x);
  near(t, await run([x], h, [X]), X.map((a, i) => X.map((_, k) => (i === k ? 6 * a : 0))), 1e-12, 'hessian of sum(x^3)');
  await throwsExactly(
    t,
    () => weft.jacobian(pt.matrix('m'), x),
    TypeError,
    'jacobian: the expression must be a scalar or a vector, got m (TensorType(float64, (?, ?))); flatten it first',
  );
});

t.test('hessian: of a scalar cost with respect to a static-length vector', async (t) => {
  const x = pt.tensor({ shape: [3], name: 'x' });
  const cost = pt.mul(pt.sum(pt.sqr(x)), pt.sum(x));
  const h = weft.hessian(cost, x);
  t.equal(String(h.type), 'TensorType(float64, (3, 3))');
  const X = [1, -2, 0.5];
  const s = X.reduce((a, b) => a + b, 0);
  const expected = X.map((a, i) => X.map((b, k) => (i === k ? 2 * s : 0) + 2 * a + 2 * b));
  near(t, await run([x], h, [X]), expected, 1e-12, 'H = 2 s I + 2 x 1ᵀ + 2 1 xᵀ');
  const [hx] = weft.hessian(cost, [x]);
  near(t, await run([x], hx!, [X]), expected);
  await throwsExactly(
    t,
    () => weft.hessian(pt.sum(pt.matrix('m')), pt.matrix('m2')),
    TypeError,
    'hessian: wrt[0] must be a vector, got m2 (TensorType(float64, (?, ?)))',
  );
});
