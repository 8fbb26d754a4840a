// Kernels of your own in WebAssembly (registerWasmKernel from 'weft/kernels'): a hand-written
// module (test/fixtures/wasm-scale-kernel.mjs) compiled once per worker, importing the pool's
// shared memory and called with byte addresses; on two workers it gives its JS twin's bits, a
// call outside wasm memory takes the JS fallback (or fails and says why), and bad modules are
// refused with the reason.
import t from 'tap';
import { Apply } from '../../src/graph/apply.js';
import type { KernelCall } from '../../src/graph/op.js';
import type { TensorView } from '../../src/kernels/view.js';
import { registerWasmKernel } from '../../src/kernels/wasm-kernel.js';
import { rng, pt, throwsExactly, weft } from '../helpers.js';

const fixture = new URL('../fixtures/wasm-scale-kernel.mjs', import.meta.url);
const BIG = 1 << 17;

/** factor * x through the kernel `kernelName` (the wasm one, or its JS twin). */
class Scale extends weft.Op {
  static override readonly props = ['kernelName', 'factor'] as const;
  constructor(
    readonly kernelName: string,
    readonly factor: number,
  ) {
    super();
  }
  override makeNode(x: unknown): Apply {
    const v = pt.asTensorVariable(x as weft.pt.TensorVariable);
    return new Apply(this, [v], [v.type.makeVariable()]);
  }
  override outputShapes(_node: Apply, [x]: readonly TensorView[]): number[][] {
    return [[...x!.shape]];
  }
  override kernel(): KernelCall {
    return { name: this.kernelName, params: { factor: this.factor }, chunking: { by: 'elements' }, contiguousInputs: true };
  }
}

t.test('on two workers the wasm kernel runs in place, chunked, with the bits of its JS twin', async (t) => {
  const pool = weft.createPool({ workers: 2, kernelModules: [fixture] });
  t.teardown(() => pool.close());
  const x = pt.vector('x');
  const viaWasm = await weft.compile([x], new Scale('test.wasmScale', 1.7).call(x.add(0.25)), { pool, profile: true });
  const viaJs = await weft.compile([x], new Scale('test.jsScale', 1.7).call(x.add(0.25)), { pool });
  const v = rng(11).normal([BIG]);
  const a = (await viaWasm(v)).data;
  const b = (await viaJs(v)).data;
  t.ok(
    a.every((value, i) => Object.is(value, b[i])),
    'equal bits',
  );
  const xs = v.data as Float64Array;
  t.ok(
    a.every((value, i) => value === 1.7 * (xs[i]! + 0.25)),
    'the values of the formula',
  );
  const threads = new Set(viaWasm.profile!.events.filter((e) => e.node.op instanceof Scale).map((e) => e.thread));
  t.ok([...threads].some((th) => th !== 0), `it ran in the workers (threads ${[...threads].join(', ')}); with no JS fallback, only the wasm could`);
});

t.test('outside WebAssembly memory: the JS fallback, or an error that says what is missing', async (t) => {
  // Registered on this thread too (a pool imports kernel modules on the calling thread).
  await import(fixture.href);
  const x = pt.vector('x');
  const withFallback = await weft.compile([x], new Scale('test.wasmScaleOrJs', 3).call(x), { workers: 0 });
  t.same(Array.from((await withFallback([1, 2, 4])).data), [3, 6, 12], 'the JS twin on plain arrays');
  const without = await weft.compile([x], new Scale('test.wasmScale', 3).call(x), { workers: 0 });
  await t.rejects(without([1, 2]), {
    message: /kernel test\.wasmScale: its views are not in a WebAssembly memory \(a call without a pool\) and it has no JS fallback; register it with \{ fallback \}/,
  });
});

t.test('bad modules are refused when registered, with the reason', async (t) => {
  const { scaleWasm } = (await import(fixture.href)) as { scaleWasm: Uint8Array };
  await throwsExactly(t, () => registerWasmKernel('test.none', { module: scaleWasm, export: 'go' }), TypeError, "registerWasmKernel (test.none): the module has no exported function 'go'");
  // The smallest module: no imports, no exports.
  const empty = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  await throwsExactly(t, () => registerWasmKernel('test.empty', { module: empty, export: 'run' }), TypeError, "registerWasmKernel (test.empty): the module has no exported function 'run'");
  await t.rejects(registerWasmKernel('test.garbage', { module: new Uint8Array([1, 2, 3]) }), WebAssembly.CompileError, 'not WebAssembly');
});

t.test('a module given as a file: URL is read in Node', async (t) => {
  const { scaleWasm } = (await import(fixture.href)) as { scaleWasm: Uint8Array };
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { pathToFileURL } = await import('node:url');
  const file = join(mkdtempSync(join(tmpdir(), 'weft-wasm-')), 'scale.wasm');
  writeFileSync(file, scaleWasm);
  await registerWasmKernel('test.wasmScaleFromFile', { module: pathToFileURL(file), params: ['factor'] });
  const pool = weft.createPool({ workers: 1 });
  t.teardown(() => pool.close());
  // On the calling thread in the pool's memory (workers: 0 with a pool): views are in wasm memory.
  const x = pt.vector('x');
  const fn = await weft.compile([x], new Scale('test.wasmScaleFromFile', 2).call(x), { pool, workers: 0 });
  t.same(Array.from((await fn(pool.from(new Float64Array([1, 2, 3])))).data), [2, 4, 6], 'ran the wasm read from the file');
});

t.teardown(() => weft.shutdown());
