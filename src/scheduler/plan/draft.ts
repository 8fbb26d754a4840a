// The typed draft that the planner's passes hand on: what placing the nodes decided (views,
// buffers, calls, outputs), before the buffers get offsets, the calls tasks and the tasks edges.
import type { Apply } from '../../graph/apply.js';
import type { KernelCall, KernelContext } from '../../graph/op.js';
import type { NdArray } from '../../tensor/core/ndarray.js';
import type { CallDescriptor, ViewDescriptor } from '../../workers/protocol.js';

/** How a plan plans the inner graphs of its nodes (inner-planner.ts; a plan of its own each). */
export type InnerPlanning = Omit<KernelContext, 'inputs'>;

export type OutputSource =
  | { readonly kind: 'view'; readonly view: number }
  | { readonly kind: 'value'; readonly value: NdArray };

/** A run of bytes in the data part of a region; views look into it. */
export interface Buffer {
  readonly bytes: number;
  /** Its byte offset in the data, set by the layout pass (-1 until then). */
  offset: number;
  /** Index in `order` of the node that writes it (-1: written before the call starts). */
  readonly writer: number;
  /** Nodes that read it (through any view). */
  readonly readers: Set<number>;
  /** Inputs and outputs keep their buffer for the whole call. */
  pinned: boolean;
}

/** A view that looks into another: `elements` from the start of view `of`. */
export interface RelativeView {
  readonly of: number;
  readonly elements: number;
}

export interface PlanDraft {
  /** The nodes in execution order, and each one's index there. */
  readonly order: readonly Apply[];
  readonly position: ReadonlyMap<Apply, number>;
  /** The graph's orderings (the destroy handler's, and any feature's): node -> what must run first. */
  readonly orderings: ReadonlyMap<Apply, readonly Apply[]>;
  /** Every view; offsets are not known yet (-1): see `viewBuffer` and `viewRelative`, and placedViews once the layout pass gave the buffers theirs. */
  readonly views: readonly ViewDescriptor[];
  /** The buffer each view looks into. */
  readonly viewBuffer: readonly Buffer[];
  /** Views of views: view -> where in which view it starts. */
  readonly viewRelative: ReadonlyMap<number, RelativeView>;
  readonly buffers: readonly Buffer[];
  /** Buffers some node writes its output over. */
  readonly overwritten: ReadonlySet<Buffer>;
  /** Written into every new region once: constants and host-computed values that tasks read. */
  readonly regionInit: ReadonlyArray<{ readonly view: number; readonly value: NdArray }>;
  /** Graph input i: the view its value is copied into, or -1 when no task reads it. */
  readonly inputViews: readonly number[];
  readonly outputs: readonly OutputSource[];
  /** The calls in execution order, the node and the kernel call of each. */
  readonly calls: readonly CallDescriptor[];
  readonly callNodes: readonly Apply[];
  readonly kernelCalls: readonly KernelCall[];
  /** Node (index in `order`) -> all its calls, in order (several: copies first, or partials and their combine). */
  readonly callsOfNode: ReadonlyMap<number, readonly number[]>;
  /** Nodes whose outputs the planner computes itself (shapes, small integers): no task runs them. */
  readonly hostOnly: (node: Apply) => boolean;
}
