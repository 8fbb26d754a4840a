// Pass 1 of the planner: placing the nodes, in execution order. Host nodes (shapes, small
// integers) are computed here; views become views of their input's buffer; every other node
// becomes calls of its kernel (after contiguous copies its kernel asks for, or as slabs of
// partials and their combine), its outputs new buffers or the inputs it overwrites.
import type { Apply } from '../../graph/apply.js';
import type { FunctionGraph } from '../../graph/fgraph.js';
import { copiedArguments, NodeError } from '../../graph/node-error.js';
import { UnknownShapesError, type KernelCall } from '../../graph/op.js';
import type { Expansion, StepView } from '../../kernels/expansion.js';
import { isConstant, type Constant, type Variable } from '../../graph/variable.js';
import { bytesPerElement, STORAGE, type Dtype } from '../../kernels/dtype.js';
import { contiguousStrides, isContiguous, sizeOf, type TensorView } from '../../kernels/view.js';
import type { NdArray } from '../../tensor/core/ndarray.js';
import { TensorType } from '../../tensor/core/type.js';
import { ArenaFullError, arenaCanHold } from '../../workers/arena.js';
import type { CallDescriptor, ViewDescriptor } from '../../workers/protocol.js';
import type { HostValues } from '../host-values.js';
import type { Buffer, InnerPlanning, OutputSource, PlanDraft, RelativeView } from './draft.js';
import { PlanError, StageBoundary } from './errors.js';
import { TASK_WORK } from './tasks.js';

/** Largest reduction output (elements) that is computed from partials rather than split by outputs. */
const PARTIALS_MAX_OUTPUT = 16;

function dtypeOf(v: Variable): Dtype {
  return (v.type as TensorType).dtype;
}

/** Places the nodes of `fg` for calls with these inputs' signature (see the file's head). */
export function placeNodes(fg: FunctionGraph, inputs: readonly NdArray[], host: HostValues, inner: InnerPlanning): PlanDraft {
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
    // A copy: the plan outlives the call, and the argument's memory may not (a shared variable's
    // value in the pool's memory goes back once the variable moves on; resident-values.ts).
    if (hostKnown.has(v)) values.set(v, (v.type as TensorType).copyValue(inputs[i]!) as NdArray);
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
  const viewRelative = new Map<number, RelativeView>();

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

  /** Buffers that some node writes its output over. */
  const overwritten = new Set<Buffer>();
  /**
   * The view of `o`, which its node writes over the input seen through `source`: the same bytes
   * and layout. Values written into every region once (constants, host values) must not change,
   * and a layout that repeats an element (stride 0) cannot hold one value per element.
   */
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
    callsOfNode.set(k, [calls.length - 2, calls.length - 1]);
    return true;
  }
  /**
   * A node given as steps (a blocked factorization): its scratch arrays become buffers of the
   * node's, each step a call over views of them (relative to their start) and of the node's own
   * inputs and outputs. The order between steps comes, like any, from the bytes they touch.
   */
  function expandSteps(node: Apply, k: number, expansion: Expansion, inViews: readonly number[], outViews: readonly number[], copies: readonly number[]): void {
    const scratch = expansion.scratch.map((s) => {
      const view = newScratchArray(s.dtype, s.shape, k);
      viewBuffer[view]!.readers.add(k);
      return view;
    });
    const viewFor = (v: StepView): number => {
      if (v.kind === 'input') return inViews[v.index]!;
      if (v.kind === 'output') return outViews[v.index]!;
      const base = scratch[v.index]!;
      views.push({ dtype: views[base]!.dtype, offset: -1, shape: [...v.shape], stride: [...v.stride] });
      const index = views.length - 1;
      viewRelative.set(index, { of: base, elements: v.offset });
      viewBuffer.push(viewBuffer[base]!);
      return index;
    };
    const own: number[] = [...copies];
    for (const s of expansion.steps) {
      calls.push({ kernel: s.name, params: s.params, inputs: s.inputs.map(viewFor), outputs: s.outputs.map(viewFor), label: `${node}: ${s.label}`, ...(s.chunking === 'rows' ? { split: { by: 'rows' } } : {}) });
      callNodes.push(node);
      kernelCalls.push({ name: s.name, params: s.params, chunking: { by: s.chunking }, work: s.work, ...(s.product ? { contracted: { input: 0 } } : {}) });
      own.push(calls.length - 1);
    }
    callsOfNode.set(k, own);
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
        // A host node that overwrites a known value gets a copy: the values here outlive the call
        // (an unknown one is only a layout, with no data to keep).
        const copies = copiedArguments(node, node.inputs.map(valueOf), 'destroyed');
        const args = node.inputs.map((v, i) => (copies[i] ?? describe(v, undefined, dtypeOf(v))) as NdArray);
        const outs = op.perform(node, args) as NdArray[];
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
        // An index the graph computes (not a host value) is known only when running: the view is
        // planned in the next stage, once it is.
        const computed = node.inputs.find((v, i) => !sources.has(i) && !valueOf(v));
        if (computed) throw new StageBoundary(node, 'values', `the view ${node} depends on the value of ${computed}, which is computed by the graph`);
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
      if (call.expansion && Object.keys(op.destroyMap).length === 0) return expandSteps(node, k, call.expansion, inViews, outViews, copies);
      calls.push({
        kernel: call.name,
        params: call.params,
        inputs: inViews,
        outputs: outViews,
        label: String(node),
        ...(call.name === '' ? { main: true } : {}),
        ...(call.chunking.by === 'none' ? {} : { split: call.chunking.by === 'elements' && call.chunking.output ? { by: 'elements', output: call.chunking.output } : { by: call.chunking.by } }),
      });
      callNodes.push(node);
      kernelCalls.push(call);
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

  return { order, position, orderings: fg.orderings(), views, viewBuffer, viewRelative, buffers, overwritten, regionInit, inputViews, outputs, calls, callNodes, kernelCalls, callsOfNode, hostOnly };
}
