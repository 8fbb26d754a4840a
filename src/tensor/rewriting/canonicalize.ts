// Canonical algebra: useless operations away (x*1, x+0, x-x, -(-x), casts to the same dtype,
// nested DimShuffles), add and mul chains flattened with their constants gathered, factors
// that appear above and below a division cancelled (x/x, and the gradients of log(sigmoid)),
// and log(exp(x)) -> x.
import type { Apply } from '../../graph/apply.js';
import type { FunctionGraph } from '../../graph/fgraph.js';
import { nodeRewriter } from '../../graph/rewriting/rewriter.js';
import { registerCanonicalize } from '../../graph/rewriting/optdb.js';
import type { Variable } from '../../graph/variable.js';
import { isFloatDtype, STORAGE, type Dtype } from '../../kernels/dtype.js';
import { constant } from '../core/as-tensor.js';
import { DimShuffle, dimshuffle, type ShuffleEntry } from '../shape/dimshuffle.js';
import { Join } from '../shape/join.js';
import { MakeVector, makeVector } from '../shape/make-vector.js';
import { Reshape, reshape } from '../shape/reshape.js';
import { Shape, ShapeI } from '../shape/shape.js';
import { shapeFeatureOf } from './shape-feature.js';
import { Elemwise } from '../elemwise/elemwise.js';
import { add, mul, trueDiv } from '../elemwise/math.js';
import * as S from '../scalar/catalog.js';
import type { ScalarOp } from '../scalar/scalar-op.js';
import type { TensorVariable } from '../core/variable.js';
import { asTypeOf, filledLike } from './like.js';
import { rule } from './rule.js';
import { elemwiseOf, ownerIs, scalarConstantValue } from './match.js';

const out0 = (node: Apply): TensorVariable => node.outputs[0] as TensorVariable;
const ins = (node: Apply): TensorVariable[] => node.inputs as TensorVariable[];

function fit(v: TensorVariable | undefined, node: Apply, fg: FunctionGraph): Variable[] | false {
  if (!v) return false;
  const r = asTypeOf(v, out0(node), fg);
  return r ? [r] : false;
}

/** The node's output replaced by a fill of `value` (its dtype, its shape). */
function fill(value: number, node: Apply, fg: FunctionGraph): Variable[] | false {
  const r = filledLike(value, out0(node), fg);
  return r ? [r] : false;
}

/** Drops the operands equal to `neutral` from an add or mul. */
function dropNeutral(scalar: ScalarOp, neutral: number, name: string): void {
  registerCanonicalize(
    nodeRewriter(name, [elemwiseOf(scalar)], (node, fg) => {
      const kept = ins(node).filter((x) => scalarConstantValue(x) !== neutral);
      if (kept.length === node.inputs.length) return false;
      if (kept.length === 0) return fill(neutral, node, fg);
      return fit(kept.length === 1 ? kept[0] : scalar === S.add ? add(...kept) : mul(...kept), node, fg);
    }),
    'algebra',
  );
}
dropNeutral(S.mul, 1, 'mul_one');
dropNeutral(S.add, 0, 'add_zero');

registerCanonicalize(
  nodeRewriter('sub_self', [elemwiseOf(S.sub)], (node, fg) => {
    const [x, y] = ins(node);
    if (x !== y) return false;
    return fill(0, node, fg);
  }),
  'algebra',
);

const E = { sub: elemwiseOf(S.sub), trueDiv: elemwiseOf(S.trueDiv), neg: elemwiseOf(S.neg), log: elemwiseOf(S.log), exp: elemwiseOf(S.exp) };
registerCanonicalize(rule('sub_zero', [[E.sub, 'x', 0], 'x']), 'algebra'); //          x - 0       -> x
registerCanonicalize(rule('div_one', [[E.trueDiv, 'x', 1], 'x']), 'algebra'); //       x / 1       -> x
registerCanonicalize(rule('neg_neg', [[E.neg, [E.neg, 'x']], 'x']), 'algebra'); //     -(-x)       -> x
registerCanonicalize(rule('log_exp', [[E.log, [E.exp, 'x']], 'x']), 'algebra'); //     log(exp(x)) -> x

registerCanonicalize(
  nodeRewriter('useless_cast', [{ name: 'Elemwise{cast}', test: (op) => op instanceof Elemwise && op.scalarOp.name.startsWith('cast{') }], (node, fg) => {
    const x = ins(node)[0]!;
    return x.dtype === out0(node).dtype ? fit(x, node, fg) : false;
  }),
  'useless',
);


registerCanonicalize(
  nodeRewriter('dimshuffle_merge', [DimShuffle], (node, fg) => {
    const op = node.op as DimShuffle;
    const x = ins(node)[0]!;
    if (op.newOrder.length === x.ndim && op.newOrder.every((a, i) => a === i)) return [x];
    const inner = x.owner;
    if (!(inner?.op instanceof DimShuffle)) return false;
    const innerOrder = inner.op.newOrder;
    const composed: ShuffleEntry[] = op.newOrder.map((a) => (a === 'x' ? 'x' : innerOrder[a]!));
    return fit(dimshuffle(inner.inputs[0] as TensorVariable, composed), node, fg);
  }),
  'useless',
);

/** add(add(a, b), c) -> add(a, b, c) when the inner sum has no other use and the same dtype. */
function flatten(scalar: ScalarOp, name: string): void {
  registerCanonicalize(
    nodeRewriter(name, [elemwiseOf(scalar)], (node, fg) => {
      const out = out0(node);
      let changed = false;
      const operands = ins(node).flatMap((x) => {
        const inner = ownerIs(x, scalar);
        if (!inner || fg.clients(x).length !== 1 || x.dtype !== out.dtype) return [x];
        changed = true;
        return ins(inner);
      });
      if (!changed) return false;
      return fit(scalar === S.add ? add(...operands) : mul(...operands), node, fg);
    }),
    'algebra',
  );
}
flatten(S.add, 'add_flatten');
flatten(S.mul, 'mul_flatten');

/**
 * The constants of an add or mul combined in the output's dtype: integers as the output wraps
 * them (sums exactly, products modulo 2^32 with Math.imul, then to the width), floats in float64.
 */
function combineConstants(values: readonly number[], scalar: ScalarOp, dtype: Dtype): number {
  const integer = !isFloatDtype(dtype);
  let acc = values[0]!;
  for (let k = 1; k < values.length; k++) {
    const v = values[k]!;
    acc = scalar === S.add ? acc + v : integer ? Math.imul(acc, v) : acc * v;
  }
  return integer ? STORAGE[dtype].of(acc)[0]! : acc;
}

/**
 * add(x, 1, 2) -> add(x, 3): scalar constants of one add or mul combined into one, of the
 * output's dtype (a weak literal could make the sum narrower than it was).
 */
function gatherConstants(scalar: ScalarOp, name: string): void {
  registerCanonicalize(
    nodeRewriter(name, [elemwiseOf(scalar)], (node, fg) => {
      const out = out0(node);
      const values: number[] = [];
      const rest: TensorVariable[] = [];
      for (const x of ins(node)) {
        const c = scalarConstantValue(x);
        if (c === undefined) rest.push(x);
        else values.push(c);
      }
      if (values.length < 2 || rest.length === 0) return false;
      const combined = constant(combineConstants(values, scalar, out.dtype), { dtype: out.dtype });
      return fit(scalar === S.add ? add(...rest, combined) : mul(...rest, combined), node, fg);
    }),
    'algebra',
  );
}
gatherConstants(S.add, 'add_constants');
gatherConstants(S.mul, 'mul_constants');

/**
 * Factors of a product that also divide it cancel: mul(a / s, s, t) -> mul(a, t), x / x -> 1.
 * Only single-use float mul and trueDiv nodes are looked into.
 */
registerCanonicalize(
  nodeRewriter('mul_div_cancel', [elemwiseOf(S.mul), elemwiseOf(S.trueDiv)], (node, fg) => {
    const out = out0(node);
    if (!isFloatDtype(out.dtype)) return false;
    const num: TensorVariable[] = [];
    const den: TensorVariable[] = [];
    const collect = (v: TensorVariable, top: boolean, inverted: boolean): void => {
      const owner = v.owner;
      const usable = owner && owner.op instanceof Elemwise && (top || (fg.clients(v).length === 1 && v.dtype === out.dtype));
      if (usable && (owner.op as Elemwise).scalarOp === S.mul) {
        for (const x of ins(owner)) collect(x, false, inverted);
      } else if (usable && (owner.op as Elemwise).scalarOp === S.trueDiv) {
        collect(ins(owner)[0]!, false, inverted);
        collect(ins(owner)[1]!, false, !inverted);
      } else (inverted ? den : num).push(v);
    };
    collect(out, true, false);
    let cancelled = 0;
    for (let i = num.length - 1; i >= 0; i--) {
      const j = den.indexOf(num[i]!);
      if (j >= 0) {
        num.splice(i, 1);
        den.splice(j, 1);
        cancelled += 1;
      }
    }
    if (cancelled === 0) return false;
    if (num.length === 0 && den.length === 0) return fill(1, node, fg);
    const top = num.length === 0 ? 1 : num.length === 1 ? num[0]! : mul(...num);
    const r = den.length === 0 ? (top as TensorVariable) : trueDiv(top, den.length === 1 ? den[0]! : mul(...den));
    return fit(r, node, fg);
  }),
  'algebra',
);

/** The lengths that a shape vector holds, as variables, when it is built from them (else undefined). */
function lengthsIn(target: TensorVariable): Variable[] | undefined {
  const node = target.owner;
  if (node?.op instanceof MakeVector) return [...node.inputs];
  return undefined;
}

/** reshape(x, shape(x)), or to lengths that are x's own: x itself. */
registerCanonicalize(
  nodeRewriter('useless_reshape', [Reshape], (node, fg) => {
    const [x, target] = ins(node);
    const out = out0(node);
    if (x!.ndim !== out.ndim) return false;
    if (x!.type.shape.every((d, i) => d !== null && d === out.type.shape[i])) return fit(x, node, fg);
    if (target!.owner?.op instanceof Shape && target!.owner.inputs[0] === x) return fit(x, node, fg);
    const lengths = lengthsIn(target!);
    if (!lengths || lengths.length !== x!.ndim) return false;
    const own = shapeFeatureOf(fg).shapeOf(x!);
    const same = lengths.every((l, i) => {
      const d = x!.type.shape[i];
      if (l === own[i]) return true;
      if (d !== null && d !== undefined && scalarConstantValue(l) === d) return true;
      return l.owner?.op instanceof ShapeI && l.owner.op.i === i && l.owner.inputs[0] === x;
    });
    return same ? fit(x, node, fg) : false;
  }),
  'useless',
);

/** reshape(reshape(x, a), b): only the last shape counts. */
registerCanonicalize(
  nodeRewriter('reshape_reshape', [Reshape], (node, fg) => {
    const [x, target] = ins(node);
    const inner = x!.owner;
    if (!(inner?.op instanceof Reshape)) return false;
    return fit(reshape(inner.inputs[0] as TensorVariable, target!), node, fg);
  }),
  'useless',
);

/** A vector joined from scalars (a stack of lengths, say) is a MakeVector of them. */
registerCanonicalize(
  nodeRewriter('join_of_scalars', [Join], (node, fg) => {
    const out = out0(node);
    if (out.ndim !== 1) return false;
    const scalars: TensorVariable[] = [];
    for (const piece of ins(node)) {
      const d = piece.owner;
      if (!(d?.op instanceof DimShuffle) || d.op.inputNdim !== 0 || piece.ndim !== 1) return false;
      scalars.push(d.inputs[0] as TensorVariable);
    }
    return scalars.length > 0 ? fit(makeVector(...scalars), node, fg) : false;
  }),
  'useless',
);
