// verifyGrad, checkRop and checkInferShape as op authors use them: they pass on correct ops
// (built-in ones and a user op written as API.md's DoubleOp) and reject wrong gradients, Rops
// and shapes with messages that show what was computed; argument errors and the options (rng,
// nTests, eps, absTol, relTol) of verifyGrad.
import ndarray from 'ndarray';
import t, { type Test } from 'tap';
import { near, pt, rng, run, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;

/** The elements of a nested list in C order. */
function flatten(v: unknown): number[] {
  return Array.isArray(v) ? v.flatMap(flatten) : [v as number];
}

/** A new array of `x`'s storage class and shape holding f of each element (in C order). */
function mapValues(x: weft.NdArray, f: (v: number, i: number) => number): weft.NdArray {
  const flat = flatten(weft.tolist(x));
  const Storage = x.data.constructor as new (n: number) => weft.TypedArray;
  const out = new Storage(flat.length);
  flat.forEach((v, i) => (out[i] = f(v, i)));
  return ndarray(out, [...x.shape]) as weft.NdArray;
}

let cubePerforms = 0;

/** out = factor * x^3: a user op with props, perform, inferShape, grad and rop, all correct. */
class Cube extends weft.Op {
  static override readonly props = ['factor'] as const;
  constructor(readonly factor = 2) {
    super();
  }
  override makeNode(x: unknown): weft.Apply {
    const xv = pt.asTensorVariable(x as weft.TensorLike);
    return new weft.Apply(this, [xv], [xv.type.makeVariable()]);
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    cubePerforms++;
    return [mapValues(x!, (v) => this.factor * v * v * v)];
  }
  override inferShape(_node: weft.Apply, [xs]: readonly weft.SymbolicShape[]): weft.SymbolicShape[] {
    return [xs!];
  }
  /** d out / dx = 3 factor x^2 (the wrong variants override this). */
  derivative(x: TV): TV {
    return x.sqr().mul(3 * this.factor);
  }
  override grad([x]: readonly weft.Variable[], [gz]: readonly weft.Variable[]): weft.Variable[] {
    return [(gz as TV).mul(this.derivative(x as TV))];
  }
  override rop([x]: readonly weft.Variable[], [ev]: readonly weft.Variable[]): weft.Variable[] {
    return [(ev as TV).mul(this.derivative(x as TV))];
  }
}

/** Its gradient is 2/3 of the true one. */
class CubeWrongGrad extends Cube {
  override grad([x]: readonly weft.Variable[], [gz]: readonly weft.Variable[]): weft.Variable[] {
    return [(gz as TV).mul((x as TV).sqr().mul(2 * this.factor))];
  }
}

/** Its Rop is 2/3 of the true one (the gradient is right). */
class CubeWrongRop extends Cube {
  override rop([x]: readonly weft.Variable[], [ev]: readonly weft.Variable[]): weft.Variable[] {
    return [(ev as TV).mul((x as TV).sqr().mul(2 * this.factor))];
  }
}

/** Its gradient is 1.001 times the true one: caught by default tolerances, not by loose ones. */
class CubeSlightlyWrong extends Cube {
  override derivative(x: TV): TV {
    return x.sqr().mul(3.003 * this.factor);
  }
}

/** Its inferShape adds 1 to every length. */
class CubeWrongShape extends Cube {
  override inferShape(_node: weft.Apply, [xs]: readonly weft.SymbolicShape[]): weft.SymbolicShape[] {
    return [xs!.map((d) => pt.add(d as TV, 1))];
  }
}

/** Its inferShape forgets the last axis. */
class CubeShortShape extends Cube {
  override inferShape(_node: weft.Apply, [xs]: readonly weft.SymbolicShape[]): weft.SymbolicShape[] {
    return [xs!.slice(0, -1)];
  }
}

/** Its inferShape reads the shape of its own output (which would need running the node). */
class CubeSelfShape extends Cube {
  override inferShape(node: weft.Apply, [xs]: readonly weft.SymbolicShape[]): weft.SymbolicShape[] {
    const out = node.outputs[0] as TV;
    return [xs!.map((_, a) => out.shape.get(a))];
  }
}

/** out = x * y (same shapes); its gradient with respect to y is doubled. */
class ProductWrongGradY extends weft.Op {
  override makeNode(x: unknown, y: unknown): weft.Apply {
    const xv = pt.asTensorVariable(x as weft.TensorLike);
    const yv = pt.asTensorVariable(y as weft.TensorLike);
    return new weft.Apply(this, [xv, yv], [xv.type.makeVariable()]);
  }
  override perform(_node: weft.Apply, [x, y]: readonly weft.NdArray[]): weft.NdArray[] {
    const ys = flatten(weft.tolist(y!));
    return [mapValues(x!, (v, i) => v * ys[i]!)];
  }
  override grad([x, y]: readonly weft.Variable[], [gz]: readonly weft.Variable[]): weft.Variable[] {
    return [(gz as TV).mul(y as TV), (gz as TV).mul(x as TV).mul(2)];
  }
}

const cube = (op: Cube) => (x: TV): TV => op.call(x) as TV;

/** Parses verifyGrad's failure message; checks its structure on the way. */
function mismatch(t: Test, e: unknown, input: string, tolerances: string): { symbolic: number; numeric: number; abs: number; rel: number } {
  t.type(e, weft.GradientMismatchError, 'a GradientMismatchError');
  t.type(e, Error);
  const message = (e as Error).message;
  const m = new RegExp(
    `^verifyGrad: the gradient with respect to input ${input.replace(/[[\]()]/g, '\\$&')} does not match finite differences along random direction (\\d+): ` +
      'symbolic (\\S+), numeric (\\S+); absolute error (\\S+) \\(absTol (\\S+)\\), relative error (\\S+) \\(relTol (\\S+)\\), eps (\\S+)$',
  ).exec(message);
  t.ok(m, `the message has the expected form: ${message}`);
  if (!m) return { symbolic: NaN, numeric: NaN, abs: NaN, rel: NaN };
  t.equal(`absTol ${m[5]}, relTol ${m[7]}, eps ${m[8]}`, tolerances, 'the message shows the tolerances and the step');
  const symbolic = Number(m[2]);
  const numeric = Number(m[3]);
  t.ok(Number.isFinite(symbolic) && Number.isFinite(numeric), 'both values are numbers');
  const abs = Number(m[4]);
  t.ok(Math.abs(abs - Math.abs(symbolic - numeric)) <= 1e-3 * Math.abs(abs), 'the absolute error is |symbolic - numeric|');
  return { symbolic, numeric, abs, rel: Number(m[6]) };
}

async function rejection(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

const POINT = [[1, -2, 1.5], [0.7, -1.2, 2]];

t.test('verifyGrad passes on correct gradients of built-in ops, float64 and float32 points', async (t) => {
  const r = rng(1);
  for (const dtype of ['float64', 'float32'] as const) {
    const a = r.normal([3, 4], { dtype });
    const b = r.normal([4, 2], { dtype });
    const v = r.uniform([4], { low: 0.5, high: 2, dtype });
    await weft.verifyGrad((x) => x.exp().mul(x.sin()), [a]);
    await weft.verifyGrad((x) => x.tanh().sum({ axis: 1 }), [a]);
    await weft.verifyGrad((x, y) => x.dot(y), [a, b]);
    await weft.verifyGrad((x) => x.log().mul(x), [v]);
    await weft.verifyGrad((x, y) => pt.softmax(x.dot(y)), [a, b]);
    await weft.verifyGrad((x) => x.var({ axis: 0 }), [a]);
    await weft.verifyGrad((x) => x.T.get(1), [a]);
    await weft.verifyGrad((x, y) => x.mul(y).sum(), [v, v]);
    t.pass(`${dtype}: every gradient matched`);
  }
  await weft.verifyGrad((x) => x.mul(x), [2.5]);
  await weft.verifyGrad((x) => x.sqr().sum(), [[1, 2, 3]], {});
  await weft.verifyGrad((x) => x.sqr(), [new Float32Array([1, 2])]);
  await weft.verifyGrad((x) => x.sqr(), [ndarray([0.5, 1.5]) as unknown as weft.NdArray]);
  await weft.verifyGrad((x) => x.mul(3), [ndarray(new Float64Array([1, 2, 3, 4, 5, 6]), [2, 3]).transpose(1, 0)]);
  await weft.verifyGrad((x) => x.exp(), [ndarray(new Float64Array(0), [0, 3])]);
  t.pass('0-d, nested, typed-array, plain-ndarray, non-contiguous and empty points');
});

t.test('a correct user op: values, props, verifyGrad, checkRop and checkInferShape', async (t) => {
  const x = pt.matrix('x');
  near(t, await run([x], new Cube(2).call(x) as TV, [POINT]), POINT.map((row) => row.map((v) => 2 * v ** 3)), 1e-12, 'values');
  t.ok(new Cube(2).equals(new Cube(2)), 'equal props: equal ops');
  t.notOk(new Cube(2).equals(new Cube(3)), 'other props: other ops');
  t.notOk(new Cube(2).equals(new CubeWrongGrad(2)), 'another class: another op');
  t.equal(new Cube(2).key, 'Cube(factor=2)');
  t.equal(String(new Cube(3)), 'Cube{factor=3}');
  const same = await weft.compile([x], (new Cube(2).call(x) as TV).add(new Cube(2).call(x) as TV));
  t.equal(same.fgraph.toposort().filter((n) => n.op instanceof Cube).length, 1, 'two equal instances on the same input merge into one node');
  const other = await weft.compile([x], (new Cube(2).call(x) as TV).add(new Cube(3).call(x) as TV));
  t.equal(other.fgraph.toposort().filter((n) => n.op instanceof Cube).length, 2, 'different props do not merge');
  near(t, await same(POINT), POINT.map((row) => row.map((v) => 4 * v ** 3)), 1e-12);

  const r = rng(2);
  for (const dtype of ['float64', 'float32'] as const) {
    const a = r.normal([2, 3], { dtype });
    await weft.verifyGrad(cube(new Cube(2)), [a]);
    await weft.verifyGrad((y) => cube(new Cube(0.5))(y.T).sum({ axis: 0 }), [a]);
    await weft.checkRop(cube(new Cube(2)), [a]);
    await weft.checkRop((y) => cube(new Cube(3))(y).mul(y), [a]);
    t.equal(await weft.checkInferShape([x], [new Cube(2).call(x) as TV], [a], Cube), 1, `${dtype}: inferShape`);
  }
  await weft.verifyGrad(cube(new Cube(2)), [1.5]);
  await weft.checkRop(cube(new Cube(2)), [ndarray(new Float64Array([0.3]), [])]);
  t.equal(await weft.checkInferShape([x], [new Cube(2).call(x.T) as TV], [ndarray(new Float64Array(0), [0, 4])], Cube), 1, 'an empty input');
  const g = weft.grad((new Cube(2).call(x) as TV).sum(), x);
  near(t, await run([x], g, [POINT]), POINT.map((row) => row.map((v) => 6 * v * v)), 1e-12, 'the gradient values: 6 x^2');
});

t.test('a wrong gradient is rejected with both values in the message', async (t) => {
  const e = await rejection(() => weft.verifyGrad(cube(new CubeWrongGrad(2)), [POINT]));
  const { symbolic, numeric } = mismatch(t, e, '0 (2-d float64, shape [2, 3])', 'absTol 0.0001, relTol 0.0001, eps 0.000001');
  t.ok(Math.abs(symbolic / numeric - 2 / 3) < 1e-6, `symbolic ${symbolic} is 2/3 of numeric ${numeric}, as the wrong gradient says`);
  await throwsExactly(t, () => weft.verifyGrad(cube(new CubeWrongGrad(2)), [POINT]), weft.GradientMismatchError, (e as Error).message,
    'the same seed gives the same message');

  const e32 = await rejection(() => weft.verifyGrad(cube(new CubeWrongGrad(2)), [rng(3).normal([4], { dtype: 'float32' })]));
  const m32 = mismatch(t, e32, '0 (1-d float32, shape [4])', 'absTol 0.01, relTol 0.01, eps 0.001');
  t.ok(Math.abs(m32.symbolic / m32.numeric - 2 / 3) < 1e-2, 'float32: symbolic is 2/3 of numeric');

  const e0 = await rejection(() => weft.verifyGrad(cube(new CubeWrongGrad(2)), [1.5]));
  const m0 = mismatch(t, e0, '0 (0-d float64, shape [])', 'absTol 0.0001, relTol 0.0001, eps 0.000001');
  t.ok(Math.abs(m0.symbolic / m0.numeric - 2 / 3) < 1e-6, '0-d: symbolic is 2/3 of numeric');

  // Two inputs, the second one's gradient wrong: the message names input 1.
  const e2 = await rejection(() => weft.verifyGrad((a, b) => new ProductWrongGradY().call(a, b) as TV, [POINT, POINT.map((r) => r.map((v) => v + 1))]));
  const m2 = mismatch(t, e2, '1 (2-d float64, shape [2, 3])', 'absTol 0.0001, relTol 0.0001, eps 0.000001');
  t.ok(Math.abs(m2.symbolic / m2.numeric - 2) < 1e-6, 'input 1: symbolic is twice numeric');
  await weft.verifyGrad((a) => new ProductWrongGradY().call(a, pt.constant(POINT)) as TV, [POINT]);
  t.pass('the correct gradient of input 0 passes on its own');
});

t.test('checkRop rejects a wrong Rop, and a wrong gradient through the Lop identity', async (t) => {
  const a = rng(4).normal([2, 3]);
  const e = await rejection(() => weft.checkRop(cube(new CubeWrongRop(2)), [a]));
  t.type(e, weft.CheckError);
  const m = /^checkRop: element (\d+) of Rop is (\S+), finite differences give (\S+) \(tol 0.00001\)$/.exec((e as Error).message);
  t.ok(m, `the message names the element and both values: ${(e as Error).message}`);
  t.ok(Math.abs(Number(m![2]) / Number(m![3]) - 2 / 3) < 1e-6, 'Rop is 2/3 of the finite difference, as the wrong Rop says');
  await weft.verifyGrad(cube(new CubeWrongRop(2)), [a]);
  t.pass('its gradient is right, so verifyGrad passes');

  const e2 = await rejection(() => weft.checkRop(cube(new CubeWrongGrad(2)), [a]));
  t.type(e2, weft.CheckError);
  const m2 = /^checkRop: u \. Rop\(v\) = (\S+) but Lop\(u\) \. v = (\S+) \(tol 0.00001\)$/.exec((e2 as Error).message);
  t.ok(m2, `a wrong gradient breaks u . (J v) = (u J) . v: ${(e2 as Error).message}`);
  t.ok(Math.abs(Number(m2![2]) / Number(m2![1]) - 2 / 3) < 1e-6, 'Lop side is 2/3 of the Rop side');

  const e32 = await rejection(() => weft.checkRop(cube(new CubeWrongRop(2)), [rng(5).normal([3], { dtype: 'float32' })]));
  t.match((e32 as Error).message, /^checkRop: element \d+ of Rop is \S+, finite differences give \S+ \(tol 0.01\)$/, 'float32 tolerance');
  await weft.checkRop(cube(new CubeWrongRop(2)), [a], { tol: 1 });
  t.pass('a loose tol lets it pass');
  const seeded = async (rngOption: number | weft.Rng): Promise<string> =>
    ((await rejection(() => weft.checkRop(cube(new CubeWrongRop(2)), [a], { rng: rngOption }))) as Error).message;
  t.equal(await seeded(3), await seeded(new weft.Rng(3)), 'checkRop takes a seed or an Rng');
  t.not(await seeded(3), await seeded(4), 'other seeds, other directions');
});

t.test('checkRop: points of each dtype get directions of their own dtype; integer points are refused', async (t) => {
  const f64 = rng(6).normal([3]);
  const f32 = rng(7).normal([3], { dtype: 'float32' });
  await weft.checkRop((a, b) => a.mul(b), [f64, f32]);
  await weft.checkRop((a, b) => a.mul(b), [f32, f64]);
  await weft.checkRop((a, b) => a.mul(b).sum(), [f32, f32]);
  t.pass('mixed float32 and float64 points');
  await throwsExactly(t, () => weft.checkRop((a) => a, [ndarray(new Int32Array([1, 2]))]), TypeError,
    'checkRop: point 0 has dtype int32; Rop is checked at float points');
  await throwsExactly(t, () => weft.checkRop((a, b) => a.add(b), [f64, ndarray(new Uint8Array([1, 2, 3]))]), TypeError,
    'checkRop: point 1 has dtype uint8; Rop is checked at float points');
  await throwsExactly(t, () => weft.checkRop((a) => a.gt(0), [f64]), weft.CheckError, 'checkRop: fn returned bool values; Rop needs a float output');
});

t.test('checkInferShape rejects wrong shapes, naming them', async (t) => {
  const x = pt.matrix('x');
  const a = rng(8).normal([2, 3]);
  await throwsExactly(t, () => weft.checkInferShape([x], [new CubeWrongShape(2).call(x) as TV], [a]), weft.CheckError,
    'checkInferShape: CubeWrongShape{factor=2}.inferShape says output 0 has shape [3, 4], its value has [2, 3]');
  await throwsExactly(t, () => weft.checkInferShape([x], [(new CubeWrongShape(2).call(x.T) as TV).sum()], [a], CubeWrongShape), weft.CheckError,
    'checkInferShape: CubeWrongShape{factor=2}.inferShape says output 0 has shape [4, 3], its value has [3, 2]', 'inside a larger graph');
  await throwsExactly(t, () => weft.checkInferShape([x], [new CubeShortShape(2).call(x) as TV], [a]), weft.CheckError,
    'checkInferShape: CubeShortShape{factor=2}.inferShape gave 1 lengths for output 0, which has 2 axes');
  await throwsExactly(t, () => weft.checkInferShape([x], [new CubeSelfShape(2).call(x) as TV], [a], CubeSelfShape), weft.CheckError,
    "checkInferShape: the shape CubeSelfShape{factor=2}.inferShape gives depends on the node's own outputs");
  await throwsExactly(t, () => weft.checkInferShape([x], [x.exp()], [a], Cube), weft.CheckError,
    'checkInferShape: no Cube node between the inputs and the outputs');
  const s = pt.tensor({ shape: [2, null], name: 's' });
  t.equal(await weft.checkInferShape([s], [new Cube(2).call(s) as TV], [a], Cube), 1, 'a static length that holds');
  // The wrong shape goes unnoticed by verifyGrad and checkRop, which do not use it.
  await weft.verifyGrad(cube(new CubeWrongShape(2)), [a]);
  await weft.checkRop(cube(new CubeWrongShape(2)), [a]);
});

t.test('verifyGrad: argument errors', async (t) => {
  await throwsExactly(t, () => weft.verifyGrad((x) => x, [new Int32Array([1, 2])]), TypeError,
    'verifyGrad: point 0 has dtype int32; gradients are checked at float points');
  await throwsExactly(t, () => weft.verifyGrad((x, y) => x.add(y), [[1.5], ndarray(new Int8Array([1, 2]))]), TypeError,
    'verifyGrad: point 1 has dtype int8; gradients are checked at float points');
  await throwsExactly(t, () => weft.verifyGrad((x) => x, [ndarray(new Uint16Array([1]))]), TypeError,
    'verifyGrad: point 0 has dtype uint16; gradients are checked at float points');
  await throwsExactly(t, () => weft.verifyGrad((x) => x, [pt.vector('v')]), TypeError, 'verifyGrad: point 0 must be a value, not a variable');
  await throwsExactly(t, () => weft.verifyGrad((x) => x.sum().astype('int32'), [[1.5, 2]]), TypeError,
    'verifyGrad: fn returned int32 values; gradients need a float output');
  await throwsExactly(t, () => weft.verifyGrad((x) => x.gt(0), [[1.5, 2]]), TypeError, 'verifyGrad: fn returned bool values; gradients need a float output');
  await throwsExactly(t, () => weft.verifyGrad((x) => x.argmax(), [[1.5, 2]]), TypeError, 'verifyGrad: fn returned int32 values; gradients need a float output');
  await throwsExactly(t, () => weft.verifyGrad(() => 3 as unknown as TV, [[1.5]]), TypeError, 'verifyGrad: fn must return a tensor variable');
  await throwsExactly(t, () => weft.verifyGrad((x) => x, [[[1, 2], [3]]]), TypeError,
    'verifyGrad: point 0: the nested array is ragged (expected length 2 at depth 1)');
  await throwsExactly(t, () => weft.verifyGrad((x) => x, [[1.5]], { nTests: 0 }), RangeError, 'verifyGrad: nTests must be a positive integer, got 0');
  await throwsExactly(t, () => weft.verifyGrad((x) => x, [[1.5]], { nTests: 1.5 }), RangeError, 'verifyGrad: nTests must be a positive integer, got 1.5');
  await throwsExactly(t, () => weft.verifyGrad((x) => x, [[1.5]], { eps: 0 }), RangeError, 'verifyGrad: eps must be positive, got 0');
  await throwsExactly(t, () => weft.verifyGrad((x) => x, [[1.5]], { eps: -1e-3 }), RangeError, 'verifyGrad: eps must be positive, got -0.001');
  await throwsExactly(t, () => weft.verifyGrad((x) => x, [[1.5]], { rng: -1 }), RangeError, 'Rng: the seed must be an integer from 0 to 4294967295, got -1');
});

t.test('verifyGrad: the rng option, a seed or an Rng', async (t) => {
  const f = cube(new CubeWrongGrad(2));
  const message = async (options: weft.VerifyGradOptions): Promise<string> => ((await rejection(() => weft.verifyGrad(f, [POINT], options))) as Error).message;
  const byDefault = await message({});
  t.equal(await message({ rng: 42 }), byDefault, 'the default seed is 42');
  const five = await message({ rng: 5 });
  t.equal(await message({ rng: 5 }), five, 'the same seed gives the same directions');
  t.not(five, byDefault, 'another seed gives other directions');
  t.equal(await message({ rng: new weft.Rng(5) }), five, 'an Rng of seed 5 is the same as the seed');
  const shared = new weft.Rng(5);
  const first = await message({ rng: shared });
  const second = await message({ rng: shared });
  t.equal(first, five);
  t.not(second, first, 'an Rng passed in keeps its state between calls');
});

t.test('verifyGrad: nTests sets the number of random directions per input', async (t) => {
  const count = async (nTests: number, f: (x: TV) => TV, points: number[][][]): Promise<number> => {
    cubePerforms = 0;
    await weft.verifyGrad(f, points, { nTests });
    return cubePerforms;
  };
  const f = cube(new Cube(2));
  const one = await count(1, f, [POINT]);
  t.equal((await count(3, f, [POINT])) - one, 4, 'each extra direction costs two evaluations of the cost');
  t.equal((await count(6, f, [POINT])) - one, 10);
  const g = (x: TV, y: TV): TV => (new Cube(2).call(x) as TV).mul(y);
  cubePerforms = 0;
  await weft.verifyGrad(g, [POINT, POINT], { nTests: 1 });
  const two1 = cubePerforms;
  cubePerforms = 0;
  await weft.verifyGrad(g, [POINT, POINT], { nTests: 4 });
  t.equal(cubePerforms - two1, 12, 'with two inputs, two evaluations per input and direction');
  const e = await rejection(() => weft.verifyGrad(cube(new CubeWrongGrad(2)), [POINT], { nTests: 5 }));
  t.match((e as Error).message, /along random direction 0:/, 'the first direction already finds a wrong gradient');
});

t.test('verifyGrad: eps, absTol and relTol', async (t) => {
  const pointsAway = [[1, 2, -1.5]]; // one 1-d point
  // Central differences of x^3 err by eps^2 v^3 factor: a large step rejects a correct gradient.
  const e = await rejection(() => weft.verifyGrad(cube(new Cube(2)), pointsAway, { eps: 0.5 }));
  mismatch(t, e, '0 (1-d float64, shape [3])', 'absTol 0.0001, relTol 0.0001, eps 0.5');
  await weft.verifyGrad(cube(new Cube(2)), pointsAway, { eps: 1e-5 });
  await weft.verifyGrad(cube(new Cube(2)), pointsAway, { eps: 0.5, relTol: 0.5 });
  t.pass('a small step passes, and a large one with a loose relTol');

  // A gradient off by 0.1 %: caught by the float64 defaults (1e-4), passed by a looser tolerance.
  const slightly = cube(new CubeSlightlyWrong(2));
  const e2 = await rejection(() => weft.verifyGrad(slightly, [POINT]));
  const m2 = mismatch(t, e2, '0 (2-d float64, shape [2, 3])', 'absTol 0.0001, relTol 0.0001, eps 0.000001');
  t.ok(m2.rel > 1e-4 && m2.rel < 1e-3, `relative error ${m2.rel} is about 5e-4`);
  await weft.verifyGrad(slightly, [POINT], { relTol: 1e-2 });
  await weft.verifyGrad(slightly, [POINT], { absTol: 1e3 });
  t.pass('relTol or absTol alone lets it pass');
  const e3 = await rejection(() => weft.verifyGrad(slightly, [POINT], { absTol: 1e-12, relTol: 1e-5 }));
  mismatch(t, e3, '0 (2-d float64, shape [2, 3])', 'absTol 1e-12, relTol 0.00001, eps 0.000001');
  // float32 points have looser defaults (1e-2), which the same mistake passes.
  await weft.verifyGrad(slightly, [rng(9).normal([2, 3], { dtype: 'float32' })]);
  const e4 = await rejection(() => weft.verifyGrad(slightly, [rng(9).normal([2, 3], { dtype: 'float32' })], { relTol: 1e-5, absTol: 1e-5, eps: 1e-2 }));
  t.type(e4, weft.GradientMismatchError, 'float32 with tight tolerances rejects it');
  // Tight tolerances still pass a correct float64 gradient.
  await weft.verifyGrad(cube(new Cube(2)), [POINT], { absTol: 1e-7, relTol: 1e-7 });
  t.pass('a correct gradient within 1e-7');
});
