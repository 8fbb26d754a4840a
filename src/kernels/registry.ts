// The kernel registry: the only bridge between ops and numeric code. An op names a kernel and
// gives it structured-clone-safe params; the calling thread and every worker look the name up
// here. Users register their own kernels from modules that every worker imports.
import type { Range, TensorView } from './view.js';

/** Params of a kernel call: plain data only (it crosses threads as JSON). */
export type KernelParams = Readonly<Record<string, unknown>>;

/**
 * A kernel computes its outputs (already allocated, of the right shapes) from its inputs. With a
 * range it computes only that part of the work (flat output elements, or rows, as its op's
 * chunking says); chunks never overlap, so chunks of one call may run on different threads.
 */
export type Kernel = (inputs: readonly TensorView[], outputs: readonly TensorView[], params: KernelParams, range?: Range) => void;

/** The kernels registered through this copy of the module. */
const kernels = new Map<string, Kernel>();

/**
 * Every kernel registered on this thread, kept on globalThis as well: a thread may load two
 * copies of this module (a user's kernel module importing the published `weft/kernels` while the
 * program runs weft from its sources, or two installed versions), and a user's kernel registered
 * through one must be found by the other. A copy looks up its own kernels first, so two copies'
 * built-in kernels of the same name never mix.
 */
const REGISTRY = Symbol.for('weft.kernel-registry');
interface RegistryHolder {
  [REGISTRY]?: { readonly kernels: Map<string, Kernel>; thread: string };
}
const thisThread = ((globalThis as RegistryHolder)[REGISTRY] ??= { kernels: new Map(), thread: 'the calling thread' });

/** Names this thread in the registry's errors ('worker thread 3'); the calling thread is the default. */
export function setRegistryThreadName(name: string): void {
  thisThread.thread = name;
}

export function registerKernel(name: string, kernel: Kernel): void {
  const existing = kernels.get(name);
  if (existing !== undefined && existing !== kernel) throw new Error(`registerKernel: a different kernel is already registered as '${name}'`);
  kernels.set(name, kernel);
  if (!thisThread.kernels.has(name)) thisThread.kernels.set(name, kernel);
}

export function getKernel(name: string): Kernel {
  const k = kernels.get(name) ?? thisThread.kernels.get(name);
  if (!k) throw new Error(`no kernel is registered as '${name}' on ${thisThread.thread} (load the module that registers it with createPool({ kernelModules }): every worker and the calling thread import them)`);
  return k;
}

export function hasKernel(name: string): boolean {
  return kernels.has(name) || thisThread.kernels.has(name);
}
