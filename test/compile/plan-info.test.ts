// fn.planInfo(...values): the plan a call with those values runs, through the public API: the
// region grows with the inputs' size, big element-wise work splits into tasks, the plan is the
// one calls use, staged graphs say they are staged, and bad arguments fail as a call would.
import t from 'tap';
import { pt, weft } from '../helpers.js';

t.test('regionBytes follows the values the plan places; tasks follow the chunks', async (t) => {
  const x = pt.vector('x');
  const fn = await weft.compile([x], pt.exp(x).mul(2), { workers: 0 });
  const small = fn.planInfo(new Float64Array(10));
  const big = fn.planInfo(new Float64Array(1 << 20));
  t.ok(small.regionBytes > 0 && small.tasks >= 1, `a small call: ${small.regionBytes} bytes, ${small.tasks} task(s)`);
  // The input and the result of 2^20 float64 each: at least 16 MiB.
  t.ok(big.regionBytes >= 2 * 8 * (1 << 20), `${big.regionBytes} bytes for 2^20 elements`);
  t.ok(big.tasks > small.tasks, `2^20 elements split into ${big.tasks} tasks`);
  t.equal(big.complete, true);
  t.equal(small.inline, true, 'workers: 0 runs inline');
  t.same(fn.planInfo(new Float64Array(10)), small, 'the same signature, the same plan');
  const out = await fn([0, 1]);
  t.same(weft.tolist(out), [2, 2 * Math.E], 'the function still runs');
});

t.test('shared variables count with their current values', async (t) => {
  const x = pt.vector('x');
  const w = weft.shared(new Float64Array(4), { name: 'w' });
  const fn = await weft.compile([x], x.add(w.sum()), { workers: 0 });
  const before = fn.planInfo([1, 2]).regionBytes;
  w.setValue(new Float64Array(4096));
  const after = fn.planInfo([1, 2]).regionBytes;
  t.ok(before < 8 * 4096 && after >= 8 * 4096, `a bigger shared value, a bigger region (${before} -> ${after} bytes)`);
});

t.test('a staged graph reports its first stage', async (t) => {
  const y0 = pt.scalar('y0');
  const { outputs } = weft.scan({ fn: (y: weft.pt.TensorVariable) => [y.mul(2), weft.until(y.mul(2).gt(40))] as const, outputsInfo: [y0], nSteps: 100 });
  const fn = await weft.compile([y0], outputs.sum(), { workers: 0 });
  t.equal(fn.planInfo(1).complete, false, 'an until loop ends the first stage');
  t.same(weft.tolist(await fn(1)), 2 + 4 + 8 + 16 + 32 + 64);
});

t.test('bad arguments and functions without plans', async (t) => {
  const x = pt.vector('x');
  const fn = await weft.compile([x], x.mul(2), { workers: 0, name: 'double' });
  t.throws(() => (fn.planInfo as (...a: unknown[]) => unknown)(), { name: 'TypeError', message: "function 'double' expects 1 argument (x), got 0" });
  t.throws(() => fn.planInfo([[1, 2]] as unknown as number[]), TypeError, 'a matrix for a vector');
  const checked = await weft.compile([x], x.mul(2), { mode: 'DebugMode', name: 'checked' });
  t.throws(() => checked.planInfo([1]), /function 'checked' has no plan: its calls run in Mode\(DebugMode\)/);
  fn.dispose();
  t.throws(() => fn.planInfo([1]), /was disposed/);
});
