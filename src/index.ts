// The public API of weft (see API.md): re-exports only.
import './compile/eval.js';

export * as pt from './tensor/pt.js';
export * as cluster from './cluster/index.js';
export * as sparse from './sparse/index.js';
export { config } from './tensor/core/config.js';
export type { Dtype, TypedArray } from './kernels/dtype.js';

export { compile, AbortError, UnusedInputError } from './compile/function.js';
export type { CompileOptions, CallOptions, WeftFunction, CompiledFunction, InputValue, ArgumentsOf, ProfileOf } from './compile/function.js';
export type { PlanInfo } from './scheduler/plan-info.js';
export { Mode, FAST_RUN, FAST_COMPILE, type ModeName, type ModeOptions } from './compile/mode.js';
export { DebugMode, DebugModeError, type DebugModeOptions, type DebugCheck, type Tolerance } from './compile/debug-mode.js';
export { NanGuardMode, NanGuardError, type NanGuardModeOptions, type BadValueKind } from './compile/nan-guard-mode.js';
export { FunctionProfile, type TraceEvent, type NodeStats } from './compile/profile.js';
export type { TimelineOptions } from './compile/profile-timeline.js';
export { In, FunctionInput, type InOptions } from './compile/function-input.js';
export { Out, FunctionOutput, type OutOptions } from './compile/function-output.js';
export { shared, type SharedOptions } from './compile/shared.js';
export { release } from './compile/release.js';
export { verifyGrad, GradientMismatchError, type VerifyGradOptions } from './compile/verify-grad.js';
export { checkInferShape, checkRop, CheckError, type CheckRopOptions } from './compile/testing.js';

export { grad, Lop, Rop, jacobian, hessian } from './tensor/gradient/grad.js';
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

export { tolist, wrapTypedArray as ndarray, type NdArray, type NestedArray, type NestedList } from './tensor/core/ndarray.js';
export { slice, Slice } from './tensor/core/slice.js';
export { Rng } from './tensor/random/rng.js';
export { RandomStream, type UniformOptions, type NormalOptions, type DrawOptions } from './tensor/random/random-stream.js';
export {
  RandomVariable,
  UniformRV,
  NormalRV,
  IntegersRV,
  StandardNormalRV,
  BernoulliRV,
  BinomialRV,
  PoissonRV,
  GeometricRV,
  GammaRV,
  BetaRV,
  ExponentialRV,
  LognormalRV,
  LaplaceRV,
  LogisticRV,
  HalfNormalRV,
  CauchyRV,
  StudentTRV,
  RandomStateType,
  randomState,
  randomStateType,
} from './tensor/random/random.js';
export { VectorRandomVariable, CategoricalRV, MultinomialRV, DirichletRV, MultivariateNormalRV, ChoiceRV, PermutationRV } from './tensor/random/vector-random.js';
export { TensorOp as Op, TensorOp } from './tensor/core/op.js';
export { asOp, AsOp, type AsOpSpec, type AsOpFunction } from './tensor/inner/as-op.js';
export { OpFromGraph, type OpFromGraphOptions, type LopOverride, type RopOverride } from './tensor/inner/op-from-graph.js';
export { scan, until, ScanUntil, type ScanOptions, type ScanResult, type ScanSequence, type ScanOutputInfo, type ScanUpdates, type ScanStepResult } from './tensor/inner/scan.js';
export { ScanOp, type ScanSpec } from './tensor/inner/scan-op.js';
export { TensorType, ValueTypeError, type StaticShape } from './tensor/core/type.js';
export { ShapeMismatchError } from './tensor/elemwise/elemwise.js';
export type { TensorLike, TensorValue, IndexEntry, AxisArg, ReduceOptions, VarOptions, ShapeLike } from './tensor/core/variable.js';
// Also at the root, so that `const { pt } = weft` (a value) leaves the types in reach: weft.TensorVariable.
export { TensorVariable, TensorConstant, TensorSharedVariable } from './tensor/core/variable.js';

export { Apply } from './graph/apply.js';
export { Variable, Constant } from './graph/variable.js';
export { SharedVariable } from './graph/shared.js';
export { Type, type FilterOptions, type GradientSupport, type MemoryLayout, type PartsLayout, type PartSpec, type PartArray } from './graph/type.js';
export type { IndexMap, SymbolicShape, KernelCall, KernelContext, Chunking } from './graph/op.js';
export { FunctionGraph, MissingInputError } from './graph/fgraph.js';
export { DestroyHandler, type DestroyHandlerOptions } from './graph/destroy-handler.js';
export { InconsistencyError, type Feature, type Client } from './graph/feature.js';
export { ancestors, graphInputs, ioToposort, CycleError } from './graph/traversal.js';
export { cloneGraph, cloneReplace } from './graph/clone.js';
export { debugprint, toDot, type Printable } from './graph/printing.js';
export { toSvg } from './graph/svg.js';
// Writing and registering rewrites (the framework, the database, the standard pipeline).
export * from './graph/rewriting/index.js';
export { elemwiseOf, ownerIs, scalarConstantValue } from './tensor/rewriting/match.js';
export { ShapeFeature, shapeFeatureOf } from './tensor/rewriting/shape-feature.js';
export { Elemwise } from './tensor/elemwise/elemwise.js';
export { DeepCopyOp, ViewOp, deepCopy, viewOf } from './tensor/shape/basic-ops.js';
export { AllocEmpty, allocEmpty } from './tensor/shape/alloc.js';
export { ScalarReduce } from './tensor/elemwise/scalar-reduce.js';
export { ScalarOp, type ScalarOpSpec, type ScalarGrad, type ScalarWasmForm, type CodeContext, type DtypeRule } from './tensor/scalar/scalar-op.js';
export type { ProgramDtype, ProgramOp, ProgramStep } from './kernels/elemwise-program.js';
export { Composite } from './tensor/elemwise/composite.js';
export { NodeError } from './graph/node-error.js';
export { ReferenceExecutor, type RunHooks, type NodeStep } from './graph/reference-executor.js';
export { createPool, shutdown, Pool } from './compile/pool.js';
export { PoolClosedError, type PoolOptions } from './workers/pool.js';
export { serialize, deserialize, registerOpCodec, type DeserializedGraph, type DeserializedFunction } from './compile/serialize-function.js';
export { DeserializeError, JsonReader, type Json, type JsonObject } from './graph/json-reader.js';
export type { OpCodec, OpEncoder, OpDecoder, OpBuildContext, GraphRef, OpPlan } from './graph/op-codecs.js';
export { propKinds, type PropKind, type PropKindsOf } from './graph/prop-kinds.js';
export type { PropsOpClass } from './graph/prop-codec.js';
export { registerTypeCodec, type PropsTypeClass } from './graph/type-codecs.js';
export { registerScalarOp } from './tensor/serialize/codecs.js';
