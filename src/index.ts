// The public API of weft (see API.md): re-exports only.
import './compile/eval.js';

export * as pt from './tensor/pt.js';
export { config } from './tensor/config.js';
export type { Dtype, TypedArray } from './kernels/dtype.js';

export { compile, AbortError, UnusedInputError } from './compile/function.js';
export type { CompileOptions, CallOptions, WeftFunction } from './compile/function.js';
export { Mode, FAST_RUN, FAST_COMPILE, type ModeName, type ModeOptions } from './compile/mode.js';
export { FunctionProfile } from './compile/profile.js';
export { In, FunctionInput, type InOptions } from './compile/function-input.js';
export { shared, type SharedOptions } from './compile/shared.js';
export { verifyGrad, GradientMismatchError, type VerifyGradOptions } from './compile/verify-grad.js';
export { checkInferShape, checkRop, CheckError, type CheckRopOptions } from './compile/testing.js';

export { grad, Lop, Rop, jacobian, hessian } from './tensor/grad.js';
export type { GradOptions } from './graph/gradient.js';
export {
  disconnected,
  gradUndefined,
  gradNotImplemented,
  DisconnectedType,
  NullType,
  DisconnectedInputError,
  NullGradientError,
} from './graph/gradient.js';

export { tolist, type NdArray, type NestedArray } from './tensor/ndarray.js';
export { slice, Slice } from './tensor/slice.js';
export { Rng } from './tensor/rng.js';
export { TensorOp as Op } from './tensor/op.js';
export { TensorType, ValueTypeError, type StaticShape } from './tensor/type.js';
export { ShapeMismatchError } from './tensor/elemwise.js';
export type { TensorLike, IndexEntry, ReduceOptions, VarOptions, ShapeLike } from './tensor/variable.js';

export { Apply } from './graph/apply.js';
export { Variable, Constant } from './graph/variable.js';
export { SharedVariable } from './graph/shared.js';
export { Type, type FilterOptions } from './graph/type.js';
export type { IndexMap, SymbolicShape } from './graph/op.js';
export { FunctionGraph, MissingInputError } from './graph/fgraph.js';
export { InconsistencyError, type Feature, type Client } from './graph/feature.js';
export { ancestors, graphInputs, ioToposort, CycleError } from './graph/traversal.js';
export { cloneGraph, cloneReplace } from './graph/clone.js';
export { debugprint, toDot } from './graph/printing.js';
export { NodeError } from './graph/node-error.js';
export { ReferenceExecutor } from './graph/reference-executor.js';
export { createPool, shutdown, Pool, type PoolOptions } from './workers/pool.js';
