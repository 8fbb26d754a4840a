// NanGuardMode: log(-1) and 1/0 stop the call with an error that names the node that produced
// the bad value, its output and the index of the first bad element; a bad input is reported as
// the input (or shared variable) that held it; big values count too; each flag turned off lets
// its kind of value through, and honest graphs run as in FAST_RUN.
import t from 'tap';
import { near, pt, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;

async function guarded(inputs: readonly TV[], out: TV, mode: weft.CompileOptions['mode'] = 'NanGuardMode', name?: string) {
  return weft.compile(inputs, out, { mode, name });
}

t.test("mode: 'NanGuardMode' runs honest graphs and gives their values", async (t) => {
  const x = pt.matrix('x');
  const fn = await guarded([x], pt.log(pt.exp(x).sum({ axis: 1 })));
  t.type(fn.mode, weft.NanGuardMode);
  t.equal(fn.mode.name, 'NanGuardMode');
  near(t, await fn([[0, 1], [2, 3]]), [Math.log(1 + Math.E), Math.log(Math.exp(2) + Math.exp(3))]);
  const ints = pt.vector('i', 'int32');
  const idiv = await guarded([ints], pt.intDiv(ints, 0));
  t.same(weft.tolist(await idiv([1, 2])), weft.tolist(await (await weft.compile([ints], pt.intDiv(ints, 0), { workers: 0 }))([1, 2])), 'integers are never checked');
});

t.test('log(-1) names the node that produced NaN', async (t) => {
  const x = pt.scalar('x');
  const fn = await guarded([x], pt.log(x));
  near(t, await fn(2), Math.log(2));
  await throwsExactly(
    t,
    () => fn(-1),
    weft.NanGuardError,
    'NanGuardMode: Elemwise{log} (node 0: Elemwise{log}(x)) produced NaN in output 0 (Elemwise{log}.out), first at index []',
  );
  const v = pt.vector('v', 'float32');
  const fv = await guarded([v], pt.log(v));
  await throwsExactly(
    t,
    () => fv([1, 2, -3, -4]),
    weft.NanGuardError,
    'NanGuardMode: Elemwise{log} (node 0: Elemwise{log}(v)) produced NaN in output 0 (Elemwise{log}.out), first at index [2]',
    'float32',
  );
  try {
    await fv([1, 2, -3, -4]);
  } catch (e) {
    const err = e as weft.NanGuardError;
    t.equal(err.kind, 'nan');
    t.same(err.index, [2]);
    t.ok(Number.isNaN(err.value));
    t.same(Object.keys(err.where), ['node', 'position', 'output']);
  }
});

t.test('the first node that produces a bad value is named, not the nodes after it', async (t) => {
  const x = pt.matrix('x');
  // Without fusion (and inplace) each element-wise op is a node: sub, log, exp, then add reads the NaN.
  const mode = new weft.NanGuardMode({ excluding: ['fusion', 'inplace'] });
  const fn = await guarded([x], pt.add(pt.log(pt.sub(x, 2)), pt.exp(x)), mode);
  t.same(fn.fgraph.toposort().map(String), [
    'Elemwise{sub}(x, TensorConstant{[[2]]})',
    'Elemwise{log}(Elemwise{sub}.out)',
    'Elemwise{exp}(x)',
    'Elemwise{add}(Elemwise{log}.out, Elemwise{exp}.out)',
  ]);
  await throwsExactly(
    t,
    () => fn([[3, 4], [5, 1]]),
    weft.NanGuardError,
    'NanGuardMode: Elemwise{log} (node 1: Elemwise{log}(Elemwise{sub}.out)) produced NaN in output 0 (Elemwise{log}.out), first at index [1, 1]',
  );
  const fused = await guarded([x], pt.add(pt.log(pt.sub(x, 2)), pt.exp(x)));
  await throwsExactly(
    t,
    () => fused([[3, 4], [5, 1]]),
    weft.NanGuardError,
    'NanGuardMode: Composite{add(log(sub(i0,i1)),exp(i0))} (node 0: Composite{add(log(sub(i0,i1)),exp(i0))}(x, TensorConstant{[[2]]})) ' +
      'produced NaN in output 0 (Composite{add(log(sub(i0,i1)),exp(i0))}.out), first at index [1, 1]',
    'fused, the Composite is the node',
  );
});

t.test('1/0 names the node that produced inf; log(0) gives -inf', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const fn = await guarded([x, y], pt.trueDiv(x, y));
  near(t, await fn([1, 2], [4, 8]), [0.25, 0.25]);
  await throwsExactly(
    t,
    () => fn([1, 2], [1, 0]),
    weft.NanGuardError,
    'NanGuardMode: Elemwise{trueDiv} (node 0: Elemwise{trueDiv}(x, y)) produced inf in output 0 (Elemwise{trueDiv}.out), first at index [1]',
  );
  await throwsExactly(
    t,
    () => fn([0, 1], [0, 0]),
    weft.NanGuardError,
    'NanGuardMode: Elemwise{trueDiv} (node 0: Elemwise{trueDiv}(x, y)) produced NaN in output 0 (Elemwise{trueDiv}.out), first at index [0]',
    '0/0',
  );
  const logged = await guarded([x], pt.log(x));
  await throwsExactly(
    t,
    () => logged([1, 0]),
    weft.NanGuardError,
    'NanGuardMode: Elemwise{log} (node 0: Elemwise{log}(x)) produced -inf in output 0 (Elemwise{log}.out), first at index [1]',
    'log(0)',
  );
});

t.test('a bad input is reported as the input that held it', async (t) => {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const fn = await guarded([x, y], pt.add(x, y), 'NanGuardMode', 'f');
  await throwsExactly(
    t,
    () => fn([1, 2], [3, NaN]),
    weft.NanGuardError,
    "NanGuardMode: input 1 (y) of function 'f' holds NaN, first at index [1]",
  );
  await throwsExactly(
    t,
    () => fn([Infinity, 2], [3, 4]),
    weft.NanGuardError,
    "NanGuardMode: input 0 (x) of function 'f' holds inf, first at index [0]",
  );
  try {
    await fn([1, 2], [3, NaN]);
  } catch (e) {
    t.same((e as weft.NanGuardError).where, { input: 1 });
  }
  const w = weft.shared([1, NaN], { name: 'w' });
  const g = await guarded([x], pt.mul(x, w as unknown as TV));
  await throwsExactly(t, () => g([1, 1]), weft.NanGuardError, 'NanGuardMode: shared variable w of the function holds NaN, first at index [1]', 'shared');
});

t.test('bigIsError: values above 1e10 in absolute value', async (t) => {
  const x = pt.vector('x');
  const fn = await guarded([x], pt.mul(x, 1e6));
  near(t, await fn([1e4, -1e4]), [1e10, -1e10], 0, 'exactly 1e10 is not big');
  await throwsExactly(
    t,
    () => fn([1, -1e5]),
    weft.NanGuardError,
    'NanGuardMode: Elemwise{mul} (node 0: Elemwise{mul}(x, TensorConstant{[1000000]})) produced -100000000000 (absolute value above 1e10) ' +
      'in output 0 (Elemwise{mul}.out), first at index [1]',
  );
  await throwsExactly(
    t,
    () => fn([2e10, 0]),
    weft.NanGuardError,
    'NanGuardMode: input 0 (x) of the function holds 20000000000 (absolute value above 1e10), first at index [0]',
    'a big input',
  );
});

t.test('each flag turned off lets its kind of value through', async (t) => {
  const x = pt.vector('x');
  const logOf = await guarded([x], pt.log(x), new weft.NanGuardMode({ nanIsError: false }));
  near(t, await logOf([-1, 1]), [NaN, 0], 0, 'nanIsError: false');
  await throwsExactly(
    t,
    () => logOf([0]),
    weft.NanGuardError,
    'NanGuardMode: Elemwise{log} (node 0: Elemwise{log}(x)) produced -inf in output 0 (Elemwise{log}.out), first at index [0]',
    'inf is still an error',
  );
  const y = pt.vector('y');
  const ratio = await guarded([x, y], pt.trueDiv(x, y), new weft.NanGuardMode({ infIsError: false }));
  near(t, await ratio([1, -1], [0, 0]), [Infinity, -Infinity], 0, 'infIsError: false (inf is not "big")');
  await throwsExactly(
    t,
    () => ratio([0], [0]),
    weft.NanGuardError,
    'NanGuardMode: Elemwise{trueDiv} (node 0: Elemwise{trueDiv}(x, y)) produced NaN in output 0 (Elemwise{trueDiv}.out), first at index [0]',
    'NaN is still an error',
  );
  const big = await guarded([x], pt.mul(x, 1e6), new weft.NanGuardMode({ bigIsError: false }));
  near(t, await big([1e5]), [1e11], 0, 'bigIsError: false');
  const none = await guarded([x], pt.log(x), new weft.NanGuardMode({ nanIsError: false, infIsError: false, bigIsError: false }));
  near(t, await none([-1, 0]), [NaN, -Infinity], 0, 'all off');
  t.type(new weft.NanGuardMode().including('fusion'), weft.NanGuardMode, 'including keeps the mode a NanGuardMode');
});
