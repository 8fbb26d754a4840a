// Registers the kernels of reductions, copies (DeepCopyOp, Alloc, Reshape of a non-contiguous
// value), Join and the creation ops (ARange, Eye). builtin.ts imports it, so workers and the
// calling thread both have them. Each kernel honours the chunking its op declares.
import { broadcastView, copyFlat, copyView } from './copy.js';
import { fillArange, fillEye } from './creation.js';
import { concatInto } from './join.js';
import { argReduceInto, reduceInto, type ReduceKind } from './reduce.js';
import { registerKernel, type KernelParams } from './registry.js';
import { isContiguous, sizeOf, type Range, type TensorView } from './view.js';

/** The value of a scalar (0-d) input view. */
function scalarOf(v: TensorView): number {
  return v.data[v.offset]!;
}

/** A mask over the axes of an `ndim`-d input: true on the reduced ones. */
function reducedMask(ndim: number, axes: readonly number[]): boolean[] {
  const mask = new Array<boolean>(ndim).fill(false);
  for (const a of axes) mask[a] = true;
  return mask;
}

/** params {kind, axes}; by output elements. */
registerKernel('reduce', (ins, outs, params, range) => {
  const x = ins[0]!;
  reduceInto(params['kind'] as ReduceKind, x, reducedMask(x.shape.length, params['axes'] as number[]), outs[0]!, range);
});

/** params {kind: 'max' | 'min', axes}; by output elements. */
registerKernel('argreduce', (ins, outs, params, range) => {
  const x = ins[0]!;
  argReduceInto(params['kind'] as 'max' | 'min', x, reducedMask(x.shape.length, params['axes'] as number[]), outs[0]!, range);
});

/** out = inputs[0] broadcast to out's shape (a plain copy when the shapes are equal); by elements. */
function broadcastCopy(ins: readonly TensorView[], outs: readonly TensorView[], _params: KernelParams, range?: Range): void {
  const [x, out] = [ins[0]!, outs[0]!];
  // One value into a C-order output (an Alloc of zeros): TypedArray.fill, where the strided copy
  // took 2 ns an element (W10's gradient zeros, 6.4M of them: 14 ms).
  if (sizeOf(x.shape) === 1 && isContiguous(out)) {
    const [start, end] = [range?.start ?? 0, range?.end ?? sizeOf(out.shape)];
    (out.data as Float64Array).fill(x.data[x.offset] as number, out.offset + start, out.offset + end);
    return;
  }
  copyView(broadcastView(x, out.shape), out, range);
}

/** DeepCopyOp: inputs (x). */
registerKernel('copy', broadcastCopy);

/** Alloc: inputs (value, ...lengths). */
registerKernel('alloc', broadcastCopy);

/** out = x's elements in C order, in out's shape (inputs: x, the target shape). By elements. */
registerKernel('reshapeCopy', (ins, outs, _params, range) => copyFlat(ins[0]!, outs[0]!, range));

/** params {axis}: the inputs one after another along axis; by rows of out. */
registerKernel('concat', (ins, outs, params, range) => concatInto(ins, outs[0]!, params['axis'] as number, range));

/** inputs (start, stop, step) as scalars; by elements. */
registerKernel('arange', (ins, outs, _params, range) => fillArange(outs[0]!, scalarOf(ins[0]!), scalarOf(ins[2]!), range));

/** inputs (n, m, k) as scalars; by rows. */
registerKernel('eye', (ins, outs, _params, range) => fillEye(outs[0]!, scalarOf(ins[2]!), range));
