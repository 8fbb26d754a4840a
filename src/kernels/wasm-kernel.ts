// Kernels of your own written in WebAssembly (the analogue of the guide's C ops): a module given
// as bytes, a compiled WebAssembly.Module or a URL, compiled once per thread and instantiated
// once per shared memory it runs over, which it imports as env.memory. Its export is called with
// the task's element range and the byte addresses of the views, so it reads and writes the
// pool's memory in place. Views outside a WebAssembly memory (a call without a pool) use the JS
// twin the kernel is registered with.
import type { TypedArray } from './dtype.js';
import { attachedMemoryOf, threadBlockOf } from './gemm-wasm.js';
import { registerKernel, type Kernel, type KernelParams } from './registry.js';
import { isContiguous, sizeOf, type Range, type TensorView } from './view.js';
import { instanceFor } from './wasm-instances.js';

export interface WasmKernelSpec {
  /** The module: its bytes, a compiled WebAssembly.Module, or a URL to fetch (file: URLs are read in Node). */
  readonly module: BufferSource | WebAssembly.Module | URL | string;
  /** The export to call (default 'run'); it imports its memory as env.memory. */
  readonly export?: string;
  /** Params passed after the addresses, in this order, as numbers (the export's types convert them). */
  readonly params?: readonly string[];
  /**
   * The same computation in JS (a Kernel), for views outside a WebAssembly memory and for views
   * that are not contiguous. Without it, such a call fails and says why.
   */
  readonly fallback?: Kernel;
}

/** The wasm call: (start, end, ...input addresses, ...output addresses, ...params). */
type Entry = (...args: number[]) => void;

/** The byte address of element 0 of `v` in its buffer. */
function addressOf(v: TensorView): number {
  return v.data.byteOffset + v.offset * v.data.BYTES_PER_ELEMENT;
}

async function bytesOf(source: URL | string): Promise<Uint8Array<ArrayBuffer>> {
  const url = source instanceof URL ? source : new URL(source);
  if (url.protocol === 'file:') {
    // Read through a name the browser bundle does not resolve: only Node takes this path.
    const fsName = 'node:fs/promises';
    const fs = (await import(/* @vite-ignore */ fsName)) as { readFile(u: URL): Promise<Uint8Array<ArrayBuffer>> };
    return new Uint8Array(await fs.readFile(url));
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`registerWasmKernel: fetching ${url} failed: ${response.status} ${response.statusText}`);
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * Registers the kernel `name` as the export of a WebAssembly module (see WasmKernelSpec). It
 * resolves once the module is compiled in this thread; a kernel module awaits it at its top level.
 */
export async function registerWasmKernel(name: string, spec: WasmKernelSpec): Promise<void> {
  const given = spec.module;
  const compiled =
    given instanceof WebAssembly.Module
      ? given
      : new WebAssembly.Module(given instanceof URL || typeof given === 'string' ? await bytesOf(given) : (given as BufferSource));
  const exportName = spec.export ?? 'run';
  const wanted = WebAssembly.Module.exports(compiled).find((e) => e.name === exportName);
  if (wanted?.kind !== 'function') throw new TypeError(`registerWasmKernel (${name}): the module has no exported function '${exportName}'`);
  const imports = WebAssembly.Module.imports(compiled);
  if (!imports.some((i) => i.module === 'env' && i.name === 'memory' && i.kind === 'memory') || imports.length !== 1) {
    throw new TypeError(`registerWasmKernel (${name}): the module must import exactly its memory, as env.memory (it imports ${imports.map((i) => `${i.module}.${i.name}`).join(', ') || 'nothing'})`);
  }
  const paramNames = spec.params ?? [];
  const key = `user-wasm|${name}`;
  const kernel: Kernel = (inputs, outputs, params, range) => {
    const views = [...inputs, ...outputs];
    const memory = views.map((v) => attachedMemoryOf(v.data.buffer)).find((m) => m !== undefined);
    // By the memory a view's buffer belongs to, not by identity with its current buffer: views
    // made before the memory grew keep an earlier buffer object of the same memory.
    const inMemory = (v: TensorView): boolean => memory !== undefined && attachedMemoryOf(v.data.buffer) === memory;
    // Outputs may live in memory of their own (large results handed to the caller): their
    // elements are written through this thread's scratch block in the pool's memory.
    const staged = outputs.filter((v) => !inMemory(v));
    const block = memory && threadBlockOf(memory);
    const runnable = memory !== undefined && views.every(isContiguous) && inputs.every(inMemory) && (staged.length === 0 || block !== undefined);
    if (!runnable) {
      if (spec.fallback) return spec.fallback(inputs, outputs, params, range);
      throw new Error(
        `kernel ${name}: ${memory ? 'its views are not all contiguous' : 'its views are not in a WebAssembly memory (a call without a pool)'} and it has no JS fallback; ` +
          'register it with { fallback } (or give its op a kernel call with contiguousInputs)',
      );
    }
    const entry = instanceFor(memory, key, () => compiled, (e) => e[exportName] as Entry);
    const extra = paramNames.map((p) => paramValue(params, p, name));
    const { start, end } = rangeOf(outputs[0], range);
    if (staged.length === 0) {
      entry(start, end, ...views.map(addressOf), ...extra);
      return;
    }
    // Each staged output gets a slice of the block; the range runs in steps that fit the slices.
    // (A kernel writes output elements [start, end) only: the chunking contract.)
    const slice = Math.floor(block!.bytes / staged.length / 16) * 16;
    const widest = Math.max(...staged.map((v) => v.data.BYTES_PER_ELEMENT));
    const step = Math.max(1, Math.floor(slice / widest));
    for (let s = start; s < end; s += step) {
      const e = Math.min(end, s + step);
      // Addresses wrap modulo 2^32 as wasm's i32 arithmetic does: element s of a staged output is at its slice's start.
      const addresses = views.map((v) => {
        const k = staged.indexOf(v);
        return k < 0 ? addressOf(v) : (block!.address + k * slice - s * v.data.BYTES_PER_ELEMENT) | 0;
      });
      entry(s, e, ...addresses, ...extra);
      staged.forEach((v, k) => {
        const from = new (v.data.constructor as new (b: ArrayBufferLike, o: number, n: number) => TypedArray)(memory.buffer, block!.address + k * slice, e - s);
        v.data.set(from, v.offset + s);
      });
    }
  };
  registerKernel(name, kernel);
}

function rangeOf(out: TensorView | undefined, range: Range | undefined): Range {
  return range ?? { start: 0, end: out ? sizeOf(out.shape) : 0 };
}

function paramValue(params: KernelParams, p: string, name: string): number {
  const v = params[p];
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  throw new TypeError(`kernel ${name}: param '${p}' must be a number or a boolean to pass to WebAssembly, got ${typeof v}`);
}
