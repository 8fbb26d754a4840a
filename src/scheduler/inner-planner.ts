// Plans for inner graphs (OpFromGraph's, a Scan's step): given the shapes of an application's
// inputs, the inner graph (rewritten once) is planned like any call, and the application becomes
// one task that runs that plan sequentially in scratch memory, in one worker ('innerPlan', or the
// op's own kernel around it, as Scan's 'scanLoop'). Inner graphs that need the calling thread (an
// asOp inside) stay calling-thread tasks. Ops reach this through the KernelContext of Op.kernel.
import type { FunctionGraph } from '../graph/fgraph.js';
import type { KernelCall } from '../graph/op.js';
import type { TensorView } from '../kernels/view.js';
import type { NdArray } from '../tensor/core/ndarray.js';
import type { TensorType } from '../tensor/core/type.js';
import { encodeValue, type InnerPlanParams } from '../workers/inner-plan.js';
// The worker kernels of inner plans, registered on this thread too (workers: 0 runs plans here).
import '../workers/scan-loop.js';
import { HostValues } from './host-values.js';
import { buildPlan, PlanError, type InnerPlanning } from './plan.js';

const plans = new WeakMap<FunctionGraph, { host: HostValues; bySignature: Map<string, KernelCall | undefined> }>();
let nextId = -1;

function entryOf(fg: FunctionGraph): { host: HostValues; bySignature: Map<string, KernelCall | undefined> } {
  let entry = plans.get(fg);
  if (!entry) plans.set(fg, (entry = { host: new HostValues(fg), bySignature: new Map() }));
  return entry;
}

/** The 'innerPlan' call that runs `fg` for inputs of these shapes, or undefined when it must run on the calling thread. */
function planInner(fg: FunctionGraph, inputs: readonly TensorView[]): KernelCall | undefined {
  const entry = entryOf(fg);
  const arrays = inputs as readonly NdArray[];
  // Inner inputs that steer shapes need values; the outer plan knows them only if it computes them.
  if (entry.host.valueInputs.some((i) => arrays[i]!.data.length === 0)) return undefined;
  const key = entry.host.signature(arrays);
  if (entry.bySignature.has(key)) return entry.bySignature.get(key);
  let call: KernelCall | undefined;
  try {
    const plan = buildPlan(fg, arrays, entry.host, nextId--, innerPlanning);
    const d = plan.descriptor;
    if (d.calls.some((c) => c.main)) call = undefined;
    else {
      const params: InnerPlanParams = {
        plan: d,
        width: plan.width,
        work: plan.work,
        inputs: plan.inputViews,
        outputs: plan.outputs.map((o, j) => (o.kind === 'view' ? { view: o.view } : { value: encodeValue(o.value, (fg.outputs[j]!.type as TensorType).dtype) })),
        init: plan.regionInit.map(({ view, value }) => ({ view, value: encodeValue(value, d.views[view]!.dtype) })),
      };
      call = { name: 'innerPlan', params: params as unknown as KernelCall['params'], chunking: { by: 'none' }, scratchBytes: d.regionBytes };
    }
  } catch (e) {
    if (!(e instanceof PlanError)) throw e;
    call = undefined;
  }
  entry.bySignature.set(key, call);
  return call;
}

/** Inner graphs planned with plans of their own, their inner graphs likewise. */
export const innerPlanning: InnerPlanning = {
  planInner,
  valueInputs: (fg) => entryOf(fg).host.valueInputs,
};
