// @stdlib's special functions are loaded on their first call (kernels/stdlib.ts), not when weft is
// imported: they are some 430 CommonJS modules, 120-220 ms of every process and worker thread.
import { createRequire } from 'node:module';
import t from 'tap';
import { pt, weft } from '../helpers.js';

const stdlibModules = (): string[] => Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('/@stdlib/'));

t.test('importing weft loads no @stdlib module; pt.special.gamma loads its own on its first call', async (t) => {
  t.same(stdlibModules(), [], 'none after the import');
  const x = pt.vector('x');
  const fn = await weft.compile([x], pt.special.gamma(x), { workers: 0 });
  t.same(stdlibModules(), [], 'none after compiling');
  const got = (await fn(new Float64Array([5, 0.5]))) as weft.NdArray;
  t.equal(got.data[0], 24, 'gamma(5) = 4!');
  t.ok(Math.abs(got.data[1]! - Math.sqrt(Math.PI)) < 1e-15, 'gamma(1/2) = sqrt(pi)');
  const loaded = stdlibModules();
  t.ok(loaded.some((k) => k.includes('/math-base-special-gamma/')), 'gamma is loaded now');
  t.notOk(loaded.some((k) => k.includes('/math-base-special-polygamma/')), 'and polygamma, never called, is not');
});
