// Numerically stable forms: log(1 + x) -> log1p(x) (float sums), exp(x) - 1 -> expm1(x),
// log(sigmoid(x)) -> -softplus(-x), log(1 - sigmoid(x)) -> -softplus(x), log(softmax(x)) ->
// logSoftmax(x) (also indexed: log(softmax(x)[idx]) -> logSoftmax(x)[idx]), exp(x) / sum(exp(x)) -> softmax(x), and the gradient of log(softmax(x))
// without its division by probabilities.
import type { Apply } from '../../graph/apply.js';
import type { FunctionGraph } from '../../graph/fgraph.js';
import { isFloatDtype } from '../../kernels/dtype.js';
import { nodeRewriter } from '../../graph/rewriting/rewriter.js';
import { registerStabilize } from '../../graph/rewriting/optdb.js';
import { DimShuffle } from '../shape/dimshuffle.js';
import { AdvancedIncSubtensor, AdvancedSubtensor } from '../shape/advanced-subtensor.js';
import { Alloc } from '../shape/alloc.js';
import { Subtensor } from '../shape/subtensor.js';
import { add, cast, expm1, log1p, mul, neg, softplus, sub } from '../elemwise/math.js';
import { LogSoftmax, Softmax, SoftmaxGrad } from '../nnet/nnet.js';
import { CAReduce, sum } from '../elemwise/reduce.js';
import * as S from '../scalar/catalog.js';
import type { TensorVariable } from '../core/variable.js';
import { asTypeOf } from './like.js';
import { rule } from './rule.js';
import { elemwiseOf, ownerIs, scalarConstantValue } from './match.js';

function fit(v: TensorVariable, node: Apply, fg: FunctionGraph): TensorVariable[] | false {
  const r = asTypeOf(v, node.outputs[0] as TensorVariable, fg);
  return r ? [r] : false;
}

registerStabilize(
  nodeRewriter('log1p', [elemwiseOf(S.log)], (node, fg) => {
    const sum = ownerIs(node.inputs[0]!, S.add);
    // An integer 1 + x wraps at the top of its range, where log1p(x) would not.
    if (!sum || !isFloatDtype((sum.outputs[0] as TensorVariable).dtype)) return false;
    const operands = sum.inputs as TensorVariable[];
    const one = operands.findIndex((x) => scalarConstantValue(x) === 1);
    if (one < 0) return false;
    const rest = operands.filter((_, i) => i !== one);
    if (rest.length === 0) return false;
    // x is computed in the sum's dtype, as 1 + x was (a float32 x plus a float64 1 is float64).
    const x = cast(rest.length === 1 ? rest[0]! : add(...rest), (sum.outputs[0] as TensorVariable).dtype);
    return fit(log1p(x), node, fg);
  }),
  'stability',
);

const E = { sub: elemwiseOf(S.sub), add: elemwiseOf(S.add), exp: elemwiseOf(S.exp), log: elemwiseOf(S.log), sigmoid: elemwiseOf(S.sigmoid) };
registerStabilize(
  rule(
    'expm1',
    [[E.sub, [E.exp, 'x'], 1], [expm1, 'x']], //                 exp(x) - 1          -> expm1(x)
    [[E.add, [E.exp, 'x'], -1], [expm1, 'x']], //                exp(x) + -1         -> expm1(x)
    [[E.add, -1, [E.exp, 'x']], [expm1, 'x']], //                -1 + exp(x)         -> expm1(x)
  ),
  'stability',
);
registerStabilize(
  rule(
    'log_sigmoid',
    [[E.log, [E.sigmoid, 'x']], [neg, [softplus, [neg, 'x']]]], //   log(sigmoid(x))     -> -softplus(-x)
    [[E.log, [E.sub, 1, [E.sigmoid, 'x']]], [neg, [softplus, 'x']]], // log(1 - sigmoid(x)) -> -softplus(x)
  ),
  'stability',
);

registerStabilize(
  nodeRewriter('log_softmax', [elemwiseOf(S.log)], (node, fg) => {
    const s = node.inputs[0]!.owner;
    if (s && s.op instanceof Softmax) return fit(new LogSoftmax(s.op.axis).call(s.inputs[0]!), node, fg);
    // log(softmax(x)[idx]), a softmax indexed by labels (basic or integer-array indexing): the
    // same index of logSoftmax(x), which stays finite where the picked probability underflows.
    if (!s || !(s.op instanceof Subtensor || s.op instanceof AdvancedSubtensor)) return false;
    const inner = s.inputs[0]!.owner;
    if (!inner || !(inner.op instanceof Softmax)) return false;
    return fit(s.op.call(new LogSoftmax(inner.op.axis).call(inner.inputs[0]!), ...s.inputs.slice(1)) as TensorVariable, node, fg);
  }),
  'stability',
);

/**
 * PyTensor's local_softmax_stabilize: exp(x) / sum(exp(x), axis) with the sum's axis put back
 * (keepdims, or the broadcast that pads a sum over leading axes) is Softmax(x) along that axis,
 * which subtracts the maximum first: exp(1000) overflows, softmax([1000, 1001]) does not. The
 * denominator's layout is checked, so that a sum broadcast along other axes is left alone.
 */
registerStabilize(
  nodeRewriter('local_softmax_stabilize', [elemwiseOf(S.trueDiv)], (node, fg) => {
    const [num, den] = node.inputs as TensorVariable[];
    if (!isFloatDtype(num!.dtype)) return false;
    const e = ownerIs(num!, S.exp);
    const ds = den!.owner;
    if (!e || !ds || !(ds.op instanceof DimShuffle)) return false;
    const s = ds.inputs[0]!.owner;
    if (!s || !(s.op instanceof CAReduce) || s.op.kind !== 'sum' || s.inputs[0] !== num) return false;
    const x = e.inputs[0] as TensorVariable;
    const axes = s.op.axis;
    if (!isKeepdimsLayout(ds.op, axes, x.ndim)) return false;
    const axis = softmaxAxis(axes, x);
    return axis === undefined ? false : fit(new Softmax(axis).call(x), node, fg);
  }),
  'stability',
);

/** Does `ds` put the reduced `axes` back where they were, as keepdims does? */
function isKeepdimsLayout(ds: DimShuffle, axes: readonly number[], ndim: number): boolean {
  if (ds.newOrder.length !== ndim) return false;
  let k = 0;
  return ds.newOrder.every((a, i) => (axes.includes(i) ? a === 'x' : a === k++));
}

/**
 * The one axis a softmax normalizes along for a sum over `axes` of `x` (axes of static length 1
 * do not count); undefined when several remain, which weft's single-axis Softmax cannot take.
 */
function softmaxAxis(axes: readonly number[], x: TensorVariable): number | undefined {
  const real = axes.filter((a) => x.type.shape[a] !== 1);
  if (real.length === 1) return real[0];
  return real.length === 0 && axes.length > 0 ? axes[0] : undefined;
}

/**
 * The gradient of log(softmax(x)) comes out as SoftmaxGrad(gz / sm, sm), which divides by
 * probabilities that may underflow; (gz / sm - sum(gz)) * sm is gz - sum(gz) * sm.
 */
registerStabilize(
  nodeRewriter('softmax_grad_of_log', [SoftmaxGrad], (node, fg) => {
    const [dy, sm] = node.inputs as TensorVariable[];
    const div = ownerIs(dy!, S.trueDiv);
    if (!div || div.inputs[1] !== sm) return false;
    const gz = div.inputs[0] as TensorVariable;
    const axis = (node.op as SoftmaxGrad).axis;
    return fit(sub(gz, mul(sum(gz, { axis, keepdims: true }), sm!)), node, fg);
  }),
  'stability',
);

/**
 * The same for a softmax indexed by labels: the gradient of log(softmax(x)[idx]) comes out as
 * SoftmaxGrad(scatter(zeros, gz / sm[idx], idx), sm). With G = scatter(zeros, gz, idx) (the
 * division cancels: each picked element is multiplied back by its probability), it is
 * G - sum(G) * sm, finite where the picked probability underflows.
 */
registerStabilize(
  nodeRewriter('softmax_grad_of_log_indexed', [SoftmaxGrad], (node, fg) => {
    const [dy, sm] = node.inputs as TensorVariable[];
    const scatter = dy!.owner;
    if (!scatter || !(scatter.op instanceof AdvancedIncSubtensor) || scatter.op.set) return false;
    const [zeros, y, ...idx] = scatter.inputs as TensorVariable[];
    if (!isZeros(zeros!)) return false;
    const div = ownerIs(y!, S.trueDiv);
    const picked = div?.inputs[1]?.owner;
    if (!div || !picked || !(picked.op instanceof AdvancedSubtensor) || picked.inputs[0] !== sm) return false;
    const op = scatter.op;
    if (picked.op.axis !== op.axis || picked.op.count !== op.count || picked.inputs.slice(1).some((v, k) => v !== idx[k])) return false;
    const g = new AdvancedIncSubtensor(op.axis, op.count, false).call(zeros!, div.inputs[0]!, ...idx) as TensorVariable;
    const axis = (node.op as SoftmaxGrad).axis;
    return fit(sub(g, mul(sum(g, { axis, keepdims: true }), sm!)), node, fg);
  }),
  'stability',
);

/** Whether v is all zeros: an Alloc of the constant 0. */
function isZeros(v: TensorVariable): boolean {
  const a = v.owner;
  return !!a && a.op instanceof Alloc && scalarConstantValue(a.inputs[0] as TensorVariable) === 0;
}
