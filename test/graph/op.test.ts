// Op identity: props define equality and the key (the hash merging uses), for built-in ops and for
// a user op that subclasses weft.Op with `static props`, as in Theano's DoubleOp example.
import t from 'tap';
import ndarray from 'ndarray';
import { near, pt, run, throwsExactly, weft } from '../helpers.js';

/** out = x * factor: the user op of API.md. */
class Double extends weft.Op {
  static override readonly props = ['factor'] as const;
  constructor(readonly factor = 2) {
    super();
  }
  override makeNode(x: unknown): weft.Apply {
    const xv = pt.asTensorVariable(x as weft.TensorLike);
    return new weft.Apply(this, [xv], [xv.type.makeVariable()]);
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    const src = x!;
    const n = src.shape.reduce((a, b) => a * b, 1);
    const out = ndarray(new Float64Array(n), [...src.shape]);
    const flat = weft.tolist(src) as number[];
    flat.forEach((v, i) => (out.data[i] = v * this.factor));
    return [out];
  }
  override inferShape(_node: weft.Apply, [xs]: readonly weft.SymbolicShape[]): weft.SymbolicShape[] {
    return [xs!];
  }
  override grad(_inputs: readonly weft.Variable[], [gz]: readonly weft.pt.TensorVariable[]): weft.Variable[] {
    return [gz!.mul(this.factor)];
  }
  override rop(_inputs: readonly weft.Variable[], [ev]: readonly weft.pt.TensorVariable[]): weft.Variable[] {
    return [ev!.mul(this.factor)];
  }
}

/** Same props as Double, another class: never equal to a Double. */
class Triple extends Double {}

/** An op whose props are structured: arrays, plain objects, -0. */
class Configured extends weft.Op {
  static override readonly props = ['axes', 'options', 'offset'] as const;
  constructor(
    readonly axes: readonly number[],
    readonly options: Readonly<Record<string, unknown>>,
    readonly offset: unknown = 0,
  ) {
    super();
  }
  override makeNode(x: unknown): weft.Apply {
    const xv = pt.asTensorVariable(x as weft.TensorLike);
    return new weft.Apply(this, [xv], [xv.type.makeVariable()]);
  }
}

/** No props: every instance is the same op. */
class Plain extends weft.Op {
  override makeNode(x: unknown): weft.Apply {
    const xv = pt.asTensorVariable(x as weft.TensorLike);
    return new weft.Apply(this, [xv], [xv.type.makeVariable()]);
  }
}

t.test('a user op: equality, key and name follow its props', async (t) => {
  const a = new Double(2);
  const b = new Double(2);
  const c = new Double(3);
  t.not(a, b);
  t.ok(a.equals(b), 'equal props: equal ops');
  t.ok(b.equals(a), 'symmetric');
  t.equal(a.key, b.key, 'equal keys');
  t.equal(a.key, 'Double(factor=2)');
  t.notOk(a.equals(c), 'different factor: different ops');
  t.not(a.key, c.key);
  t.equal(String(a), 'Double{factor=2}');
  t.same(a.props, ['factor']);
  const tr = new Triple(2);
  t.notOk(a.equals(tr), 'another class with the same props is another op');
  t.notOk(tr.equals(a));
  t.ok(new Plain().equals(new Plain()), 'an op without props equals every instance of its class');
  t.equal(new Plain().key, 'Plain()');
  t.equal(String(new Plain()), 'Plain');
});

t.test('a user op: makeNode, call, perform, grad and Rop through compile', async (t) => {
  const x = pt.vector('x');
  const y = new Double(3).call(x) as weft.pt.TensorVariable;
  t.equal(y.owner?.op.key, 'Double(factor=3)');
  t.equal(y.owner?.inputs[0], x);
  near(t, await run([x], y, [[1, -2, 0.5]]), [3, -6, 1.5]);
  const g = weft.grad(y.sum(), x);
  near(t, await run([x], g, [[1, 2, 3]]), [3, 3, 3], 0, 'grad');
  const r = new weft.Rng(5);
  await weft.verifyGrad((p) => new Double(3).call(p) as weft.pt.TensorVariable, [r.normal([4])]);
  await weft.checkRop((p) => new Double(3).call(p) as weft.pt.TensorVariable, [r.normal([4])]);
  t.equal(await weft.checkInferShape([x], [y], [r.normal([5])]), 1);
});

t.test('built-in ops: equal props, equal keys', async (t) => {
  const x = pt.matrix('x');
  const y = pt.matrix('y');
  const e1 = pt.exp(x).owner!.op;
  const e2 = pt.exp(y).owner!.op;
  t.ok(e1.equals(e2), 'exp on different inputs: the same op');
  t.equal(e1.key, e2.key);
  t.notOk(e1.equals(pt.log(x).owner!.op), 'exp is not log');
  const s0 = pt.sum(x, { axis: 0 }).owner!.op;
  const s0b = pt.sum(y, { axis: 0 }).owner!.op;
  const s1 = pt.sum(x, { axis: 1 }).owner!.op;
  t.ok(s0.equals(s0b));
  t.equal(s0.key, s0b.key);
  t.notOk(s0.equals(s1), 'different axis');
  const d1 = x.dimshuffle(1, 0).owner!.op;
  const d2 = y.T.owner!.op;
  t.ok(d1.equals(d2), 'transpose is DimShuffle{1,0}');
  t.equal(String(d1), 'DimShuffle{1,0}');
  t.notOk(d1.equals(x.dimshuffle(0, 'x', 1).owner!.op));
});

t.test('prop values: canonical keys for arrays, objects, -0; other values are refused', async (t) => {
  const a = new Configured([0, 1], { b: 2, a: 'x' });
  const b = new Configured([0, 1], { a: 'x', b: 2 });
  t.ok(a.equals(b), 'object keys are compared in sorted order');
  t.equal(a.key, 'Configured(axes=[0,1];options={"a":"x","b":2};offset=0)');
  t.notOk(a.equals(new Configured([1, 0], { a: 'x', b: 2 })), 'array order matters');
  t.notOk(a.equals(new Configured([0, 1], { a: 'x', b: 2 }, -0)), '-0 is not 0');
  t.notOk(a.equals(new Configured([0, 1], { a: 'x', b: '2' })), 'the string "2" is not the number 2');
  t.notOk(new Configured([], {}, null).equals(new Configured([], {}, undefined)), 'null is not undefined');
  t.ok(new Configured([], {}, new Double(2)).equals(new Configured([], {}, new Double(2))), 'an op as a prop compares by its key');
  t.ok(
    new Configured([], {}, pt.vector().type).equals(new Configured([], {}, new weft.TensorType('float64', [null]))),
    'a type as a prop compares by its key',
  );
  await throwsExactly(
    t,
    () => new Configured([], {}, new Map()).key,
    TypeError,
    'Configured.offset: op props must be numbers, strings, booleans, null, arrays, plain objects or keyed objects (ops, types); got [object Map]',
  );
  await throwsExactly(
    t,
    () => new Configured([1, () => 0] as unknown as number[], {}).key,
    TypeError,
    'Configured.axes[1]: op props must be numbers, strings, booleans, null, arrays, plain objects or keyed objects (ops, types); got [object Function]',
  );
});

t.test('an op without perform fails the call with a message that names it', async (t) => {
  const x = pt.vector('x');
  const y = new Plain().call(x) as weft.pt.TensorVariable;
  const fn = await weft.compile([x], y);
  await throwsExactly(
    t,
    () => fn([1]),
    weft.NodeError,
    'Plain has no perform implementation\n  in node 0: Plain(x)\n  input values: float64 [1]',
  );
});
