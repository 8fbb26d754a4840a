// Pass 3 of the planner: the tasks of each call. A call is cut into chunks of its units
// (elements, rows, lanes: its kernel call's chunking) so that each task carries about TASK_WORK
// of work (elements touched; multiply-adds for products, which come in larger tasks); a slab
// call has one task per slab. The cuts depend on the shapes only, never on the worker count.
import { sizeOf } from '../../kernels/view.js';
import type { KernelCall } from '../../graph/op.js';
import type { CallDescriptor, ViewDescriptor } from '../../workers/protocol.js';
import { chunkedOutput, chunkRanges, chunkUnits } from '../chunking.js';
import type { TaskSpan } from '../task-edges.js';

/** Work (elements touched, or multiply-adds for products) that one task should carry at least (tests read it). */
export const TASK_WORK = 1 << 17;
/** The same for products, in multiply-adds (tests read it). */
export const PRODUCT_TASK_WORK = 1 << 21;
/**
 * Fewest rows (units) of a product per task: each task packs its operand panels, so smaller tasks
 * spend their time packing (64 is the row block the gemm kernel packs A by).
 */
const PRODUCT_MIN_UNITS = 64;

/** A call's work: as its kernel call says, multiply-adds for a product (its contracted axes), else the most elements it touches. */
function workOf(call: KernelCall, ins: readonly ViewDescriptor[], outs: readonly ViewDescriptor[]): number {
  if (call.work !== undefined) return call.work;
  if (call.contracted) {
    // Multiply-adds: each output element sums over the contracted lengths of one factor.
    const a = ins[call.contracted.input]!;
    const free = Math.max(1, sizeOf(outs[0]!.shape));
    const axes = call.contracted.axes ?? [a.shape.length - 1];
    return free * axes.reduce((n, ax) => n * (a.shape[ax] ?? 1), 1);
  }
  return Math.max(1, ...ins.map((v) => sizeOf(v.shape)), ...outs.map((v) => sizeOf(v.shape)));
}

export interface CallTasks {
  readonly tasks: TaskSpan[];
  /** Call -> its tasks, in order. */
  readonly tasksOfCall: readonly (readonly number[])[];
  /** The work of one whole call of the plan. */
  readonly work: number;
}

/** The tasks of these calls (`kernelCalls[i]` is call i's kernel call, `views` the plan's views). */
export function chunkTasks(calls: readonly CallDescriptor[], kernelCalls: readonly KernelCall[], views: readonly ViewDescriptor[]): CallTasks {
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
    const u = chunkUnits(kc.chunking, outs[chunkedOutput(kc.chunking)]!.shape);
    const product = kc.contracted !== undefined;
    const target = kc.taskWork ?? (product ? PRODUCT_TASK_WORK : TASK_WORK);
    const minUnits = product ? PRODUCT_MIN_UNITS : kc.chunking.by === 'elements' ? (kc.chunking.minUnits ?? 1) : 1;
    const maxChunks = Math.floor(u / minUnits);
    // Rounded (not floored): 3.5 tasks of work make 4, which two members share evenly.
    const chunks = kc.chunking.by === 'none' ? 1 : Math.max(1, Math.min(maxChunks, Math.round(w / target)));
    if (chunks === 1) list.push(tasks.push({ call: ci, start: -1, end: -1 }) - 1);
    else for (const r of chunkRanges(u, chunks)) list.push(tasks.push({ call: ci, start: r.start, end: r.end }) - 1);
    tasksOfCall.push(list);
  });
  return { tasks, tasksOfCall, work };
}
