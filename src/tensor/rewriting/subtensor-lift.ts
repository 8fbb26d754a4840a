// Indexing rewrites. Indexing before element-wise work (PyTensor's local_subtensor_lift):
// f(x, y)[idx] -> f(x[idx], y[idx]) when f's output has no other reader and each input is either
// not broadcast at all (indexed as the output is) or a broadcast scalar (kept, with the output's
// number of axes), so that only the selected elements are computed; for basic and advanced
// (gather) indexing alike. And a gather by an arange is a slice (a view).
import { nodeRewriter } from '../../graph/rewriting/rewriter.js';
import { registerCanonicalize, registerSpecialize } from '../../graph/rewriting/optdb.js';
import { TensorConstant, type TensorVariable } from '../core/variable.js';
import { flatValues } from '../core/ndarray.js';
import { Elemwise } from '../elemwise/elemwise.js';
import { AdvancedSubtensor } from '../shape/advanced-subtensor.js';
import { dimshuffle } from '../shape/dimshuffle.js';
import { get as basicGet, Subtensor } from '../shape/subtensor.js';
import { ARange } from '../shape/creation.js';
import { constantScalar, ShapeI } from '../shape/shape.js';
import { slice } from '../core/slice.js';
import { asTypeOf } from './like.js';

const subtensorLift = nodeRewriter('local_subtensor_lift', [Subtensor, AdvancedSubtensor], (node, fg) => {
  const [u, ...idx] = node.inputs as TensorVariable[];
  const e = u!.owner;
  if (!e || !(e.op instanceof Elemwise) || Object.keys(e.op.destroyMap).length > 0) return false;
  if (fg.clients(u!).length !== 1) return false;
  const out = node.outputs[0] as TensorVariable;
  const inputs = e.inputs as TensorVariable[];
  const whole = (x: TensorVariable): boolean => x.type.shape.every((d, a) => d !== 1 || u!.type.shape[a] === 1);
  const scalar = (x: TensorVariable): boolean => x.type.shape.every((d) => d === 1);
  if (!inputs.every((x) => whole(x) || scalar(x))) return false;
  const lifted = inputs.map((x) => {
    if (whole(x) && !scalar(x)) return node.op.call(x, ...idx) as TensorVariable;
    // A broadcast scalar: its axes (all of length 1) as the indexed output's.
    if (x.ndim === out.ndim) return x;
    return dimshuffle(x, Array<'x'>(out.ndim).fill('x'));
  });
  const v = asTypeOf(e.op.call(...lifted) as TensorVariable, out, fg);
  return v ? [v] : false;
});

registerCanonicalize(subtensorLift, 'local_subtensor_lift');
registerSpecialize(subtensorLift, 'local_subtensor_lift');

/**
 * A gather by arange(start, stop, step) on one axis is the slice start:stop:step, a view (PyTensor
 * turns such AdvancedSubtensor1 into a Subtensor too): when start and step are constants (start
 * >= 0, step >= 1) and stop is that axis's length or a constant no longer than it, so that the
 * gather could not have raised an out-of-bounds error the slice would not.
 */
const gatherOfArange = nodeRewriter('local_adv_sub_of_arange', [AdvancedSubtensor], (node, fg) => {
  const op = node.op as AdvancedSubtensor;
  if (op.count !== 1) return false;
  const [x, idx] = node.inputs as TensorVariable[];
  const length = x!.type.shape[op.axis];
  const entries = [...Array(op.axis).keys()].map(() => slice(null, null));
  const fitted = (v: TensorVariable): TensorVariable[] | false => {
    const r = asTypeOf(v, node.outputs[0] as TensorVariable, fg);
    return r ? [r] : false;
  };
  // An arange folded into a constant: equally spaced values, all within the axis.
  if (idx instanceof TensorConstant && idx.ndim === 1 && length !== null && length !== undefined) {
    const values = Array.from(flatValues(idx.data));
    const step = values.length > 1 ? values[1]! - values[0]! : 1;
    const progression = values.length > 0 && step >= 1 && values.every((v, k) => v === values[0]! + k * step && v >= 0 && v < length);
    return progression ? fitted(basicGet(x!, ...entries, slice(values[0]!, values[values.length - 1]! + 1, step))) : false;
  }
  const range = idx!.owner;
  if (!range || !(range.op instanceof ARange)) return false;
  const [start, stop, step] = range.inputs.map((v) => constantScalar(v));
  if (start === undefined || step === undefined || start < 0 || step < 1 || !Number.isInteger(start) || !Number.isInteger(step)) return false;
  const s = range.inputs[1]!;
  const whole = s.owner?.op instanceof ShapeI && s.owner.op.i === op.axis && s.owner.inputs[0] === x;
  const within = stop !== undefined && length !== null && length !== undefined && stop <= length;
  if (!whole && !within) return false;
  return fitted(basicGet(x!, ...entries, slice(start, s as TensorVariable, step)));
});
registerSpecialize(gatherOfArange, 'local_adv_sub_of_arange');
