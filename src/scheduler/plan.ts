// Planning a call (Theano's linker, for threads): for one input signature, every variable gets a
// place in the call's region (inputs and intermediates in buffers, views as offset arithmetic
// over their base), every kernel node becomes one or more tasks (chunks of its work above a
// size threshold; chunk boundaries depend on shapes only, never on the number of workers), and
// tasks get edges: data dependencies and the graph's ordering constraints (the destroy handler's).
// A buffer is reused only by a node that already runs after every reader of its previous value,
// so reuse adds no edge and costs no parallelism.
import type { Apply } from '../graph/apply.js';
import type { FunctionGraph } from '../graph/fgraph.js';
import { UnknownShapesError, type KernelCall, type KernelContext } from '../graph/op.js';
import { isConstant, type Constant, type Variable } from '../graph/variable.js';
import { bytesPerElement, STORAGE, type Dtype } from '../kernels/dtype.js';
import { contiguousStrides, isContiguous, sizeOf, type TensorView } from '../kernels/view.js';
import type { NdArray } from '../tensor/ndarray.js';
import { TensorType } from '../tensor/type.js';
import { ALIGN, ArenaFullError, arenaCanHold } from '../workers/arena.js';
import { BARRIER_KERNEL, MAX_MEMBERS, type CallDescriptor, type PlanDescriptor, type TaskDescriptor, type ViewDescriptor } from '../workers/protocol.js';
import { HEADER_BYTES } from '../workers/region.js';
import type { HostValues } from './host-values.js';
import { buildAncestry } from './ancestry.js';
import { taskEdges, type TaskSpan } from './task-edges.js';
import { copiedArguments, NodeError } from '../graph/node-error.js';
import { chunkRanges, chunkUnits } from './chunking.js';

/** Work (elements touched, or multiply-adds for products) that one task should carry at least (tests read it). */
export const TASK_WORK = 1 << 17;
const PRODUCT_TASK_WORK = 1 << 22;
/** Largest reduction output (elements) that is computed from partials rather than split by outputs. */
const PARTIALS_MAX_OUTPUT = 16;
/**
 * Fewest rows (units) of a product per task: each task packs its operand panels, so smaller tasks
 * spend their time packing (64 is the row block the gemm kernel packs A by).
 */
const PRODUCT_MIN_UNITS = 64;

export type OutputSource =
  | { readonly kind: 'view'; readonly view: number }
  | { readonly kind: 'value'; readonly value: NdArray };

export interface Plan {
  readonly descriptor: PlanDescriptor;
  /** Graph input i: the view its value is copied into at each call, or -1 when no task reads it. */
  readonly inputViews: readonly number[];
  readonly outputs: readonly OutputSource[];
  /** Written into every new region once: constants and host-computed values that tasks read. */
  readonly regionInit: ReadonlyArray<{ readonly view: number; readonly value: NdArray }>;
  /** Estimated work of one call, for the choice between inline and workers. */
  readonly work: number;
  /** Tasks that may run at once at best (the widest level of the task graph). */
  readonly width: number;
  /** The node of each call of the descriptor. */
  readonly callNodes: readonly Apply[];
}

export class PlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanError';
  }
}

/** The planner stopped at `node`: its shapes depend on values computed before it, or on itself. */
export class StageBoundary extends PlanError {
  constructor(
    readonly node: Apply,
    /** 'values': plannable once the values it reads are known; 'unknown': only running it tells. */
    readonly kind: 'values' | 'unknown',
    reason: string,
  ) {
    super(reason);
    this.name = 'StageBoundary';
  }
}

interface Buffer {
  readonly bytes: number;
  offset: number;
  /** Index in `order` of the node that writes it (-1: written before the call starts). */
  readonly writer: number;
  /** Nodes that read it (through any view). */
  readonly readers: Set<number>;
  /** Inputs and outputs keep their buffer for the whole call. */
  pinned: boolean;
}

function dtypeOf(v: Variable): Dtype {
  return (v.type as TensorType).dtype;
}

function workOf(call: KernelCall, ins: readonly ViewDescriptor[], outs: readonly ViewDescriptor[]): number {
  if (call.contracted) {
    // Multiply-adds: each output element sums over the contracted lengths of one factor.
    const a = ins[call.contracted.input]!;
    const free = Math.max(1, sizeOf(outs[0]!.shape));
    const axes = call.contracted.axes ?? [a.shape.length - 1];
    return free * axes.reduce((n, ax) => n * (a.shape[ax] ?? 1), 1);
  }
  return Math.max(1, ...ins.map((v) => sizeOf(v.shape)), ...outs.map((v) => sizeOf(v.shape)));
}

/** How a plan plans the inner graphs of its nodes (inner-planner.ts; a plan of its own each). */
export type InnerPlanning = Omit<KernelContext, 'inputs'>;

/**
 * The plan of `fg` for calls with these inputs' signature. Walking the nodes in order, it
 * computes host values (by perform), views (by view), and the output shapes of kernel nodes (by
 * outputShapes), which check the inputs: an invalid call fails here with the node's NodeError,
 * before any task runs.
 */
export function buildPlan(fg: FunctionGraph, inputs: readonly NdArray[], host: HostValues, id: number, inner: InnerPlanning): Plan {
  const hostKnown = host.known;
  const order = fg.toposort();
  const position = new Map<Apply, number>(order.map((n, i) => [n, i]));
  const views: ViewDescriptor[] = [];
  const viewBuffer: Buffer[] = [];
  const viewOf = new Map<Variable, number>();
  const buffers: Buffer[] = [];
  const regionInit: Array<{ view: number; value: NdArray }> = [];
  const values = new Map<Variable, NdArray>();
  const shapes = new Map<Variable, readonly number[]>();
  fg.inputs.forEach((v, i) => {
    shapes.set(v, inputs[i]!.shape);
    if (hostKnown.has(v)) values.set(v, inputs[i]!);
  });
  const valueOf = (v: Variable): NdArray | undefined => values.get(v) ?? (isConstant(v) ? (v as Constant<TensorType, NdArray>).data : undefined);
  const shapeOf = (v: Variable): readonly number[] => {
    const s = shapes.get(v) ?? valueOf(v)?.shape;
    if (!s) throw new PlanError(`no shape is known for ${v}`);
    return s;
  };

  /**
   * A new buffer (of a contiguous view of `shape`, which it returns), written by node `writer`
   * (-1: before the call). One that no region could hold is refused here, before any memory is
   * taken, naming what it would hold.
   */
  const addBuffer = (dtype: Dtype, shape: readonly number[], writer: number, what: () => string): number => {
    const bytes = Math.max(sizeOf(shape), 1) * bytesPerElement(dtype);
    if (!arenaCanHold(bytes)) throw new ArenaFullError(bytes, `${what()}, ${dtype} [${shape.join(', ')}]`);
    const buffer: Buffer = { bytes, offset: -1, writer, readers: new Set(), pinned: false };
    buffers.push(buffer);
    views.push({ dtype, offset: -1, shape: [...shape], stride: contiguousStrides(shape) });
    viewBuffer.push(buffer);
    return views.length - 1;
  };
  const ofNode = (k: number): string => `node ${k} (${order[k]})`;

  /** Scratch memory of a kernel call: a byte buffer written (and only used) by node `writer`. */
  const newScratch = (bytes: number, writer: number): number => addBuffer('uint8', [bytes], writer, () => `the scratch memory of ${ofNode(writer)}`);

  /** A float64 (or other) scratch array written and read only by node `writer`. */
  const newScratchArray = (dtype: Dtype, shape: readonly number[], writer: number): number =>
    addBuffer(dtype, shape, writer, () => `the partial results of ${ofNode(writer)}`);

  /** Views of views: view index -> (the view it looks into, element offset from that view's start). */
  const viewRelative = new Map<number, { of: number; elements: number }>();

  const newBuffer = (v: Variable, writer: number): number => {
    const what = (): string => {
      if (writer >= 0) return `output ${v.owner!.outputs.indexOf(v)} of ${ofNode(writer)}`;
      const input = fg.inputs.indexOf(v);
      return input >= 0 ? `input ${input} (${v})` : `the value of ${v}`;
    };
    const view = addBuffer(dtypeOf(v), shapeOf(v), writer, what);
    viewOf.set(v, view);
    return view;
  };

  /** The view of `v` for node `reader`, making a buffer for inputs, constants and host values. */
  const use = (v: Variable, reader: number): number => {
    let view = viewOf.get(v);
    if (view === undefined) {
      const value = valueOf(v);
      if (!value) throw new PlanError(`${v} is read before any node computes it`);
      view = newBuffer(v, -1);
      viewBuffer[view]!.pinned = true;
      regionInit.push({ view, value });
    }
    viewBuffer[view]!.readers.add(reader);
    return view;
  };

  /**
   * The view of `o`, which its node writes over the input seen through `source`: the same bytes
   * and layout. Values written into every region once (constants, host values) must not change,
   * and a layout that repeats an element (stride 0) cannot hold one value per element.
   */
  /** Buffers that some node writes its output over. */
  const overwritten = new Set<Buffer>();
  const overwrite = (o: Variable, source: number, shape: readonly number[]): number => {
    const d = views[source]!;
    overwritten.add(viewBuffer[source]!);
    const why =
      regionInit.some((r) => viewBuffer[r.view] === viewBuffer[source]) ? 'a value the plan writes into the region once' :
      d.dtype !== dtypeOf(o) ? `a ${d.dtype} value` :
      d.shape.length !== shape.length || d.shape.some((n, a) => n !== shape[a]) ? `a value of another shape ([${d.shape.join(', ')}])` :
      d.shape.some((n, a) => n > 1 && d.stride[a] === 0) ? 'a broadcast view' :
      undefined;
    if (why) throw new PlanError(`${o.owner} would write its output over ${why}`);
    views.push({ ...d, offset: -1, shape: [...d.shape], stride: [...d.stride] });
    const index = views.length - 1;
    // Relative to what the source is relative to: chains of overwrites stay one step deep.
    viewRelative.set(index, viewRelative.get(source) ?? { of: source, elements: 0 });
    viewBuffer.push(viewBuffer[source]!);
    viewOf.set(o, index);
    return index;
  };

  const inputViews = fg.inputs.map((v) => {
    if (!(v.type instanceof TensorType) || fg.clients(v).every((c) => c.kind === 'apply' && hostOnly(c.node))) return -1;
    const view = newBuffer(v, -1);
    viewBuffer[view]!.pinned = true;
    return view;
  });

  function hostOnly(node: Apply): boolean {
    return node.outputs.every((o) => hostKnown.has(o));
  }

  // Calls, one per kernel node, in execution order.
  const calls: CallDescriptor[] = [];
  const callNodes: Apply[] = [];
  /** Node -> the call that produces its outputs (what its readers wait for). */
  const callOf = new Map<number, number>();
  /** Node -> all its calls (several for a reduction cut into partials), in order. */
  const callsOfNode = new Map<number, number[]>();

  /**
   * A reduction with a small output and a large input becomes one call of K slab tasks, each
   * reducing a slab of the input (cut along the first reduced axis that is long enough) into its
   * row of float64 partials, and one call combining the partials in slab order. K depends on the
   * shapes only, so the bits do not depend on how many workers run it. Returns false when it
   * does not pay.
   */
  function expandPartials(node: Apply, k: number, call: KernelCall, inViews: number[], outViews: number[], outShapes: number[][]): boolean {
    const spec = call.partials!;
    if (node.inputs.length !== 1 || outViews.length !== 1) return false;
    const xv = views[inViews[0]!]!;
    const inSize = sizeOf(xv.shape);
    if (sizeOf(outShapes[0]!) > PARTIALS_MAX_OUTPUT || inSize < 2 * TASK_WORK) return false;
    const axis = spec.axes.find((a) => (xv.shape[a] ?? 0) >= 2);
    if (axis === undefined) return false;
    const slabs = Math.min(xv.shape[axis]!, Math.floor(inSize / TASK_WORK));
    if (slabs < 2) return false;
    const scratch = newScratchArray('float64', [slabs, ...outShapes[0]!], k);
    viewBuffer[scratch]!.readers.add(k);
    const label = String(node);
    calls.push({ kernel: call.name, params: call.params, inputs: [inViews[0]!], outputs: [scratch], label, split: { by: 'slabs', axis, count: slabs } });
    callNodes.push(node);
    kernelCalls.push({ name: call.name, params: call.params, chunking: { by: 'none' } });
    calls.push({ kernel: spec.combine.name, params: spec.combine.params, inputs: [scratch], outputs: outViews, label });
    callNodes.push(node);
    kernelCalls.push({ name: spec.combine.name, params: spec.combine.params, chunking: { by: 'none' } });
    callOf.set(k, calls.length - 1);
    callsOfNode.set(k, [calls.length - 2, calls.length - 1]);
    return true;
  }
  /**
   * For a kernel that asks for contiguous inputs: each input of node `k` whose view is not
   * C-contiguous gets a contiguous copy (a buffer of the node's, a 'copy' call chunked by
   * elements), and `inViews` is pointed at the copies. Returns the copies' calls, in order.
   */
  function contiguousCopies(node: Apply, k: number, inViews: number[]): number[] {
    const copies: number[] = [];
    inViews.forEach((view, i) => {
      const v = views[view]!;
      if (isContiguous(v)) return;
      const copy = addBuffer(v.dtype, v.shape, k, () => `a contiguous copy of input ${i} of ${ofNode(k)}`);
      viewBuffer[copy]!.readers.add(k);
      calls.push({ kernel: 'copy', params: {}, inputs: [view], outputs: [copy], label: `contiguous copy of input ${i} of ${node}`, split: { by: 'elements' } });
      callNodes.push(node);
      kernelCalls.push({ name: 'copy', params: {}, chunking: { by: 'elements' } });
      copies.push(calls.length - 1);
      inViews[i] = copy;
    });
    return copies;
  }
  const kernelCalls: KernelCall[] = [];
  const dummies = new Map<Dtype, NdArray['data']>();
  const dummy = (d: Dtype): NdArray['data'] => {
    let a = dummies.get(d);
    if (!a) dummies.set(d, (a = new STORAGE[d](0)));
    return a;
  };

  /** An input as view arithmetic and shape checks see it: real values when known, else a layout. */
  const describe = (v: Variable, view: number | undefined, dtype: Dtype): TensorView => {
    const value = valueOf(v);
    if (value && (view === undefined || sizeOf(value.shape) <= 64)) return value;
    const d = view !== undefined ? views[view]! : { shape: shapeOf(v), stride: contiguousStrides(shapeOf(v)) };
    return { data: dummy(dtype), offset: 0, shape: d.shape, stride: d.stride };
  };

  order.forEach((node, k) => {
    const op = node.op;
    try {
      if (hostOnly(node)) {
        // A host node that overwrites an input gets a copy: the values here outlive the call.
        const args = node.inputs.map((v) => valueOf(v) ?? (describe(v, undefined, dtypeOf(v)) as NdArray));
        const outs = op.perform(node, copiedArguments(node, args, 'destroyed')) as NdArray[];
        node.outputs.forEach((o, j) => {
          values.set(o, outs[j]!);
          shapes.set(o, outs[j]!.shape);
        });
        return;
      }
      const inViews = node.inputs.map((v) => use(v, k));
      if (op.view && Object.keys(op.viewMap).length > 0) {
        // Viewed inputs are described relative to their own start; other inputs (indices) are the
        // small host values themselves, which view arithmetic reads.
        const sources = new Set(Object.values(op.viewMap).flat());
        const described = node.inputs.map((v, i) => {
          if (!sources.has(i)) return describe(v, inViews[i], dtypeOf(v));
          const d = views[inViews[i]!]!;
          return { data: dummy(d.dtype), offset: 0, shape: d.shape, stride: d.stride };
        });
        const outs = op.view(node, described);
        if (outs) {
          node.outputs.forEach((o, j) => {
            const source = inViews[op.viewMap[j]?.[0] ?? 0]!;
            const rel = outs[j]!;
            views.push({ dtype: dtypeOf(o), offset: -1, shape: [...rel.shape], stride: [...rel.stride] });
            const index = views.length - 1;
            viewRelative.set(index, { of: source, elements: rel.offset });
            viewBuffer.push(viewBuffer[source]!);
            viewOf.set(o, index);
            shapes.set(o, rel.shape);
          });
          return;
        }
      }
      if (!op.outputShapes) throw new StageBoundary(node, 'unknown', `${op} cannot say its output shapes before it runs`);
      // An op without a worker kernel runs its perform on the calling thread, as a task of the plan.
      const described = node.inputs.map((v, i) => describe(v, inViews[i], dtypeOf(v)));
      const call: KernelCall = op.kernel?.(node, { ...inner, inputs: described }) ?? { name: '', params: {}, chunking: { by: 'none' } };
      const outShapes = op.outputShapes(node, described);
      node.outputs.forEach((o, j) => shapes.set(o, outShapes[j]!));
      // An output written over an input (destroyMap) is that input's memory, in its layout.
      const outViews = node.outputs.map((o, j) => {
        const i = op.destroyMap[j]?.[0];
        return i === undefined ? newBuffer(o, k) : overwrite(o, inViews[i]!, outShapes[j]!);
      });
      if (call.scratchBytes !== undefined) outViews.push(newScratch(call.scratchBytes, k));
      // Inputs the kernel wants contiguous and that are not: copied first, by calls of this node.
      const copies = call.contiguousInputs ? contiguousCopies(node, k, inViews) : [];
      if (call.partials && copies.length === 0 && Object.keys(op.destroyMap).length === 0 && expandPartials(node, k, call, inViews, outViews, outShapes)) return;
      calls.push({
        kernel: call.name,
        params: call.params,
        inputs: inViews,
        outputs: outViews,
        label: String(node),
        ...(call.name === '' ? { main: true } : {}),
        ...(call.chunking.by === 'none' ? {} : { split: { by: call.chunking.by } }),
      });
      callNodes.push(node);
      kernelCalls.push(call);
      callOf.set(k, calls.length - 1);
      callsOfNode.set(k, [...copies, calls.length - 1]);
    } catch (e) {
      if (e instanceof PlanError || e instanceof ArenaFullError) throw e;
      if (e instanceof UnknownShapesError) throw new StageBoundary(node, 'unknown', e.message);
      // A small input whose value the plan does not know may steer the shapes: the error may be
      // an artefact of not knowing it, so the call is planned in stages, the next one starting
      // here, once that value is known (a real error is then reported there).
      const unknown = node.inputs.find((v) => !valueOf(v) && v.type instanceof TensorType && v.type.shape.every((d) => d !== null) && sizeOf(v.type.shape as number[]) <= 64);
      if (unknown) throw new StageBoundary(node, 'values', `the shapes of ${node} depend on the value of ${unknown}, which is computed by the graph`);
      throw new NodeError(node, k, node.inputs.map((v) => valueOf(v) ?? { shape: shapes.get(v) ?? [], data: dummy(dtypeOf(v)) }), e);
    }
  });

  // Graph outputs keep their buffers; an output the host computed is returned as it is.
  const outputs: OutputSource[] = fg.outputs.map((v) => {
    const view = viewOf.get(v);
    if (view !== undefined) {
      viewBuffer[view]!.pinned = true;
      return { kind: 'view', view };
    }
    const value = valueOf(v);
    if (!value) throw new PlanError(`no value for the output ${v}`);
    return { kind: 'value', value };
  });

  // Ancestry between nodes, for safe buffer reuse: data edges and the destroy handler's orderings.
  const orderings = fg.orderings();
  const { isAncestor } = buildAncestry(order.length, (k) => {
    const node = order[k]!;
    const preds: number[] = [];
    for (const v of node.inputs) if (v.owner && position.has(v.owner)) preds.push(position.get(v.owner)!);
    for (const b of orderings.get(node) ?? []) if (position.has(b)) preds.push(position.get(b)!);
    return preds;
  });

  // Layout of the data: buffers in writer order, reusing a freed buffer where safe.
  const layout = { top: 0 };
  const align = (x: number): number => Math.ceil(x / ALIGN) * ALIGN;
  const free: Buffer[] = [];
  const byWriter = [...buffers].sort((a, b) => a.writer - b.writer);
  for (const b of byWriter) {
    if (b.writer >= 0) {
      // Reclaim buffers whose every reader is an ancestor of this writer.
      const candidate = free.find(
        (f) =>
          f.bytes >= b.bytes &&
          f.bytes <= 2 * b.bytes &&
          isAncestor(f.writer, b.writer) &&
          [...f.readers].every((r) => isAncestor(r, b.writer)),
      );
      if (candidate) {
        free.splice(free.indexOf(candidate), 1);
        b.offset = candidate.offset;
        if (!b.pinned) free.push({ ...b, bytes: candidate.bytes });
        continue;
      }
    }
    b.offset = layout.top;
    layout.top = align(layout.top + b.bytes);
    if (!b.pinned && b.writer >= 0) free.push(b);
  }

  // Tasks: chunks of each call (a slab call has one task per slab).
  const tasks: TaskSpan[] = [];
  const tasksOfCall: number[][] = [];
  let work = 0;
  calls.forEach((c, ci) => {
    const kc = kernelCalls[ci]!;
    const outs = c.outputs.map((v) => views[v]!);
    const ins = c.inputs.map((v) => views[v]!);
    const w = workOf(kc, ins, outs);
    work += w;
    const list: number[] = [];
    if (c.split?.by === 'slabs') {
      for (let j = 0; j < c.split.count; j++) list.push(tasks.push({ call: ci, start: j, end: j + 1 }) - 1);
      tasksOfCall.push(list);
      return;
    }
    const u = chunkUnits(kc.chunking, outs[0]!.shape);
    const product = kc.contracted !== undefined;
    const target = product ? PRODUCT_TASK_WORK : TASK_WORK;
    const minUnits = product ? PRODUCT_MIN_UNITS : kc.chunking.by === 'elements' ? (kc.chunking.minUnits ?? 1) : 1;
    const maxChunks = Math.floor(u / minUnits);
    const chunks = kc.chunking.by === 'none' ? 1 : Math.max(1, Math.min(maxChunks, Math.floor(w / target)));
    if (chunks === 1) list.push(tasks.push({ call: ci, start: -1, end: -1 }) - 1);
    else for (const r of chunkRanges(u, chunks)) list.push(tasks.push({ call: ci, start: r.start, end: r.end }) - 1);
    tasksOfCall.push(list);
  });

  // Orderings of the graph (the destroy handler's, and any feature's) order whole calls: every
  // task of the calls of what must come first before every task of the node's calls.
  // The calls that read what node k produced (directly, or through views of it). Host nodes
  // (shapes, small integers) read nothing while the call runs: the walk does not go through them.
  const readerCalls = (k: number): number[] => {
    const out: number[] = [];
    if (hostOnly(order[k]!)) return out;
    const stack = [k];
    const seen = new Set<number>();
    while (stack.length) {
      const j = stack.pop()!;
      for (const o of order[j]!.outputs) {
        for (const c of fg.clients(o)) {
          if (c.kind !== 'apply' || !position.has(c.node)) continue;
          const r = position.get(c.node)!;
          if (seen.has(r)) continue;
          seen.add(r);
          if (callsOfNode.has(r)) out.push(...callsOfNode.get(r)!);
          else if (!hostOnly(c.node)) stack.push(r);
        }
      }
    }
    return out;
  };
  const ordered: Array<[number, number]> = [];
  order.forEach((node, k) => {
    const own = callsOfNode.get(k);
    if (own === undefined) return;
    for (const before of orderings.get(node) ?? []) {
      const b = position.get(before);
      if (b === undefined) continue;
      for (const p of callsOfNode.get(b) ?? readerCalls(b)) for (const ci of own) ordered.push([p, ci]);
    }
  });

  // Edges from what the tasks touch (offsets within the data part of the region suffice).
  const placed = views.map((v, i): ViewDescriptor => ({ ...v, offset: relativeOffset(i) }));
  const graph = taskEdges(placed, calls, tasks, tasksOfCall, ordered);
  for (const { before, after } of graph.barriers) {
    calls.push({ kernel: BARRIER_KERNEL, params: {}, inputs: [], outputs: [], label: `barrier after ${calls[before]!.label}` });
    callNodes.push(callNodes[after]!);
    tasks.push({ call: calls.length - 1, start: -1, end: -1 });
  }
  const successorsOf = (t: number): ReadonlySet<number> => graph.successors[t]!;

  const pendingCount = new Array<number>(tasks.length).fill(0);
  tasks.forEach((_, t) => successorsOf(t).forEach((s) => (pendingCount[s] = pendingCount[s]! + 1)));
  const isMain = (t: number): boolean => calls[tasks[t]!.call]!.main === true;
  const initialReady = pendingCount.flatMap((p, i) => (p === 0 && !isMain(i) ? [i] : []));
  const initialMainReady = pendingCount.flatMap((p, i) => (p === 0 && isMain(i) ? [i] : []));
  const width = widestLevel(tasks.length, successorsOf, pendingCount);

  const memberOffset = HEADER_BYTES;
  const memberSlots = Math.max(1, Math.min(width, MAX_MEMBERS));
  const pendingOffset = align(memberOffset + 4 * memberSlots);
  const queueOffset = align(pendingOffset + 4 * tasks.length);
  const mainQueueOffset = align(queueOffset + 4 * Math.max(tasks.length, 1));
  const dataOffset = align(mainQueueOffset + 4 * Math.max(tasks.length, 1));
  const regionBytes = dataOffset + layout.top;
  if (!arenaCanHold(regionBytes)) {
    const largest = buffers.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    const what = largest.writer >= 0 ? `node ${largest.writer} (${order[largest.writer]})` : 'an input or constant';
    throw new ArenaFullError(regionBytes, `the region of a call (its largest value: ${largest.bytes} bytes, from ${what})`);
  }
  const finalViews: ViewDescriptor[] = placed.map((v) => ({ ...v, offset: v.offset + dataOffset }));
  /** A view's byte offset in the region. */
  const resolveOffset = (view: number): number => finalViews[view]!.offset;
  /** A view's byte offset from the start of the data: its buffer's, plus the steps of its chain of views (walked, not recursed). */
  function relativeOffset(view: number): number {
    let bytes = 0;
    let v = view;
    for (let rel = viewRelative.get(v); rel; rel = viewRelative.get(v)) {
      bytes += rel.elements * bytesPerElement(views[v]!.dtype);
      v = rel.of;
    }
    return bytes + viewBuffer[v]!.offset;
  }

  const descriptor: PlanDescriptor = {
    id,
    regionBytes,
    memberOffset,
    memberSlots,
    pendingOffset,
    queueOffset,
    mainQueueOffset,
    views: finalViews,
    calls,
    tasks: tasks.map((t, i): TaskDescriptor => ({ call: t.call, start: t.start, end: t.end, successors: [...successorsOf(i)] })),
    initialPending: pendingCount,
    initialReady,
    initialMainReady,
    relocatable: inputViews.flatMap((view, input) => {
      if (view < 0 || overwritten.has(viewBuffer[view]!)) return [];
      const buffer = viewBuffer[view]!;
      const moving = finalViews.flatMap((_, v) => (viewBuffer[v] === buffer ? [v] : []));
      return [{ input, base: resolveOffset(view), views: moving }];
    }),
    movableOutputs: outputs.flatMap((o, output) => {
      if (o.kind !== 'view') return [];
      const buffer = viewBuffer[o.view]!;
      const d = finalViews[o.view]!;
      const whole =
        buffer.writer >= 0 &&
        d.offset === dataOffset + buffer.offset &&
        sizeOf(d.shape) * bytesPerElement(d.dtype) === buffer.bytes &&
        d.stride.every((s, a) => d.shape[a]! <= 1 || s === contiguousStrides(d.shape)[a]);
      const shared = outputs.some((p, q) => q !== output && p.kind === 'view' && viewBuffer[p.view] === buffer);
      if (!whole || shared) return [];
      const moving = finalViews.flatMap((_, v) => (viewBuffer[v] === buffer ? [v] : []));
      return [{ output, base: d.offset, bytes: buffer.bytes, views: moving }];
    }),
  };
  return { descriptor, inputViews, outputs, regionInit, work, width, callNodes };
}

/** The most tasks in one level of the task graph (a task's level: the longest path to it). */
function widestLevel(n: number, successorsOf: (t: number) => ReadonlySet<number>, pending: readonly number[]): number {
  const level = new Int32Array(n);
  const perLevel = new Int32Array(n + 1);
  const left = Int32Array.from(pending);
  const ready = pending.flatMap((p, t) => (p === 0 ? [t] : []));
  while (ready.length > 0) {
    const t = ready.pop()!;
    perLevel[level[t]!]! += 1;
    for (const s of successorsOf(t)) {
      if (level[t]! + 1 > level[s]!) level[s] = level[t]! + 1;
      if (--left[s]! === 0) ready.push(s);
    }
  }
  return Math.max(1, ...perLevel);
}
