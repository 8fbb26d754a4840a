// Kernels given as source (Theano's c_code with c_code_cache_version): an op's kernel call may be
// { name: 'source', params: { key, version, source, ... } }; every thread compiles the source once
// per key and version and reuses it. The same key and version with other source is refused: the
// version must change when the code does.
import { registerKernel, type Kernel, type KernelParams } from './registry.js';
import type { Range, TensorView } from './view.js';

type Compiled = (inputs: readonly TensorView[], outputs: readonly TensorView[], params: KernelParams, range: Range | undefined) => void;

const compiled = new Map<string, { source: string; fn: Compiled }>();

/** The compiled function of a source kernel's params (compiled on first use, then cached). */
export function sourceKernel(params: KernelParams): Compiled {
  const { key, version, source } = params as { key?: unknown; version?: unknown; source?: unknown };
  if (typeof key !== 'string' || (typeof version !== 'string' && typeof version !== 'number') || typeof source !== 'string') {
    throw new TypeError("a 'source' kernel needs params { key: string, version: string | number, source: string }");
  }
  const id = `${key}@${version}`;
  const hit = compiled.get(id);
  if (hit) {
    if (hit.source !== source) throw new Error(`source kernel ${id}: the source changed but the version did not; change the version with the code`);
    return hit.fn;
  }
  // Named in stack traces and debuggers as weft-source-kernel/<key>@<version>.js, with the
  // source's own line numbers (new Function would put two lines of its own before them).
  const fn = (0, eval)(`(function (inputs, outputs, params, range) {${source}\n})\n//# sourceURL=weft-source-kernel/${id}.js`) as Compiled;
  compiled.set(id, { source, fn });
  return fn;
}

const run: Kernel = (inputs, outputs, params, range) => sourceKernel(params)(inputs, outputs, params, range);
registerKernel('source', run);
