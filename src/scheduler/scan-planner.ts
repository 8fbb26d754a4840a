// Plans for Scan: the step graph (rewritten once) is planned like an OpFromGraph's inner graph
// for the shapes of one step, and the application becomes one 'scanLoop' task that runs that
// plan nSteps times inside one worker. A step whose plan would depend on the values of its rows
// (small integer rows that steer shapes) or that needs the calling thread (random draws, asOp)
// stays a calling-thread task that runs the op's perform.
import type { KernelCall } from '../graph/op.js';
import { rowOf, type TensorView } from '../kernels/view.js';
import { setScanPlanner, isSitSot, type ScanOp } from '../tensor/scan-op.js';
import type { InnerPlanParams } from '../workers/inner-plan.js';
import type { ScanLoopParams } from '../workers/scan-loop.js';
import '../workers/scan-loop.js';
import { hostInputs, innerKernel } from './inner-planner.js';

function scanKernel(op: ScanOp, inputs: readonly TensorView[]): KernelCall | undefined {
  const { nSeqs, taps, nNitsot, finals } = op.spec;
  const fg = op.compiled;
  // Rows change at every step: a plan that reads their values would hold for the first step only.
  if (hostInputs(fg).some((i) => i < op.firstNonSeq)) return undefined;
  const rows: TensorView[] = [];
  for (let i = 0; i < nSeqs; i++) rows.push(rowOf(inputs[1 + i]!, 0));
  taps.forEach((t, k) => t.forEach(() => rows.push(isSitSot(t) ? inputs[1 + nSeqs + k]! : rowOf(inputs[1 + nSeqs + k]!, 0))));
  rows.push(...inputs.slice(1 + nSeqs + taps.length));
  const step = innerKernel(fg, rows);
  if (!step) return undefined;
  const params: ScanLoopParams = { step: step.params as unknown as InnerPlanParams, nSeqs, taps, nNitsot, finals };
  return { name: 'scanLoop', params: params as unknown as KernelCall['params'], chunking: { by: 'none' }, ...(step.scratchBytes === undefined ? {} : { scratchBytes: step.scratchBytes }) };
}

setScanPlanner(scanKernel);
