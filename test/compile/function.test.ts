// compile(): the form of results, updates (together, after success only), givens, shared
// variables, unused inputs, arity, input conversion and its errors, In(), bad input lists,
// outputs owned by the caller, eval, output dtypes, AbortSignal, and many calls in a row.
import t from 'tap';
import ndarray from 'ndarray';
import { near, pt, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;

const list = (a: weft.NdArray): unknown => weft.tolist(a);

/** The names of the ops that produce the function's outputs (its fgraph outputs, in order). */
function outputOps(fn: weft.CompiledFunction): string[] {
  return fn.fgraph.outputs.map((v) => (v.owner ? String(v.owner.op) : 'input'));
}

t.test('one output gives an ndarray, a list gives a list', async (t) => {
  const x = pt.vector('x');
  const one = await weft.compile([x], pt.mul(x, 2));
  const r = await one([1, 2]);
  t.notOk(Array.isArray(r));
  t.same(list(r), [2, 4]);
  const many = await weft.compile([x], [pt.mul(x, 2), x.sum()]);
  const rs = await many([1, 2]);
  t.ok(Array.isArray(rs));
  t.same(rs.map(list), [[2, 4], 3]);
  const single = await weft.compile([x], [x.sum()]);
  const rl = await single([1, 2]);
  t.ok(Array.isArray(rl) && rl.length === 1, 'a list of one output gives a list of one');
  const none = await weft.compile([], pt.add(pt.constant(2), 3));
  const k = await none();
  t.same(k.shape, [], 'a 0-d output is a 0-d ndarray');
  t.equal(weft.tolist(k), 5);
  t.equal(one.name, 'weft function');
  const named = await weft.compile([x], x.sum(), { name: 'total' });
  t.equal(named.name, 'total');
});

t.test('inputs: nested arrays, numbers, typed arrays and (non-contiguous) ndarrays', async (t) => {
  const m = pt.matrix('m');
  const s = pt.scalar('s');
  const fn = await weft.compile([m, s], pt.add(m, s));
  near(t, await fn([[1, 2], [3, 4]], 10), [[11, 12], [13, 14]]);
  const base = ndarray(new Float64Array([1, 2, 3, 4, 5, 6]), [2, 3]);
  near(t, await fn(base.transpose(1, 0), 0), [[1, 4], [2, 5], [3, 6]], 0, 'a transposed ndarray');
  near(t, await fn(base.lo(0, 1), 0), [[2, 3], [5, 6]], 0, 'a strided slice');
  const v = pt.vector('v');
  const fv = await weft.compile([v], pt.mul(v, 2));
  near(t, await fv(new Float64Array([1, 2])), [2, 4]);
  near(t, await fv(new Int16Array([1, 2])), [2, 4], 0, 'int16 converts to float64 without loss');
  near(t, await fv([true, false]), [2, 0], 0, 'booleans as numbers');
  near(t, await fv([]), [], 0, 'an empty vector');
});

t.test('updates: applied together, after the call, from the values before it', async (t) => {
  const x = pt.vector('x');
  const a = weft.shared([1, 2, 3], { name: 'a' });
  const b = weft.shared([10, 20, 30], { name: 'b' });
  const fn = await weft.compile([x], pt.add(a, b).sum(), {
    updates: [
      [a, pt.add(a, x)],
      [b, pt.mul(a, 2)],
    ],
  });
  t.same(fn.updated, [a, b]);
  near(t, await fn([1, 1, 1]), 66, 0, 'the output uses the old values');
  t.same(list(a.getValue()), [2, 3, 4]);
  t.same(list(b.getValue()), [2, 4, 6], 'b was computed from the old a');
  near(t, await fn([0, 0, 0]), 9 + 12, 0);
  const swap = await weft.compile([], pt.constant(0), {
    updates: [
      [a, b],
      [b, a],
    ],
  });
  await swap();
  t.same(list(a.getValue()), [4, 6, 8]);
  t.same(list(b.getValue()), [2, 3, 4], 'a swap sees both old values');
  b.setValue([0, 0, 0]);
  t.same(list(a.getValue()), [4, 6, 8], 'and leaves the two values independent');
});

t.test('updates: a failing call changes no shared variable, and the function still works', async (t) => {
  const x = pt.vector('x');
  const a = weft.shared([1, 2, 3], { name: 'a' });
  const b = weft.shared([0, 0, 0], { name: 'b' });
  const fn = await weft.compile([x], pt.sum(b), {
    updates: [
      [b, pt.add(b, 1)],
      [a, pt.add(a, x)],
    ],
  });
  // (a's update is computed inplace: a is a shared variable this function updates.)
  const failing = fn.fgraph.toposort().findIndex((n) => String(n) === 'Elemwise{add,inplace}(a, x)');
  await throwsExactly(
    t,
    () => fn([1, 2]),
    weft.NodeError,
    'Elemwise{add,inplace}: input 0 has shape [3] and input 1 has shape [2]: they differ on axis 0 (3 vs 2)\n' +
      `  in node ${failing}: Elemwise{add,inplace}(a, x)\n  input values: float64 [3], float64 [2]`,
  );
  t.same(list(a.getValue()), [1, 2, 3], 'a unchanged');
  t.same(list(b.getValue()), [0, 0, 0], 'b unchanged, though its update could be computed');
  await throwsExactly(
    t,
    () => fn([[1, 2, 3]]),
    weft.ValueTypeError,
    'input 0 (x) of the function: expected a 1-d value (TensorType(float64, (?,))), got a 2-d value of shape [1, 3]',
  );
  t.same(list(b.getValue()), [0, 0, 0], 'a refused input changes nothing either');
  near(t, await fn([1, 1, 1]), 0);
  t.same(list(a.getValue()), [2, 3, 4], 'the next good call works');
  t.same(list(b.getValue()), [1, 1, 1]);
});

t.test('updates: bad update lists', async (t) => {
  const x = pt.vector('x');
  const a = weft.shared([1, 2], { name: 'a' });
  const f32 = weft.shared(new Float32Array([1, 2]), { name: 'f' });
  await throwsExactly(
    t,
    () => weft.compile([x], x.sum(), { updates: [[x as never, x]] }),
    TypeError,
    'compile (the function): update 0 must start with a shared variable, got x',
  );
  await throwsExactly(
    t,
    () => weft.compile([], a, { updates: [[a, a], [a, a]], name: 'f' }),
    TypeError,
    "compile (function 'f'): a is updated twice",
  );
  await throwsExactly(
    t,
    () => weft.compile([], a, { updates: [[f32, pt.mul(f32, pt.constant(2, { dtype: 'float64' }))]] }),
    TypeError,
    "compile (the function): the update of f has type TensorType(float64, (?,)) but the shared variable has type TensorType(float32, (?,)) (cast it: .astype('float32'))",
  );
  await throwsExactly(
    t,
    () => weft.compile([], a, { updates: [[a, pt.matrix('m')]] }),
    TypeError,
    'compile (the function): the update of a has type TensorType(float64, (?, ?)) but the shared variable has type TensorType(float64, (?,))',
  );
  const s3 = weft.shared([1, 2, 3], { shape: [3], name: 's3' });
  await throwsExactly(
    t,
    () => weft.compile([x], s3, { updates: [[s3, x]] }),
    TypeError,
    'compile (the function): the update of s3 has type TensorType(float64, (?,)) but the shared variable has type TensorType(float64, (3,))',
    'an update must keep a static shape',
  );
  const upd = await weft.compile([], a, { updates: [[a, [5, 6]]] });
  await upd();
  t.same(list(a.getValue()), [5, 6], 'an update to a plain value: a constant of the shared variable\'s dtype');
  const ai = weft.shared(new Int32Array([1]), { name: 'ai' });
  await throwsExactly(
    t,
    () => weft.compile([], ai, { updates: [[ai, [1.5]]] }),
    weft.ValueTypeError,
    'compile (the function): the update of ai: 1.5 is not a value of int32 (integers from -2147483648 to 2147483647); pass allowInputDowncast: true to truncate it',
  );
});

t.test('givens: an input replaced by an expression, a shared variable by a constant', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const out = pt.mul(x, 10).sum();
  const fn = await weft.compile([y], out, { givens: [[x, pt.add(y, 1)]] });
  near(t, await fn([1, 2]), 50);
  const w = weft.shared([1, 2], { name: 'w' });
  const fw = await weft.compile([x], pt.mul(w, x), { givens: [[w, pt.constant([3, 4], { dtype: 'float64' })]] });
  near(t, await fw([1, 1]), [3, 4]);
  t.equal(fw.fgraph.inputs.length, 1, 'w is no longer an implicit input');
  const fv = await weft.compile([x], pt.mul(w, x), { givens: [[w, [5, 6]]] });
  near(t, await fv([1, 1]), [5, 6], 0, 'a plain value becomes a constant');
  const a = weft.shared([0, 0], { name: 'a' });
  const fu = await weft.compile([y], a.sum(), { updates: [[a, pt.add(a, x)]], givens: [[x, pt.mul(y, 2)]] });
  await fu([1, 2]);
  t.same(list(a.getValue()), [2, 4], 'givens apply to update expressions too');
  t.equal(x.owner, null);
  t.equal(out.owner!.inputs[0]!.owner!.inputs[0], x, 'the caller\'s graph is untouched');
});

t.test('givens: bad replacements', async (t) => {
  const x = pt.vector('x');
  await throwsExactly(
    t,
    () => weft.compile([], x.sum(), { givens: [[x, pt.matrix('m')]] }),
    TypeError,
    'compile (the function): givens[0] replaces x (TensorType(float64, (?,))) with m (TensorType(float64, (?, ?))); ' +
      'the replacement must have the same type (or a more specific static shape)',
  );
  await throwsExactly(
    t,
    () => weft.compile([], x.sum(), { givens: [[x, pt.constant([1, 2], { dtype: 'int8' })]] }),
    TypeError,
    'compile (the function): givens[0] replaces x (TensorType(float64, (?,))) with TensorConstant{[1,2]} (TensorType(int8, (2,))); ' +
      'the replacement must have the same type (or a more specific static shape)',
  );
  await throwsExactly(
    t,
    () => weft.compile([], x.sum(), { givens: [[x, [[1, 2]]]] }),
    weft.ValueTypeError,
    'compile (the function): givens[0]: expected a 1-d value (TensorType(float64, (?,))), got a 2-d value of shape [1, 2]',
  );
  const xs = pt.tensor({ shape: [3], name: 'xs' });
  await throwsExactly(
    t,
    () => weft.compile([], xs.sum(), { givens: [[xs, [1, 2]]] }),
    TypeError,
    'compile (the function): givens[0] replaces xs (TensorType(float64, (3,))) with TensorConstant{[1,2]} (TensorType(float64, (2,))); ' +
      'the replacement must have the same type (or a more specific static shape)',
  );
  near(t, await (await weft.compile([], x.sum(), { givens: [[x, [1, 2]]] }))(), 3, 0, 'a plain value takes the dtype of what it replaces');
  const fine = await weft.compile([], x.sum(), { givens: [[x, pt.constant([1, 2], { dtype: 'float64' })]] });
  near(t, await fine(), 3, 0, 'a constant of static length replaces a vector');
  const literal = await weft.compile([], x.sum(), { givens: [[x, pt.constant([1, 2])]] });
  near(t, await literal(), 3, 0, 'a constant of plain numbers is floatX, so it replaces a float64 vector');
  await throwsExactly(
    t,
    () => weft.compile([], x.sum(), { givens: [[3 as never, x]] }),
    TypeError,
    'compile (the function): givens[0] must start with a tensor variable',
  );
});

t.test('missing inputs', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  await throwsExactly(
    t,
    () => weft.compile([x], pt.add(x, y), { name: 'f' }),
    weft.MissingInputError,
    "y is needed to compute the outputs (by compile of function 'f') but is neither an input of the graph nor a constant; " +
      'pass it as an input or give it a value with givens',
  );
});

t.test('shared variables: values, copies, dtype and static shape', async (t) => {
  const s = weft.shared([[1, 2], [3, 4]], { name: 's' });
  t.equal(s.dtype, 'float64', 'JS numbers become floatX');
  t.equal(String(s.type), 'TensorType(float64, (?, ?))');
  t.equal(s.name, 's');
  const v1 = s.getValue();
  v1.data[0] = 99;
  t.same(list(s.getValue()), [[1, 2], [3, 4]], 'getValue returns a copy');
  const b = s.getValue({ borrow: true });
  t.equal(b, s.getValue({ borrow: true }), 'borrow: the stored value itself');
  t.not(s.getValue(), b);
  const src = ndarray(new Float64Array([5, 6]), [2]);
  const fromNd = weft.shared(src);
  src.data[0] = -1;
  t.same(list(fromNd.getValue()), [5, 6], 'shared copies the value it is given');
  t.equal(weft.shared(new Int16Array([1, 2])).dtype, 'int16', 'typed arrays keep their dtype');
  t.equal(weft.shared([true, false]).dtype, 'bool');
  t.equal(weft.shared(3).ndim, 0);
  const f32 = weft.shared([1.5, 2], { dtype: 'float32' });
  t.equal(f32.dtype, 'float32');
  t.equal(f32.getValue().data.constructor, Float32Array);
  const down = weft.shared(new Float64Array([1.7, -2.2]), { dtype: 'int32' });
  t.same(list(down.getValue()), [1, -2], 'an explicit dtype converts (truncating)');
  const fixed = weft.shared([1, 2, 3], { shape: [3], name: 'fixed' });
  t.equal(String(fixed.type), 'TensorType(float64, (3,))');
  await throwsExactly(
    t,
    () => weft.shared([1, 2, 3], { shape: [2], name: 'bad' }),
    weft.ValueTypeError,
    'shared(bad): expected length 2 on axis 0 (TensorType(float64, (2,))), got shape [3]',
  );
  await throwsExactly(
    t,
    () => fixed.setValue([1, 2]),
    weft.ValueTypeError,
    'shared variable fixed: expected length 3 on axis 0 (TensorType(float64, (3,))), got shape [2]',
  );
  t.same(list(fixed.getValue()), [1, 2, 3], 'a refused value leaves the old one');
});

t.test('shared variables: setValue filters, converts and copies unless borrowed', async (t) => {
  const s = weft.shared([1, 2], { name: 's' });
  s.setValue(new Int8Array([7, 8]));
  t.equal(s.getValue().data.constructor, Float64Array, 'converted to the variable\'s dtype');
  t.same(list(s.getValue()), [7, 8]);
  const mine = ndarray(new Float64Array([1, 1]), [2]);
  s.setValue(mine);
  mine.data[0] = 5;
  t.same(list(s.getValue()), [1, 1], 'setValue copies');
  s.setValue(mine, { borrow: true });
  mine.data[0] = 6;
  t.same(list(s.getValue()), [6, 1], 'borrow: the caller\'s array is kept');
  await throwsExactly(
    t,
    () => s.setValue([[1, 2]]),
    weft.ValueTypeError,
    'shared variable s: expected a 1-d value (TensorType(float64, (?,))), got a 2-d value of shape [1, 2]',
  );
  const i = weft.shared(new Int32Array([1]), { name: 'i' });
  await throwsExactly(
    t,
    () => i.setValue([1.5]),
    weft.ValueTypeError,
    'shared variable i: 1.5 is not a value of int32 (integers from -2147483648 to 2147483647); pass allowInputDowncast: true to truncate it',
  );
  const f = weft.shared(new Float32Array([1]), { name: 'f' });
  await throwsExactly(
    t,
    () => f.setValue(new Float64Array([0.1])),
    weft.ValueTypeError,
    'shared variable f: a float64 value cannot be converted to float32 without loss; convert it first, or pass allowInputDowncast: true to accept the conversion',
  );
  f.setValue(new Float64Array([0.1]), { allowDowncast: true });
  t.equal(f.getValue().data[0], Math.fround(0.1));
  const fn = await weft.compile([], pt.mul(s, 2));
  s.setValue([3, 4]);
  near(t, await fn(), [6, 8], 0, 'a compiled function reads the current value');
});

t.test('unused inputs: raise, warn, ignore', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  await throwsExactly(
    t,
    () => weft.compile([x, y], x.sum(), { name: 'f' }),
    weft.UnusedInputError,
    "compile (function 'f') was given input 1 (y), which no output depends on (pass onUnusedInput: 'ignore' or 'warn' to allow this)",
  );
  const warnings: unknown[][] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void warnings.push(args);
  let fn: weft.WeftFunction<weft.NdArray, [weft.InputValue, weft.InputValue]>;
  try {
    fn = await weft.compile([x, y], x.sum(), { onUnusedInput: 'warn' });
  } finally {
    console.warn = warn;
  }
  t.same(warnings, [
    ["weft: compile (the function) was given input 1 (y), which no output depends on (pass onUnusedInput: 'ignore' or 'warn' to allow this)"],
  ]);
  near(t, await fn([1, 2], [3]), 3);
  await throwsExactly(
    t,
    () => fn([1, 2], [[3]]),
    weft.ValueTypeError,
    'input 1 (y) of the function: expected a 1-d value (TensorType(float64, (?,))), got a 2-d value of shape [1, 1]',
    'an unused input still takes only values of its type',
  );
  const ig = await weft.compile([x, y], x.sum(), { onUnusedInput: 'ignore' });
  near(t, await ig([1, 2], [5]), 3);
  const a = weft.shared([1], { name: 'a' });
  const viaUpdate = await weft.compile([x], a, { updates: [[a, x]] });
  await viaUpdate([9]);
  t.same(list(a.getValue()), [9], 'an input used only by an update is used');
});

t.test('calls: wrong arity', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const f = await weft.compile([x, y], pt.add(x, y), { name: 'f' });
  // @ts-expect-error: the arity is wrong on purpose, to test the runtime error
  await throwsExactly(t, () => f([1]), TypeError, "function 'f' expects 2 arguments (x, y), got 1");
  // @ts-expect-error: the arity is wrong on purpose, to test the runtime error
  await throwsExactly(t, () => f([1], [2], [3]), TypeError, "function 'f' expects 2 arguments (x, y), got 3");
  const g = await weft.compile([weft.In(pt.vector(), { name: 'counts' })], pt.constant(1), { onUnusedInput: 'ignore' });
  // @ts-expect-error: the arity is wrong on purpose, to test the runtime error
  await throwsExactly(t, () => g(), TypeError, 'the function expects 1 argument (counts), got 0');
  const h = await weft.compile([pt.vector()], pt.constant(1), { onUnusedInput: 'ignore' });
  // @ts-expect-error: the arity is wrong on purpose, to test the runtime error
  await throwsExactly(t, () => h(), TypeError, 'the function expects 1 argument (input 0), got 0');
  const none = await weft.compile([], pt.constant(1));
  // @ts-expect-error: the arity is wrong on purpose, to test the runtime error
  await throwsExactly(t, () => none(1), TypeError, 'the function expects 0 arguments (), got 1');
});

t.test('calls: wrong rank, wrong dtype, lossy downcast, static shape', async (t) => {
  const x = pt.vector('x');
  const fx = await weft.compile([x], pt.mul(x, 2), { name: 'f' });
  await throwsExactly(
    t,
    () => fx([[1, 2]]),
    weft.ValueTypeError,
    "input 0 (x) of function 'f': expected a 1-d value (TensorType(float64, (?,))), got a 2-d value of shape [1, 2]",
  );
  await throwsExactly(
    t,
    () => fx(3),
    weft.ValueTypeError,
    "input 0 (x) of function 'f': expected a 1-d value (TensorType(float64, (?,))), got a 0-d value of shape []",
  );
  await throwsExactly(
    t,
    // @ts-expect-error: a string is the wrong kind of value on purpose, to test the runtime error
    () => fx('1,2'),
    weft.ValueTypeError,
    "input 0 (x) of function 'f': expected an ndarray, a nested array, a number or a typed array for TensorType(float64, (?,)), got string",
  );
  t.ok(new weft.ValueTypeError('') instanceof TypeError, 'ValueTypeError is a TypeError');
  const xi = pt.vector('xi', 'int32');
  const fi = await weft.compile([xi], pt.mul(xi, 2));
  await throwsExactly(
    t,
    () => fi([1.5, 2]),
    weft.ValueTypeError,
    'input 0 (xi) of the function: 1.5 is not a value of int32 (integers from -2147483648 to 2147483647); pass allowInputDowncast: true to truncate it',
  );
  await throwsExactly(
    t,
    () => fi(new Float64Array([1, 2])),
    weft.ValueTypeError,
    'input 0 (xi) of the function: a float64 value cannot be converted to int32 without loss; convert it first, or pass allowInputDowncast: true to accept the conversion',
  );
  await throwsExactly(
    t,
    () => fi([2 ** 31]),
    weft.ValueTypeError,
    'input 0 (xi) of the function: 2147483648 is not a value of int32 (integers from -2147483648 to 2147483647); pass allowInputDowncast: true to truncate it',
  );
  near(t, await fi(new Uint16Array([1, 2])), [2, 4], 0, 'uint16 fits in int32');
  const lenient = await weft.compile([xi], pt.mul(xi, 2), { allowInputDowncast: true });
  near(t, await lenient([1.5, -2.7]), [2, -4], 0, 'allowInputDowncast: truncated');
  near(t, await lenient(new Float64Array([3.9])), [6], 0);
  const xf = pt.vector('xf', 'float32');
  const ff = await weft.compile([xf], pt.mul(xf, 2));
  await throwsExactly(
    t,
    () => ff(new Float64Array([0.1])),
    weft.ValueTypeError,
    'input 0 (xf) of the function: a float64 value cannot be converted to float32 without loss; convert it first, or pass allowInputDowncast: true to accept the conversion',
  );
  const ff2 = await weft.compile([xf], pt.mul(xf, 2), { allowInputDowncast: true });
  const r = await ff2(new Float64Array([0.1]));
  t.equal(r.data[0], Math.fround(Math.fround(0.1) * 2));
  const xb = pt.vector('xb', 'bool');
  const fb = await weft.compile([xb], pt.not(xb));
  await throwsExactly(
    t,
    () => fb([2]),
    weft.ValueTypeError,
    'input 0 (xb) of the function: a bool value holds only 0, 1, true and false, found 2',
  );
  const xs = pt.tensor({ shape: [2, null], name: 'xs' });
  const fs = await weft.compile([xs], xs.sum());
  await throwsExactly(
    t,
    () => fs([[1, 2, 3]]),
    weft.ValueTypeError,
    'input 0 (xs) of the function: expected length 2 on axis 0 (TensorType(float64, (2, ?))), got shape [1, 3]',
  );
  near(t, await fs([[1, 2, 3], [4, 5, 6]]), 21);
});

t.test('In: name, mutable and borrow', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector();
  const fn = await weft.compile([weft.In(x, { name: 'first', mutable: true }), weft.In(y, { borrow: true })], pt.add(x, y));
  t.same(
    fn.inputs.map((i) => [i.name, i.mutable, i.borrow]),
    [
      ['first', true, false],
      [undefined, false, true],
    ],
  );
  await throwsExactly(
    t,
    () => fn([[1]], [1]),
    weft.ValueTypeError,
    'input 0 (first) of the function: expected a 1-d value (TensorType(float64, (?,))), got a 2-d value of shape [1, 1]',
  );
  await throwsExactly(
    t,
    () => fn([1], [[1]]),
    weft.ValueTypeError,
    'input 1 (unnamed) of the function: expected a 1-d value (TensorType(float64, (?,))), got a 2-d value of shape [1, 1]',
  );
  near(t, await fn([1, 2], [3, 4]), [4, 6]);
  t.equal(weft.In(x).name, 'x', 'the variable\'s name by default');
  t.equal(weft.In(x).mutable, false);
  await throwsExactly(t, () => weft.In(3 as never), TypeError, 'In: expected a variable, got 3');
});

t.test('bad input lists: twice, constants, shared variables', async (t) => {
  const x = pt.vector('x');
  await throwsExactly(t, () => weft.compile([x, x], x.sum()), TypeError, 'compile (the function): input 1 (x) is given twice');
  await throwsExactly(
    t,
    () => weft.compile([x, weft.In(x)], x.sum(), { name: 'f' }),
    TypeError,
    "compile (function 'f'): input 1 (x) is given twice",
    'also through In',
  );
  await throwsExactly(
    t,
    () => weft.compile([pt.constant(1)], x.sum()),
    TypeError,
    'compile (the function): input 0 (TensorConstant{1}) is a constant; inputs must be symbolic variables',
  );
  await throwsExactly(
    t,
    () => weft.compile([x, [1, 2] as never], x.sum()),
    TypeError,
    'compile (the function): input 1 must be a variable or weft.In(variable), got 1,2',
  );
  const s = weft.shared([1], { name: 's' });
  await throwsExactly(
    t,
    () => weft.compile([x, s], pt.add(x, s)),
    TypeError,
    'compile (the function): input 1 (s) is a shared variable; shared variables are implicit inputs, do not list them',
  );
});

t.test('an intermediate variable as an input cuts the graph there', async (t) => {
  const x = pt.vector('x');
  const a = pt.exp(x);
  const fn = await weft.compile([a], pt.mul(a, 2));
  near(t, await fn([1, 2]), [2, 4], 0, 'exp is not computed: a is given');
  t.notOk([...fn.fgraph.applyNodes].some((n) => String(n.op) === 'Elemwise{exp}'), 'no exp node in the graph');
  await throwsExactly(
    t,
    () => weft.compile([a], pt.add(a, x)),
    weft.MissingInputError,
    "x is needed to compute the outputs (by compile of the function) but is neither an input of the graph nor a constant; " +
      'pass it as an input or give it a value with givens',
  );
});

t.test('outputs belong to the caller: mutating them changes nothing of weft\'s', async (t) => {
  const x = pt.vector('x');
  const m = pt.matrix('m');
  const s = weft.shared([1, 2, 3], { name: 's' });
  const k = pt.constant([7, 8], { name: 'k', dtype: 'float64' });
  const e = pt.exp(x);
  const u = pt.add(s, x);
  const fn = await weft.compile([x, m], [x, m.T, s, s.dimshuffle('x', 0), k, e, e, u], { updates: [[s, u]] });
  const ops = outputOps(fn);
  t.equal(ops.length, 9, 'eight outputs and one update value');
  [0, 1, 2, 3, 4, 6, 8].forEach((i) => t.equal(ops[i], 'DeepCopyOp', `output ${i} aliases memory weft keeps: it is copied`));
  [5, 7].forEach((i) => t.not(ops[i], 'DeepCopyOp', `output ${i} is fresh memory: no copy`));
  t.equal(fn.fgraph.outputs[1]!.owner!.inputs[0]!.owner!.op.toString(), 'DimShuffle{1,0}', 'the copy is of the transpose view');
  const xv = ndarray(new Float64Array([0, 0, 0]), [3]);
  const mv = ndarray(new Float64Array([1, 2, 3, 4]), [2, 2]);
  const first = await fn(xv, mv);
  t.same(list(s.getValue()), [1, 2, 3], 'x = 0: the update keeps s');
  for (const out of first) out.data.fill(-5);
  t.same(list(xv), [0, 0, 0], 'the caller\'s input is unchanged');
  t.same(list(mv), [[1, 2], [3, 4]]);
  t.same(list(s.getValue()), [1, 2, 3], 'the shared value is unchanged');
  t.same(list(k.data), [7, 8], 'the constant is unchanged');
  const second = await fn(xv, mv);
  t.same(second.map(list), [[0, 0, 0], [[1, 3], [2, 4]], [1, 2, 3], [[1, 2, 3]], [7, 8], [1, 1, 1], [1, 1, 1], [1, 2, 3]], 'the next call is not affected');
  t.not(second[5]!.data, second[6]!.data, 'the same variable twice: two arrays');
  second[7]!.data.fill(100);
  t.same(list(s.getValue()), [1, 2, 3], 'an output that is also an update value is a separate array');
});

t.test('an output that is a view of a value the call computed is not copied (PyTensor copies views of inputs only)', async (t) => {
  const x = pt.vector('x');
  const m = pt.matrix('m');
  const e = pt.exp(m);
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const mv = ndarray(new Float64Array([0, 1, 2, 3, 4, 5]), [2, 3]);
  const exp = (v: number): number => Math.exp(v);
  for (const options of [{ workers: 0 }, { pool }]) {
    // e.T and e.reshape are views of e: the first to be handed out keeps it; the second shares it, so it is copied.
    const fn = await weft.compile([x, m], [e.T, pt.exp(x).dimshuffle('x', 0), e.reshape([3, 2]), m.T], options);
    const ops = outputOps(fn);
    t.same(ops, ['DimShuffle{1,0}', 'DimShuffle{x,0}', 'DeepCopyOp', 'DeepCopyOp'], 'views of computed values are handed over; a second view of one, and a view of an input, are copied');
    const first = await fn([0, 1], mv);
    const want = [[[exp(0), exp(3)], [exp(1), exp(4)], [exp(2), exp(5)]], [[1, exp(1)]], [[exp(0), exp(1)], [exp(2), exp(3)], [exp(4), exp(5)]], [[0, 3], [1, 4], [2, 5]]];
    t.same(first.map(list), want);
    for (const out of first) out.data.fill(-5);
    const second = await fn([0, 1], mv);
    t.same(second.map(list), want, 'the next call is not affected by changes to the last one\'s outputs');
    t.same(first.map(list).map((o) => (o as number[][]).flat().every((v) => v === -5)), [true, true, true, true], 'and the next call did not write into them');
  }
});

t.test('eval: with and without givens', async (t) => {
  const x = pt.vector('x');
  const y = pt.scalar('y');
  const out = pt.mul(x, y).sum();
  near(t, (await out.eval(new Map<weft.Variable, unknown>([[x, [1, 2]], [y, 3]]))) as weft.NdArray, 9);
  near(t, (await out.eval(new Map<weft.Variable, unknown>([[x, [1, 2, 3]], [y, 2]]))) as weft.NdArray, 12, 0, 'evaluated again with new values');
  near(t, (await pt.add(pt.constant(2), 3).eval()) as weft.NdArray, 5);
  const s = weft.shared([1, 2], { name: 's' });
  near(t, (await pt.mul(s, 2).eval()) as weft.NdArray, [2, 4], 0, 'shared variables need no givens');
  const v = (await x.eval(new Map([[x, [4, 5]]]))) as weft.NdArray;
  near(t, v, [4, 5], 0, 'an input evaluated to itself');
  await throwsExactly(
    t,
    () => out.eval(new Map([[x, [1, 2]]])),
    weft.MissingInputError,
    "y is needed to compute the outputs (by compile of function 'eval(Sum{axis=[0]}.out)') but is neither an input of the graph nor a constant; " +
      'pass it as an input or give it a value with givens',
  );
  await throwsExactly(
    t,
    () => out.eval(new Map<weft.Variable, unknown>([[x, [[1]]], [y, 1]])),
    weft.ValueTypeError,
    "input 0 (x) of function 'eval(Sum{axis=[0]}.out)': expected a 1-d value (TensorType(float64, (?,))), got a 2-d value of shape [1, 1]",
  );
});

t.test('outputs of every dtype', async (t) => {
  const x = pt.vector('x');
  const storage: Record<string, string> = {
    float32: 'Float32Array',
    float64: 'Float64Array',
    int8: 'Int8Array',
    int16: 'Int16Array',
    int32: 'Int32Array',
    uint8: 'Uint8Array',
    uint16: 'Uint16Array',
    uint32: 'Uint32Array',
    bool: 'Uint8Array',
  };
  for (const [dtype, cls] of Object.entries(storage)) {
    const y = pt.cast(x, dtype as weft.Dtype);
    t.equal(y.dtype, dtype);
    const fn = await weft.compile([x], [y, y.sum()]);
    const [out, total] = await fn([0, 1, 2]);
    t.equal(out!.data.constructor.name, cls, `${dtype}: stored as ${cls}`);
    const want = dtype === 'bool' ? [0, 1, 1] : [0, 1, 2];
    t.same(list(out!), want, `${dtype}: values`);
    t.same(total!.shape, [], `${dtype}: a 0-d sum`);
  }
});

t.test('AbortSignal: an aborted signal rejects before the call starts', async (t) => {
  const x = pt.vector('x');
  const a = weft.shared([0], { name: 'a' });
  const fn = await weft.compile([x], x.sum(), { name: 'f', updates: [[a, pt.add(a, 1)]] });
  const ctl = new AbortController();
  ctl.abort();
  await throwsExactly(t, () => fn([1, 2], { signal: ctl.signal }), weft.AbortError, "function 'f': the call was aborted before it started");
  t.same(list(a.getValue()), [0], 'nothing was updated');
  near(t, await fn([1, 2], { signal: new AbortController().signal }), 3, 0, 'a live signal');
  t.same(list(a.getValue()), [1]);
  const none = await weft.compile([], pt.constant(4));
  await throwsExactly(t, () => none({ signal: ctl.signal }), weft.AbortError, 'the function: the call was aborted before it started');
  near(t, await none({ signal: new AbortController().signal }), 4);
  t.equal(new weft.AbortError().name, 'AbortError');
});

t.test('dispose: a disposed function refuses calls', async (t) => {
  const x = pt.vector('x');
  const fn = await weft.compile([x], x.sum(), { name: 'f' });
  fn.dispose();
  await throwsExactly(t, () => fn([1]), Error, "function 'f' was disposed");
});

t.test('bad options', async (t) => {
  const x = pt.vector('x');
  await throwsExactly(
    t,
    () => weft.compile([x], x.sum(), { mode: 'FAST' as never }),
    TypeError,
    'compile (the function): unknown mode "FAST" (expected \'FAST_RUN\', \'FAST_COMPILE\', \'DebugMode\', \'NanGuardMode\' or a weft.Mode)',
  );
  await throwsExactly(
    t,
    () => weft.compile([x], x.sum(), { workers: -1 }),
    RangeError,
    'compile (the function): workers must be a non-negative integer, got -1',
  );
  await throwsExactly(t, () => weft.compile([x], [x.sum(), 3 as never]), TypeError, 'compile (the function): output 1 is not a variable: 3');
});

t.test('1000 calls of a small function give the same results', async (t) => {
  const x = pt.vector('x');
  const count = weft.shared(0, { name: 'count' });
  const fn = await weft.compile([x], [pt.exp(x).sum(), pt.mul(x, x).T], { updates: [[count, pt.add(count, 1)]] });
  const input = [0.25, -1, 3];
  const [s0, sq0] = await fn(input);
  const expected = [weft.tolist(s0!), weft.tolist(sq0!)];
  t.equal(expected[0], Math.exp(0.25) + Math.exp(-1) + Math.exp(3));
  let same = 0;
  for (let i = 0; i < 999; i++) {
    const [s, sq] = await fn(input);
    if (weft.tolist(s!) === expected[0] && JSON.stringify(weft.tolist(sq!)) === JSON.stringify(expected[1])) same++;
  }
  t.equal(same, 999);
  t.equal(weft.tolist(count.getValue()), 1000, 'one update per call');
});
