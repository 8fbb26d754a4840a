// DebugMode: user ops that break each promise of the op contract (an undeclared overwrite, a
// kernel that disagrees with perform or depends on its chunking, a wrong inferShape, an
// undeclared alias, a value of the wrong type) are caught with messages that name the op, the
// node and what was declared against what happened; honest ops (declared destroyers and views
// included) run and give the right values; a rewrite that changes values is caught and named.
import t from 'tap';
import { near, pt, rng, throwsExactly, weft } from '../helpers.js';
import type { IndexMap, KernelCall } from '../../src/graph/op.js';
import { canonicalizeDB, nodeRewriter } from '../../src/graph/rewriting/index.js';
import { registerKernel } from '../../src/kernels/registry.js';
import type { Range, TensorView } from '../../src/kernels/view.js';
import { copyArray, makeNdArray } from '../../src/tensor/core/ndarray.js';

type TV = weft.pt.TensorVariable;

/** A node of `op` on `x` whose outputs have x's type (or `dtype`/`shape`). */
function unaryNode(op: weft.Op, x: unknown, options: { dtype?: weft.Dtype; shape?: weft.StaticShape; nOut?: number } = {}): weft.Apply {
  const xv = pt.asTensorVariable(x as weft.TensorLike);
  const type = new weft.TensorType(options.dtype ?? xv.dtype, options.shape ?? xv.type.shape);
  return new weft.Apply(op, [xv], Array.from({ length: options.nOut ?? 1 }, () => type.makeVariable()));
}

/** A contiguous copy of `x` times `factor`. */
function scaled(x: weft.NdArray, factor: number): weft.NdArray {
  const out = copyArray(x);
  for (let i = 0; i < out.data.length; i++) out.data[i] = out.data[i]! * factor;
  return out;
}

/** Multiplies the elements of a contiguous `x` by `factor` where they are. */
function scaleInPlace(x: weft.NdArray, factor: number): void {
  const n = x.shape.reduce((a, b) => a * b, 1);
  for (let i = 0; i < n; i++) x.data[x.offset + i] = x.data[x.offset + i]! * factor;
}

/** out = 2 x, computed by doubling x where it is: declared in destroyMap or not. */
class Doubler extends weft.Op {
  static override readonly props = ['declared'] as const;
  override readonly destroyMap: IndexMap;
  constructor(readonly declared: boolean) {
    super();
    this.destroyMap = declared ? { 0: [0] } : {};
  }
  override makeNode(x: unknown): weft.Apply {
    return unaryNode(this, x);
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    scaleInPlace(x!, 2);
    return [this.declared ? x! : copyArray(x!)];
  }
  override inferShape(_node: weft.Apply, [xs]: readonly weft.SymbolicShape[]): weft.SymbolicShape[] {
    return [xs!];
  }
  override toString(): string {
    return this.declared ? 'Doubler{inplace}' : 'Doubler';
  }
}

// Test kernels over 1-d views of any stride: out = factor * x over the range.
function scaleKernel(ins: readonly TensorView[], outs: readonly TensorView[], params: Readonly<Record<string, unknown>>, range?: Range): void {
  const [x] = ins;
  const [out] = outs;
  const factor = params['factor'] as number;
  const end = range?.end ?? out!.shape[0]!;
  for (let i = range?.start ?? 0; i < end; i++) out!.data[out!.offset + i] = factor * x!.data[x!.offset + i * x!.stride[0]!]!;
}
registerKernel('debug-test.scale', scaleKernel);
/** Adds the start of its range to what it writes: right as one call, wrong in chunks. */
registerKernel('debug-test.scale-by-chunk', (ins, outs, params, range) => {
  scaleKernel(ins, outs, params, range);
  const out = outs[0]!;
  for (let i = range?.start ?? 0; i < (range?.end ?? out.shape[0]!); i++) out.data[out.offset + i] = out.data[out.offset + i]! + (range?.start ?? 0);
});
/** Scales its input where it is, then copies it out. */
registerKernel('debug-test.scale-input', (ins, outs, params) => {
  const x = ins[0]!;
  const out = outs[0]!;
  for (let i = 0; i < x.shape[0]!; i++) {
    const at = x.offset + i * x.stride[0]!;
    x.data[at] = x.data[at]! * (params['factor'] as number);
    out.data[out.offset + i] = x.data[at]!;
  }
});

/** perform: factor * x; the worker kernel: `kernelName` with `kernelFactor`. */
class Scale extends weft.Op {
  static override readonly props = ['factor', 'kernelName', 'kernelFactor'] as const;
  constructor(
    readonly factor: number,
    readonly kernelName = 'debug-test.scale',
    readonly kernelFactor = factor,
  ) {
    super();
  }
  override makeNode(x: unknown): weft.Apply {
    return unaryNode(this, x);
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    return [scaled(x!, this.factor)];
  }
  override kernel(): KernelCall {
    return { name: this.kernelName, params: { factor: this.kernelFactor }, chunking: { by: 'elements' } };
  }
  override outputShapes(_node: weft.Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }
  override inferShape(_node: weft.Apply, [xs]: readonly weft.SymbolicShape[]): weft.SymbolicShape[] {
    return [xs!];
  }
  override toString(): string {
    return `Scale{${this.factor}}`;
  }
}

/** Scale whose outputShapes drops the last element. */
class ShortScale extends Scale {
  override outputShapes(_node: weft.Apply, [x]: readonly TensorView[]): number[][] {
    return [[x!.shape[0]! - 1]];
  }
  override toString(): string {
    return 'ShortScale';
  }
}

/** x[1:] as a view; its worker view is off by one (x[:-1]). */
class Tail extends weft.Op {
  override readonly viewMap: IndexMap = { 0: [0] };
  override makeNode(x: unknown): weft.Apply {
    return unaryNode(this, x);
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    return [makeNdArray(x!.data, [x!.shape[0]! - 1], x!.stride, x!.offset + x!.stride[0]!)];
  }
  override view(_node: weft.Apply, [x]: readonly TensorView[]): TensorView[] {
    return [{ data: x!.data, shape: [x!.shape[0]! - 1], stride: x!.stride, offset: x!.offset }];
  }
}

/** An inferShape that cannot answer. */
class NoShape extends weft.Op {
  override makeNode(x: unknown): weft.Apply {
    return unaryNode(this, x);
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    return [copyArray(x!)];
  }
  override inferShape(): weft.SymbolicShape[] {
    throw new Error('no shape here');
  }
}

/** A copy of a matrix whose inferShape swaps the two lengths. */
class SwappedShape extends weft.Op {
  override makeNode(x: unknown): weft.Apply {
    return unaryNode(this, x);
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    return [copyArray(x!)];
  }
  override inferShape(_node: weft.Apply, [xs]: readonly weft.SymbolicShape[]): weft.SymbolicShape[] {
    return [[xs![1]!, xs![0]!]];
  }
}

/** Returns its input itself: as a declared view or not. */
class Same extends weft.Op {
  static override readonly props = ['declared'] as const;
  override readonly viewMap: IndexMap;
  constructor(readonly declared: boolean) {
    super();
    this.viewMap = declared ? { 0: [0] } : {};
  }
  override makeNode(x: unknown): weft.Apply {
    return unaryNode(this, x);
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    return [makeNdArray(x!.data, x!.shape, x!.stride, x!.offset)];
  }
  override inferShape(_node: weft.Apply, [xs]: readonly weft.SymbolicShape[]): weft.SymbolicShape[] {
    return [xs!];
  }
  override toString(): string {
    return this.declared ? 'Same{view}' : 'Same';
  }
}

/** Returns the same array for both of its outputs. */
class OneForTwo extends weft.Op {
  override makeNode(x: unknown): weft.Apply {
    return unaryNode(this, x, { nOut: 2 });
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    const out = copyArray(x!);
    return [out, out];
  }
}

/** Keeps one array and returns it from every node: a later node hands out an earlier value. */
class Cached extends weft.Op {
  #cache: weft.NdArray | undefined;
  override makeNode(x: unknown): weft.Apply {
    return unaryNode(this, x);
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    this.#cache ??= copyArray(x!);
    return [this.#cache];
  }
}

/** Declares float64 outputs (of static length `length`) and returns float32 (or longer) arrays. */
class Mistyped extends weft.Op {
  static override readonly props = ['length'] as const;
  constructor(readonly length: number | null = null) {
    super();
  }
  override makeNode(x: unknown): weft.Apply {
    return unaryNode(this, x, { dtype: 'float64', shape: [this.length] });
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    return [this.length === null ? copyArray(x!, 'float32') : copyArray(x!, 'float64')];
  }
}

async function debugFn(inputs: readonly (TV | weft.FunctionInput)[], outputs: TV | TV[], mode: weft.CompileOptions['mode'] = 'DebugMode') {
  return weft.compile(inputs, outputs as TV, { mode });
}

t.test("mode: 'DebugMode' checks every node of an honest graph and gives its values", async (t) => {
  const x = pt.matrix('x');
  const y = pt.vector('y');
  const out = pt.add(pt.exp(x).mul(2), y).sum({ axis: 0 });
  const viewed = x.T.get(0).add(1);
  const fn = await weft.compile([x, y], [out, viewed, pt.softmax(x)], { mode: 'DebugMode' });
  t.type(fn.mode, weft.DebugMode);
  t.equal(fn.mode.name, 'DebugMode');
  const xs = [[0, 1, 2], [-1, 0.5, 3]];
  const ys = [1, 2, 3];
  const [sums, col, sm] = await fn(xs, ys);
  near(t, sums!, [0, 1, 2].map((j) => 2 * Math.exp(xs[0]![j]!) + 2 * Math.exp(xs[1]![j]!) + 2 * ys[j]!));
  near(t, col!, [1, 0]);
  const softmaxRow = (r: number[]): number[] => {
    const m = Math.max(...r);
    const e = r.map((v) => Math.exp(v - m));
    const s = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / s);
  };
  near(t, sm!, xs.map(softmaxRow), 1e-12);
  t.same(weft.tolist((await fn(xs, ys))[1]!), [1, 0], 'a second call');
});

t.test('new weft.DebugMode(options): a base, tags and checks to turn off', async (t) => {
  const mode = new weft.DebugMode({ base: 'FAST_COMPILE' });
  t.equal(mode.name, 'DebugMode');
  const x = pt.vector('x');
  const fn = await debugFn([x], pt.mul(pt.exp(x), 2), mode);
  t.same(fn.fgraph.toposort().map((n) => String(n.op)), ['Elemwise{exp}', 'Elemwise{mul}'], 'FAST_COMPILE does not fuse');
  near(t, await fn([0, 1]), [2, 2 * Math.E]);
  const fused = await debugFn([x], pt.mul(pt.exp(x), 2), new weft.DebugMode());
  t.same(fused.fgraph.toposort().map((n) => String(n.op)), ['Composite{mul(exp(i0),i1)}'], 'FAST_RUN by default');
  t.type(mode.including('fusion'), weft.DebugMode, 'including keeps the mode a DebugMode');
  t.type(mode.excluding('fusion'), weft.DebugMode, 'excluding too');
  t.equal(new weft.DebugMode({ name: 'mine' }).name, 'mine');
});

t.test('an op that overwrites its input without declaring it is caught', async (t) => {
  const x = pt.vector('x');
  const fn = await debugFn([x], new Doubler(false).call(x) as TV);
  const value = new Float64Array([1, 2, 3]);
  await throwsExactly(t, () => fn(value), weft.DebugModeError, 'Doubler (node 0: Doubler(x)) modified input 0 (x) but its destroyMap is {}');
  t.same([...value], [1, 2, 3], "the caller's value is untouched");
  try {
    await fn(value);
  } catch (e) {
    const err = e as weft.DebugModeError;
    t.equal(err.check, 'destroy');
    t.equal(err.position, 0);
    t.equal(String(err.node!.op), 'Doubler');
  }
  const z = pt.exp(x);
  const later = await debugFn([x], pt.add(new Doubler(false).call(z) as TV, 1));
  await throwsExactly(
    t,
    () => later([0]),
    weft.DebugModeError,
    'Doubler (node 1: Doubler(Elemwise{exp}.out)) modified input 0 (Elemwise{exp}.out) but its destroyMap is {}',
    'inside a graph',
  );
});

t.test('an op that declares what it overwrites is accepted', async (t) => {
  const x = pt.vector('x');
  const fn = await debugFn([x], pt.add(new Doubler(true).call(pt.exp(x)) as TV, 1));
  near(t, await fn([0, 1]), [3, 2 * Math.E + 1]);
  const mutable = await debugFn([weft.In(x, { mutable: true })], new Doubler(true).call(x) as TV);
  near(t, await mutable([1, -2]), [2, -4], 1e-12, 'a mutable input');
});

t.test("the inplace rewrites' nodes pass DebugMode's checks", async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const mode = new weft.DebugMode({ excluding: ['fusion'] });
  const fn = await debugFn([x, y], pt.mul(pt.add(pt.exp(x), y), 2), mode);
  t.ok(fn.fgraph.toposort().some((n) => Object.keys(n.op.destroyMap).length > 0), 'the graph has an inplace node');
  const xs = new Float64Array([0, 1]);
  near(t, await fn(xs, [1, 2]), [4, 2 * Math.E + 4]);
  t.same([...xs], [0, 1], "the caller's values are untouched");
});

t.test("an op whose kernel disagrees with its perform is caught; so is a kernel that depends on its chunks or writes its input", async (t) => {
  const x = pt.vector('x');
  const honest = await debugFn([x], new Scale(2).call(x) as TV);
  near(t, await honest([1, 2, 3, 4]), [2, 4, 6, 8]);
  near(t, await honest(new Float64Array(0)), [], 0, 'empty');
  const strided = makeNdArray(new Float64Array([1, 9, 2, 9, 3, 9]), [3], [2], 0);
  near(t, await honest(strided), [2, 4, 6], 1e-12, 'strided');

  const wrong = await debugFn([x], new Scale(2, 'debug-test.scale', 3).call(x) as TV);
  await throwsExactly(
    t,
    () => wrong([1, 2]),
    weft.DebugModeError,
    "Scale{2} (node 0: Scale{2}(x)): its kernel 'debug-test.scale' and its perform disagree on output 0 (Scale{2}.out): " +
      'at index [0] the kernel gives 3 and perform gives 2 (float64: atol 1e-8, rtol 1e-5)',
  );

  const chunky = await debugFn([x], new Scale(2, 'debug-test.scale-by-chunk').call(x) as TV);
  near(t, await chunky([5]), [10], 1e-12, 'one element: no chunks');
  await throwsExactly(
    t,
    () => chunky([1, 2, 3, 4]),
    weft.DebugModeError,
    "Scale{2} (node 0: Scale{2}(x)): its kernel 'debug-test.scale-by-chunk' run in 2 chunks (by elements) gives 8 at index [2] of output 0, one whole call gives 6",
  );

  const writer = await debugFn([x], new Scale(2, 'debug-test.scale-input').call(x) as TV);
  await throwsExactly(
    t,
    () => writer([1, 2]),
    weft.DebugModeError,
    "Scale{2} (node 0: Scale{2}(x)): its kernel 'debug-test.scale-input' modified input 0 (x) but its destroyMap is {}",
  );

  const missing = await debugFn([x], new Scale(2, 'debug-test.nowhere').call(x) as TV);
  await throwsExactly(
    t,
    () => missing([1]),
    weft.DebugModeError,
    "Scale{2} (node 0: Scale{2}(x)): its kernel 'debug-test.nowhere' is not registered on the calling thread (import the module that registers it)",
  );
  const ints = pt.vector('i', 'int32');
  const wrongInts = await debugFn([ints], new Scale(2, 'debug-test.scale', 3).call(ints) as TV);
  await throwsExactly(
    t,
    () => wrongInts([0, 5]),
    weft.DebugModeError,
    "Scale{2} (node 0: Scale{2}(i)): its kernel 'debug-test.scale' and its perform disagree on output 0 (Scale{2}.out): " +
      'at index [1] the kernel gives 15 and perform gives 10 (int32: exact)',
    'int32',
  );
  const short = await debugFn([x], new ShortScale(2).call(x) as TV);
  await throwsExactly(
    t,
    () => short([1, 2]),
    weft.DebugModeError,
    "ShortScale (node 0: ShortScale(x)): its kernel 'debug-test.scale' and its perform disagree on output 0 (ShortScale.out): " +
      'the kernel gives shape [1] and perform gives shape [2]',
    'outputShapes',
  );
  const tail = await debugFn([x], new Tail().call(x) as TV);
  await throwsExactly(
    t,
    () => tail([1, 2, 3]),
    weft.DebugModeError,
    'Tail (node 0: Tail(x)): its view and its perform disagree on output 0 (Tail.out): at index [0] the view gives 1 and perform gives 2 ' +
      '(float64: atol 1e-8, rtol 1e-5)',
    'view',
  );
  const off = await debugFn([x], new Scale(2, 'debug-test.scale', 3).call(x) as TV, new weft.DebugMode({ checkKernels: false }));
  near(t, await off([1, 2]), [2, 4], 1e-12, 'checkKernels: false');
});

t.test('a wrong inferShape is caught', async (t) => {
  const x = pt.matrix('x');
  const fn = await debugFn([x], new SwappedShape().call(x) as TV);
  await throwsExactly(
    t,
    () => fn([[1, 2, 3], [4, 5, 6]]),
    weft.DebugModeError,
    'SwappedShape (node 0: SwappedShape(x)): its inferShape gives shape [3, 2] for output 0 but perform returned shape [2, 3]',
  );
  near(t, await fn([[1, 2], [3, 4]]), [[1, 2], [3, 4]], 1e-12, 'square matrices pass');
  const off = await debugFn([x], new SwappedShape().call(x) as TV, new weft.DebugMode({ checkInferShape: false }));
  near(t, await off([[1, 2, 3]]), [[1, 2, 3]], 1e-12, 'checkInferShape: false');
  const none = await debugFn([x], new NoShape().call(x) as TV);
  await throwsExactly(t, () => none([[1]]), weft.DebugModeError, 'NoShape (node 0: NoShape(x)): its inferShape failed: no shape here', 'a failing inferShape');
});

t.test('an output that aliases an input without viewMap is caught; a declared view is accepted', async (t) => {
  const x = pt.vector('x');
  const fn = await debugFn([x], pt.mul(new Same(false).call(x) as TV, 2));
  await throwsExactly(
    t,
    () => fn([1, 2]),
    weft.DebugModeError,
    'Same (node 0: Same(x)) returned output 0 sharing memory with input 0 (x) but its viewMap is {} and its destroyMap is {}',
  );
  const view = await debugFn([x], new Same(true).call(x) as TV);
  const value = new Float64Array([1, 2]);
  const out = await view(value);
  near(t, out, [1, 2]);
  t.not(out.data.buffer, value.buffer, 'the output is a copy');

  const twins = await debugFn([x], new OneForTwo().call(x) as unknown as TV[]);
  await throwsExactly(
    t,
    () => twins([1]),
    weft.DebugModeError,
    'OneForTwo (node 0: OneForTwo(x)) returned outputs 0 and 1 sharing memory but its viewMap is {} and its destroyMap is {}',
  );

  const y = pt.vector('y');
  const cached = new Cached();
  const a = cached.call(x) as TV;
  a.name = 'a';
  const reuse = await debugFn([x, y], pt.add(a, cached.call(y) as TV));
  await throwsExactly(
    t,
    () => reuse([1], [2]),
    weft.DebugModeError,
    'Cached (node 1: Cached(y)) returned output 0 sharing memory with the value of a, which it was not given (outputs must be new memory or views of its inputs)',
  );
});

t.test('an output of the wrong dtype or static shape is caught', async (t) => {
  const x = pt.vector('x');
  const fn = await debugFn([x], new Mistyped().call(x) as TV);
  await throwsExactly(
    t,
    () => fn([1, 2]),
    weft.DebugModeError,
    'Mistyped{length=null} (node 0: Mistyped{length=null}(x)) returned a bad value for output 0 (Mistyped{length=null}.out): ' +
      'TensorType(float64, (?,)): expected an ndarray of float64 (strict), got float32',
  );
  const long = await debugFn([x], new Mistyped(2).call(x) as TV);
  near(t, await long([1, 2]), [1, 2]);
  await throwsExactly(
    t,
    () => long([1, 2, 3]),
    weft.DebugModeError,
    'Mistyped{length=2} (node 0: Mistyped{length=2}(x)) returned a bad value for output 0 (Mistyped{length=2}.out): ' +
      'TensorType(float64, (2,)): expected length 2 on axis 0 (TensorType(float64, (2,))), got shape [3]',
  );
});

/** out = 2 x, an op of this test alone, which the wrong rewrite below turns into 3 x. */
class Twice extends weft.Op {
  override makeNode(x: unknown): weft.Apply {
    return unaryNode(this, x);
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    return [scaled(x!, 2)];
  }
  override inferShape(_node: weft.Apply, [xs]: readonly weft.SymbolicShape[]): weft.SymbolicShape[] {
    return [xs!];
  }
}

// Registered in canonicalize under a tag of its own, so only the modes that include it run it.
canonicalizeDB.register(
  'debug_test_twice_is_thrice',
  nodeRewriter('debug_test_twice_is_thrice', [Twice], (node) => [pt.mul(node.inputs[0] as TV, 3)]),
  { tags: ['debug_test_wrong'] },
);

t.test('a rewrite that changes values is caught, and named', async (t) => {
  const x = pt.vector('x');
  const out = pt.add(new Twice().call(x) as TV, 1);
  const plain = await weft.compile([x], out, { mode: 'DebugMode' });
  near(t, await plain([1, 2]), [3, 5], 1e-12, 'without the rewrite');
  const wrongMode = new weft.DebugMode({ including: ['debug_test_wrong'] });
  const fn = await weft.compile([x], out, { mode: wrongMode, name: 'f' });
  t.same(fn.fgraph.toposort().map((n) => String(n.op)), ['Composite{add(mul(i0,i1),i2)}'], 'the rewrite ran');
  await throwsExactly(
    t,
    () => fn([1, 2]),
    weft.DebugModeError,
    "the rewrites changed output 0 of function 'f': at index [0] the graph before rewriting gives 3 and the rewritten graph 4 " +
      '(float64: atol 1e-8, rtol 1e-5); after rewriting it is computed by Composite{add(mul(i0,i1),i2)} ' +
      '(node 0: Composite{add(mul(i0,i1),i2)}(x, TensorConstant{[3]}, TensorConstant{[1]})); ' +
      "the first rewrite that changed a value: 'debug_test_twice_is_thrice' replaced Twice(x) with Elemwise{mul}(x, DimShuffle{x}.out), " +
      'which gives 3 where 2 was computed, at index [0] (float64: atol 1e-8, rtol 1e-5)',
  );
  try {
    await fn([1, 2]);
  } catch (e) {
    t.equal((e as weft.DebugModeError).check, 'rewrite');
    t.equal((e as weft.DebugModeError).position, 0);
  }
  const unchecked = await weft.compile([x], out, { mode: new weft.DebugMode({ including: ['debug_test_wrong'], checkRewrites: false }) });
  near(t, await unchecked([1, 2]), [4, 7], 1e-12, 'checkRewrites: false lets the changed value through');
});

/** The identity, except that it refuses vectors of length 3 (which the rewrite below removes). */
class Picky extends weft.Op {
  override makeNode(x: unknown): weft.Apply {
    return unaryNode(this, x);
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    if (x!.shape[0] === 3) throw new Error('Picky: no vectors of length 3');
    return [copyArray(x!)];
  }
}
canonicalizeDB.register(
  'debug_test_drop_picky',
  nodeRewriter('debug_test_drop_picky', [Picky], (node) => [node.inputs[0]!]),
  { tags: ['debug_test_wrong'] },
);

t.test('a rewrite that removes a failure is caught', async (t) => {
  const x = pt.vector('x');
  const fn = await weft.compile([x], pt.exp(new Picky().call(x) as TV), { mode: new weft.DebugMode({ including: ['debug_test_wrong'] }) });
  near(t, await fn([0, 1]), [1, Math.E]);
  await throwsExactly(
    t,
    () => fn([0, 1, 2]),
    weft.DebugModeError,
    'the graph of the function before rewriting fails on these inputs, where the rewritten graph succeeds: Picky: no vectors of length 3\n' +
      '  in node 0: Picky(x)\n  input values: float64 [3]',
  );
});

t.test('a stabilizing rewrite is no change: where the graph before it overflows, any value passes', async (t) => {
  const x = pt.vector('x');
  const fn = await debugFn([x], pt.log(pt.sigmoid(x)));
  const out = await fn([-1000, 0, 2]);
  near(t, out, [-1000, Math.log(0.5), -Math.log1p(Math.exp(-2))], 1e-12);
});

t.test('a node that fails reports as in FAST_RUN', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const fn = await debugFn([x, y], pt.add(x, y));
  await throwsExactly(
    t,
    () => fn([1, 2], [1, 2, 3]),
    weft.NodeError,
    'Elemwise{add}: input 0 has shape [2] and input 1 has shape [3]: they differ on axis 0 (2 vs 3)\n' +
      '  in node 0: Elemwise{add}(x, y)\n  input values: float64 [2], float64 [3]',
  );
});

t.test('DebugMode runs an inplace kernel over its input, as plans do (Gemm{inplace} reads z from its output), whole and in chunks', async (t) => {
  // The gradient of sum(tanh(a . (w . w))^2) with respect to w has Gemm{inplace} nodes.
  const a = pt.matrix('a');
  const w = pt.matrix('w');
  const [g] = weft.grad(pt.tanh(a.dot(w.dot(w))).sqr().sum(), [w]);
  const fn = await weft.compile([a, w], g!, { mode: 'DebugMode' });
  t.ok(fn.fgraph.toposort().some((n) => String(n.op) === 'Gemm{inplace}'), 'the graph has an inplace gemm');
  const r = rng(3);
  const values = [r.normal([64, 256]), r.normal([256, 256])] as const;
  for (const v of values) for (let i = 0; i < v.data.length; i++) v.data[i] = v.data[i]! / 16;
  const got = (await fn(...values)) as weft.NdArray;
  const want = (await (await weft.compile([a, w], g!, { workers: 0 }))(...values)) as weft.NdArray;
  near(t, got, weft.tolist(want) as never, 1e-12, 'DebugMode gives the values FAST_RUN gives');
});
