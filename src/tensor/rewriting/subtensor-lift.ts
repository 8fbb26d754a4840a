// Indexing before element-wise work (PyTensor's local_subtensor_lift): f(x, y)[idx] -> f(x[idx],
// y[idx]) when f's output has no other reader and each input is either not broadcast at all
// (indexed as the output is) or a broadcast scalar (kept, with the output's number of axes), so
// that only the selected elements are computed. For basic and advanced (gather) indexing alike.
import { nodeRewriter } from '../../graph/rewriting/rewriter.js';
import { registerCanonicalize, registerSpecialize } from '../../graph/rewriting/optdb.js';
import type { TensorVariable } from '../core/variable.js';
import { Elemwise } from '../elemwise/elemwise.js';
import { AdvancedSubtensor } from '../shape/advanced-subtensor.js';
import { dimshuffle } from '../shape/dimshuffle.js';
import { Subtensor } from '../shape/subtensor.js';
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
