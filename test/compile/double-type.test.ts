// The guide's "Making the double type" and "Making arithmetic Ops on double", end to end: a
// Type of plain JS numbers, add/sub/mul/div ops with automatic constant wrapping, compiled and
// called (values checked by the Type's filter), differentiated with weft.grad and weft.Rop
// (the Type says how its gradients are made), checked by DebugMode, and a bad value refused.
import t from 'tap';
import { costModel, INLINE_WORK } from '../../src/scheduler/planned-executor.js';
import { throwsExactly, weft } from '../helpers.js';

class DoubleType extends weft.Type<number> {
  readonly key = 'double';

  override filter(value: unknown, options: weft.FilterOptions = {}): number {
    if (typeof value === 'number' && (!options.strict || Number.isFinite(value) || Number.isNaN(value) || !Number.isFinite(value))) return value;
    throw new TypeError(`${options.what ?? 'double'}: expected a number, got ${typeof value === 'string' ? JSON.stringify(value) : typeof value}`);
  }
  override valuesEq(a: number, b: number): boolean {
    return Object.is(a, b);
  }
  /** Theano's double: equal within a relative tolerance. */
  override valuesEqApprox(a: number, b: number): boolean {
    return Object.is(a, b) || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
  }
  override copyValue(v: number): number {
    return v;
  }
  override valueSignature(v: number): string {
    return Object.is(v, -0) ? '-0' : String(v);
  }
  override makeVariable(name?: string): weft.Variable {
    return new weft.Variable(this, name);
  }
  override makeConstant(v: number, name?: string): weft.Constant {
    return new weft.Constant(this, v, name);
  }
  /** A double in shared memory: one float64 (what lets worker kernels read it). */
  override readonly memoryLayout: weft.MemoryLayout<number> = { dtype: 'float64', shape: [], toArray: (v) => [v], fromArray: (a) => a[0]! };
  override readonly gradient: weft.GradientSupport = {
    ones: () => double.makeConstant(1),
    zeros: () => double.makeConstant(0),
    sum: (terms) => terms.reduce((a, b) => add.call(a, b)),
  };
}
const double = new DoubleType();

/** A double, or a JS number wrapped as a constant double (the guide's automatic wrapping). */
function asDouble(x: unknown, where: string): weft.Variable {
  if (typeof x === 'number') return double.makeConstant(x);
  if (x instanceof weft.Variable && x.type.equals(double)) return x;
  throw new TypeError(`${where}: expected a double or a number, got ${String(x)}`);
}

type Grad = (a: weft.Variable, b: weft.Variable, gz: weft.Variable) => [weft.Variable, weft.Variable];

class BinaryDoubleOp extends weft.Op<weft.Variable> {
  static override readonly props = ['name'] as const;
  constructor(
    readonly name: string,
    readonly fn: (a: number, b: number) => number,
    readonly derivative: Grad,
  ) {
    super();
  }
  override makeNode(a: unknown, b: unknown): weft.Apply {
    return new weft.Apply(this, [asDouble(a, `${this.name} input 0`), asDouble(b, `${this.name} input 1`)], [double.makeVariable()]);
  }
  override perform(_node: weft.Apply, [a, b]: readonly unknown[]): unknown[] {
    return [this.fn(a as number, b as number)];
  }
  override grad([a, b]: readonly weft.Variable[], [gz]: readonly weft.Variable[]): weft.Variable[] {
    return this.derivative(a!, b!, gz!);
  }
  override rop(inputs: readonly weft.Variable[], [ea, eb]: readonly weft.Variable[]): weft.Variable[] {
    // Linear in the evaluation points: the pullback's terms with gz = 1, weighted.
    const [da, db] = this.derivative(inputs[0]!, inputs[1]!, double.makeConstant(1));
    return [add.call(mul.call(da, ea), mul.call(db, eb))];
  }
  override toString(): string {
    return this.name;
  }
}

const add: BinaryDoubleOp = new BinaryDoubleOp('add', (a, b) => a + b, (_a, _b, gz) => [gz, gz]);
const sub: BinaryDoubleOp = new BinaryDoubleOp('sub', (a, b) => a - b, (_a, _b, gz) => [gz, mul.call(gz, -1)]);
const mul: BinaryDoubleOp = new BinaryDoubleOp('mul', (a, b) => a * b, (a, b, gz) => [mul.call(gz, b), mul.call(gz, a)]);
const div: BinaryDoubleOp = new BinaryDoubleOp('div', (a, b) => a / b, (a, b, gz) => [div.call(gz, b), mul.call(gz, div.call(mul.call(a, -1), mul.call(b, b)))]);

const byName: Record<string, BinaryDoubleOp> = { add, sub, mul, div };

const x = double.makeVariable('x');
const y = double.makeVariable('y');
// (x * y + 2) / (x - 1)
const z = div.call(add.call(mul.call(x, y), 2), sub.call(x, 1));
const zOf = (a: number, b: number): number => (a * b + 2) / (a - 1);

t.test('a double graph evaluates and compiles; calls take and give plain numbers', async (t) => {
  t.equal(await z.eval({ x: 3, y: 4 }), zOf(3, 4), 'eval');
  const f = await weft.compile([x, y], z);
  t.equal(await f(3, 4), 7);
  t.equal(await f(-2.5, 0.125), zOf(-2.5, 0.125));
  t.match(weft.debugprint(f), /^div \[id A\]/, 'debugprint names the ops');
  const identity = await weft.compile([x, y], [x, x, add.call(x, y)]);
  t.same(await identity(1.5, 2), [1.5, 1.5, 3.5], 'outputs that are inputs (no DeepCopyOp for doubles: the Type copies them)');
  await throwsExactly(t, () => f('3', 4), TypeError, 'input 0 (x) of the function: expected a number, got "3"');
  const onWorkers = await weft.compile([x, y], [z, mul.call(z, z)], { workers: 2 });
  t.same(await onWorkers(3, 4), [7, 49], 'a pool with no kernel for doubles: the calling thread runs it');
});

t.test('grad and Rop through the ops grads, with the Type making ones, zeros and sums', async (t) => {
  const [gx, gy] = weft.grad(z, [x, y]);
  const g = await weft.compile([x, y], [gx!, gy!]);
  const [a, b] = [3, 4];
  // dz/dx = (y (x - 1) - (x y + 2)) / (x - 1)^2, dz/dy = x / (x - 1)
  t.same(await g(a, b), [(b * (a - 1) - (a * b + 2)) / (a - 1) ** 2, a / (a - 1)]);
  // x appears twice in z: its gradient terms are summed by the Type's sum.
  const twice = weft.grad(mul.call(x, x), x);
  t.equal(await (await weft.compile([x], twice))(5), 10, 'd(x*x)/dx = 2x');
  const ex = double.makeVariable('ex');
  const ey = double.makeVariable('ey');
  const jvp = weft.Rop(z, [x, y], [ex, ey]) as weft.Variable;
  const r = await weft.compile([x, y, ex, ey], jvp);
  const [dzdx, dzdy] = (await g(a, b)) as number[];
  t.ok(Math.abs(((await r(a, b, 0.5, -2)) as number) - (0.5 * dzdx! - 2 * dzdy!)) < 1e-12, 'Rop is the directional derivative');
});

t.test('DebugMode checks the double ops too; a Type without gradients is refused by grad with why', async (t) => {
  const f = await weft.compile([x, y], z, { mode: 'DebugMode' });
  t.equal(await f(3, 4), 7);
  class Flag extends weft.Type<boolean> {
    readonly key = 'flag';
    override filter(v: unknown): boolean {
      return Boolean(v);
    }
    override valuesEq(a: boolean, b: boolean): boolean {
      return a === b;
    }
    override copyValue(v: boolean): boolean {
      return v;
    }
    override valueSignature(v: boolean): string {
      return String(v);
    }
    override makeVariable(name?: string): weft.Variable {
      return new weft.Variable(this, name);
    }
    override makeConstant(v: boolean, name?: string): weft.Constant {
      return new weft.Constant(this, v, name);
    }
  }
  const flag = new Flag().makeVariable('on');
  await throwsExactly(t, () => weft.grad(flag, x), TypeError, 'grad: the cost on has the type flag, which has no gradients (give the Type a `gradient`: ones, zeros, sum)');
});

t.test('a double function round-trips through serialize and deserialize', async (t) => {
  weft.registerTypeCodec(DoubleType);
  // The ops hold functions, so they get a codec of their own: documents name them, never carry code.
  weft.registerOpCodec<BinaryDoubleOp, string>({
    name: 'double.BinaryDoubleOp',
    opClass: BinaryDoubleOp,
    props: ['name'],
    encode: (op) => ({ name: op.name }),
    decode: (r) => r.object(['name']).field('name').oneOf(Object.keys(byName)),
    build: (name) => byName[name]!,
  });
  const f = await weft.compile([x, y], z, { name: 'zOf' });
  const text = weft.serialize(f);
  t.match(text, /"type":\{"codec":"DoubleType","props":\{\}\}/, 'the type, by its registered name');
  const loaded = weft.deserialize(text);
  const g = await weft.compile(loaded.inputs, loaded.outputs);
  t.same(await g(3, 4), [7], 'the loaded function computes the same');
  t.same(await g(-2.5, 0.125), [zOf(-2.5, 0.125)]);
  await throwsExactly(
    t,
    () => weft.deserialize(text.replace('"codec":"DoubleType"', '"codec":"Quad"')),
    weft.DeserializeError,
    'variables[0].type.codec: no type is registered as "Quad" (weft.registerTypeCodec)',
  );
  t.throws(() => weft.deserialize(text.replace('"json":2', '"json":"2"')), { name: 'DeserializeError', message: /: expected a number, got "2"$/ }, 'a value the Type refuses');
  class Unregistered extends DoubleType {}
  const u = new Unregistered().makeVariable('u');
  await throwsExactly(
    t,
    () => weft.serialize(u),
    TypeError,
    'serialize: the type double (class Unregistered) is not registered; call weft.registerTypeCodec(Unregistered) in the writing and the reading process',
  );
});

/** The same ops with worker kernels (test/fixtures/double-kernels.mjs): "double in C". */
class DoubleOnWorkers extends BinaryDoubleOp {
  override kernel(): weft.KernelCall {
    return { name: `double.${this.name}`, params: {}, chunking: { by: 'none' } };
  }
  override outputShapes(): number[][] {
    return [[]];
  }
}

t.test('with worker kernels and a memory layout, double graphs are planned and run on the workers', async (t) => {
  const kernels = new URL('../fixtures/double-kernels.mjs', import.meta.url);
  const pool = weft.createPool({ workers: 2, kernelModules: [kernels] });
  t.teardown(() => pool.close());
  const [wAdd, wSub, wMul, wDiv] = (['add', 'sub', 'mul', 'div'] as const).map((n) => new DoubleOnWorkers(n, (byName[n] as BinaryDoubleOp).fn, (byName[n] as BinaryDoubleOp).derivative));
  const zw = wDiv!.call(wAdd!.call(wMul!.call(x, y), 2), wSub!.call(x, 1));
  const planned = await weft.compile([x, y], zw, { pool, profile: true });
  t.equal(await planned(3, 4), 7, 'on the calling thread (a tiny call: the cost model keeps it there)');
  t.equal(planned.profile!.fallback, undefined, 'planned, not the reference executor');
  costModel.inlineWork = 0;
  try {
    const forced = await weft.compile([x, y], zw, { pool, profile: true });
    t.equal(await forced(-2.5, 0.125), zOf(-2.5, 0.125), 'the same bits on the workers');
    const threads = new Set(forced.profile!.events.map((e) => e.thread));
    t.ok([...threads].some((th) => th !== 0), `the double kernels ran on the workers (threads ${[...threads].join(', ')})`);
  } finally {
    costModel.inlineWork = INLINE_WORK;
  }
  const mixed = await weft.compile([x, y], [zw, mul.call(x, y)], { pool, profile: true });
  t.same(await mixed(3, 4), [7, 12], 'an op without a kernel: the whole graph on the calling thread');
  t.match(mixed.profile!.fallback, /^mul reads or makes values of another type than tensors and has no worker kernel/);
});

t.teardown(() => weft.shutdown());
