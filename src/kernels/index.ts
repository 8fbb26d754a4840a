// `weft/kernels`: what a user's kernel module needs (it runs in every worker): the registry,
// the view type kernels receive, and a few helpers over views.
import './builtin.js';

export { registerKernel, getKernel, hasKernel, type Kernel, type KernelParams } from './registry.js';
export { registerWasmKernel, type WasmKernelSpec } from './wasm-kernel.js';
export type { TensorView, Range } from './view.js';
export { sizeOf, contiguousStrides, isContiguous } from './view.js';
export { copyView } from './copy.js';
export { DTYPES, STORAGE, bytesPerElement, type Dtype, type TypedArray } from './dtype.js';
