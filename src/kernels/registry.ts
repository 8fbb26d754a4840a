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

const kernels = new Map<string, Kernel>();

export function registerKernel(name: string, kernel: Kernel): void {
  const existing = kernels.get(name);
  if (existing !== undefined && existing !== kernel) throw new Error(`registerKernel: a different kernel is already registered as '${name}'`);
  kernels.set(name, kernel);
}

export function getKernel(name: string): Kernel {
  const k = kernels.get(name);
  if (!k) throw new Error(`no kernel is registered as '${name}' (a kernel module that registers it must be loaded in every worker)`);
  return k;
}

export function hasKernel(name: string): boolean {
  return kernels.has(name);
}
