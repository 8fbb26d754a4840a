// Op: what a node computes. Its `props` define equality and hashing (equal ops on equal inputs
// compute equal outputs, so the merge rewrite may fuse them); the methods are Theano's contract:
// makeNode, perform, inferShape, grad/Lop, rop, connectionPattern, viewMap, destroyMap.
import type { Expansion } from '../kernels/expansion.js';
import type { KernelParams } from '../kernels/registry.js';
import type { TensorView } from '../kernels/view.js';
import { Apply } from './apply.js';
import type { FunctionGraph } from './fgraph.js';
import type { PropKindsOf } from './prop-kinds.js';
import { propKey, propLabel } from './props.js';
import type { Variable } from './variable.js';

/** Output index -> the input indices it views or overwrites (Theano's view_map / destroy_map). */
export type IndexMap = Readonly<Record<number, readonly number[]>>;

/** A symbolic shape: one scalar integer variable per axis. */
export type SymbolicShape = readonly Variable[];

/**
 * How a kernel's work may be cut into tasks: by flat output elements, by rows (the first axis of
 * output 0), by lanes along an axis of output 0 (every position of the other axes), or not at all;
 * each task gets at least `minUnits` elements, when shorter runs would be slow.
 */
export type Chunking =
  | { readonly by: 'elements'; readonly minUnits?: number; readonly output?: number }
  | { readonly by: 'rows' }
  | { readonly by: 'lanes'; readonly axis: number; readonly output?: number }
  | { readonly by: 'none' };

/** The worker implementation of a node: a registered kernel and its (structured-clone-safe) params. */
export interface KernelCall {
  readonly name: string;
  readonly params: KernelParams;
  readonly chunking: Chunking;
  /** Bytes of scratch memory the kernel needs (given to it as one more output, a uint8 view). */
  readonly scratchBytes?: number;
  /**
   * The kernel reads its inputs as C-contiguous arrays (element i of an input at `offset + i`):
   * an input in any other layout (a transposed or broadcast view, a slice with steps) is copied
   * into contiguous memory first, by the planner on the workers and by `perform` on the calling
   * thread. A kernel that walks its inputs' strides itself need not ask.
   */
  readonly contiguousInputs?: boolean;
  /**
   * For reductions: the input (input 0) may be cut along one of `axes` into slabs, each reduced
   * by this same call into a float64 partial result; then `combine` reduces the partials, in slab
   * order, along their axis 0 into the outputs. Planners use it when the output is too small to
   * split and the input large.
   */
  readonly partials?: {
    readonly axes: readonly number[];
    readonly combine: { readonly name: string; readonly params: KernelParams };
  };
  /**
   * For products (matmul, gemm, tensordot): each output element sums products over these axes of
   * input `input` (default: its last axis). Their lengths times the output's size is the call's
   * work in multiply-adds, which planners cut into tasks instead of the elements touched.
   */
  readonly contracted?: { readonly input: number; readonly axes?: readonly number[] };
  /**
   * The call's work, in multiply-adds (or elements touched), when neither its elements nor a
   * contraction say it: a factorization's n^3 / 3 per matrix. Planners cut it into tasks as they
   * cut a plain loop's elements.
   */
  readonly work?: number;
  /**
   * The work one task should carry, when this call's work is not a plain loop's (elements) nor a
   * contraction's: a sparse product's multiply-adds come in tasks as large as a dense product's.
   */
  readonly taskWork?: number;
  /**
   * The node as a sequence of kernel calls over parts of its arrays and scratch arrays (a
   * blocked factorization): planners make each step a call of the plan; this call's own kernel
   * runs the same steps on one thread. Ops give one only when a planner passes a context.
   */
  readonly expansion?: Expansion;
  /**
   * Its fast path is a WebAssembly kernel over the pool's memory (float32 products, element-wise
   * programs): its outputs stay in the call's region and are copied out afterwards, rather than
   * written straight into fresh memory the caller then owns, where only the plain JS path could run.
   */
  readonly outputsInArena?: boolean;
  /**
   * The kernel runs an inner plan many times (a Scan's steps) and may share each run with the
   * team: that plan's widest level and its work per run. The planner gives the call's plan
   * members for it where the team's help is worth a run's synchronization (workers/nested-team.ts).
   */
  readonly innerTeam?: { readonly width: number; readonly work: number };
}

/** What a planner gives `Op.kernel`: the inputs it plans for, and a way to plan an inner graph. */
export interface KernelContext {
  /** The node's inputs as for outputShapes: their shapes (and small integer values). */
  readonly inputs: readonly TensorView[];
  /**
   * A kernel call that runs `fg` (an inner graph: OpFromGraph's, a Scan's step) for inputs like
   * these as one task, with a plan of its own; undefined when it must run on the calling thread.
   */
  planInner(fg: FunctionGraph, inputs: readonly TensorView[]): KernelCall | undefined;
  /** The inputs of `fg` whose values, not only their shapes, its plan depends on. */
  valueInputs(fg: FunctionGraph): readonly number[];
}

/** Thrown by `outputShapes` when the shapes cannot be known before the node runs. */
export class UnknownShapesError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnknownShapesError';
  }
}

export abstract class Op<Out = Variable | Variable[]> {
  /** The fields that define this op's identity; subclasses list theirs (`['axis'] as const`). */
  static readonly props: readonly string[] = [];
  /**
   * How documents write and check some of the props (prop-kinds.ts); the others are plain JSON.
   * With them, `registerOpCodec(TheClass)` serializes the op with no codec written by hand.
   */
  static readonly propKinds: PropKindsOf = {};

  /** Outputs that are views of inputs, e.g. `{ 0: [0] }`: output 0 shares input 0's memory. */
  readonly viewMap: IndexMap = {};
  /** Outputs that overwrite inputs, e.g. `{ 0: [0] }`: output 0 is written into input 0. */
  readonly destroyMap: IndexMap = {};
  /**
   * Whether the output views hold some input elements more than once (stride 0 along an axis
   * longer than 1, as broadcastTo's): nothing may overwrite them, or views of them, in place.
   */
  readonly repeatsElements: boolean = false;

  /**
   * For ops between a value laid out in parts (Type.partsLayout: a sparse matrix's data, indices,
   * indptr and shape) and those parts: 'split' outputs input 0's parts, 'join' makes output 0 of
   * its inputs as parts. Planners map one to the other; neither runs.
   */
  readonly partsRole?: 'split' | 'join';

  #key: string | undefined;

  get props(): readonly string[] {
    return (this.constructor as typeof Op).props;
  }

  protected propValue(name: string): unknown {
    return (this as unknown as Record<string, unknown>)[name];
  }

  /** Equal for equal ops: the class name and the canonical form of the props. */
  get key(): string {
    if (this.#key === undefined) {
      const name = this.constructor.name;
      const parts = this.props.map((p) => `${p}=${propKey(this.propValue(p), `${name}.${p}`)}`);
      this.#key = `${name}(${parts.join(';')})`;
    }
    return this.#key;
  }

  equals(other: Op): boolean {
    return this === other || (this.constructor === other.constructor && this.key === other.key);
  }

  /** Checks and converts the inputs, and builds the node with output variables of the right types. */
  abstract makeNode(...inputs: unknown[]): Apply;

  /** Applies the op: the single output variable, or an array when the op has several outputs. */
  call(...inputs: unknown[]): Out {
    const node = this.makeNode(...inputs);
    return (node.outputs.length === 1 ? node.outputs[0] : [...node.outputs]) as Out;
  }

  /**
   * The reference implementation on the calling thread: returns one value per output. It may write
   * into an input only where `destroyMap` says so, and return views only where `viewMap` says so.
   */
  perform(node: Apply, _inputs: readonly unknown[]): unknown[] {
    throw new Error(`${node.op} has no perform implementation`);
  }

  /** Symbolic output shapes from symbolic input shapes (one scalar int variable per axis). */
  inferShape?(node: Apply, inputShapes: readonly SymbolicShape[]): SymbolicShape[];

  /** The pullback: one gradient per input, given one gradient per output. */
  grad?(inputs: readonly Variable[], outputGrads: readonly Variable[]): Variable[];

  /** Like `grad` but also given the node's outputs (Theano's L_op); defaults to `grad`. */
  Lop?(inputs: readonly Variable[], outputs: readonly Variable[], outputGrads: readonly Variable[]): Variable[];

  /**
   * The pushforward: one directional derivative per output, given one per input. Discrete inputs
   * (integers, bools, random states) have no tangent: their eval points are `disconnected()`.
   */
  rop?(inputs: readonly Variable[], evalPoints: readonly Variable[]): Variable[];

  /** pattern[i][j]: does output j depend on input i? Defaults to all true. */
  connectionPattern?(node: Apply): boolean[][];

  /**
   * The kernel that computes this node in a worker (or on the calling thread in a plan), or
   * undefined when the node must run `perform` on the calling thread. Planners pass a context:
   * the inputs (as for outputShapes), for ops whose kernel depends on their shapes, and the
   * planning of inner graphs; other callers (DebugMode) may not.
   */
  kernel?(node: Apply, context?: KernelContext): KernelCall | undefined;

  /**
   * The output shapes for inputs of these shapes, checked as `perform` checks them (it throws the
   * same errors). Only the shapes of `inputs` are meaningful, except for small integer inputs
   * (lengths, indices), whose values are there too. Plans call it once per input signature.
   */
  outputShapes?(node: Apply, inputs: readonly TensorView[]): number[][];

  /**
   * For ops whose outputs are views (viewMap): the output views of these input views, by offset
   * and stride arithmetic alone (no data is read, except small index inputs); undefined when
   * these inputs need a copy (a reshape of a non-contiguous value).
   */
  view?(node: Apply, inputs: readonly TensorView[]): TensorView[] | undefined;

  /**
   * The graphs this op runs inside it (OpFromGraph's, a Scan's step), for pictures of a graph:
   * toDot and toSvg draw each as a cluster beside the op's node. Ops without inner graphs omit it.
   */
  innerGraphs?(): readonly FunctionGraph[];

  /** May constant folding evaluate this node when all its inputs are constants? */
  doConstantFolding(_node: Apply): boolean {
    return true;
  }

  toString(): string {
    const name = this.constructor.name;
    if (this.props.length === 0) return name;
    return `${name}{${this.props.map((p) => `${p}=${propLabel(this.propValue(p))}`).join(', ')}}`;
  }
}

export function isApply(x: unknown): x is Apply {
  return x instanceof Apply;
}
